//! Large folio tests on tiny machines, with invariants checked after every event.

use super::*;
use crate::config::{ByteSize, CoreConfig, SwapBacking};
use crate::device::{DeviceTraits, IoRequest};
use crate::ids::VirtPage;
use crate::policy::Policies;
use crate::policy::swapin::{Order0Swapin, SwapinSize, SwapinView};
use crate::thp::{MthpStats, OrderMask, ThpSizeEnabled};
use crate::workload::{Access, RegionSpec};
use crate::SwapDeviceSpec;

/// A device with a fixed service time; `synchronous` makes it behave as zram.
#[derive(Debug)]
struct Fixed {
    synchronous: bool,
}

impl BlockDevice for Fixed {
    fn kind(&self) -> &str {
        "fixed"
    }
    fn traits(&self) -> DeviceTraits {
        DeviceTraits { rotational: false, synchronous: self.synchronous, queue_depth: 32, max_sectors_kb: 512 }
    }
    fn service(&mut self, now: SimTime, _req: &IoRequest) -> SimTime {
        SimTime(now.0 + if self.synchronous { 2_000 } else { 20_000 })
    }
}

/// The kernel's choice: every candidate order.
#[derive(Debug)]
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
    swapin: Box<dyn SwapinSize>,
}

impl Machine {
    fn new(limit_pages: u64, sizes: &'static [&'static str]) -> Machine {
        Machine {
            limit_pages,
            swap_pages: 4096,
            sizes,
            zram: false,
            ever_enabled: false,
            swapin: Box::new(AllOrders),
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
            backing: Some(if self.zram { SwapBacking::Block } else { SwapBacking::File }),
        });
        for s in self.sizes {
            cfg.thp.hugepages.insert((*s).to_string(), ThpSizeEnabled::Always);
        }
        cfg.zswap.ever_enabled = self.ever_enabled;
        let accesses: Vec<Access> =
            accesses.iter().map(|&(p, w)| Access { vpage: VirtPage(p), write: w, think_ns: None }).collect();
        let setup = Setup {
            config: cfg.validate().unwrap(),
            seed: 1,
            devices: vec![Box::new(Fixed { synchronous: self.zram })],
            policies: Policies::default().with_swapin(self.swapin),
            tasks: vec![TaskSpec {
                address_space: None,
                name: "t".into(),
                regions: vec![RegionSpec::new(VirtPage(0), pages)],
                accesses: Box::new(accesses.into_iter()),
            }],
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
    assert_eq!(small.anon_fault_fallback, small.anon_fault_fallback_charge, "never short of frames, only of room");
    let order0 = 48 - 16 * big.anon_fault_alloc - 4 * small.anon_fault_alloc;
    assert_eq!(r.vmstat.pgfault, big.anon_fault_alloc + small.anon_fault_alloc + order0);
    assert_eq!(r.outcome, crate::report::Outcome::Completed);
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
