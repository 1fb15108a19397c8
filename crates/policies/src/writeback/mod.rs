//! zswap writeback-trigger policies and the configuration that selects one.
//!
//! zswap's pool-limit worker (`shrink_worker`) writes entries back to the swap device
//! when the pool is full. When it starts, how it counts failures as it walks the memory
//! cgroups and whether it pauses have changed, and a 2024 series proposed more:
//!
//! * `"kernel"` (the default): 6.12 to 6.18, [`swapsim_core::KernelWriteback`].
//! * [`PreFixWriteback`] (`"pre-6.12"`): 6.8 to 6.11, whose worker counted every cgroup
//!   without entries as a failure and gave up after 16.
//! * [`ProactiveWriteback`] (`"proactive"`): the unmerged rest of Takero Funaki's series,
//!   shrinking from the accept threshold plus 1 % and pausing during disk paging.
//!
//! A policy only decides; the engine owns the pool, the worker and the writeback.

mod pre_6_12;
mod proactive;

pub use pre_6_12::{PreFixWriteback, DEFAULT_EMPTY_MEMCGS, DEFAULT_OFFLINE_AT};
pub use proactive::{ProactiveWriteback, SHRINK_DELAY_NS};

use serde::{Deserialize, Serialize};
use swapsim_core::{KernelWriteback, ZswapWriteback};

/// Which writeback trigger a scenario uses: `"kernel" | "pre-6.12" | "proactive"`.
/// Default "kernel", 6.12 to 6.18.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZswapWritebackConfig {
    /// 6.12 to 6.18 ([`KernelWriteback`]).
    #[default]
    Kernel,
    /// 6.8 to 6.11 ([`PreFixWriteback`], its default hierarchy).
    #[serde(rename = "pre-6.12")]
    Pre612,
    /// The posted series ([`ProactiveWriteback`]).
    Proactive,
}

impl ZswapWritebackConfig {
    /// Every choice, in the order messages list them.
    pub const ALL: [ZswapWritebackConfig; 3] =
        [ZswapWritebackConfig::Kernel, ZswapWritebackConfig::Pre612, ZswapWritebackConfig::Proactive];

    /// A fresh policy in its initial state.
    pub fn build(self) -> Box<dyn ZswapWriteback> {
        match self {
            ZswapWritebackConfig::Kernel => Box::new(KernelWriteback),
            ZswapWritebackConfig::Pre612 => Box::new(PreFixWriteback::default()),
            ZswapWritebackConfig::Proactive => Box::new(ProactiveWriteback::default()),
        }
    }

    /// The name used in scenario files and reports.
    pub fn name(self) -> &'static str {
        match self {
            ZswapWritebackConfig::Kernel => "kernel",
            ZswapWritebackConfig::Pre612 => "pre-6.12",
            ZswapWritebackConfig::Proactive => "proactive",
        }
    }

    /// Whether this is the default, for leaving it out of echoed configurations.
    pub fn is_default(&self) -> bool {
        *self == ZswapWritebackConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Section {
        #[serde(default)]
        writeback: ZswapWritebackConfig,
    }

    #[test]
    fn names_round_trip_through_toml_and_a_misspelling_is_rejected() {
        for cfg in ZswapWritebackConfig::ALL {
            let text = format!("writeback = \"{}\"\n", cfg.name());
            let section: Section = toml::from_str(&text).expect("a known name");
            assert_eq!(section.writeback, cfg);
            assert_eq!(cfg.build().name(), cfg.name());
            assert_eq!(toml::to_string(&section).expect("serialises"), text);
        }
        let empty: Section = toml::from_str("").expect("the default");
        assert!(empty.writeback.is_default());
        let err = toml::from_str::<Section>("writeback = \"pre-612\"").unwrap_err().to_string();
        assert!(err.contains("pre-612") && err.contains("`pre-6.12`"), "{err}");
        assert!(toml::from_str::<Section>("writebak = \"kernel\"").is_err());
    }
}
