//! Swap-in readahead policies and the configuration that selects one.
//!
//! On a swap-cache miss the kernel reads the faulting page together with some neighbours
//! (`swapin_readahead` in mm/swap_state.c, 6.18 level). This module provides the choices
//! a kernel developer wants to compare:
//!
//! * [`ClusterReadahead`]: the kernel's adaptive window over neighbouring swap slots.
//! * [`FixedReadahead`]: always the full cluster window, with no adaptation.
//! * [`VmaReadahead`]: the kernel's adaptive window placed in virtual address space.
//! * [`ZswapBypassReadahead`]: the kernel's choice, with no readahead for pages held in
//!   zswap (an RFC of June 2026).
//! * `"none"`: only the faulting page ([`swapsim_core::NoReadahead`]).
//!
//! The adaptive window formula (`__swapin_nr_pages`) is shared by the cluster and VMA
//! policies and lives here as one private function.
//!
//! What this module deliberately does not do: it never reads, allocates or caches pages
//! (the engine carries each plan out, skipping free slots and slots already cached), and
//! it knows nothing about devices beyond the slot count in the fault view. Every plan it
//! returns is already clamped the way the kernel clamps it, because the engine does not
//! clamp.

mod cluster;
mod vma;
mod zswap_bypass;

use serde::{Deserialize, Serialize};
use swapsim_core::{ConfigError, NoReadahead, Readahead, ReadaheadPlan};

pub use cluster::{ClusterReadahead, FixedReadahead};
pub use vma::VmaReadahead;
pub use zswap_bypass::ZswapBypassReadahead;

/// Which readahead policy a scenario uses.
///
/// Selected in TOML as a plain string: readahead = "kernel" | "cluster" | "fixed" | "vma" |
/// "zswap-bypass" | "none".
/// The default, `"kernel"`, behaves as the kernel would on the simulated machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ReadaheadConfig {
    /// Whatever the kernel would pick: see [`ReadaheadConfig::resolve`].
    #[default]
    Kernel,
    /// The kernel's adaptive cluster readahead ([`ClusterReadahead`]).
    Cluster,
    /// A fixed-size cluster window ([`FixedReadahead`]).
    Fixed,
    /// The kernel's VMA-based readahead ([`VmaReadahead`]).
    Vma,
    /// The kernel's choice, reading nothing ahead for pages held in zswap
    /// ([`ZswapBypassReadahead`]).
    ZswapBypass,
    /// No readahead: only the faulting page is read.
    None,
}

/// Facts about the simulated machine that the `"kernel"` choice depends on.
///
/// `Default` gives the kernel's defaults with only solid-state swap: VMA readahead
/// enabled and no rotational device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadaheadContext {
    /// `/sys/kernel/mm/swap/vma_ra_enabled` (the kernel's default is true).
    pub vma_ra_enabled: bool,
    /// True when any active swap device is rotational (the kernel's `nr_rotate_swap > 0`).
    pub any_rotational: bool,
}

impl Default for ReadaheadContext {
    fn default() -> ReadaheadContext {
        ReadaheadContext { vma_ra_enabled: true, any_rotational: false }
    }
}

impl ReadaheadConfig {
    /// Every choice, in the order error messages list them.
    pub const ALL: [ReadaheadConfig; 6] = [
        ReadaheadConfig::Kernel,
        ReadaheadConfig::Cluster,
        ReadaheadConfig::Fixed,
        ReadaheadConfig::Vma,
        ReadaheadConfig::ZswapBypass,
        ReadaheadConfig::None,
    ];

    /// "kernel" resolves by the kernel's rule (swap_use_vma_readahead): VMA readahead when
    /// vma_ra_enabled and no rotational swap device is active, else cluster. Others resolve
    /// to themselves.
    ///
    /// Models `swap_use_vma_readahead()` in mm/swap_state.c. The kernel re-evaluates the
    /// rule on every fault, so a swapon of an HDD switches policy mid-run; the simulator
    /// decides once, when the policy is built.
    pub fn resolve(self, ctx: &ReadaheadContext) -> ReadaheadConfig {
        match self {
            ReadaheadConfig::Kernel if ctx.vma_ra_enabled && !ctx.any_rotational => ReadaheadConfig::Vma,
            ReadaheadConfig::Kernel => ReadaheadConfig::Cluster,
            other => other,
        }
    }

    /// Resolves the choice against `ctx` and builds a fresh policy in its initial state.
    pub fn build(self, ctx: &ReadaheadContext) -> Box<dyn Readahead> {
        match self.resolve(ctx) {
            ReadaheadConfig::Cluster => Box::new(ClusterReadahead::default()),
            ReadaheadConfig::Fixed => Box::new(FixedReadahead),
            ReadaheadConfig::Vma => Box::new(VmaReadahead::default()),
            ReadaheadConfig::ZswapBypass => {
                Box::new(ZswapBypassReadahead::new(ReadaheadConfig::Kernel.build(ctx)))
            }
            ReadaheadConfig::None => Box::new(NoReadahead),
            ReadaheadConfig::Kernel => unreachable!("resolve never returns Kernel"),
        }
    }

    /// The name used in scenario files and reports: "kernel", "cluster", ...
    pub fn name(self) -> &'static str {
        match self {
            ReadaheadConfig::Kernel => "kernel",
            ReadaheadConfig::Cluster => "cluster",
            ReadaheadConfig::Fixed => "fixed",
            ReadaheadConfig::Vma => "vma",
            ReadaheadConfig::ZswapBypass => "zswap-bypass",
            ReadaheadConfig::None => "none",
        }
    }

    /// Parses a name as written in a scenario file (exact, case-sensitive match).
    pub fn from_name(name: &str) -> Result<ReadaheadConfig, ConfigError> {
        ReadaheadConfig::ALL.into_iter().find(|cfg| cfg.name() == name).ok_or_else(|| {
            let expected: Vec<&str> = ReadaheadConfig::ALL.iter().map(|c| c.name()).collect();
            ConfigError::Invalid {
                field: "readahead".to_owned(),
                message: format!("unknown policy \"{name}\" (expected one of {})", expected.join(", ")),
            }
        })
    }
}

/// The largest `vm.page-cluster` the kernel accepts (`/proc/sys/vm/page-cluster` is
/// limited to 0..=31). Larger values are treated as 31 so a shift can never overflow.
const PAGE_CLUSTER_MAX: u32 = 31;

/// `2^page_cluster`, the most pages one readahead may cover (`1 << page_cluster` in
/// `swapin_nr_pages`).
fn max_pages(page_cluster: u32) -> u32 {
    1u32 << page_cluster.min(PAGE_CLUSTER_MAX)
}

/// Inputs of the window formula. A struct rather than five arguments, because the two
/// positions and the three sizes could otherwise be swapped without a type error.
#[derive(Clone, Copy, Debug)]
struct WindowInput {
    /// Position of the previous miss (slot offset for cluster, virtual page for VMA).
    prev_pos: u64,
    /// Position of this miss, in the same unit.
    pos: u64,
    /// Readahead hits credited since the previous miss.
    hits: u32,
    /// Upper bound on the window, in pages.
    max_pages: u32,
    /// The window chosen on the previous miss, in pages.
    prev_win: u32,
}

/// The adaptive window size in pages, as `__swapin_nr_pages` in mm/swap_state.c computes
/// it: no hits gives one page, or two when the miss is next to the previous one; `h` hits
/// give `h + 2` rounded up to a power of two and at least 4; the result is capped by
/// `max_pages` and never falls below half the previous window, so windows decay by halving.
///
/// The result is a power of two whenever `max_pages` and `prev_win` are, which is how both
/// callers use it.
fn window_pages(input: WindowInput) -> u32 {
    let wanted = u64::from(input.hits) + 2;
    let pages = if wanted == 2 {
        if input.pos.abs_diff(input.prev_pos) == 1 {
            2
        } else {
            1
        }
    } else {
        wanted.next_power_of_two().max(4)
    };
    let capped =
        u32::try_from(pages.min(u64::from(input.max_pages))).expect("the cap is a u32, so the minimum fits");
    capped.max(input.prev_win / 2)
}

/// The aligned cluster window of `pages` slots around `offset`, clamped as
/// `swap_cluster_readahead` clamps it: the window starts at `offset & !mask` (moved to 1
/// when that is the header slot 0) and ends at `offset | mask`, cut at the device's last
/// slot. A window holding only the faulting slot is reported as `TargetOnly`.
fn cluster_window(offset: u32, pages: u32, device_slots: u32) -> ReadaheadPlan {
    assert!(
        offset >= 1 && offset < device_slots,
        "fault at slot {offset} outside the usable slots 1..{device_slots}"
    );
    let mask = pages.saturating_sub(1);
    if mask == 0 {
        return ReadaheadPlan::TargetOnly;
    }
    let first = (offset & !mask).max(1);
    let last = (offset | mask).min(device_slots - 1);
    if first == last {
        ReadaheadPlan::TargetOnly
    } else {
        ReadaheadPlan::Slots { first, last }
    }
}

#[cfg(test)]
mod test_support;

#[cfg(test)]
mod tests;
