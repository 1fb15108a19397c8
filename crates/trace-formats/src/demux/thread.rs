//! One task's access stream: records from its feed (the trace itself, the shared
//! demultiplexer, or a detached task's own pass), checked against what was counted before
//! the replay and turned into accesses under the replay's pace.

use super::failure::{changed_trace, disagrees, earliest_time, first_time_differs, Failure};
use super::shared::{Demux, Pulled, ThreadIndex};
use super::{thread_key, OpenFn};
use crate::pace::Pace;
use crate::record::{Record, RecordSource};
use std::sync::{Arc, Mutex};
use swapsim_core::{Access, AccessSource, TraceError, VirtPage};

/// Where a task's records come from.
pub(super) enum Feed {
    /// The trace's only thread reads the trace itself, opened on the first call: no lock,
    /// no queue and no lookup of the thread.
    Solo { source: Option<Box<dyn RecordSource>> },
    /// One of several threads, fed through the shared demultiplexer.
    Shared { shared: Arc<Mutex<Demux>>, index: usize },
    /// A detached task's own pass over the trace.
    Private {
        source: Box<dyn RecordSource>,
        /// The threads of the first pass: a record of another means the trace changed.
        index_of: Arc<ThreadIndex>,
        /// The key of the latest record found in `index_of`.
        last_known: Option<u64>,
        /// Records of the task still to skip: those it received before it was detached.
        n_to_skip: u64,
        /// A batch read from the trace, being filtered.
        scratch: Vec<Record>,
    },
}

/// One task's access stream.
pub(super) struct ThreadSource {
    feed: Feed,
    open: Arc<OpenFn>,
    key: u64,
    pace: Pace,
    /// Time of the task's previous record (the trace's first time before any).
    previous_ns: u64,
    /// The trace's first time as counted before the replay, `None` for a trace found
    /// untimed (where a timed record means it changed since, or its summary frame is wrong).
    origin_ns: Option<u64>,
    /// The earliest time among the records taken so far by the task of a one-thread trace,
    /// which must find exactly the trace's first time as counted before the replay (the
    /// shared reader of several tasks checks that one of them does).
    earliest_ns: Option<u64>,
    /// The task's records as counted before the replay, which the replay must find; `None`
    /// when no pass counted them before it ([`super::FirstPassSource::Solo`]).
    expected: Option<u64>,
    /// Records taken from the feed so far.
    n_taken: u64,
    /// Records handed to the engine so far.
    n_received: u64,
    /// Records taken for the task and not yet handed to the engine: `batch[batch_idx..]`.
    batch: Vec<Record>,
    batch_idx: usize,
    /// How many records to take at once.
    batch_records: usize,
    /// The feed reached the end of the trace.
    ended: bool,
    /// The error that ended the feed, handed out once the batch is used up, and again on
    /// every later call.
    failed: Option<Failure>,
}

/// What a task knows of its thread before it reads.
#[derive(Clone, Copy, Debug)]
pub(super) struct ThreadCounts {
    /// The thread's key ([`thread_key`]).
    pub(super) key: u64,
    /// The thread's records as counted before the replay; `None` when no pass counted them.
    pub(super) records: Option<u64>,
    /// The trace's first time as counted before the replay, `None` for an untimed trace.
    pub(super) origin_ns: Option<u64>,
}

impl ThreadSource {
    /// The stream of the thread `counts` describes, taking `batch_records` records at once
    /// from `feed`; `open` opens the trace again for a detached task.
    pub(super) fn new(
        feed: Feed,
        open: Arc<OpenFn>,
        pace: Pace,
        counts: ThreadCounts,
        batch_records: usize,
    ) -> ThreadSource {
        ThreadSource {
            feed,
            open,
            key: counts.key,
            pace,
            previous_ns: counts.origin_ns.unwrap_or(0),
            origin_ns: counts.origin_ns,
            earliest_ns: None,
            expected: counts.records,
            n_taken: 0,
            n_received: 0,
            batch: Vec::new(),
            batch_idx: 0,
            batch_records,
            ended: false,
            failed: None,
        }
    }

    #[inline]
    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if let Some(&record) = self.batch.get(self.batch_idx) {
            self.batch_idx += 1;
            return Ok(Some(record));
        }
        self.next_batch()
    }

    /// Takes the next batch of records and returns its first.
    #[inline(never)]
    fn next_batch(&mut self) -> Result<Option<Record>, TraceError> {
        self.batch.clear();
        self.batch_idx = 0;
        loop {
            if let Some(failure) = &self.failed {
                return Err(failure.to_error());
            }
            if self.ended {
                return Ok(None);
            }
            if let Err(err) = self.fill() {
                self.failed = Some(err);
            }
            if let Some(&record) = self.batch.first() {
                self.batch_idx = 1;
                return Ok(Some(record));
            }
        }
    }

    /// Appends the task's next records to the (empty) batch, or marks the end. On an error,
    /// the batch keeps the records before it.
    fn fill(&mut self) -> Result<(), Failure> {
        let filled = self.fill_feed();
        let origin = self.origin_ns;
        let early = |t: u64| origin.is_none_or(|origin| t < origin);
        if let Some(pos) = self.batch.iter().position(|r| r.time_ns.is_some_and(early)) {
            let r = self.batch[pos];
            let (pid, tid, t) = (r.pid, r.tid, r.time_ns.unwrap_or_default());
            self.batch.truncate(pos);
            return Err(Failure::of(disagrees(match origin {
                None => format!("thread {pid}/{tid} has a record at {t} ns in a trace counted as untimed"),
                Some(o) => format!(
                    "thread {pid}/{tid} has a record at {t} ns, before the trace's first time, {o} ns, as counted"
                ),
            })));
        }
        // Only a task that reads the trace itself checks that the earliest time is the one
        // counted; the shared reader of several tasks checks it for all of them.
        if origin.is_some() && matches!(self.feed, Feed::Solo { .. }) {
            self.earliest_ns = earliest_time(self.earliest_ns, &self.batch);
        }
        self.n_taken += self.batch.len() as u64;
        filled?;
        if let Some(expected) = self.expected.filter(|&expected| self.ended && self.n_taken != expected) {
            let (pid, tid) = (self.key >> 32, self.key as u32);
            let found = self.n_taken;
            return Err(Failure::of(disagrees(format!(
                "thread {pid}/{tid} has {found} records, where {expected} were counted"
            ))));
        }
        match origin {
            Some(o)
                if self.ended && matches!(self.feed, Feed::Solo { .. }) && self.earliest_ns != Some(o) =>
            {
                Err(Failure::of(first_time_differs(self.earliest_ns, o)))
            }
            _ => Ok(()),
        }
    }

    /// Appends the task's next records from its feed, as [`ThreadSource::fill`] says.
    fn fill_feed(&mut self) -> Result<(), Failure> {
        let key = self.key;
        match &mut self.feed {
            Feed::Solo { source } => {
                let source = match source {
                    Some(source) => source,
                    None => source.insert((self.open)().map_err(Failure::of)?),
                };
                let read = source.next_records(&mut self.batch, self.batch_records);
                let at_end = read.is_ok() && self.batch.len() < self.batch_records;
                // The first pass saw one thread: a record of another means the trace changed.
                if let Some(pos) = self.batch.iter().position(|record| thread_key(record) != key) {
                    let err = changed_trace(&self.batch[pos]);
                    self.batch.truncate(pos);
                    return Err(Failure::of(err));
                }
                read.map_err(Failure::of)?;
                if at_end {
                    self.ended = true;
                    self.feed = Feed::Solo { source: None };
                }
                Ok(())
            }
            Feed::Shared { shared, index } => {
                let (pulled, index_of) = {
                    let mut demux = shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    let pulled = demux.pull(*index, &mut self.batch, self.batch_records);
                    // A detached task checks the threads of its own pass against the first.
                    let index_of =
                        matches!(pulled, Ok(Pulled::Detached)).then(|| Arc::clone(&demux.index_of));
                    (pulled, index_of)
                };
                match pulled? {
                    Pulled::Records => {}
                    Pulled::End => self.ended = true,
                    Pulled::Detached => {
                        let source = (self.open)().map_err(Failure::of)?;
                        // Nothing is left in the batch: every record taken was handed out.
                        self.feed = Feed::Private {
                            source,
                            index_of: index_of.expect("taken for a detached task"),
                            last_known: None,
                            n_to_skip: self.n_received,
                            scratch: Vec::new(),
                        };
                    }
                }
                Ok(())
            }
            Feed::Private { source, index_of, last_known, n_to_skip, scratch } => {
                scratch.clear();
                let read = source.next_records(scratch, self.batch_records);
                let at_end = read.is_ok() && scratch.len() < self.batch_records;
                for record in scratch.iter() {
                    let record_key = thread_key(record);
                    if record_key != key {
                        if *last_known != Some(record_key) {
                            if !index_of.contains_key(&record_key) {
                                return Err(Failure::of(changed_trace(record)));
                            }
                            *last_known = Some(record_key);
                        }
                        continue;
                    }
                    if *n_to_skip > 0 {
                        *n_to_skip -= 1;
                        continue;
                    }
                    self.batch.push(*record);
                }
                read.map_err(Failure::of)?;
                self.ended = at_end;
                Ok(())
            }
        }
    }
}

/// The access of `record` under `pace`; `previous_ns` is the time of the thread's last timed
/// record, which a timed record moves on.
#[inline(always)]
fn access_of(pace: Pace, previous_ns: &mut u64, record: &Record) -> Access {
    let think_ns = match (pace, record.time_ns) {
        (Pace::Timestamps, Some(time_ns)) => {
            let think_ns = time_ns.saturating_sub(*previous_ns);
            *previous_ns = time_ns;
            Some(think_ns)
        }
        _ => None,
    };
    Access { vpage: VirtPage(record.page), write: record.write, think_ns }
}

impl ThreadSource {
    /// The access of `record`, the next one handed to the engine.
    #[inline]
    fn next_of(&mut self, record: &Record) -> Access {
        self.n_received += 1;
        access_of(self.pace, &mut self.previous_ns, record)
    }
}

impl AccessSource for ThreadSource {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let Some(record) = self.next_record()? else {
            return Ok(None);
        };
        Ok(Some(self.next_of(&record)))
    }

    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        let mut n = 0;
        while n < max {
            if self.batch_idx >= self.batch.len() {
                let Some(first) = self.next_batch()? else { break };
                out.push(self.next_of(&first));
                n += 1;
                continue;
            }
            // The rest of the batch, or what is asked, converted in one loop that extends
            // `out` once.
            let k = (self.batch.len() - self.batch_idx).min(max - n);
            let records = &self.batch[self.batch_idx..self.batch_idx + k];
            let (pace, previous_ns) = (self.pace, &mut self.previous_ns);
            out.extend(records.iter().map(|record| access_of(pace, previous_ns, record)));
            self.n_received += k as u64;
            self.batch_idx += k;
            n += k;
        }
        Ok(())
    }
}
