//! zswap's knobs (`/sys/module/zswap/parameters/`) and its debugfs gauges.
//!
//! The mechanics are in the memory model (`mm/zswap.rs`: the entry table, the LRU, store,
//! load and writeback; `mm/zsmalloc.rs`: the pool's footprint), the shrinkers in the
//! engine (`engine/zswap.rs`), and the choice of which entries to write back in the
//! protection policy family (`policy::zswap`).

use crate::contents::Compressor;
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// What zswap does with a page that does not compress below a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Incompressible {
    /// Store it uncompressed, taking a whole page of pool, so that writeback keeps LRU
    /// order (6.18; a memory cgroup with `zswap.writeback` off rejects it instead).
    #[default]
    Store,
    /// Reject it (`reject_compress_poor`): it goes to the swap device (up to 6.17).
    Reject,
}

/// zswap's parameters, and whether its pool was ever created in this boot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZswapConfig {
    /// `enabled`. Default false.
    pub enabled: bool,
    /// zswap's pool has been created in this boot (the first write of its `enabled`
    /// parameter, even `N`, creates it). From then on no large folio is swapped in whole
    /// (`zswap_never_enabled()` is false). Implied by `enabled`. Default false: a fresh
    /// boot with zswap off.
    pub ever_enabled: bool,
    /// `compressor`. Default "lzo" (the Kconfig default).
    pub compressor: Compressor,
    /// `max_pool_percent`: the pool may take this share of RAM. Default 20.
    pub max_pool_percent: u32,
    /// `accept_threshold_percent`: once full, stores are refused until the pool falls to
    /// this share of its limit. Default 90.
    pub accept_threshold_percent: u32,
    /// `shrinker_enabled`: write entries back under memory pressure. Default false.
    pub shrinker_enabled: bool,
    /// Pages that do not compress below a page: "store" (6.18, default) or "reject".
    pub incompressible: Incompressible,
}

impl Default for ZswapConfig {
    fn default() -> ZswapConfig {
        ZswapConfig {
            enabled: false,
            ever_enabled: false,
            compressor: Compressor::default(),
            max_pool_percent: 20,
            accept_threshold_percent: 90,
            shrinker_enabled: false,
            incompressible: Incompressible::default(),
        }
    }
}

impl ZswapConfig {
    /// Whether `zswap_never_enabled()` is false: the pool exists in this boot.
    pub fn pool_created(&self) -> bool {
        self.enabled || self.ever_enabled
    }

    /// Checks the ranges the kernel's parameters take.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &str, message: String| {
            Err(ConfigError::Invalid { field: format!("zswap.{field}"), message })
        };
        if self.max_pool_percent > 100 {
            return bad("max_pool_percent", format!("{} is outside 0..=100", self.max_pool_percent));
        }
        if self.accept_threshold_percent > 100 {
            return bad(
                "accept_threshold_percent",
                format!("{} is outside 0..=100", self.accept_threshold_percent),
            );
        }
        Ok(())
    }
}

/// zswap's gauges and event counts at the end of a run, named as in
/// `/sys/kernel/debug/zswap/`, plus the memory cgroup's `zswap` and `zswapped`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZswapReport {
    /// The protection policy the shrinkers used.
    pub protection: String,
    /// Bytes of memory the pool takes (`pool_total_size`: zsmalloc pages × 4 KiB).
    pub pool_total_size: u64,
    /// Pages stored.
    pub stored_pages: u64,
    /// Pages stored uncompressed.
    pub stored_incompressible_pages: u64,
    /// Pages written back to the swap device.
    pub written_back_pages: u64,
    /// Stores that found the pool at its limit.
    pub pool_limit_hit: u64,
    /// Writebacks that failed (the slot was in the swap cache, or no memory).
    pub reject_reclaim_fail: u64,
    /// Pages refused because they did not compress below a page.
    pub reject_compress_poor: u64,
    /// Stores refused by the memory cgroup's `zswap.max`.
    pub reject_memcg_limit: u64,
    /// Compressed bytes charged to the memory cgroup (`memory.stat` `zswap`).
    pub memcg_zswap_bytes: u64,
    /// Times the pool-limit worker ran.
    pub shrink_worker_runs: u64,
    /// Entries the writers visited: the memory-pressure shrinker and the pool-limit
    /// worker together.
    pub shrinker_scanned: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_percentages_name_the_field() {
        let c = ZswapConfig { max_pool_percent: 101, ..ZswapConfig::default() };
        assert_eq!(c.validate().unwrap_err().to_string(), "zswap.max_pool_percent: 101 is outside 0..=100");
        let c = ZswapConfig { accept_threshold_percent: 200, ..ZswapConfig::default() };
        assert!(c.validate().unwrap_err().to_string().starts_with("zswap.accept_threshold_percent: 200"));
        assert!(ZswapConfig::default().validate().is_ok());
    }
}
