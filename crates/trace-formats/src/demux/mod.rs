//! Turning one trace of many threads into engine tasks, one per thread.
//!
//! A replay is built by a [`ReplayBuilder`] from the trace's opener, a name and a [`Pace`],
//! and a [`FirstPassSource`]: where the replay learns, before it starts, what a first pass
//! over the trace finds (its threads and their records, its first time). That is a
//! streaming pass over the trace ([`summarize`] without the distinct pages), a native
//! trace's summary frame (times the rounds of `--repeat`), a pass made earlier and shared
//! by several replays of one trace (which, asked to, keeps the records of a trace of at
//! most [`KEPT_RECORDS_MAX`], so that the replays read them from memory instead of
//! decoding the trace again), or none at all for a trace whose one thread is known before
//! reading it (text, lackey, libCacheSim txt: every record is pid 0, tid 0, untimed): its
//! task is built at once, and the replay counts the records as it reads them, leaving what
//! the first pass would have found once it has read the trace to its end ([`CountingPass`]).
//! A second pass, opened lazily when the engine first asks a task for an access, feeds the
//! tasks. The threads of one process share an address space (`TaskSpec::address_space` is
//! the pid). The builder decodes the trace on a thread of its own ([`crate::read_ahead`])
//! for the first pass and for the passes that feed the tasks.
//!
//! The task of a trace with one thread reads the trace itself: no lock, no queue, no lookup.
//! Several threads' tasks share one reader. A task whose queue is empty reads records from
//! the shared reader, a batch at a time, until a batch holds some of its own, queueing the
//! records of other threads for their tasks. Tasks take records in batches (at most
//! `BATCH_RECORDS_MAX`, fewer when there are many threads) and hand them to the engine one
//! by one, so the shared reader's lock is taken once per batch, not once per record.
//!
//! Memory stays bounded when tasks consume their accesses roughly in trace order, which the
//! engine does when trace timestamps pace the replay ([`Pace::Timestamps`]): the queues then
//! hold only the records between the slowest and the fastest task. When tasks drift apart
//! (with [`Pace::Cpu`] each runs at its own speed) the queues are capped: past
//! [`QUEUED_RECORDS_MAX`] queued records, the task with the longest queue is detached,
//! dropping its queue, and it reads the trace on its own from then on, skipping the records
//! it already had. A detached task costs one more pass over the trace, never more memory.
//! The batches the tasks hold add at most about `QUEUED_RECORDS_MAX` records more.
//!
//! An error of the second pass (a bad record, or a thread the first pass did not see, or a
//! first time other than the one counted, when the trace changed between passes or its
//! summary frame is wrong) reaches every task after the records before it, and is returned
//! again if the task is asked again.
//!
//! The result is deterministic: which records are queued or detached depends only on the
//! order in which the engine asks, and that order depends only on the run's inputs. The
//! records each task receives depend on neither.
//!
//! # Code map
//!
//! This file holds the builder. `first_pass.rs` is the first pass ([`TraceSummary`],
//! [`FirstPass`], the kept records) and `distinct.rs` its count of distinct pages;
//! `counting.rs` counts a trace while its replay reads it; `tasks.rs` builds the tasks,
//! `thread.rs` is one task's access stream and `shared.rs` the demultiplexer the tasks of
//! several threads share.

mod counting;
mod distinct;
mod failure;
mod first_pass;
mod shared;
mod tasks;
#[cfg(test)]
mod tests;
mod thread;

pub use counting::CountingPass;
pub use first_pass::{summarize, FirstPass, StoredRounds, TraceSummary};

use crate::error::FormatError;
use crate::format::Format;
use crate::pace::Pace;
use crate::record::{Record, RecordSource};
use std::sync::Arc;
use swapsim_core::TaskSpec;
use tasks::{build_tasks, Counts};

/// Records queued for other tasks before the task with the longest queue is detached.
pub const QUEUED_RECORDS_MAX: usize = 1 << 20;

/// The most records a first pass asked to keep them keeps (40 bytes each, 40 MiB in all). A
/// longer trace, or one whose format records next accesses, is decoded again instead.
pub const KEPT_RECORDS_MAX: usize = 1 << 20;

/// The most records a task takes at once: from its queue under one lock, or from the trace
/// when it reads the trace itself. The shared reader reads the trace in batches of the same
/// size. The builder lowers it when there are many threads, so that the records held in
/// the tasks' batches never outgrow [`QUEUED_RECORDS_MAX`] in total.
const BATCH_RECORDS_MAX: usize = 256;

/// The function that opens the trace afresh.
type OpenFn = dyn Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync;

/// Whether a streaming first pass keeps the records it reads, for the replays that share
/// the pass to read them from memory instead of decoding the trace again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepRecords {
    /// Keep none: every replay decodes the trace.
    No,
    /// Keep them when the trace has at most [`KEPT_RECORDS_MAX`] records and its format
    /// records no next accesses.
    IfShort,
}

/// Where a replay learns, before it starts, what a first pass over its trace finds: the
/// threads its tasks are built for, and the records and first time each task checks its
/// feed against.
#[derive(Clone, Debug)]
pub enum FirstPassSource {
    /// A streaming pass over the whole trace, read before the replay.
    Stream(KeepRecords),
    /// A native trace's summary frame, standing in for the pass over one or more readings
    /// of the trace back to back.
    Stored(StoredRounds),
    /// A pass made earlier ([`ReplayBuilder::first_pass`]), shared by several replays of
    /// one trace.
    Shared(FirstPass),
    /// No pass: the trace, in this format, has one untimed thread, pid 0, tid 0 (as every
    /// record of the text, lackey and libCacheSim txt formats has) and at least one record,
    /// which the caller knows. Its task is built at once, named `"{name}:0/0"`, and the
    /// replay counts the trace as it reads it ([`TraceCount::WhileRead`]).
    Solo(Format),
}

/// How a replay of one trace is built: the trace's opener, the tasks' name and the pace.
/// See the module documentation.
pub struct ReplayBuilder {
    /// Opens the trace afresh, decoded where it is called.
    open: Arc<OpenFn>,
    name: String,
    pace: Pace,
    limits: Limits,
}

/// What a replay is: its tasks and what is known of its trace.
pub struct Replay {
    /// One task per thread, ordered by pid then tid, named `"{name}:{pid}/{tid}"`, with the
    /// pid as address space and no declared regions (the engine maps implicit regions on
    /// first touch). Errors of the passes that feed them reach the engine through their
    /// access streams as `TraceError::Malformed`.
    pub tasks: Vec<TaskSpec>,
    /// What the first pass found, or the pass that counts the trace as the replay reads it.
    pub count: TraceCount,
}

/// What a replay knows of its trace's counts.
pub enum TraceCount {
    /// Counted before the replay, by the first pass its source names.
    Before(TraceSummary),
    /// Counted while the replay reads the trace ([`FirstPassSource::Solo`]).
    WhileRead(CountingPass),
}

impl ReplayBuilder {
    /// A replay of the trace `open` opens (decoded on the calling thread; the builder moves
    /// the decoding to a thread of its own), its tasks named after `name`, paced by `pace`.
    /// `open` is called for each pass the replay makes: the first pass, if the source is a
    /// stream, the pass that feeds the tasks (unless the first pass kept the records), and
    /// one more for each detached task.
    pub fn new(
        open: impl Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync + 'static,
        name: &str,
        pace: Pace,
    ) -> ReplayBuilder {
        ReplayBuilder { open: Arc::new(open), name: name.to_string(), pace, limits: LIMITS }
    }

    /// What the first pass from `source` finds, for a caller that shares it between replays
    /// of the trace ([`FirstPassSource::Shared`]). [`FirstPassSource::Solo`] makes no pass
    /// before its replay: asked for its first pass alone, the builder reads the trace
    /// through, as [`FirstPassSource::Stream`] without keeping records does.
    pub fn first_pass(&self, source: FirstPassSource) -> Result<FirstPass, FormatError> {
        match source {
            FirstPassSource::Stream(keep) => self.stream(keep),
            FirstPassSource::Stored(stored) => Ok(stored.first_pass()),
            FirstPassSource::Shared(first) => Ok(first),
            FirstPassSource::Solo(_) => self.stream(KeepRecords::No),
        }
    }

    /// The replay's tasks, built after the first pass `source` names (reading the trace
    /// now if it names a stream), and what is known of the trace. Fails only on an error of
    /// that first pass; errors of later passes reach the tasks.
    pub fn build(&self, source: FirstPassSource) -> Result<Replay, FormatError> {
        if let FirstPassSource::Solo(format) = source {
            let (open, counting) = CountingPass::new(Arc::clone(&self.open));
            let first = FirstPass::uncounted(format);
            let tasks = build_tasks(&first, open, &self.name, self.pace, self.limits, Counts::Unknown);
            return Ok(Replay { tasks, count: TraceCount::WhileRead(counting) });
        }
        let first = self.first_pass(source)?;
        let tasks = build_tasks(&first, self.ahead(), &self.name, self.pace, self.limits, Counts::Known);
        Ok(Replay { tasks, count: TraceCount::Before(first.into_summary()) })
    }

    /// A streaming first pass, keeping records as `keep` says.
    fn stream(&self, keep: KeepRecords) -> Result<FirstPass, FormatError> {
        let kept_records_max = match keep {
            KeepRecords::No => 0,
            KeepRecords::IfShort => self.limits.kept_records_max,
        };
        FirstPass::read(&mut *(self.ahead())()?, kept_records_max)
    }

    /// The trace's opener, decoding on a thread of its own.
    fn ahead(&self) -> Arc<OpenFn> {
        let open = Arc::clone(&self.open);
        Arc::new(move || crate::readahead::read_ahead(open()?))
    }
}

/// The bounds a replay works within; tests lower them to exercise detaching and batching.
#[derive(Clone, Copy, Debug)]
struct Limits {
    queued_records_max: usize,
    batch_records_max: usize,
    /// The records the task of a one-thread trace takes at once.
    solo_batch_records: usize,
    /// The most records a first pass keeps ([`KeepRecords::IfShort`]).
    kept_records_max: usize,
}

/// The bounds of every replay outside tests.
const LIMITS: Limits = Limits {
    queued_records_max: QUEUED_RECORDS_MAX,
    batch_records_max: BATCH_RECORDS_MAX,
    solo_batch_records: crate::readahead::BATCH_RECORDS,
    kept_records_max: KEPT_RECORDS_MAX,
};

/// The key of a record's thread: pid and tid in one integer.
#[inline]
fn thread_key(record: &Record) -> u64 {
    (u64::from(record.pid) << 32) | u64::from(record.tid)
}
