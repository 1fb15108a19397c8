//! Turning one trace of many threads into engine tasks, one per thread.
//!
//! [`tasks`] reads the trace twice. A first streaming pass ([`summarize`]) finds the
//! threads (pid and tid pairs) and the trace's summary; a second pass, opened lazily when
//! the engine first asks a task for an access, feeds every thread's task from one shared
//! reader. A task's source pulls records from the shared reader until it finds one of its
//! own, queueing the records of other threads for their tasks. The threads of one process
//! share an address space (`TaskSpec::address_space` is the pid).
//!
//! Memory stays bounded when tasks consume their accesses roughly in trace order, which the
//! engine does when trace timestamps pace the replay ([`Pace::Timestamps`]): the queues then
//! hold only the records between the slowest and the fastest task. When tasks drift apart
//! (with [`Pace::CpuCost`] each runs at its own speed) the queues are capped: past
//! [`QUEUED_RECORDS_MAX`] queued records, the task with the longest queue is detached,
//! dropping its queue, and it reads the trace on its own from then on, skipping the records
//! it already had. A detached task costs one more pass over the trace, never more memory.
//!
//! The result is deterministic: which records are queued or detached depends only on the
//! order in which the engine asks, and that order depends only on the run's inputs.

use crate::error::FormatError;
use crate::format::Format;
use crate::lines::IdHasher;
use crate::record::{Record, RecordSource, SkipCounts};
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex};
use swapsim_core::{Access, AccessSource, TaskSpec, TraceError, VirtPage};

/// Records queued for other tasks before the task with the longest queue is detached.
pub const QUEUED_RECORDS_MAX: usize = 1 << 20;

/// How trace timestamps pace the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Each access waits the time since the previous record of its thread (a thread's first
    /// access waits the time since the trace's first record, so threads start at their real
    /// offsets). Records without time are charged the CPU cost profile instead.
    Timestamps,
    /// Every access is charged the CPU cost profile (`think_ns: None`).
    CpuCost,
}

/// What a pass over a trace found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSummary {
    /// The trace's format.
    pub format: Format,
    /// Records read.
    pub records: u64,
    /// Threads as `(pid, tid, records)`, ordered by pid then tid.
    pub tasks: Vec<(u32, u32, u64)>,
    /// Distinct pages touched, counted per address space (pid).
    pub distinct_pages: u64,
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
    summarize_with_origin(source).map(|(summary, _)| summary)
}

/// [`summarize`], also returning the earliest time seen.
fn summarize_with_origin(source: &mut dyn RecordSource) -> Result<(TraceSummary, Option<u64>), FormatError> {
    let mut records: u64 = 0;
    let mut reads: u64 = 0;
    let mut threads: HashMap<u64, u64, BuildHasherDefault<IdHasher>> = HashMap::default();
    // Consecutive records of one thread are counted together: a run costs one map update.
    let mut run: Option<(u64, u64)> = None;
    let mut pages = DistinctPages::default();
    let (mut page_lo, mut page_hi) = (u64::MAX, 0u64);
    let (mut time_lo, mut time_hi) = (u64::MAX, 0u64);
    let mut timed = false;
    while let Some(record) = source.next_record()? {
        records += 1;
        reads += u64::from(!record.write);
        let key = thread_key(&record);
        match &mut run {
            Some((run_key, n_run)) if *run_key == key => *n_run += 1,
            _ => {
                if let Some((run_key, n_run)) = run.replace((key, 1)) {
                    *threads.entry(run_key).or_insert(0) += n_run;
                }
            }
        }
        pages.insert(record.pid, record.page);
        page_lo = page_lo.min(record.page);
        page_hi = page_hi.max(record.page);
        if let Some(time_ns) = record.time_ns {
            timed = true;
            time_lo = time_lo.min(time_ns);
            time_hi = time_hi.max(time_ns);
        }
    }
    if let Some((run_key, n_run)) = run {
        *threads.entry(run_key).or_insert(0) += n_run;
    }
    let page_range = (records > 0).then_some((page_lo, page_hi));
    let time_range = timed.then_some((time_lo, time_hi));
    let mut tasks: Vec<(u32, u32, u64)> =
        threads.into_iter().map(|(key, n)| ((key >> 32) as u32, key as u32, n)).collect();
    tasks.sort_unstable();
    let (first_page, last_page) = page_range.unwrap_or((0, 0));
    let summary = TraceSummary {
        format: source.format(),
        records,
        tasks,
        distinct_pages: pages.count(),
        first_page,
        last_page,
        time_span_ns: time_range.map(|(lo, hi)| hi - lo),
        reads,
        writes: records - reads,
        skipped: source.skipped().clone(),
        declared_pages: source.declared_pages(),
    };
    Ok((summary, time_range.map(|(lo, _)| lo)))
}

fn thread_key(record: &Record) -> u64 {
    (u64::from(record.pid) << 32) | u64::from(record.tid)
}

/// Pages per chunk of [`DistinctPages`]: one bit each in a `u64`.
const CHUNK_PAGES: u64 = 64;

/// A set of `(pid, page)` pairs, counted as they are inserted, kept as one 64-bit bitmap per
/// chunk of 64 aligned pages that holds at least one of them.
///
/// A chunk costs about 40 bytes (the bitmap, and a hash map entry from `(pid, chunk)` to its
/// index), so memory grows with the distinct pages, never with the range they span: at
/// worst about 40 bytes per page when every page has a chunk of its own, and well under
/// one byte per page when pages cluster, as they do in real traces. Small chunks keep that
/// worst case low, and the one-chunk cache keeps runs through a chunk off the map.
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
    tasks_with_limit(Arc::new(open), name, pace, QUEUED_RECORDS_MAX)
}

fn tasks_with_limit(
    open: Arc<OpenFn>,
    name: &str,
    pace: Pace,
    queued_records_max: usize,
) -> Result<(Vec<TaskSpec>, TraceSummary), FormatError> {
    let mut source = open()?;
    let (summary, origin_ns) = summarize_with_origin(&mut *source)?;
    drop(source);
    let index_of = summary
        .tasks
        .iter()
        .enumerate()
        .map(|(index, &(pid, tid, _))| ((u64::from(pid) << 32) | u64::from(tid), index))
        .collect();
    let n_tasks = summary.tasks.len();
    let shared = Arc::new(Mutex::new(Demux {
        open: Arc::clone(&open),
        source: None,
        index_of,
        queues: (0..n_tasks).map(|_| VecDeque::new()).collect(),
        detached: vec![false; n_tasks],
        queued: 0,
        queued_records_max,
        finished: false,
        failed: None,
    }));
    let tasks = summary
        .tasks
        .iter()
        .enumerate()
        .map(|(index, &(pid, tid, _))| {
            let source = ThreadSource {
                shared: Arc::clone(&shared),
                open: Arc::clone(&open),
                index,
                key: (u64::from(pid) << 32) | u64::from(tid),
                pace,
                previous_ns: origin_ns.unwrap_or(0),
                n_received: 0,
                private: None,
            };
            let mut task = TaskSpec::new(format!("{name}:{pid}/{tid}"), Vec::new(), Box::new(source));
            task.address_space = Some(u64::from(pid));
            task
        })
        .collect();
    Ok((tasks, summary))
}

/// The reader shared by the tasks of one trace, with one queue per task.
struct Demux {
    open: Arc<OpenFn>,
    /// The second pass, opened on the first pull.
    source: Option<Box<dyn RecordSource>>,
    index_of: HashMap<u64, usize, BuildHasherDefault<IdHasher>>,
    queues: Vec<VecDeque<Record>>,
    /// Tasks that read the trace on their own.
    detached: Vec<bool>,
    /// Records in all queues.
    queued: usize,
    queued_records_max: usize,
    finished: bool,
    /// The error that ended the pass, given to every task that asks after it.
    failed: Option<(u64, Option<u64>, String)>,
}

enum Pulled {
    Record(Record),
    End,
    Detached,
}

impl Demux {
    /// The next record of task `index`.
    fn pull(&mut self, index: usize) -> Result<Pulled, TraceError> {
        if self.detached[index] {
            return Ok(Pulled::Detached);
        }
        if let Some(record) = self.queues[index].pop_front() {
            self.queued -= 1;
            return Ok(Pulled::Record(record));
        }
        if let Some((line, column, message)) = &self.failed {
            return Err(TraceError::Malformed { line: *line, column: *column, message: message.clone() });
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
        loop {
            let source = self.source.as_mut().expect("opened above");
            let record = match source.next_record() {
                Ok(Some(record)) => record,
                Ok(None) => {
                    self.finished = true;
                    self.source = None;
                    return Ok(Pulled::End);
                }
                Err(err) => return Err(self.fail(err)),
            };
            let Some(&owner) = self.index_of.get(&thread_key(&record)) else {
                let err = FormatError::Unknown(format!(
                    "thread {}/{} was not in the first pass over the trace: the trace changed between passes",
                    record.pid, record.tid
                ));
                return Err(self.fail(err));
            };
            if owner == index {
                return Ok(Pulled::Record(record));
            }
            if self.detached[owner] {
                continue;
            }
            self.queues[owner].push_back(record);
            self.queued += 1;
            if self.queued > self.queued_records_max {
                self.detach_longest_except(index);
            }
        }
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

    fn fail(&mut self, err: FormatError) -> TraceError {
        let (line, column, message) = line_and_message(err);
        self.failed = Some((line, column, message.clone()));
        self.source = None;
        TraceError::Malformed { line, column, message }
    }
}

/// The line, column and message of a [`TraceError::Malformed`] for a reader's error;
/// errors without a line get line 0 and say where they are in the message.
fn line_and_message(err: FormatError) -> (u64, Option<u64>, String) {
    match err {
        FormatError::Line { line, column, message } => (line, column, message),
        other => (0, None, other.to_string()),
    }
}

/// A detached task's own pass over the trace.
struct PrivateReader {
    source: Box<dyn RecordSource>,
    /// Records of the task still to skip: those it received before it was detached.
    n_to_skip: u64,
}

/// One task's access stream.
struct ThreadSource {
    shared: Arc<Mutex<Demux>>,
    open: Arc<OpenFn>,
    index: usize,
    key: u64,
    pace: Pace,
    /// Time of the task's previous record (the trace's first time before any).
    previous_ns: u64,
    /// Records handed to the engine so far.
    n_received: u64,
    private: Option<PrivateReader>,
}

impl ThreadSource {
    fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        loop {
            if let Some(private) = &mut self.private {
                loop {
                    let record = private.source.next_record().map_err(to_trace_error)?;
                    let Some(record) = record else { return Ok(None) };
                    if thread_key(&record) != self.key {
                        continue;
                    }
                    if private.n_to_skip > 0 {
                        private.n_to_skip -= 1;
                        continue;
                    }
                    return Ok(Some(record));
                }
            }
            let pulled = {
                let mut demux = self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                demux.pull(self.index)?
            };
            match pulled {
                Pulled::Record(record) => return Ok(Some(record)),
                Pulled::End => return Ok(None),
                Pulled::Detached => {
                    let source = (self.open)().map_err(to_trace_error)?;
                    self.private = Some(PrivateReader { source, n_to_skip: self.n_received });
                }
            }
        }
    }
}

fn to_trace_error(err: FormatError) -> TraceError {
    let (line, column, message) = line_and_message(err);
    TraceError::Malformed { line, column, message }
}

impl AccessSource for ThreadSource {
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        let Some(record) = self.next_record()? else {
            return Ok(None);
        };
        self.n_received += 1;
        let think_ns = match (self.pace, record.time_ns) {
            (Pace::Timestamps, Some(time_ns)) => {
                let think_ns = time_ns.saturating_sub(self.previous_ns);
                self.previous_ns = time_ns;
                Some(think_ns)
            }
            _ => None,
        };
        Ok(Some(Access { vpage: VirtPage(record.page), write: record.write, think_ns }))
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

    /// Drains every task, taking one access from each in turn (round robin) or each task to
    /// its end before the next (in order), and renders what each task received.
    fn drain(mut tasks: Vec<TaskSpec>, round_robin: bool) -> Vec<String> {
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
        let (tasks, summary) =
            tasks_with_limit(opener(text), "t", pace, QUEUED_RECORDS_MAX).expect("valid trace");
        let mut rendered = format!("{summary:?}\n");
        for task in &tasks {
            writeln!(rendered, "{} space {:?} regions {:?}", task.name, task.address_space, task.regions)
                .expect("writing to a string");
        }
        let received = drain(tasks, true);
        for (index, accesses) in received.iter().enumerate() {
            writeln!(rendered, "task {index}:\n{accesses}").expect("writing to a string");
        }
        // Any consumption order, with or without detaching, gives each task the same stream.
        for limit in [0, 1, 2, QUEUED_RECORDS_MAX] {
            for round_robin in [false, true] {
                let (tasks, _) = tasks_with_limit(opener(text), "t", pace, limit).expect("valid trace");
                assert_eq!(drain(tasks, round_robin), received, "limit {limit} round robin {round_robin}");
            }
        }
        expect.assert_eq(&rendered);
    }

    #[test]
    fn threads_of_a_process_share_an_address_space_and_keep_their_order() {
        check(
            PERF,
            Pace::Timestamps,
            expect![[r#"
                TraceSummary { format: PerfScript, records: 6, tasks: [(100, 100, 2), (100, 101, 3), (200, 200, 1)], distinct_pages: 4, first_page: 1, last_page: 3, time_span_ns: Some(4000000), reads: 3, writes: 3, skipped: SkipCounts({"other event: sched:sched_switch": 1}), declared_pages: None }
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
            Pace::CpuCost,
            expect![[r#"
                TraceSummary { format: Text, records: 1, tasks: [(0, 0, 1)], distinct_pages: 1, first_page: 1, last_page: 1, time_span_ns: None, reads: 1, writes: 0, skipped: SkipCounts({}), declared_pages: Some(8) }
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
            Pace::CpuCost,
            expect![[r#"
                TraceSummary { format: Text, records: 2, tasks: [(0, 0, 2)], distinct_pages: 2, first_page: 1, last_page: 2, time_span_ns: None, reads: 1, writes: 1, skipped: SkipCounts({}), declared_pages: None }
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
                TraceSummary { format: Lackey, records: 1, tasks: [(0, 0, 1)], distinct_pages: 1, first_page: 1, last_page: 1, time_span_ns: None, reads: 1, writes: 0, skipped: SkipCounts({}), declared_pages: None }
                t:0/0 space Some(0) regions []
                task 0:
                  R 0x1 think -

            "#]],
        );
    }

    #[test]
    fn errors_of_the_first_pass_fail_and_of_later_passes_reach_every_task() {
        let err = tasks(
            || crate::open(Box::new(Cursor::new(b"R 1\nX\n")), OpenOptions::default()),
            "t",
            Pace::CpuCost,
        )
        .expect_err("line 2 is bad");
        assert_eq!(err.to_string(), "line 2, column 1: expected R or W, found \"X\"");

        // The trace changes between the passes: the second pass fails.
        let n_opens = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let open = {
            let n_opens = Arc::clone(&n_opens);
            move || {
                let text: &'static [u8] = match n_opens.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
                    0 => b"p 1/1 [0] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x0\np 1/2 [0] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x0\n",
                    _ => b"p 1/1 [0] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x0\np 1/2 [0] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x0\n??\n",
                };
                crate::open(Box::new(Cursor::new(text)), OpenOptions::default())
            }
        };
        let (tasks, _) = tasks(open, "t", Pace::Timestamps).expect("the first pass is clean");
        expect![[r#"
            [
                "  R 0x1 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
                "  R 0x1 think 0\n  error: line 3: not a perf script line: \"??\" (expected \"<comm> <pid>[/<tid>] [<cpu>] <seconds>.<fraction>: <event>: ...\")\n",
            ]
        "#]]
        .assert_debug_eq(&drain(tasks, false));
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
