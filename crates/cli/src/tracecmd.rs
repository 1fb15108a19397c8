//! `swapsim trace info|head|convert|generate`: looking at traces and making them.
//!
//! `info` and `head` show what a trace holds before anyone replays it; `convert` rewrites
//! any readable format as swapsim's native binary format, as the text format or as
//! libCacheSim's oracleGeneral; `generate`
//! writes the built-in generators' streams as a trace, so a synthetic workload can be kept,
//! shared and replayed like a captured one. Reading goes through `swapsim-trace-formats`;
//! only the text format is written here, one `R|W <page>` line per record.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::{ByteSize, TaskSpec};
use swapsim_trace_formats::native::NativeWriter;
use swapsim_trace_formats::oracle::OracleGeneralWriter;
use swapsim_trace_formats::text::{
    END_MARKED as TEXT_END_MARKED, END_MARKER_PREFIX as TEXT_END_MARKER_PREFIX, PAGE_MAX as TEXT_PAGE_MAX,
};
use swapsim_trace_formats::{demux, Format, OpenOptions, Record};

use swapsim::{Prepared, TaskCount, TraceSource};

use crate::outfile::Output;
use crate::output::skipped_text;

/// Bytes in a page.
const PAGE_BYTES: u64 = 4096;
/// Most phases one `generate` may chain.
const PHASES_MAX: usize = 64;

/// A format `convert` and `generate` can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WriteFormat {
    /// swapsim's compact binary format (keeps pid, tid and time).
    Native,
    /// `R|W <page>` lines (one task, no time).
    Text,
    /// libCacheSim's oracleGeneral: 24-byte records (one task, whole seconds, reads only;
    /// holds the whole trace in memory while writing).
    OracleGeneral,
}

impl WriteFormat {
    /// The default for an output name: native for `.swt` and `.swapsim`, oracleGeneral for
    /// `.oracleGeneral`, text otherwise.
    pub(crate) fn for_path(path: &Path) -> WriteFormat {
        match path.extension().and_then(|ext| ext.to_str()) {
            Some("swt" | "swapsim") => WriteFormat::Native,
            Some("oracleGeneral") => WriteFormat::OracleGeneral,
            _ => WriteFormat::Text,
        }
    }

    /// The name `--to` takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            WriteFormat::Native => "native",
            WriteFormat::Text => "text",
            WriteFormat::OracleGeneral => "oracle-general",
        }
    }

    /// Whether the format holds one task only.
    fn single_task(self) -> bool {
        self != WriteFormat::Native
    }
}

/// The `trace info` document.
#[derive(Debug, Serialize)]
pub(crate) struct Info {
    pub(crate) trace: String,
    pub(crate) format: &'static str,
    pub(crate) records: u64,
    pub(crate) tasks: Vec<TaskCount>,
    pub(crate) distinct_pages: u64,
    pub(crate) footprint_bytes: u64,
    /// Lowest and highest page, as page numbers; absent for an empty trace.
    pub(crate) first_page: Option<u64>,
    pub(crate) last_page: Option<u64>,
    /// From the first record's time to the last's; absent when the format records no time.
    pub(crate) time_span_s: Option<f64>,
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) skipped: std::collections::BTreeMap<String, u64>,
}

/// Reads `source` through once and summarises it.
pub(crate) fn info(source: &TraceSource, options: OpenOptions) -> Result<Info> {
    let name = source.name();
    let mut records = source.records(options)?;
    let summary = demux::summarize(records.as_mut()).with_context(|| format!("trace {name}"))?;
    let distinct_pages = summary.distinct_pages.context("a full summary counts distinct pages")?;
    Ok(Info {
        trace: name,
        format: summary.format.name(),
        records: summary.records,
        tasks: summary.tasks.iter().map(|&(pid, tid, records)| TaskCount { pid, tid, records }).collect(),
        distinct_pages,
        footprint_bytes: distinct_pages * PAGE_BYTES,
        first_page: (summary.records > 0).then_some(summary.first_page),
        last_page: (summary.records > 0).then_some(summary.last_page),
        time_span_s: summary.time_span_ns.map(|ns| ns as f64 / 1e9),
        reads: summary.reads,
        writes: summary.writes,
        skipped: summary.skipped.0.clone(),
    })
}

/// Prints `info` for people.
pub(crate) fn write_info(out: &mut impl Write, info: &Info) -> Result<()> {
    let mut text = String::new();
    let t = &mut text;
    use std::fmt::Write as _;
    writeln!(t, "trace           {}", info.trace)?;
    writeln!(t, "format          {}", info.format)?;
    writeln!(t, "records         {}", info.records)?;
    writeln!(t, "tasks           {}", info.tasks.len())?;
    for task in &info.tasks {
        writeln!(t, "  pid {:<8} tid {:<8} {:>12} records", task.pid, task.tid, task.records)?;
    }
    writeln!(t, "distinct pages  {}", info.distinct_pages)?;
    writeln!(
        t,
        "footprint       {} ({} pages × 4 KiB)",
        human_size(info.footprint_bytes),
        info.distinct_pages
    )?;
    match (info.first_page, info.last_page) {
        (Some(first), Some(last)) => writeln!(
            t,
            "page range      {first:#x}..={last:#x} (addresses {:#x}..{:#x})",
            first.saturating_mul(PAGE_BYTES),
            last.saturating_add(1).saturating_mul(PAGE_BYTES)
        )?,
        _ => writeln!(t, "page range      none")?,
    }
    match info.time_span_s {
        Some(span) => writeln!(t, "time span       {span:.6} s")?,
        None => writeln!(t, "time span       none (the format records no time)")?,
    }
    let percent = |n: u64| if info.records == 0 { 0.0 } else { 100.0 * n as f64 / info.records as f64 };
    writeln!(t, "reads           {} ({:.1} %)", info.reads, percent(info.reads))?;
    writeln!(t, "writes          {} ({:.1} %)", info.writes, percent(info.writes))?;
    writeln!(t, "{}", skipped_text(&info.skipped).replacen("skipped ", "skipped         ", 1))?;
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// A size in bytes for people: `4 KiB`, `1.5 MiB`.
pub(crate) fn human_size(bytes: u64) -> String {
    let units = [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in units {
        if bytes >= scale {
            let value = bytes as f64 / scale as f64;
            return if bytes.is_multiple_of(scale) {
                format!("{} {unit}", bytes / scale)
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{bytes} B")
}

/// One record as `head` prints it: `pid/tid time_s R|W 0xADDRESS`, with `-` for no time.
pub(crate) fn record_line(record: &Record) -> String {
    let time = match record.time_ns {
        Some(ns) => format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000),
        None => "-".to_string(),
    };
    let op = if record.write { 'W' } else { 'R' };
    format!("{}/{} {time} {op} {:#x}", record.pid, record.tid, record.page.saturating_mul(PAGE_BYTES))
}

/// Prints the first `n` records.
pub(crate) fn head(out: &mut impl Write, source: &TraceSource, options: OpenOptions, n: u64) -> Result<()> {
    let name = source.name();
    let mut records = source.records(options)?;
    for _ in 0..n {
        let Some(record) = records.next_record().with_context(|| format!("trace {name}"))? else {
            break;
        };
        writeln!(out, "{}", record_line(&record))?;
    }
    Ok(())
}

/// Writes records in one of the writable formats.
enum RecordWriter {
    /// Text has no pid, tid or time; the first record's task is remembered so that a
    /// second task is an error rather than silently merged. The header says `end=marked`
    /// and the last line is the end marker, so that a cut copy is told from a whole one.
    Text {
        out: Output,
        task: Option<(u32, u32)>,
        /// Lines written so far.
        n_lines: u64,
    },
    Native(Box<NativeWriter<Output>>),
    /// oracleGeneral has no pid or tid either; the task is remembered as for text.
    OracleGeneral {
        writer: OracleGeneralWriter<Output>,
        task: Option<(u32, u32)>,
    },
}

/// Remembers the first record's task in `task` and refuses a record of another one:
/// `format` holds one task.
fn check_one_task(task: &mut Option<(u32, u32)>, record: &Record, format: WriteFormat) -> Result<()> {
    let this = (record.pid, record.tid);
    match task {
        None => *task = Some(this),
        Some(first) if *first != this => bail!(
            "the {} format holds one task, and the trace has at least two \
             ({}/{} and {}/{}); write native instead (--to native)",
            format.name(),
            first.0,
            first.1,
            this.0,
            this.1
        ),
        Some(_) => {}
    }
    Ok(())
}

impl RecordWriter {
    /// Creates `path`; a text trace starts with `header` lines (without their `# `).
    fn create(path: &Path, format: WriteFormat, header: &[String]) -> Result<RecordWriter> {
        let mut out = Output::create(path)?;
        let context = || format!("cannot write {}", path.display());
        Ok(match format {
            WriteFormat::Text => {
                for line in header {
                    writeln!(out, "# {line}").with_context(context)?;
                }
                writeln!(out, "# swapsim {TEXT_END_MARKED}").with_context(context)?;
                RecordWriter::Text { out, task: None, n_lines: header.len() as u64 + 1 }
            }
            WriteFormat::Native => {
                RecordWriter::Native(Box::new(NativeWriter::new(out).with_context(context)?))
            }
            WriteFormat::OracleGeneral => {
                RecordWriter::OracleGeneral { writer: OracleGeneralWriter::new(out), task: None }
            }
        })
    }

    fn write(&mut self, record: &Record) -> Result<()> {
        match self {
            RecordWriter::Text { out, task, n_lines } => {
                check_one_task(task, record, WriteFormat::Text)?;
                if record.page > TEXT_PAGE_MAX {
                    bail!(
                        "page {} ({:#x}) is above the largest page the text format holds, \
                         {TEXT_PAGE_MAX} ({TEXT_PAGE_MAX:#x}); write native instead (--to native)",
                        record.page,
                        record.page
                    );
                }
                let op = if record.write { 'W' } else { 'R' };
                writeln!(out, "{op} {}", record.page)?;
                *n_lines += 1;
            }
            RecordWriter::Native(writer) => writer.write(record)?,
            RecordWriter::OracleGeneral { writer, task } => {
                check_one_task(task, record, WriteFormat::OracleGeneral)?;
                writer.write(record)?;
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<()> {
        match self {
            RecordWriter::Text { mut out, n_lines, .. } => {
                writeln!(out, "{TEXT_END_MARKER_PREFIX}{}", n_lines + 1)?;
                out.finish()
            }
            RecordWriter::Native(writer) => writer.finish()?.finish(),
            RecordWriter::OracleGeneral { writer, .. } => writer.finish()?.finish(),
        }
    }
}

/// What `convert` did.
pub(crate) struct Converted {
    pub(crate) records: u64,
    pub(crate) from: Format,
    pub(crate) to: WriteFormat,
    pub(crate) skipped: std::collections::BTreeMap<String, u64>,
}

/// Rewrites `input` as `to` into `output`. A text trace's `pages=N` region is kept when
/// text is written. `output` is replaced only when every record was read and written;
/// it may not be the input file.
pub(crate) fn convert(
    input: &TraceSource,
    options: OpenOptions,
    output: &Path,
    to: Option<WriteFormat>,
) -> Result<Converted> {
    let to = to.unwrap_or_else(|| WriteFormat::for_path(output));
    let name = input.name();
    if let TraceSource::File(input_path) = input {
        crate::outfile::refuse_same_file(input_path, output)?;
    }
    let mut records = input.records(options)?;
    let from = records.format();
    let mut header = Vec::new();
    if from == Format::Text && to == WriteFormat::Text {
        if let Some(pages) = records.declared_pages() {
            header.push(format!("pages={pages}"));
        }
    }
    let mut writer = RecordWriter::create(output, to, &header)?;
    let mut n_records = 0u64;
    while let Some(record) = records.next_record().with_context(|| format!("trace {name}"))? {
        n_records += 1;
        writer
            .write(&record)
            .with_context(|| format!("writing {}: record {n_records} of trace {name}", output.display()))?;
    }
    writer.finish()?;
    Ok(Converted { records: n_records, from, to, skipped: records.skipped().0.clone() })
}

/// One `--phase PATTERN:REGION:PASSES[:WRITE_FRACTION]`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Phase {
    pub(crate) pattern: Pattern,
    pub(crate) region: ByteSize,
    pub(crate) passes: u32,
    pub(crate) write_fraction: Option<f64>,
}

impl Phase {
    /// Parses `zipf:64MiB:2` or `rand:1GiB:1:0.5`.
    pub(crate) fn parse(text: &str) -> Result<Phase, String> {
        let fields: Vec<&str> = text.split(':').collect();
        if !(3..=4).contains(&fields.len()) {
            return Err(format!("\"{text}\" is not PATTERN:REGION:PASSES[:WRITE_FRACTION]"));
        }
        let pattern: Pattern = serde_json::from_value(serde_json::Value::String(fields[0].to_string()))
            .map_err(|_| {
                format!("\"{}\" is not a pattern (expected seq, rand, zipf, hotcold or stride)", fields[0])
            })?;
        let region = ByteSize::parse(fields[1]).map_err(|err| format!("region: {err}"))?;
        let passes =
            fields[2].parse().map_err(|_| format!("passes \"{}\" is not a whole number", fields[2]))?;
        let write_fraction = match fields.get(3) {
            Some(f) => Some(f.parse().map_err(|_| format!("write fraction \"{f}\" is not a number"))?),
            None => None,
        };
        Ok(Phase { pattern, region, passes, write_fraction })
    }

    fn name(&self) -> String {
        let mut name = format!("{}:{}:{}", self.pattern, self.region, self.passes);
        if let Some(fraction) = self.write_fraction {
            name.push_str(&format!(":{fraction}"));
        }
        name
    }
}

/// What `generate` writes: the tasks of a scenario's generator, or chained phases.
pub(crate) enum GenerateInput<'a> {
    Scenario(&'a Prepared),
    Phases { phases: &'a [Phase], fill: bool, seed: u64 },
}

/// Writes the generated stream to `output`; returns the number of records.
pub(crate) fn generate(input: GenerateInput<'_>, output: &Path, to: Option<WriteFormat>) -> Result<u64> {
    let to = to.unwrap_or_else(|| WriteFormat::for_path(output));
    let (mut tasks, header) = match input {
        GenerateInput::Scenario(prepared) => scenario_tasks(prepared)?,
        GenerateInput::Phases { phases, fill, seed } => phase_tasks(phases, fill, seed)?,
    };
    if to.single_task() && tasks.len() > 1 {
        bail!(
            "the {} format holds one task, the workload has {}; write native instead (--to native)",
            to.name(),
            tasks.len()
        );
    }
    let mut writer = RecordWriter::create(output, to, &[header])?;
    let n_records = write_interleaved(&mut writer, &mut tasks)
        .with_context(|| format!("writing {}", output.display()))?;
    writer.finish()?;
    Ok(n_records)
}

/// Writes one access of each unfinished task in turn. Task `i` is pid and tid `i + 1`,
/// each with its own address space, as the generator runs them.
fn write_interleaved(writer: &mut RecordWriter, tasks: &mut [TaskSpec]) -> Result<u64> {
    let mut done = vec![false; tasks.len()];
    let mut n_records = 0u64;
    while done.iter().any(|d| !d) {
        for (idx, task) in tasks.iter_mut().enumerate() {
            if done[idx] {
                continue;
            }
            match task.accesses.next_access().context("generator")? {
                Some(access) => {
                    let id = u32::try_from(idx + 1).expect("at most 4096 tasks");
                    let record =
                        Record { pid: id, tid: id, time_ns: None, page: access.vpage.0, write: access.write };
                    writer.write(&record)?;
                    n_records += 1;
                }
                None => done[idx] = true,
            }
        }
    }
    Ok(n_records)
}

fn scenario_tasks(prepared: &Prepared) -> Result<(Vec<TaskSpec>, String)> {
    let Some(generator) = prepared.generator() else {
        bail!("generate needs a scenario whose workload is a [workload.generator] section");
    };
    let pages = generator.region.pages();
    let header = format!(
        "swapsim write-trace pages={pages} pattern={} passes={} fill={} write_fraction={} \
         zipf_exponent={} seed={} page_size=4096 format=\"<R|W> <page_index>\"",
        generator.pattern,
        generator.passes,
        generator.fill,
        generator.write_fraction,
        generator.zipf_exponent,
        prepared.seed()
    );
    Ok((generator.tasks(prepared.seed()), header))
}

/// One task that runs the phases one after another over a region as large as the largest
/// phase's, after an optional fill that writes every page of that region once in order.
/// Phase `i` draws from the stream of generator task `i`, so phases never share draws.
fn phase_tasks(phases: &[Phase], fill: bool, seed: u64) -> Result<(Vec<TaskSpec>, String)> {
    if phases.is_empty() {
        bail!("generate needs a SCENARIO, --pattern or at least one --phase");
    }
    if phases.len() > PHASES_MAX {
        bail!("--phase: {} phases exceed the limit of {PHASES_MAX}", phases.len());
    }
    let region = phases.iter().map(|p| p.region).max_by_key(|r| r.0).expect("at least one phase");
    let mut streams: Vec<TaskSpec> = Vec::new();
    if fill {
        let mut fill_config = GeneratorConfig::new(Pattern::Seq, region);
        fill_config.passes = 0;
        fill_config.validate().context("--phase")?;
        streams.push(fill_config.task(seed, u32::MAX));
    }
    for (idx, phase) in phases.iter().enumerate() {
        let mut config = GeneratorConfig::new(phase.pattern, phase.region);
        config.passes = phase.passes;
        config.fill = false;
        if let Some(fraction) = phase.write_fraction {
            config.write_fraction = fraction;
        }
        config.validate().with_context(|| format!("--phase {}", phase.name()))?;
        streams.push(config.task(seed, u32::try_from(idx).expect("at most 64 phases")));
    }
    let names: Vec<String> = phases.iter().map(Phase::name).collect();
    let header = format!(
        "swapsim trace generate pages={} fill={fill} phases=\"{}\" seed={seed} page_size=4096 \
         format=\"<R|W> <page_index>\"",
        region.pages(),
        names.join(" ")
    );
    let task = TaskSpec::new(
        "phases",
        vec![swapsim_core::RegionSpec::new(swapsim_core::VirtPage(0), region.pages())],
        Box::new(Chain { streams: streams.into_iter().map(|t| t.accesses).collect(), idx: 0 }),
    );
    Ok((vec![task], header))
}

/// Access streams one after another.
struct Chain {
    streams: Vec<Box<dyn swapsim_core::AccessSource>>,
    idx: usize,
}

impl swapsim_core::AccessSource for Chain {
    fn next_access(&mut self) -> Result<Option<swapsim_core::Access>, swapsim_core::TraceError> {
        while let Some(stream) = self.streams.get_mut(self.idx) {
            if let Some(access) = stream.next_access()? {
                return Ok(Some(access));
            }
            self.idx += 1;
        }
        Ok(None)
    }
}

/// `swapsim mrc` as a table: one row per memory size.
pub(crate) fn write_mrc_table(out: &mut impl Write, mrc: &swapsim::mrc::Mrc) -> Result<()> {
    writeln!(out, "trace           {}", mrc.trace)?;
    writeln!(out, "accesses        {}", mrc.accesses)?;
    writeln!(out, "distinct pages  {} (each one compulsory miss)", mrc.distinct_pages)?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>10} {:>10} {:>12} {:>9} {:>12} {:>9}",
        "pages", "MiB", "LRU misses", "LRU", "OPT misses", "OPT"
    )?;
    for p in &mrc.points {
        writeln!(
            out,
            "{:>10} {:>10.1} {:>12} {:>9.4} {:>12} {:>9.4}",
            p.pages,
            p.pages as f64 / 256.0,
            p.lru_misses,
            p.lru_miss_ratio,
            p.opt_misses,
            p.opt_miss_ratio
        )?;
    }
    Ok(())
}

/// `swapsim mrc --format csv`.
pub(crate) fn write_mrc_csv(out: &mut impl Write, mrc: &swapsim::mrc::Mrc) -> Result<()> {
    writeln!(out, "pages,lru_misses,lru_miss_ratio,opt_misses,opt_miss_ratio")?;
    for p in &mrc.points {
        writeln!(
            out,
            "{},{},{},{},{}",
            p.pages, p.lru_misses, p.lru_miss_ratio, p.opt_misses, p.opt_miss_ratio
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_parse_or_say_why_not() {
        let phase = Phase::parse("zipf:64MiB:2:0.5").expect("valid");
        assert_eq!(phase.name(), "zipf:64MiB:2:0.5");
        assert_eq!(Phase::parse("seq:4k:1").expect("valid").region, ByteSize(4096));
        let err = |text: &str| Phase::parse(text).expect_err("invalid");
        assert_eq!(err("seq:64MiB"), "\"seq:64MiB\" is not PATTERN:REGION:PASSES[:WRITE_FRACTION]");
        assert_eq!(
            err("loop:1MiB:1"),
            "\"loop\" is not a pattern (expected seq, rand, zipf, hotcold or stride)"
        );
        assert_eq!(err("seq:1MiB:x"), "passes \"x\" is not a whole number");
        assert_eq!(Phase::parse("seq:8MB:1").expect("valid").region, ByteSize(8_000_000));
        assert!(err("seq:8Mb:1").starts_with("region: \"8Mb\" has an unknown unit \"Mb\""));
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(4096), "4 KiB");
        assert_eq!(human_size(3 << 19), "1.5 MiB");
        assert_eq!(human_size(5 << 30), "5 GiB");
    }

    #[test]
    fn record_lines() {
        let record = Record { pid: 7, tid: 9, time_ns: Some(1_500_000_123), page: 0x7f00, write: true };
        assert_eq!(record_line(&record), "7/9 1.500000123 W 0x7f00000");
        let record = Record { pid: 0, tid: 0, time_ns: None, page: 3, write: false };
        assert_eq!(record_line(&record), "0/0 - R 0x3000");
    }

    /// The bundled demo trace is exactly what `traces/README.md` says generates it.
    #[test]
    fn bundled_trace_matches_its_generator() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/demo-zipf.toml");
        let scenario = swapsim::Scenario::load(&path).expect("the generator scenario is in the repository");
        let prepared = scenario.prepare().expect("the generator scenario is valid");
        let (mut tasks, _) = scenario_tasks(&prepared).expect("a generator workload");
        let mut generated = tasks.pop().expect("one task").accesses;
        let bundled = TraceSource::Embedded { name: "demo", bytes: crate::demo::TRACE_BYTES };
        let mut bundled = bundled.records(OpenOptions::default()).expect("the bundled trace opens");
        let mut n_accesses = 0u64;
        loop {
            let expected = generated.next_access().expect("generators do not fail");
            let actual = bundled.next_record().expect("the bundled trace reads");
            match (expected, actual) {
                (None, None) => break,
                (Some(e), Some(a)) => assert!(
                    e.vpage.0 == a.page && e.write == a.write,
                    "traces/demo-zipf.trace.zst is stale at access {n_accesses}; regenerate it as traces/README.md says"
                ),
                _ => panic!("traces/demo-zipf.trace.zst has the wrong length; regenerate it as traces/README.md says"),
            }
            n_accesses += 1;
        }
        assert_eq!(n_accesses, 122_880);
    }
}
