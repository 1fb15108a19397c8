//! `swapsim experiment list|run`: their arguments, and the glue from them to the
//! library's experiments and to `experiment_output.rs`.

use anyhow::{Context, Result};
use clap::{Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{alloc, experiment_output, output, progress};

#[derive(Debug, Subcommand)]
pub(crate) enum ExperimentCommand {
    /// List the named experiments and what was published.
    List,
    /// Run one experiment: its setup, a table laid out like the publication's, a verdict.
    Run(ExperimentArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExperimentArgs {
    /// Experiment name, e.g. `swapoff-readahead`, `plug-merge` or `mthp-swapin`.
    name: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExperimentFormat::Table)]
    format: ExperimentFormat,
    /// Also write result.json and result.csv into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Shrink memory and swap sizes by this factor (0 < scale <= 1) for a quick run. The
    /// verdict compares with the publication at 1 only: at a smaller scale the workload is
    /// not the published one and a verdict can turn either way (the report says so).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
}

/// How an experiment's result is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExperimentFormat {
    Table,
    Json,
    Csv,
}

/// `swapsim experiment`.
pub(crate) fn run(out: &mut impl Write, command: ExperimentCommand) -> Result<()> {
    match command {
        ExperimentCommand::List => {
            for e in swapsim::experiment::list() {
                writeln!(out, "{}\n  {}\n  published: {}\n", e.name, e.title, e.published)?;
            }
        }
        ExperimentCommand::Run(args) => run_one(out, &args)?,
    }
    Ok(())
}

/// `swapsim experiment run`: the result, with the host's wall time, in `--format`, and
/// in the `--out` files.
fn run_one(out: &mut impl Write, args: &ExperimentArgs) -> Result<()> {
    alloc::keep_freed_memory();
    let started = std::time::Instant::now();
    let outcome =
        progress::watch("runs", |bar| swapsim::experiment::run_with_progress(&args.name, args.scale, bar))?;
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
        write_into(dir, "result.json", json)?;
        let mut csv = Vec::new();
        experiment_output::write_csv(&mut csv, &outcome)?;
        write_into(dir, "result.csv", csv)?;
    }
    match args.format {
        ExperimentFormat::Json => output::write_json(out, &doc)?,
        ExperimentFormat::Csv => experiment_output::write_csv(out, &outcome)?,
        ExperimentFormat::Table => {
            experiment_output::write_table(out, &outcome)?;
            writeln!(out, "host: {wall_s:.1} s wall")?;
        }
    }
    Ok(())
}

/// Writes `bytes` to the file `name` in `dir`.
fn write_into(dir: &Path, name: &str, bytes: Vec<u8>) -> Result<()> {
    crate::outfile::write_atomically(&dir.join(name), &bytes)
}
