//! One timed run each of the two end-to-end scenarios at more than 10M accesses.
//!
//! Criterion needs at least ten samples per benchmark, which for a fault-dominated run of
//! 10M accesses would take minutes, so this example times a single run of each instead:
//!
//! ```text
//! cargo run --release -p swapsim-benches --example one_shot
//! ```
//!
//! The scenarios match `benches/end_to_end.rs` except for the number of passes. Each
//! result is checked before its time is printed: the timed run is repeated untimed with
//! each task's stream wrapped in a counter, because the report's `accesses` counts only
//! accesses that completed without blocking, and the two runs must agree.

use std::time::Instant;
use swapsim_benches::setup;
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::{run, ByteSize, Outcome, SimReport};

/// A finished run: its report, the accesses replayed and the host time it took.
struct Timed {
    report: SimReport,
    n_accesses: u64,
    wall_s: f64,
}

/// Times one run, then repeats it untimed: every access must have been replayed and the
/// two runs must agree.
fn run_once(region: ByteSize, memcg_limit: Option<ByteSize>, pattern: Pattern, passes: u32) -> Timed {
    let mut gen = GeneratorConfig::new(pattern, region);
    gen.passes = passes;
    gen.validate().expect("workload is valid");
    let start = Instant::now();
    let report = run(setup(&gen, memcg_limit, 3)).expect("run succeeds");
    let wall_s = start.elapsed().as_secs_f64();

    let repeat = run(setup(&gen, memcg_limit, 3)).expect("run succeeds");
    let n_accesses = report.accesses;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(n_accesses, gen.total_accesses());
    assert_eq!((report.events, report.accesses), (repeat.events, repeat.accesses), "runs disagree");
    assert_eq!(report.vmstat.pswpin, repeat.vmstat.pswpin, "runs disagree");
    Timed { report, n_accesses, wall_s }
}

fn print(name: &str, t: &Timed) {
    let Timed { report, n_accesses, wall_s } = t;
    let v = &report.vmstat;
    println!(
        "{name}: {n_accesses} accesses in {wall_s:.3} s = {:.2} M accesses/s \
         (events {}, pgfault {}, pgmajfault {}, pswpin {}, pswpout {})",
        *n_accesses as f64 / wall_s / 1e6,
        report.events,
        v.pgfault,
        v.pgmajfault,
        v.pswpin,
        v.pswpout,
    );
}

fn main() {
    // 64 MiB = 16,384 pages: fill + 610 random passes = 10,010,624 accesses, all hits after the fill.
    let t = run_once(ByteSize::mib(64), None, Pattern::Rand, 610);
    assert_eq!(t.report.vmstat.pswpin, 0);
    print("resident_hit region=64MiB memcg=unlimited pattern=rand", &t);

    // 96 MiB = 24,576 pages: fill + 407 passes = 10,027,008 accesses under a 32 MiB limit.
    for pattern in [Pattern::Rand, Pattern::Seq] {
        let t = run_once(ByteSize::mib(96), Some(ByteSize::mib(32)), pattern, 407);
        assert!(t.report.vmstat.pswpin > 0);
        print(&format!("fault_heavy region=96MiB memcg=32MiB pattern={pattern} page_cluster=3"), &t);
    }
}
