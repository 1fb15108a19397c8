//! Turning one trace of many threads into engine tasks, one per thread.
//!
//! [`tasks`] reads the trace twice. A first streaming pass ([`summarize`]) finds the
//! threads (pid and tid pairs) and the trace's summary; a second pass, opened lazily when
//! the engine first asks a task for an access, feeds the tasks. A caller that replays one
//! trace several times runs the first pass once ([`first_pass`]) and builds each replay's
//! tasks from it ([`tasks_after`]); asked to, the first pass keeps the records of a trace
//! of at most [`KEPT_RECORDS_MAX`], which the replays then read from memory instead of
//! decoding the trace again. The threads of one process
//! share an address space (`TaskSpec::address_space` is the pid).
//!
//! A trace whose one thread is known before reading it (text, lackey, libCacheSim txt:
//! every record is pid 0, tid 0, untimed) needs no pass before its replay: [`solo_task_uncounted`] builds its task
//! at once, and [`counting`] counts the records as the replay reads them, leaving what the
//! first pass would have found once the trace has been read to its end.
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

use crate::access_ahead::AccessesAhead;
use crate::error::FormatError;
use crate::format::Format;
use crate::lines::IdHasher;
use crate::pace::Pace;
use crate::record::{Record, RecordSource, SkipCounts};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex};
use swapsim_core::{Access, AccessSource, TaskSpec, TraceError, VirtPage};

/// Records queued for other tasks before the task with the longest queue is detached.
pub const QUEUED_RECORDS_MAX: usize = 1 << 20;

/// The most records a first pass asked to keep them keeps (40 bytes each, 40 MiB in all). A
/// longer trace, or one whose format records next accesses, is decoded again instead.
pub const KEPT_RECORDS_MAX: usize = 1 << 20;

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
    /// pass of a replay ([`first_pass`], [`tasks`]), which has no use for them and skips
    /// the count, the costliest part of that pass.
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
    summarize_with_origin(source, 0, true).map(|first| first.summary)
}

/// Records the first pass reads at once.
const SUMMARY_BATCH_RECORDS: usize = crate::readahead::BATCH_RECORDS;

/// [`summarize`], also finding the earliest time seen and, when the trace has at most
/// `keep_max` records and its format no next-access field, the records; distinct pages
/// are counted only with `count_pages`.
fn summarize_with_origin(
    source: &mut dyn RecordSource,
    keep_max: usize,
    count_pages: bool,
) -> Result<FirstPass, FormatError> {
    // The batches themselves are kept, not copied.
    let mut kept: Option<Vec<Vec<Record>>> = (keep_max > 0).then(Vec::new);
    let mut n_kept = 0usize;
    let mut tally = Tally::new(count_pages);
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
struct Tally {
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
    fn new(count_pages: bool) -> Tally {
        Tally {
            records: 0,
            reads: 0,
            threads: HashMap::default(),
            run: None,
            pages: count_pages.then(DistinctPages::default),
            page_lo: u64::MAX,
            page_hi: 0,
            time_lo: u64::MAX,
            time_hi: 0,
            timed: false,
        }
    }

    /// Counts `records`, the next ones of the trace.
    fn add(&mut self, records: &[Record]) {
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
    fn finish(mut self, source: &dyn RecordSource, kept: Option<Arc<Vec<Vec<Record>>>>) -> FirstPass {
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
struct Kept {
    /// The first pass's batches, in order.
    records: Arc<Vec<Vec<Record>>>,
    /// The next record: its batch and its place in it.
    chunk: usize,
    at: usize,
    skipped: SkipCounts,
    format: Format,
    declared_pages: Option<u64>,
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

fn thread_key(record: &Record) -> u64 {
    (u64::from(record.pid) << 32) | u64::from(record.tid)
}

/// Pages per chunk of [`DistinctPages`]: one bit each in a `u64`.
const CHUNK_PAGES: u64 = 64;

/// A set of `(pid, page)` pairs, counted as they are inserted, kept as one 64-bit bitmap per
/// chunk of 64 aligned pages that holds at least one of them.
///
/// A chunk costs its bitmap (8 bytes) and a hash map entry from `(pid, chunk)` to the
/// bitmap's index (24 bytes, plus the table's spare capacity), so memory grows with the
/// distinct pages, never with the range they span: at worst, when every page has a chunk of
/// its own, 40 to 70 bytes per page, and under a byte per page when pages cluster, as they
/// do in real traces. Small chunks keep that worst case low, and the one-chunk cache keeps
/// runs through a chunk off the map.
#[derive(Default)]
struct DistinctPages {
    /// Index into `bitmaps` by `(pid, page / CHUNK_PAGES)`.
    chunk_idx_of: HashMap<(u32, u64), usize, BuildHasherDefault<IdHasher>>,
    bitmaps: Vec<u64>,
    /// The chunk of the previous insertion and its index, once there was one.
    last: Option<((u32, u64), usize)>,
    count: u64,
}

impl DistinctPages {
    #[inline]
    fn insert(&mut self, pid: u32, page: u64) {
        let key = (pid, page / CHUNK_PAGES);
        let chunk_idx = match self.last {
            Some((last_key, chunk_idx)) if last_key == key => chunk_idx,
            _ => {
                let n_chunks = self.bitmaps.len();
                let chunk_idx = *self.chunk_idx_of.entry(key).or_insert(n_chunks);
                if chunk_idx == n_chunks {
                    self.bitmaps.push(0);
                }
                self.last = Some((key, chunk_idx));
                chunk_idx
            }
        };
        let bit = 1u64 << (page % CHUNK_PAGES);
        let bitmap = &mut self.bitmaps[chunk_idx];
        self.count += u64::from(*bitmap & bit == 0);
        *bitmap |= bit;
    }

    fn count(&self) -> u64 {
        self.count
    }
}

/// The function that opens the trace afresh.
type OpenFn = dyn Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync;

/// The most records a task takes at once: from its queue under one lock, or from the trace
/// when it reads the trace itself. The shared reader reads the trace in batches of the same
/// size. [`tasks`] lowers it when there are many threads, so that the records held in the
/// tasks' batches never outgrow [`QUEUED_RECORDS_MAX`] in total.
const BATCH_RECORDS_MAX: usize = 256;

/// Reads the trace once to find its threads, and returns one task per thread, ordered by
/// pid then tid, named `"{name}:{pid}/{tid}"`, with the pid as address space and no
/// declared regions (the engine maps implicit regions on first touch), plus the summary of
/// the first pass. `open` is called again, lazily, for the pass that feeds the tasks (and
/// once more for each detached task; see the module doc). Errors of later passes reach the
/// engine through the tasks' access streams as [`TraceError::Malformed`].
pub fn tasks(
    open: impl Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync + 'static,
    name: &str,
    pace: Pace,
) -> Result<(Vec<TaskSpec>, TraceSummary), FormatError> {
    tasks_with_limits(Arc::new(open), name, pace, LIMITS)
}

/// The bounds [`tasks`] works within; tests lower them to exercise detaching and batching.
#[derive(Clone, Copy, Debug)]
struct Limits {
    queued_records_max: usize,
    batch_records_max: usize,
    /// The records the task of a one-thread trace takes at once.
    solo_batch_records: usize,
    kept_records_max: usize,
}

/// The bounds [`tasks`] and [`tasks_after`] use. Keeping records is [`first_pass`]'s to
/// ask for, so [`tasks`] keeps none.
const LIMITS: Limits = Limits {
    queued_records_max: QUEUED_RECORDS_MAX,
    batch_records_max: BATCH_RECORDS_MAX,
    solo_batch_records: crate::readahead::BATCH_RECORDS,
    kept_records_max: 0,
};

/// What the first pass of [`tasks`] found ([`first_pass`]): the trace's summary and, when
/// asked for and the trace has at most [`KEPT_RECORDS_MAX`] records, the records. A caller
/// that replays one trace several times keeps it and builds each replay's tasks from it
/// ([`tasks_after`]), so that the trace is read once.
#[derive(Clone, Debug)]
pub struct FirstPass {
    summary: TraceSummary,
    origin_ns: Option<u64>,
    records: Option<Arc<Vec<Vec<Record>>>>,
}

impl FirstPass {
    /// The trace's summary.
    pub fn summary(&self) -> &TraceSummary {
        &self.summary
    }
}

impl FirstPass {
    /// What the first pass would find in a native trace, taken from the trace's summary
    /// frame instead of read from its records ([`crate::native::stored_summary`]). Distinct
    /// pages are not counted, as in any replay's first pass; the replay checks each task's
    /// count and the absence of times as it reads the records.
    pub fn from_stored(stored: &crate::native::StoredSummary) -> FirstPass {
        let mut tasks = stored.tasks.clone();
        tasks.sort_unstable();
        let summary = TraceSummary {
            format: Format::Native,
            records: stored.records,
            tasks,
            distinct_pages: None,
            first_page: stored.page_range.0,
            last_page: stored.page_range.1,
            time_span_ns: stored.time_range.map(|(first, last)| last - first),
            reads: stored.reads,
            writes: stored.records - stored.reads,
            skipped: SkipCounts::default(),
            declared_pages: None,
        };
        FirstPass { summary, origin_ns: stored.time_range.map(|(first, _)| first), records: None }
    }

    /// What the first pass would find in `rounds` readings of a native trace back to back
    /// (`--repeat`), from its summary frame: one reading's counts times `rounds`. `None`
    /// for a timed trace read more than once, whose later rounds are shifted in time: its
    /// first pass must read them.
    pub fn from_stored_rounds(stored: &crate::native::StoredSummary, rounds: u32) -> Option<FirstPass> {
        if rounds != 1 && stored.time_range.is_some() {
            return None;
        }
        let mut first = FirstPass::from_stored(stored);
        let n = u64::from(rounds);
        let summary = &mut first.summary;
        summary.records *= n;
        summary.reads *= n;
        summary.writes *= n;
        for (_, _, records) in &mut summary.tasks {
            *records *= n;
        }
        Some(first)
    }
}

/// The first pass of [`tasks`] over the trace `open` opens; with `keep`, it keeps the
/// records of a trace short enough ([`KEPT_RECORDS_MAX`]) for the replays to read.
pub fn first_pass(
    open: &dyn Fn() -> Result<Box<dyn RecordSource>, FormatError>,
    keep: bool,
) -> Result<FirstPass, FormatError> {
    first_pass_keeping(open, if keep { KEPT_RECORDS_MAX } else { 0 })
}

fn first_pass_keeping(
    open: &dyn Fn() -> Result<Box<dyn RecordSource>, FormatError>,
    kept_records_max: usize,
) -> Result<FirstPass, FormatError> {
    summarize_with_origin(&mut *open()?, kept_records_max, false)
}

/// The tasks of [`tasks`], built from its first pass `first` over the trace `open` opens.
pub fn tasks_after(
    first: &FirstPass,
    open: impl Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync + 'static,
    name: &str,
    pace: Pace,
) -> Result<(Vec<TaskSpec>, TraceSummary), FormatError> {
    Ok(build_tasks(first, Arc::new(open), name, pace, LIMITS, true))
}

/// The one task of a one-thread trace (pid 0, tid 0, as every record of the text, lackey
/// and libCacheSim txt formats has), built without a first pass: the replay starts at once, and counts what a first
/// pass would find as it reads ([`counting`]). The caller knows the trace has one thread
/// and at least one record; the task is named `"{name}:0/0"` and reads the trace `open`
/// opens, as a task of [`tasks_after`] would.
pub fn solo_task_uncounted(
    open: impl Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync + 'static,
    name: &str,
    pace: Pace,
    format: Format,
) -> TaskSpec {
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
    let first = FirstPass { summary, origin_ns: None, records: None };
    let (mut tasks, _) = build_tasks(&first, Arc::new(open), name, pace, LIMITS, false);
    tasks.pop().expect("one thread, one task")
}

/// Where a pass that counts the records it hands on ([`counting`]) leaves what a first pass
/// would have found, once it has read the trace to its end or to an error; `None` before.
pub type PassSlot = Arc<Mutex<Option<Result<FirstPass, FormatError>>>>;

/// `source`, yielding the same records and errors, and counting them as the first pass does
/// ([`first_pass`], without keeping records): when the stream ends, or fails, the result is
/// left in `slot`. A replay whose task reads the whole trace through it needs no pass before
/// it; one that stops early leaves `slot` empty.
pub fn counting(source: Box<dyn RecordSource>, slot: PassSlot) -> Box<dyn RecordSource> {
    Box::new(Counting { source, tally: Some(Tally::new(false)), slot })
}

/// See [`counting`].
struct Counting {
    source: Box<dyn RecordSource>,
    /// `None` once the result is in `slot`.
    tally: Option<Tally>,
    slot: PassSlot,
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
            *self.slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(result);
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

fn tasks_with_limits(
    open: Arc<OpenFn>,
    name: &str,
    pace: Pace,
    limits: Limits,
) -> Result<(Vec<TaskSpec>, TraceSummary), FormatError> {
    let first = first_pass_keeping(&*open, limits.kept_records_max)?;
    Ok(build_tasks(&first, open, name, pace, limits, true))
}

/// The tasks of the threads `first` found, reading the trace `open` opens. With `counted`,
/// each task checks that the replay finds as many records of its thread as `first` counted.
fn build_tasks(
    first: &FirstPass,
    open: Arc<OpenFn>,
    name: &str,
    pace: Pace,
    limits: Limits,
    counted: bool,
) -> (Vec<TaskSpec>, TraceSummary) {
    let FirstPass { summary, origin_ns, records } = first.clone();
    let open: Arc<OpenFn> = match records {
        Some(records) => {
            let (skipped, format, declared_pages) =
                (summary.skipped.clone(), summary.format, summary.declared_pages);
            Arc::new(move || -> Result<Box<dyn RecordSource>, FormatError> {
                let (records, skipped) = (Arc::clone(&records), skipped.clone());
                Ok(Box::new(Kept { records, chunk: 0, at: 0, skipped, format, declared_pages }))
            })
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
        Arc::new(Mutex::new(Demux {
            open: Arc::clone(&open),
            source: None,
            index_of,
            last_owner: None,
            queues: (0..n_tasks).map(|_| VecDeque::new()).collect(),
            detached: vec![false; n_tasks],
            queued: 0,
            queued_records_max: limits.queued_records_max,
            scratch: Vec::new(),
            finished: false,
            failed: None,
            origin_ns,
            earliest_ns: None,
        }))
    });
    let tasks = summary
        .tasks
        .iter()
        .enumerate()
        .map(|(index, &(pid, tid, expected))| {
            let feed = match &shared {
                Some(shared) => Feed::Shared { shared: Arc::clone(shared), index },
                None => Feed::Solo { source: None },
            };
            let source = ThreadSource {
                feed,
                open: Arc::clone(&open),
                key: (u64::from(pid) << 32) | u64::from(tid),
                pace,
                previous_ns: origin_ns.unwrap_or(0),
                origin_ns,
                earliest_ns: None,
                expected: counted.then_some(expected),
                n_taken: 0,
                n_received: 0,
                batch: Vec::new(),
                batch_idx: 0,
                batch_records,
                ended: false,
                failed: None,
            };
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
        .collect();
    (tasks, summary)
}

/// The error that ended a stream, kept to be handed out again.
#[derive(Clone, Debug)]
struct Failure {
    line: u64,
    column: Option<u64>,
    message: String,
}

impl Failure {
    fn of(err: FormatError) -> Failure {
        match err {
            FormatError::Line { line, column, message } => Failure { line, column, message },
            // Errors without a line get line 0 and say where they are in the message.
            other => Failure { line: 0, column: None, message: other.to_string() },
        }
    }

    fn to_error(&self) -> TraceError {
        TraceError::Malformed { line: self.line, column: self.column, message: self.message.clone() }
    }
}

/// The earlier of `earliest` and the times of `records`.
fn earliest_time(earliest: Option<u64>, records: &[Record]) -> Option<u64> {
    earliest.into_iter().chain(records.iter().filter_map(|r| r.time_ns)).min()
}

/// The error for a timed trace whose earliest record is not at the first time counted.
fn first_time_differs(earliest_ns: Option<u64>, origin_ns: u64) -> FormatError {
    let found = earliest_ns.map_or("none".to_string(), |t| format!("{t} ns"));
    disagrees(format!("the trace's first time is {found}, where {origin_ns} ns was counted"))
}

/// The error for a record of a thread the first pass did not see.
fn changed_trace(record: &Record) -> FormatError {
    FormatError::Changed(format!(
        "thread {}/{} was not in the first pass over the trace: the trace changed between passes",
        record.pid, record.tid
    ))
}

/// The error for a replay that disagrees with what was counted before it: `what` is
/// what the replay found, up to the words "before the replay".
fn disagrees(what: String) -> FormatError {
    FormatError::Changed(format!(
        "{what} before the replay (by the first pass, or a native trace's summary frame): the trace \
         changed, or its summary is wrong"
    ))
}

/// Task index by thread key, for the threads the first pass found.
type ThreadIndex = HashMap<u64, usize, BuildHasherDefault<IdHasher>>;

/// The reader shared by the tasks of one trace, with one queue per task.
struct Demux {
    open: Arc<OpenFn>,
    /// The second pass, opened on the first pull.
    source: Option<Box<dyn RecordSource>>,
    index_of: Arc<ThreadIndex>,
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

enum Pulled {
    /// Records were appended to the task's batch.
    Records,
    End,
    Detached,
}

impl Demux {
    /// Appends up to `n_max` next records of task `index` to `out`, which is empty: those
    /// queued for it, or else those of the next batches read from the trace, up to the first
    /// batch that holds one of its records. On an error, `out` keeps the task's records read
    /// before it, and the error comes with the next pull.
    fn pull(&mut self, index: usize, out: &mut Vec<Record>, n_max: usize) -> Result<Pulled, Failure> {
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

/// Where a task's records come from.
enum Feed {
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
struct ThreadSource {
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
    /// when no pass counted them before it ([`solo_task_uncounted`]).
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

impl ThreadSource {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::OpenOptions;
    use expect_test::{expect, Expect};
    use std::fmt::Write;
    use std::io::Cursor;

    const PERF: &str = "\
 app 100 [000] 10.000000: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6
 app 100/101 [001] 10.000250: exceptions:page_fault_user: address=0x2000 ip=0x0 error_code=0x4
 db 200 [002] 10.001000: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x4
 app 100 [000] 10.002000: exceptions:page_fault_user: address=0x3000 ip=0x0 error_code=0x4
 app 100/101 [001] 10.002000: exceptions:page_fault_user: address=0x1000 ip=0x0 error_code=0x6
 app 100/101 [001] 10.003500: sched:sched_switch: prev_comm=app
 app 100/101 [001] 10.004000: exceptions:page_fault_user: address=0x2000 ip=0x0 error_code=0x6
";

    fn opener(text: &'static str) -> Arc<OpenFn> {
        Arc::new(move || crate::open(Box::new(Cursor::new(text.as_bytes())), OpenOptions::default()))
    }

    #[test]
    fn a_one_thread_replay_finds_the_first_time_counted_before_it() {
        use crate::native::{stored_summary, NativeWriter};
        let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec");
        for (time_ns, page) in [(5, 3), (9, 4)] {
            let record = Record { pid: 1, tid: 1, time_ns: Some(time_ns), page, write: false };
            writer.write(&record).expect("a valid record");
        }
        let bytes: &'static [u8] = Box::leak(writer.finish().expect("writing to a Vec").into_boxed_slice());
        let open = move || crate::open(Box::new(Cursor::new(bytes)), OpenOptions::default());
        let stored = stored_summary(&mut Cursor::new(bytes)).expect("a valid frame").expect("a frame");
        let early = crate::native::StoredSummary { time_range: Some((4, 9)), ..stored.clone() };
        let mut rendered = String::new();
        for summary in [stored, early] {
            let (mut tasks, _) =
                tasks_after(&FirstPass::from_stored(&summary), open, "t", Pace::Timestamps).expect("tasks");
            for line in drain(&mut tasks, false).concat().lines() {
                writeln!(rendered, "{}", line.trim_start()).expect("writing to a string");
            }
        }
        expect![[r#"
              R 0x3 think 0
              R 0x4 think 4
              R 0x3 think 1
              R 0x4 think 4
              error: the trace's first time is 5 ns, where 4 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
        "#]]
        .assert_eq(&rendered);
    }

    #[test]
    fn a_replay_finds_what_was_counted_before_it_or_fails() {
        use crate::native::{stored_summary, NativeWriter};
        let mut writer = NativeWriter::new(Vec::new()).expect("writing to a Vec");
        for (tid, time_ns, page) in [(1, 5, 3), (2, 7, 4), (1, 9, 5)] {
            let record = Record { pid: 1, tid, time_ns: Some(time_ns), page, write: false };
            writer.write(&record).expect("a valid record");
        }
        let bytes: &'static [u8] = Box::leak(writer.finish().expect("writing to a Vec").into_boxed_slice());
        let open = move || crate::open(Box::new(Cursor::new(bytes)), OpenOptions::default());
        let stored = stored_summary(&mut Cursor::new(bytes)).expect("a valid frame").expect("a frame");
        let mut miscounted = stored.clone();
        miscounted.tasks[0].2 += 1;
        miscounted.records += 1;
        let untimed = crate::native::StoredSummary { time_range: None, ..stored.clone() };
        let late = crate::native::StoredSummary { time_range: Some((6, 9)), ..stored.clone() };
        let early = crate::native::StoredSummary { time_range: Some((4, 9)), ..stored.clone() };
        let mut rendered = String::new();
        for summary in [stored, miscounted, untimed, late, early] {
            let first = FirstPass::from_stored(&summary);
            let (mut tasks, _) = tasks_after(&first, open, "t", Pace::Timestamps).expect("tasks");
            let accesses = drain(&mut tasks, false).concat();
            for line in accesses.lines() {
                writeln!(rendered, "{}", line.trim_start()).expect("writing to a string");
            }
            rendered.push('\n');
        }
        expect![[r#"
            R 0x3 think 0
            R 0x5 think 4
            R 0x4 think 2

            R 0x3 think 0
            R 0x5 think 4
            error: thread 1/1 has 2 records, where 3 were counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
            R 0x4 think 2

            error: thread 1/1 has a record at 5 ns in a trace counted as untimed before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
            error: thread 1/2 has a record at 7 ns in a trace counted as untimed before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong

            error: thread 1/1 has a record at 5 ns, before the trace's first time, 6 ns, as counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
            R 0x4 think 1
            error: the trace's first time is 5 ns, where 6 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong

            R 0x3 think 1
            R 0x5 think 4
            error: the trace's first time is 5 ns, where 4 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong
            R 0x4 think 3
            error: the trace's first time is 5 ns, where 4 ns was counted before the replay (by the first pass, or a native trace's summary frame): the trace changed, or its summary is wrong

        "#]]
        .assert_eq(&rendered);
    }

    /// Drains every task, taking one access from each in turn (round robin) or each task to
    /// its end before the next (in order), and renders what each task received.
    fn drain(tasks: &mut [TaskSpec], round_robin: bool) -> Vec<String> {
        let mut out = vec![String::new(); tasks.len()];
        let mut done = vec![false; tasks.len()];
        while done.contains(&false) {
            for (index, task) in tasks.iter_mut().enumerate() {
                while !done[index] {
                    match task.accesses.next_access() {
                        Ok(Some(access)) => {
                            let operation = if access.write { "W" } else { "R" };
                            let think = access.think_ns.map_or("-".to_string(), |ns| ns.to_string());
                            writeln!(out[index], "  {operation} {:#x} think {think}", access.vpage.0)
                                .expect("writing to a string");
                        }
                        Ok(None) => done[index] = true,
                        Err(err) => {
                            writeln!(out[index], "  error: {err}").expect("writing to a string");
                            done[index] = true;
                        }
                    }
                    if round_robin {
                        break;
                    }
                }
            }
        }
        out
    }

    fn check(text: &'static str, pace: Pace, expect: Expect) {
        let limits = Limits { kept_records_max: 0, ..LIMITS };
        let (mut tasks, summary) = tasks_with_limits(opener(text), "t", pace, limits).expect("valid trace");
        let mut rendered = format!("{summary:?}\n");
        for task in &tasks {
            writeln!(rendered, "{} space {:?} regions {:?}", task.name, task.address_space, task.regions)
                .expect("writing to a string");
        }
        let received = drain(&mut tasks, true);
        for (index, accesses) in received.iter().enumerate() {
            writeln!(rendered, "task {index}:\n{accesses}").expect("writing to a string");
        }
        // Any consumption order and batch size, with or without detaching, read again or
        // kept from the first pass, gives each task the same stream.
        for queued_records_max in [0, 1, 2, QUEUED_RECORDS_MAX] {
            for batch_records_max in [1, 2, 3, BATCH_RECORDS_MAX] {
                for (round_robin, kept_records_max) in
                    [(false, 0), (true, 0), (false, 3), (true, KEPT_RECORDS_MAX)]
                {
                    let limits = Limits {
                        queued_records_max,
                        batch_records_max,
                        solo_batch_records: batch_records_max,
                        kept_records_max,
                    };
                    let (mut tasks, _) =
                        tasks_with_limits(opener(text), "t", pace, limits).expect("valid trace");
                    assert_eq!(
                        drain(&mut tasks, round_robin),
                        received,
                        "{limits:?}, round robin {round_robin}"
                    );
                }
            }
        }
        expect.assert_eq(&rendered);
    }

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

    #[test]
    fn a_short_trace_is_decoded_once_and_a_longer_one_twice() {
        let text = "R 1\nW 2\nR 1\nR 3\n";
        for (kept_records_max, opens) in [(4, 1), (3, 2), (0, 2)] {
            let n_opens = Arc::new(std::sync::atomic::AtomicU64::new(0));
            let counted = Arc::clone(&n_opens);
            let open: Arc<OpenFn> = Arc::new(move || {
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                crate::open(Box::new(Cursor::new(text.as_bytes())), OpenOptions::default())
            });
            let limits = Limits { batch_records_max: 2, solo_batch_records: 2, kept_records_max, ..LIMITS };
            let (mut tasks, _) = tasks_with_limits(open, "t", Pace::Cpu, limits).expect("valid trace");
            let streams = drain(&mut tasks, false);
            assert_eq!(streams.len(), 1);
            assert_eq!(streams[0].lines().count(), 4, "{streams:?}");
            assert_eq!(
                n_opens.load(std::sync::atomic::Ordering::Relaxed),
                opens,
                "keeping at most {kept_records_max}"
            );
        }
    }

    #[test]
    fn threads_of_a_process_share_an_address_space_and_keep_their_order() {
        check(
            PERF,
            Pace::Timestamps,
            expect![[r#"
                TraceSummary { format: PerfScript, records: 6, tasks: [(100, 100, 2), (100, 101, 3), (200, 200, 1)], distinct_pages: None, first_page: 1, last_page: 3, time_span_ns: Some(4000000), reads: 3, writes: 3, skipped: SkipCounts({"other event: sched:sched_switch": 1}), declared_pages: None }
                t:100/100 space Some(100) regions []
                t:100/101 space Some(100) regions []
                t:200/200 space Some(200) regions []
                task 0:
                  W 0x1 think 0
                  R 0x3 think 2000000

                task 1:
                  R 0x2 think 250000
                  W 0x1 think 1750000
                  W 0x2 think 2000000

                task 2:
                  R 0x1 think 1000000

            "#]],
        );
    }

    #[test]
    fn a_text_header_declares_the_region_in_the_summary() {
        check(
            "# pages=8\nR 1\n",
            Pace::Cpu,
            expect![[r#"
                TraceSummary { format: Text, records: 1, tasks: [(0, 0, 1)], distinct_pages: None, first_page: 1, last_page: 1, time_span_ns: None, reads: 1, writes: 0, skipped: SkipCounts({}), declared_pages: Some(8) }
                t:0/0 space Some(0) regions []
                task 0:
                  R 0x1 think -

            "#]],
        );
    }

    #[test]
    fn cpu_cost_pacing_drops_times() {
        check(
            "R 1\nW 2\n",
            Pace::Cpu,
            expect![[r#"
                TraceSummary { format: Text, records: 2, tasks: [(0, 0, 2)], distinct_pages: None, first_page: 1, last_page: 2, time_span_ns: None, reads: 1, writes: 1, skipped: SkipCounts({}), declared_pages: None }
                t:0/0 space Some(0) regions []
                task 0:
                  R 0x1 think -
                  W 0x2 think -

            "#]],
        );
        // Records without time never carry a think time.
        check(
            " L 1000,4\n",
            Pace::Timestamps,
            expect![[r#"
                TraceSummary { format: Lackey, records: 1, tasks: [(0, 0, 1)], distinct_pages: None, first_page: 1, last_page: 1, time_span_ns: None, reads: 1, writes: 0, skipped: SkipCounts({}), declared_pages: None }
                t:0/0 space Some(0) regions []
                task 0:
                  R 0x1 think -

            "#]],
        );
    }

    #[test]
    fn errors_of_the_first_pass_fail_and_of_later_passes_reach_every_task() {
        let err =
            tasks(|| crate::open(Box::new(Cursor::new(b"R 1\nX\n")), OpenOptions::default()), "t", Pace::Cpu)
                .expect_err("line 2 is bad");
        assert_eq!(err.to_string(), "line 2, column 1: expected R or W, found \"X\"");

        // The trace changes between the passes: the second pass fails, after the records
        // before the failure, for every task.
        check_changed(
            &[fault(1, 0x1000), fault(2, 0x1000)],
            &[fault(1, 0x1000), fault(2, 0x1000), "??"],
            expect![[r#"
                [
                    "  R 0x1 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
                    "  R 0x1 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
                ]
            "#]],
        );
        check_changed(
            &[fault(1, 0x1000), fault(2, 0x1000)],
            &[fault(1, 0x1000), fault(2, 0x2000), fault(1, 0x3000), fault(3, 0x1000), fault(1, 0x4000)],
            expect![[r#"
                [
                    "  R 0x1 think 0\n  R 0x3 think 0\n  error: thread 1/3 was not in the first pass over the trace: the trace changed between passes\n",
                    "  R 0x2 think 0\n  error: thread 1/3 was not in the first pass over the trace: the trace changed between passes\n",
                ]
            "#]],
        );
        // The same with one thread, which reads the trace without the demultiplexer.
        check_changed(
            &[fault(1, 0x1000)],
            &[fault(1, 0x1000), fault(1, 0x2000), "??"],
            expect![[r#"
                [
                    "  R 0x1 think 0\n  R 0x2 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
                ]
            "#]],
        );
        check_changed(
            &[fault(1, 0x1000)],
            &[fault(1, 0x1000), fault(1, 0x2000), fault(2, 0x1000), fault(1, 0x3000)],
            expect![[r#"
                [
                    "  R 0x1 think 0\n  R 0x2 think 0\n  error: thread 1/2 was not in the first pass over the trace: the trace changed between passes\n",
                ]
            "#]],
        );
    }

    /// A perf script line: a read fault of thread `tid` of process 1 at `address`, at 1 s.
    fn fault(tid: u32, address: u64) -> &'static str {
        let line =
            format!("p 1/{tid} [0] 1.0: exceptions:page_fault_user: address={address:#x} error_code=0x0");
        Box::leak(line.into_boxed_str())
    }

    /// Replays a trace whose first pass reads `first` and whose later passes read `later`,
    /// under every batch size and queue limit and both consumption orders, checks that each
    /// gives the same streams and compares them with `expect`.
    fn check_changed(first: &[&'static str], later: &[&'static str], expect: Expect) {
        let text = |lines: &[&str]| -> &'static [u8] {
            Box::leak(format!("{}\n", lines.join("\n")).into_bytes().into_boxed_slice())
        };
        let (first, later) = (text(first), text(later));
        let mut received = None;
        for queued_records_max in [0, 1, 2, QUEUED_RECORDS_MAX] {
            for batch_records_max in [1, 2, 3, BATCH_RECORDS_MAX] {
                for round_robin in [false, true] {
                    let n_opens = Arc::new(std::sync::atomic::AtomicU64::new(0));
                    let open: Arc<OpenFn> = Arc::new(move || {
                        let text = match n_opens.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
                            0 => first,
                            _ => later,
                        };
                        crate::open(Box::new(Cursor::new(text)), OpenOptions::default())
                    });
                    // A kept trace is read once, so only a streamed one can change.
                    let limits = Limits {
                        queued_records_max,
                        batch_records_max,
                        solo_batch_records: batch_records_max,
                        kept_records_max: 0,
                    };
                    let (mut tasks, _) = tasks_with_limits(open, "t", Pace::Timestamps, limits)
                        .expect("the first pass is clean");
                    let streams = drain(&mut tasks, round_robin);
                    // A task that ended is asked once more: it ends, or fails, again.
                    for (task, stream) in tasks.iter_mut().zip(&streams) {
                        let again = match task.accesses.next_access() {
                            Ok(None) => String::new(),
                            Ok(Some(access)) => format!("{access:?}"),
                            Err(err) => format!("  error: {err}\n"),
                        };
                        assert!(stream.ends_with(&again), "{stream:?} then {again:?}");
                    }
                    match &received {
                        None => received = Some(streams),
                        Some(received) => {
                            assert_eq!(&streams, received, "{limits:?}, round robin {round_robin}")
                        }
                    }
                }
            }
        }
        expect.assert_debug_eq(&received.expect("one run at least"));
    }

    fn distinct_pages_check(pairs: &[(u32, u64)]) {
        let mut pages = DistinctPages::default();
        for &(pid, page) in pairs {
            pages.insert(pid, page);
        }
        let expected: std::collections::BTreeSet<_> = pairs.iter().copied().collect();
        assert_eq!(pages.count(), expected.len() as u64);
    }

    #[test]
    fn distinct_pages_count_like_a_set() {
        // Three rounds over overlapping pages of three address spaces, in scattered order.
        let pairs: Vec<(u32, u64)> = (0..3u64)
            .flat_map(|round| {
                (0..100_000u64).map(move |page| ((page % 3) as u32, (page * 7 + round) % 150_000))
            })
            .collect();
        distinct_pages_check(&pairs);
        // The ends of the page range, and one pid's chunk next to another's.
        distinct_pages_check(&[
            (0, u64::MAX),
            (0, u64::MAX - 63),
            (0, u64::MAX),
            (1, 0),
            (0, 0),
            (1, 63),
            (1, 64),
        ]);
    }

    proptest::proptest! {
        #[test]
        fn distinct_pages_match_a_btree_set(
            pairs in proptest::collection::vec(
                (
                    0u32..3,
                    proptest::prop_oneof![0u64..300, (u64::MAX - 300)..=u64::MAX, proptest::prelude::any::<u64>()],
                ),
                0..400,
            )
        ) {
            distinct_pages_check(&pairs);
        }
    }
}
