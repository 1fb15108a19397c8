//! `swapsim probe`: setting up a real kernel as a validation case says, and the workload
//! program that runs on it (Linux only; changing the machine needs root).
//!
//! Split by concern: `exec` (the workload program, `probe exec`, hidden: the probe starts
//! it), `host` (the machine's files under a root), `plan` (a case's set-up as a list of
//! steps), `setup` (applying them, the state file, restoring) and `system` (cgroups and
//! swap devices). `probe plan` prints what a probe of a case would change and whether it
//! may start; `probe restore` undoes what an interrupted probe left changed.
//!
//! `probe run` (`run`) measures a case's workload on this machine's kernel, repeat by
//! repeat, and writes a case of its own (measurement and the case format are the library's,
//! `swapsim::probe`). Block figures come from the disk's `stat` file and, with tracefs, its tracepoints
//! (`blocktrace`). `probe disk` (`disk`) times the swap file's disk into a device profile
//! beside the cases, which `swapsim validate` replays swap-file cases on; `probe run` does
//! it first when the output folder has none.

mod blocktrace;
mod disk;
mod exec;
mod host;
mod plan;
mod run;
mod setup;
mod system;

#[cfg(test)]
mod tests;

use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    /// Measure a case's workload on this machine's kernel (root) and write it as a case of
    /// its own, which `swapsim validate` scores: the case's set-up applied, its trace run
    /// `--repeats` times, every change restored after each repeat.
    Run(RunArgs),
    /// Time the disk a swap file lies on (direct I/O on a scratch file beside it; with fio
    /// when installed) and write a device profile fitted from it to OUT/device/profile.toml,
    /// which `swapsim validate OUT` uses for the folder's swap-file cases. Needs no root.
    Disk(DiskArgs),
    /// The workload program a probe runs (started by the probe itself).
    #[command(hide = true)]
    Exec(exec::ExecArgs),
}

/// Where the machine's files are, where the state file is, and what a probe may make or
/// leave alone there.
#[derive(Debug, clap::Args)]
pub(crate) struct MachineArgs {
    /// The folder of the probe's state file.
    #[arg(long, value_name = "DIR", default_value = STATE_DIR_DEFAULT)]
    state_dir: PathBuf,
    /// The root the machine's files are read under (a test tree; `/` on a machine).
    #[arg(long, value_name = "DIR", default_value = "/", hide = true)]
    root: PathBuf,
    /// Probe even while swap the probe did not make is on.
    #[arg(long)]
    leave_existing_swap: bool,
    /// The swap file a case on a swap file gets (on a disk, not tmpfs).
    #[arg(long, value_name = "PATH", default_value = "/var/tmp/swapsim-probe.swap")]
    swap_file: String,
    /// The zram device a case on zram gets.
    #[arg(long, value_name = "NAME", default_value = "zram0")]
    zram: String,
    /// An existing block device (`/dev/vdb1`) a swap-file or partition case swaps on
    /// instead of a swap file. It is FORMATTED with mkswap (its contents are lost) and
    /// touched in no other way; it must not be mounted or swap already.
    #[arg(long, value_name = "PATH")]
    swap_device: Option<String>,
    /// The block device the swap file lies on (`vda`): its rotational flag is set as the
    /// case had it, and its request and sector counts measured. A --swap-device is known
    /// without it; a zram device is known.
    #[arg(long, value_name = "NAME")]
    block_device: Option<String>,
}

impl MachineArgs {
    /// Where the probe puts what it makes.
    fn places(&self) -> plan::Places {
        plan::Places {
            swap_file: self.swap_file.clone(),
            zram: self.zram.clone(),
            swap_device: self.swap_device.clone(),
            disk: self.disk(),
        }
    }

    /// The disk holding the swap area: `--block-device`, else the --swap-device's name.
    fn disk(&self) -> Option<String> {
        let device =
            self.swap_device.as_deref().map(|path| path.rsplit('/').next().unwrap_or(path).to_string());
        self.block_device.clone().or(device)
    }

    fn options(&self) -> setup::StartOptions {
        setup::StartOptions {
            state_dir: self.state_dir.clone(),
            leave_existing_swap: self.leave_existing_swap,
        }
    }
}

/// `swapsim probe plan`.
#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {
    /// The case (`swapsim-validation/1` JSON) whose set-up to plan.
    case: PathBuf,
    #[command(flatten)]
    machine: MachineArgs,
}

/// `swapsim probe run`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The case (`swapsim-validation/1` JSON) whose workload to measure; its trace is read
    /// from the folder holding its `cases` folder.
    case: PathBuf,
    /// The folder to write the new case into (`cases/ID.json`, its trace under `traces/`).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The new case's id. Default: the input's id followed by `-probe`.
    #[arg(long)]
    id: Option<String>,
    /// Runs of the workload; the case gives the median, least and largest of each figure.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=99))]
    repeats: u32,
    /// The CPU the workload is pinned to. Default: the last one.
    #[arg(long)]
    cpu: Option<usize>,
    /// Do not time the disk first (a swap-file case's output folder without a
    /// device/profile.toml otherwise gets one, as `probe disk` makes it).
    #[arg(long)]
    no_disk_timing: bool,
    /// Also write every request the block tracepoints saw on the swap disk, per repeat, to
    /// this CSV file: issue time, service time, direction, flags, start sector, length,
    /// the reads and writes in flight when it was issued, and the issuing task. Needs
    /// tracefs and --block-device (or a zram case).
    #[arg(long, value_name = "FILE")]
    requests_out: Option<PathBuf>,
    #[command(flatten)]
    machine: MachineArgs,
}

/// `swapsim probe disk`.
#[derive(Debug, clap::Args)]
pub(crate) struct DiskArgs {
    /// The folder to write device/profile.toml (and each timing job's JSON) into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The scratch file timed (made, then removed): on the file system the swap file
    /// would be on. A block device under /dev is OVERWRITTEN in place (its first
    /// --disk-size-mib), as `probe run --swap-device` does before formatting it; it must not
    /// be mounted or swap.
    #[arg(long, value_name = "PATH", default_value = "/var/tmp/swapsim-probe.disk")]
    scratch: PathBuf,
    #[command(flatten)]
    timing: TimingArgs,
}

/// How the disk is timed.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct TimingArgs {
    /// The scratch file's size, MiB.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(16..=65536), value_name = "MIB")]
    disk_size_mib: u64,
    /// Seconds each timing job runs.
    #[arg(long, default_value_t = 2.0, value_name = "S")]
    disk_seconds: f64,
    /// What times the jobs: fio when installed (auto), fio, or the probe's own direct-I/O
    /// timer.
    #[arg(long, value_enum, default_value_t = TimerArg::Auto)]
    timer: TimerArg,
    /// The block device the file system lies on (`vda`), to measure the latency above the
    /// block layer with its tracepoints; without it 7.7 µs is assumed.
    #[arg(long, value_name = "NAME")]
    block_device: Option<String>,
}

/// What times the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TimerArg {
    Auto,
    Fio,
    Own,
}

impl TimingArgs {
    fn timing(&self, scratch: PathBuf) -> Result<disk::DiskTiming> {
        if !(self.disk_seconds > 0.0 && self.disk_seconds <= 600.0) {
            anyhow::bail!(
                "--disk-seconds {}: give a number of seconds above 0, at most 600",
                self.disk_seconds
            );
        }
        let timer = match self.timer {
            TimerArg::Fio if !disk::fio_installed() => anyhow::bail!("--timer fio: fio is not installed"),
            TimerArg::Fio => disk::Timer::Fio,
            TimerArg::Own => disk::Timer::Own,
            TimerArg::Auto if disk::fio_installed() => disk::Timer::Fio,
            TimerArg::Auto => disk::Timer::Own,
        };
        Ok(disk::DiskTiming {
            scratch,
            size_bytes: self.disk_size_mib << 20,
            seconds: self.disk_seconds,
            timer,
            block_device: self.block_device.clone(),
        })
    }
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
            let plan = plan::plan_file(&host, &args.case, &args.machine.places())?;
            plan::write_plan(out, &plan, &host)?;
            setup::check(&host, &plan, &args.machine.options())
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
        ProbeCommand::Run(args) => run_probe(out, args)?,
        ProbeCommand::Disk(args) => {
            let host = host::Host::new(Path::new("/"));
            if let Some(path) = args.scratch.to_str().filter(|p| p.starts_with("/dev/")) {
                setup::check_swap_device(&host, path, &host.active_swaps()?)?;
            }
            let timing = args.timing.timing(args.scratch.clone())?;
            let mut say = |line: &str| eprintln!("{line}");
            let profile = disk::time_disk(&host, &timing, &args.out, &mut say)?;
            writeln!(out, "wrote {}", profile.display())?;
        }
        ProbeCommand::Exec(args) => exec::run(out, &args)?,
    }
    Ok(())
}

/// `swapsim probe run`.
fn run_probe(out: &mut dyn Write, args: RunArgs) -> Result<()> {
    let host = host::Host::new(&args.machine.root);
    let text = std::fs::read_to_string(&args.case)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", args.case.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: not JSON: {e}", args.case.display()))?;
    let (contents, thp) = run::workload_flags(&args.case, &doc["workload"])?;
    let zram = doc["setup"]["swap"]["kind"] == "zram";
    let id = args.id.clone().unwrap_or_else(|| format!("{}-probe", doc["id"].as_str().unwrap_or("case")));
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let cpu = args.cpu.unwrap_or(cpus - 1);
    let root = run::case_dir_root(&args.case);
    let exec = |trace: &str| run::ExecWorkload { trace: root.join(trace), contents, thp, cpu };
    let traces = run::traces(&args.case, &doc["workload"])?;
    let mut workload: Box<dyn run::Workload> = match doc["kind"].as_str() {
        Some("live") => Box::new(exec(&traces[0])),
        Some("jobs") => {
            let concurrency =
                doc["workload"]["queue"]["concurrency"].as_u64().filter(|&c| c >= 1).ok_or_else(|| {
                    anyhow::anyhow!(
                        "{}: workload.queue.concurrency is not a whole number of at least 1",
                        args.case.display()
                    )
                })?;
            Box::new(run::QueueWorkload {
                jobs: traces.iter().map(|t| exec(t)).collect(),
                concurrency: concurrency as usize,
            })
        }
        _ => anyhow::bail!(
            "{}: kind {}: only live cases and queues (jobs) are probed, not swapoff cases",
            args.case.display(),
            doc["kind"]
        ),
    };
    let probe = run::Probe {
        case_file: &args.case,
        places: args.machine.places(),
        options: args.machine.options(),
        block_device: if zram { Some(args.machine.zram.clone()) } else { args.machine.disk() },
        repeats: args.repeats as usize,
        requests_out: args.requests_out.clone(),
    };
    let interrupted = setup::catch_interrupts();
    let mut system = system::RealSystem::new(host.clone());
    let mut say = |line: &str| eprintln!("{line}");
    if !zram && !args.no_disk_timing && !args.out.join(disk::PROFILE).exists() {
        // Nothing is timed, let alone written, before the probe may start: a swap device
        // must not be mounted or in use.
        setup::check(&host, &plan::plan_file(&host, &args.case, &probe.places)?, &probe.options)?;
        // The disk is timed while nothing swaps to it: beside where the swap file goes, or
        // the swap device itself, which is formatted next anyway.
        let (scratch, size_mib) = match &args.machine.swap_device {
            Some(path) => {
                let name = path.rsplit('/').next().unwrap_or(path);
                let sectors: u64 =
                    host.value(&format!("/sys/class/block/{name}/size"))?.parse().map_err(|_| {
                        anyhow::anyhow!("/sys/class/block/{name}/size is not a number of sectors")
                    })?;
                (PathBuf::from(path), (sectors / 2048).min(512))
            }
            None => (PathBuf::from(format!("{}.disk", args.machine.swap_file)), 512),
        };
        let timing = TimingArgs {
            disk_size_mib: size_mib,
            disk_seconds: 2.0,
            timer: TimerArg::Auto,
            block_device: args.machine.disk(),
        }
        .timing(scratch)?;
        let profile = disk::time_disk(&host, &timing, &args.out, &mut say)?;
        say(&format!("wrote {}", profile.display()));
    }
    let runs = run::repeats(&host, &probe, &mut system, workload.as_mut(), interrupted, &mut say)?;
    let file = run::write_case(
        &host,
        &args.case,
        &id,
        &runs,
        &args.out,
        probe.block_device.as_deref(),
        args.machine.swap_device.as_deref(),
    )?;
    run::report(out, &file, &args.out, &runs)
}
