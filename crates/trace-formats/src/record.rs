//! The common record every format decodes to.

use crate::error::FormatError;
use std::collections::BTreeMap;

/// One page fault or memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Process id (address space); 0 when the format has none.
    pub pid: u32,
    /// Thread id (task); equal to `pid` when the format has none.
    pub tid: u32,
    /// Time in nanoseconds since the trace's own epoch, when the format records time.
    pub time_ns: Option<u64>,
    /// Virtual page number (address >> 12), or the page index for index-based formats.
    pub page: u64,
    /// A store (or a write fault).
    pub write: bool,
}

/// Lines or records skipped, by reason (other events in a perf file, bad lines in lenient
/// mode, instruction fetches when not wanted). Ordered, so reports are deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipCounts(pub BTreeMap<String, u64>);

impl SkipCounts {
    /// Counts one skip for `reason`.
    pub fn add(&mut self, reason: &str) {
        // Readers count skips per line, so the common case, a reason already counted,
        // allocates nothing.
        match self.0.get_mut(reason) {
            Some(count) => *count += 1,
            None => {
                self.0.insert(reason.to_string(), 1);
            }
        }
    }
    /// Total skipped.
    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }
}

/// When the request a record came from is made again, for formats that record it
/// (libCacheSim's `next_access_vtime`); what an OPT (Belady) policy needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextAccess {
    /// The request with this index, counted from the trace's first request (index 0).
    At(u64),
    /// The object is not requested again.
    Never,
}

/// A stream of records from one trace.
pub trait RecordSource: Send {
    /// The next record, `Ok(None)` at the end, or an error naming the line or offset.
    fn next_record(&mut self) -> Result<Option<Record>, FormatError>;
    /// Appends up to `n_max` records to `out`, fewer only at the end of the trace. On an
    /// error, the records before it stay appended and the error is returned: a caller hands
    /// those records out first. The default calls [`RecordSource::next_record`]; a reader
    /// whose records are cheap to decode overrides it to save a call per record.
    fn next_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<(), FormatError> {
        for _ in 0..n_max {
            match self.next_record()? {
                Some(record) => out.push(record),
                None => break,
            }
        }
        Ok(())
    }
    /// What was skipped so far.
    fn skipped(&self) -> &SkipCounts;
    /// The format being read.
    fn format(&self) -> crate::format::Format;
    /// The number of pages the trace's header declares for its address space (the text
    /// format's `pages=N`), if it declares one. Known once the source is open.
    fn declared_pages(&self) -> Option<u64> {
        None
    }
    /// When the request of the record last returned (the last one appended, after
    /// [`RecordSource::next_records`]) is made again, if the format records it; `None` for
    /// other formats, and before the first record and after the last.
    fn next_access(&self) -> Option<NextAccess> {
        None
    }
}
