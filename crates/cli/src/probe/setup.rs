//! Applying a probe's plan and undoing it, whatever happens in between.
//!
//! Before the first change, every step of the plan, each knob with the value it held, is
//! saved to a state file (`state.json` in the state folder). A step is marked started in
//! that file before it is made. [`Applied`] undoes every started step in reverse order:
//! when asked ([`Applied::restore`]), when a step fails or Ctrl-C arrives while applying,
//! and when it is dropped without either (an error in the caller). After a crash,
//! `swapsim probe restore` reads the state file and does the same ([`restore_saved`]). A
//! complete restore removes the state file; an incomplete one keeps it, with the steps
//! still to undo, and says so.
//!
//! A knob is written back only when it no longer holds its original value, so a knob the
//! probe never changed is never written, zswap's `enabled` parameter included.
//! A probe refuses to start while a state file from an earlier run exists, while swap it did
//! not make is on (unless told to leave it), or when its cgroup or swap file already exists.
//! What it deliberately does not do: measure, or run the workload.

use super::host::Host;
use super::plan::{Plan, Step, ZSWAP_ENABLED};
use super::system::System;
use crate::outfile;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The state file's name in its folder.
pub(crate) const STATE_FILE: &str = "state.json";
/// The state file's format.
const STATE_FORMAT: &str = "swapsim-probe-state/1";

/// What a probe changed, saved so that another process can undo it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct State {
    format: String,
    /// The root the machine's files were under (`/` on a real machine).
    root: PathBuf,
    /// The case probed.
    case: PathBuf,
    steps: Vec<Recorded>,
}

/// One step of the plan and whether it was begun.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Recorded {
    started: bool,
    step: Step,
}

/// How a probe starts.
#[derive(Clone, Debug)]
pub(crate) struct StartOptions {
    /// The folder of the state file.
    pub(crate) state_dir: PathBuf,
    /// Start even while swap this probe did not make is on.
    pub(crate) leave_existing_swap: bool,
}

/// Set by the SIGINT handler [`catch_interrupts`] installs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes Ctrl-C set a flag instead of killing the process, so that what was changed is
/// restored; returns the flag.
pub(crate) fn catch_interrupts() -> &'static AtomicBool {
    let handler: extern "C" fn(libc::c_int) = on_interrupt;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
    &INTERRUPTED
}

/// Why a probe may not start on `host`; `Ok` when it may.
pub(crate) fn check(host: &Host, plan: &Plan, options: &StartOptions) -> Result<()> {
    let state_file = options.state_dir.join(STATE_FILE);
    if state_file.exists() {
        bail!(
            "{} exists: an earlier probe did not finish restoring the machine; run `swapsim probe \
             restore` first",
            state_file.display()
        );
    }
    let swaps = host.active_swaps()?;
    if !swaps.is_empty() && !options.leave_existing_swap {
        bail!(
            "swap this probe did not make is on ({}); turn it off, or pass --leave-existing-swap to \
             probe with it on",
            swaps.join(", ")
        );
    }
    for step in &plan.steps {
        if let Step::SwapDevice { path, .. } = step {
            check_swap_device(host, path, &swaps)?;
        }
        let made = match step {
            Step::Cgroup { dir } => dir,
            Step::SwapFile { path, .. } => path,
            _ => continue,
        };
        if host.exists(made) {
            bail!("{} already exists; a probe makes its own and removes it", host.path(made).display());
        }
    }
    Ok(())
}

/// An existing block device may be formatted only when it is one, is not mounted and is not
/// swap already.
pub(crate) fn check_swap_device(host: &Host, path: &str, swaps: &[String]) -> Result<()> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if !path.starts_with("/dev/") || !host.exists(&format!("/sys/class/block/{name}")) {
        bail!("{path}: not a block device (give /dev/NAME of a disk or partition)");
    }
    if swaps.iter().any(|s| s == path) {
        bail!("{path} is swap already; turn it off first");
    }
    // The device, or a partition of it (sda1 of sda, nvme0n1p1 of nvme0n1).
    let on_it = |source: &str| {
        source.strip_prefix(path).is_some_and(|rest| {
            let number = rest.strip_prefix('p').unwrap_or(rest);
            rest.is_empty() || (!number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
        })
    };
    let mounts = host.read("/proc/mounts")?;
    if let Some(line) = mounts.lines().find(|l| l.split_whitespace().next().is_some_and(on_it)) {
        bail!("{path} is mounted ({}); a probe overwrites the block device it is given", line.trim());
    }
    if let Some(swap) = swaps.iter().find(|s| on_it(s)) {
        bail!("{path} holds the swap area {swap}; turn it off first");
    }
    // Held by device-mapper, RAID or the like.
    let holders = host.path(&format!("/sys/class/block/{name}/holders"));
    if std::fs::read_dir(&holders).is_ok_and(|mut d| d.next().is_some()) {
        bail!("{path} is in use by another block device ({} is not empty)", holders.display());
    }
    Ok(())
}

/// A plan applied to the machine, undone by [`Applied::restore`] or on drop.
pub(crate) struct Applied<'s> {
    host: Host,
    system: &'s mut dyn System,
    state: State,
    state_file: PathBuf,
    /// Whether the restore already ran.
    restored: bool,
}

/// Applies `plan` on `host`: checks that it may start, saves the state file, then makes each
/// step. On a failed step or an interruption (`interrupted` set), everything made so far is
/// restored and the error returned. `warn` hears the warning given before zswap's `enabled`
/// parameter is written.
pub(crate) fn apply<'s>(
    host: &Host,
    plan: &Plan,
    system: &'s mut dyn System,
    options: &StartOptions,
    interrupted: &AtomicBool,
    warn: &mut dyn FnMut(&str),
) -> Result<Applied<'s>> {
    check(host, plan, options)?;
    std::fs::create_dir_all(&options.state_dir)
        .with_context(|| format!("cannot make the state folder {}", options.state_dir.display()))?;
    let state = State {
        format: STATE_FORMAT.to_string(),
        root: host.root().to_path_buf(),
        case: plan.case.clone(),
        steps: plan.steps.iter().map(|step| Recorded { started: false, step: step.clone() }).collect(),
    };
    let state_file = options.state_dir.join(STATE_FILE);
    save(&state_file, &state)?;
    let mut applied = Applied { host: host.clone(), system, state, state_file, restored: false };
    for step_idx in 0..applied.state.steps.len() {
        if interrupted.load(Ordering::SeqCst) {
            return Err(applied.fail(anyhow!("interrupted")));
        }
        let step = applied.state.steps[step_idx].step.clone();
        if step.is_noop() {
            continue;
        }
        applied.state.steps[step_idx].started = true;
        if let Err(err) = save(&applied.state_file, &applied.state) {
            return Err(applied.fail(err));
        }
        if matches!(&step, Step::Knob { path, .. } if path == ZSWAP_ENABLED) {
            warn(&format!("writing {ZSWAP_ENABLED}: large-folio swap-in stays off until the next reboot"));
        }
        if let Err(err) = make(&applied.host, applied.system, &step) {
            return Err(applied.fail(err.context(format!("step {}: {}", step_idx + 1, step.describe()))));
        }
    }
    Ok(applied)
}

impl Applied<'_> {
    /// Undoes every step made, in reverse order, and removes the state file.
    pub(crate) fn restore(mut self) -> Result<()> {
        self.restored = true;
        undo_all(&self.host, self.system, &mut self.state, &self.state_file)
    }

    /// Restores after `err` and returns the error to report.
    fn fail(mut self, err: anyhow::Error) -> anyhow::Error {
        self.restored = true;
        match undo_all(&self.host, self.system, &mut self.state, &self.state_file) {
            Ok(()) => err.context("the probe's set-up stopped; every change it made was restored"),
            Err(restore_err) => anyhow!("{err:#}; then restoring failed too: {restore_err:#}"),
        }
    }
}

impl Drop for Applied<'_> {
    fn drop(&mut self) {
        if self.restored {
            return;
        }
        if let Err(err) = undo_all(&self.host, self.system, &mut self.state, &self.state_file) {
            eprintln!("error: {err:#}");
        }
    }
}

/// Makes one step.
fn make(host: &Host, system: &mut dyn System, step: &Step) -> Result<()> {
    match step {
        Step::Knob { path, value, .. } => host.write(path, value),
        Step::Controller { path, controller } => host.write(path, &format!("+{controller}")),
        Step::Cgroup { dir } => system.make_cgroup(&host.path(dir)),
        Step::CgroupFile { path, value } => host.write(path, value),
        Step::SwapFile { path, size_bytes } => system.make_swap_file(&host.path(path), *size_bytes),
        Step::SwapDevice { path, size_bytes } => system.format_swap_device(&host.path(path), *size_bytes),
        Step::Zram { device, algorithm, size_bytes } => {
            system.make_zram(device, algorithm.as_deref(), *size_bytes)
        }
        Step::Swapon { path } => system.swapon(&host.path(path)),
    }
}

/// Undoes one started step, if there is still something to undo.
fn undo(host: &Host, system: &mut dyn System, step: &Step) -> Result<()> {
    match step {
        Step::Knob { path, original, .. } => {
            if host.value(path)? != *original {
                host.write(path, original)?;
            }
        }
        Step::Controller { path, controller } => {
            if host.read(path)?.split_whitespace().any(|name| name == controller) {
                host.write(path, &format!("-{controller}"))?;
            }
        }
        Step::Cgroup { dir } => {
            if host.exists(dir) {
                system.remove_cgroup(&host.path(dir))?;
            }
        }
        // Goes with the cgroup.
        Step::CgroupFile { .. } => {}
        Step::SwapFile { path, .. } => {
            if host.exists(path) {
                system.remove_swap_file(&host.path(path))?;
            }
        }
        // The user's device stays formatted as swap: its former contents are gone.
        Step::SwapDevice { .. } => {}
        Step::Zram { device, .. } => system.reset_zram(device)?,
        Step::Swapon { path } => {
            if host.active_swaps()?.contains(path) {
                system.swapoff(&host.path(path))?;
            }
        }
    }
    Ok(())
}

/// Undoes every started step of `state`, last first, going on past failures. Removes the
/// state file when all were undone; otherwise saves the steps left and fails, naming them.
fn undo_all(host: &Host, system: &mut dyn System, state: &mut State, state_file: &Path) -> Result<()> {
    let mut failures = Vec::new();
    for recorded in state.steps.iter_mut().rev().filter(|recorded| recorded.started) {
        match undo(host, system, &recorded.step) {
            Ok(()) => recorded.started = false,
            Err(err) => failures.push(format!("undo {}: {err:#}", recorded.step.describe())),
        }
    }
    if failures.is_empty() {
        return std::fs::remove_file(state_file)
            .with_context(|| format!("cannot remove the state file {}", state_file.display()));
    }
    save(state_file, state)?;
    bail!(
        "restoring the machine failed: {}; {} keeps what is left to undo: fix the cause and run \
         `swapsim probe restore`",
        failures.join("; "),
        state_file.display()
    )
}

fn save(state_file: &Path, state: &State) -> Result<()> {
    let json = serde_json::to_string_pretty(state).expect("the state serializes");
    outfile::write_atomically(state_file, format!("{json}\n").as_bytes())
}

/// What `probe restore` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Restored {
    /// No state file: nothing was left changed.
    Nothing,
    /// This many steps were undone and the state file removed.
    Steps(usize),
}

/// Undoes what the probe saved in `state_dir`, with `system` (made for the state's root by
/// `system_for`).
pub(crate) fn restore_saved(
    state_dir: &Path,
    system_for: &mut dyn FnMut(&Host) -> Box<dyn System>,
) -> Result<Restored> {
    let state_file = state_dir.join(STATE_FILE);
    if !state_file.exists() {
        return Ok(Restored::Nothing);
    }
    let text = std::fs::read_to_string(&state_file)
        .with_context(|| format!("cannot read the state file {}", state_file.display()))?;
    let mut state: State = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a probe state file", state_file.display()))?;
    if state.format != STATE_FORMAT {
        bail!("{}: format \"{}\" is not {STATE_FORMAT}", state_file.display(), state.format);
    }
    let host = Host::new(&state.root);
    let mut system = system_for(&host);
    let n_started = state.steps.iter().filter(|recorded| recorded.started).count();
    undo_all(&host, system.as_mut(), &mut state, &state_file)?;
    Ok(Restored::Steps(n_started))
}
