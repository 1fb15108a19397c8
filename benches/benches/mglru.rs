//! Reclaim cost of the two kernel LRUs on one fault-heavy workload: accesses replayed per
//! second of host time with `lru = "classic"` (the active and inactive lists) and with
//! `lru = "mglru"` (the multi-generational LRU with its default knobs, aging by
//! page-table walk included).
//!
//! Both cases are the same scenario, built as `swapsim run` builds it and differing only
//! in `lru`: one task works on a 96 MiB region under a 32 MiB memory cgroup limit on the
//! `nvme` device preset with the kernel's cluster readahead. After the fill, 12 passes of
//! a hot/cold pattern (10 % of the pages take 90 % of the accesses, 20 % writes) make
//! 319,488 accesses; the hot set fits in the limit and the cold pages do not, so reclaim
//! runs throughout and a share of the passes' accesses fault (about one in twelve; the
//! shares each LRU produced are recorded in benches/README.md).
//!
//! Each case is checked once outside the timed loop (outcome, every access replayed,
//! pages swapped out and in, a fault share between 5 % and 30 %, and for MGLRU that aging
//! ran and the report has its generations), so a broken path cannot post a fast time.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::{run, ByteSize, Outcome, SimReport};

/// The two LRU models compared, by their scenario names.
const LRUS: [&str; 2] = ["classic", "mglru"];

fn generator() -> GeneratorConfig {
    let mut gen = GeneratorConfig::new(Pattern::Hotcold, ByteSize::mib(96));
    gen.passes = 12;
    gen.validate().expect("benchmark workload is valid");
    gen
}

/// One run of the shared scenario under `lru`.
fn run_with(lru: &str) -> SimReport {
    let scenario = swapsim_benches::scenario(&generator(), Some(ByteSize::mib(32)), 3)
        .set("swap.devices.0.model.preset", "nvme")
        .and_then(|s| s.set("lru", &format!("\"{lru}\"")))
        .expect("the mglru benchmark scenario is valid");
    let (setup, _) = scenario.prepare().and_then(|p| p.setup()).expect("the nvme preset builds");
    run(setup).expect("run succeeds")
}

/// Runs the case once more, untimed, checks that it swapped as intended and returns the
/// share of the passes' accesses that faulted (the fill excluded).
fn check(lru: &str) -> f64 {
    let r = run_with(lru);
    let v = &r.vmstat;
    let gen = generator();
    assert_eq!(r.outcome, Outcome::Completed, "{lru}");
    assert_eq!(r.accesses, gen.total_accesses(), "{lru}: accesses replayed");
    assert!(v.pswpout > 0 && v.pswpin > 0, "{lru}: no swap traffic: {v:?}");
    let pass_accesses = gen.total_accesses() - gen.region.pages();
    let pass_faults = v.pgfault - gen.region.pages();
    let share = pass_faults as f64 / pass_accesses as f64;
    assert!((0.05..=0.30).contains(&share), "{lru}: {:.1} % of the passes' accesses faulted", share * 100.0);
    match (lru, &r.lru_gen) {
        ("mglru", Some(g)) => {
            assert!(g.aging.runs > 0 && g.aging.ptes_walked > 0, "mglru: no aging: {:?}", g.aging)
        }
        ("mglru", None) => panic!("mglru: no lru_gen report"),
        (_, g) => assert!(g.is_none(), "{lru}: an lru_gen report"),
    }
    share
}

fn bench_mglru(c: &mut Criterion) {
    let mut group = c.benchmark_group("mglru");
    group.sample_size(10);
    group.throughput(Throughput::Elements(generator().total_accesses()));
    for lru in LRUS {
        let id = "region=96MiB,memcg=32MiB,pattern=hotcold,nvme";
        group.bench_with_input(BenchmarkId::new(lru, id), lru, |b, lru| b.iter(|| black_box(run_with(lru))));
        let share = check(lru);
        println!("mglru/{lru}: {:.1} % of the passes' accesses faulted", share * 100.0);
    }
    group.finish();
}

criterion_group!(benches, bench_mglru);
criterion_main!(benches);
