//! The same setup and seed give identical reports; multi-task runs too.

use crate::support::*;
use swapsim_core::config::LruModel;
use swapsim_core::*;

fn report(seed: u64) -> SimReport {
    report_with(seed, LruModel::Classic)
}

fn report_with(seed: u64, lru: LruModel) -> SimReport {
    let m = Machine {
        limit_pages: 48,
        swap_pages: 512,
        cpus: 2,
        page_cluster: 2,
        plugging: true,
        lru,
        memcg_version: 1,
    };
    let mk =
        |k: u64| -> Vec<(u64, bool)> { (0..900u64).map(|i| ((i * 37 + k * 11) % 140, i % 5 == 0)).collect() };
    let tasks = vec![(140, first_touch_writes(&mk(1))), (140, first_touch_writes(&mk(2)))];
    let dev = TestDevice { ns: 20_000, synchronous: false, depth: 2 };
    run(setup(&m, vec![Box::new(dev)], Box::new(AlignedWindow), tasks, seed)).expect("runs")
}

/// The whole report as text, every figure in it.
fn text(r: &SimReport) -> String {
    format!("{r:?}")
}

#[test]
fn same_seed_same_report() {
    let a = report(7);
    assert_eq!(text(&a), text(&report(7)));
    // The run exercises what could differ: both tasks swap out and back in.
    assert!(a.vmstat.pswpout > 100 && a.vmstat.pswpin > 100, "{:?}", a.vmstat);
    assert_eq!(a.tasks.iter().map(|t| t.accesses).collect::<Vec<_>>(), [900, 900]);
}

#[test]
fn same_seed_same_report_under_mglru() {
    let a = report_with(7, LruModel::Mglru);
    assert_eq!(text(&a), text(&report_with(7, LruModel::Mglru)));
    let generations = a.lru_gen.as_ref().expect("MGLRU reports its generations");
    assert!(!generations.generations.is_empty(), "{generations:?}");
    assert!(a.vmstat.pswpin > 0, "{:?}", a.vmstat);
    assert_ne!(text(&a), text(&report_with(7, LruModel::Classic)), "the LRU model matters");
}
