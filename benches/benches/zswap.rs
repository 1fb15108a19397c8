//! Whole runs through zswap: accesses replayed per second of host time when reclaim stores
//! pages in the compressed pool and faults load them back, and when the pool is too small
//! and its oldest entries are written back to the swap device.
//!
//! Every case is the random fault-heavy run of `end_to_end` (a 96 MiB region under a
//! 32 MiB memory cgroup limit, 40 passes after the fill, 1,007,616 accesses) on a 1 GiB
//! machine, with zswap on and pages that compress about 2:1 (`contents = "half"`):
//!
//! * `store_load`: the pool may take 20 % of RAM (the default), more than the workload
//!   ever swaps, so every page reclaim writes out is stored and every swap fault is a
//!   zswap load: compression, zsmalloc's bookkeeping and the exclusive load, no disk.
//!   cgroup v1, where the pool is not charged to the group.
//! * `pool_limit`: the pool may take 1 % of RAM (2,621 pages). It fills, stores are
//!   refused, and the pool-limit worker writes the oldest entries back to the disk, with
//!   the second-chance protection; cgroup v1.
//! * `shrinker`: cgroup v2, where the pool is charged to the group, with the
//!   memory-pressure shrinker on: reclaim's `shrink_slab` writes entries back.
//!
//! Each case is checked once outside the timed loop (outcome, every access replayed, and
//! that the path it names really ran: stores and loads, and writeback where expected), so
//! a broken path cannot post a fast time.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::{run, ByteSize, Outcome, SimReport};

/// One benchmarked run: the knobs it sets on top of the shared fault-heavy scenario.
#[derive(Clone, Debug)]
struct Case {
    name: &'static str,
    sets: &'static [(&'static str, &'static str)],
}

const CASES: [Case; 3] = [
    Case { name: "store_load", sets: &[("memcg.version", "1")] },
    Case { name: "pool_limit", sets: &[("memcg.version", "1"), ("zswap.max_pool_percent", "1")] },
    Case { name: "shrinker", sets: &[("memcg.version", "2"), ("zswap.shrinker_enabled", "true")] },
];

fn generator() -> GeneratorConfig {
    let mut gen = GeneratorConfig::new(Pattern::Rand, ByteSize::mib(96));
    gen.passes = 40;
    gen.validate().expect("benchmark workload is valid");
    gen
}

impl Case {
    fn run(&self) -> SimReport {
        let mut scenario = swapsim_benches::scenario(&generator(), Some(ByteSize::mib(32)), 3)
            .set("machine.memory", "\"1GiB\"")
            .and_then(|s| s.set("zswap.enabled", "true"))
            .and_then(|s| s.set("workload.contents", "\"half\""))
            .expect("the zswap benchmark scenario is valid");
        for (key, value) in self.sets {
            scenario = scenario.set(key, value).expect("the zswap benchmark knobs are valid");
        }
        let (setup, _) = scenario.prepare().and_then(|p| p.setup()).expect("the virtio preset builds");
        run(setup).expect("run succeeds")
    }

    /// Runs the case once more, untimed, and checks that it did what its name says.
    fn check(&self) {
        let r = self.run();
        let (v, z) = (&r.vmstat, r.zswap.as_ref().expect("zswap is on"));
        assert_eq!(r.outcome, Outcome::Completed, "{}", self.name);
        assert_eq!(r.accesses, generator().total_accesses(), "{}: accesses replayed", self.name);
        assert!(v.zswpout > 0 && v.zswpin > 0, "{}: no zswap store or load: {v:?}", self.name);
        match self.name {
            "store_load" => {
                assert_eq!(
                    (v.zswpwb, v.pswpout, v.pswpin),
                    (0, 0, 0),
                    "{}: the disk was used: {v:?}",
                    self.name
                )
            }
            "pool_limit" => {
                assert!(z.pool_limit_hit > 0 && z.shrink_worker_runs > 0, "{}: {z:?}", self.name);
                assert!(v.zswpwb > 0 && v.pswpout >= v.zswpwb, "{}: no writeback: {v:?}", self.name);
            }
            _ => {
                assert_eq!(z.pool_limit_hit, 0, "{}: {z:?}", self.name);
                assert!(v.zswpwb > 0, "{}: no writeback: {v:?}", self.name);
            }
        }
    }
}

fn bench_zswap(c: &mut Criterion) {
    let mut group = c.benchmark_group("zswap");
    group.sample_size(10);
    group.throughput(Throughput::Elements(generator().total_accesses()));
    for case in &CASES {
        let id = "region=96MiB,memcg=32MiB,pattern=rand,contents=half";
        group.bench_with_input(BenchmarkId::new(case.name, id), case, |b, case| {
            b.iter(|| black_box(case.run()))
        });
        case.check();
    }
    group.finish();
}

criterion_group!(benches, bench_zswap);
criterion_main!(benches);
