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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::workload::{Access, AccessSource};
use swapsim_core::{
    run, ByteSize, CoreConfig, Outcome, Setup, SimReport, SimRng, SwapDeviceSpec, TaskSpec, TraceError,
};
use swapsim_devices::DeviceConfig;
use swapsim_policies::{ReadaheadConfig, ReadaheadContext};

const SEED: u64 = 42;

/// An access stream that counts what the engine pulls from it and adds the count to
/// `total` when the engine drops it at the end of the run.
struct Counted {
    inner: Box<dyn AccessSource>,
    n_pulled: u64,
    total: Arc<AtomicU64>,
}

impl AccessSource for Counted {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let res = self.inner.next_access();
        if let Ok(Some(_)) = res {
            self.n_pulled += 1;
        }
        res
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.total.fetch_add(self.n_pulled, Ordering::Relaxed);
    }
}

/// A finished run: its report, the accesses replayed and the host time it took.
struct Timed {
    report: SimReport,
    n_accesses: u64,
    wall_s: f64,
}

/// Builds the run's setup; with `pulled` set, every task's stream is counted into it.
fn setup(gen: &GeneratorConfig, memcg_limit: Option<ByteSize>, pulled: Option<&Arc<AtomicU64>>) -> Setup {
    let mut cfg = CoreConfig::default();
    cfg.memcg.limit = memcg_limit;
    cfg.swap.page_cluster = 3;
    cfg.devices.push(SwapDeviceSpec { name: "vda".into(), size: ByteSize::mib(512), priority: None });
    let device = DeviceConfig::preset("virtio")
        .build(SimRng::derive(SEED, "devices.vda"))
        .expect("the virtio preset is valid");
    let ctx = ReadaheadContext { vma_ra_enabled: true, any_rotational: true };
    let mut tasks = gen.tasks(SEED);
    if let Some(pulled) = pulled {
        tasks = tasks
            .into_iter()
            .map(|t| TaskSpec {
                accesses: Box::new(Counted { inner: t.accesses, n_pulled: 0, total: Arc::clone(pulled) }),
                ..t
            })
            .collect();
    }
    Setup {
        config: cfg.validate().expect("configuration is valid"),
        seed: SEED,
        devices: vec![device],
        readahead: ReadaheadConfig::Cluster.build(&ctx),
        tasks,
    }
}

/// Times one plain run, then repeats it untimed with the streams counted: the repeat
/// checks that every access was replayed and that the two runs agree.
fn run_once(region: ByteSize, memcg_limit: Option<ByteSize>, pattern: Pattern, passes: u32) -> Timed {
    let mut gen = GeneratorConfig::new(pattern, region);
    gen.passes = passes;
    gen.validate().expect("workload is valid");
    let start = Instant::now();
    let report = run(setup(&gen, memcg_limit, None)).expect("run succeeds");
    let wall_s = start.elapsed().as_secs_f64();

    let pulled = Arc::new(AtomicU64::new(0));
    let repeat = run(setup(&gen, memcg_limit, Some(&pulled))).expect("run succeeds");
    let n_accesses = pulled.load(Ordering::Relaxed);
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
