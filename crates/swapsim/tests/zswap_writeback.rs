//! zswap's writeback triggers through whole runs: whatever the trigger, the worker writes
//! back no more than zswap stored, every writeback it reports is one the trigger heard of,
//! the engine's invariants hold after every event, and a run is a function of its seed.

use proptest::prelude::*;
use std::sync::{Arc, Mutex};
use swapsim::Scenario;
use swapsim_core::{
    MemcgVisit, SimDuration, SimReport, SimTime, WritebackEvent, ZswapPoolView, ZswapWriteback,
};
use swapsim_policies::{PreFixWriteback, ProactiveWriteback, ZswapWritebackConfig};

/// A small machine whose zswap pool fills: a hot/cold workload over 6 MiB under a 2 MiB
/// limit, pages compressing about 2:1, a pool limit of `pool_percent` of 16 MiB.
fn scenario(seed: u64, pool_percent: u32, accept_percent: u32) -> Scenario {
    let text = format!(
        r#"
        seed = {seed}
        [machine]
        memory = "16MiB"
        cpus = 2
        [memcg]
        limit = "2MiB"
        version = 1
        [[swap.devices]]
        name = "vda"
        size = "32MiB"
        model = {{ preset = "nvme" }}
        [zswap]
        enabled = true
        max_pool_percent = {pool_percent}
        accept_threshold_percent = {accept_percent}
        [workload]
        contents = "half"
        [workload.generator]
        pattern = "hotcold"
        region = "6MiB"
        passes = 2
        hot_fraction = 0.2
        hot_access_fraction = 0.8
        "#
    );
    Scenario::from_toml(&text).expect("the scenario is valid")
}

/// What a trigger heard, counted.
#[derive(Debug, Default)]
struct Heard {
    written: u64,
    failed: u64,
    store_refused: u64,
    disk_swapins: u64,
}

/// A trigger that counts what it hears and decides as `inner` does.
#[derive(Clone, Debug)]
struct Counting {
    inner: Box<dyn ZswapWriteback>,
    heard: Arc<Mutex<Heard>>,
}

impl ZswapWriteback for Counting {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn hysteresis(&self) -> bool {
        self.inner.hysteresis()
    }
    fn shrink_start_pages(&self, pool: &ZswapPoolView) -> Option<u64> {
        self.inner.shrink_start_pages(pool)
    }
    fn empty_memcgs(&self) -> u32 {
        self.inner.empty_memcgs()
    }
    fn restarting_offline_memcg(&self) -> Option<u32> {
        self.inner.restarting_offline_memcg()
    }
    fn counts_failure(&mut self, visit: MemcgVisit) -> bool {
        let mut heard = self.heard.lock().expect("not poisoned");
        match visit {
            MemcgVisit::Written => heard.written += 1,
            MemcgVisit::Failed => heard.failed += 1,
            _ => {}
        }
        self.inner.counts_failure(visit)
    }
    fn observe(&mut self, event: WritebackEvent) {
        {
            let mut heard = self.heard.lock().expect("not poisoned");
            match event {
                WritebackEvent::StoreRefused { .. } => heard.store_refused += 1,
                WritebackEvent::DiskSwapin { .. } => heard.disk_swapins += 1,
                _ => {}
            }
        }
        self.inner.observe(event);
    }
    fn writeback_delay(&mut self, now: SimTime) -> SimDuration {
        self.inner.writeback_delay(now)
    }
}

/// Runs `scenario` under `trigger`, counting what it hears and checking the engine's
/// invariants after every event.
fn run_checked(scenario: &Scenario, trigger: Box<dyn ZswapWriteback>) -> (SimReport, Heard) {
    let heard = Arc::new(Mutex::new(Heard::default()));
    let (mut setup, _trace) = scenario.prepare().and_then(|p| p.setup()).expect("it builds");
    let counting = Counting { inner: trigger, heard: Arc::clone(&heard) };
    setup.policies = setup.policies.with_zswap_writeback(Box::new(counting));
    let mut sim = swapsim_core::Simulation::new(setup).expect("the setup is valid");
    sim.check_invariants();
    while sim.step().expect("the run does not fail") {
        sim.check_invariants();
    }
    let report = sim.into_report();
    let heard = std::mem::take(&mut *heard.lock().expect("not poisoned"));
    (report, heard)
}

/// A trigger from a choice: the three configurable ones, or a pre-6.12 walk of `empty`
/// cgroups with one offline at `offline`.
fn trigger(choice: usize, empty: u32, offline: Option<u32>) -> Box<dyn ZswapWriteback> {
    match choice {
        0..=2 => ZswapWritebackConfig::ALL[choice].build(),
        3 => Box::new(PreFixWriteback::new(empty, offline)),
        _ => Box::new(ProactiveWriteback::default()),
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(10)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn writeback_never_exceeds_what_was_stored_and_the_counts_agree(
        choice in 0usize..5,
        empty in 0u32..40,
        offline in prop::option::of(0u32..40),
        pool_percent in 2u32..8,
        accept_percent in 0u32..=100,
        seed in 1u64..500,
    ) {
        let s = scenario(seed, pool_percent, accept_percent);
        let (report, heard) = run_checked(&s, trigger(choice, empty, offline));
        let v = &report.vmstat;
        let z = report.zswap.as_ref().expect("zswap is on");
        prop_assert!(v.zswpout > 0, "the run stores in zswap");
        // The worker writes back only entries zswap holds: never more than it stored,
        // and what is left is what was stored less what left by load or writeback.
        prop_assert!(v.zswpwb <= v.zswpout);
        prop_assert!(z.stored_pages + v.zswpin + v.zswpwb <= v.zswpout);
        // Every writeback is one the trigger heard of (the memory-pressure shrinker is
        // off, so the worker is the only writer), and counted once.
        prop_assert_eq!(heard.written, v.zswpwb);
        prop_assert_eq!(z.written_back_pages, v.zswpwb);
        // A trigger hears every disk swap-in; refusals happen only on a pool at its limit.
        prop_assert_eq!(heard.disk_swapins, v.pswpin);
        if z.pool_limit_hit == 0 {
            prop_assert_eq!(heard.store_refused, 0);
        }
        // A pre-6.12 walk that meets an offline cgroup before the group never reaches it.
        if choice == 3 && offline.is_some_and(|o| o < empty) {
            prop_assert_eq!(v.zswpwb, 0);
        }
        // The same scenario, seed and trigger give the same report.
        let (again, _) = run_checked(&s, trigger(choice, empty, offline));
        prop_assert_eq!(format!("{report:?}"), format!("{again:?}"));
    }
}

#[test]
fn the_kernel_writes_back_where_pre_6_12_gives_up_and_proactive_refuses_nothing_below_the_limit() {
    let s = scenario(3, 4, 50);
    let runs: Vec<(SimReport, Heard)> =
        ZswapWritebackConfig::ALL.iter().map(|c| run_checked(&s, c.build())).collect();
    let wb: Vec<u64> = runs.iter().map(|(r, _)| r.vmstat.zswpwb).collect();
    assert!(wb[0] > 0, "the kernel's worker writes back: {wb:?}");
    assert_eq!(wb[1], 0, "pre-6.12 meets the offline cgroup first: {wb:?}");
    assert!(wb[2] > 0, "the series' worker writes back: {wb:?}");
    // The pre-6.12 worker's failures end its runs early and often.
    let runs_of = |i: usize| runs[i].0.zswap.as_ref().expect("zswap").shrink_worker_runs;
    assert!(runs_of(1) > runs_of(0), "{} pre-6.12 runs, {} kernel runs", runs_of(1), runs_of(0));
}
