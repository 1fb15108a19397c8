//! Building a replay's tasks from its first pass: one per thread, each with its access
//! stream, fed by the trace itself (one thread) or by the shared demultiplexer (several).

use super::first_pass::{FirstPass, Kept};
use super::shared::{Demux, ThreadIndex};
use super::thread::{Feed, ThreadCounts, ThreadSource};
use super::{Limits, OpenFn, BATCH_RECORDS_MAX};
use crate::access_ahead::AccessesAhead;
use crate::error::FormatError;
use crate::pace::Pace;
use crate::record::RecordSource;
use std::sync::{Arc, Mutex};
use swapsim_core::{AccessSource, TaskSpec};

/// Whether a replay's tasks know their threads' record counts before they read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Counts {
    /// Counted before the replay (by a first pass or a summary frame): each task checks
    /// that its feed gives as many records of its thread.
    Known,
    /// Not counted before the replay ([`super::FirstPassSource::Solo`]): the tasks check
    /// no count.
    Unknown,
}

/// The tasks of the threads `first` found, reading the trace `open` opens, or the records
/// `first` kept. With [`Counts::Known`], each task checks that the replay finds as many
/// records of its thread as `first` counted.
pub(super) fn build_tasks(
    first: &FirstPass,
    open: Arc<OpenFn>,
    name: &str,
    pace: Pace,
    limits: Limits,
    counts: Counts,
) -> Vec<TaskSpec> {
    let (summary, origin_ns) = (first.summary(), first.origin_ns);
    let open: Arc<OpenFn> = match Kept::of(first) {
        Some(kept) => {
            Arc::new(move || -> Result<Box<dyn RecordSource>, FormatError> { Ok(Box::new(kept.clone())) })
        }
        None => open,
    };
    let n_tasks = summary.tasks.len();
    // The tasks' batches hold at most about as many records as the queues may (or one
    // batch of BATCH_RECORDS_MAX in all, whichever is more): many threads get small batches.
    // The task of a one-thread trace takes whole batches of the decoding thread, which
    // it hands over without copying them (`read_ahead`).
    let batch_records = if n_tasks == 1 {
        limits.solo_batch_records.max(1)
    } else {
        (limits.queued_records_max.max(BATCH_RECORDS_MAX) / n_tasks.max(1))
            .clamp(1, limits.batch_records_max.max(1))
    };
    // A trace of one thread needs no demultiplexer: its task reads the trace itself.
    let shared = (n_tasks > 1).then(|| {
        let index_of: Arc<ThreadIndex> = Arc::new(
            summary
                .tasks
                .iter()
                .enumerate()
                .map(|(index, &(pid, tid, _))| ((u64::from(pid) << 32) | u64::from(tid), index))
                .collect(),
        );
        Arc::new(Mutex::new(Demux::new(Arc::clone(&open), index_of, limits.queued_records_max, origin_ns)))
    });
    summary
        .tasks
        .iter()
        .enumerate()
        .map(|(index, &(pid, tid, expected))| {
            let feed = match &shared {
                Some(shared) => Feed::Shared { shared: Arc::clone(shared), index },
                None => Feed::Solo { source: None },
            };
            let expected = match counts {
                Counts::Known => Some(expected),
                Counts::Unknown => None,
            };
            let counts =
                ThreadCounts { key: (u64::from(pid) << 32) | u64::from(tid), records: expected, origin_ns };
            let source = ThreadSource::new(feed, Arc::clone(&open), pace, counts, batch_records);
            // The task of a one-thread trace checks and converts its records on a thread
            // of its own (`access_ahead`); tasks fed through the demultiplexer stay on the
            // engine's, where their shared reader is.
            let stream: Box<dyn AccessSource> = match &shared {
                None => Box::new(AccessesAhead::new(Box::new(source))),
                Some(_) => Box::new(source),
            };
            let mut task = TaskSpec::new(format!("{name}:{pid}/{tid}"), Vec::new(), stream);
            task.address_space = Some(u64::from(pid));
            task
        })
        .collect()
}
