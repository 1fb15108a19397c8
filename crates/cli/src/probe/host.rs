//! The machine a probe sets up, seen through its files: `Host` reads and writes the
//! kernel's knobs under a root directory, `/` on a real machine and a temporary directory
//! laid out like sysfs, procfs and cgroupfs in tests.
//!
//! Every path the probe uses is written as on the machine (`/proc/sys/vm/page-cluster`)
//! and placed under the root here, so a test tree and the machine differ only in the root.
//! What it deliberately does not do: decide what to write (see `plan`) or run programs
//! (see `system`).

use crate::outfile;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The cgroup v2 controllers file, whose listing of `memory` means a v2 memory controller.
const CGROUP2_CONTROLLERS: &str = "/sys/fs/cgroup/cgroup.controllers";
/// The cgroup v1 memory controller's mount.
const CGROUP1_MEMORY: &str = "/sys/fs/cgroup/memory";

/// Which memory controller the machine has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum CgroupVersion {
    /// cgroup v1: `memory.limit_in_bytes`, `memory.swappiness` per group.
    V1,
    /// cgroup v2: `memory.max`, `memory.swap.max`, `memory.zswap.max`.
    V2,
}

impl CgroupVersion {
    /// The number the case format records (`setup.memcg_version`).
    pub(crate) fn number(self) -> u64 {
        match self {
            CgroupVersion::V1 => 1,
            CgroupVersion::V2 => 2,
        }
    }
}

/// The machine's files under one root.
#[derive(Clone, Debug)]
pub(crate) struct Host {
    root: PathBuf,
}

impl Host {
    /// The machine seen under `root`.
    pub(crate) fn new(root: &Path) -> Host {
        Host { root: root.to_path_buf() }
    }

    /// The root every path is placed under.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Where the machine's `path` (absolute, as on the machine) lies under the root.
    pub(crate) fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// Whether the machine has `path`.
    pub(crate) fn exists(&self, path: &str) -> bool {
        self.path(path).exists()
    }

    /// The contents of `path`, trimmed.
    pub(crate) fn read(&self, path: &str) -> Result<String> {
        let full = self.path(path);
        let text =
            std::fs::read_to_string(&full).with_context(|| format!("cannot read {}", full.display()))?;
        Ok(text.trim().to_string())
    }

    /// The value a knob holds: the bracketed choice of a selection file
    /// (`always inherit madvise [never]` holds `never`), else the trimmed contents.
    pub(crate) fn value(&self, path: &str) -> Result<String> {
        Ok(selected(&self.read(path)?))
    }

    /// Tells the knob at `path` a value, in place.
    pub(crate) fn write(&self, path: &str, value: &str) -> Result<()> {
        outfile::write_in_place(&self.path(path), value)
    }

    /// The memory controller the machine has mounted.
    pub(crate) fn cgroup_version(&self) -> Result<CgroupVersion> {
        if self.exists(CGROUP2_CONTROLLERS)
            && self.read(CGROUP2_CONTROLLERS)?.split_whitespace().any(|name| name == "memory")
        {
            return Ok(CgroupVersion::V2);
        }
        if self.path(CGROUP1_MEMORY).is_dir() {
            return Ok(CgroupVersion::V1);
        }
        anyhow::bail!(
            "no memory cgroup controller: {} does not list memory and {} does not exist",
            self.path(CGROUP2_CONTROLLERS).display(),
            self.path(CGROUP1_MEMORY).display()
        )
    }

    /// The swap areas `/proc/swaps` lists, by their file name column.
    pub(crate) fn active_swaps(&self) -> Result<Vec<String>> {
        let text = self.read("/proc/swaps")?;
        Ok(text
            .lines()
            .skip(1)
            .filter_map(|line| line.split_whitespace().next())
            .map(|name| name.replace("\\040", " "))
            .collect())
    }
}

/// The bracketed choice of a selection file, or the whole text.
pub(crate) fn selected(text: &str) -> String {
    match (text.find('['), text.find(']')) {
        (Some(open), Some(close)) if open < close => text[open + 1..close].to_string(),
        _ => text.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::selected;

    #[test]
    fn a_selection_file_holds_its_bracketed_choice() {
        assert_eq!(selected("always inherit madvise [never]"), "never");
        assert_eq!(selected("[lzo-rle] lzo lz4 zstd"), "lzo-rle");
        assert_eq!(selected("3"), "3");
    }
}
