//! `swapsim`: the command-line front end of the swap simulator, as a library.
//!
//! The `swapsim` binary is [`main_with`] called with a [`Registry`] of no policies beyond
//! the built-in ones. A crate of one's own registers its policies and calls the same
//! function, and its binary then is the whole command line (`run`, `sweep`, `merge`,
//! `experiment`, `validate`, `trace`, ...) with those policies nameable wherever a scenario
//! names a policy:
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! fn main() -> ExitCode {
//!     let mut registry = swapsim::Registry::new();
//!     // registry.register_readahead("forward", |_| Box::new(MyReadahead))...
//!     swapsim_cli::main_with(registry)
//! }
//! ```
//!
//! Linking this library also installs its global allocator (it advises huge pages for the
//! model's large arrays), so a binary that calls [`main_with`] declares none of its own.
//!
//! A thin layer over the `swapsim` library: it parses arguments, calls the library to
//! load, run, sweep, validate or fit, and prints the result as a table, JSON, CSV,
//! Markdown or SVG. It also owns what only a command line needs: progress bars, the
//! panic hook that prints a reproducing command, the files `--out` writes, and trace
//! conversion. A mistake in a file or an argument ends in an `error:` line that names the
//! file, the line or the field, never in a panic.
//!
//! Exit status (written at the end of `--help`): 0 when all went well, 1 for a
//! usage or input error, 2 when `run` simulated a system that failed (an OOM kill or a
//! failed timeline operation) without `--allow-failure`, 3 when `validate --strict` found
//! scored figures outside their targets. Everything the command prints
//! reaches stdout before it exits, whatever the status.
//!
//! What it deliberately does not do: simulate or validate anything itself. Every number in
//! a report comes from the library; this crate only formats it and adds the host timings,
//! which it keeps under one `host` key so the rest of a report stays reproducible.

mod alloc;
mod demo;
mod experiment_output;
mod experimentcmd;
mod merge;
mod mrccmd;
mod outfile;
mod output;
mod plot;
#[cfg(target_os = "linux")]
mod probe;
mod profilecmd;
mod progress;
mod runcmd;
mod series_output;
mod series_plot;
mod sweep_doc;
mod sweep_output;
mod sweepcmd;
mod traceargs;
mod tracecmd;
mod validate_output;
mod validatecmd;

use anyhow::Result;
use clap::{Parser, Subcommand};
use experimentcmd::ExperimentCommand;
use mrccmd::MrcArgs;
use profilecmd::ProfileCommand;
use runcmd::{Format, RunArgs};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use swapsim::{Pace, Registry};
use sweepcmd::{MergeArgs, SweepArgs};
use traceargs::{TraceCommand, TraceGenerateArgs};
use validatecmd::ValidateArgs;

#[global_allocator]
static GLOBAL: alloc::HugePageAlloc = alloc::HugePageAlloc;

/// What the exit status means; printed at the end of `swapsim --help`.
const EXIT_STATUS: &str = "\
Exit status:
  0  success; also a sweep in which some variants failed (their status says so)
  1  a usage or input error: a bad argument, scenario, trace or shard file
  2  `run`: the simulated system failed, by an OOM kill or a failed timeline
     operation (such as a swapoff that ran out of memory); --allow-failure
     exits 0 instead, and the report still says what failed
  3  `validate --strict`: a scored figure is outside its target (the report
     lists which)";

/// The exit status of a usage or input error.
const EXIT_INPUT_ERROR: u8 = 1;
/// The exit status of a run whose simulated system failed.
const EXIT_SIMULATED_FAILURE: u8 = 2;
/// The exit status of `validate --strict` with scored figures outside their targets.
const EXIT_OUTSIDE_TARGETS: u8 = 3;

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
    /// Set a real kernel up as a validation case says (Linux; root to change anything):
    /// `probe plan CASE` prints the changes, `probe restore` undoes an interrupted probe's.
    #[cfg(target_os = "linux")]
    #[command(subcommand)]
    Probe(probe::ProbeCommand),
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
pub(crate) enum Ended {
    /// Nothing failed.
    Ok,
    /// The simulated system failed (and failure was not allowed).
    SimulatedFailure,
    /// `validate --strict` found scored figures outside their targets.
    OutsideTargets,
}

/// Runs the command line the process was started with, resolving the policy names that
/// scenarios, `--set` and `--vary` give through `registry` (the built-in policies always
/// resolve), and returns the exit status to end the process with.
pub fn main_with(registry: Registry) -> ExitCode {
    let registry = registry.into_shared();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // Help and version go to stdout and succeed; a usage error is an input error.
            // If even the message cannot be printed, there is nothing better to do.
            let _ = err.print();
            return if err.use_stderr() { ExitCode::from(EXIT_INPUT_ERROR) } else { ExitCode::SUCCESS };
        }
    };
    match dispatch(cli, &registry) {
        Ok(Ended::Ok) => ExitCode::SUCCESS,
        Ok(Ended::SimulatedFailure) => ExitCode::from(EXIT_SIMULATED_FAILURE),
        Ok(Ended::OutsideTargets) => ExitCode::from(EXIT_OUTSIDE_TARGETS),
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

fn dispatch(cli: Cli, registry: &Arc<Registry>) -> Result<Ended> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut ended = Ended::Ok;
    match cli.command {
        Command::Run(args) => ended = runcmd::run(&mut out, &args, registry)?,
        Command::Demo(args) => {
            alloc::keep_freed_memory();
            let started = std::time::Instant::now();
            let runs = demo::run_all()?;
            match args.format {
                Format::Json => demo::write_json(&mut out, &runs, started.elapsed())?,
                Format::Table => demo::write_table(&mut out, &runs, started.elapsed())?,
            }
        }
        Command::Profile(command) => profilecmd::run(&mut out, command)?,
        Command::Validate(args) => ended = validatecmd::run(&mut out, &args)?,
        Command::Experiment(command) => experimentcmd::run(&mut out, command)?,
        Command::WriteTrace(args) => traceargs::run(&mut out, TraceCommand::Generate(args), registry)?,
        Command::Trace(command) => traceargs::run(&mut out, command, registry)?,
        Command::Mrc(args) => mrccmd::run(&mut out, args)?,
        Command::Sweep(args) => {
            alloc::keep_freed_memory();
            sweepcmd::run_sweep(&mut out, &args, registry)?
        }
        Command::Merge(args) => sweepcmd::run_merge(&mut out, &args)?,
        #[cfg(target_os = "linux")]
        Command::Probe(command) => probe::run(&mut out, command)?,
    }
    out.flush()?;
    Ok(ended)
}
