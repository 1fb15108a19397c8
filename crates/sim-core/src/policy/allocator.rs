//! The swap slot allocator family: where a swap device looks for a folio's slots.
//!
//! `cluster_alloc_swap_entry` in mm/swapfile.c tries a fixed sequence of places for
//! `2^order` free, aligned slots: the CPU's current cluster of that order, lists of
//! partly used clusters, a free cluster, and so on. Which places, in which order, and what
//! becomes of the cluster afterwards is what changed between kernels:
//!
//! - 6.10 and 6.11 kept one list of free clusters; a large folio found room only in its
//!   CPU's current cluster or a free one, and an order-0 page fell back to scanning the
//!   whole swap map (`scan_swap_map_slots`). Chris Li's series (6.12) added per-order
//!   lists of partly used clusters.
//! - From 6.15 (the swap slot cache removed) to 6.19, hibernation took each image slot
//!   through the slow path alone: no CPU's current cluster, and the cluster put back on a
//!   list after every slot, so that consecutive image slots land in different clusters.
//!
//! The engine asks the policy for a [`SlotPlan`] on every allocation and carries it out
//! in `mm/swap/device.rs`; it checks the slots it finds (free, aligned, inside one
//! cluster) whatever the plan says, so a policy cannot hand out a busy slot. The policy
//! also says, once per device at swapon, which cluster lists the kernel it models keeps
//! ([`ClusterLists`]).
//!
//! [`ClusterAllocator`] is the 6.18 allocator, the default.

/// Why slots are wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlotPurpose {
    /// Reclaim swaps a folio out (`folio_alloc_swap`).
    SwapOut,
    /// Hibernation writes a page of its image (`swap_alloc_hibernation_slot`, from
    /// `alloc_swapdev_block`).
    Hibernation,
}

/// What the allocator knows when it is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlotRequest {
    /// The folio order: `2^order` contiguous slots, the first a multiple of `2^order`.
    pub order: u8,
    /// Why the slots are wanted.
    pub purpose: SlotPurpose,
    /// The device is rotational (one current cluster per device instead of one per CPU).
    pub rotational: bool,
}

impl SlotRequest {
    /// A request for `order` slots for `purpose` on a device that is `rotational` or not.
    pub fn new(order: u8, purpose: SlotPurpose, rotational: bool) -> SlotRequest {
        SlotRequest { order, purpose, rotational }
    }
}

/// A place the allocator looks for slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlotSource {
    /// The CPU's current cluster of the order, from its allocation hint onwards
    /// (`percpu_swap_cluster`, or the device's one hint on a rotational device). A
    /// current cluster without room is given up and filed by how full it is.
    Current,
    /// Partly used clusters of the order (`nonfull_clusters[order]`), each tried once.
    Nonfull,
    /// A free cluster (`free_clusters`), which then serves the order.
    Free,
    /// Fragmented clusters of the order (`frag_clusters[order]`): the ones the slow path
    /// put back after taking slots from them, tried in turn from the head.
    Frag,
    /// Order 0 only: partly used clusters of any larger order (stealing a slot).
    Steal,
    /// Order 0 only: the whole swap map scanned for a free slot from the CPU's scan
    /// position, wrapping once (`scan_swap_map_slots` before 6.12).
    Scan,
}

/// What becomes of the cluster the slots came from (not used by [`SlotSource::Scan`],
/// which never makes a cluster current).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AfterAlloc {
    /// It becomes the CPU's current cluster of the order, the hint just past the slots:
    /// the next allocation of that order on that CPU continues there.
    KeepCurrent,
    /// It goes back on a list at once (`relocate_cluster`): to the tail of the fragmented
    /// clusters of its order, or among the full ones; the CPU's hint is left alone.
    Relocate,
}

/// Where to look for slots, in order, and what becomes of the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SlotPlan {
    /// The places to try, first to last; the first that has room gives the slots. An
    /// empty list refuses the allocation (a large folio is then split).
    pub sources: &'static [SlotSource],
    /// What becomes of the cluster.
    pub then: AfterAlloc,
}

impl SlotPlan {
    /// A plan that tries `sources` in order and does `then` with the cluster.
    pub const fn new(sources: &'static [SlotSource], then: AfterAlloc) -> SlotPlan {
        SlotPlan { sources, then }
    }
}

/// Which cluster lists a device keeps, fixed at swapon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClusterLists {
    /// Free clusters, and partly used ones per order (6.12 and later).
    PerOrder,
    /// Free clusters only: a partly used cluster that is no CPU's current one is on no
    /// list, and only a scan of the swap map finds its free slots (before 6.12).
    FreeOnly,
}

/// A swap slot allocation policy.
///
/// Called on every slot allocation: keep `plan` O(1) and free of allocation (return one of
/// a few `'static` source lists). Implementors are `Clone` (a `#[derive(Clone)]` does): a
/// simulation copies its policies when it is forked.
pub trait SlotAllocator: std::fmt::Debug + Send + dyn_clone::DynClone {
    /// Name for reports and configuration.
    fn name(&self) -> &'static str;
    /// The cluster lists a device keeps; asked once per device at swapon. Default
    /// [`ClusterLists::PerOrder`].
    fn cluster_lists(&self) -> ClusterLists {
        ClusterLists::PerOrder
    }
    /// Where to look for the slots of `request`.
    fn plan(&self, request: &SlotRequest) -> SlotPlan;
}

dyn_clone::clone_trait_object!(SlotAllocator);

/// The 6.18 cluster allocator (`cluster_alloc_swap_entry` on a device without page
/// discard): the CPU's current cluster of the order, then a partly used cluster of the
/// order, then a free one; order 0 finally steals from partly used clusters of larger
/// orders. Hibernation slots take the same path as order-0 swap-out on CPU 0, which is
/// the fast path of Kairui Song's 2026 fix (before it, see the `hibernate-slow-path`
/// policy).
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterAllocator;

/// [`ClusterAllocator`]'s sources for order 0.
pub const CLUSTER_ORDER0: &[SlotSource] =
    &[SlotSource::Current, SlotSource::Nonfull, SlotSource::Free, SlotSource::Steal];
/// [`ClusterAllocator`]'s sources for a large folio.
pub const CLUSTER_LARGE: &[SlotSource] = &[SlotSource::Current, SlotSource::Nonfull, SlotSource::Free];

impl SlotAllocator for ClusterAllocator {
    fn name(&self) -> &'static str {
        "kernel"
    }
    fn plan(&self, request: &SlotRequest) -> SlotPlan {
        let sources = if request.order == 0 { CLUSTER_ORDER0 } else { CLUSTER_LARGE };
        SlotPlan::new(sources, AfterAlloc::KeepCurrent)
    }
}
