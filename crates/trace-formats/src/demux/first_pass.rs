//! The first pass over a trace: what it finds ([`TraceSummary`], and for a replay its first
//! time, [`FirstPass`]), read from the trace or taken from a native trace's summary frame,
//! and the records a short trace's pass keeps for its replays.
//!
//! Memory grows with the number of threads (and, for [`summarize`], of distinct pages),
//! never with the number of records, except for the records a pass is asked to keep, at
//! most [`super::KEPT_RECORDS_MAX`].

use super::distinct::DistinctPages;
use super::thread_key;
use crate::error::FormatError;
use crate::format::Format;
use crate::lines::IdHasher;
use crate::native::StoredSummary;
use crate::record::{Record, RecordSource, SkipCounts};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// What a pass over a trace found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSummary {
    /// The trace's format.
    pub format: Format,
    /// Records read.
    pub records: u64,
    /// Threads as `(pid, tid, records)`, ordered by pid then tid.
    pub tasks: Vec<(u32, u32, u64)>,
    /// Distinct pages touched, counted per address space (pid); `None` from the first
    /// pass of a replay ([`FirstPass`]), which has no use for them and skips the count, the
    /// costliest part of that pass.
    pub distinct_pages: Option<u64>,
    /// The lowest page touched (0 without records).
    pub first_page: u64,
    /// The highest page touched (0 without records).
    pub last_page: u64,
    /// Time from the earliest to the latest record, when records carry time.
    pub time_span_ns: Option<u64>,
    /// Read records.
    pub reads: u64,
    /// Write records.
    pub writes: u64,
    /// What the reader skipped, by reason.
    pub skipped: SkipCounts,
    /// Pages the trace's header declares for its address space (text `pages=N`), if any.
    pub declared_pages: Option<u64>,
}

/// Reads `source` to its end and summarises it; stops at the first error.
///
/// Memory grows with the number of threads and of distinct pages, never with the number of
/// records.
pub fn summarize(source: &mut dyn RecordSource) -> Result<TraceSummary, FormatError> {
    read_pass(source, 0, DistinctCount::Counted).map(|first| first.summary)
}

/// Whether a pass counts the distinct pages, the costliest part of a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DistinctCount {
    /// Counted, for [`summarize`].
    Counted,
    /// Skipped, for a replay's first pass, which has no use for them.
    Skipped,
}

/// What the first pass of a replay found: the trace's summary, its first time and, when
/// asked for and the trace has at most [`super::KEPT_RECORDS_MAX`] records, the records. A
/// caller that replays one trace several times keeps it and builds each replay's tasks
/// from it ([`super::FirstPassSource::Shared`]), so that the trace is read once.
#[derive(Clone, Debug)]
pub struct FirstPass {
    summary: TraceSummary,
    /// The trace's first time, `None` for an untimed trace.
    pub(super) origin_ns: Option<u64>,
    /// The records, in the pass's own batches, when it kept them.
    pub(super) records: Option<Arc<Vec<Vec<Record>>>>,
}

impl FirstPass {
    /// The trace's summary.
    pub fn summary(&self) -> &TraceSummary {
        &self.summary
    }

    /// The trace's summary, the rest dropped.
    pub fn into_summary(self) -> TraceSummary {
        self.summary
    }

    /// Reads `source` to its end, keeping its records when it has at most
    /// `kept_records_max` of them and its format no next-access field.
    pub(super) fn read(
        source: &mut dyn RecordSource,
        kept_records_max: usize,
    ) -> Result<FirstPass, FormatError> {
        read_pass(source, kept_records_max, DistinctCount::Skipped)
    }

    /// The stand-in for the first pass of a trace of one untimed thread, pid 0, tid 0,
    /// whose replay counts it as it reads it: that thread, no count and no time.
    pub(super) fn uncounted(format: Format) -> FirstPass {
        let summary = TraceSummary {
            format,
            records: 0,
            tasks: vec![(0, 0, 0)],
            distinct_pages: None,
            first_page: 0,
            last_page: 0,
            time_span_ns: None,
            reads: 0,
            writes: 0,
            skipped: SkipCounts::default(),
            declared_pages: None,
        };
        FirstPass { summary, origin_ns: None, records: None }
    }
}

/// What the summary frame of a native trace says the first pass would find over `rounds`
/// readings of the trace back to back (`--repeat`): one reading's counts times `rounds`.
/// Distinct pages are not counted, as in any replay's first pass; the replay checks each
/// task's count and the trace's first time as it reads the records.
#[derive(Clone, Debug)]
pub struct StoredRounds {
    summary: StoredSummary,
    rounds: u32,
}

impl StoredRounds {
    /// The frame `stored` standing in for `rounds` readings of its trace; `None` for a
    /// timed trace read more than once, whose later rounds are shifted in time: its first
    /// pass must read them.
    pub fn new(stored: StoredSummary, rounds: u32) -> Option<StoredRounds> {
        if rounds != 1 && stored.time_range.is_some() {
            return None;
        }
        Some(StoredRounds { summary: stored, rounds })
    }

    /// The first pass the frame stands in for.
    pub(super) fn first_pass(&self) -> FirstPass {
        let stored = &self.summary;
        let n = u64::from(self.rounds);
        let mut tasks: Vec<(u32, u32, u64)> =
            stored.tasks.iter().map(|&(pid, tid, records)| (pid, tid, records.saturating_mul(n))).collect();
        tasks.sort_unstable();
        let summary = TraceSummary {
            format: Format::Native,
            records: stored.records.saturating_mul(n),
            tasks,
            distinct_pages: None,
            first_page: stored.page_range.0,
            last_page: stored.page_range.1,
            time_span_ns: stored.time_range.map(|(first, last)| last - first),
            reads: stored.reads.saturating_mul(n),
            writes: (stored.records - stored.reads).saturating_mul(n),
            skipped: SkipCounts::default(),
            declared_pages: None,
        };
        FirstPass { summary, origin_ns: stored.time_range.map(|(first, _)| first), records: None }
    }
}

/// Records the first pass reads at once.
const SUMMARY_BATCH_RECORDS: usize = crate::readahead::BATCH_RECORDS;

/// [`summarize`], also finding the earliest time seen and, when the trace has at most
/// `keep_max` records and its format no next-access field, the records; distinct pages
/// are counted only when `distinct` says so.
fn read_pass(
    source: &mut dyn RecordSource,
    keep_max: usize,
    distinct: DistinctCount,
) -> Result<FirstPass, FormatError> {
    // The batches themselves are kept, not copied.
    let mut kept: Option<Vec<Vec<Record>>> = (keep_max > 0).then(Vec::new);
    let mut n_kept = 0usize;
    let mut tally = Tally::new(distinct);
    let mut batch = Vec::with_capacity(SUMMARY_BATCH_RECORDS);
    loop {
        batch.clear();
        source.next_records(&mut batch, SUMMARY_BATCH_RECORDS)?;
        let full = batch.len() == SUMMARY_BATCH_RECORDS;
        if kept.is_some() && (n_kept + batch.len() > keep_max || source.next_access().is_some()) {
            kept = None;
        }
        let batch_ref = match &mut kept {
            Some(chunks) if !batch.is_empty() => {
                n_kept += batch.len();
                chunks.push(std::mem::replace(&mut batch, Vec::with_capacity(SUMMARY_BATCH_RECORDS)));
                chunks.last().expect("just pushed")
            }
            _ => &batch,
        };
        tally.add(batch_ref);
        if !full {
            break;
        }
    }
    Ok(tally.finish(source, kept.map(Arc::new)))
}

/// What a pass has counted of the records it read so far: what [`TraceSummary`] says and
/// the earliest time.
pub(super) struct Tally {
    records: u64,
    reads: u64,
    threads: HashMap<u64, u64, BuildHasherDefault<IdHasher>>,
    /// Consecutive records of one thread are counted together: a run costs one map update.
    run: Option<(u64, u64)>,
    /// Distinct pages, when counted.
    pages: Option<DistinctPages>,
    page_lo: u64,
    page_hi: u64,
    time_lo: u64,
    time_hi: u64,
    timed: bool,
}

impl Tally {
    pub(super) fn new(distinct: DistinctCount) -> Tally {
        Tally {
            records: 0,
            reads: 0,
            threads: HashMap::default(),
            run: None,
            pages: match distinct {
                DistinctCount::Counted => Some(DistinctPages::default()),
                DistinctCount::Skipped => None,
            },
            page_lo: u64::MAX,
            page_hi: 0,
            time_lo: u64::MAX,
            time_hi: 0,
            timed: false,
        }
    }

    /// Counts `records`, the next ones of the trace.
    pub(super) fn add(&mut self, records: &[Record]) {
        for record in records {
            self.records += 1;
            self.reads += u64::from(!record.write);
            let key = thread_key(record);
            match &mut self.run {
                Some((run_key, n_run)) if *run_key == key => *n_run += 1,
                _ => {
                    if let Some((run_key, n_run)) = self.run.replace((key, 1)) {
                        *self.threads.entry(run_key).or_insert(0) += n_run;
                    }
                }
            }
            if let Some(pages) = &mut self.pages {
                pages.insert(record.pid, record.page);
            }
            self.page_lo = self.page_lo.min(record.page);
            self.page_hi = self.page_hi.max(record.page);
            if let Some(time_ns) = record.time_ns {
                self.timed = true;
                self.time_lo = self.time_lo.min(time_ns);
                self.time_hi = self.time_hi.max(time_ns);
            }
        }
    }

    /// The pass over `source`, which has reached its end, with the records it kept.
    pub(super) fn finish(
        mut self,
        source: &dyn RecordSource,
        kept: Option<Arc<Vec<Vec<Record>>>>,
    ) -> FirstPass {
        if let Some((run_key, n_run)) = self.run {
            *self.threads.entry(run_key).or_insert(0) += n_run;
        }
        let records = self.records;
        let time_range = self.timed.then_some((self.time_lo, self.time_hi));
        let mut tasks: Vec<(u32, u32, u64)> =
            self.threads.into_iter().map(|(key, n)| ((key >> 32) as u32, key as u32, n)).collect();
        tasks.sort_unstable();
        let (first_page, last_page) = if records > 0 { (self.page_lo, self.page_hi) } else { (0, 0) };
        let summary = TraceSummary {
            format: source.format(),
            records,
            tasks,
            distinct_pages: self.pages.map(|pages| pages.count()),
            first_page,
            last_page,
            time_span_ns: time_range.map(|(lo, hi)| hi - lo),
            reads: self.reads,
            writes: records - self.reads,
            skipped: source.skipped().clone(),
            declared_pages: source.declared_pages(),
        };
        FirstPass { summary, origin_ns: time_range.map(|(lo, _)| lo), records: kept }
    }
}

/// The records a first pass kept, read again from memory.
#[derive(Clone)]
pub(super) struct Kept {
    /// The first pass's batches, in order.
    records: Arc<Vec<Vec<Record>>>,
    /// The next record: its batch and its place in it.
    chunk: usize,
    at: usize,
    skipped: SkipCounts,
    format: Format,
    declared_pages: Option<u64>,
}

impl Kept {
    /// The records `first` kept, from the first, read as its trace would be.
    pub(super) fn of(first: &FirstPass) -> Option<Kept> {
        let records = Arc::clone(first.records.as_ref()?);
        let summary = &first.summary;
        Some(Kept {
            records,
            chunk: 0,
            at: 0,
            skipped: summary.skipped.clone(),
            format: summary.format,
            declared_pages: summary.declared_pages,
        })
    }
}

impl RecordSource for Kept {
    fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        while let Some(chunk) = self.records.get(self.chunk) {
            if let Some(&record) = chunk.get(self.at) {
                self.at += 1;
                return Ok(Some(record));
            }
            (self.chunk, self.at) = (self.chunk + 1, 0);
        }
        Ok(None)
    }
    fn next_records(&mut self, out: &mut Vec<Record>, n_max: usize) -> Result<(), FormatError> {
        let mut wanted = n_max;
        while wanted > 0 {
            let Some(chunk) = self.records.get(self.chunk) else { break };
            let end = (self.at + wanted).min(chunk.len());
            out.extend_from_slice(&chunk[self.at..end]);
            wanted -= end - self.at;
            self.at = end;
            if self.at == chunk.len() {
                (self.chunk, self.at) = (self.chunk + 1, 0);
            }
        }
        Ok(())
    }
    fn skipped(&self) -> &SkipCounts {
        &self.skipped
    }
    fn format(&self) -> Format {
        self.format
    }
    fn declared_pages(&self) -> Option<u64> {
        self.declared_pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_records_read_one_at_a_time_as_in_batches() {
        let record = |page| Record { pid: 0, tid: 0, time_ns: None, page, write: false };
        let chunks = vec![vec![record(1), record(2)], vec![record(3)], vec![record(4), record(5)]];
        let kept = || Kept {
            records: Arc::new(chunks.clone()),
            chunk: 0,
            at: 0,
            skipped: SkipCounts::default(),
            format: Format::Text,
            declared_pages: None,
        };
        let mut one_by_one = Vec::new();
        let mut source = kept();
        while let Some(record) = source.next_record().unwrap() {
            one_by_one.push(record.page);
        }
        let mut batched = Vec::new();
        let mut source = kept();
        let mut records = Vec::new();
        loop {
            records.clear();
            source.next_records(&mut records, 2).unwrap();
            batched.extend(records.iter().map(|r| r.page));
            if records.len() < 2 {
                break;
            }
        }
        assert_eq!(
            (one_by_one.as_slice(), batched.as_slice()),
            ([1, 2, 3, 4, 5].as_slice(), [1, 2, 3, 4, 5].as_slice())
        );
    }
}
