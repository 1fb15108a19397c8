//! VMA-based readahead: a window placed in the faulting task's virtual address space.
//!
//! Models `swap_vma_readahead` and `swap_vma_ra_win` (mm/swap_state.c, 6.18 level) with
//! the per-VMA hit accounting of `swap_update_readahead`. The window is chosen in virtual
//! pages, so the slots it reads need not be contiguous or on the faulting device; the
//! engine resolves pages to slots. It does not look at slot offsets at all.

use super::{max_pages, window_pages, WindowInput};
use swapsim_core::{FaultView, Feedback, Readahead, ReadaheadPlan, RegionId};

/// The kernel caps the VMA window at `2^SWAP_RA_ORDER_CEILING` pages (32 on 64-bit), so
/// it fits the six bits the packed state gives it.
const SWAP_RA_ORDER_CEILING: u32 = 5;

/// The per-VMA hit counter saturates here (`SWAP_RA_HITS_MAX`, six bits).
const SWAP_RA_HITS_MAX: u32 = 63;

/// Pages in the range one PMD (one last-level page table) maps: 2 MiB of 4 KiB pages. The
/// window never crosses it, because the kernel walks a single page table.
const PMD_PAGES: u64 = 512;

/// The readahead state of one VMA (`vma->swap_readahead_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct VmaState {
    /// The last faulting or hit virtual page.
    prev_vpage: u64,
    /// The window chosen on the last miss, in pages.
    win: u32,
    /// Readahead hits since the last miss, at most [`SWAP_RA_HITS_MAX`].
    hits: u32,
}

impl Default for VmaState {
    /// The kernel reads an all-zero word as "address 0, window 0, four hits"
    /// (`GET_SWAP_RA_VAL`), so a fresh VMA's first miss gets a full window.
    fn default() -> VmaState {
        VmaState { prev_vpage: 0, win: 0, hits: 4 }
    }
}

/// The kernel's VMA-based swap readahead (`swap_vma_readahead`, `swap_vma_ra_win` in
/// mm/swap_state.c).
///
/// Each VMA keeps its own state: the last fault address, the last window and a hit
/// counter. On a miss the window size comes from the same formula as cluster readahead,
/// with at most `2^min(page_cluster, 5)` pages; it is placed forward after a sequential
/// forward fault, backward after a backward one, and roughly centred otherwise, then
/// clamped to the VMA and to the 2 MiB page-table range holding the fault. Every hit in a
/// VMA moves its address to the hit page; a readahead hit also adds one to its counter.
///
/// Simplified: the kernel packs the state into one atomic word per VMA and updates it
/// without locks; here it is a plain struct in a dense vector indexed by [`RegionId`],
/// grown on demand (the engine numbers regions densely). With `page_cluster == 0` the
/// kernel returns before touching the state, and so does this policy.
#[derive(Clone, Debug, Default)]
pub struct VmaReadahead {
    /// State per region, indexed by `RegionId`; regions never seen hold the default.
    regions: Vec<VmaState>,
}

impl VmaReadahead {
    /// The state of `region`, created in the initial "four hits" state on first use.
    fn state_mut(&mut self, region: RegionId) -> &mut VmaState {
        let idx = usize::try_from(region.0).expect("a u32 region id fits in usize");
        if idx >= self.regions.len() {
            self.regions.resize(idx + 1, VmaState::default());
        }
        &mut self.regions[idx]
    }
}

impl Readahead for VmaReadahead {
    fn kind(&self) -> &'static str {
        "vma"
    }

    /// Models `swap_vma_ra_win`: size, then placement, then clamping.
    fn plan(&mut self, fault: &FaultView) -> ReadaheadPlan {
        let fault_vpage = fault.vpage.0;
        assert!(
            fault.region_start.0 <= fault_vpage && fault_vpage < fault.region_end.0,
            "fault at page {fault_vpage} outside its region {}..{}",
            fault.region_start.0,
            fault.region_end.0
        );
        let max_win = max_pages(fault.page_cluster.min(SWAP_RA_ORDER_CEILING));
        if max_win == 1 {
            return ReadaheadPlan::TargetOnly;
        }
        let state = self.state_mut(fault.region);
        let prev = *state;
        let win = window_pages(WindowInput {
            prev_pos: prev.prev_vpage,
            pos: fault_vpage,
            hits: prev.hits,
            max_pages: max_win,
            prev_win: prev.win,
        });
        *state = VmaState { prev_vpage: fault_vpage, win, hits: 0 };
        if win == 1 {
            return ReadaheadPlan::TargetOnly;
        }

        // How many pages of the window lie before the fault.
        let win = u64::from(win);
        let before = if prev.prev_vpage.checked_add(1) == Some(fault_vpage) {
            0
        } else if fault_vpage.checked_add(1) == Some(prev.prev_vpage) {
            win - 1
        } else {
            (win - 1) / 2
        };
        // Exclusive bounds, as the kernel computes them; the left edge stops at page 0.
        let left = fault_vpage.saturating_sub(before);
        let right = fault_vpage.saturating_add(win - before);
        let pmd_start = fault_vpage & !(PMD_PAGES - 1);
        let pmd_end = pmd_start.saturating_add(PMD_PAGES);
        let first = left.max(fault.region_start.0).max(pmd_start);
        let end = right.min(fault.region_end.0).min(pmd_end);
        if end - first <= 1 {
            return ReadaheadPlan::TargetOnly;
        }
        ReadaheadPlan::Pages { first: swapsim_core::VirtPage(first), last: swapsim_core::VirtPage(end - 1) }
    }

    /// Models the per-VMA branch of `swap_update_readahead`: every hit records its page
    /// as the VMA's last address and keeps the window; a readahead hit also counts.
    fn observe(&mut self, feedback: &Feedback) {
        let Feedback::SwapCacheHit { region, vpage, readahead } = *feedback else { return };
        let state = self.state_mut(region);
        state.prev_vpage = vpage.0;
        if readahead {
            state.hits = (state.hits + 1).min(SWAP_RA_HITS_MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readahead::test_support::{fault_at, run_script};
    use expect_test::{expect, Expect};
    use swapsim_core::VirtPage;

    /// Runs a script where `miss N` faults on virtual page `N` of region 0 (`[0, 4096)`)
    /// and snapshots the decisions and region 0's state after each step.
    fn check(script: &str, expect: Expect) {
        let out = run_script(
            &mut VmaReadahead::default(),
            script,
            |pos| fault_at(7, pos),
            |p| {
                let s = p.regions.first().copied().unwrap_or_default();
                format!("prev={} win={} hits={}", s.prev_vpage, s.win, s.hits)
            },
        );
        expect.assert_eq(&out);
    }

    fn plan_in(fault: FaultView, prev: VmaState) -> ReadaheadPlan {
        let mut policy = VmaReadahead::default();
        *policy.state_mut(fault.region) = prev;
        policy.plan(&fault)
    }

    #[test]
    fn forward_run_hits_then_far_jump() {
        // Fresh VMA: hits=4 gives 8 pages. Page 100 is not next to the initial address 0,
        // so the window is centred: 100 - (8-1)/2 = 97.
        //
        //   97 98 99 [100] 101 102 103 104        centred
        //
        // Hits move the address along; page 105 then follows 104, so the next window runs
        // forward from it. A far miss with no hits keeps half the previous window.
        check(
            "miss 100; hit 101 ra; hit 102 ra; hit 103; hit 104 ra; miss 105; miss 900; miss 899",
            expect![[r#"
                miss 100   pages 97..=104 (8)     prev=100 win=8 hits=0
                hit 101 ra                        prev=101 win=8 hits=1
                hit 102 ra                        prev=102 win=8 hits=2
                hit 103                           prev=103 win=8 hits=2
                hit 104 ra                        prev=104 win=8 hits=3
                miss 105   pages 105..=112 (8)    prev=105 win=8 hits=0
                miss 900   pages 899..=902 (4)    prev=900 win=4 hits=0
                miss 899   pages 898..=899 (2)    prev=899 win=2 hits=0
            "#]],
        );
    }

    #[test]
    fn backward_fault_reads_the_pages_below() {
        let prev = VmaState { prev_vpage: 201, win: 8, hits: 3 };
        assert_eq!(
            plan_in(fault_at(7, 200), prev),
            ReadaheadPlan::Pages { first: VirtPage(193), last: VirtPage(200) }
        );
    }

    #[test]
    fn window_is_clamped_to_the_region_and_the_pmd() {
        let fresh = VmaState::default();
        // Centred around 513 would start at 510, but the PMD range begins at 512.
        assert_eq!(
            plan_in(fault_at(7, 513), fresh),
            ReadaheadPlan::Pages { first: VirtPage(512), last: VirtPage(517) }
        );
        // Forward from 1020 would reach 1027; the PMD range ends at 1023.
        let forward = VmaState { prev_vpage: 1019, ..fresh };
        assert_eq!(
            plan_in(fault_at(7, 1020), forward),
            ReadaheadPlan::Pages { first: VirtPage(1020), last: VirtPage(1023) }
        );
        // A region [2000, 2003) cuts the centred window on both sides.
        let small = {
            let mut f = fault_at(7, 2001);
            f.region_start = VirtPage(2000);
            f.region_end = VirtPage(2003);
            f
        };
        assert_eq!(
            plan_in(small, fresh),
            ReadaheadPlan::Pages { first: VirtPage(2000), last: VirtPage(2002) }
        );
        // Near page 0 the left edge stops at 0, and the right edge does not move.
        assert_eq!(
            plan_in(fault_at(7, 1), VmaState { prev_vpage: 2, ..fresh }),
            ReadaheadPlan::Pages { first: VirtPage(0), last: VirtPage(1) }
        );
        // A one-page region leaves nothing to read ahead.
        let single = {
            let mut f = fault_at(7, 50);
            f.region_start = VirtPage(50);
            f.region_end = VirtPage(51);
            f
        };
        assert_eq!(plan_in(single, fresh), ReadaheadPlan::TargetOnly);
    }

    #[test]
    fn window_is_capped_at_the_order_ceiling() {
        let many_hits = VmaState { prev_vpage: 0, win: 0, hits: 63 };
        for (page_cluster, pages) in [(3, 8), (5, 32), (9, 32)] {
            let fault = {
                let mut f = fault_at(7, 1000);
                f.page_cluster = page_cluster;
                f
            };
            let plan = plan_in(fault, many_hits);
            let ReadaheadPlan::Pages { first, last } = plan else {
                panic!("expected a page window, got {plan:?}");
            };
            assert_eq!(last.0 - first.0 + 1, pages, "page_cluster {page_cluster}");
        }
    }

    #[test]
    fn page_cluster_zero_disables_and_leaves_state_alone() {
        let mut policy = VmaReadahead::default();
        let fault = {
            let mut f = fault_at(7, 300);
            f.page_cluster = 0;
            f
        };
        assert_eq!(policy.plan(&fault), ReadaheadPlan::TargetOnly);
        assert!(policy.regions.is_empty());
    }

    #[test]
    fn hits_saturate_and_regions_are_independent() {
        let mut policy = VmaReadahead::default();
        for _ in 0..100 {
            policy.observe(&Feedback::SwapCacheHit {
                region: RegionId(2),
                vpage: VirtPage(40),
                readahead: true,
            });
        }
        assert_eq!(policy.regions.len(), 3);
        assert_eq!(policy.regions[2], VmaState { prev_vpage: 40, win: 0, hits: SWAP_RA_HITS_MAX });
        assert_eq!(policy.regions[0], VmaState::default());
        assert_eq!(policy.regions[1], VmaState::default());
    }
}
