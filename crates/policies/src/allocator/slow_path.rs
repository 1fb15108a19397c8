//! Hibernation's image slots through the allocator's slow path (6.15 to 6.19).

use swapsim_core::{
    AfterAlloc, ClusterAllocator, SlotAllocator, SlotPlan, SlotPurpose, SlotRequest, SlotSource,
};

/// The 6.18 allocator for swap-out, with hibernation as it was between the removal of the
/// swap slot cache (6.15) and Kairui Song's 2026 fix.
///
/// `swap_alloc_hibernation_slot` called `cluster_alloc_swap_entry` directly. On a
/// non-rotational device that function no longer looked at the CPU's current cluster (the
/// fast path, `swap_alloc_fast`, had taken that over), so every image slot isolated a
/// cluster from the lists: a partly used one of order 0, else a free one, else the head
/// of the fragmented ones, took one slot from it and put it back at the tail of the
/// fragmented clusters (`relocate_cluster`). Consecutive image slots therefore land in
/// different clusters, 512 slots apart on an empty device, and the image's one-page
/// writes cannot merge: the device takes the whole image as 4 KiB writes.
///
/// Simplified: the CPU cost of isolating a cluster per slot is not charged; rotational
/// devices kept their one current cluster in the kernel and are given the fast path here.
#[derive(Clone, Copy, Debug, Default)]
pub struct SlowPathHibernation;

const SLOW: &[SlotSource] = &[SlotSource::Nonfull, SlotSource::Free, SlotSource::Frag, SlotSource::Steal];
const ORDER0: &[SlotSource] =
    &[SlotSource::Current, SlotSource::Nonfull, SlotSource::Free, SlotSource::Frag, SlotSource::Steal];

impl SlotAllocator for SlowPathHibernation {
    fn name(&self) -> &'static str {
        "hibernate-slow-path"
    }
    fn plan(&self, request: &SlotRequest) -> SlotPlan {
        match (request.purpose, request.order, request.rotational) {
            (SlotPurpose::Hibernation, _, false) => SlotPlan::new(SLOW, AfterAlloc::Relocate),
            // Swap-out also reaches the clusters hibernation left fragmented.
            (_, 0, _) => SlotPlan::new(ORDER0, AfterAlloc::KeepCurrent),
            _ => ClusterAllocator.plan(request),
        }
    }
}
