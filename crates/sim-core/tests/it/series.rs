//! The time series (`[report] sample_every`): sampling changes nothing else in the report,
//! its samples sit on exact boundaries, and its per-interval counts add up to the totals.

use crate::queue::{job, knobs, queue_setup};
use crate::support::*;
use proptest::prelude::*;
use swapsim_core::config::LruModel;
use swapsim_core::*;

/// Two tasks that swap on a 2-CPU machine, optionally sampled every `every`.
fn two_tasks(seed: u64, every: Option<SimDuration>) -> Setup {
    let m = Machine {
        limit_pages: 48,
        swap_pages: 512,
        cpus: 2,
        page_cluster: 2,
        plugging: true,
        lru: LruModel::Classic,
        memcg_version: 1,
    };
    let mk =
        |k: u64| -> Vec<(u64, bool)> { (0..900u64).map(|i| ((i * 37 + k * 11) % 140, i % 5 == 0)).collect() };
    let tasks = vec![(140, first_touch_writes(&mk(1))), (140, first_touch_writes(&mk(2)))];
    let dev = TestDevice { ns: 20_000, synchronous: false, depth: 2 };
    sampled(setup(&m, vec![Box::new(dev)], Box::new(AlignedWindow), tasks, seed), every)
}

/// `s` with its sampling interval set.
fn sampled(mut s: Setup, every: Option<SimDuration>) -> Setup {
    let mut config = s.config.get().clone();
    config.report.sample_every = every;
    s.config = config.validate().expect("test config is valid");
    s
}

/// The report as text without its series.
fn without_series(r: &SimReport) -> String {
    let mut r = r.clone();
    r.series = None;
    format!("{r:?}")
}

/// Checks what every series must satisfy against its run's report; returns the error.
fn check_series(r: &SimReport, every: SimDuration) -> Result<(), String> {
    let series = r.series.as_ref().ok_or("a sampled run has a series")?;
    if series.truncated {
        return Err("a short run is never cut".into());
    }
    let end_ns = (r.sim_time_s * 1e9).round() as u64;
    let n = series.samples.len();
    for (k, s) in series.samples.iter().enumerate() {
        // Every sample but the last sits on a boundary; the last at the run's end.
        let want = if k + 1 < n { (k as u64 + 1) * every.0 } else { end_ns };
        if s.t_ns.abs_diff(want) > 1 {
            return Err(format!("sample {k} at {} ns, expected {want}", s.t_ns));
        }
        let start = if k == 0 { 0 } else { series.samples[k - 1].t_ns };
        if s.interval_ns != s.t_ns - start || s.interval_ns == 0 || s.interval_ns > every.0 {
            return Err(format!("sample {k}: interval {} from {start} to {}", s.interval_ns, s.t_ns));
        }
        if s.tasks.len() != series.task_names.len() {
            return Err(format!("sample {k} has {} tasks", s.tasks.len()));
        }
    }
    let expected_n = end_ns.div_ceil(every.0).max(1) as usize;
    if n.abs_diff(expected_n) > 1 {
        return Err(format!("{n} samples for {end_ns} ns every {} ns", every.0));
    }
    if series.vmstat_total() != r.vmstat {
        return Err(format!("counts add up to {:?}, the report says {:?}", series.vmstat_total(), r.vmstat));
    }
    let events: u64 = series.samples.iter().map(|s| s.events).sum();
    let accesses: u64 = series.samples.iter().map(|s| s.accesses).sum();
    if (events, accesses) != (r.events, r.accesses) {
        return Err(format!(
            "events {events} and accesses {accesses} against {} and {}",
            r.events, r.accesses
        ));
    }
    let stall_s = series.samples.iter().map(|s| s.stall_ns).sum::<u64>() as f64 / 1e9;
    let io_wait_s: f64 = r.tasks.iter().map(|t| t.io_wait_s).sum();
    if stall_s + 1e-9 < io_wait_s {
        return Err(format!("stall {stall_s} s is below the tasks' I/O wait {io_wait_s} s"));
    }
    let last = series.samples.last().expect("at least one sample");
    if (last.memcg_usage_pages, last.swap_slots_used)
        != (r.at_end.memcg_usage_pages, r.at_end.swap_slots_used)
    {
        return Err(format!("last sample {last:?} against the end's gauges {:?}", r.at_end));
    }
    Ok(())
}

#[test]
fn sampling_changes_nothing_and_adds_up() {
    let plain = run(two_tasks(7, None)).expect("runs");
    assert!(plain.series.is_none());
    assert!(plain.vmstat.pswpin > 100, "the run swaps: {:?}", plain.vmstat);
    for every_ns in [1_000, 50_000, 333_333, 10_000_000_000] {
        let every = SimDuration(every_ns);
        let r = run(two_tasks(7, Some(every))).expect("runs");
        assert_eq!(without_series(&r), without_series(&plain), "sampling every {every_ns} ns");
        check_series(&r, every).unwrap_or_else(|e| panic!("every {every_ns} ns: {e}"));
    }
}

#[test]
fn boundaries_between_two_events_repeat_the_state() {
    // A 20 µs device read leaves a task asleep across many 1 µs boundaries: one sample
    // each, the gauges repeated, the task blocked, and its stall the whole interval.
    let r = run(two_tasks(7, Some(SimDuration(1_000)))).expect("runs");
    let series = r.series.expect("sampled");
    // (A task's sleep starts where its fault's CPU work ended, which may be after the
    // boundaries the engine samples it blocked at: those count no stall.)
    let asleep = |s: &Sample| {
        s.events == 0 && s.accesses == 0 && s.tasks.iter().all(|t| t.state == TaskPhase::Blocked)
    };
    let w = series
        .samples
        .windows(3)
        .find(|w| w.iter().all(asleep) && w[1].stall_ns == 2 * 1_000)
        .expect("some 3 µs pass with both tasks asleep and nothing happening");
    assert_eq!((w[0].rss_pages, w[0].swap_slots_used), (w[2].rss_pages, w[2].swap_slots_used));
    assert_eq!(w[0].vmstat, w[2].vmstat, "nothing counted: {:?}", w[1]);
}

#[test]
fn a_stepped_run_samples_as_a_whole_run_does() {
    let every = Some(SimDuration(20_000));
    let stepped = run_checked(two_tasks(3, every));
    let whole = run(two_tasks(3, every)).expect("runs");
    assert_eq!(format!("{stepped:?}"), format!("{whole:?}"));
}

#[test]
fn a_zero_interval_is_refused() {
    let mut config = CoreConfig::default();
    config.report.sample_every = Some(SimDuration(0));
    let err = config.validate().expect_err("0 is refused").to_string();
    assert!(err.contains("report.sample_every"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::support::cases(16), ..ProptestConfig::default() })]

    #[test]
    fn a_sampled_queue_reports_what_an_unsampled_one_does(
        k in knobs(),
        jobs in prop::collection::vec(job(), 1..5),
        seed in 0u64..1000,
        every_us in 1u64..3000,
    ) {
        let every = SimDuration(every_us * 1000);
        let plain = run(queue_setup(&k, &jobs, seed)).expect("runs");
        let r = run(sampled(queue_setup(&k, &jobs, seed), Some(every))).expect("runs");
        prop_assert_eq!(without_series(&r), without_series(&plain));
        if let Err(e) = check_series(&r, every) {
            return Err(TestCaseError::fail(e));
        }
    }
}
