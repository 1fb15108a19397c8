//! A scenario's policy name: one of a family's built-in policies or a registered one.
//!
//! A scenario names each policy as a plain string (`readahead = "forward"`). The built-in
//! names keep deserialising into their config enums ([`ReadaheadConfig`] and the others),
//! so a scenario that names only built-in policies reads, echoes and runs as it always
//! did; any other string is kept as the name of a policy a [`Registry`](super::Registry)
//! may hold. Whether it does is checked where the registry is known: when the scenario is
//! parsed or edited, and when it is prepared.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use swapsim_policies::{
    AllocatorConfig, ReadaheadConfig, SwapinConfig, ZswapProtectionConfig, ZswapWritebackConfig,
};

/// The families of policies a scenario chooses by name, one per policy trait of the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Family {
    /// Swap-in readahead ([`swapsim_core::Readahead`]), `swap.readahead`.
    Readahead,
    /// The swap-in folio size ([`swapsim_core::SwapinSize`]), `thp.swapin`.
    Swapin,
    /// zswap's shrinker protection ([`swapsim_core::ZswapProtection`]), `zswap.protection`.
    ZswapProtection,
    /// zswap's writeback trigger ([`swapsim_core::ZswapWriteback`]), `zswap.writeback`.
    ZswapWriteback,
    /// The swap slot allocator ([`swapsim_core::SlotAllocator`]), `swap.allocator`.
    Allocator,
}

impl Family {
    /// Every family, in the order scenario files list them.
    pub const ALL: [Family; 5] = [
        Family::Readahead,
        Family::Allocator,
        Family::Swapin,
        Family::ZswapProtection,
        Family::ZswapWriteback,
    ];

    /// The scenario key that names the family's policy: `swap.readahead`, `thp.swapin`, ...
    pub fn key(self) -> &'static str {
        match self {
            Family::Readahead => "swap.readahead",
            Family::Swapin => "thp.swapin",
            Family::ZswapProtection => "zswap.protection",
            Family::ZswapWriteback => "zswap.writeback",
            Family::Allocator => "swap.allocator",
        }
    }

    /// How messages name the family: "readahead", "swap-in size", ...
    pub fn noun(self) -> &'static str {
        match self {
            Family::Readahead => "readahead",
            Family::Swapin => "swap-in size",
            Family::ZswapProtection => "zswap protection",
            Family::ZswapWriteback => "zswap writeback",
            Family::Allocator => "slot allocator",
        }
    }

    /// The names of the family's built-in policies, in the order messages list them.
    pub fn builtin_names(self) -> Vec<&'static str> {
        fn names<C: BuiltinPolicy>() -> Vec<&'static str> {
            C::all().iter().map(|c| c.name()).collect()
        }
        match self {
            Family::Readahead => names::<ReadaheadConfig>(),
            Family::Swapin => names::<SwapinConfig>(),
            Family::ZswapProtection => names::<ZswapProtectionConfig>(),
            Family::ZswapWriteback => names::<ZswapWritebackConfig>(),
            Family::Allocator => names::<AllocatorConfig>(),
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.noun())
    }
}

/// A family's closed set of built-in policies: the config enums of `swapsim-policies`.
pub trait BuiltinPolicy: Copy + PartialEq + Default + fmt::Debug + Send + Sync + 'static {
    /// The family the enum chooses in.
    const FAMILY: Family;
    /// Every built-in choice, in the order messages list them.
    fn all() -> &'static [Self];
    /// The name a scenario writes.
    fn name(self) -> &'static str;
}

/// `BuiltinPolicy` for each family's configuration enum, which has `ALL` and `name`.
macro_rules! builtin_policy {
    ($($config:ident => $family:ident),* $(,)?) => {$(
        impl BuiltinPolicy for $config {
            const FAMILY: Family = Family::$family;
            fn all() -> &'static [Self] {
                &$config::ALL
            }
            fn name(self) -> &'static str {
                $config::name(self)
            }
        }
    )*};
}

builtin_policy! {
    ReadaheadConfig => Readahead,
    SwapinConfig => Swapin,
    ZswapProtectionConfig => ZswapProtection,
    ZswapWritebackConfig => ZswapWriteback,
    AllocatorConfig => Allocator,
}

/// A policy as a scenario names it: built in, or registered under a name.
///
/// Written and echoed as the bare name, so `Choice::Builtin(ReadaheadConfig::Vma)` and
/// `"vma"` are the same thing in a file, in a `--set` edit and in a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice<C> {
    /// One of the family's built-in policies.
    Builtin(C),
    /// A policy a [`Registry`](super::Registry) holds under this name; any other string
    /// until a registry is asked.
    Registered(String),
}

/// The readahead policy a scenario names (`swap.readahead`).
pub type ReadaheadChoice = Choice<ReadaheadConfig>;
/// The swap-in size policy a scenario names (`thp.swapin`).
pub type SwapinChoice = Choice<SwapinConfig>;
/// The zswap protection policy a scenario names (`zswap.protection`).
pub type ZswapProtectionChoice = Choice<ZswapProtectionConfig>;
/// The zswap writeback trigger a scenario names (`zswap.writeback`).
pub type ZswapWritebackChoice = Choice<ZswapWritebackConfig>;
/// The slot allocator a scenario names (`swap.allocator`).
pub type AllocatorChoice = Choice<AllocatorConfig>;

impl<C: BuiltinPolicy> Choice<C> {
    /// The choice a scenario writes as `name`: built in when a built-in policy has it.
    pub fn from_name(name: &str) -> Choice<C> {
        match C::all().iter().find(|c| c.name() == name) {
            Some(&builtin) => Choice::Builtin(builtin),
            None => Choice::Registered(name.to_owned()),
        }
    }

    /// The name a scenario writes and a report echoes.
    pub fn name(&self) -> &str {
        match self {
            Choice::Builtin(builtin) => builtin.name(),
            Choice::Registered(name) => name,
        }
    }

    /// The built-in policy, when this is one.
    pub fn builtin(&self) -> Option<C> {
        match self {
            Choice::Builtin(builtin) => Some(*builtin),
            Choice::Registered(_) => None,
        }
    }

    /// Whether this is the family's default, which some reports leave out.
    pub fn is_default(&self) -> bool {
        *self == Choice::Builtin(C::default())
    }
}

impl<C: BuiltinPolicy> Default for Choice<C> {
    fn default() -> Choice<C> {
        Choice::Builtin(C::default())
    }
}

impl<C: BuiltinPolicy> From<C> for Choice<C> {
    fn from(builtin: C) -> Choice<C> {
        Choice::Builtin(builtin)
    }
}

impl<C: BuiltinPolicy> PartialEq<C> for Choice<C> {
    fn eq(&self, other: &C) -> bool {
        self.builtin() == Some(*other)
    }
}

impl<C: BuiltinPolicy> fmt::Display for Choice<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<C: BuiltinPolicy> Serialize for Choice<C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de, C: BuiltinPolicy> Deserialize<'de> for Choice<C> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Choice<C>, D::Error> {
        struct NameVisitor<C>(std::marker::PhantomData<C>);
        impl<C: BuiltinPolicy> serde::de::Visitor<'_> for NameVisitor<C> {
            type Value = Choice<C>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "the name of a {} policy", C::FAMILY.noun())
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Choice<C>, E> {
                Ok(Choice::from_name(name))
            }
        }
        deserializer.deserialize_str(NameVisitor(std::marker::PhantomData))
    }
}
