//! Swap-in folio size policies (mTHP swap-in) and the configuration that selects one.
//!
//! On a synchronous swap device the kernel may bring a whole large folio back on one
//! fault. Whether that helps depends on the workload: a sequential reader gains one read
//! for many pages, a scattered one multiplies its swap traffic and memory pressure. The
//! choices here:
//!
//! * [`KernelSwapin`] (`"kernel"`): the largest order the kernel's conditions allow (6.18).
//! * [`Order0Swapin`] (`"order0"`): never large.
//! * [`ThrottledSwapin`] (`"throttled"`): Barry Song's 2025 proposal, large swap-in
//!   refused while recent large-folio refaults say the workload thrashes.
//! * [`ZswapLargeSwapin`] (`"zswap-large"`, `"zswap-large-throttled"`): Usama Arif's 2024
//!   proposal, zswap entries swapped in without the swap cache and, when a whole aligned
//!   range is in zswap, as one large folio; on the kernel's choice or throttled.
//!
//! A policy only decides: the engine checks the kernel's conditions, allocates, charges,
//! reads and counts.

mod throttled;
mod zswap_large;

use serde::{Deserialize, Serialize};
use swapsim_core::thp::OrderMask;
pub use swapsim_core::Order0Swapin;
use swapsim_core::{ConfigError, SwapinSize, SwapinView};
pub use throttled::{ThrottledSwapin, THROTTLE_MAX};
pub use zswap_large::ZswapLargeSwapin;

/// Which swap-in size policy a scenario uses: `[thp] swapin = "kernel" | "order0" |
/// "throttled" | "zswap-large" | "zswap-large-throttled"`. Default "kernel".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SwapinConfig {
    /// The kernel's behaviour ([`KernelSwapin`]).
    #[default]
    Kernel,
    /// Never large ([`Order0Swapin`]).
    Order0,
    /// Refault-throttled ([`ThrottledSwapin`]).
    Throttled,
    /// The kernel's choice, zswap entries swapped in large ([`ZswapLargeSwapin`]).
    ZswapLarge,
    /// Refault-throttled, zswap entries swapped in large too ([`ZswapLargeSwapin`] over
    /// [`ThrottledSwapin`]).
    ZswapLargeThrottled,
}

impl SwapinConfig {
    /// Every choice, in the order error messages list them.
    pub const ALL: [SwapinConfig; 5] = [
        SwapinConfig::Kernel,
        SwapinConfig::Order0,
        SwapinConfig::Throttled,
        SwapinConfig::ZswapLarge,
        SwapinConfig::ZswapLargeThrottled,
    ];

    /// A fresh policy in its initial state.
    pub fn build(self) -> Box<dyn SwapinSize> {
        match self {
            SwapinConfig::Kernel => Box::new(KernelSwapin),
            SwapinConfig::Order0 => Box::new(Order0Swapin),
            SwapinConfig::Throttled => Box::new(ThrottledSwapin::default()),
            SwapinConfig::ZswapLarge => Box::new(ZswapLargeSwapin::new(Box::new(KernelSwapin), self.name())),
            SwapinConfig::ZswapLargeThrottled => {
                Box::new(ZswapLargeSwapin::new(Box::new(ThrottledSwapin::default()), self.name()))
            }
        }
    }

    /// The name used in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            SwapinConfig::Kernel => "kernel",
            SwapinConfig::Order0 => "order0",
            SwapinConfig::Throttled => "throttled",
            SwapinConfig::ZswapLarge => "zswap-large",
            SwapinConfig::ZswapLargeThrottled => "zswap-large-throttled",
        }
    }

    /// Parses a name as written in a scenario file.
    pub fn from_name(name: &str) -> Result<SwapinConfig, ConfigError> {
        SwapinConfig::ALL.into_iter().find(|c| c.name() == name).ok_or_else(|| {
            let expected: Vec<&str> = SwapinConfig::ALL.iter().map(|c| c.name()).collect();
            ConfigError::Invalid {
                field: "thp.swapin".to_owned(),
                message: format!("unknown policy \"{name}\" (expected one of {})", expected.join(", ")),
            }
        })
    }
}

/// The kernel's choice (`alloc_swap_folio`, 6.12 and later): every order its conditions
/// allow, tried from the largest down.
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelSwapin;

impl SwapinSize for KernelSwapin {
    fn name(&self) -> &'static str {
        "kernel"
    }
    fn orders(&mut self, view: &SwapinView) -> OrderMask {
        view.candidates
    }
}

#[cfg(test)]
mod tests;
