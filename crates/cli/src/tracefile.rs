//! Trace files: how `run` turns a captured trace into tasks, and how traces are written.
//!
//! Reading is the job of `swapsim-trace-formats`: it undoes compression, detects the
//! format and demultiplexes the records into one task per thread, the threads of a process
//! sharing its address space. This module supplies what only the cli knows: where the bytes
//! are (a file, or the demo trace built into the binary), the options the user chose, the
//! region a text trace declares with `pages=N`, and `--repeat`, which replays the whole
//! stream several times in a row.
//!
//! What it deliberately does not do: parse any trace format itself. The one exception is
//! the `#` header of a text trace, which is read with the core's own text reader so that a
//! `pages=N` region is declared exactly as it always was.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use swapsim_core::{RegionSpec, TaskSpec, VirtPage};
use swapsim_trace_formats::demux::{self, TraceSummary};
use swapsim_trace_formats::{Format, FormatError, OpenOptions, Record, RecordSource, SkipCounts};

/// The first four bytes of every zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
/// The first two bytes of every gzip member.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Compression level for traces written with a `.zst` name: slow to write, small to keep.
const ZSTD_LEVEL: i32 = 19;
/// Most times `--repeat` may replay a trace.
pub(crate) const REPEAT_MAX: u32 = 1000;

/// Where a trace's bytes come from.
#[derive(Clone, Debug)]
pub(crate) enum TraceSource {
    /// A file on disk; relative paths are relative to the current directory.
    File(PathBuf),
    /// Bytes built into the binary (the demo), with the name they are reported under.
    Embedded { name: &'static str, bytes: &'static [u8] },
}

impl TraceSource {
    /// The name used in reports and error messages: the path, or the embedded name.
    pub(crate) fn name(&self) -> String {
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

    /// Opens the trace as a stream of records.
    pub(crate) fn records(&self, options: OpenOptions) -> Result<Box<dyn RecordSource>> {
        let name = self.name();
        let raw = self.raw().with_context(|| format!("cannot open trace {name}"))?;
        open_any(raw, options).with_context(|| format!("trace {name}"))
    }

    /// The decompressed bytes, for reading a text trace's header.
    fn decompressed(&self) -> std::io::Result<Box<dyn BufRead + Send>> {
        let mut reader = BufReader::new(self.raw()?);
        let head = reader.fill_buf()?;
        Ok(if head.starts_with(&ZSTD_MAGIC) {
            Box::new(BufReader::new(zstd::stream::read::Decoder::with_buffer(reader)?))
        } else if head.starts_with(&GZIP_MAGIC) {
            Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(reader)))
        } else {
            Box::new(reader)
        })
    }

    /// The region a text trace declares with `pages=N` in its `#` header, if it does.
    pub(crate) fn declared_pages(&self) -> Result<Option<u64>> {
        let name = self.name();
        let reader = self.decompressed().with_context(|| format!("cannot open trace {name}"))?;
        let text = swapsim_trace_formats::text::TextReader::new(reader, OpenOptions::default())
            .with_context(|| format!("trace {name}"))?;
        Ok(text.declared_pages())
    }
}

/// Opens a trace with `swapsim_trace_formats::open`.
fn open_any(raw: Box<dyn Read + Send>, options: OpenOptions) -> Result<Box<dyn RecordSource>, FormatError> {
    swapsim_trace_formats::open(raw, options)
}

/// How the records of a trace become the accesses of tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Pace {
    /// A task's think time before each access is the time since its previous record, when
    /// the trace records time; otherwise the CPU cost profile's `access_ns`.
    #[default]
    Timestamps,
    /// Every access costs the CPU cost profile's `access_ns`; timestamps are ignored.
    Cpu,
}

impl Pace {
    /// Parses the name used in scenario files.
    pub(crate) fn from_name(name: &str) -> Option<Pace> {
        match name {
            "timestamps" => Some(Pace::Timestamps),
            "cpu" => Some(Pace::Cpu),
            _ => None,
        }
    }

    fn demux(self) -> demux::Pace {
        match self {
            Pace::Timestamps => demux::Pace::Timestamps,
            Pace::Cpu => demux::Pace::CpuCost,
        }
    }
}

/// Parses a format name as the command line and scenario files give it.
pub(crate) fn parse_format(name: &str) -> Result<Format, String> {
    Format::from_name(name).ok_or_else(|| {
        format!("\"{name}\" is not a trace format (expected perf, ftrace, lackey, text or native)")
    })
}

/// A trace to replay and how to replay it.
#[derive(Clone, Debug)]
pub(crate) struct TraceInput {
    pub(crate) source: TraceSource,
    /// The format, or `None` to detect it.
    pub(crate) format: Option<Format>,
    /// Skip malformed lines instead of failing.
    pub(crate) lenient: bool,
    /// lackey: count instruction fetches as reads.
    pub(crate) instructions: bool,
    pub(crate) pace: Pace,
    /// Replay the whole stream this many times in a row, 1..=[`REPEAT_MAX`].
    pub(crate) repeat: u32,
}

/// What a run says about the trace it replayed: the `trace` object of a run report.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct TraceReport {
    /// The format read, by its stable name.
    pub(crate) format: &'static str,
    /// Records in one pass of the trace.
    pub(crate) records: u64,
    /// How many times the stream was replayed.
    pub(crate) repeat: u32,
    /// One task per thread, in the order the tasks were started.
    pub(crate) tasks: Vec<TaskCount>,
    /// Lines or records skipped in one pass, by reason.
    pub(crate) skipped: std::collections::BTreeMap<String, u64>,
}

/// One task of a trace and its records.
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct TaskCount {
    pub(crate) pid: u32,
    pub(crate) tid: u32,
    pub(crate) records: u64,
}

impl TraceInput {
    /// The options the trace reader is opened with.
    pub(crate) fn open_options(&self) -> OpenOptions {
        OpenOptions { format: self.format, lenient: self.lenient, instructions: self.instructions }
    }

    /// Checks that the trace opens and its format is recognised, without reading it through.
    pub(crate) fn check(&self) -> Result<()> {
        if self.repeat == 0 || self.repeat > REPEAT_MAX {
            bail!("repeat: {} is outside 1..={REPEAT_MAX}", self.repeat);
        }
        let records = self.source.records(self.open_options())?;
        if records.format() == Format::Text {
            self.source.declared_pages()?;
        }
        Ok(())
    }

    /// Reads the trace through once to find its tasks, and returns them with what was
    /// found. Accesses are read lazily while the simulation runs, each task from a stream
    /// of its own.
    pub(crate) fn tasks(&self) -> Result<(Vec<TaskSpec>, TraceReport)> {
        let name = self.source.name();
        let source = self.source.clone();
        let options = self.open_options();
        let repeat = self.repeat;
        let open = move || -> Result<Box<dyn RecordSource>, FormatError> {
            let raw = source.raw()?;
            let records = open_any(raw, options)?;
            if repeat == 1 {
                return Ok(records);
            }
            let source = source.clone();
            let reopen: Reopen = Arc::new(move || open_any(source.raw()?, options));
            Ok(Box::new(Repeat::new(records, reopen, repeat)))
        };
        let (mut tasks, summary) =
            demux::tasks(open, &name, self.pace.demux()).with_context(|| format!("trace {name}"))?;
        if let [task] = tasks.as_mut_slice() {
            // One task is named after the trace alone, as reports have always named it.
            task.name.clone_from(&name);
        }
        if summary.format == Format::Text {
            if let Some(pages) = self.source.declared_pages()? {
                for task in &mut tasks {
                    task.regions = vec![RegionSpec { start: VirtPage(0), pages }];
                }
            }
        }
        Ok((tasks, TraceReport::of(&summary, repeat)))
    }
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

    /// One line for the table report, e.g. `trace: perf, 1200 records, 2 tasks, skipped 3 (bad line 3)`.
    pub(crate) fn line(&self) -> String {
        let n_tasks = self.tasks.len();
        let tasks = if n_tasks == 1 { "task" } else { "tasks" };
        let mut line = format!("trace: {}, {} records, {n_tasks} {tasks}", self.format, self.records);
        if self.repeat > 1 {
            line.push_str(&format!(", replayed {} times", self.repeat));
        }
        line.push_str(&format!(", {}", skipped_text(&self.skipped)));
        line
    }
}

/// `skipped 0`, or `skipped 4 (bad line 3, other event 1)`.
pub(crate) fn skipped_text(skipped: &std::collections::BTreeMap<String, u64>) -> String {
    let total: u64 = skipped.values().sum();
    if total == 0 {
        return "skipped 0".to_string();
    }
    let parts: Vec<String> = skipped.iter().map(|(reason, n)| format!("{reason} {n}")).collect();
    format!("skipped {total} ({})", parts.join(", "))
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

    fn format(&self) -> Format {
        self.current.format()
    }
}

/// How a written trace is compressed, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Zstd,
    Gzip,
}

impl Compression {
    /// `.zst` gives zstd, `.gz` gzip, anything else none.
    pub(crate) fn of(path: &Path) -> Compression {
        match path.extension().and_then(|ext| ext.to_str()) {
            Some("zst") => Compression::Zstd,
            Some("gz") => Compression::Gzip,
            _ => Compression::None,
        }
    }
}

/// A file being written, compressed as its name says. Call [`Output::finish`] at the end:
/// dropping it may lose the compressor's last block.
pub(crate) struct Output {
    path: PathBuf,
    sink: OutputSink,
}

enum OutputSink {
    Plain(BufWriter<File>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<File>>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
}

impl Output {
    /// Creates `path`, compressing by its extension.
    pub(crate) fn create(path: &Path) -> Result<Output> {
        let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        let file = BufWriter::new(file);
        let sink = match Compression::of(path) {
            Compression::None => OutputSink::Plain(file),
            Compression::Zstd => OutputSink::Zstd(
                zstd::stream::write::Encoder::new(file, ZSTD_LEVEL)
                    .with_context(|| format!("cannot write {}", path.display()))?,
            ),
            Compression::Gzip => {
                OutputSink::Gzip(flate2::write::GzEncoder::new(file, flate2::Compression::best()))
            }
        };
        Ok(Output { path: path.to_path_buf(), sink })
    }

    /// Flushes everything and closes the file.
    pub(crate) fn finish(self) -> Result<()> {
        let context = || format!("cannot write {}", self.path.display());
        let file = match self.sink {
            OutputSink::Plain(file) => file,
            OutputSink::Zstd(encoder) => encoder.finish().with_context(context)?,
            OutputSink::Gzip(encoder) => encoder.finish().with_context(context)?,
        };
        file.into_inner().map_err(|err| err.into_error()).with_context(context)?.sync_all().ok();
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.sink {
            OutputSink::Plain(w) => w.write(buf),
            OutputSink::Zstd(w) => w.write(buf),
            OutputSink::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            OutputSink::Plain(w) => w.flush(),
            OutputSink::Zstd(w) => w.flush(),
            OutputSink::Gzip(w) => w.flush(),
        }
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
}
