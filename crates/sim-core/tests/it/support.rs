//! Tiny device models and readahead plans for tests, independent of the other crates.

use swapsim_core::device::{BlockDevice, DeviceTraits, IoRequest};
use swapsim_core::*;

/// A device with a fixed service time and a configurable synchronous flag.
#[derive(Clone, Debug)]
pub(crate) struct TestDevice {
    pub(crate) ns: u64,
    pub(crate) synchronous: bool,
    pub(crate) depth: u32,
}

impl BlockDevice for TestDevice {
    fn kind(&self) -> &str {
        "test"
    }
    fn traits(&self) -> DeviceTraits {
        DeviceTraits {
            rotational: true,
            synchronous: self.synchronous,
            queue_depth: self.depth,
            max_sectors_kb: 64,
        }
    }
    fn service(&mut self, now: SimTime, req: &IoRequest) -> SimTime {
        SimTime(now.0 + self.ns + req.bytes / 4)
    }
}

/// Reads the aligned window of `2^page_cluster` slots around the fault.
#[derive(Clone, Debug)]
pub(crate) struct AlignedWindow;

impl Readahead for AlignedWindow {
    fn kind(&self) -> &'static str {
        "aligned"
    }
    fn plan(&mut self, f: &FaultView) -> ReadaheadPlan {
        let mask = (1u32 << f.page_cluster.min(8)) - 1;
        if mask == 0 {
            return ReadaheadPlan::TargetOnly;
        }
        ReadaheadPlan::Slots {
            first: (f.offset & !mask).max(1),
            last: (f.offset | mask).min(f.device_slots - 1),
        }
    }
}

/// Reads a window of virtual pages centred on the fault, within the region.
#[derive(Clone, Debug)]
pub(crate) struct PageWindow;

impl Readahead for PageWindow {
    fn kind(&self) -> &'static str {
        "pages"
    }
    fn plan(&mut self, f: &FaultView) -> ReadaheadPlan {
        let first = f.vpage.0.saturating_sub(2).max(f.region_start.0);
        let last = (f.vpage.0 + 2).min(f.region_end.0 - 1);
        ReadaheadPlan::Pages { first: VirtPage(first), last: VirtPage(last) }
    }
}

/// Makes the first access to each page a write (so that it owns memory), as the
/// validation workloads' fill does.
pub(crate) fn first_touch_writes(accesses: &[(u64, bool)]) -> Vec<Access> {
    let mut seen = std::collections::BTreeSet::new();
    accesses
        .iter()
        .map(|&(p, w)| Access { vpage: VirtPage(p), write: w || seen.insert(p), think_ns: None })
        .collect()
}

/// Accesses with the next use of each attached, as a trace replayed for `lru = "opt"`
/// carries them.
pub(crate) struct Oracle {
    pub(crate) accesses: std::vec::IntoIter<(Access, Option<u64>)>,
    pub(crate) last: Option<u64>,
}

impl AccessSource for Oracle {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let next = self.accesses.next();
        self.last = next.and_then(|(_, n)| n);
        Ok(next.map(|(a, _)| a))
    }
    fn knows_next_uses(&self) -> bool {
        true
    }
    fn next_use(&self) -> Option<u64> {
        self.last
    }
}

/// For each access of `pages`, the index of the next access to the same page.
pub(crate) fn next_uses(pages: &[u64]) -> Vec<Option<u64>> {
    let mut later = std::collections::BTreeMap::new();
    let mut out = vec![None; pages.len()];
    for (i, p) in pages.iter().enumerate().rev() {
        out[i] = later.insert(*p, i as u64);
    }
    out
}

/// One task's accesses with their next uses.
pub(crate) fn oracle(acc: Vec<Access>) -> Oracle {
    let pages: Vec<u64> = acc.iter().map(|a| a.vpage.0).collect();
    let with_next: Vec<(Access, Option<u64>)> = acc.into_iter().zip(next_uses(&pages)).collect();
    Oracle { accesses: with_next.into_iter(), last: None }
}

/// Pages of hot page cache every test machine's group holds besides `limit_pages`.
pub(crate) const TEST_PAGE_CACHE_PAGES: u64 = 8;

pub(crate) struct Machine {
    pub(crate) limit_pages: u64,
    pub(crate) swap_pages: u64,
    pub(crate) cpus: u32,
    pub(crate) page_cluster: u32,
    pub(crate) plugging: bool,
    pub(crate) lru: config::LruModel,
    pub(crate) memcg_version: u8,
}

pub(crate) fn setup_with_timeline(
    m: &Machine,
    devices: Vec<Box<dyn BlockDevice>>,
    readahead: Box<dyn Readahead>,
    tasks: Vec<(u64, Vec<Access>)>,
    timeline: Vec<TimelineOp>,
) -> Setup {
    let mut s = setup(m, devices, readahead, tasks, 1);
    s.timeline = timeline;
    s
}

pub(crate) fn setup(
    m: &Machine,
    devices: Vec<Box<dyn BlockDevice>>,
    readahead: Box<dyn Readahead>,
    tasks: Vec<(u64, Vec<Access>)>,
    seed: u64,
) -> Setup {
    let mut cfg = CoreConfig::default();
    cfg.machine.memory = ByteSize::mib(64);
    cfg.machine.cpus = m.cpus;
    // `limit_pages` is the room for folios; eight pages of hot page cache on top keep the
    // classic LRU's reclaim aging its active list, as in any group with file pages, so that
    // these tiny groups do not thrash into the OOM killer the way an anonymous-only one can.
    cfg.memcg.limit = Some(ByteSize((m.limit_pages + TEST_PAGE_CACHE_PAGES) * 4096));
    cfg.memcg.page_cache = ByteSize(TEST_PAGE_CACHE_PAGES * 4096);
    cfg.memcg.version = m.memcg_version;
    cfg.swap.page_cluster = m.page_cluster;
    cfg.block.plugging = m.plugging;
    cfg.lru = m.lru;
    for i in 0..devices.len() {
        cfg.devices.push(SwapDeviceSpec {
            name: format!("swap{i}"),
            size: ByteSize(m.swap_pages * 4096),
            priority: None,
            backing: None,
        });
    }
    Setup {
        config: cfg.validate().expect("test config is valid"),
        seed,
        devices,
        policies: Policies::default().with_readahead(readahead),
        tasks: tasks
            .into_iter()
            .enumerate()
            .map(|(i, (pages, acc))| {
                TaskSpec::new(
                    format!("t{i}"),
                    vec![RegionSpec::new(VirtPage(0), pages)],
                    Box::new(acc.into_iter()),
                )
            })
            .collect(),
        timeline: Vec::new(),
    }
}

/// Runs to the end, checking every invariant after every event.
pub(crate) fn run_checked(setup: Setup) -> SimReport {
    let mut sim = Simulation::new(setup).expect("setup is valid");
    sim.check_invariants();
    while sim.step().expect("no trace errors in tests") {
        sim.check_invariants();
    }
    sim.into_report()
}

/// The cases a property test runs: `default`, or `PROPTEST_CASES` when it is set, so that
/// a long soak (`PROPTEST_CASES=20000 cargo test --release -p swapsim-core --test it`)
/// raises every property test here, whose own counts keep the default run short.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}
