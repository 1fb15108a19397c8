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
//!
//! `trace/cache.rs` shares first passes between the runs of one command that replay the
//! same trace; `trace/repeat.rs` reads a trace `repeat` times in a row.

mod cache;
mod repeat;
#[cfg(test)]
mod tests;

pub(crate) use cache::TraceCache;

use crate::next_use::NextUses;
use anyhow::{bail, Context, Result};
use repeat::{Reopen, Repeat};
use serde::Serialize;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use swapsim_core::thp::ThpHint;
use swapsim_core::{RegionSpec, TaskSpec, VirtPage};
use swapsim_trace_formats::demux::{
    self, FirstPassSource, KeepRecords, Replay, ReplayBuilder, StoredRounds, TraceCount, TraceSummary,
};
use swapsim_trace_formats::native;
use swapsim_trace_formats::{Format, FormatError, ObjectMap, OpenOptions, Pace, RecordSource, TraceParams};

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
