//! Large folio tests on tiny machines, with invariants checked after every event.

use super::tests::FixedLatency;
use super::*;
use crate::config::{ByteSize, CoreConfig, SwapBacking};
use crate::ids::VirtPage;
use crate::policy::swapin::{Order0Swapin, SwapinSize, SwapinView};
use crate::policy::Policies;
use crate::thp::{MthpStats, OrderMask, ThpSizeEnabled};
use crate::workload::{Access, RegionSpec};
use crate::SwapDeviceSpec;

/// The kernel's choice: every candidate order.
#[derive(Clone, Debug)]
struct AllOrders;

impl SwapinSize for AllOrders {
    fn name(&self) -> &'static str {
        "all"
    }
    fn orders(&mut self, view: &SwapinView) -> OrderMask {
        view.candidates
    }
}

struct Machine {
    limit_pages: u64,
    swap_pages: u64,
    sizes: &'static [&'static str],
    zram: bool,
    ever_enabled: bool,
    zswap: bool,
    contents: crate::contents::Contents,
    swapin: Box<dyn SwapinSize>,
    /// `memcg.process_kmem`, in pages.
    kmem_pages: u64,
}

impl Machine {
    fn new(limit_pages: u64, sizes: &'static [&'static str]) -> Machine {
        Machine {
            limit_pages,
            swap_pages: 4096,
            sizes,
            zram: false,
            ever_enabled: false,
            zswap: false,
            contents: RegionSpec::new(VirtPage(0), 1).contents,
            swapin: Box::new(AllOrders),
            kmem_pages: 0,
        }
    }

    fn zram(mut self) -> Machine {
        self.zram = true;
        self
    }

    fn run(self, pages: u64, accesses: &[(u64, bool)]) -> SimReport {
        let mut cfg = CoreConfig::default();
        cfg.machine.memory = ByteSize::mib(64);
        cfg.memcg.limit = Some(ByteSize(self.limit_pages * crate::ids::PAGE_SIZE));
        cfg.devices.push(SwapDeviceSpec {
            name: "swap0".into(),
            size: ByteSize(self.swap_pages * crate::ids::PAGE_SIZE),
            priority: None,
            // zswap's tests swap on a disk partition: large folios swap out whole.
            backing: Some(if self.zram || self.zswap { SwapBacking::Block } else { SwapBacking::File }),
        });
        for s in self.sizes {
            cfg.thp.hugepages.insert((*s).to_string(), ThpSizeEnabled::Always);
        }
        cfg.zswap.ever_enabled = self.ever_enabled;
        cfg.zswap.enabled = self.zswap;
        cfg.memcg.process_kmem = ByteSize(self.kmem_pages * crate::ids::PAGE_SIZE);
        if self.zswap {
            // Room for the pool's charge, and page cache to keep reclaim's rounds going.
            cfg.memcg.page_cache = ByteSize(8 * crate::ids::PAGE_SIZE);
        }
        let accesses: Vec<Access> =
            accesses.iter().map(|&(p, w)| Access { vpage: VirtPage(p), write: w, think_ns: None }).collect();
        let setup = Setup {
            config: cfg.validate().unwrap(),
            seed: 1,
            devices: vec![Box::new(FixedLatency {
                ns: if self.zram { 2_000 } else { 20_000 },
                rotational: false,
                synchronous: self.zram,
            })],
            policies: Policies::default().with_swapin(self.swapin),
            tasks: vec![TaskSpec::new(
                "t",
                vec![RegionSpec { contents: self.contents, ..RegionSpec::new(VirtPage(0), pages) }],
                Box::new(accesses.into_iter()),
            )],
            timeline: Vec::new(),
        };
        let mut sim = Simulation::new(setup).unwrap();
        sim.check_invariants();
        while sim.step().unwrap() {
            sim.check_invariants();
        }
        sim.into_report()
    }
}

fn stats(r: &SimReport, size: &str) -> MthpStats {
    r.mthp.get(size).copied().unwrap_or_default()
}

fn writes(pages: std::ops::Range<u64>) -> Vec<(u64, bool)> {
    pages.map(|p| (p, true)).collect()
}

#[test]
fn anon_faults_take_the_largest_order_that_fits_the_region_and_untouched_ptes() {
    // 40 pages: two 64 KiB folios, then 16 KiB ones where 64 KiB would cross the end.
    let r = Machine::new(1024, &["16kB", "64kB"]).run(40, &writes(0..40));
    assert_eq!(stats(&r, "64kB").anon_fault_alloc, 2);
    assert_eq!(stats(&r, "16kB").anon_fault_alloc, 2);
    assert_eq!(r.vmstat.pgfault, 4, "one fault per folio");
    // A read maps the zero page first: its range is no longer untouched.
    let mut acc = vec![(5, false)];
    acc.extend(writes(0..16));
    let r = Machine::new(1024, &["16kB", "64kB"]).run(16, &acc);
    assert_eq!(stats(&r, "64kB").anon_fault_alloc, 0);
    assert_eq!(stats(&r, "16kB").anon_fault_alloc, 3, "the 16 KiB range holding page 5 stays order 0");
}

#[test]
fn a_charge_without_room_falls_back_order_by_order() {
    // A 40-page limit and 48 pages: two 64 KiB folios fit; the third range has room for
    // 8 pages only, so it falls back to 16 KiB (two fit), then the third 16 KiB range falls
    // back to order 0, whose charge reclaims (asynchronously: the pages it frees come later).
    let r = Machine::new(40, &["16kB", "64kB"]).run(48, &writes(0..48));
    let big = stats(&r, "64kB");
    let small = stats(&r, "16kB");
    assert_eq!((big.anon_fault_alloc, big.anon_fault_fallback, big.anon_fault_fallback_charge), (2, 1, 1));
    assert!(small.anon_fault_alloc >= 2 && small.anon_fault_fallback >= 1, "{small:?}");
    assert_eq!(
        small.anon_fault_fallback, small.anon_fault_fallback_charge,
        "never short of frames, only of room"
    );
    let order0 = 48 - 16 * big.anon_fault_alloc - 4 * small.anon_fault_alloc;
    assert_eq!(r.vmstat.pgfault, big.anon_fault_alloc + small.anon_fault_alloc + order0);
    assert_eq!(r.outcome, crate::report::Outcome::Completed);
}

#[test]
fn the_page_table_is_charged_before_the_folio_and_takes_its_room() {
    // A 16-page limit and one 64 KiB range in a fresh 2 MiB block: the fault first charges
    // the PTE page (pte_alloc), so the 64 KiB folio no longer fits below the limit and falls
    // back on its charge; three 16 KiB folios fit in the 15 pages left, the fourth does not.
    let r = Machine::new(16, &["16kB", "64kB"]).run(16, &writes(0..16));
    let big = stats(&r, "64kB");
    let small = stats(&r, "16kB");
    assert_eq!((big.anon_fault_alloc, big.anon_fault_fallback_charge), (0, 1), "{big:?}");
    assert_eq!((small.anon_fault_alloc, small.anon_fault_fallback_charge), (3, 1), "{small:?}");
    // One page table per 2 MiB block touched, charged while the process lives.
    let mut acc = writes(0..4);
    acc.extend([(512, true), (1030, true)]);
    let r = Machine::new(1024, &[]).run(1536, &acc);
    assert_eq!(r.at_end.memcg_usage_pages, 6 + 3, "six pages and three page tables");
}

#[test]
fn a_process_charges_its_other_kernel_memory_before_its_first_pte_page() {
    // Two pages of it and the PTE page leave 16 pages of a 19-page limit: the 64 KiB folio
    // fits; under 18 it falls back on its charge.
    let r = Machine { kmem_pages: 2, ..Machine::new(19, &["64kB"]) }.run(16, &writes(0..16));
    assert_eq!(stats(&r, "64kB").anon_fault_alloc, 1);
    let r = Machine { kmem_pages: 2, ..Machine::new(18, &["64kB"]) }.run(16, &writes(0..16));
    let big = stats(&r, "64kB");
    assert_eq!((big.anon_fault_alloc, big.anon_fault_fallback_charge), (0, 1), "{big:?}");
    // Charged once per process, however many 2 MiB blocks it touches, while it lives.
    let mut acc = writes(0..4);
    acc.extend([(512, true), (1030, true)]);
    let r = Machine { kmem_pages: 2, ..Machine::new(1024, &[]) }.run(1536, &acc);
    assert_eq!(r.at_end.memcg_usage_pages, 6 + 3 + 2, "six pages, three page tables, two more");
}

#[test]
fn a_swap_file_splits_every_large_folio_at_swap_out() {
    let mut acc = writes(0..256);
    acc.extend((0..256).map(|p| (p, false)));
    let r = Machine::new(64, &["64kB"]).run(256, &acc);
    let s = stats(&r, "64kB");
    assert!(s.swpout_fallback > 0, "{s:?}");
    assert_eq!(s.swpout, 0);
    assert_eq!(s.split, s.swpout_fallback);
    assert_eq!(s.swpin, 0, "no large swap-in from an asynchronous device");
}

/// Fills 128 pages in 64 KiB folios under a 64-page limit on zram, then reads them
/// again in order: the first half was swapped out whole.
#[test]
fn a_large_folio_pays_its_fault_once_and_each_further_page_apart() {
    // Far below the limit: the run is the accesses and the faults, nothing else.
    let cpu = crate::config::CpuCosts::default();
    let large = Machine::new(1024, &["64kB"]).run(64, &writes(0..64));
    assert_eq!(stats(&large, "64kB").anon_fault_alloc, 4);
    let per_folio = cpu.fault_ns + cpu.anon_fault_ns + 15 * cpu.anon_fault_page_ns;
    let want = 4 * per_folio + 64 * cpu.access_ns;
    assert_eq!((large.sim_time_s * 1e9).round() as u64, want);
    let small = Machine::new(1024, &[]).run(64, &writes(0..64));
    let want = 64 * (cpu.fault_ns + cpu.anon_fault_ns + cpu.access_ns);
    assert_eq!((small.sim_time_s * 1e9).round() as u64, want);
}

#[test]
fn a_synchronous_device_serves_a_large_folio_as_one_request() {
    let r = zram_refill(Machine::new(64, &["64kB"]));
    let s = stats(&r, "64kB");
    assert!(s.swpin > 0, "{s:?}");
    let reads = &r.block[0].reads;
    assert_eq!(reads.completed, r.vmstat.pgmajfault, "one request per swap-in, whatever its size");
    // The test device takes 2 us a request, not a page.
    assert_eq!(reads.service_ns_total, 2_000 * reads.completed);
}

fn zram_refill(m: Machine) -> SimReport {
    let mut acc = writes(0..128);
    acc.extend((0..128).map(|p| (p, false)));
    m.zram().run(128, &acc)
}

#[test]
fn zram_swaps_large_folios_out_whole_and_back_in_whole() {
    let r = zram_refill(Machine::new(64, &["64kB"]));
    let s = stats(&r, "64kB");
    assert!(s.swpout > 0 && s.swpout_fallback == 0, "{s:?}");
    assert!(s.swpin > 0, "{s:?}");
    let v = &r.vmstat;
    assert_eq!(v.swap_ra, 0, "no readahead on a synchronous device");
    assert_eq!(v.pswpin, v.pgmajfault + 15 * s.swpin, "one major fault per large swap-in");
    assert_eq!(r.at_end.nr_swapcached, 0, "the bypass never fills the swap cache");
}

#[test]
fn no_large_swapin_once_zswap_was_ever_enabled() {
    let mut m = Machine::new(64, &["64kB"]);
    m.ever_enabled = true;
    let r = zram_refill(m);
    let s = stats(&r, "64kB");
    assert!(s.swpout > 0, "{s:?}");
    assert_eq!((s.swpin, s.swpin_fallback), (0, 0), "falls back before any counter");
    assert_eq!(r.vmstat.pswpin, r.vmstat.pgmajfault);
}

#[test]
fn the_order0_policy_never_swaps_in_large() {
    let mut m = Machine::new(64, &["64kB"]);
    m.swapin = Box::new(Order0Swapin);
    let r = zram_refill(m);
    assert_eq!(stats(&r, "64kB").swpin, 0);
    assert_eq!(r.vmstat.pswpin, r.vmstat.pgmajfault);
}

#[test]
fn order0_folios_in_unaligned_slots_come_back_one_by_one() {
    // Reading every page first maps the zero page, so the writes copy it into order-0
    // folios. They go out to consecutive slots from slot 1 (slot 0 is the header), so
    // virtual page n sits in slot n + 1: offsets and virtual pages never agree modulo 16,
    // and thp_swap_suitable_orders rules every large swap-in out.
    let mut acc: Vec<(u64, bool)> = (0..128).map(|p| (p, false)).collect();
    acc.extend(writes(0..128));
    acc.extend((0..128).map(|p| (p, false)));
    let r = Machine::new(64, &["64kB"]).zram().run(128, &acc);
    let s = stats(&r, "64kB");
    assert!(r.vmstat.pswpin > 0);
    assert_eq!(s, MthpStats::default(), "no large folio at all");
    assert_eq!(r.vmstat.pswpin, r.vmstat.pgmajfault);
}

#[test]
fn a_charge_the_policy_refuses_counts_as_a_charge_fallback() {
    #[derive(Clone, Debug)]
    struct Refuse;
    impl SwapinSize for Refuse {
        fn name(&self) -> &'static str {
            "refuse"
        }
        fn orders(&mut self, view: &SwapinView) -> OrderMask {
            view.candidates
        }
        fn may_charge(&mut self, _order: u8) -> bool {
            false
        }
    }
    let mut m = Machine::new(64, &["16kB", "64kB"]);
    m.swapin = Box::new(Refuse);
    let r = zram_refill(m);
    let (big, small) = (stats(&r, "64kB"), stats(&r, "16kB"));
    assert_eq!(big.swpin + small.swpin, 0);
    assert!(big.swpin_fallback > 0 && big.swpin_fallback == big.swpin_fallback_charge, "{big:?}");
    assert_eq!(small.swpin_fallback, small.swpin_fallback_charge, "{small:?}");
}

/// Every candidate order, zswap entries included (the 2024 zswap large swap-in RFC).
#[derive(Clone, Debug)]
struct ZswapLarge;

impl SwapinSize for ZswapLarge {
    fn name(&self) -> &'static str {
        "zswap-large"
    }
    fn orders(&mut self, view: &SwapinView) -> OrderMask {
        view.candidates
    }
    fn zswap_large(&self) -> bool {
        true
    }
}

#[test]
fn zswap_entries_come_in_large_only_when_the_policy_says_and_the_whole_range_is_in_zswap() {
    // 384 pages written in 16 KiB folios through a 256-page group with zswap on a disk
    // partition (half-compressible pages, the pool charged to the group), then read back: every
    // page evicted went to zswap.
    let mut acc = writes(0..384);
    acc.extend((0..384).map(|p| (p, false)));
    let run = |swapin: Box<dyn SwapinSize>| {
        let mut m = Machine::new(256, &["16kB"]);
        m.zswap = true;
        m.contents = crate::contents::Contents::Half;
        m.swapin = swapin;
        m.run(384, &acc)
    };
    // 6.18: never large once zswap exists; zswap entries come back through the swap
    // cache one page each.
    let kernel = run(Box::new(AllOrders));
    assert_eq!(stats(&kernel, "16kB").swpin, 0);
    assert!(kernel.vmstat.zswpin > 0 && kernel.vmstat.pswpin == 0, "{:?}", kernel.vmstat);
    // The RFC: whole 16 KiB folios decompressed from zswap, one major fault each.
    let large = run(Box::new(ZswapLarge));
    let s = stats(&large, "16kB");
    assert!(s.swpin > 0, "{s:?}");
    assert_eq!(large.vmstat.pswpin, 0, "nothing read from the disk");
    assert!(large.vmstat.zswpin >= 4 * s.swpin, "four pages loaded per large folio");
    assert!(large.vmstat.pgmajfault < large.vmstat.zswpin, "{:?}", large.vmstat);
    assert!(large.vmstat.pgmajfault < kernel.vmstat.pgmajfault);
    // No swap cache and so no readahead on the zswap entries it took.
    assert!(
        large.vmstat.swap_ra <= kernel.vmstat.swap_ra,
        "{} {}",
        large.vmstat.swap_ra,
        kernel.vmstat.swap_ra
    );
}
