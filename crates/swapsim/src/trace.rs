//! Trace files: how a run turns a captured trace into tasks.
//!
//! Reading is the job of `swapsim-trace-formats`: it undoes compression, detects the
//! format and demultiplexes the records into one task per thread, the threads of a process
//! sharing its address space. This module supplies what that crate deliberately leaves to
//! its caller: where the bytes are (a file, or bytes built into a program), the options
//! chosen, the region a text trace declares with `pages=N`, and `repeat`, which replays the
//! whole stream several times in a row.
//!
//! What it deliberately does not do: parse any trace format itself. Even the region a text
//! trace declares with `pages=N` comes from trace-formats (`RecordSource::declared_pages`).

use crate::next_use::NextUses;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use swapsim_core::thp::ThpHint;
use swapsim_core::{RegionSpec, TaskSpec, VirtPage};
use swapsim_trace_formats::demux::{
    self, FirstPassSource, KeepRecords, Replay, ReplayBuilder, StoredRounds, TraceCount, TraceSummary,
};
use swapsim_trace_formats::native;
use swapsim_trace_formats::{
    FirstPass, Format, FormatError, ObjectMap, OpenOptions, Pace, Record, RecordSource, SkipCounts,
    TraceParams,
};

/// Most times `--repeat` may replay a trace.
pub const REPEAT_MAX: u32 = 1000;

/// Where a trace's bytes come from.
#[derive(Clone, Debug)]
pub enum TraceSource {
    /// A file on disk; relative paths are relative to the current directory.
    File(PathBuf),
    /// Bytes built into a program (the demo), with the name they are reported under.
    Embedded {
        /// The name reports use.
        name: &'static str,
        /// The trace, possibly compressed.
        bytes: &'static [u8],
    },
}

impl TraceSource {
    /// The name used in reports and error messages: the path, or the embedded name.
    pub fn name(&self) -> String {
        match self {
            TraceSource::File(path) => path.display().to_string(),
            TraceSource::Embedded { name, .. } => (*name).to_string(),
        }
    }

    /// The raw (possibly compressed) bytes, from the start.
    fn raw(&self) -> std::io::Result<Box<dyn Read + Send>> {
        match self {
            TraceSource::File(path) => Ok(Box::new(File::open(path)?)),
            TraceSource::Embedded { bytes, .. } => Ok(Box::new(*bytes)),
        }
    }

    /// The summary frame of a native trace that has one ([`native::stored_summary`]);
    /// `None` for any other trace.
    fn stored_summary(&self) -> Result<Option<native::StoredSummary>> {
        let found = match self {
            TraceSource::File(path) => {
                let mut file =
                    File::open(path).with_context(|| format!("cannot open trace {}", self.name()))?;
                native::stored_summary(&mut file)
            }
            TraceSource::Embedded { bytes, .. } => native::stored_summary(&mut std::io::Cursor::new(*bytes)),
        };
        found.with_context(|| format!("trace {}", self.name()))
    }

    /// Opens the trace as a stream of records.
    pub fn records(&self, options: OpenOptions) -> Result<Box<dyn RecordSource>> {
        let name = self.name();
        let raw = self.raw().with_context(|| format!("cannot open trace {name}"))?;
        swapsim_trace_formats::open(raw, options).with_context(|| format!("trace {name}"))
    }
}

/// Parses a format name as the command line and scenario files give it.
pub fn parse_format(name: &str) -> Result<Format, String> {
    Format::from_name(name).ok_or_else(|| {
        format!(
            "\"{name}\" is not a trace format (expected perf, ftrace, lackey, text, native, oracle-general, \
             lcs, libcachesim-txt or libcachesim-csv)"
        )
    })
}

/// Where a trace's path was given, which decides what a relative path is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathOrigin {
    /// Written in the scenario under `key`: relative to the scenario file's directory.
    ScenarioFile {
        /// The key, e.g. `workload.trace`.
        key: &'static str,
        /// Whether the path as written was relative.
        relative: bool,
    },
    /// Set by an edit (`--set`) of this key: relative to the current directory.
    Edit(&'static str),
    /// Given by `--trace` ([`crate::Scenario::with_trace`]): relative to the current
    /// directory.
    TraceFlag,
}

impl PathOrigin {
    /// Where the path came from and what it was resolved against, for messages.
    fn describe(self, path: &Path) -> String {
        let (given, against, relative) = match self {
            PathOrigin::ScenarioFile { key, relative } => {
                (format!("{key} in the scenario"), "the scenario file's directory", relative)
            }
            PathOrigin::Edit(key) => (format!("--set {key}"), "the current directory", path.is_relative()),
            PathOrigin::TraceFlag => ("--trace".to_string(), "the current directory", path.is_relative()),
        };
        if relative {
            format!("{given}, relative to {against}")
        } else {
            given
        }
    }
}

/// A trace to replay and how to replay it.
#[derive(Clone, Debug)]
pub(crate) struct TraceInput {
    pub(crate) source: TraceSource,
    /// Where the trace's path was given.
    pub(crate) origin: PathOrigin,
    /// The format, or `None` to detect it.
    pub(crate) format: Option<Format>,
    /// Skip malformed lines instead of failing.
    pub(crate) lenient: bool,
    /// lackey: count instruction fetches as reads.
    pub(crate) instructions: bool,
    /// libCacheSim traces: how object ids become pages.
    pub(crate) object_map: ObjectMap,
    /// libCacheSim's txt and csv traces: the trace parameters (columns, delimiter, ...).
    pub(crate) params: TraceParams,
    /// The madvise hint of the regions the trace declares.
    pub(crate) madvise: ThpHint,
    pub(crate) pace: Pace,
    /// Replay the whole stream this many times in a row, 1..=[`REPEAT_MAX`].
    pub(crate) repeat: u32,
    /// First passes shared with other runs of the same trace, if any ([`TraceCache`]).
    pub(crate) cache: Option<Arc<TraceCache>>,
}

/// First passes over traces, shared by the runs of one command that replay the same trace
/// (validate's cases), so that each trace is read once. An entry goes when the last run
/// that announced it ([`TraceCache::expect`]) has taken it.
#[derive(Default)]
pub(crate) struct TraceCache {
    entries: Mutex<HashMap<String, CacheEntry>>,
}

#[derive(Default)]
struct CacheEntry {
    /// Runs announced and not yet served.
    waiting: usize,
    /// Filled by the first run to read the trace; later ones wait on the lock.
    pass: Arc<Mutex<Option<FirstPass>>>,
}

impl std::fmt::Debug for TraceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceCache").finish_non_exhaustive()
    }
}

impl TraceCache {
    /// Announces one more run of the trace `key`.
    pub(crate) fn expect(&self, key: &str) {
        self.entries.lock().expect("no cache user panicked").entry(key.to_string()).or_default().waiting += 1;
    }

    /// Whether the run asking is the only one announced for trace `key` that has not been
    /// served, with no first pass computed for it: then it is served here (it will read the
    /// trace on its own, and nothing is kept for others), and true is returned.
    fn serve_sole(&self, key: &str) -> bool {
        let mut entries = self.entries.lock().expect("no cache user panicked");
        let sole = match entries.get(key) {
            None => true,
            // A pass being computed holds its lock: then it is not the sole reader's to skip.
            Some(entry) => entry.waiting <= 1 && entry.pass.try_lock().is_ok_and(|pass| pass.is_none()),
        };
        if sole {
            entries.remove(key);
        }
        sole
    }

    /// The first pass over trace `key`, computed by `read` if no run has yet; the entry is
    /// dropped once every announced run has been served.
    fn first_pass(&self, key: &str, read: impl FnOnce() -> Result<FirstPass>) -> Result<FirstPass> {
        let pass = {
            let mut entries = self.entries.lock().expect("no cache user panicked");
            let entry = entries.entry(key.to_string()).or_default();
            entry.waiting = entry.waiting.saturating_sub(1);
            let pass = Arc::clone(&entry.pass);
            if entry.waiting == 0 {
                entries.remove(key);
            }
            pass
        };
        let mut pass = pass.lock().expect("no cache user panicked");
        if let Some(first) = &*pass {
            return Ok(first.clone());
        }
        let first = read()?;
        *pass = Some(first.clone());
        Ok(first)
    }
}

/// What a run says about the trace it replayed: the `trace` object of a run report.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct TraceReport {
    /// The format read, by its stable name.
    pub format: &'static str,
    /// Records in one pass of the trace.
    pub records: u64,
    /// How many times the stream was replayed.
    pub repeat: u32,
    /// One task per thread, in the order the tasks were started.
    pub tasks: Vec<TaskCount>,
    /// Lines or records skipped in one pass, by reason.
    pub skipped: std::collections::BTreeMap<String, u64>,
}

/// One task of a trace and its records.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TaskCount {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Records of this thread.
    pub records: u64,
}

impl TraceInput {
    /// What identifies the trace's first pass in a [`TraceCache`]: its source and how it
    /// is read.
    pub(crate) fn cache_key(&self) -> String {
        let source = match &self.source {
            TraceSource::File(path) => format!("file {}", path.display()),
            TraceSource::Embedded { name, .. } => format!("embedded {name}"),
        };
        format!("{source} {:?} {}", self.open_options(), self.repeat)
    }

    /// The options the trace reader is opened with.
    pub(crate) fn open_options(&self) -> OpenOptions {
        OpenOptions {
            format: self.format,
            lenient: self.lenient,
            instructions: self.instructions,
            object_map: self.object_map,
            params: self.params,
        }
    }

    /// Checks that the trace opens and its format is recognised, without reading it through.
    pub(crate) fn check(&self) -> Result<()> {
        if self.repeat == 0 || self.repeat > REPEAT_MAX {
            bail!("repeat: {} is outside 1..={REPEAT_MAX}", self.repeat);
        }
        if let TraceSource::File(path) = &self.source {
            // The path as resolved, and where it came from, so that a path resolved against
            // another directory than the user expected is plain to see.
            if let Err(err) = File::open(path) {
                bail!("cannot open trace {} ({}): {err}", path.display(), self.origin.describe(path));
            }
        }
        // Opening reads a text trace's header too, so a bad `pages=N` fails here.
        self.source.records(self.open_options())?;
        Ok(())
    }

    /// The tasks of a run, as [`TraceInput::tasks`] builds them, except that a trace with no
    /// first pass to share is counted while the run reads it when its tasks are known
    /// without one: a trace with a record, in a format whose every record is an untimed
    /// access of pid 0, tid 0 (text, lackey, libCacheSim's txt), so that it has one task,
    /// over the region its header declares or over regions mapped on first touch. Its
    /// replay then starts at once instead of after a pass over the whole trace, and the
    /// trace is decoded once, on the decoding thread, alongside the simulation.
    pub(crate) fn tasks_for_run(&self, next_uses: NextUses) -> Result<(Vec<TaskSpec>, TraceTally)> {
        if let Some(task) = self.solo_task_uncounted(next_uses)? {
            return Ok(task);
        }
        let (tasks, report) = self.tasks(next_uses)?;
        Ok((tasks, TraceTally::Known(report)))
    }

    /// See [`TraceInput::tasks_for_run`]: `None` when the trace does not qualify.
    fn solo_task_uncounted(&self, next_uses: NextUses) -> Result<Option<(Vec<TaskSpec>, TraceTally)>> {
        let one_untimed_thread =
            |format| matches!(format, Format::Text | Format::Lackey | Format::LibCacheSimTxt);
        if next_uses == NextUses::Carried
            || self.repeat != 1
            || self.format.is_some_and(|format| !one_untimed_thread(format))
        {
            return Ok(None);
        }
        // Opening reads the header; a trace that fails to open or to give its first record
        // takes the usual path, whose first pass reports the error.
        let Ok(mut probe) = self.source.records(self.open_options()) else { return Ok(None) };
        let (format, pages) = (probe.format(), probe.declared_pages());
        if !one_untimed_thread(format) {
            return Ok(None);
        }
        let mut first = Vec::with_capacity(1);
        if probe.next_records(&mut first, 1).is_err() || first.is_empty() {
            return Ok(None);
        }
        drop(probe);
        if self.cache.as_ref().is_some_and(|cache| !cache.serve_sole(&self.cache_key())) {
            return Ok(None);
        }
        let name = self.source.name();
        let Replay { mut tasks, count } = self
            .replay_builder()
            .build(FirstPassSource::Solo(format))
            .with_context(|| format!("trace {name}"))?;
        let TraceCount::WhileRead(counting) = count else {
            unreachable!("a replay without a first pass counts the trace while it reads it")
        };
        self.dress(&mut tasks, format, pages);
        let pass = CountingPass { counting, name };
        Ok(Some((tasks, TraceTally::Counting(pass))))
    }

    /// Reads the trace through once to find its tasks (or takes what a native trace's
    /// summary frame, or another run of the same trace, says of it), and returns them with
    /// what was found. Accesses are read lazily while the simulation runs, each task from a
    /// stream of its own. With [`NextUses::Carried`] (for `lru = "opt"`), a second pass
    /// computes each access's next use, which every task's stream then carries (see
    /// `next_use.rs`).
    pub(crate) fn tasks(&self, next_uses: NextUses) -> Result<(Vec<TaskSpec>, TraceReport)> {
        let name = self.source.name();
        let builder = self.replay_builder();
        let source = self.first_pass_source()?;
        let source = match &self.cache {
            Some(cache) => FirstPassSource::Shared(cache.first_pass(&self.cache_key(), || {
                builder.first_pass(source).with_context(|| format!("trace {name}"))
            })?),
            None => source,
        };
        let Replay { mut tasks, count } = builder.build(source).with_context(|| format!("trace {name}"))?;
        let TraceCount::Before(summary) = count else {
            unreachable!("a replay after a first pass counts the trace before it")
        };
        if next_uses == NextUses::Carried {
            let opened = self.opener()().and_then(swapsim_trace_formats::read_ahead);
            let mut records = opened.with_context(|| format!("trace {name}"))?;
            let per_thread = crate::next_use::per_thread(&mut *records, &summary.tasks, &name)?;
            for (task, next_uses) in tasks.iter_mut().zip(per_thread) {
                let accesses = std::mem::replace(&mut task.accesses, Box::new(std::iter::empty()));
                task.accesses = Box::new(crate::next_use::WithNextUses::new(accesses, next_uses));
            }
        }
        self.dress(&mut tasks, summary.format, summary.declared_pages);
        Ok((tasks, TraceReport::of(&summary, self.repeat)))
    }

    /// Where the first pass of a run comes from. A native trace's summary frame, when it has
    /// one, says what the first pass would find (one reading of the trace; `repeat`
    /// multiplies its counts, for an untimed trace, whose rounds are alike). A replay checks
    /// each thread's count against it, and the trace's first time (no record before it, one
    /// at it); a timed trace read more than once still gets its first pass. Records are kept
    /// only for a trace that other runs replay too.
    fn first_pass_source(&self) -> Result<FirstPassSource> {
        let stored = match self.format {
            None | Some(Format::Native) => self.source.stored_summary()?,
            _ => None,
        };
        if let Some(stored) = stored.and_then(|stored| StoredRounds::new(stored, self.repeat)) {
            return Ok(FirstPassSource::Stored(stored));
        }
        let keep = if self.cache.is_some() { KeepRecords::IfShort } else { KeepRecords::No };
        Ok(FirstPassSource::Stream(keep))
    }

    /// The builder of the trace's replay, its tasks named after the trace.
    fn replay_builder(&self) -> ReplayBuilder {
        ReplayBuilder::new(self.opener(), &self.source.name(), self.pace)
    }

    /// Opens the trace as records, decoded where it is called, `repeat` times in a row.
    fn opener(&self) -> impl Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync + 'static {
        let (source, options, repeat) = (self.source.clone(), self.open_options(), self.repeat);
        move || {
            let records = swapsim_trace_formats::open(source.raw()?, options)?;
            if repeat == 1 {
                return Ok(records);
            }
            let source = source.clone();
            let reopen: Reopen = Arc::new(move || swapsim_trace_formats::open(source.raw()?, options));
            Ok(Box::new(Repeat::new(records, reopen, repeat)))
        }
    }

    /// Gives a replay's tasks what the trace says of them beyond their accesses: one task
    /// is named after the trace alone, as reports have always named it; a format of object
    /// requests creates pages on first read; a header's declared pages are every task's
    /// region.
    fn dress(&self, tasks: &mut [TaskSpec], format: Format, declared_pages: Option<u64>) {
        if let [task] = tasks {
            task.name = self.source.name();
        }
        for task in tasks.iter_mut() {
            task.reads_create = format.requests_objects();
            if let Some(pages) = declared_pages {
                task.regions = vec![RegionSpec { thp: self.madvise, ..RegionSpec::new(VirtPage(0), pages) }];
            }
        }
    }
}

/// What a run says about its trace, as far as it is known when the run starts.
pub(crate) enum TraceTally {
    /// Counted by a first pass before the run.
    Known(TraceReport),
    /// Counted while the run reads the trace ([`TraceInput::tasks_for_run`]).
    Counting(CountingPass),
}

impl TraceTally {
    /// Records in the trace, once counted.
    pub(crate) fn records(&self) -> Option<u64> {
        match self {
            TraceTally::Known(report) => Some(report.records.saturating_mul(u64::from(report.repeat))),
            TraceTally::Counting(pass) => pass.counting.records(),
        }
    }

    /// The report, once the run has ended; an error of the trace, as its first pass would
    /// have reported it before the run.
    pub(crate) fn finish(self) -> Result<TraceReport> {
        match self {
            TraceTally::Known(report) => Ok(report),
            TraceTally::Counting(pass) => {
                let first = pass.counting.finish().with_context(|| format!("trace {}", pass.name))?;
                Ok(TraceReport::of(first.summary(), 1))
            }
        }
    }
}

/// The first pass of a trace counted by the replay's own reading ([`demux::CountingPass`]):
/// what it counted, or, when the run stopped before the trace's end, a pass after the run.
pub(crate) struct CountingPass {
    counting: demux::CountingPass,
    /// The trace's name, for errors.
    name: String,
}

impl TraceReport {
    /// The report of one pass, from the summary of `repeat` passes.
    fn of(summary: &TraceSummary, repeat: u32) -> TraceReport {
        let per_pass = |n: u64| n / u64::from(repeat);
        TraceReport {
            format: summary.format.name(),
            records: per_pass(summary.records),
            repeat,
            tasks: summary
                .tasks
                .iter()
                .map(|&(pid, tid, records)| TaskCount { pid, tid, records: per_pass(records) })
                .collect(),
            skipped: summary.skipped.0.iter().map(|(reason, &n)| (reason.clone(), per_pass(n))).collect(),
        }
    }
}

/// Opens the trace again from its start.
type Reopen = Arc<dyn Fn() -> Result<Box<dyn RecordSource>, FormatError> + Send + Sync>;

/// A trace replayed `rounds` times in a row.
///
/// Later rounds are shifted in time so that time never runs backwards: round `r + 1` starts
/// where round `r` ended, keeping the gaps between records of the original. Skip counts are
/// summed over the rounds read so far.
struct Repeat {
    current: Box<dyn RecordSource>,
    reopen: Reopen,
    rounds_left: u32,
    /// Time of the first timed record of the trace, once seen.
    first_ns: Option<u64>,
    /// Added to `time - first_ns` in the current round.
    base_ns: u64,
    /// Latest time handed out.
    last_ns: u64,
    /// Skips of the finished rounds.
    finished: SkipCounts,
    /// `finished` plus the current round's skips.
    total: SkipCounts,
    /// The current round's skip total when `total` was last brought up to date.
    seen_skips: u64,
}

impl Repeat {
    fn new(first: Box<dyn RecordSource>, reopen: Reopen, rounds: u32) -> Repeat {
        Repeat {
            current: first,
            reopen,
            rounds_left: rounds - 1,
            first_ns: None,
            base_ns: 0,
            last_ns: 0,
            finished: SkipCounts::default(),
            total: SkipCounts::default(),
            seen_skips: 0,
        }
    }

    fn refresh_skips(&mut self) {
        let current = self.current.skipped();
        if current.total() == self.seen_skips {
            return;
        }
        self.seen_skips = current.total();
        self.total = add_skips(&self.finished, current);
    }
}

fn add_skips(a: &SkipCounts, b: &SkipCounts) -> SkipCounts {
    let mut sum = a.clone();
    for (reason, n) in &b.0 {
        *sum.0.entry(reason.clone()).or_insert(0) += n;
    }
    sum
}

impl RecordSource for Repeat {
    fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
        loop {
            let next = self.current.next_record()?;
            self.refresh_skips();
            match next {
                Some(mut record) => {
                    if let Some(time_ns) = record.time_ns {
                        let first_ns = *self.first_ns.get_or_insert_with(|| {
                            // The first round keeps its own times.
                            self.base_ns = time_ns;
                            time_ns
                        });
                        let shifted = self.base_ns.saturating_add(time_ns.saturating_sub(first_ns));
                        self.last_ns = self.last_ns.max(shifted);
                        record.time_ns = Some(shifted);
                    }
                    return Ok(Some(record));
                }
                None if self.rounds_left == 0 => return Ok(None),
                None => {
                    self.rounds_left -= 1;
                    self.finished = add_skips(&self.finished, self.current.skipped());
                    self.total = self.finished.clone();
                    self.seen_skips = 0;
                    self.current = (self.reopen)()?;
                    self.base_ns = self.last_ns;
                }
            }
        }
    }

    fn skipped(&self) -> &SkipCounts {
        &self.total
    }

    fn declared_pages(&self) -> Option<u64> {
        self.current.declared_pages()
    }

    fn format(&self) -> Format {
        self.current.format()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace held in memory that counts one skipped line with every write record.
    struct Canned {
        records: Vec<Record>,
        next_idx: usize,
        skipped: SkipCounts,
    }

    impl RecordSource for Canned {
        fn next_record(&mut self) -> Result<Option<Record>, FormatError> {
            let record = self.records.get(self.next_idx).copied();
            self.next_idx += 1;
            if record.is_some_and(|r| r.write) {
                self.skipped.add("bad line");
            }
            Ok(record)
        }
        fn skipped(&self) -> &SkipCounts {
            &self.skipped
        }
        fn format(&self) -> Format {
            Format::PerfScript
        }
    }

    fn record(time_ns: Option<u64>, page: u64, write: bool) -> Record {
        Record { pid: 1, tid: 1, time_ns, page, write }
    }

    /// Replays `records` `rounds` times; renders `time page` per record, then the skips.
    fn check(records: Vec<Record>, rounds: u32) -> String {
        let canned = move || -> Result<Box<dyn RecordSource>, FormatError> {
            Ok(Box::new(Canned { records: records.clone(), next_idx: 0, skipped: SkipCounts::default() }))
        };
        let first = canned().expect("canned");
        let mut repeat = Repeat::new(first, Arc::new(canned), rounds);
        let mut lines = Vec::new();
        while let Some(r) = repeat.next_record().expect("canned records do not fail") {
            lines.push(format!("{:?} {}", r.time_ns, r.page));
        }
        lines.push(format!("skipped {:?}", repeat.skipped().0));
        lines.join("\n")
    }

    #[test]
    fn repeat_shifts_later_rounds_in_time_and_sums_skips() {
        let records =
            vec![record(Some(100), 1, false), record(Some(130), 2, true), record(Some(160), 1, false)];
        expect_test::expect![[r#"
            Some(100) 1
            Some(130) 2
            Some(160) 1
            Some(160) 1
            Some(190) 2
            Some(220) 1
            Some(220) 1
            Some(250) 2
            Some(280) 1
            skipped {"bad line": 3}"#]]
        .assert_eq(&check(records, 3));
    }

    #[test]
    fn repeat_without_time_and_once() {
        let records = vec![record(None, 5, false), record(None, 6, false)];
        expect_test::expect![[r#"
            None 5
            None 6
            None 5
            None 6
            skipped {}"#]]
        .assert_eq(&check(records.clone(), 2));
        assert_eq!(check(records, 1), "None 5\nNone 6\nskipped {}");
    }

    /// Announced runs share one read of the trace; once all are served the entry goes.
    #[test]
    fn a_trace_cache_reads_each_trace_once_for_the_runs_announced() {
        let cache = TraceCache::default();
        let reads = std::cell::Cell::new(0);
        let input = embedded(b"R 1\nW 2\n", 1);
        let read = || {
            reads.set(reads.get() + 1);
            let source = FirstPassSource::Stream(KeepRecords::IfShort);
            input.replay_builder().first_pass(source).map_err(anyhow::Error::from)
        };
        cache.expect("k");
        cache.expect("k");
        let first = cache.first_pass("k", read).unwrap();
        let second = cache.first_pass("k", read).unwrap();
        assert_eq!((reads.get(), first.summary(), first.summary().records), (1, second.summary(), 2));
        assert!(cache.entries.lock().unwrap().is_empty(), "served runs leave nothing behind");
        cache.first_pass("k", read).unwrap();
        assert_eq!(reads.get(), 2, "an unannounced run reads the trace itself");
    }

    /// The tasks of `input` for a run, with what is known of the trace: `None` when it is
    /// counted while the run reads it.
    fn for_run(input: &TraceInput) -> (Vec<TaskSpec>, TraceTally) {
        input.tasks_for_run(NextUses::Omitted).expect("the trace has tasks")
    }

    /// Reads every access of `tasks`; the error that ends one, if any.
    fn drain(tasks: Vec<TaskSpec>) -> Option<String> {
        for mut task in tasks {
            loop {
                match task.accesses.next_access() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(err) => return Some(err.to_string()),
                }
            }
        }
        None
    }

    /// A text trace that declares its pages is counted by its replay's own reading, and says
    /// what a first pass before the run says, whether the run read it through or stopped.
    #[test]
    fn a_text_trace_that_declares_its_pages_is_counted_while_it_is_read() {
        let input = embedded(b"# pages=8\nR 1\nW 2\n\nR 1\n", 1);
        let (_, before) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
        let before = format!("{before:?}");
        let (tasks, tally) = for_run(&input);
        assert!(matches!(tally, TraceTally::Counting(_)));
        assert_eq!((tasks.len(), tasks[0].name.as_str(), tasks[0].regions.len()), (1, "t", 1));
        assert_eq!(drain(tasks), None);
        assert_eq!(tally.records(), Some(3), "counted once read through");
        assert_eq!(format!("{:?}", tally.finish().expect("counted")), before);
        // A run that reads nothing: a pass after it counts the trace.
        let (tasks, tally) = for_run(&input);
        drop(tasks);
        assert_eq!(tally.records(), None);
        assert_eq!(format!("{:?}", tally.finish().expect("counted after")), before);
    }

    /// A bad line found while the run reads the trace is the error a first pass would have
    /// given before the run.
    #[test]
    fn a_bad_line_counted_while_read_is_the_first_pass_error() {
        let input = embedded(b"# pages=8\nR 1\nR zz\nR 2\n", 1);
        let before = format!("{:#}", input.tasks(NextUses::Omitted).expect_err("a bad line"));
        let (tasks, tally) = for_run(&input);
        assert!(drain(tasks).is_some_and(|err| err.contains("line 3")));
        assert_eq!(format!("{:#}", tally.finish().expect_err("a bad line")), before);
        assert!(before.starts_with("trace t: line 3, column 3: "), "{before}");
    }

    /// A trace of one untimed thread without a header is counted while it is read too, its
    /// task over regions mapped on first touch; a libCacheSim txt trace's task creates its
    /// pages on first read.
    #[test]
    fn one_untimed_thread_is_counted_while_it_is_read_without_a_header() {
        for (bytes, reads_create) in [(&b"R 1\nW 2\n"[..], false), (b"5\n7\n5\n", true)] {
            let input = embedded(bytes, 1);
            let (_, before) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
            let (tasks, tally) = for_run(&input);
            assert!(matches!(tally, TraceTally::Counting(_)));
            assert_eq!((tasks[0].regions.len(), tasks[0].reads_create), (0, reads_create));
            assert_eq!(drain(tasks), None);
            assert_eq!(format!("{:?}", tally.finish().expect("counted")), format!("{before:?}"));
        }
    }

    /// Only a trace of one untimed thread, with a record, read once and by no other run, is
    /// counted while it is read.
    #[test]
    fn other_traces_are_counted_before_the_run() {
        let perf = b" a 1/1 [0] 1.0: exceptions:page_fault_user: address=0x1000 error_code=0x6\n";
        for (bytes, repeat) in [(&perf[..], 1), (b"# pages=8\nR 1\n", 2)] {
            let (_, tally) = for_run(&embedded(bytes, repeat));
            assert!(matches!(tally, TraceTally::Known(_)), "{:?}", String::from_utf8_lossy(bytes));
        }
        let empty = embedded(b"# pages=8\n", 1);
        let errors =
            [empty.tasks(NextUses::Omitted).map(|_| ()), empty.tasks_for_run(NextUses::Omitted).map(|_| ())]
                .map(|result| format!("{:#}", result.expect_err("no record")));
        assert_eq!(errors[0], errors[1]);
        let cache = Arc::new(TraceCache::default());
        let input = TraceInput { cache: Some(Arc::clone(&cache)), ..embedded(b"# pages=8\nR 1\n", 1) };
        cache.expect(&input.cache_key());
        cache.expect(&input.cache_key());
        assert!(matches!(for_run(&input).1, TraceTally::Known(_)), "two runs share the first pass");
        assert!(matches!(for_run(&input).1, TraceTally::Known(_)), "the second takes the pass computed");
        cache.expect(&input.cache_key());
        assert!(matches!(for_run(&input).1, TraceTally::Counting(_)), "a sole run reads on its own");
        assert!(cache.entries.lock().unwrap().is_empty(), "and is served");
    }

    /// A text trace built into the test, read `repeat` times with default flags.
    fn embedded(bytes: &'static [u8], repeat: u32) -> TraceInput {
        TraceInput {
            source: TraceSource::Embedded { name: "t", bytes },
            origin: PathOrigin::TraceFlag,
            format: None,
            lenient: false,
            instructions: false,
            object_map: ObjectMap::default(),
            params: TraceParams::default(),
            madvise: ThpHint::Default,
            pace: Pace::Cpu,
            repeat,
            cache: None,
        }
    }

    /// With next uses asked for (`lru = "opt"`), each task's accesses carry them,
    /// counted across the rounds of `repeat`.
    #[test]
    fn next_uses_count_across_repeated_rounds() {
        let input = embedded(b"R 1\nW 2\nR 1\n", 2);
        let (mut tasks, _) = input.tasks(NextUses::Carried).expect("the trace has tasks");
        let stream = &mut tasks[0].accesses;
        assert!(stream.knows_next_uses());
        let mut seen = Vec::new();
        while let Some(access) = stream.next_access().expect("valid") {
            seen.push((access.vpage.0, stream.next_use()));
        }
        assert_eq!(seen, [(1, Some(2)), (2, Some(4)), (1, Some(3)), (1, Some(5)), (2, None), (1, None)]);
        let (tasks, _) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
        assert!(!tasks[0].accesses.knows_next_uses());
    }

    #[test]
    fn a_text_header_declares_every_task_region_also_when_repeated() {
        for repeat in [1, 3] {
            let input = embedded(b"# pages=64\nR 1\nW 2\n", repeat);
            input.check().expect("the trace opens");
            let (tasks, report) = input.tasks(NextUses::Omitted).expect("the trace has tasks");
            assert_eq!(report.records, 2);
            assert_eq!(tasks.len(), 1);
            assert_eq!(tasks[0].regions, vec![RegionSpec::new(VirtPage(0), 64)]);
        }
    }
}
