//! A queue of traces against the same traces replayed one at a time: host time per access.
//!
//! * `queue`: `scenarios/queue.toml` as `swapsim run` loads it: eight bundled traces
//!   (`traces/queue/`, 100,352 accesses), each a process of its own, three at a time in a
//!   24 MiB memory cgroup.
//! * `one_by_one`: the same eight traces, each replayed alone as a single-trace run
//!   (`--trace`) in an 8 MiB memory cgroup, a third of the queue's, so that each process
//!   meets about the pressure it meets in the queue; one iteration replays all eight.
//!
//! Both time the whole path of a command-line run (scenario validation, reading each trace
//! twice: its first pass and its replay), so the ratio of their accesses per second says
//! what replaying traces as a queue costs per access over replaying them alone. Each
//! variant's result is checked once outside the timed loop: every job completed, and
//! pages were swapped out and back in.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::PathBuf;
use swapsim::{Prepared, Scenario, TraceSource};
use swapsim_core::Outcome;

const QUEUE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/queue.toml");

fn queue() -> Prepared {
    Scenario::load(QUEUE).and_then(|s| s.prepare()).expect("the bundled queue is valid")
}

/// Each bundled trace as a run of its own, in a third of the queue's memory cgroup.
fn one_by_one() -> Vec<Prepared> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/queue"));
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the bundled queue's traces")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".trace.zst"))
        .collect();
    traces.sort();
    traces
        .into_iter()
        .map(|trace| {
            Scenario::load(QUEUE)
                .and_then(|s| s.set("memcg.limit", "8MiB"))
                .map(|s| s.with_trace(TraceSource::File(trace)))
                .and_then(|s| s.prepare())
                .expect("a bundled trace replays alone")
        })
        .collect()
}

fn bench_queue(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue");
    group.sample_size(10);

    let prepared = queue();
    let report = prepared.run().expect("the queue runs");
    assert_eq!(report.outcome, Outcome::Completed);
    let jobs = report.jobs.as_ref().expect("a queue reports its jobs");
    assert_eq!((jobs.jobs, jobs.exited), (8, 8), "every job exits");
    assert!(report.vmstat.pswpin > 0 && report.vmstat.pswpout > 0, "{:?}", report.vmstat);
    let accesses: u64 = report.tasks.iter().map(|t| t.accesses).sum();
    group.throughput(Throughput::Elements(accesses));
    group.bench_with_input(BenchmarkId::new("queue", "8 traces,-j3,memcg=24MiB"), &prepared, |b, p| {
        b.iter(|| black_box(p.run().expect("the queue runs")))
    });

    let alone = one_by_one();
    let reports: Vec<_> = alone.iter().map(|p| p.run().expect("a trace runs alone")).collect();
    assert!(reports.iter().all(|r| r.outcome == Outcome::Completed));
    assert!(reports.iter().any(|r| r.vmstat.pswpin > 0), "alone, the traces swap too");
    let alone_accesses: u64 = reports.iter().map(|r| r.tasks.iter().map(|t| t.accesses).sum::<u64>()).sum();
    assert_eq!(alone_accesses, accesses, "the same accesses either way");
    group.throughput(Throughput::Elements(alone_accesses));
    group.bench_with_input(BenchmarkId::new("one_by_one", "8 traces,memcg=8MiB each"), &alone, |b, runs| {
        b.iter(|| {
            for p in runs {
                black_box(p.run().expect("a trace runs alone"));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_queue);
criterion_main!(benches);
