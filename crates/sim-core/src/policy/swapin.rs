//! The swap-in folio size family: how large a folio a swap fault brings in.
//!
//! Since 6.12 a fault on a synchronous swap device (zram) with an unshared entry may swap
//! in a whole large folio (`alloc_swap_folio` in mm/memory.c). The engine computes the
//! orders the kernel's conditions allow (§7.3 of the model reference: enabled sizes, the
//! range inside the VMA, the swap offset aligned like the virtual page, contiguous
//! entries of one device, one zero-map state, none in the swap cache) and asks the policy
//! two things: which of those orders to try ([`SwapinSize::orders`]), and whether the
//! memory cgroup charge of a large folio may proceed ([`SwapinSize::may_charge`]), the
//! point where refault-based throttling acts. A refused charge counts as the kernel
//! counts a failed one (`swpin_fallback_charge` and `swpin_fallback`) and the next order
//! is tried.
//!
//! A policy hears every refault through `observe` ([`Feedback::Refault`] carries the
//! folio order and whether the refault was recent).

use super::Feedback;
use crate::thp::OrderMask;

/// What the engine knows when a large swap-in is possible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SwapinView {
    /// Orders the kernel's conditions allow, order 0 excluded (never empty when asked).
    pub candidates: OrderMask,
}

impl SwapinView {
    /// A view with `candidates`.
    pub fn new(candidates: OrderMask) -> SwapinView {
        SwapinView { candidates }
    }
}

/// A swap-in folio size policy.
///
/// Implementors are `Clone` (a `#[derive(Clone)]` does): a simulation copies its policies
/// and devices when it is forked ([`crate::Simulation::fork`]).
pub trait SwapinSize: std::fmt::Debug + Send + dyn_clone::DynClone {
    /// Name for reports.
    fn name(&self) -> &'static str;
    /// The orders to try, largest first, as a subset of `view.candidates`; 0 means an
    /// order-0 swap-in without any fallback counted.
    fn orders(&mut self, view: &SwapinView) -> OrderMask;
    /// Whether the memory cgroup charge of a large folio of `order` may go ahead
    /// (`mem_cgroup_swapin_charge_folio`). Default yes.
    fn may_charge(&mut self, _order: u8) -> bool {
        true
    }
    /// Whether entries stored in zswap are swapped in as a synchronous device's are, and
    /// may come in as a whole large folio (Usama Arif's 2024 RFC, "mm: zswap: add support
    /// for zswapin of large folios"): a fault on a zswap entry with one reference skips the
    /// swap cache (so no readahead), and an aligned range whose every page is in zswap
    /// joins the candidate orders, decompressed page by page into one folio. A range only
    /// partly in zswap stays order 0. Default no: 6.18 never swaps in large once zswap's
    /// pool exists, and reads zswap entries through the swap cache on a disk.
    fn zswap_large(&self) -> bool {
        false
    }
    /// Learns from what happened.
    fn observe(&mut self, _feedback: &Feedback) {}
}

dyn_clone::clone_trait_object!(SwapinSize);

/// Never swap in a large folio: the built-in policy of the core.
#[derive(Clone, Copy, Debug, Default)]
pub struct Order0Swapin;

impl SwapinSize for Order0Swapin {
    fn name(&self) -> &'static str {
        "order0"
    }
    fn orders(&mut self, _view: &SwapinView) -> OrderMask {
        0
    }
}
