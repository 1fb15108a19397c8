//! The LRU boundary: which folios reclaim looks at, and where folios go afterwards.
//!
//! An `Lru` owns list membership and aging (classic active/inactive lists now; MGLRU's
//! generations can implement the same trait). It does not free anything itself: it hands
//! isolated folios to [`crate::engine::Mm::shrink_folio_list`], which performs the
//! mechanics of `shrink_folio_list` (reference checks, swap allocation, unmapping,
//! writeback, freeing) and reports each folio's fate; the LRU then puts survivors back.

pub(crate) mod classic;

use crate::engine::Mm;
use crate::ids::Pfn;

/// Who is reclaiming; decides which global counters move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reclaimer {
    Kswapd,
    /// Direct reclaim by an allocating task (`try_to_free_pages`).
    Direct,
    /// Memory-cgroup limit reclaim by the charging task (`try_to_free_mem_cgroup_pages`).
    Memcg,
}

/// The parts of the kernel's `struct scan_control` the model uses.
#[derive(Clone, Debug)]
pub(crate) struct ScanControl {
    pub(crate) reclaimer: Reclaimer,
    pub(crate) priority: u32,
    pub(crate) nr_to_reclaim: u64,
    pub(crate) nr_scanned: u64,
    pub(crate) nr_reclaimed: u64,
    pub(crate) swappiness: u32,
    /// Plug owner and CPU of the reclaiming context.
    pub(crate) owner: usize,
    pub(crate) cpu: usize,
    /// Run `folio_check_references` (false: evict whatever the LRU isolates).
    pub(crate) check_references: bool,
}

/// Where `folio_add_lru` should put a new folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    Inactive,
    Active,
}

/// What shrink_folio_list decided for one isolated folio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Freed; no longer on any list.
    Freed,
    /// Put back on the list its `ACTIVE` flag names, at the head.
    Putback,
}

/// List sizes in pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LruSizes {
    pub(crate) inactive_anon: u64,
    pub(crate) active_anon: u64,
}

/// An anonymous-memory LRU implementation.
pub(crate) trait Lru: std::fmt::Debug + Send {
    /// `folio_add_lru`: a new or swapped-in folio joins the lists.
    fn add(&mut self, mm: &mut Mm, pfn: Pfn, placement: Placement);
    /// The folio leaves the lists outside reclaim (freed by unmap, exit or swap-in path).
    fn remove(&mut self, mm: &mut Mm, pfn: Pfn);
    /// `folio_rotate_reclaimable`: writeback ended on a folio reclaim wants; move it to the
    /// tail of its list so that the next scan frees it.
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn);
    /// `shrink_lruvec`: scan at `sc.priority`, reclaiming toward `sc.nr_to_reclaim`.
    fn shrink(&mut self, mm: &mut Mm, sc: &mut ScanControl);
    /// Current list sizes.
    fn sizes(&self) -> LruSizes;
    /// Whether reclaim should run `folio_check_references` on isolated folios.
    fn checks_references(&self) -> bool {
        true
    }
    /// A resident page was accessed. Called only for LRUs built to track every access
    /// (the exact reference LRU); real kernels learn of accesses through PTE young bits.
    fn accessed(&mut self, _mm: &mut Mm, _pfn: Pfn) {}
    /// Recounts the lists from scratch and checks them against the frame flags.
    fn check_invariants(&self, mm: &Mm);
}
