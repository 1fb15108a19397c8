//! `swapsim`: the command-line front end of the swap simulator.
//!
//! This crate is the only place that touches the outside world: it reads scenario files
//! and traces, wires the core engine to the readahead policies and device models the
//! scenario names, runs the simulation and prints the report. Everything it hands the
//! engine is validated first (parse, then validate, then build), so a mistake in a file
//! or an argument ends in an `error:` line that names the file, the line or the field,
//! never in a panic.
//!
//! What it deliberately does not do: simulate anything itself. Every number in a report
//! comes from `swapsim_core::run`; this crate only formats it and adds the host timings,
//! which it keeps under one `host` key so the rest of a report stays reproducible.

mod demo;
mod experiment;
mod output;
mod overrides;
mod scenario;
mod tracefile;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Command line of `swapsim`.
#[derive(Debug, Parser)]
#[command(
    name = "swapsim",
    version,
    about = "Deterministic discrete-event simulator of the Linux swap subsystem"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one scenario and print its report.
    Run(RunArgs),
    /// Run the bundled demo: one workload under four readahead policies, side by side.
    Demo(DemoArgs),
    /// Write the accesses of a scenario's `[workload.generator]` as a text trace.
    WriteTrace(WriteTraceArgs),
    /// Reproduce a published kernel experiment (`experiment list` names them).
    #[command(subcommand)]
    Experiment(ExperimentCommand),
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
    /// Experiment name, e.g. `swapoff-readahead` or `plug-merge`.
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
    /// Replay this trace instead of the scenario's workload (plain or zstd-compressed text).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Root seed; overrides the scenario's `seed`.
    #[arg(long)]
    seed: Option<u64>,
    /// Edit the scenario before it is read, e.g. `memcg.limit=128MiB` or
    /// `swap.devices.0.model.preset=nvme`. May be repeated; applied in order.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, clap::Args)]
struct DemoArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, clap::Args)]
struct WriteTraceArgs {
    /// A scenario whose workload is a `[workload.generator]` section with one task.
    scenario: PathBuf,
    /// Where to write the trace; a name ending in `.zst` is zstd-compressed.
    #[arg(long, short)]
    output: PathBuf,
    /// Root seed; overrides the scenario's `seed`.
    #[arg(long)]
    seed: Option<u64>,
    /// Edit the scenario before it is read, as for `run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` prints the whole context chain: file, then field or line, then cause.
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
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
    for set in &args.sets {
        command.push_str(&format!(" --set '{set}'"));
    }
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        eprintln!("this is a bug in swapsim; reproduce with: {command}");
    }));
}

fn dispatch(cli: Cli) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Run(args) => {
            let options = scenario::LoadOptions {
                sets: &args.sets,
                trace: args.trace.clone().map(tracefile::TraceSource::File),
                seed: args.seed,
            };
            let source = scenario::ScenarioSource::read(&args.scenario)?;
            let prepared = scenario::load(&source, options)?;
            install_reproduce_hint(&args, prepared.seed);
            let started = std::time::Instant::now();
            let report = prepared.run()?;
            let host = output::Host::measure(started.elapsed(), &report);
            let doc = output::RunDocument::new(&prepared, &report, Some(host));
            match args.format {
                Format::Json => output::write_json(&mut out, &doc)?,
                Format::Table => output::write_table(&mut out, &source.display, &doc)?,
            }
        }
        Command::Demo(args) => {
            let started = std::time::Instant::now();
            let runs = demo::run_all()?;
            match args.format {
                Format::Json => demo::write_json(&mut out, &runs, started.elapsed())?,
                Format::Table => demo::write_table(&mut out, &runs, started.elapsed())?,
            }
        }
        Command::Experiment(ExperimentCommand::List) => {
            for e in &experiment::EXPERIMENTS {
                writeln!(out, "{}\n  {}\n  published: {}\n", e.name, e.title, e.published)?;
            }
        }
        Command::Experiment(ExperimentCommand::Run(args)) => {
            let started = std::time::Instant::now();
            let outcome = experiment::run(&args.name, args.scale)?;
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
                experiment::write_csv(&mut csv, &outcome)?;
                std::fs::write(dir.join("result.csv"), csv)
                    .with_context(|| format!("writing {}", dir.display()))?;
            }
            match args.format {
                ExperimentFormat::Json => output::write_json(&mut out, &doc)?,
                ExperimentFormat::Csv => experiment::write_csv(&mut out, &outcome)?,
                ExperimentFormat::Table => {
                    experiment::write_table(&mut out, &outcome)?;
                    writeln!(out, "host: {wall_s:.1} s wall")?;
                }
            }
        }
        Command::WriteTrace(args) => {
            let options = scenario::LoadOptions { sets: &args.sets, trace: None, seed: args.seed };
            let source = scenario::ScenarioSource::read(&args.scenario)?;
            let prepared = scenario::load(&source, options)?;
            let n_accesses = tracefile::write_generated(&prepared, &args.output)?;
            writeln!(out, "wrote {n_accesses} accesses to {}", args.output.display())?;
        }
    }
    out.flush()?;
    Ok(())
}
