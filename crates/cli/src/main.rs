//! `swapsim`: the command-line front end of the swap simulator.
//!
//! A thin layer over the `swapsim` library: it parses arguments, calls the library to
//! load, run, sweep, validate or fit, and prints the result as a table, JSON, CSV,
//! Markdown or SVG. It also owns what only a command line needs: progress bars, the
//! panic hook that prints a reproducing command, the files `--out` writes, and trace
//! conversion. A mistake in a file or an argument ends in an `error:` line that names the
//! file, the line or the field, never in a panic.
//!
//! Exit status (written in `--help` as [`EXIT_STATUS`]): 0 when all went well, 1 for a
//! usage or input error, 2 when `run` simulated a system that failed (an OOM kill or a
//! failed timeline operation) without `--allow-failure`. Everything the command prints
//! reaches stdout before it exits, whatever the status.
//!
//! What it deliberately does not do: simulate or validate anything itself. Every number in
//! a report comes from the library; this crate only formats it and adds the host timings,
//! which it keeps under one `host` key so the rest of a report stays reproducible.

mod alloc;
mod demo;
mod experiment_output;
mod merge;
mod outfile;
mod output;
mod plot;
mod progress;
mod sweep_doc;
mod sweep_output;
mod sweepcmd;
mod tracecmd;
mod validate_output;

use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use swapsim::{Host, Pace, RunDocument, RunStatus, Scenario, TraceFlags, TraceSource};
use sweepcmd::{MergeArgs, SweepArgs};

#[global_allocator]
static GLOBAL: alloc::HugePageAlloc = alloc::HugePageAlloc;

/// What the exit status means; printed at the end of `swapsim --help`.
const EXIT_STATUS: &str = "\
Exit status:
  0  success; also a sweep in which some variants failed (their status says so)
  1  a usage or input error: a bad argument, scenario, trace or shard file
  2  `run`: the simulated system failed, by an OOM kill or a failed timeline
     operation (such as a swapoff that ran out of memory); --allow-failure
     exits 0 instead, and the report still says what failed";

/// The exit status of a usage or input error.
const EXIT_INPUT_ERROR: u8 = 1;
/// The exit status of a run whose simulated system failed.
const EXIT_SIMULATED_FAILURE: u8 = 2;

/// Command line of `swapsim`.
#[derive(Debug, Parser)]
#[command(
    name = "swapsim",
    version,
    about = "Deterministic discrete-event simulator of the Linux swap subsystem",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one scenario and print its report; exits 2 if the simulated system failed.
    Run(RunArgs),
    /// Run the bundled demo: one workload under four readahead policies, side by side.
    Demo(DemoArgs),
    /// The older spelling of `trace generate SCENARIO`.
    WriteTrace(TraceGenerateArgs),
    /// Miss-ratio curves of a trace: LRU (from stack distances, one pass) and Belady's
    /// optimal policy, at the memory sizes given.
    Mrc(MrcArgs),
    /// Look at, convert and generate traces.
    ///
    /// Formats read, detected from the first bytes or named by --format: perf, ftrace,
    /// lackey, text, native, and libCacheSim's oracle-general, lcs, libcachesim-txt (one
    /// object id per line) and libcachesim-csv (never detected: name it, and give its
    /// columns with --trace-params 'obj-id-col=N,...' in libCacheSim's syntax), plain, gzip
    /// or zstd. A libCacheSim request becomes a read of one page (the first read of a page
    /// creates it, as the data exists): --object-map modulo (the
    /// default) takes the object id modulo --object-region (default 1GiB), --object-map
    /// dense numbers objects 0, 1, 2, ... in order of first request. See traces/README.md.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Run a scenario once per combination of `--vary` values and tabulate the results.
    Sweep(SweepArgs),
    /// Join the `--shard` documents of one sweep into the whole sweep's result.
    Merge(MergeArgs),
    /// Reproduce a published kernel experiment (`experiment list` names them).
    #[command(subcommand)]
    Experiment(ExperimentCommand),
    /// Replay cases measured on a real kernel and compare, counter by counter.
    Validate(ValidateArgs),
    /// Device profiles: `profile fit FIO.json...` writes one fitted from fio's output.
    #[command(subcommand)]
    Profile(ProfileCommand),
}

#[derive(Debug, Subcommand)]
enum ProfileCommand {
    /// Fit a device profile (TOML) from fio JSON output files (`fio --output-format=json`):
    /// random reads and writes at iodepth 1 with several block sizes, plus a deep-queue
    /// 4 KiB random read for parallelism and a large sequential job for bandwidth.
    Fit(ProfileFitArgs),
}

#[derive(Debug, clap::Args)]
struct ProfileFitArgs {
    /// fio JSON files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Name of the profile.
    #[arg(long, default_value = "fitted")]
    name: String,
    /// Latency fio sees above the block layer, in µs, subtracted from the fitted bases
    /// (7.7 on the validation machine).
    #[arg(long, default_value_t = 7.7)]
    overhead_us: f64,
}

#[derive(Debug, clap::Args)]
struct ValidateArgs {
    /// A directory of cases in the validation format (cases/*.json, traces/), e.g.
    /// validation/linux-6.18.
    dir: PathBuf,
    /// Only this case (by id); may be repeated.
    #[arg(long = "case", value_name = "ID")]
    cases: Vec<String>,
    /// Output format; markdown is what docs/validation.md holds. Markdown also replays
    /// every case under both LRU models and lays them side by side.
    #[arg(long, value_enum, default_value_t = ValidateFormat::Table)]
    format: ValidateFormat,
    /// LRU model to replay the cases with. The kernel ran the classic LRU, so only
    /// `classic` is a validation; `mglru` figures are printed as not validated.
    #[arg(long, value_enum, default_value_t = ValidateLru::Classic)]
    lru: ValidateLru,
}

/// The LRU models `validate` replays with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ValidateLru {
    Classic,
    Mglru,
}

impl ValidateLru {
    fn model(self) -> swapsim_core::config::LruModel {
        match self {
            ValidateLru::Classic => swapsim_core::config::LruModel::Classic,
            ValidateLru::Mglru => swapsim_core::config::LruModel::Mglru,
        }
    }
}

/// How validation results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ValidateFormat {
    Table,
    Json,
    Markdown,
}

#[derive(Debug, Subcommand)]
enum TraceCommand {
    /// Summarise a trace: format, records, tasks, pages, footprint, time span, reads and
    /// writes, skipped lines.
    Info(TraceInfoArgs),
    /// Print the first records as `pid/tid time_s R|W 0xADDRESS`.
    Head(TraceHeadArgs),
    /// Rewrite a trace as native, text or libCacheSim oracleGeneral.
    Convert(TraceConvertArgs),
    /// Write a built-in generator's accesses as a trace.
    Generate(TraceGenerateArgs),
}

/// How a trace is read, shared by the `trace` subcommands.
#[derive(Debug, clap::Args)]
struct TraceReadArgs {
    /// The trace's format [default: detected from the first bytes].
    #[arg(long, value_name = "FORMAT", value_parser = parse_trace_format)]
    format: Option<swapsim_trace_formats::Format>,
    /// Skip malformed lines, counting them by reason, instead of failing.
    #[arg(long)]
    lenient: bool,
    /// lackey: count instruction fetches as reads of their pages.
    #[arg(long)]
    instructions: bool,
    #[command(flatten)]
    objects: ObjectMapArgs,
}

impl TraceReadArgs {
    fn options(&self) -> Result<swapsim_trace_formats::OpenOptions> {
        Ok(swapsim_trace_formats::OpenOptions {
            format: self.format,
            lenient: self.lenient,
            instructions: self.instructions,
            object_map: self.objects.object_map()?,
            params: self.objects.trace_params.unwrap_or_default(),
        })
    }
}

/// `--object-map`: how libCacheSim's object ids become pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ObjectMapArg {
    /// Page = object id modulo --object-region: no memory, the identity below the region,
    /// and objects may share a page.
    Modulo,
    /// Pages 0, 1, 2, ... in order of each object's first request: one page per object,
    /// at the cost of a hash map entry per object.
    Dense,
}

/// How libCacheSim traces are read: how object ids map to pages, and the trace parameters
/// of its txt and csv formats.
#[derive(Debug, clap::Args)]
struct ObjectMapArgs {
    /// libCacheSim traces (oracle-general, lcs, libcachesim-txt, libcachesim-csv): how
    /// object ids become pages [default: modulo].
    #[arg(long, value_enum, value_name = "MAP")]
    object_map: Option<ObjectMapArg>,
    /// libCacheSim traces with --object-map modulo: the region object ids wrap around, a
    /// whole number of 4 KiB pages up to 128 TiB [default: 1GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_object_region)]
    object_region: Option<u64>,
    /// libcachesim-csv and libcachesim-txt: trace parameters in libCacheSim's own
    /// `--trace-type-params` syntax, e.g. 'obj-id-col=2,time-col=1,delimiter=,'. Keys:
    /// obj-id-col (csv, required), time-col, obj-size-col, delimiter, has-header,
    /// obj-id-is-num (also txt). See traces/README.md.
    #[arg(long, value_name = "PARAMS", alias = "trace-type-params", value_parser = parse_trace_params)]
    trace_params: Option<swapsim_trace_formats::TraceParams>,
}

impl ObjectMapArgs {
    /// The mapping the flags ask for, or `None` when neither flag was given.
    fn given(&self) -> Result<Option<swapsim_trace_formats::ObjectMap>> {
        if self.object_map.is_none() && self.object_region.is_none() {
            return Ok(None);
        }
        self.object_map().map(Some)
    }

    /// The flags as typed, for the reproducing command.
    fn command_text(&self) -> String {
        let mut text = String::new();
        if let Some(object_map) = self.object_map {
            text.push_str(if object_map == ObjectMapArg::Dense {
                " --object-map dense"
            } else {
                " --object-map modulo"
            });
        }
        if let Some(region_pages) = self.object_region {
            text.push_str(&format!(" --object-region {}", region_pages * 4096));
        }
        if let Some(params) = self.trace_params {
            text.push_str(&format!(" --trace-params '{params}'"));
        }
        text
    }

    fn object_map(&self) -> Result<swapsim_trace_formats::ObjectMap> {
        use swapsim_trace_formats::oracle::{ObjectMap, REGION_PAGES_DEFAULT};
        Ok(match (self.object_map, self.object_region) {
            (Some(ObjectMapArg::Dense), Some(_)) => {
                anyhow::bail!("--object-region: only applies to --object-map modulo")
            }
            (Some(ObjectMapArg::Dense), None) => ObjectMap::Dense,
            (Some(ObjectMapArg::Modulo) | None, region_pages) => {
                ObjectMap::Modulo { region_pages: region_pages.unwrap_or(REGION_PAGES_DEFAULT) }
            }
        })
    }
}

/// Parses `--object-region` into pages.
fn parse_object_region(text: &str) -> Result<u64, String> {
    use swapsim_trace_formats::oracle::REGION_PAGES_MAX;
    let size = swapsim_core::ByteSize::parse(text).map_err(|err| err.to_string())?;
    let bytes = size.0;
    if bytes == 0 || !bytes.is_multiple_of(4096) {
        return Err(format!("{text} is not a positive whole number of 4 KiB pages"));
    }
    let pages = bytes / 4096;
    if pages > REGION_PAGES_MAX {
        return Err(format!("{text} is above the largest region, 128 TiB ({REGION_PAGES_MAX} pages)"));
    }
    Ok(pages)
}

/// Parses `--trace-params`.
fn parse_trace_params(text: &str) -> Result<swapsim_trace_formats::TraceParams, String> {
    swapsim_trace_formats::TraceParams::parse(text)
}

fn parse_trace_format(name: &str) -> Result<swapsim_trace_formats::Format, String> {
    swapsim::parse_format(name)
}

#[derive(Debug, clap::Args)]
struct MrcArgs {
    /// The trace (any supported format, plain, gzip or zstd).
    file: PathBuf,
    #[command(flatten)]
    read: TraceReadArgs,
    /// Memory sizes, comma-separated: a number of pages (`512`) or a size (`2MiB`, a
    /// multiple of 4 KiB).
    #[arg(long, value_delimiter = ',', required = true, value_parser = parse_mrc_size)]
    sizes: Vec<u64>,
    /// Print one JSON document instead of the table.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print CSV, one line per size, instead of the table.
    #[arg(long)]
    csv: bool,
    /// Also draw the curves as an SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// A memory size of `mrc --sizes`, in pages: a plain number is pages, anything else a size.
fn parse_mrc_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
        return text.parse::<u64>().map_err(|_| format!("\"{text}\" is too many pages"));
    }
    let size = swapsim_core::ByteSize::parse(text).map_err(|e| e.to_string())?;
    if size.0 % 4096 != 0 {
        return Err(format!("{text} is not a whole number of 4 KiB pages"));
    }
    Ok(size.0 / 4096)
}

#[derive(Debug, clap::Args)]
struct TraceInfoArgs {
    /// The trace (any supported format, plain, gzip or zstd).
    file: PathBuf,
    #[command(flatten)]
    read: TraceReadArgs,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct TraceHeadArgs {
    /// The trace.
    file: PathBuf,
    /// Records to print.
    #[arg(short = 'n', default_value_t = 10)]
    n: u64,
    #[command(flatten)]
    read: TraceReadArgs,
}

#[derive(Debug, clap::Args)]
struct TraceConvertArgs {
    /// The trace to read.
    input: PathBuf,
    /// Where to write; a name ending in `.zst` or `.gz` is compressed.
    output: PathBuf,
    /// Output format [default: native when OUTPUT ends in .swt or .swapsim, oracle-general
    /// when it ends in .oracleGeneral, text otherwise]. oracle-general keeps the whole trace
    /// in memory (about 20 bytes per record) to compute each request's next access.
    #[arg(long, value_enum)]
    to: Option<tracecmd::WriteFormat>,
    /// The input's format [default: detected].
    #[arg(long, value_name = "FORMAT", value_parser = parse_trace_format)]
    from: Option<swapsim_trace_formats::Format>,
    /// Skip malformed input lines instead of failing.
    #[arg(long)]
    lenient: bool,
    /// lackey: count instruction fetches as reads of their pages.
    #[arg(long)]
    instructions: bool,
    #[command(flatten)]
    objects: ObjectMapArgs,
}

#[derive(Debug, clap::Args)]
struct TraceGenerateArgs {
    /// A scenario whose workload is a `[workload.generator]` section; or give --pattern or
    /// --phase instead.
    scenario: Option<PathBuf>,
    /// One phase: PATTERN:REGION:PASSES[:WRITE_FRACTION], e.g. `zipf:64MiB:2`. Repeat to run
    /// phases one after another in one task, over one region as large as the largest phase.
    /// PATTERN is seq, rand, zipf, hotcold or stride; other generator settings take their
    /// defaults (zipf exponent 0.9, 10 % hot pages taking 90 % of accesses, stride 16);
    /// WRITE_FRACTION defaults to 0.2.
    #[arg(long = "phase", value_name = "SPEC", value_parser = parse_phase, conflicts_with = "scenario")]
    phases: Vec<tracecmd::Phase>,
    /// A single phase, given as --pattern, --region and --passes.
    #[arg(long, conflicts_with_all = ["scenario", "phases"], requires = "region")]
    pattern: Option<String>,
    /// With --pattern: the region size, e.g. 64MiB (sizes as in a scenario: KiB/MiB/GiB and
    /// K/M/G are powers of 1024, kB/MB/GB powers of 1000).
    #[arg(long, requires = "pattern")]
    region: Option<String>,
    /// With --pattern: passes over the region.
    #[arg(long, default_value_t = 1, requires = "pattern")]
    passes: u32,
    /// With --pattern: the probability that an access is a write.
    #[arg(long, requires = "pattern")]
    write_fraction: Option<f64>,
    /// With --phase or --pattern: skip the fill that writes every page once, in order,
    /// before the first phase.
    #[arg(long, conflicts_with = "scenario")]
    no_fill: bool,
    /// Where to write the trace; a name ending in `.zst` or `.gz` is compressed.
    #[arg(long, short)]
    output: PathBuf,
    /// Output format [default: native when OUTPUT ends in .swt or .swapsim, oracle-general
    /// when it ends in .oracleGeneral, text otherwise]. oracle-general keeps the whole trace
    /// in memory (about 20 bytes per record) to compute each request's next access.
    #[arg(long, value_enum)]
    to: Option<tracecmd::WriteFormat>,
    /// Root seed; overrides the scenario's `seed` [default: the scenario's, or 1].
    #[arg(long)]
    seed: Option<u64>,
    /// Edit the scenario before it is read, as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE", requires = "scenario")]
    sets: Vec<String>,
}

fn parse_phase(text: &str) -> Result<tracecmd::Phase, String> {
    tracecmd::Phase::parse(text)
}

#[derive(Debug, Subcommand)]
enum ExperimentCommand {
    /// List the named experiments and what was published.
    List,
    /// Run one experiment: its setup, a table laid out like the publication's, a verdict.
    Run(ExperimentArgs),
}

#[derive(Debug, clap::Args)]
struct ExperimentArgs {
    /// Experiment name, e.g. `swapoff-readahead`, `plug-merge` or `mthp-swapin`.
    name: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExperimentFormat::Table)]
    format: ExperimentFormat,
    /// Also write result.json and result.csv into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Shrink memory and swap sizes by this factor (0 < scale <= 1) for a quick run; the
    /// comparison with the publication holds at 1.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
}

/// How an experiment's result is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ExperimentFormat {
    Table,
    Json,
    Csv,
}

/// How a report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A readable summary.
    Table,
    /// One JSON document.
    Json,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
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
    #[arg(long, value_parser = pace_values())]
    pace: Option<Pace>,
    /// Replay the whole trace N times in a row (1..=1000); gives a first-touch fault trace
    /// reuse, which is an assumption about the workload (see traces/README.md).
    #[arg(long, value_name = "N")]
    repeat: Option<u32>,
    /// lackey: count instruction fetches as reads of their pages.
    #[arg(long)]
    instructions: bool,
    #[command(flatten)]
    objects: ObjectMapArgs,
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
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Exit 0 even if the simulated system failed (an OOM kill, a failed timeline
    /// operation), for runs that explore failure on purpose; the report still says what
    /// failed.
    #[arg(long)]
    allow_failure: bool,
}

#[derive(Debug, clap::Args)]
struct DemoArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// `--pace`: the names of [`Pace`], each with its help, parsed to the pace. Pace lives in
/// trace-formats, which knows no argument parser, so its names are mapped here.
fn pace_values() -> impl clap::builder::TypedValueParser<Value = Pace> {
    use clap::builder::TypedValueParser as _;
    let values = Pace::ALL.map(|pace| {
        let help = match pace {
            Pace::Timestamps => {
                "A task's think time before each access is the time since its previous record, when the \
                 trace records time; otherwise the CPU cost profile's `access_ns`"
            }
            Pace::Cpu => "Every access costs the CPU cost profile's `access_ns`; timestamps are ignored",
        };
        clap::builder::PossibleValue::new(pace.name()).help(help)
    });
    clap::builder::PossibleValuesParser::new(values)
        .map(|name| Pace::from_name(&name).expect("the parser accepts only the names of Pace::ALL"))
}

/// How a command that printed its result ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    /// Nothing failed.
    Ok,
    /// The simulated system failed (and failure was not allowed).
    SimulatedFailure,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and version go to stdout and succeed; a usage error is an input error.
            // If even the message cannot be printed, there is nothing better to do.
            let _ = err.print();
            return if err.use_stderr() { ExitCode::from(EXIT_INPUT_ERROR) } else { ExitCode::SUCCESS };
        }
    };
    match dispatch(cli) {
        Ok(Ended::Ok) => ExitCode::SUCCESS,
        Ok(Ended::SimulatedFailure) => ExitCode::from(EXIT_SIMULATED_FAILURE),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` prints the whole context chain: file, then field or line, then cause.
            eprintln!("error: {err:#}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

/// A reader such as `head` closed our output early; that is not a failure of the run.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A panic is a broken invariant in the simulator, never bad input; print how to replay it.
fn install_reproduce_hint(args: &RunArgs, seed: u64) {
    let mut command = format!("swapsim run {} --seed {seed}", args.scenario.display());
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
    if args.instructions {
        command.push_str(" --instructions");
    }
    command.push_str(&args.objects.command_text());
    for set in &args.sets {
        command.push_str(&format!(" --set '{set}'"));
    }
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        eprintln!("this is a bug in swapsim; reproduce with: {command}");
    }));
}

fn dispatch(cli: Cli) -> Result<Ended> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut ended = Ended::Ok;
    match cli.command {
        Command::Run(args) => {
            alloc::use_huge_pages();
            let mut scenario =
                Scenario::load(&args.scenario)?.edits(&args.sets)?.with_trace_flags(TraceFlags {
                    format: args.trace_format,
                    lenient: args.lenient,
                    pace: args.pace,
                    repeat: args.repeat,
                    instructions: args.instructions,
                    object_map: args.objects.given()?,
                    params: args.objects.trace_params,
                });
            if let Some(trace) = &args.trace {
                scenario = scenario.with_trace(TraceSource::File(trace.clone()));
            }
            if let Some(seed) = args.seed {
                scenario = scenario.with_seed(seed);
            }
            let prepared = scenario.prepare()?;
            install_reproduce_hint(&args, prepared.seed());
            let started = std::time::Instant::now();
            let (report, trace) = progress::watch("accesses", |bar| prepared.run_with_progress(bar))?;
            let host = Host::measure(started.elapsed(), &report);
            let doc = RunDocument::new(&prepared, &report).with_trace(trace.as_ref()).with_host(host);
            let status = RunStatus::of(&report);
            match args.format {
                Format::Json => output::write_json(&mut out, &doc)?,
                Format::Table => output::write_table(&mut out, scenario.name(), &doc, &status)?,
            }
            if status.failed() && !args.allow_failure {
                let failures: Vec<String> = status.failures().iter().map(ToString::to_string).collect();
                eprintln!(
                    "swapsim: the simulated system failed ({}); exit status {EXIT_SIMULATED_FAILURE} \
                     (--allow-failure exits 0)",
                    failures.join("; ")
                );
                ended = Ended::SimulatedFailure;
            }
        }
        Command::Demo(args) => {
            alloc::keep_freed_memory();
            let started = std::time::Instant::now();
            let runs = demo::run_all()?;
            match args.format {
                Format::Json => demo::write_json(&mut out, &runs, started.elapsed())?,
                Format::Table => demo::write_table(&mut out, &runs, started.elapsed())?,
            }
        }
        Command::Profile(ProfileCommand::Fit(args)) => {
            let fitted = swapsim::profile::fit(&args.files, &args.name, args.overhead_us)?;
            writeln!(out, "# {}", fitted.description)?;
            writeln!(out, "# Paste under [swap.devices.model]: every field overrides the virtio preset.")?;
            writeln!(
                out,
                "{}",
                toml::to_string(&fitted.profile).context("serialising the profile")?.trim_end()
            )?;
        }
        Command::Validate(args) => {
            if args.cases.len() == 1 && args.format != ValidateFormat::Markdown {
                // One run, whose arrays live to its end: as `swapsim run`.
                alloc::use_huge_pages();
            } else {
                alloc::keep_freed_memory();
            }
            let lru = args.lru.model();
            if args.format == ValidateFormat::Markdown {
                let (v, cmp) = progress::watch("cases", |bar| {
                    swapsim::validate::run_compared(&args.dir, &args.cases, lru, bar)
                })?;
                validate_output::write_markdown(&mut out, &v, &cmp, &args.dir)?;
            } else {
                let v = progress::watch("cases", |bar| {
                    swapsim::validate::run_lru(&args.dir, &args.cases, lru, bar)
                })?;
                match args.format {
                    ValidateFormat::Json => output::write_json(&mut out, &v)?,
                    _ => validate_output::write_table(&mut out, &v)?,
                }
            }
        }
        Command::Experiment(ExperimentCommand::List) => {
            for e in swapsim::experiment::list() {
                writeln!(out, "{}\n  {}\n  published: {}\n", e.name, e.title, e.published)?;
            }
        }
        Command::Experiment(ExperimentCommand::Run(args)) => {
            alloc::keep_freed_memory();
            let started = std::time::Instant::now();
            let outcome = progress::watch("runs", |bar| {
                swapsim::experiment::run_with_progress(&args.name, args.scale, bar)
            })?;
            let wall_s = started.elapsed().as_secs_f64();
            // The result's fields, then `host`: the only part that depends on this machine.
            let mut doc = serde_json::to_value(&outcome)?;
            doc.as_object_mut()
                .context("an experiment result is an object")?
                .insert("host".into(), serde_json::json!({ "wall_s": wall_s }));
            if let Some(dir) = &args.out {
                std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
                let mut json = Vec::new();
                output::write_json(&mut json, &doc)?;
                std::fs::write(dir.join("result.json"), json)
                    .with_context(|| format!("writing {}", dir.display()))?;
                let mut csv = Vec::new();
                experiment_output::write_csv(&mut csv, &outcome)?;
                std::fs::write(dir.join("result.csv"), csv)
                    .with_context(|| format!("writing {}", dir.display()))?;
            }
            match args.format {
                ExperimentFormat::Json => output::write_json(&mut out, &doc)?,
                ExperimentFormat::Csv => experiment_output::write_csv(&mut out, &outcome)?,
                ExperimentFormat::Table => {
                    experiment_output::write_table(&mut out, &outcome)?;
                    writeln!(out, "host: {wall_s:.1} s wall")?;
                }
            }
        }
        Command::WriteTrace(args) => run_trace_command(&mut out, TraceCommand::Generate(args))?,
        Command::Trace(command) => run_trace_command(&mut out, command)?,
        Command::Mrc(args) => {
            let mrc =
                swapsim::mrc::compute(&TraceSource::File(args.file), args.read.options()?, &args.sizes)?;
            if let Some(path) = &args.plot {
                std::fs::write(path, plot::mrc_svg(&mrc)?)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            if args.json {
                output::write_json(&mut out, &mrc)?;
            } else if args.csv {
                tracecmd::write_mrc_csv(&mut out, &mrc)?;
            } else {
                tracecmd::write_mrc_table(&mut out, &mrc)?;
            }
        }
        Command::Sweep(args) => {
            alloc::keep_freed_memory();
            sweepcmd::run_sweep(&mut out, &args)?
        }
        Command::Merge(args) => sweepcmd::run_merge(&mut out, &args)?,
    }
    out.flush()?;
    Ok(ended)
}

fn run_trace_command(out: &mut impl Write, command: TraceCommand) -> Result<()> {
    match command {
        TraceCommand::Info(args) => {
            let info = tracecmd::info(&TraceSource::File(args.file), args.read.options()?)?;
            if args.json {
                output::write_json(out, &info)?;
            } else {
                tracecmd::write_info(out, &info)?;
            }
        }
        TraceCommand::Head(args) => {
            tracecmd::head(out, &TraceSource::File(args.file), args.read.options()?, args.n)?;
        }
        TraceCommand::Convert(args) => {
            let options = swapsim_trace_formats::OpenOptions {
                format: args.from,
                lenient: args.lenient,
                instructions: args.instructions,
                object_map: args.objects.object_map()?,
                params: args.objects.trace_params.unwrap_or_default(),
            };
            let input = TraceSource::File(args.input);
            let done = tracecmd::convert(&input, options, &args.output, args.to)?;
            let to = done.to.name();
            writeln!(
                out,
                "wrote {} records ({} to {to}) to {}, {}",
                done.records,
                done.from.name(),
                args.output.display(),
                output::skipped_text(&done.skipped)
            )?;
        }
        TraceCommand::Generate(args) => {
            let n_records = match &args.scenario {
                Some(path) => {
                    let mut scenario = Scenario::load(path)?.edits(&args.sets)?;
                    if let Some(seed) = args.seed {
                        scenario = scenario.with_seed(seed);
                    }
                    let prepared = scenario.prepare()?;
                    tracecmd::generate(tracecmd::GenerateInput::Scenario(&prepared), &args.output, args.to)?
                }
                None => {
                    let mut phases = args.phases.clone();
                    if let Some(pattern) = &args.pattern {
                        let region = args.region.as_deref().unwrap_or_default();
                        let mut spec = format!("{pattern}:{region}:{}", args.passes);
                        if let Some(fraction) = args.write_fraction {
                            spec.push_str(&format!(":{fraction}"));
                        }
                        phases.push(
                            tracecmd::Phase::parse(&spec)
                                .map_err(|message| anyhow!("--pattern: {message}"))?,
                        );
                    }
                    let input = tracecmd::GenerateInput::Phases {
                        phases: &phases,
                        fill: !args.no_fill,
                        seed: args.seed.unwrap_or(1),
                    };
                    tracecmd::generate(input, &args.output, args.to)?
                }
            };
            writeln!(out, "wrote {n_records} records to {}", args.output.display())?;
        }
    }
    Ok(())
}
