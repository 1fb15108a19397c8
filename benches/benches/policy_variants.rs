//! One bundled scenario under two readahead policies, run through the library API.
//!
//! `scenarios/zipf-memcg.toml` is loaded as `swapsim run` loads it and shrunk with the
//! same `--set` edits a user would type (a 16 MiB memory cgroup over a 48 MiB region:
//! the fill and three zipf passes make 49,152 accesses), then run once with
//! `swap.readahead=cluster` and once with `swap.readahead=fixed`. This times the whole
//! path a command-line run takes, scenario validation and component building included,
//! so a regression anywhere between the scenario file and the report shows here.
//!
//! Each variant's result is checked once outside the timed loop: the run completed, pages
//! were swapped out and back in, and the policy that ran is the one asked for.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use swapsim::{Prepared, Scenario};
use swapsim_core::Outcome;

/// The bundled scenario, shrunk so that one run takes milliseconds.
fn scenario(readahead: &str) -> Prepared {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/zipf-memcg.toml");
    Scenario::load(path)
        .and_then(|s| s.set("memcg.limit", "16MiB"))
        .and_then(|s| s.set("workload.generator.region", "48MiB"))
        .and_then(|s| s.set("swap.readahead", readahead))
        .and_then(|s| s.prepare())
        .expect("the bundled scenario and the edits are valid")
}

fn bench_policy_variants(c: &mut Criterion) {
    let mut group = c.benchmark_group("policy_variants");
    group.sample_size(10);
    for readahead in ["cluster", "fixed"] {
        let prepared = scenario(readahead);
        let n_accesses = prepared.generator().expect("a generated workload").total_accesses();
        group.throughput(Throughput::Elements(n_accesses));
        let id = BenchmarkId::new("zipf-memcg", format!("readahead={readahead},memcg=16MiB,region=48MiB"));
        group.bench_with_input(id, &prepared, |b, prepared| {
            b.iter(|| black_box(prepared.run().expect("run succeeds")))
        });
        let report = prepared.run().expect("run succeeds");
        assert_eq!(report.outcome, Outcome::Completed, "{readahead}");
        assert_eq!(report.readahead, readahead, "the policy that ran");
        assert!(report.vmstat.pswpout > 0, "{readahead}: nothing was swapped out");
        assert!(report.vmstat.pswpin > 0, "{readahead}: nothing was swapped in");
    }
    group.finish();
}

criterion_group!(benches, bench_policy_variants);
criterion_main!(benches);
