//! Cluster readahead: windows of neighbouring swap slots on the faulting device.
//!
//! Two policies share the aligned-window placement of `swap_cluster_readahead`
//! (mm/swap_state.c): [`ClusterReadahead`] sizes the window adaptively from readahead hits,
//! as the kernel does; [`FixedReadahead`] always reads the full `2^page_cluster` window.
//! Neither looks at virtual addresses: that is [`super::VmaReadahead`]'s job.

use super::{cluster_window, max_pages, window_pages, WindowInput};
use swapsim_core::{FaultView, Feedback, Readahead, ReadaheadPlan};

/// The kernel's adaptive cluster readahead: `swap_cluster_readahead` sized by
/// `swapin_nr_pages` (mm/swap_state.c).
///
/// The state is global to the machine, not per device or per task, exactly as in the
/// kernel: one hit counter (`swapin_readahead_hits`, initially 4), the offset of the last
/// miss that saw no hits (`prev_offset`) and the last window (`last_readahead_pages`).
/// Each miss reads and resets the hit counter; each readahead hit reported through
/// [`Readahead::observe`] adds one. The kernel credits hits here only when VMA readahead
/// is not in use, which is always the case when this policy runs.
///
/// Simplified: the kernel keeps this state in atomics and statics shared by all CPUs with
/// benign races; the simulator is single-threaded, so plain fields give the same values.
/// Swapoff's synthetic faults are planned exactly like real ones, as the kernel's
/// `unuse_pte_range` calls the same `swapin_readahead`.
#[derive(Clone, Debug)]
pub struct ClusterReadahead {
    /// Readahead hits since the last miss (`swapin_readahead_hits`).
    hits: u32,
    /// Offset of the last miss that found no hits (`prev_offset`).
    prev_offset: u32,
    /// Window size chosen on the last miss, in pages (`last_readahead_pages`).
    last_pages: u32,
}

impl Default for ClusterReadahead {
    /// The kernel's boot-time state: four hits, so the first miss reads a full window.
    fn default() -> ClusterReadahead {
        ClusterReadahead { hits: 4, prev_offset: 0, last_pages: 0 }
    }
}

impl Readahead for ClusterReadahead {
    fn kind(&self) -> &'static str {
        "cluster"
    }

    /// Models `swapin_nr_pages` followed by the window placement of
    /// `swap_cluster_readahead`. With `page_cluster == 0` it returns before touching the
    /// state, as the kernel does.
    fn plan(&mut self, fault: &FaultView) -> ReadaheadPlan {
        let max_pages = max_pages(fault.page_cluster);
        if max_pages <= 1 {
            return ReadaheadPlan::TargetOnly;
        }
        let hits = std::mem::take(&mut self.hits);
        let pages = window_pages(WindowInput {
            prev_pos: u64::from(self.prev_offset),
            pos: u64::from(fault.offset),
            hits,
            max_pages,
            prev_win: self.last_pages,
        });
        if hits == 0 {
            self.prev_offset = fault.offset;
        }
        self.last_pages = pages;
        cluster_window(fault.offset, pages, fault.device_slots)
    }

    /// Models the global branch of `swap_update_readahead`: a hit on a page that still
    /// carried `PG_readahead` adds one to the hit counter.
    fn observe(&mut self, feedback: &Feedback) {
        let Feedback::SwapCacheHit { readahead, .. } = *feedback else { return };
        if readahead {
            self.hits = self.hits.saturating_add(1);
        }
    }
}

/// Always the full `2^page_cluster` aligned cluster window, with no hit accounting.
///
/// This is the policy proposed in 2020 by Andrea Righi ("mm: swap: introduce fixed-size
/// readahead policy") for workloads such as resume from hibernation, where nearly every
/// slot is wanted and the adaptive window only slows swap-in down. Placement and clamping
/// are those of `swap_cluster_readahead`; `page_cluster == 0` still disables readahead.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixedReadahead;

impl Readahead for FixedReadahead {
    fn kind(&self) -> &'static str {
        "fixed"
    }

    fn plan(&mut self, fault: &FaultView) -> ReadaheadPlan {
        cluster_window(fault.offset, max_pages(fault.page_cluster), fault.device_slots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readahead::test_support::{fault_at, run_script};
    use expect_test::{expect, Expect};

    /// Runs a script where `miss N` faults on slot `N` (its virtual page is irrelevant to
    /// cluster readahead) and snapshots the decisions and the state after each step.
    fn check(mut policy: ClusterReadahead, script: &str, expect: Expect) {
        let out = run_script(
            &mut policy,
            script,
            |pos| fault_at(u32::try_from(pos).unwrap(), pos),
            |p| format!("hits={} prev={} last={}", p.hits, p.prev_offset, p.last_pages),
        );
        expect.assert_eq(&out);
    }

    fn check_fixed(script: &str, expect: Expect) {
        let out = run_script(
            &mut FixedReadahead,
            script,
            |pos| fault_at(u32::try_from(pos).unwrap(), pos),
            |_| String::new(),
        );
        expect.assert_eq(&out);
    }

    #[test]
    fn sequential_misses_then_hits_then_far_jump() {
        // Boot state: hits=4, so the first miss gets 8 pages, aligned on slot 8.
        // Misses with no hits decay the window by halving: 8, 4, 2 (2 because slot 42 is
        // adjacent to prev_offset 41), then 1. Three readahead hits give 3 + 2 = 5 pages,
        // rounded up to 8. A plain hit (no PG_readahead) is not credited.
        //
        //   slots  8 .. 15 | 40 41 42 43 | 44 45 46 47 | 48 .. 55
        //          [ miss 13 window ]
        check(
            ClusterReadahead::default(),
            "miss 13; miss 40; miss 41; miss 42; miss 300;
             hit 301 ra; hit 302 ra; hit 303; hit 304 ra; miss 305; miss 600",
            expect![[r#"
                miss 13    slots 8..=15 (8)       hits=0 prev=0 last=8
                miss 40    slots 40..=43 (4)      hits=0 prev=40 last=4
                miss 41    slots 40..=41 (2)      hits=0 prev=41 last=2
                miss 42    slots 42..=43 (2)      hits=0 prev=42 last=2
                miss 300   target only            hits=0 prev=300 last=1
                hit 301 ra                        hits=1 prev=300 last=1
                hit 302 ra                        hits=2 prev=300 last=1
                hit 303                           hits=2 prev=300 last=1
                hit 304 ra                        hits=3 prev=300 last=1
                miss 305   slots 304..=311 (8)    hits=0 prev=300 last=8
                miss 600   slots 600..=603 (4)    hits=0 prev=600 last=4
            "#]],
        );
    }

    #[test]
    fn fixed_always_reads_the_full_aligned_cluster() {
        // No state: every miss reads the 8-slot cluster, whatever the hits. Slot 0 is the
        // header, so the first cluster starts at 1; the last one stops at the device end.
        check_fixed(
            "miss 1; miss 13; hit 14 ra; miss 13; miss 1020",
            expect![[r#"
                miss 1     slots 1..=7 (7)
                miss 13    slots 8..=15 (8)
                hit 14 ra
                miss 13    slots 8..=15 (8)
                miss 1020  slots 1016..=1023 (8)
            "#]],
        );
    }

    #[test]
    fn window_never_includes_the_header_or_passes_the_device_end() {
        let mut policy = ClusterReadahead::default();
        assert_eq!(policy.plan(&fault_at(3, 0)), ReadaheadPlan::Slots { first: 1, last: 7 });
        let mut policy = ClusterReadahead::default();
        let short_device = {
            let mut f = fault_at(997, 0);
            f.device_slots = 1000;
            f
        };
        assert_eq!(policy.plan(&short_device), ReadaheadPlan::Slots { first: 992, last: 999 });
        // A device with a single usable slot leaves nothing to read ahead.
        let tiny = {
            let mut f = fault_at(1, 0);
            f.device_slots = 2;
            f
        };
        assert_eq!(ClusterReadahead::default().plan(&tiny), ReadaheadPlan::TargetOnly);
        assert_eq!(FixedReadahead.plan(&tiny), ReadaheadPlan::TargetOnly);
    }

    #[test]
    fn page_cluster_zero_disables_and_leaves_state_alone() {
        let mut policy = ClusterReadahead::default();
        let fault = {
            let mut f = fault_at(13, 0);
            f.page_cluster = 0;
            f
        };
        assert_eq!(policy.plan(&fault), ReadaheadPlan::TargetOnly);
        assert_eq!(FixedReadahead.plan(&fault), ReadaheadPlan::TargetOnly);
        // The kernel returns before the read-and-reset, so the boot hits survive.
        assert_eq!(policy.hits, 4);
        assert_eq!(policy.plan(&fault_at(13, 0)), ReadaheadPlan::Slots { first: 8, last: 15 });
    }

    #[test]
    fn page_cluster_caps_the_window() {
        let mut policy = ClusterReadahead { hits: 40, ..ClusterReadahead::default() };
        let fault = {
            let mut f = fault_at(100, 0);
            f.page_cluster = 4;
            f
        };
        // 42 wanted pages round up to 64, capped at 16.
        assert_eq!(policy.plan(&fault), ReadaheadPlan::Slots { first: 96, last: 111 });
    }
}
