//! Counting a trace while its replay reads it, for a replay without a first pass
//! ([`super::FirstPassSource::Solo`]): the trace's records pass through a counter on their
//! way to the replay's one task, on the decoding thread, which leaves what a first pass
//! would have found once the trace has been read to its end, or to an error.

use super::first_pass::{DistinctCount, FirstPass, Tally};
use super::OpenFn;
use crate::error::FormatError;
use crate::format::Format;
use crate::record::{Record, RecordSource, SkipCounts};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Where the counter leaves what a first pass would have found; `None` before.
type Slot = Arc<Mutex<Option<Result<FirstPass, FormatError>>>>;

/// The slot, whose lock a panic elsewhere cannot leave inconsistent: it is only ever
/// replaced whole.
fn lock(slot: &Slot) -> MutexGuard<'_, Option<Result<FirstPass, FormatError>>> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The first pass of a trace, counted by its replay's own reading
/// ([`super::TraceCount::WhileRead`]).
pub struct CountingPass {
    slot: Slot,
    /// Opens the trace again, for a pass after a replay that stopped before its end.
    open: Arc<OpenFn>,
}

impl CountingPass {
    /// The pass counting the trace `open` opens, and the opener of the replay's feed: the
    /// trace, counted, decoded on a thread of its own.
    pub(super) fn new(open: Arc<OpenFn>) -> (Arc<OpenFn>, CountingPass) {
        let slot = Slot::default();
        let (feed_open, counted) = (Arc::clone(&open), Arc::clone(&slot));
        let feed: Arc<OpenFn> = Arc::new(move || {
            let counting = Counting {
                source: feed_open()?,
                tally: Some(Tally::new(DistinctCount::Skipped)),
                slot: Arc::clone(&counted),
            };
            crate::readahead::read_ahead(Box::new(counting))
        });
        (feed, CountingPass { slot, open })
    }

    /// Records in the trace, once the replay has read it to its end.
    pub fn records(&self) -> Option<u64> {
        match &*lock(&self.slot) {
            Some(Ok(first)) => Some(first.summary().records),
            _ => None,
        }
    }

    /// What the replay counted, or the error it found; when it stopped before the trace's
    /// end, a first pass counts the trace now, as a streaming first pass without kept
    /// records would have before the replay.
    pub fn finish(self) -> Result<FirstPass, FormatError> {
        let counted = lock(&self.slot).take();
        match counted {
            Some(counted) => counted,
            None => FirstPass::read(&mut *(self.open)()?, 0),
        }
    }
}

/// A source yielding the same records and errors as the one it wraps, and counting them
/// as the first pass does: when the stream ends, or fails, the result is left in `slot`.
struct Counting {
    source: Box<dyn RecordSource>,
    /// `None` once the result is in `slot`.
    tally: Option<Tally>,
    slot: Slot,
}

impl Counting {
    /// Counts `records`, read by a call that returned `read`; `ended` when it reached the
    /// end of the trace. Returns `read`.
    fn account(
        &mut self,
        records: &[Record],
        read: Result<(), FormatError>,
        ended: bool,
    ) -> Result<(), FormatError> {
        let Some(tally) = &mut self.tally else { return read };
        tally.add(records);
        let (result, read) = match read {
            Err(err) => {
                let copy = err.duplicate();
                (Some(Err(err)), Err(copy))
            }
            Ok(()) if ended => {
                let tally = self.tally.take().expect("tested above");
                (Some(Ok(tally.finish(&*self.source, None))), Ok(()))
            }
            Ok(()) => (None, Ok(())),
        };
        if let Some(result) = result {
            self.tally = None;
            *lock(&self.slot) = Some(result);
        }
        read
    }
}

impl RecordSource for Counting {
    fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        match self.source.next_record() {
            Ok(Some(record)) => {
                self.account(std::slice::from_ref(&record), Ok(()), false)?;
                Ok(Some(record))
            }
            Ok(None) => self.account(&[], Ok(()), true).map(|()| None),
            Err(err) => self.account(&[], Err(err), false).map(|()| None),
        }
    }
    fn next_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<(), FormatError> {
        let before = out.len();
        let read = self.source.next_records(out, n_max);
        let ended = read.is_ok() && out.len() - before < n_max;
        self.account(&out[before..], read, ended)
    }
    fn skipped(&self) -> &SkipCounts {
        self.source.skipped()
    }
    fn format(&self) -> Format {
        self.source.format()
    }
    fn declared_pages(&self) -> Option<u64> {
        self.source.declared_pages()
    }
    fn next_access(&self) -> Option<crate::record::NextAccess> {
        self.source.next_access()
    }
}
