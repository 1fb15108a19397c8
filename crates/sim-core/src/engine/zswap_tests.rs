//! zswap on tiny machines, with invariants checked after every event: the exclusive load,
//! the zero map, pages that do not compress, the pool-limit worker, the memory-pressure
//! shrinker on both cgroup versions, what the protection policy hears of swap-ins, and a
//! fault whose target needs no I/O while its readahead neighbours are charged.

use super::tests::FixedLatency;
use super::*;
use crate::config::{ByteSize, CoreConfig};
use crate::contents::Contents;
use crate::ids::{VirtPage, PAGE_SIZE};
use crate::mm::pagetable::PteState;
use crate::policy::zswap::{NoProtection, ZswapLruView, ZswapProtection, ZswapVisit};
use crate::timeline::{Operation, Trigger};
use crate::workload::{Access, RegionSpec};
use crate::zswap::{Incompressible, ZswapConfig, ZswapReport};
use crate::SwapDeviceSpec;

/// A referenced bit per entry, set at store: the first visit clears it and rotates the
/// entry, the second writes it back. The count offers the whole LRU.
#[derive(Clone, Debug, Default)]
struct Referenced;

impl ZswapProtection for Referenced {
    fn name(&self) -> &'static str {
        "referenced"
    }
    fn stored(&mut self, _lru_size: u64) -> bool {
        true
    }
    fn count(&mut self, lru: &ZswapLruView) -> u64 {
        lru.scale(lru.lru_size)
    }
    fn visit(&mut self, referenced: &mut bool) -> ZswapVisit {
        if std::mem::take(referenced) {
            ZswapVisit::Rotate
        } else {
            ZswapVisit::Writeback
        }
    }
}

/// One task on one region under a memory cgroup limit, one asynchronous swap device,
/// zswap on.
struct Machine {
    memory: ByteSize,
    cpus: u32,
    housekeeping_cpus: u32,
    limit_pages: u64,
    /// Pages of hot page cache, charged on top of `limit_pages`.
    page_cache_pages: u64,
    version: u8,
    zswap_writeback: bool,
    contents: Contents,
    zswap: ZswapConfig,
    protection: Box<dyn ZswapProtection>,
    readahead: Box<dyn crate::policy::readahead::Readahead>,
    timeline: Vec<TimelineOp>,
}

impl Machine {
    fn new(limit_pages: u64, contents: Contents) -> Machine {
        Machine {
            memory: ByteSize::mib(64),
            cpus: 1,
            housekeeping_cpus: 0,
            limit_pages,
            page_cache_pages: 0,
            version: 2,
            zswap_writeback: true,
            contents,
            zswap: ZswapConfig { enabled: true, ..ZswapConfig::default() },
            protection: Box::new(NoProtection),
            readahead: Box::new(crate::policy::readahead::NoReadahead),
            timeline: Vec::new(),
        }
    }

    fn build(self, pages: u64, accesses: Vec<(u64, bool)>) -> Simulation {
        let sim = Simulation::new(self.setup(pages, accesses)).unwrap();
        sim.check_invariants();
        sim
    }

    fn setup(self, pages: u64, accesses: Vec<(u64, bool)>) -> Setup {
        let mut cfg = CoreConfig::default();
        cfg.machine.memory = self.memory;
        cfg.machine.cpus = self.cpus;
        cfg.machine.housekeeping_cpus = self.housekeeping_cpus;
        cfg.memcg.limit = Some(ByteSize((self.limit_pages + self.page_cache_pages) * PAGE_SIZE));
        cfg.memcg.page_cache = ByteSize(self.page_cache_pages * PAGE_SIZE);
        cfg.memcg.version = self.version;
        cfg.memcg.zswap_writeback = self.zswap_writeback;
        cfg.devices.push(SwapDeviceSpec {
            name: "swap0".into(),
            size: ByteSize(4096 * PAGE_SIZE),
            priority: None,
            backing: None,
        });
        cfg.zswap = self.zswap;
        let mut region = RegionSpec::new(VirtPage(0), pages);
        region.contents = self.contents;
        let accesses =
            accesses.into_iter().map(|(p, w)| Access { vpage: VirtPage(p), write: w, think_ns: None });
        Setup {
            config: cfg.validate().unwrap(),
            seed: 1,
            devices: vec![Box::new(FixedLatency { ns: 20_000, rotational: false, synchronous: false })],
            policies: Policies::default().with_readahead(self.readahead).with_zswap(self.protection),
            tasks: vec![TaskSpec::new("t", vec![region], Box::new(crate::ForkableIter(accesses)))],
            timeline: self.timeline,
        }
    }

    /// Runs to the end, checking the invariants and then `each` after every event.
    fn run_with(
        self,
        pages: u64,
        accesses: Vec<(u64, bool)>,
        mut each: impl FnMut(&Simulation),
    ) -> SimReport {
        let mut sim = self.build(pages, accesses);
        while sim.step().unwrap() {
            sim.check_invariants();
            each(&sim);
        }
        sim.into_report()
    }

    fn run(self, pages: u64, accesses: Vec<(u64, bool)>) -> SimReport {
        self.run_with(pages, accesses, |_| {})
    }
}

fn writes(pages: std::ops::Range<u64>) -> Vec<(u64, bool)> {
    pages.map(|p| (p, true)).collect()
}

fn reads(pages: std::ops::Range<u64>) -> Vec<(u64, bool)> {
    pages.map(|p| (p, false)).collect()
}

fn zswap(r: &SimReport) -> &ZswapReport {
    r.zswap.as_ref().expect("zswap is on, so the report has its section")
}

#[test]
fn a_load_from_zswap_frees_the_entry_and_dirties_the_folio() {
    // 96 pages written under a 64-page limit: the oldest go to zswap. Reading page 0 back
    // loads it; pushing everything out afterwards stores it again, never on the device.
    let mut acc = writes(0..96);
    acc.push((0, false));
    let mut m = Machine::new(64, Contents::Half);
    m.timeline.push(TimelineOp { trigger: Trigger::WorkloadEnd, op: Operation::SwapOutAll });
    let mut stored_at_end = None;
    let r = m.run_with(96, acc, |sim| {
        if !sim.world.workload_done || stored_at_end.is_some() {
            return;
        }
        stored_at_end = Some(sim.world.mm.zswap.stored);
        let mm = &sim.world.mm;
        let page = mm.pt.existing_page(crate::ids::SpaceId(0), 0, VirtPage(0)).expect("page 0 was touched");
        let PteState::Present(pfn) = mm.pt.pte(page).state() else {
            panic!("page 0 is mapped after its fault, not {:?}", mm.pt.pte(page).state())
        };
        let slot = mm.frames.swap_slot(pfn).expect("a loaded page stays in the swap cache");
        assert_eq!(mm.swap.zswap_entry(slot), None, "the load took the entry");
        assert!(mm.frames.test(pfn, flag::DIRTY), "the device holds no copy: the folio is dirty");
        let v = &mm.vmstat;
        assert_eq!((v.zswpin, v.pgmajfault, v.pswpin), (1, 1, 0), "one major fault, served by zswap");
        assert!(v.zswpout > 1, "{v:?}");
        assert_eq!(mm.zswap.stored + v.zswpin, v.zswpout, "nothing but the load freed an entry");
    });
    let stored_at_end = stored_at_end.expect("the workload ended");
    let v = &r.vmstat;
    let z = zswap(&r);
    assert_eq!(r.outcome, Outcome::Completed);
    assert_eq!(v.zswpout, 96 + 1, "every page stored once, and page 0 once more after its load");
    assert_eq!(z.stored_pages, 96, "everything is in zswap at the end");
    assert_eq!((v.pswpout, v.pswpin, v.zswpwb), (0, 0, 0), "the device is never used");
    let out = &r.operations[0];
    assert_eq!(out.op, "swap-out-all");
    assert_eq!(out.vmstat.zswpout, 96 - stored_at_end, "every resident page, page 0 included");
    assert_eq!(out.vmstat.pswpout, 0);
    assert_eq!(r.at_end.rss_pages, 0);
}

#[test]
fn zero_pages_go_to_the_zero_map_and_come_back_without_io() {
    for enabled in [true, false] {
        let mut acc = writes(0..96);
        acc.extend(reads(0..96));
        let mut m = Machine::new(64, Contents::Zero);
        m.zswap.enabled = enabled;
        let mut sim = m.build(96, acc);
        while sim.step().unwrap() {
            sim.check_invariants();
            assert_eq!(sim.world.mm.zswap.stored, 0, "a zero page is never stored");
        }
        let r = sim.into_report();
        let v = &r.vmstat;
        assert!(v.swpout_zero >= 32, "zswap {enabled}: {v:?}");
        assert!(v.swpin_zero > 0, "zswap {enabled}: {v:?}");
        assert_eq!((v.zswpout, v.zswpin, v.pswpout, v.pswpin), (0, 0, 0, 0), "zswap {enabled}: {v:?}");
        assert_eq!(v.pgmajfault, v.swpin_zero, "zswap {enabled}: each swap fault read the zero map");
        assert_eq!(r.block[0].writes.queued + r.block[0].reads.queued, 0);
        assert_eq!(r.zswap.is_some(), enabled);
        if enabled {
            assert_eq!(zswap(&r).stored_pages, 0);
        }
    }
}

#[test]
fn incompressible_pages_are_stored_whole_or_rejected() {
    let acc = || {
        let mut acc = writes(0..96);
        acc.extend(reads(0..32));
        acc
    };
    // cgroup v1, where the pool is not charged to the group: on v2 each page stored whole
    // would take back the page its reclaim freed.
    let machine = |incompressible, contents| {
        let mut m = Machine::new(64, contents);
        m.version = 1;
        m.zswap.incompressible = incompressible;
        m
    };
    // "store": a page that does not shrink takes a whole page of pool.
    let r = machine(Incompressible::Store, Contents::Random).run(96, acc());
    let (v, z) = (&r.vmstat, zswap(&r));
    assert!(v.zswpout >= 32 && v.zswpin > 0, "{v:?}");
    assert_eq!(z.stored_incompressible_pages, z.stored_pages);
    assert!(z.stored_pages > 0);
    assert_eq!(z.memcg_zswap_bytes, z.stored_pages * PAGE_SIZE, "each is kept as it is");
    assert_eq!((v.pswpout, z.reject_compress_poor), (0, 0));
    // "reject" (before 6.18): to the device instead, each counted once.
    let r = machine(Incompressible::Reject, Contents::Random).run(96, acc());
    let (v, z) = (&r.vmstat, zswap(&r));
    assert_eq!((v.zswpout, v.zswpin, z.stored_pages), (0, 0, 0), "{v:?}");
    assert!(v.pswpout >= 32, "{v:?}");
    assert_eq!(z.reject_compress_poor, v.pswpout);
    assert!(v.pswpin > 0);
    // A v2 group that may not write back rejects them whatever the knob says.
    let mut m = Machine::new(64, Contents::Random);
    m.zswap_writeback = false;
    let r = m.run(96, acc());
    let (v, z) = (&r.vmstat, zswap(&r));
    assert_eq!((v.zswpout, z.stored_pages), (0, 0), "{v:?}");
    assert!(v.pswpout >= 32, "{v:?}");
    assert_eq!(z.reject_compress_poor, v.pswpout);
    // Compressible pages are stored in either setting.
    let r = machine(Incompressible::Reject, Contents::Half).run(96, acc());
    assert_eq!(zswap(&r).stored_incompressible_pages, 0);
    assert!(zswap(&r).stored_pages > 0);
}

/// 400 pages written then read twice under a 64-page limit on a 16 MiB machine of `cpus`
/// CPUs whose pool may take 1 % of RAM (40 pages, open again at 36).
fn pool_limit_run(cpus: u32, protection: Box<dyn ZswapProtection>) -> SimReport {
    pool_limit_run_on(cpus, 0, protection)
}

/// [`pool_limit_run`] with `housekeeping` CPUs beside the task's.
fn pool_limit_run_on(cpus: u32, housekeeping: u32, protection: Box<dyn ZswapProtection>) -> SimReport {
    let mut acc = writes(0..400);
    acc.extend(reads(0..400));
    acc.extend(reads(0..400));
    let mut m = Machine::new(64, Contents::Half);
    m.memory = ByteSize::mib(16);
    m.cpus = cpus;
    m.housekeeping_cpus = housekeeping;
    m.zswap.max_pool_percent = 1;
    // Eight pages of page cache keep reclaim aging the active list in so small a group.
    m.page_cache_pages = 8;
    m.protection = protection;
    let max_pages = 4096 / 100;
    let mut peak = 0;
    // The pool's size each time the worker has written something back: it writes back
    // only until the pool is at the accept threshold (36 pages), never down to empty.
    let (mut written_back, mut after_writeback, mut accept_pages) = (0, u64::MAX, 0);
    let r = m.run_with(400, acc, |sim| {
        let zswap = &sim.world.mm.zswap;
        assert_eq!(zswap.max_pages, max_pages);
        accept_pages = zswap.accept_pages;
        peak = peak.max(zswap.pool.total_pages());
        if zswap.counts.written_back_pages > written_back {
            written_back = zswap.counts.written_back_pages;
            after_writeback = after_writeback.min(zswap.pool.total_pages());
        }
    });
    assert_eq!(accept_pages, 36, "the pool opens again at 90 % of its 40 pages");
    if written_back > 0 {
        // The last entry written back may free a whole zspage (a chain of at most 8 pages).
        assert!(
            after_writeback + 8 >= accept_pages && after_writeback > 0,
            "the worker wrote the pool down to {after_writeback} pages, accept threshold {accept_pages}"
        );
    }
    // A store is refused at the limit, so one store may pass it by at most one zspage
    // (a chain of at most 8 pages).
    assert!(peak >= max_pages && peak <= max_pages + 8, "peak pool {peak} pages, limit {max_pages}");
    let z = zswap(&r);
    assert!(z.pool_total_size / PAGE_SIZE <= max_pages + 8, "{z:?}");
    r
}

#[test]
fn the_pool_limit_worker_writes_the_oldest_entries_back() {
    // On a second CPU, which the task leaves idle, the worker runs as soon as it is queued.
    let r = pool_limit_run(2, Box::new(NoProtection));
    let (v, z) = (&r.vmstat, zswap(&r));
    assert_eq!(r.outcome, Outcome::Completed);
    assert!(z.pool_limit_hit > 0 && z.shrink_worker_runs > 0, "{z:?}");
    assert!(v.zswpwb > 0, "{v:?}");
    assert_eq!(v.zswpwb, z.written_back_pages);
    assert!(v.pswpout >= v.zswpwb, "{v:?}");
    // Without protection every visit asks for a writeback.
    assert_eq!(z.shrinker_scanned, z.written_back_pages + z.reject_reclaim_fail, "{z:?}");
    // The worker wrote back, and the refused stores went to the device.
    assert!(v.pswpout > v.zswpwb, "{v:?}");

    // With a referenced bit, entries are rotated once before they are written back.
    let r = pool_limit_run(2, Box::new(Referenced));
    let (v, z) = (&r.vmstat, zswap(&r));
    assert!(v.zswpwb > 0 && v.pswpout >= v.zswpwb, "{v:?}");
    assert!(z.shrinker_scanned > z.written_back_pages + z.reject_reclaim_fail, "{z:?}");
}

#[test]
fn the_pool_limit_worker_waits_for_the_tasks_cpu() {
    // On a second, idle CPU the worker runs as soon as a refused store queues it; on the
    // task's own CPU it waits for the task to sleep or to finish a slice, and the stores
    // refused meanwhile queue it once.
    for protection in [Box::new(NoProtection) as Box<dyn ZswapProtection>, Box::new(Referenced)] {
        let own = pool_limit_run(2, protection.clone());
        let shared = pool_limit_run(1, protection);
        assert_eq!((&own.outcome, &shared.outcome), (&Outcome::Completed, &Outcome::Completed));
        let (own_z, shared_z) = (zswap(&own), zswap(&shared));
        assert!(own_z.shrink_worker_runs > shared_z.shrink_worker_runs, "{own_z:?} {shared_z:?}");
        assert!(own_z.written_back_pages > shared_z.written_back_pages, "{own_z:?} {shared_z:?}");
        // Fewer writebacks keep the pool full longer: more stores go to the device.
        let refused = |r: &SimReport| r.vmstat.pswpout - r.vmstat.zswpwb;
        assert!(refused(&shared) > refused(&own), "{:?} {:?}", own.vmstat, shared.vmstat);
    }
}

#[test]
fn the_pool_limit_worker_runs_beside_the_task_on_a_housekeeping_cpu() {
    // The task's one CPU and a housekeeping CPU beside it: the worker runs there while the
    // task goes on, as on a second CPU the task leaves idle, and writes back more than on
    // the task's own CPU. A run follows a refused store (woken, or queued again while it
    // ran), never more than one per refusal.
    for protection in [Box::new(NoProtection) as Box<dyn ZswapProtection>, Box::new(Referenced)] {
        let beside = pool_limit_run_on(1, 1, protection.clone());
        let shared = pool_limit_run(1, protection);
        assert_eq!((&beside.outcome, &shared.outcome), (&Outcome::Completed, &Outcome::Completed));
        let (beside_z, shared_z) = (zswap(&beside), zswap(&shared));
        assert!(beside_z.written_back_pages > shared_z.written_back_pages, "{beside_z:?} {shared_z:?}");
        let refused = |r: &SimReport| r.vmstat.pswpout - r.vmstat.zswpwb;
        assert!(refused(&shared) > refused(&beside), "{:?} {:?}", beside.vmstat, shared.vmstat);
        assert!(beside_z.shrink_worker_runs <= refused(&beside) + 1, "{beside_z:?} {:?}", beside.vmstat);
        // The worker's time is its own CPU's: the task's CPU is busy only with the task.
        assert!(
            beside.cpu_busy_s[0] < shared.cpu_busy_s[0],
            "{:?} {:?}",
            beside.cpu_busy_s,
            shared.cpu_busy_s
        );
    }
}

/// 128 pages written then read twice under a 96-page limit: memory pressure, with the
/// pool far below its limit (20 % of 64 MiB). On cgroup v2 the pool's charge (about half
/// a page per stored page) counts against the limit too.
fn pressure_run(version: u8, shrinker_enabled: bool) -> SimReport {
    let mut acc = writes(0..128);
    acc.extend(reads(0..128));
    acc.extend(reads(0..128));
    let mut m = Machine::new(96, Contents::Half);
    m.version = version;
    m.zswap.shrinker_enabled = shrinker_enabled;
    let r = m.run_with(128, acc, |sim| {
        if version == 1 {
            assert_eq!(sim.world.mm.zswap.charged_pages, 0, "v1 charges the pool to no group");
        }
    });
    let z = zswap(&r);
    assert_eq!(r.outcome, Outcome::Completed, "v{version}");
    assert_eq!((z.pool_limit_hit, z.shrink_worker_runs), (0, 0), "v{version}: {z:?}");
    assert!(r.vmstat.zswpout > 0, "v{version}: {:?}", r.vmstat);
    r
}

#[test]
fn the_memory_pressure_shrinker_writes_back_on_cgroup_v2_only() {
    // v1: the pool is charged to no group, so the group's shrinker count is 0.
    let r = pressure_run(1, true);
    assert_eq!((r.vmstat.zswpwb, r.vmstat.pswpout), (0, 0), "{:?}", r.vmstat);
    assert!(r.vmstat.zswpin > 0, "{:?}", r.vmstat);
    // v2 without the shrinker: nothing is written back either.
    let r = pressure_run(2, false);
    assert_eq!((r.vmstat.zswpwb, r.vmstat.pswpout), (0, 0), "{:?}", r.vmstat);
    assert!(r.vmstat.zswpin > 0, "{:?}", r.vmstat);
    // v2 with it: reclaim's shrink_slab writes entries back.
    let r = pressure_run(2, true);
    let z = zswap(&r);
    assert!(r.vmstat.zswpwb > 0, "{:?}", r.vmstat);
    assert_eq!(r.vmstat.zswpwb, z.written_back_pages);
    assert!(r.vmstat.pswpout >= r.vmstat.zswpwb);
    assert!(z.shrinker_scanned >= z.written_back_pages);
}

/// Reads the aligned pair of slots around the fault: the neighbour comes after the target
/// when the target's offset is even, before it when odd.
#[derive(Clone, Debug)]
struct Pairs;

impl crate::policy::readahead::Readahead for Pairs {
    fn kind(&self) -> &'static str {
        "pairs"
    }
    fn plan(&mut self, f: &crate::policy::readahead::FaultView) -> crate::policy::readahead::ReadaheadPlan {
        crate::policy::readahead::ReadaheadPlan::Slots { first: f.offset & !1, last: f.offset | 1 }
    }
}

/// 64 pages written under a 24-page limit, then every page read back, each fault reading
/// its slot's pair: the neighbour's charge reclaims while the target is ready but not yet
/// mapped.
fn neighbour_charge_run(contents: Contents, zswap: bool) -> SimReport {
    let mut acc = writes(0..64);
    acc.extend(reads(0..64));
    let mut m = Machine::new(24, contents);
    m.zswap.enabled = zswap;
    m.version = 1;
    m.readahead = Box::new(Pairs);
    m.run(64, acc)
}

/// A fault's target that the zero map or zswap supplies is ready at once, but the fault
/// maps it only after reading the rest of the window. It used to be unlocked right away,
/// so the reclaim a later neighbour's charge ran could free its frame (after storing it in
/// zswap again) and hand the frame to the neighbour: the fault then mapped the
/// neighbour's page, which `check_invariants` caught.
#[test]
fn a_target_loaded_without_io_is_not_reclaimed_by_its_neighbours_charge() {
    let r = neighbour_charge_run(Contents::Zero, false);
    assert!(r.vmstat.swpin_zero > 0 && r.vmstat.swap_ra > 0, "{:?}", r.vmstat);
    let r = neighbour_charge_run(Contents::Half, true);
    assert!(r.vmstat.zswpin > 0 && r.vmstat.swap_ra > 0, "{:?}", r.vmstat);
}

/// No protection, tallying the swap-ins it hears of by (from the disk, the fault's target).
#[derive(Clone, Debug)]
struct Tally(std::sync::Arc<std::sync::Mutex<[[u64; 2]; 2]>>);

impl ZswapProtection for Tally {
    fn name(&self) -> &'static str {
        "tally"
    }
    fn stored(&mut self, _lru_size: u64) -> bool {
        false
    }
    fn swapin(&mut self, swapin: crate::policy::zswap::ZswapSwapin) {
        self.0.lock().unwrap()[usize::from(swapin.from_disk)][usize::from(swapin.target)] += 1;
    }
    fn count(&mut self, lru: &ZswapLruView) -> u64 {
        lru.scale(lru.lru_size)
    }
    fn visit(&mut self, _referenced: &mut bool) -> ZswapVisit {
        ZswapVisit::Writeback
    }
}

#[test]
fn the_protection_hears_of_every_swapin_and_where_it_came_from() {
    // Pages written back by a small pool come in from the disk, the others from zswap;
    // pair readahead brings neighbours along.
    let tally = std::sync::Arc::new(std::sync::Mutex::new([[0u64; 2]; 2]));
    let mut acc = writes(0..256);
    acc.extend(reads(0..256));
    acc.extend((0..256).rev().map(|p| (p, false)));
    let mut m = Machine::new(64, Contents::Half);
    m.version = 1;
    m.memory = ByteSize::mib(16);
    m.zswap.max_pool_percent = 1;
    m.readahead = Box::new(Pairs);
    m.protection = Box::new(Tally(tally.clone()));
    let r = m.run(256, acc);
    let v = &r.vmstat;
    let [[zswap_neighbour, zswap_target], [disk_neighbour, disk_target]] = *tally.lock().unwrap();
    assert!(v.zswpin > 0 && v.pswpin > 0 && v.swap_ra > 0 && v.zswpwb > 0, "{v:?}");
    assert_eq!(disk_target + disk_neighbour, v.pswpin, "{v:?}");
    assert_eq!(zswap_target + zswap_neighbour, v.zswpin, "{v:?}");
    assert_eq!(disk_target + zswap_target, v.pgmajfault, "{v:?}");
    assert_eq!(disk_neighbour + zswap_neighbour, v.swap_ra, "{v:?}");
}

/// Two tasks on two CPUs, each thrashing 256 pages of its own under a 64-page limit with
/// zswap on, its shrinker switched by `shrinker` and protecting by `protection`; the
/// tasks take turns access by access, so that a run can stop short of reclaim.
fn thrash(shrinker: bool, protection: Box<dyn ZswapProtection>, limit_pages: u64) -> Setup {
    thrash_with(true, shrinker, protection, limit_pages)
}

/// [`thrash`] with zswap on or off.
fn thrash_with(on: bool, shrinker: bool, protection: Box<dyn ZswapProtection>, limit_pages: u64) -> Setup {
    let mut m = Machine::new(limit_pages, Contents::Text);
    m.cpus = 2;
    m.zswap.enabled = on;
    m.zswap.shrinker_enabled = shrinker;
    m.protection = protection;
    let accesses: Vec<(u64, bool)> = [writes(0..256), reads(0..256), reads(0..256)].concat();
    let mut setup = m.setup(256, accesses.clone());
    let second = accesses.into_iter().map(|(p, w)| Access { vpage: VirtPage(p), write: w, think_ns: None });
    setup.tasks.push(TaskSpec::new(
        "u",
        vec![RegionSpec::new(VirtPage(0), 256)],
        Box::new(crate::ForkableIter(second)),
    ));
    setup
}

fn json(r: &SimReport) -> serde_json::Value {
    serde_json::to_value(r).unwrap()
}

fn finish(mut sim: Simulation) -> SimReport {
    while sim.step().unwrap() {
        sim.check_invariants();
    }
    sim.into_report()
}

#[test]
fn a_fork_given_another_zswap_before_reclaim_reports_as_its_run_alone() {
    let mut base = Simulation::new(thrash(false, Box::new(NoProtection), 64)).unwrap();
    assert!(base.run_until_near_reclaim(8).unwrap(), "the run comes near its limit before it ends");
    assert!(base.can_retune_zswap(), "nothing reclaimed yet");
    assert!(base.streams_fork());
    assert_eq!(base.world.mm.vmstat.pswpout + base.world.mm.vmstat.zswpout, 0);
    assert!(base.world.mm.memcg_usage() >= 56, "stopped within the margin of the limit");
    let unchanged = base.fork().unwrap();
    let mut retuned = base.fork().unwrap();
    retuned.retune_zswap(thrash(true, Box::new(Referenced), 64)).unwrap();
    let mut off = base.fork().unwrap();
    off.retune_zswap(thrash_with(false, false, Box::new(NoProtection), 64)).unwrap();
    let off_alone = finish(Simulation::new(thrash_with(false, false, Box::new(NoProtection), 64)).unwrap());
    assert!(
        off_alone.zswap.is_none() && off_alone.vmstat.pswpout > 0,
        "without zswap the device takes every page"
    );
    assert_eq!(json(&finish(off)), json(&off_alone));
    let alone = finish(Simulation::new(thrash(true, Box::new(Referenced), 64)).unwrap());
    let first_alone = finish(Simulation::new(thrash(false, Box::new(NoProtection), 64)).unwrap());
    assert!(zswap(&alone).shrinker_scanned > 0, "the variant's shrinker ran");
    assert_ne!(json(&alone), json(&first_alone), "the switches change the run");
    assert_eq!(json(&finish(retuned)), json(&alone));
    assert_eq!(json(&finish(unchanged)), json(&first_alone));
}

#[test]
fn retuning_zswap_after_a_store_or_with_another_config_is_refused() {
    let mut sim = Simulation::new(thrash(false, Box::new(NoProtection), 64)).unwrap();
    assert!(sim.run_until_near_reclaim(8).unwrap());
    let err = sim.fork().unwrap().retune_zswap(thrash(true, Box::new(Referenced), 65)).unwrap_err();
    assert!(matches!(err, SimError::Fork(crate::error::ForkError::ConfigDiffers)), "{err}");
    while sim.world.mm.vmstat.zswpout == 0 {
        assert!(sim.step().unwrap());
    }
    assert!(!sim.can_retune_zswap());
    let err = sim.retune_zswap(thrash(true, Box::new(Referenced), 64)).unwrap_err();
    assert!(matches!(err, SimError::Fork(crate::error::ForkError::ZswapRead)), "{err}");
}
