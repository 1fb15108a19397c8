//! Policies from outside this repository, registered by name per family.
//!
//! The built-in policies of each family are a closed enum of `swapsim-policies`
//! ([`ReadaheadConfig`](swapsim_policies::ReadaheadConfig) and the others). A crate of
//! one's own adds more: it implements a core trait ([`Readahead`], [`SwapinSize`],
//! [`ZswapProtection`], [`ZswapWriteback`], [`SlotAllocator`]) and registers a factory
//! under a name, which a scenario then writes where it would write a built-in one
//! (`readahead = "forward"`, `--set swap.readahead=forward`, `--vary
//! swap.readahead=kernel,forward`).
//!
//! ```
//! use swapsim::{PolicyContext, Registry};
//! use swapsim_core::{FaultView, Readahead, ReadaheadPlan};
//!
//! /// Reads only the faulting page, under a name of its own.
//! #[derive(Clone, Debug)]
//! struct Alone;
//! impl Readahead for Alone {
//!     fn kind(&self) -> &'static str {
//!         "alone"
//!     }
//!     fn plan(&mut self, _fault: &FaultView) -> ReadaheadPlan {
//!         ReadaheadPlan::TargetOnly
//!     }
//! }
//!
//! let mut registry = Registry::new();
//! registry.register_readahead("alone", |_: &PolicyContext| Box::new(Alone))?;
//! let scenario = swapsim::Scenario::from_toml_with(
//!     "[memcg]\nlimit = \"2MiB\"\n[[swap.devices]]\nname = \"vda\"\nsize = \"16MiB\"\n\
//!      [workload.generator]\npattern = \"seq\"\nregion = \"4MiB\"\n",
//!     registry.into_shared(),
//! )?;
//! let report = scenario.set("swap.readahead", "alone")?.run()?;
//! assert_eq!(report.readahead, "alone");
//! assert_eq!(report.vmstat.swap_ra, 0);
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! A built-in name cannot be registered again, and neither can a registered one: a name
//! means one policy. The registry is read-only once shared; every run builds fresh
//! policies from its factories, so a registered policy starts every run from the same
//! state and a run stays a function of its scenario and seed. A factory that needs
//! randomness takes its stream from [`PolicyContext::rng`], derived from the run's seed.
//!
//! What it deliberately does not do: add families (a new family is a core trait and a call
//! site in the engine), or read parameters from the scenario (register one name per
//! setting instead, `forward-16`, `forward-32`).

mod choice;
#[cfg(test)]
mod tests;

use anyhow::{bail, Result};
pub use choice::{
    AllocatorChoice, BuiltinPolicy, Choice, Family, ReadaheadChoice, SwapinChoice, ZswapProtectionChoice,
    ZswapWritebackChoice,
};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use swapsim_core::{Readahead, SimRng, SlotAllocator, SwapinSize, ZswapProtection, ZswapWriteback};
use swapsim_policies::ReadaheadContext;

/// What a factory knows when it builds a policy for one run.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct PolicyContext<'a> {
    /// The run's root seed.
    pub seed: u64,
    /// The facts the kernel's readahead choice depends on (`vma_ra_enabled`, a rotational
    /// device among the swap devices), as the scenario sets them.
    pub readahead: ReadaheadContext,
    /// `vm.page-cluster` at the start of the run (a readahead policy also sees it in
    /// every [`FaultView`](swapsim_core::FaultView)).
    pub page_cluster: u32,
    /// The family being built.
    pub family: Family,
    /// The name the scenario gave.
    pub name: &'a str,
}

impl PolicyContext<'_> {
    /// The policy's own random stream, derived from the seed, the family and the name, so
    /// that its draws never shift another component's.
    pub fn rng(&self) -> SimRng {
        SimRng::derive(self.seed, &format!("policies.{}.{}", self.family.key(), self.name))
    }
}

/// A factory of one family's policy.
type Factory<P> = Arc<dyn Fn(&PolicyContext<'_>) -> Box<P> + Send + Sync>;

/// Why a registration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is one of the family's built-in policies.
    #[error("{family} policy \"{name}\" is built in; register it under another name")]
    Builtin {
        /// The family.
        family: Family,
        /// The name.
        name: String,
    },
    /// The name is registered already.
    #[error("{family} policy \"{name}\" is registered twice")]
    Duplicate {
        /// The family.
        family: Family,
        /// The name.
        name: String,
    },
    /// The name could not be written in a scenario or a `--vary` list.
    #[error(
        "{family} policy name \"{name}\": use letters, digits, '-', '_' and '.', starting with a letter"
    )]
    BadName {
        /// The family.
        family: Family,
        /// The name.
        name: String,
    },
}

/// The policies a scenario may name beyond the built-in ones, by family.
///
/// `Registry::new()` (or `default()`) holds none: every scenario then means exactly what it
/// means without a registry. Share it with [`Registry::into_shared`] and hand it to
/// [`Scenario::load_with`](crate::Scenario::load_with) or
/// [`Scenario::from_toml_with`](crate::Scenario::from_toml_with).
#[derive(Clone, Default)]
pub struct Registry {
    readahead: BTreeMap<String, Factory<dyn Readahead>>,
    swapin: BTreeMap<String, Factory<dyn SwapinSize>>,
    zswap_protection: BTreeMap<String, Factory<dyn ZswapProtection>>,
    zswap_writeback: BTreeMap<String, Factory<dyn ZswapWriteback>>,
    allocator: BTreeMap<String, Factory<dyn SlotAllocator>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for family in Family::ALL {
            map.entry(&family.key(), &self.names(family));
        }
        map.finish()
    }
}

/// Adds `factory` under `name` to `slot`, after the checks every family shares.
fn register<P: ?Sized>(
    slot: &mut BTreeMap<String, Factory<P>>,
    family: Family,
    name: &str,
    factory: Factory<P>,
) -> Result<(), RegistryError> {
    let mut chars = name.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !well_formed {
        return Err(RegistryError::BadName { family, name: name.to_owned() });
    }
    if family.builtin_names().contains(&name) {
        return Err(RegistryError::Builtin { family, name: name.to_owned() });
    }
    if slot.contains_key(name) {
        return Err(RegistryError::Duplicate { family, name: name.to_owned() });
    }
    slot.insert(name.to_owned(), factory);
    Ok(())
}

impl Registry {
    /// A registry holding no policy beyond the built-in ones.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// The registry, read-only, to be shared by every scenario and run of a command.
    pub fn into_shared(self) -> Arc<Registry> {
        Arc::new(self)
    }

    /// Registers a readahead policy under `name` (`swap.readahead = "name"`).
    pub fn register_readahead<F>(&mut self, name: &str, factory: F) -> Result<&mut Registry, RegistryError>
    where
        F: Fn(&PolicyContext<'_>) -> Box<dyn Readahead> + Send + Sync + 'static,
    {
        register(&mut self.readahead, Family::Readahead, name, Arc::new(factory))?;
        Ok(self)
    }

    /// Registers a swap-in size policy under `name` (`thp.swapin = "name"`).
    pub fn register_swapin<F>(&mut self, name: &str, factory: F) -> Result<&mut Registry, RegistryError>
    where
        F: Fn(&PolicyContext<'_>) -> Box<dyn SwapinSize> + Send + Sync + 'static,
    {
        register(&mut self.swapin, Family::Swapin, name, Arc::new(factory))?;
        Ok(self)
    }

    /// Registers a zswap protection policy under `name` (`zswap.protection = "name"`).
    pub fn register_zswap_protection<F>(
        &mut self,
        name: &str,
        factory: F,
    ) -> Result<&mut Registry, RegistryError>
    where
        F: Fn(&PolicyContext<'_>) -> Box<dyn ZswapProtection> + Send + Sync + 'static,
    {
        register(&mut self.zswap_protection, Family::ZswapProtection, name, Arc::new(factory))?;
        Ok(self)
    }

    /// Registers a zswap writeback trigger under `name` (`zswap.writeback = "name"`).
    pub fn register_zswap_writeback<F>(
        &mut self,
        name: &str,
        factory: F,
    ) -> Result<&mut Registry, RegistryError>
    where
        F: Fn(&PolicyContext<'_>) -> Box<dyn ZswapWriteback> + Send + Sync + 'static,
    {
        register(&mut self.zswap_writeback, Family::ZswapWriteback, name, Arc::new(factory))?;
        Ok(self)
    }

    /// Registers a slot allocator under `name` (`swap.allocator = "name"`).
    pub fn register_allocator<F>(&mut self, name: &str, factory: F) -> Result<&mut Registry, RegistryError>
    where
        F: Fn(&PolicyContext<'_>) -> Box<dyn SlotAllocator> + Send + Sync + 'static,
    {
        register(&mut self.allocator, Family::Allocator, name, Arc::new(factory))?;
        Ok(self)
    }

    /// The names registered in `family`, sorted.
    pub fn names(&self, family: Family) -> Vec<&str> {
        fn keys<P: ?Sized>(slot: &BTreeMap<String, Factory<P>>) -> Vec<&str> {
            slot.keys().map(String::as_str).collect()
        }
        match family {
            Family::Readahead => keys(&self.readahead),
            Family::Swapin => keys(&self.swapin),
            Family::ZswapProtection => keys(&self.zswap_protection),
            Family::ZswapWriteback => keys(&self.zswap_writeback),
            Family::Allocator => keys(&self.allocator),
        }
    }

    /// Checks that `choice` names a built-in or a registered policy; the error lists both.
    pub fn check<C: BuiltinPolicy>(&self, choice: &Choice<C>) -> Result<(), String> {
        match choice {
            Choice::Builtin(_) => Ok(()),
            Choice::Registered(name) if self.names(C::FAMILY).contains(&name.as_str()) => Ok(()),
            Choice::Registered(name) => Err(self.unknown(C::FAMILY, name)),
        }
    }

    /// The message for a name that is neither built in nor registered.
    fn unknown(&self, family: Family, name: &str) -> String {
        let registered = self.names(family);
        let registered = if registered.is_empty() {
            "none registered".to_owned()
        } else {
            format!("registered: {}", registered.join(", "))
        };
        format!(
            "unknown {family} policy \"{name}\" (built in: {}; {registered})",
            family.builtin_names().join(", ")
        )
    }

    /// A fresh policy of `family` for `choice`: a built-in one from `builtin`, or the
    /// registered one from its factory in `slot` (an error when the name is unknown).
    fn build<C, P: ?Sized>(
        &self,
        (family, slot): (Family, &BTreeMap<String, Factory<P>>),
        choice: &Choice<C>,
        ctx: &PolicyContext<'_>,
        builtin: impl FnOnce(&C) -> Box<P>,
    ) -> Result<Box<P>> {
        let name = match choice {
            Choice::Builtin(config) => return Ok(builtin(config)),
            Choice::Registered(name) => name,
        };
        match slot.get(name.as_str()) {
            Some(factory) => Ok(factory(&PolicyContext { family, name, ..*ctx })),
            None => bail!("{}: {}", family.key(), self.unknown(family, name)),
        }
    }

    /// A fresh readahead policy: a built-in one resolved against `ctx.readahead` (the
    /// kernel's choice), or a registered one from its factory.
    pub fn readahead(&self, choice: &ReadaheadChoice, ctx: &PolicyContext<'_>) -> Result<Box<dyn Readahead>> {
        self.build((Family::Readahead, &self.readahead), choice, ctx, |builtin| builtin.build(&ctx.readahead))
    }

    /// A fresh swap-in size policy.
    pub fn swapin(&self, choice: &SwapinChoice, ctx: &PolicyContext<'_>) -> Result<Box<dyn SwapinSize>> {
        self.build((Family::Swapin, &self.swapin), choice, ctx, |builtin| builtin.build())
    }

    /// A fresh zswap protection policy.
    pub fn zswap_protection(
        &self,
        choice: &ZswapProtectionChoice,
        ctx: &PolicyContext<'_>,
    ) -> Result<Box<dyn ZswapProtection>> {
        self.build((Family::ZswapProtection, &self.zswap_protection), choice, ctx, |builtin| builtin.build())
    }

    /// A fresh zswap writeback trigger.
    pub fn zswap_writeback(
        &self,
        choice: &ZswapWritebackChoice,
        ctx: &PolicyContext<'_>,
    ) -> Result<Box<dyn ZswapWriteback>> {
        self.build((Family::ZswapWriteback, &self.zswap_writeback), choice, ctx, |builtin| builtin.build())
    }

    /// A fresh slot allocator.
    pub fn allocator(
        &self,
        choice: &AllocatorChoice,
        ctx: &PolicyContext<'_>,
    ) -> Result<Box<dyn SlotAllocator>> {
        self.build((Family::Allocator, &self.allocator), choice, ctx, |builtin| builtin.build())
    }
}

/// The readahead policy that runs for `choice`: the kernel's choice resolved against
/// `ctx`, any other name itself.
pub(crate) fn resolve_readahead(choice: &ReadaheadChoice, ctx: &ReadaheadContext) -> ReadaheadChoice {
    match choice {
        Choice::Builtin(builtin) => Choice::Builtin(builtin.resolve(ctx)),
        Choice::Registered(name) => Choice::Registered(name.clone()),
    }
}
