//! zswap through scenarios, with the protection policies of the policies crate: what the
//! two protections change in the pool-limit worker and the memory-pressure shrinker, and
//! that a run is a pure function of the scenario and its seed.

use std::sync::{Arc, Mutex};
use swapsim::Scenario;
use swapsim_core::{SimReport, ZswapLruView, ZswapProtection, ZswapSwapin, ZswapVisit};
use swapsim_policies::zswap::SecondChanceProtection;

/// A small machine swapping through zswap: a hot/cold workload over 24 MiB under an
/// 8 MiB limit, pages that compress about 2:1, and a pool limit of 1 % of 64 MiB
/// (164 pages), so that the pool fills and the worker writes back.
const POOL_LIMIT: &str = r#"
    seed = 3
    [machine]
    memory = "64MiB"
    cpus = 1
    [memcg]
    limit = "8MiB"
    version = 1
    [[swap.devices]]
    name = "vda"
    size = "256MiB"
    model = { preset = "nvme" }
    [zswap]
    enabled = true
    max_pool_percent = 1
    [workload]
    contents = "half"
    [workload.generator]
    pattern = "hotcold"
    region = "24MiB"
    passes = 2
    hot_fraction = 0.2
    hot_access_fraction = 0.8
"#;

/// Memory pressure on cgroup v2 with the shrinker on and the pool far from its limit.
const PRESSURE: &[&str] = &[
    "memcg.version=2",
    "zswap.max_pool_percent=50",
    "zswap.shrinker_enabled=true",
    "memcg.limit=\"12MiB\"",
    "workload.generator.passes=3",
];

fn run(text: &str, sets: &[&str]) -> SimReport {
    Scenario::from_toml(text)
        .and_then(|s| s.edits(sets))
        .and_then(|s| s.prepare())
        .and_then(|p| p.run())
        .unwrap()
}

#[test]
fn second_chance_rotates_what_decay_writes_back() {
    let decay = run(POOL_LIMIT, &["zswap.protection=\"decay\""]);
    let second = run(POOL_LIMIT, &["zswap.protection=\"second-chance\""]);
    for r in [&decay, &second] {
        let z = r.zswap.as_ref().unwrap();
        assert!(z.pool_limit_hit > 0 && z.shrink_worker_runs > 0, "{z:?}");
        assert!(r.vmstat.zswpwb > 0 && r.vmstat.pswpout >= r.vmstat.zswpwb, "{:?}", r.vmstat);
        assert!(z.pool_total_size <= (164 + 8) * 4096, "{z:?}");
    }
    let (d, s) = (decay.zswap.as_ref().unwrap(), second.zswap.as_ref().unwrap());
    assert_eq!((d.protection.as_str(), s.protection.as_str()), ("decay", "second-chance"));
    // Decay writes back every entry it visits; second chance first rotates each referenced
    // entry once, and a rotation is a failure that ends a worker run early.
    assert_eq!(d.shrinker_scanned, d.written_back_pages + d.reject_reclaim_fail, "{d:?}");
    assert!(s.shrinker_scanned > s.written_back_pages + s.reject_reclaim_fail, "{s:?}");
}

#[test]
fn the_shrinker_writes_back_on_cgroup_v2_and_never_on_v1() {
    let v2 = run(POOL_LIMIT, PRESSURE);
    let z = v2.zswap.as_ref().unwrap();
    assert_eq!(z.pool_limit_hit, 0, "{z:?}");
    assert!(v2.vmstat.zswpwb > 0, "{:?}", v2.vmstat);
    let mut v1 = PRESSURE.to_vec();
    v1[0] = "memcg.version=1";
    let v1 = run(POOL_LIMIT, &v1);
    let z = v1.zswap.as_ref().unwrap();
    assert_eq!(z.pool_limit_hit, 0, "{z:?}");
    assert!(v1.vmstat.zswpout > 0, "{:?}", v1.vmstat);
    assert_eq!((v1.vmstat.zswpwb, z.shrink_worker_runs), (0, 0), "{:?}", v1.vmstat);
}

/// What the shrinker asked of the second-chance policy: per count, the disk swap-ins
/// pending before and after it, the LRU it saw, and what it returned.
type Counts = Arc<Mutex<Vec<(u64, u64, ZswapLruView, u64)>>>;

/// Second chance, recording each count and the swap-ins it heard of, from the disk and
/// not.
#[derive(Clone, Debug)]
struct Recording {
    inner: SecondChanceProtection,
    counts: Counts,
    swapins: Arc<Mutex<[u64; 2]>>,
}

impl ZswapProtection for Recording {
    fn name(&self) -> &'static str {
        "recording"
    }
    fn stored(&mut self, lru_size: u64) -> bool {
        self.inner.stored(lru_size)
    }
    fn swapin(&mut self, swapin: ZswapSwapin) {
        self.swapins.lock().unwrap()[usize::from(swapin.from_disk)] += 1;
        self.inner.swapin(swapin);
    }
    fn count(&mut self, lru: &ZswapLruView) -> u64 {
        let before = self.inner.disk_swapins();
        let n = self.inner.count(lru);
        self.counts.lock().unwrap().push((before, self.inner.disk_swapins(), *lru, n));
        n
    }
    fn visit(&mut self, referenced: &mut bool) -> ZswapVisit {
        self.inner.visit(referenced)
    }
}

#[test]
fn the_shrinkers_count_holds_back_the_disk_swapins_since_the_last_one() {
    let prepared =
        Scenario::from_toml(POOL_LIMIT).and_then(|s| s.edits(PRESSURE)).and_then(|s| s.prepare()).unwrap();
    let (mut setup, _) = prepared.setup().unwrap();
    let counts = Counts::default();
    let swapins = Arc::<Mutex<[u64; 2]>>::default();
    setup.policies.zswap = Box::new(Recording {
        inner: SecondChanceProtection::default(),
        counts: counts.clone(),
        swapins: swapins.clone(),
    });
    let r = swapsim_core::run(setup).unwrap();
    let counts = counts.lock().unwrap();
    let v = &r.vmstat;
    assert!(v.pswpin > 0 && v.zswpin > 0 && v.zswpwb > 0, "{v:?}");
    // The policy hears of every page read, and which of them came from the disk.
    assert_eq!(*swapins.lock().unwrap(), [v.zswpin + v.swpin_zero, v.pswpin]);
    // Pages written back come in again from the disk, and the counts after that hold
    // them back: each count takes up to the LRU's size of the pending swap-ins.
    let held: Vec<_> = counts.iter().filter(|c| c.0 > 0).collect();
    assert!(!held.is_empty(), "no count saw a disk swap-in in {} counts", counts.len());
    for &&(before, after, lru, n) in &held {
        let used = before.min(lru.lru_size);
        assert_eq!(after, before - used);
        assert_eq!(n, lru.scale(lru.lru_size - used));
        assert!(n < lru.scale(lru.lru_size) || lru.scale(lru.lru_size) == 0);
    }
    let consumed: u64 = counts.iter().map(|c| c.0 - c.1).sum();
    assert!(consumed <= v.pswpin, "{consumed} > {}", v.pswpin);
}

#[test]
fn a_zswap_run_is_a_function_of_scenario_and_seed() {
    for sets in [&["zswap.protection=\"decay\""][..], PRESSURE] {
        let a = serde_json::to_string(&run(POOL_LIMIT, sets)).unwrap();
        let b = serde_json::to_string(&run(POOL_LIMIT, sets)).unwrap();
        assert_eq!(a, b, "{sets:?}");
        assert!(a.contains("\"zswap\":{"), "the report has the zswap section");
    }
    let seed_4 = serde_json::to_string(&run(POOL_LIMIT, &["seed=4"])).unwrap();
    assert_ne!(seed_4, serde_json::to_string(&run(POOL_LIMIT, &[])).unwrap());
}
