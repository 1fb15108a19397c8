//! `swapsim probe`: setting up a real kernel as a validation case says, and the workload
//! program that runs on it (Linux only; changing the machine needs root).
//!
//! Split by concern: `exec` (the workload program, `probe exec`, hidden: the probe starts
//! it), `host` (the machine's files under a root), `plan` (a case's set-up as a list of
//! steps), `setup` (applying them, the state file, restoring) and `system` (cgroups and
//! swap devices). `probe plan` prints what a probe of a case would change and whether it
//! may start; `probe restore` undoes what an interrupted probe left changed.
//!
//! What it does not do yet: measure the kernel's counters or write a case.

mod exec;
mod host;
mod plan;
mod setup;
mod system;

#[cfg(test)]
mod tests;

use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;

/// The default folder of the state file.
const STATE_DIR_DEFAULT: &str = "/var/lib/swapsim-probe";

/// `swapsim probe ...`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum ProbeCommand {
    /// Print what probing a case would change on this machine, step by step with each
    /// knob's current value, and check that a probe may start; changes nothing.
    Plan(PlanArgs),
    /// Undo what an interrupted probe left changed, from its state file.
    Restore(RestoreArgs),
    /// The workload program a probe runs (started by the probe itself).
    #[command(hide = true)]
    Exec(exec::ExecArgs),
}

/// Where the machine's files are, and where the state file is.
#[derive(Debug, clap::Args)]
pub(crate) struct MachineArgs {
    /// The folder of the probe's state file.
    #[arg(long, value_name = "DIR", default_value = STATE_DIR_DEFAULT)]
    state_dir: PathBuf,
    /// The root the machine's files are read under (a test tree; `/` on a machine).
    #[arg(long, value_name = "DIR", default_value = "/", hide = true)]
    root: PathBuf,
}

/// `swapsim probe plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {
    /// The case (`swapsim-validation/1` JSON) whose set-up to plan.
    case: PathBuf,
    #[command(flatten)]
    machine: MachineArgs,
    /// Probe even while swap the probe did not make is on.
    #[arg(long)]
    leave_existing_swap: bool,
    /// The swap file a case on a swap file gets (on a disk, not tmpfs).
    #[arg(long, value_name = "PATH", default_value = "/var/tmp/swapsim-probe.swap")]
    swap_file: String,
    /// The zram device a case on zram gets.
    #[arg(long, value_name = "NAME", default_value = "zram0")]
    zram: String,
}

/// `swapsim probe restore`.
#[derive(Debug, clap::Args)]
pub(crate) struct RestoreArgs {
    /// The folder of the probe's state file.
    #[arg(long, value_name = "DIR", default_value = STATE_DIR_DEFAULT)]
    state_dir: PathBuf,
}

/// Runs a `probe` command.
pub(crate) fn run(out: &mut dyn Write, command: ProbeCommand) -> Result<()> {
    match command {
        ProbeCommand::Plan(args) => {
            let host = host::Host::new(&args.machine.root);
            let places = plan::Places { swap_file: args.swap_file.clone(), zram: args.zram.clone() };
            let plan = plan::plan_file(&host, &args.case, &places)?;
            plan::write_plan(out, &plan, &host)?;
            let options = setup::StartOptions {
                state_dir: args.machine.state_dir,
                leave_existing_swap: args.leave_existing_swap,
            };
            setup::check(&host, &plan, &options)
                .map_err(|err| err.context("a probe would refuse to start"))?;
            writeln!(out, "a probe may start")?;
        }
        ProbeCommand::Restore(args) => {
            // Ctrl-C must not cut a restore short: the flag is set and nobody reads it.
            setup::catch_interrupts();
            let mut real = |host: &host::Host| -> Box<dyn system::System> {
                Box::new(system::RealSystem::new(host.clone()))
            };
            match setup::restore_saved(&args.state_dir, &mut real)? {
                setup::Restored::Nothing => writeln!(
                    out,
                    "nothing to restore: no {}",
                    args.state_dir.join(setup::STATE_FILE).display()
                )?,
                setup::Restored::Steps(n_steps) => {
                    writeln!(out, "restored: {n_steps} steps undone, state file removed")?
                }
            }
        }
        ProbeCommand::Exec(args) => exec::run(out, &args)?,
    }
    Ok(())
}
