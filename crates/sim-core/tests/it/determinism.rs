//! The same setup and seed give identical reports; multi-task runs too.

use crate::support::*;
use swapsim_core::config::LruModel;
use swapsim_core::*;

fn report(seed: u64) -> String {
    report_with(seed, LruModel::Classic)
}

fn report_with(seed: u64, lru: LruModel) -> String {
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
    let r = run(setup(&m, vec![Box::new(dev)], Box::new(AlignedWindow), tasks, seed)).expect("runs");
    format!("{r:?}")
}

#[test]
fn same_seed_same_report() {
    let a = report(7);
    let b = report(7);
    assert_eq!(a, b);
    assert!(a.contains("pswpin"), "report is non-trivial");
}

#[test]
fn same_seed_same_report_under_mglru() {
    let a = report_with(7, LruModel::Mglru);
    assert_eq!(a, report_with(7, LruModel::Mglru));
    assert!(a.contains("lru_gen: Some"), "the generation report is there");
    assert_ne!(a, report_with(7, LruModel::Classic), "the LRU model matters");
}
