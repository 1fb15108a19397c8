//! Swap slot allocation policies and the configuration that selects one.
//!
//! Where a swap device looks for a folio's slots decides whether a large folio swaps out
//! whole or is split (`swpout_fallback`), and whether consecutive pages land in adjacent
//! slots, which the block layer merges into one request. The choices here:
//!
//! * [`ClusterAllocator`] (`"kernel"`): the 6.18 allocator, per-order lists of partly used
//!   clusters; hibernation through the CPU's current cluster (the 2026 fast path).
//! * [`FreeListScanAllocator`] (`"free-list-scan"`): before 6.12, one list of free
//!   clusters; large folios need a free cluster, order 0 falls back to scanning.
//! * [`SlowPathHibernation`] (`"hibernate-slow-path"`): 6.15 to 6.19, hibernation's image
//!   slots through the slow path, each from another cluster.
//!
//! A policy only plans: the engine carries the plan out and checks every slot it hands out.

mod free_list_scan;
mod slow_path;

pub use free_list_scan::FreeListScanAllocator;
use serde::{Deserialize, Serialize};
pub use slow_path::SlowPathHibernation;
pub use swapsim_core::ClusterAllocator;
use swapsim_core::{ConfigError, SlotAllocator};

/// Which slot allocator a scenario uses: `[swap] allocator = "kernel" | "free-list-scan" |
/// "hibernate-slow-path"`. Default "kernel".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AllocatorConfig {
    /// The 6.18 allocator ([`ClusterAllocator`]).
    #[default]
    Kernel,
    /// Before 6.12 ([`FreeListScanAllocator`]).
    FreeListScan,
    /// 6.15 to 6.19 hibernation ([`SlowPathHibernation`]).
    HibernateSlowPath,
}

impl AllocatorConfig {
    /// Every choice, in the order error messages list them.
    pub const ALL: [AllocatorConfig; 3] =
        [AllocatorConfig::Kernel, AllocatorConfig::FreeListScan, AllocatorConfig::HibernateSlowPath];

    /// The policy.
    pub fn build(self) -> Box<dyn SlotAllocator> {
        match self {
            AllocatorConfig::Kernel => Box::new(ClusterAllocator),
            AllocatorConfig::FreeListScan => Box::new(FreeListScanAllocator),
            AllocatorConfig::HibernateSlowPath => Box::new(SlowPathHibernation),
        }
    }

    /// The name used in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            AllocatorConfig::Kernel => "kernel",
            AllocatorConfig::FreeListScan => "free-list-scan",
            AllocatorConfig::HibernateSlowPath => "hibernate-slow-path",
        }
    }

    /// Parses a name as written in a scenario file.
    pub fn from_name(name: &str) -> Result<AllocatorConfig, ConfigError> {
        AllocatorConfig::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| {
            let expected: Vec<&str> = AllocatorConfig::ALL.iter().map(|c| c.name()).collect();
            ConfigError::Invalid {
                field: "swap.allocator".to_owned(),
                message: format!("unknown policy \"{name}\" (expected one of {})", expected.join(", ")),
            }
        })
    }

    /// Whether this is the default, which reports leave out.
    pub fn is_default(&self) -> bool {
        *self == AllocatorConfig::Kernel
    }
}

#[cfg(test)]
mod tests;
