//! zswap shrinker protection policies and the configuration that selects one.
//!
//! When memory is short, zswap's shrinker writes compressed entries back to the swap
//! device from the old end of its LRU. Writing back an entry that is about to be faulted
//! in again costs a disk read where a decompression would have done, so the kernel
//! protects the warm end of the LRU. It has done so in two ways:
//!
//! * [`DecayProtection`] (`"decay"`): Linux 6.8–6.11, a count of protected entries at the
//!   young end, grown by stores and swap-ins and halved when above a quarter of the LRU.
//! * [`SecondChanceProtection`] (`"second-chance"`, the default): Linux 6.12 and later, a
//!   referenced bit per entry that buys it one rotation, and disk swap-ins subtracted
//!   from the next count.
//!
//! A policy only decides: the engine owns the LRU and the entries' referenced bits,
//! performs the writeback, and applies the shrinker's batching and deferral to the counts
//! returned here. [`swapsim_core::NoProtection`], the core's built-in choice, is not
//! offered here: no kernel version shrank zswap without protection.

mod decay;
mod second_chance;

pub use decay::DecayProtection;
pub use second_chance::SecondChanceProtection;

use serde::{Deserialize, Serialize};
use swapsim_core::ZswapProtection;

/// Which zswap protection policy a scenario uses: `"decay" | "second-chance"`. Default
/// "second-chance", the current kernel's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZswapProtectionConfig {
    /// The 6.8–6.11 decaying protected count ([`DecayProtection`]).
    Decay,
    /// The 6.12+ referenced bit and disk swap-in credit ([`SecondChanceProtection`]).
    #[default]
    SecondChance,
}

impl ZswapProtectionConfig {
    /// Every choice, in the order messages list them.
    pub const ALL: [ZswapProtectionConfig; 2] =
        [ZswapProtectionConfig::Decay, ZswapProtectionConfig::SecondChance];

    /// A fresh policy in its initial state.
    pub fn build(self) -> Box<dyn ZswapProtection> {
        match self {
            ZswapProtectionConfig::Decay => Box::new(DecayProtection::default()),
            ZswapProtectionConfig::SecondChance => Box::new(SecondChanceProtection::default()),
        }
    }

    /// The name used in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            ZswapProtectionConfig::Decay => "decay",
            ZswapProtectionConfig::SecondChance => "second-chance",
        }
    }
}

#[cfg(test)]
mod tests;
