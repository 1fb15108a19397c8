//! The queue of traces the build experiments replay beside their generated job queue, so
//! that each verdict also stands on a workload whose mechanics are validated: the eight
//! traces of `traces/queue/` (written by `swapsim trace generate`: zipf, hot/cold, random
//! and sequential processes of 8 to 24 MiB), built into the program, run three rounds in a
//! row (24 jobs, each a process of its own) three at a time, as the validated queue cases
//! run (`J-small20-j3-*`: `-j3` on one CPU with the validation machine's scheduler slice,
//! costs and launch delay), in the memory cgroup of `scenarios/queue.toml`, 24 MiB.
//!
//! The shape was chosen before any experiment ran on it, and is not scaled: the traces
//! are what they are. At 24 MiB the three jobs running together hold one and a half to three times the
//! limit. The experiments' own limits (scaled from their publications) do not carry over:
//! twice 24 MiB, as `zswap-second-chance` doubles `mthp-swapin`'s limit, leaves the queue
//! almost no pressure (a few hundred pages swapped in a whole run).

use swapsim_core::config::{ByteSize, MachineConfig};
use swapsim_core::contents::Contents;

use crate::scenario::queue::QueueSection;
use crate::scenario::WorkloadSection;

/// The bundled traces, in start order.
const TRACES: [(&str, &[u8]); 8] = [
    ("01-zipf-12M-p2.trace.zst", include_bytes!("../../../../traces/queue/01-zipf-12M-p2.trace.zst")),
    ("02-hotcold-20M-p2.trace.zst", include_bytes!("../../../../traces/queue/02-hotcold-20M-p2.trace.zst")),
    ("03-rand-16M-p2.trace.zst", include_bytes!("../../../../traces/queue/03-rand-16M-p2.trace.zst")),
    ("04-zipf-24M-p2.trace.zst", include_bytes!("../../../../traces/queue/04-zipf-24M-p2.trace.zst")),
    ("05-seq-8M-p3.trace.zst", include_bytes!("../../../../traces/queue/05-seq-8M-p3.trace.zst")),
    ("06-zipf-12M-p2.trace.zst", include_bytes!("../../../../traces/queue/06-zipf-12M-p2.trace.zst")),
    ("07-hotcold-20M-p2.trace.zst", include_bytes!("../../../../traces/queue/07-hotcold-20M-p2.trace.zst")),
    ("08-rand-16M-p2.trace.zst", include_bytes!("../../../../traces/queue/08-rand-16M-p2.trace.zst")),
];

/// Rounds of the eight traces.
const ROUNDS: usize = 3;

/// Jobs run at once.
const CONCURRENCY: u32 = 3;

/// The memory cgroup's limit, MiB.
pub(super) const MEMCG_MIB: u64 = 24;

/// The queue as a workload, its pages holding `contents` (`None`: random bytes).
pub(super) fn workload(contents: Option<Contents>) -> WorkloadSection {
    let embedded = (0..ROUNDS).flat_map(|_| TRACES).collect();
    WorkloadSection {
        queue: Some(QueueSection {
            concurrency: CONCURRENCY,
            jobs: Vec::new(),
            traces: None,
            delay: Some("18.5ms".into()),
            embedded,
        }),
        contents,
        ..WorkloadSection::default()
    }
}

/// The machine the queue runs on: the validation machine's one CPU and scheduler slice
/// (750 µs scaled for its two CPUs online), 24 GiB.
pub(super) fn machine() -> MachineConfig {
    MachineConfig {
        memory: ByteSize(24 << 30),
        cpus: 1,
        base_slice_ns: Some(1_500_000),
        ..MachineConfig::default()
    }
}

/// The queue in words, for an experiment's setup.
pub(super) fn text() -> String {
    format!(
        "queue of traces: the {} bundled traces of traces/queue/ (8 to 24 MiB each), {ROUNDS} rounds \
         ({} jobs, each a process), -j{CONCURRENCY} on one CPU, launched 18.5 ms after a slot frees",
        TRACES.len(),
        TRACES.len() * ROUNDS
    )
}
