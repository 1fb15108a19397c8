//! Transparent huge pages and multi-size THP (mTHP): the knobs of
//! `/sys/kernel/mm/transparent_hugepage` and the per-size counters of its `stats`
//! directories.
//!
//! Anonymous memory can be allocated in folios of order 2 (16 KiB) to 9 (2 MiB, the PMD
//! size on x86-64). Which orders a fault may use depends on the top-level `enabled`
//! setting, the per-size `hugepages-<size>kB/enabled` setting and the region's madvise
//! hint, exactly as `thp_vma_allowable_orders` combines them (see [`ThpConfig::allowed`]).
//!
//! Simplified: a PMD-sized folio is mapped by 512 PTEs rather than one PMD entry; the
//! `defrag` setting is not modelled (large allocations never compact or reclaim, as with
//! the kernel's default `madvise` defrag for regions without `MADV_HUGEPAGE`).

use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest folio order: the PMD size, 2 MiB with 4 KiB pages.
pub const PMD_ORDER: u8 = 9;
/// Smallest large order the kernel allocates for anonymous memory (order 1 is not
/// supported for anonymous folios).
pub const MIN_ANON_ORDER: u8 = 2;
/// Bit mask over folio orders: bit `k` set means order `k`.
pub type OrderMask = u16;

/// The kernel's name of an order's size, as in `hugepages-<size>kB`: `16kB` for order 2.
pub fn size_name(order: u8) -> String {
    format!("{}kB", 4u64 << order)
}

/// The order a `<size>kB` name stands for, if it is one the kernel offers for anonymous
/// memory.
pub fn order_of(name: &str) -> Option<u8> {
    let kib: u64 = name.strip_suffix("kB")?.parse().ok()?;
    (MIN_ANON_ORDER..=PMD_ORDER).find(|&o| 4u64 << o == kib)
}

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThpEnabled {
    /// Every region.
    Always,
    /// Regions with `MADV_HUGEPAGE` only.
    #[default]
    Madvise,
    /// None.
    Never,
}

/// `/sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/enabled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThpSizeEnabled {
    /// Every region not marked `MADV_NOHUGEPAGE`.
    Always,
    /// Follow the top-level setting.
    Inherit,
    /// Regions with `MADV_HUGEPAGE` only.
    Madvise,
    /// Never.
    Never,
}

/// A region's madvise hint (`MADV_HUGEPAGE`, `MADV_NOHUGEPAGE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThpHint {
    /// No madvise call.
    #[default]
    Default,
    /// `MADV_HUGEPAGE`.
    Hugepage,
    /// `MADV_NOHUGEPAGE`: no large folios at all.
    Nohugepage,
}

/// The `[thp]` knobs the core reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThpConfig {
    /// Top-level `enabled`: "always", "madvise" or "never". Default "madvise" (the
    /// setting most distributions ship; the kernel's own Kconfig default is "always").
    pub enabled: ThpEnabled,
    /// Per size, `hugepages-<size>kB/enabled`, keyed by the size as the kernel names it
    /// ("16kB" .. "2048kB"). Sizes not listed keep the kernel's default: "inherit" for
    /// 2048kB, "never" for the others.
    pub hugepages: BTreeMap<String, ThpSizeEnabled>,
    /// The madvise hint of regions no task declares, which a trace maps implicitly on
    /// first touch. Not a kernel knob: the workload sets it (`[workload] madvise`).
    #[serde(skip)]
    pub implicit_madvise: ThpHint,
}

impl Default for ThpConfig {
    fn default() -> ThpConfig {
        ThpConfig {
            enabled: ThpEnabled::Madvise,
            hugepages: BTreeMap::new(),
            implicit_madvise: ThpHint::Default,
        }
    }
}

impl ThpConfig {
    /// Checks that every size key names an order the kernel offers.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for key in self.hugepages.keys() {
            if order_of(key).is_none() {
                let sizes: Vec<String> = (MIN_ANON_ORDER..=PMD_ORDER).map(size_name).collect();
                return Err(ConfigError::Invalid {
                    field: format!("thp.hugepages.{key}"),
                    message: format!("\"{key}\" is not an mTHP size; expected one of {}", sizes.join(", ")),
                });
            }
        }
        Ok(())
    }

    /// The per-size setting of `order`, the kernel's default when not listed.
    pub fn size_setting(&self, order: u8) -> ThpSizeEnabled {
        self.hugepages.get(&size_name(order)).copied().unwrap_or(if order == PMD_ORDER {
            ThpSizeEnabled::Inherit
        } else {
            ThpSizeEnabled::Never
        })
    }

    /// The orders a region with `hint` may allocate (`thp_vma_allowable_orders` without
    /// the range checks): a size set to "always", or to "inherit" under a top-level
    /// "always", applies to every region; "madvise" (directly or inherited) only to regions
    /// with `MADV_HUGEPAGE`; `MADV_NOHUGEPAGE` disables them all.
    pub fn allowed(&self, hint: ThpHint) -> OrderMask {
        if hint == ThpHint::Nohugepage {
            return 0;
        }
        let madvised = hint == ThpHint::Hugepage;
        let mut mask = 0;
        for order in MIN_ANON_ORDER..=PMD_ORDER {
            let on = match self.size_setting(order) {
                ThpSizeEnabled::Always => true,
                ThpSizeEnabled::Madvise => madvised,
                ThpSizeEnabled::Never => false,
                ThpSizeEnabled::Inherit => match self.enabled {
                    ThpEnabled::Always => true,
                    ThpEnabled::Madvise => madvised,
                    ThpEnabled::Never => false,
                },
            };
            if on {
                mask |= 1 << order;
            }
        }
        mask
    }
}

/// Declares [`MthpStats`] from one list of counter names, with the field-wise difference and
/// the list by name, so that the three never disagree.
macro_rules! mthp_counters {
    ($($name:ident),* $(,)?) => {
        /// Per-size counters, named as in `hugepages-<size>kB/stats/`.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
        pub struct MthpStats {
            $(pub $name: u64,)*
        }

        impl MthpStats {
            /// Counts between `earlier` and `self`.
            pub fn since(&self, earlier: &MthpStats) -> MthpStats {
                MthpStats { $($name: self.$name - earlier.$name,)* }
            }

            /// The counters by their kernel names.
            pub fn named(&self) -> Vec<(&'static str, u64)> {
                vec![$((stringify!($name), self.$name),)*]
            }
        }
    };
}

mthp_counters!(
    anon_fault_alloc,
    anon_fault_fallback,
    anon_fault_fallback_charge,
    swpout,
    swpout_fallback,
    swpin,
    swpin_fallback,
    swpin_fallback_charge,
    zswpout,
    split,
);

/// Per-order counters for orders 0..=9 (orders below 2 stay zero).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MthpCounters(pub [MthpStats; PMD_ORDER as usize + 1]);

impl MthpCounters {
    /// The stats of `order`.
    #[inline]
    pub fn at(&mut self, order: u8) -> &mut MthpStats {
        &mut self.0[order as usize]
    }

    /// The report form: sizes with any non-zero counter, keyed `16kB`, `64kB`, ...
    pub fn report(&self) -> BTreeMap<String, MthpStats> {
        (MIN_ANON_ORDER..=PMD_ORDER)
            .filter(|&o| self.0[o as usize] != MthpStats::default())
            .map(|o| (size_name(o), self.0[o as usize]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(enabled: ThpEnabled, sizes: &[(&str, ThpSizeEnabled)]) -> ThpConfig {
        ThpConfig {
            enabled,
            hugepages: sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            implicit_madvise: ThpHint::Default,
        }
    }

    #[test]
    fn defaults_allow_nothing_without_madvise_and_pmd_with_it() {
        let c = ThpConfig::default();
        assert_eq!(c.allowed(ThpHint::Default), 0);
        assert_eq!(c.allowed(ThpHint::Hugepage), 1 << PMD_ORDER);
        assert_eq!(c.allowed(ThpHint::Nohugepage), 0);
    }

    #[test]
    fn per_size_settings_combine_with_the_top_level_as_the_kernel_does() {
        let c = cfg(
            ThpEnabled::Never,
            &[
                ("16kB", ThpSizeEnabled::Always),
                ("64kB", ThpSizeEnabled::Madvise),
                ("2048kB", ThpSizeEnabled::Inherit),
            ],
        );
        assert_eq!(c.allowed(ThpHint::Default), 1 << 2);
        assert_eq!(c.allowed(ThpHint::Hugepage), 1 << 2 | 1 << 4);
        let c = cfg(ThpEnabled::Always, &[("32kB", ThpSizeEnabled::Inherit)]);
        assert_eq!(c.allowed(ThpHint::Default), 1 << 3 | 1 << 9);
        assert_eq!(c.allowed(ThpHint::Nohugepage), 0);
    }

    #[test]
    fn sizes_are_named_as_in_sysfs_and_unknown_ones_are_refused() {
        assert_eq!(size_name(2), "16kB");
        assert_eq!(size_name(9), "2048kB");
        assert_eq!(order_of("64kB"), Some(4));
        assert_eq!(order_of("8kB"), None);
        let err = cfg(ThpEnabled::Never, &[("24kB", ThpSizeEnabled::Always)]).validate().unwrap_err();
        assert!(err.to_string().starts_with("thp.hugepages.24kB: \"24kB\" is not an mTHP size"), "{err}");
    }
}
