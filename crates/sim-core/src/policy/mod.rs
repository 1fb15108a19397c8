//! Policy families: the decisions the engine delegates, one family per file.
//!
//! A family is a small object-safe trait the engine calls at one point of the kernel's
//! code, a view struct describing that point, and the plain value the policy returns.
//! Implementations live in the `swapsim-policies` crate; the core keeps only a trivial one
//! per family so that it can run and be tested alone. The families:
//!
//! - [`readahead`]: which neighbouring pages to read with a swap-cache miss
//!   (`swapin_readahead`).
//!
//! - [`swapin`]: the folio order of a swap-in on zram (mTHP).
//! - [`zswap`]: which zswap entries the shrinker writes back (its protection scheme).
//! - [`zswap_writeback`]: when zswap's pool-limit worker starts, which stores a full pool
//!   refuses, how the worker counts failures, and whether it holds writeback back.
//! - [`allocator`]: where a swap device looks for a folio's slots
//!   (`cluster_alloc_swap_entry`), for swap-out and for hibernation's image.
//!
//! The rule:
//! a new family adds one file here, one field of [`Policies`] with a default, and one call
//! site in the engine; a new policy of an existing family adds one file in
//! `swapsim-policies` and one variant of that family's config enum, and touches nothing
//! in the core.
//!
//! Every family hears what happened to its decisions through [`Feedback`], one enum shared
//! by all families so that a policy can learn from events another family caused (a
//! readahead policy from refaults, a swap-in order policy from readahead hits). The enum
//! is `#[non_exhaustive]`: policies match the variants they care about and ignore the rest.

pub mod allocator;
pub mod readahead;
pub mod swapin;
pub mod zswap;
pub mod zswap_writeback;

use crate::ids::{RegionId, SpaceId, SwapSlot, VirtPage};
use allocator::{ClusterAllocator, SlotAllocator};
use readahead::{NoReadahead, Readahead};
use swapin::{Order0Swapin, SwapinSize};
use zswap::{NoProtection, ZswapProtection};
use zswap_writeback::{KernelWriteback, ZswapWriteback};

/// The policies a run uses, one per family. `Policies::default()` gives every family its
/// trivial built-in policy; callers replace the ones they choose, so that adding a family
/// does not change existing callers.
#[derive(Clone, Debug)]
pub struct Policies {
    /// Swap-in readahead ([`NoReadahead`] by default).
    pub readahead: Box<dyn Readahead>,
    /// Swap-in folio size ([`Order0Swapin`] by default).
    pub swapin: Box<dyn SwapinSize>,
    /// zswap's shrinker protection ([`NoProtection`] by default).
    pub zswap: Box<dyn ZswapProtection>,
    /// zswap's writeback trigger ([`KernelWriteback`], 6.12 to 6.18, by default).
    pub zswap_writeback: Box<dyn ZswapWriteback>,
    /// Swap slot allocation ([`ClusterAllocator`], the 6.18 allocator, by default).
    pub allocator: Box<dyn SlotAllocator>,
}

impl Default for Policies {
    fn default() -> Policies {
        Policies {
            readahead: Box::new(NoReadahead),
            swapin: Box::new(Order0Swapin),
            zswap: Box::new(NoProtection),
            zswap_writeback: Box::new(KernelWriteback),
            allocator: Box::new(ClusterAllocator),
        }
    }
}

impl Policies {
    /// These policies with `readahead` as the swap-in readahead policy.
    pub fn with_readahead(mut self, readahead: Box<dyn Readahead>) -> Policies {
        self.readahead = readahead;
        self
    }

    /// These policies with `swapin` as the swap-in folio size policy.
    pub fn with_swapin(mut self, swapin: Box<dyn SwapinSize>) -> Policies {
        self.swapin = swapin;
        self
    }

    /// These policies with `zswap` as zswap's shrinker protection policy.
    pub fn with_zswap(mut self, zswap: Box<dyn ZswapProtection>) -> Policies {
        self.zswap = zswap;
        self
    }

    /// These policies with `writeback` as zswap's writeback trigger.
    pub fn with_zswap_writeback(mut self, writeback: Box<dyn ZswapWriteback>) -> Policies {
        self.zswap_writeback = writeback;
        self
    }

    /// These policies with `allocator` as the swap slot allocation policy.
    pub fn with_allocator(mut self, allocator: Box<dyn SlotAllocator>) -> Policies {
        self.allocator = allocator;
        self
    }
}

/// What happened after a policy's decision, told to every policy's `observe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Feedback {
    /// A fault found its page in the swap cache (`swap_update_readahead`).
    SwapCacheHit {
        /// The VMA of the faulting address.
        region: RegionId,
        /// The faulting virtual page.
        vpage: VirtPage,
        /// True when the page had been brought in by readahead and not yet used
        /// (`PG_readahead` was set); this is what counts as `swap_ra_hit`.
        readahead: bool,
    },
    /// A swap-in read a slot that still held a workingset shadow: the page had been
    /// reclaimed and was wanted again (`workingset_refault`).
    Refault {
        /// The address space of the swap-in that read the slot: the faulting process's,
        /// or the one swapoff was walking. A readahead neighbour's slot may hold another
        /// process's page.
        space: SpaceId,
        /// The slot read.
        slot: SwapSlot,
        /// True when the refault distance put the page back on the active list
        /// (`workingset_activate_anon`): the refault is recent, the page was evicted while
        /// still in the working set (`workingset_test_recent`).
        activated: bool,
        /// Order of the folio the slot is read into (0 unless a large swap-in).
        order: u8,
    },
}
