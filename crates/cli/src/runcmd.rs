//! `swapsim run`: its arguments, and the glue from them to the library's run and to the
//! report's table or JSON; also the panic hook that prints the command replaying the run.

use anyhow::Result;
use clap::ValueEnum;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use swapsim::{Host, Pace, Registry, RunDocument, RunStatus, Scenario, TraceFlags, TraceSource};

use crate::series_output::{self, SeriesFormat};
use crate::traceargs::{parse_trace_format, DecodingArgs};
use crate::{alloc, output, progress, Ended, EXIT_SIMULATED_FAILURE};

/// How a report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// A readable summary.
    Table,
    /// One JSON document.
    Json,
}

/// How `run` prints its report: [`Format`]'s two, or CSV.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum RunFormat {
    /// A readable summary.
    Table,
    /// One JSON document.
    Json,
    /// One CSV row of every figure of the report (a header line, then the row), keyed by
    /// the JSON document's paths (`vmstat.pswpin`, `block.0.reads.requests`); the resolved
    /// scenario and the host's timings are left out.
    Csv,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Replay this trace instead of the scenario's workload: perf script, ftrace, valgrind
    /// lackey, text, native, oracle-general, lcs, libcachesim-txt or libcachesim-csv, plain
    /// or gzip- or zstd-compressed (see traces/README.md). A relative path is relative to
    /// the current directory.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// The trace's format [default: detected from the first bytes].
    #[arg(long, value_name = "FORMAT", value_parser = parse_trace_format)]
    trace_format: Option<swapsim_trace_formats::Format>,
    /// Skip malformed trace lines, counting them by reason in the report.
    #[arg(long)]
    lenient: bool,
    /// Where think time between a task's accesses comes from: the trace's timestamps
    /// (default), or the CPU cost profile's `access_ns`.
    #[arg(long, value_parser = crate::pace_values())]
    pace: Option<Pace>,
    /// Replay the whole trace N times in a row (1..=1000); gives a first-touch fault trace
    /// reuse, which is an assumption about the workload (see traces/README.md).
    #[arg(long, value_name = "N")]
    repeat: Option<u32>,
    #[command(flatten)]
    decoding: DecodingArgs,
    /// Root seed; overrides the scenario's `seed`.
    #[arg(long)]
    seed: Option<u64>,
    /// Edit the scenario before it is read, e.g. `memcg.limit=128MiB` or
    /// `swap.devices.0.model.preset=nvme`. May be repeated; applied in order. A relative
    /// path (`workload.trace=PATH`) is relative to the current directory, as for --trace;
    /// one written in the scenario file is relative to the file's directory.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RunFormat::Table)]
    format: RunFormat,
    /// Exit 0 even if the simulated system failed (an OOM kill, a failed timeline
    /// operation), for runs that explore failure on purpose; the report still says what
    /// failed.
    #[arg(long)]
    allow_failure: bool,
    /// Sample the machine every DURATION of simulated time (e.g. 100ms, 20us, 1s, 500ns;
    /// overrides `[report] sample_every`): per interval, the vmstat counters' counts, the
    /// memory stall, and memory, swap and zswap sizes and each task's state at its end.
    /// `--format json` then adds a `series` object.
    #[arg(long, value_name = "DURATION", value_parser = parse_sample_every)]
    sample_every: Option<swapsim::SimDuration>,
    /// Write the time series to FILE: CSV (one row per sample) or JSON, by the name's
    /// extension (.csv, .json) or --series-format. Needs sampling.
    #[arg(long, value_name = "FILE")]
    series_out: Option<PathBuf>,
    /// The format of --series-out [default: from its extension].
    #[arg(long, value_enum, value_name = "FORMAT")]
    series_format: Option<SeriesFormat>,
    /// Draw the time series into FILE (SVG): swap-in, swap-out, zswap and major-fault
    /// rates per second, and memory sizes, over simulated time, with the timeline's
    /// operations as vertical lines. Needs sampling.
    #[arg(long, value_name = "FILE")]
    series_svg: Option<PathBuf>,
}

/// `--sample-every`: a positive duration.
fn parse_sample_every(text: &str) -> Result<swapsim::SimDuration, String> {
    swapsim::parse_sample_every(text).map_err(|err| err.to_string())
}

/// `swapsim run`: the report in `--format`; [`Ended::SimulatedFailure`] when the simulated
/// system failed and `--allow-failure` was not given.
pub(crate) fn run(out: &mut impl Write, args: &RunArgs, registry: &Arc<Registry>) -> Result<Ended> {
    alloc::use_huge_pages();
    let mut scenario = Scenario::load_with(&args.scenario, Arc::clone(registry))?
        .edits(&args.sets)?
        .with_trace_flags(TraceFlags {
            format: args.trace_format,
            lenient: args.lenient,
            pace: args.pace,
            repeat: args.repeat,
            instructions: args.decoding.instructions,
            object_map: args.decoding.object_map_given()?,
            params: args.decoding.trace_params,
        });
    if let Some(trace) = &args.trace {
        scenario = scenario.with_trace(TraceSource::File(trace.clone()));
    }
    if let Some(seed) = args.seed {
        scenario = scenario.with_seed(seed);
    }
    if let Some(every) = args.sample_every {
        scenario = scenario.with_sample_every(every);
    }
    let series_out = match &args.series_out {
        Some(path) => Some((path.as_path(), SeriesFormat::of(path, args.series_format)?)),
        None => None,
    };
    let prepared = scenario.prepare()?;
    if (series_out.is_some() || args.series_svg.is_some()) && prepared.resolved().report.is_none() {
        anyhow::bail!(
            "--series-out and --series-svg need a sampled run: give --sample-every or [report] sample_every"
        );
    }
    install_reproduce_hint(args, prepared.seed());
    let started = std::time::Instant::now();
    let (report, trace) = progress::watch("accesses", |bar| prepared.run_with_progress(bar))?;
    let host = Host::measure(started.elapsed(), &report);
    let doc = RunDocument::new(&prepared, &report).with_trace(trace.as_ref()).with_host(host);
    let status = RunStatus::of(&report);
    if series_out.is_some() || args.series_svg.is_some() {
        series_output::write_files(&report, series_out, args.series_svg.as_deref())?;
    }
    match args.format {
        RunFormat::Json => output::write_json(out, &doc)?,
        RunFormat::Csv => output::write_csv_row(out, &doc)?,
        RunFormat::Table => output::write_table(out, scenario.name(), &doc, &status)?,
    }
    if status.failed() && !args.allow_failure {
        let failures: Vec<String> = status.failures().iter().map(ToString::to_string).collect();
        eprintln!(
            "swapsim: the simulated system failed ({}); exit status {EXIT_SIMULATED_FAILURE} \
             (--allow-failure exits 0)",
            failures.join("; ")
        );
        return Ok(Ended::SimulatedFailure);
    }
    Ok(Ended::Ok)
}

/// A panic is a broken invariant in the simulator, never bad input; print how to replay it.
fn install_reproduce_hint(args: &RunArgs, seed: u64) {
    let mut command =
        format!("{} run {} --seed {seed}", crate::progress::program_name(), args.scenario.display());
    if let Some(trace) = &args.trace {
        command.push_str(&format!(" --trace {}", trace.display()));
    }
    if let Some(format) = args.trace_format {
        command.push_str(&format!(" --trace-format {}", format.name()));
    }
    if args.lenient {
        command.push_str(" --lenient");
    }
    if let Some(pace) = args.pace {
        command.push_str(&format!(" --pace {}", pace.name()));
    }
    if let Some(repeat) = args.repeat {
        command.push_str(&format!(" --repeat {repeat}"));
    }
    command.push_str(&args.decoding.command_text());
    for set in &args.sets {
        command.push_str(&format!(" --set '{set}'"));
    }
    if let Some(every) = args.sample_every {
        command.push_str(&format!(" --sample-every {}ns", every.0));
    }
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        eprintln!("this is a bug in swapsim; reproduce with: {command}");
    }));
}
