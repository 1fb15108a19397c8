//! Whole runs of the simulator: accesses replayed per second of host time.
//!
//! * `resident_hit`: one task fills a 64 MiB region with no memory cgroup limit, then
//!   makes random passes over it. After the fill every access hits a resident page, so
//!   this times the engine's inline fast path (page-table lookup, PTE bit update, CPU
//!   time accounting) plus the workload generator.
//! * `fault_heavy`: one task works on a 96 MiB region under a 32 MiB memory cgroup limit,
//!   so most accesses of the passes miss: memcg reclaim, pageout, writeback completions,
//!   swap-ins with readahead and block-layer merging all run. The device is the measured
//!   `virtio` preset and readahead is the kernel's cluster policy.
//!
//! * `fault_heavy_mthp`: the random fault-heavy run with 16 KiB and 64 KiB mTHP always on
//!   and the swap area on zram: large folios are allocated, swapped out whole and
//!   swapped in whole (the kernel's swap-in size policy).
//!
//! Inputs come from fixed seeds. Each benchmark's result is checked once outside the timed
//! loop (access count, outcome, and for `fault_heavy` that pages really were swapped in),
//! so a broken path cannot post a fast time. The access count is taken on the workload
//! side, by counting what the engine pulled from each task's stream: the report's
//! `accesses` counts only accesses that completed without blocking, so it leaves out the
//! swap faults that waited for a read.
//!
//! The ≥10M-access figure for the fault-heavy case is taken once, outside criterion, by
//! `cargo run --release -p swapsim-benches --example one_shot`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::{run, ByteSize, Outcome, SimReport};

/// One benchmarked run.
#[derive(Clone, Debug)]
struct Scenario {
    /// The task's region.
    region: ByteSize,
    /// The memory cgroup limit; `None` is unlimited.
    memcg_limit: Option<ByteSize>,
    /// Pattern of the passes after the fill.
    pattern: Pattern,
    /// Passes after the fill.
    passes: u32,
    /// `vm.page-cluster`.
    page_cluster: u32,
}

impl Scenario {
    fn generator(&self) -> GeneratorConfig {
        let mut gen = GeneratorConfig::new(self.pattern, self.region);
        gen.passes = self.passes;
        gen.validate().expect("benchmark workload is valid");
        gen
    }

    /// Accesses one run replays, fill included.
    fn accesses(&self) -> u64 {
        self.generator().total_accesses()
    }

    fn run(&self) -> SimReport {
        run(swapsim_benches::setup(&self.generator(), self.memcg_limit, self.page_cluster))
            .expect("run succeeds")
    }
}

/// Resident-hit replay: 64 MiB filled, then 610 random passes, 10,010,624 accesses.
fn resident_hit() -> Scenario {
    Scenario {
        region: ByteSize::mib(64),
        memcg_limit: None,
        pattern: Pattern::Rand,
        passes: 610,
        page_cluster: 3,
    }
}

/// Fault-heavy replay: a region three times the memcg limit.
fn fault_heavy(pattern: Pattern, passes: u32) -> Scenario {
    Scenario {
        region: ByteSize::mib(96),
        memcg_limit: Some(ByteSize::mib(32)),
        pattern,
        passes,
        page_cluster: 3,
    }
}

/// Runs the scenario once more, untimed, and checks that it completed after replaying
/// every access of the workload.
fn check_completed(s: &Scenario) -> SimReport {
    let report = s.run();
    assert_eq!(report.outcome, Outcome::Completed, "{s:?}");
    assert_eq!(report.accesses, s.accesses(), "{s:?}: accesses replayed");
    report
}

fn bench_end_to_end(c: &mut Criterion) {
    let mut group = c.benchmark_group("end_to_end");
    group.sample_size(10);

    let s = resident_hit();
    group.throughput(Throughput::Elements(s.accesses()));
    group.bench_with_input(
        BenchmarkId::new("resident_hit", "region=64MiB,memcg=unlimited,pattern=rand"),
        &s,
        |b, s| b.iter(|| black_box(s.run())),
    );
    let report = check_completed(&s);
    assert_eq!(report.accesses, s.accesses(), "resident_hit: every access completes without blocking");
    // Only the fill faults; the passes must all hit.
    assert_eq!(report.vmstat.pgfault, s.region.pages(), "resident_hit: faults beyond the fill");
    assert_eq!(report.vmstat.pswpin, 0, "resident_hit: swapped in");

    // 96 MiB = 24,576 pages; 40 passes plus the fill make 1,007,616 accesses.
    for pattern in [Pattern::Rand, Pattern::Seq] {
        let s = fault_heavy(pattern, 40);
        group.throughput(Throughput::Elements(s.accesses()));
        let id = format!("region=96MiB,memcg=32MiB,pattern={pattern},page_cluster={}", s.page_cluster);
        group.bench_with_input(BenchmarkId::new("fault_heavy", id), &s, |b, s| b.iter(|| black_box(s.run())));
        let report = check_completed(&s);
        assert!(report.vmstat.pswpin > 0, "fault_heavy/{pattern}: nothing was swapped in");
        assert!(report.vmstat.pswpout > 0, "fault_heavy/{pattern}: nothing was swapped out");
    }
    // The same random run with large folios on zram.
    let s = fault_heavy(Pattern::Rand, 40);
    let mthp = |s: &Scenario| {
        let scenario = swapsim_benches::scenario(&s.generator(), s.memcg_limit, s.page_cluster)
            .set("thp.hugepages", "{ \"16kB\" = \"always\", \"64kB\" = \"always\" }")
            .and_then(|sc| sc.set("swap.devices.0.model.preset", "zram"))
            .expect("the mTHP benchmark scenario is valid");
        let (setup, _) = scenario.prepare().and_then(|p| p.setup()).expect("the zram preset builds");
        run(setup).expect("run succeeds")
    };
    group.throughput(Throughput::Elements(s.accesses()));
    let id = "region=96MiB,memcg=32MiB,pattern=rand,mthp=16kB+64kB,zram";
    group
        .bench_with_input(BenchmarkId::new("fault_heavy_mthp", id), &s, |b, s| b.iter(|| black_box(mthp(s))));
    let report = mthp(&s);
    assert_eq!(report.outcome, Outcome::Completed);
    assert!(report.mthp.get("16kB").is_some_and(|m| m.swpin > 0), "fault_heavy_mthp: no large swap-in");
    group.finish();
}

criterion_group!(benches, bench_end_to_end);
criterion_main!(benches);
