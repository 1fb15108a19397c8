//! The demultiplexer the tasks of a trace of several threads share: one reader of the
//! trace, one queue of records per task, and the detaching of a task whose queue grows
//! past the limit (see the parent module's documentation).

use super::failure::{changed_trace, earliest_time, first_time_differs, Failure};
use super::{thread_key, OpenFn};
use crate::error::FormatError;
use crate::lines::IdHasher;
use crate::record::{Record, RecordSource};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// Task index by thread key, for the threads the first pass found.
pub(super) type ThreadIndex = HashMap<u64, usize, BuildHasherDefault<IdHasher>>;

/// The reader shared by the tasks of one trace, with one queue per task.
pub(super) struct Demux {
    open: Arc<OpenFn>,
    /// The second pass, opened on the first pull.
    source: Option<Box<dyn RecordSource>>,
    pub(super) index_of: Arc<ThreadIndex>,
    /// The thread key and task index of the latest record distributed: consecutive records
    /// of one thread skip the map.
    last_owner: Option<(u64, usize)>,
    queues: Vec<VecDeque<Record>>,
    /// Tasks that read the trace on their own.
    detached: Vec<bool>,
    /// Records in all queues.
    queued: usize,
    queued_records_max: usize,
    /// A batch read from the trace, being distributed.
    scratch: Vec<Record>,
    finished: bool,
    /// The error that ended the pass, given to every task that asks after it.
    failed: Option<Failure>,
    /// The trace's first time as counted before the replay (`None`: untimed).
    origin_ns: Option<u64>,
    /// The earliest time among the records read so far, which must be the counted first
    /// time at the end of a timed trace: each task checks that none of its records comes
    /// before it, and the shared reader, which reads every record, that one is at it.
    earliest_ns: Option<u64>,
}

pub(super) enum Pulled {
    /// Records were appended to the task's batch.
    Records,
    End,
    Detached,
}

impl Demux {
    /// The demultiplexer of the threads `index_of` numbers, reading the trace `open` opens
    /// on the first pull, detaching a task past `queued_records_max` queued records; the
    /// trace's first time was counted as `origin_ns`.
    pub(super) fn new(
        open: Arc<OpenFn>,
        index_of: Arc<ThreadIndex>,
        queued_records_max: usize,
        origin_ns: Option<u64>,
    ) -> Demux {
        let n_tasks = index_of.len();
        Demux {
            open,
            source: None,
            index_of,
            last_owner: None,
            queues: (0..n_tasks).map(|_| VecDeque::new()).collect(),
            detached: vec![false; n_tasks],
            queued: 0,
            queued_records_max,
            scratch: Vec::new(),
            finished: false,
            failed: None,
            origin_ns,
            earliest_ns: None,
        }
    }

    /// Appends up to `n_max` next records of task `index` to `out`, which is empty: those
    /// queued for it, or else those of the next batches read from the trace, up to the first
    /// batch that holds one of its records. On an error, `out` keeps the task's records read
    /// before it, and the error comes with the next pull.
    pub(super) fn pull(
        &mut self,
        index: usize,
        out: &mut Vec<Record>,
        n_max: usize,
    ) -> Result<Pulled, Failure> {
        if self.detached[index] {
            return Ok(Pulled::Detached);
        }
        let queue = &mut self.queues[index];
        if !queue.is_empty() {
            let n_taken = queue.len().min(n_max);
            out.extend(queue.drain(..n_taken));
            self.queued -= n_taken;
            return Ok(Pulled::Records);
        }
        if let Some(failure) = &self.failed {
            return Err(failure.clone());
        }
        if self.finished {
            return Ok(Pulled::End);
        }
        if self.source.is_none() {
            match (self.open)() {
                Ok(source) => self.source = Some(source),
                Err(err) => return Err(self.fail(err)),
            }
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let res = loop {
            scratch.clear();
            let source = self.source.as_mut().expect("opened above");
            let read = source.next_records(&mut scratch, n_max);
            let at_end = read.is_ok() && scratch.len() < n_max;
            let distributed = self.distribute(index, &scratch, out);
            if let Err(err) = read.and(distributed) {
                let failure = self.fail(err);
                // The records before the error go first; the error comes with the next pull.
                break if out.is_empty() { Err(failure) } else { Ok(Pulled::Records) };
            }
            if at_end {
                if let Some(origin) = self.origin_ns.filter(|&o| self.earliest_ns != Some(o)) {
                    let failure = self.fail(first_time_differs(self.earliest_ns, origin));
                    break if out.is_empty() { Err(failure) } else { Ok(Pulled::Records) };
                }
                self.finished = true;
                self.source = None;
                break Ok(if out.is_empty() { Pulled::End } else { Pulled::Records });
            }
            if !out.is_empty() {
                break Ok(Pulled::Records);
            }
        };
        self.scratch = scratch;
        res
    }

    /// Hands `records` out: task `index`'s to `out`, the others' to their queues. Stops at
    /// a record of a thread the first pass did not see.
    fn distribute(
        &mut self,
        index: usize,
        records: &[Record],
        out: &mut Vec<Record>,
    ) -> Result<(), FormatError> {
        self.earliest_ns = earliest_time(self.earliest_ns, records);
        for record in records {
            let key = thread_key(record);
            let owner = match self.last_owner {
                Some((last_key, owner)) if last_key == key => owner,
                _ => {
                    let Some(&owner) = self.index_of.get(&key) else {
                        return Err(changed_trace(record));
                    };
                    self.last_owner = Some((key, owner));
                    owner
                }
            };
            if owner == index {
                out.push(*record);
                continue;
            }
            if self.detached[owner] {
                continue;
            }
            self.queues[owner].push_back(*record);
            self.queued += 1;
            if self.queued > self.queued_records_max {
                self.detach_longest_except(index);
            }
        }
        Ok(())
    }

    fn detach_longest_except(&mut self, index: usize) {
        let longest = (0..self.queues.len())
            .filter(|&other| other != index)
            .max_by_key(|&other| (self.queues[other].len(), std::cmp::Reverse(other)))
            .expect("a record was queued for another task");
        self.queued -= self.queues[longest].len();
        self.queues[longest] = VecDeque::new();
        self.detached[longest] = true;
    }

    fn fail(&mut self, err: FormatError) -> Failure {
        let failure = Failure::of(err);
        self.failed = Some(failure.clone());
        self.source = None;
        failure
    }
}
