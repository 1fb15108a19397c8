//! The changes a probe makes that are more than a knob's value: making and removing its
//! memory cgroup, swap file or zram device, turning swap on and off. They go through the
//! [`System`] trait, so that tests use a fake that records what was asked and imitates the
//! kernel in a temporary tree; [`RealSystem`] does them on the machine, with the usual
//! programs (`fallocate`, `mkswap`, `swapon`, `swapoff`) and the zram device's sysfs files.
//!
//! What it deliberately does not do: decide what to make or remember what was made (see
//! `plan` and `setup`).

use super::host::Host;
use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::Command;

/// What a probe does to the machine beyond writing knobs. Every path is a full path, already
/// placed under the host's root.
pub(crate) trait System {
    /// Makes the memory cgroup's folder (the kernel fills it with its control files).
    fn make_cgroup(&mut self, dir: &Path) -> Result<()>;
    /// Removes the memory cgroup's folder.
    fn remove_cgroup(&mut self, dir: &Path) -> Result<()>;
    /// Allocates a swap file of `size_bytes` and formats it.
    fn make_swap_file(&mut self, path: &Path, size_bytes: u64) -> Result<()>;
    /// Removes a swap file.
    fn remove_swap_file(&mut self, path: &Path) -> Result<()>;
    /// Formats the existing block device at `path` as swap of `size_bytes`.
    fn format_swap_device(&mut self, path: &Path, size_bytes: u64) -> Result<()>;
    /// Resets zram device `device` (`zram0`), sets its algorithm and size, formats it.
    fn make_zram(&mut self, device: &str, algorithm: Option<&str>, size_bytes: u64) -> Result<()>;
    /// Resets zram device `device`, freeing its memory.
    fn reset_zram(&mut self, device: &str) -> Result<()>;
    /// Turns the swap area at `path` on.
    fn swapon(&mut self, path: &Path) -> Result<()>;
    /// Turns the swap area at `path` off.
    fn swapoff(&mut self, path: &Path) -> Result<()>;
}

/// The machine itself.
pub(crate) struct RealSystem {
    host: Host,
}

impl RealSystem {
    pub(crate) fn new(host: Host) -> RealSystem {
        RealSystem { host }
    }
}

/// Runs `program` with `args`; a failure names the command and what it printed.
fn command(program: &str, args: &[&str]) -> Result<()> {
    let output = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {program} (is it installed?)"))?;
    if !output.status.success() {
        bail!(
            "{program} {} failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

fn text(path: &Path) -> Result<&str> {
    path.to_str().with_context(|| format!("{} is not UTF-8", path.display()))
}

impl System for RealSystem {
    fn make_cgroup(&mut self, dir: &Path) -> Result<()> {
        std::fs::create_dir(dir).with_context(|| format!("cannot make the cgroup {}", dir.display()))
    }

    fn remove_cgroup(&mut self, dir: &Path) -> Result<()> {
        std::fs::remove_dir(dir).with_context(|| format!("cannot remove the cgroup {}", dir.display()))
    }

    fn make_swap_file(&mut self, path: &Path, size_bytes: u64) -> Result<()> {
        let name = text(path)?;
        command("fallocate", &["-l", &size_bytes.to_string(), name])?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot make {} private", path.display()))?;
        command("mkswap", &[name])
    }

    fn remove_swap_file(&mut self, path: &Path) -> Result<()> {
        std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))
    }

    fn format_swap_device(&mut self, path: &Path, size_bytes: u64) -> Result<()> {
        // mkswap's optional size is in KiB: the swap area the case had, not the whole device.
        command("mkswap", &[text(path)?, &(size_bytes / 1024).to_string()])
    }

    fn make_zram(&mut self, device: &str, algorithm: Option<&str>, size_bytes: u64) -> Result<()> {
        let sysfs = format!("/sys/block/{device}");
        self.host.write(&format!("{sysfs}/reset"), "1")?;
        if let Some(algorithm) = algorithm {
            self.host.write(&format!("{sysfs}/comp_algorithm"), algorithm)?;
        }
        self.host.write(&format!("{sysfs}/disksize"), &size_bytes.to_string())?;
        command("mkswap", &[text(&self.host.path(&format!("/dev/{device}")))?])
    }

    fn reset_zram(&mut self, device: &str) -> Result<()> {
        self.host.write(&format!("/sys/block/{device}/reset"), "1")
    }

    fn swapon(&mut self, path: &Path) -> Result<()> {
        command("swapon", &[text(path)?])
    }

    fn swapoff(&mut self, path: &Path) -> Result<()> {
        command("swapoff", &[text(path)?])
    }
}
