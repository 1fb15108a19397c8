//! The resident hit path alone: accesses per second of host time to pages already in memory.
//!
//! `end_to_end`'s `resident_hit` times whole runs, so its figure includes the built-in
//! generator's draws (a ChaCha stream and a uniform draw per access), the first-touch
//! faults of the fill and the report. Here a task first writes every page of its region
//! once, then reads pages picked from a table of random page numbers built before the
//! run (2^20 entries, walked in order and wrapped by a mask: a load per access). Only
//! the reads are timed: the clock starts at the engine's progress call that follows the
//! fill and stops at the last one ([`swapsim_core::run_with_progress`] calls it every
//! [`PROGRESS_ACCESSES`] accesses, from inside the loop that replays resident hits).
//! What is timed is therefore the engine's own per-access work: taking accesses from the
//! task's batch, the page-table lookup, the PTE's accessed and dirty bits, and the CPU
//! time accounting.
//!
//! Two regions: 64 MiB, whose page table stays in the host's L2 cache, and 1 GiB
//! (262,144 pages), whose does not. There is no memory cgroup limit and the machine has
//! room for the region, so nothing is reclaimed; this is checked once outside the timed
//! loop, with every access replayed.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::sync::Arc;
use std::time::{Duration, Instant};
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::{run_with_progress, Access, ByteSize, Outcome, SimReport, VirtPage, PROGRESS_ACCESSES};

/// Entries in the table of random pages the reads walk (a power of two).
const TABLE: usize = 1 << 20;
/// Reads timed per run: 2^24.
const TIMED_READS: u64 = 1 << 24;

/// A task's accesses: a write to each of `pages` pages in order, then reads of the pages
/// the table names, in table order, wrapping.
struct FillThenReads {
    table: Arc<[u32]>,
    pages: u64,
    next: u64,
    end: u64,
}

impl Iterator for FillThenReads {
    type Item = Access;

    #[inline]
    fn next(&mut self) -> Option<Access> {
        let i = self.next;
        if i >= self.end {
            return None;
        }
        self.next = i + 1;
        let (vpage, write) = if i < self.pages {
            (i, true)
        } else {
            (u64::from(self.table[(i - self.pages) as usize & (TABLE - 1)]), false)
        };
        Some(Access { vpage: VirtPage(vpage), write, think_ns: None })
    }
}

/// One benchmarked region.
struct HitRun {
    region: ByteSize,
    table: Arc<[u32]>,
}

impl HitRun {
    fn new(region: ByteSize) -> HitRun {
        let pages = region.pages();
        assert!(pages <= u64::from(u32::MAX), "a page number fits the table");
        // splitmix64 from a fixed seed: the same table every run.
        let mut state = swapsim_benches::SEED;
        let table = (0..TABLE)
            .map(|_| {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                ((u128::from(z) * u128::from(pages)) >> 64) as u32
            })
            .collect();
        HitRun { region, table }
    }

    /// The progress count at which the timed reads begin: the first multiple of
    /// `PROGRESS_ACCESSES` that is not before the end of the fill.
    fn start_mark(&self) -> u64 {
        self.region.pages().div_ceil(PROGRESS_ACCESSES) * PROGRESS_ACCESSES
    }

    /// Accesses in a run; the last is a progress mark, where the timed reads end.
    fn accesses(&self) -> u64 {
        self.start_mark() + TIMED_READS
    }

    /// Runs once; returns the report and the host time between the two marks.
    fn run(&self) -> (SimReport, Duration) {
        let mut gen = GeneratorConfig::new(Pattern::Rand, self.region);
        gen.passes = 1;
        let mut setup = swapsim_benches::setup(&gen, None, 3);
        assert_eq!(setup.tasks.len(), 1, "the benchmark's generator makes one task");
        setup.tasks[0].accesses = Box::new(FillThenReads {
            table: Arc::clone(&self.table),
            pages: self.region.pages(),
            next: 0,
            end: self.accesses(),
        });
        let (start_mark, end_mark) = (self.start_mark(), self.accesses());
        let (mut start, mut stop) = (None, None);
        let report = run_with_progress(setup, &mut |n| {
            if n == start_mark {
                start = Some(Instant::now());
            } else if n == end_mark {
                stop = Some(Instant::now());
            }
        })
        .expect("run succeeds");
        let (start, stop) =
            (start.expect("the start mark was reached"), stop.expect("the end mark was reached"));
        (report, stop - start)
    }
}

fn bench_hit_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("hit_path");
    group.sample_size(10);
    for (label, region) in [("64MiB", ByteSize::mib(64)), ("1GiB", ByteSize::gib(1))] {
        let r = HitRun::new(region);
        let (report, _) = r.run();
        assert_eq!(report.outcome, Outcome::Completed, "{label}");
        assert_eq!(report.accesses, r.accesses(), "{label}: accesses replayed");
        assert_eq!(report.vmstat.pgfault, region.pages(), "{label}: faults beyond the fill");
        assert_eq!(report.vmstat.pswpout, 0, "{label}: reclaimed");

        group.throughput(Throughput::Elements(TIMED_READS));
        group.bench_function(BenchmarkId::new("resident_reads", label), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| r.run().1).sum())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_hit_path);
criterion_main!(benches);
