//! The slot allocator before 6.12 (6.10 and 6.11, `scan_swap_map_slots` with
//! `scan_swap_map_try_ssd_cluster`): one list of free clusters and a scan of the swap map.

use swapsim_core::{AfterAlloc, ClusterLists, SlotAllocator, SlotPlan, SlotRequest, SlotSource};

/// The allocator Chris Li's 2024 series replaced.
///
/// Each CPU keeps a current cluster per folio order (`percpu_cluster->next[order]`, since
/// 6.10 when mTHP swap-out came in). When it has no room, the CPU takes a cluster off the
/// one list of free clusters. A large folio finds room nowhere else: a cluster with free
/// slots that is not entirely free is on no list, so once the free clusters are used up,
/// every large folio whose CPU's cluster is full is split (`swpout_fallback`). An order-0
/// page then scans the swap map from the CPU's scan position for any free slot
/// (`scan_swap_map_slots`), which fills the holes large folios left and keeps clusters
/// from ever becoming free again.
///
/// Simplified: the scan position moves only with scans (the kernel also moved it with
/// cluster allocations, and on SSDs jumped to a random 64 MiB trunk when a scan crossed
/// one); rotational devices follow the same path with one hint for the device, where 6.10
/// scanned only and refused large folios on them.
#[derive(Clone, Copy, Debug, Default)]
pub struct FreeListScanAllocator;

const ORDER0: &[SlotSource] = &[SlotSource::Current, SlotSource::Free, SlotSource::Scan];
const LARGE: &[SlotSource] = &[SlotSource::Current, SlotSource::Free];

impl SlotAllocator for FreeListScanAllocator {
    fn name(&self) -> &'static str {
        "free-list-scan"
    }
    fn cluster_lists(&self) -> ClusterLists {
        ClusterLists::FreeOnly
    }
    fn plan(&self, request: &SlotRequest) -> SlotPlan {
        // Hibernation's `get_swap_page_of_type` was `scan_swap_map_slots` for one page.
        let sources = if request.order == 0 { ORDER0 } else { LARGE };
        SlotPlan::new(sources, AfterAlloc::KeepCurrent)
    }
}
