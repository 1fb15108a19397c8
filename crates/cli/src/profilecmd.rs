//! `swapsim profile fit`: its arguments, and the glue from them to the library's fit.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub(crate) enum ProfileCommand {
    /// Fit a device profile (TOML) from fio JSON output files (`fio --output-format=json`):
    /// random reads and writes at iodepth 1 with several block sizes, plus a deep-queue
    /// 4 KiB random read for parallelism and a large sequential job for bandwidth.
    Fit(ProfileFitArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ProfileFitArgs {
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

/// `swapsim profile fit`: prints the fitted profile as TOML, after a comment saying where
/// it goes.
pub(crate) fn run(out: &mut impl Write, command: ProfileCommand) -> Result<()> {
    let ProfileCommand::Fit(args) = command;
    let fitted = swapsim::profile::fit(&args.files, &args.name, args.overhead_us)?;
    for file in &fitted.skipped {
        writeln!(out, "# skipped {}: JSON, but not fio's output (no \"jobs\" array)", file.display())?;
    }
    writeln!(out, "# {}", fitted.description)?;
    writeln!(out, "# Paste under [swap.devices.model]: every field overrides the virtio preset.")?;
    writeln!(out, "{}", toml::to_string(&fitted.profile).context("serialising the profile")?.trim_end())?;
    Ok(())
}
