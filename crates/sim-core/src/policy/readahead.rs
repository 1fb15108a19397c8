//! The swap-in readahead policy boundary.
//!
//! On a swap fault that misses the swap cache, the kernel reads the faulting slot together
//! with some neighbours (`swapin_readahead` in mm/swap_state.c, read at the 6.18 level).
//! Which neighbours is a policy decision: the kernel's scaling cluster window, a fixed-size
//! cluster window, a window placed in virtual address space (VMA readahead), or none.
//! Policies live in the `swapsim-policies` crate; the engine only asks for a plan and
//! carries it out (skipping free slots and slots already in the swap cache, as
//! `__read_swap_cache_async` does).

use crate::ids::{DeviceId, RegionId, SpaceId, SwapSlot, TaskId, VirtPage};
use crate::policy::Feedback;
use std::ops::Range;

/// What the engine tells a readahead policy about one swap-cache miss.
///
/// `#[non_exhaustive]` so that the engine can describe more of the fault (a folio order,
/// say) without breaking policies: other crates build one with [`FaultView::new`] and may
/// change its public fields afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaultView {
    /// The faulting task (for swapoff, its kernel task).
    pub task: TaskId,
    /// The address space of the faulting address: the process whose page is swapped in.
    pub space: SpaceId,
    /// The VMA of the faulting address.
    pub region: RegionId,
    /// First virtual page of the VMA.
    pub region_start: VirtPage,
    /// One past the last virtual page of the VMA.
    pub region_end: VirtPage,
    /// The faulting virtual page.
    pub vpage: VirtPage,
    /// The swap device holding the faulting page.
    pub device: DeviceId,
    /// Slot offset of the faulting page on that device.
    pub offset: u32,
    /// Number of slots on the device, header included (the kernel's `si->max`).
    pub device_slots: u32,
    /// `vm.page-cluster`: readahead covers at most `2^page_cluster` pages.
    pub page_cluster: u32,
    /// True when the "fault" is swapoff bringing pages back (`unuse_pte_range`).
    pub swapoff: bool,
    /// Where the faulting page's data lives: the zero map, zswap or the device.
    pub location: EntryLocation,
}

/// Where a swapped-out page's data lives, in the order `swap_read_folio` tries them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EntryLocation {
    /// The zero map: the page is zero-filled, no read at all.
    Zero,
    /// zswap: decompressed in the reading context, no I/O.
    Zswap,
    /// The swap device: a read.
    #[default]
    Device,
}

impl FaultView {
    /// A fault by `task` at `vpage` of VMA `region` of address space `space`, which spans
    /// `vma`, whose page is in `slot` of a device with `device_slots` slots (header
    /// included). `page_cluster` is the kernel's default, 3, `swapoff` false and the page
    /// on the device; set the fields to change them.
    pub fn new(
        task: TaskId,
        space: SpaceId,
        region: RegionId,
        vma: Range<VirtPage>,
        vpage: VirtPage,
        slot: SwapSlot,
        device_slots: u32,
    ) -> FaultView {
        FaultView {
            task,
            space,
            region,
            region_start: vma.start,
            region_end: vma.end,
            vpage,
            device: slot.device,
            offset: slot.offset,
            device_slots,
            page_cluster: 3,
            swapoff: false,
            location: EntryLocation::Device,
        }
    }
}

/// Which pages to read along with the faulting one. Ranges are inclusive and always contain
/// the faulting page; the engine clamps them to the device or VMA as the kernel does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadaheadPlan {
    /// Read only the faulting slot.
    TargetOnly,
    /// Read every in-use slot in `[first, last]` on the faulting device (cluster readahead).
    Slots {
        /// First slot offset of the window.
        first: u32,
        /// Last slot offset of the window.
        last: u32,
    },
    /// Read every swapped-out page mapped in `[first, last]` of the faulting VMA (VMA
    /// readahead); their slots need not be contiguous or even on the same device.
    Pages {
        /// First virtual page of the window.
        first: VirtPage,
        /// Last virtual page of the window.
        last: VirtPage,
    },
}

/// Chooses which neighbouring swap slots to read together with a faulting one.
///
/// Called once per swap-cache miss, so keep `plan` O(1) in the window size. A policy that
/// needs randomness is handed its own stream when it is built.
///
/// Implementors are `Clone` (a `#[derive(Clone)]` does): a simulation copies its policies
/// and devices when it is forked ([`crate::Simulation::fork`]).
pub trait Readahead: std::fmt::Debug + Send + dyn_clone::DynClone {
    /// Stable name used in configuration and reports, e.g. `"cluster"`.
    fn kind(&self) -> &'static str;

    /// Called on each swap-in fault that misses the swap cache.
    fn plan(&mut self, fault: &FaultView) -> ReadaheadPlan;

    /// Feedback on what happened ([`Feedback`]); the default ignores it. Called on every
    /// swap-cache hit and every refault, so keep it O(1).
    fn observe(&mut self, _feedback: &Feedback) {}

    /// Whether a neighbour of the plan's window whose data lives at `location` is read
    /// ahead. Called once per in-use neighbour not yet in the swap cache, before its frame
    /// is charged; the default reads every one, as every merged kernel does.
    fn admit(&mut self, _location: EntryLocation) -> bool {
        true
    }
}

dyn_clone::clone_trait_object!(Readahead);

/// Baseline policy with no readahead; also what `vm.page-cluster = 0` amounts to.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoReadahead;

impl Readahead for NoReadahead {
    fn kind(&self) -> &'static str {
        "none"
    }
    fn plan(&mut self, _fault: &FaultView) -> ReadaheadPlan {
        ReadaheadPlan::TargetOnly
    }
}
