//! The LRU boundary: which folios reclaim looks at, and where folios go afterwards.
//!
//! An `Lru` owns list membership and aging: the classic active/inactive lists
//! (`classic.rs`), MGLRU's generations (`mglru/`) and Belady's optimal policy
//! (`opt.rs`, a reference model that evicts by next use) implement it. It does not free
//! anything itself: it hands isolated folios to [`Mm::shrink_folio_list`], which performs
//! the mechanics (trylock, writeback, swap allocation, unmapping, pageout, freeing) and
//! reports each folio's [`Fate`]; the LRU then puts survivors back. The three decisions
//! that differ between LRU policies sit behind this boundary: the reference check and the
//! shadow encoding (through [`ReclaimHooks`], which an `Lru` hands to
//! `shrink_folio_list`), and the refault decision ([`Lru::refault`]).
//!
//! Imports go one way: the engine names only this trait and [`build`]; this module imports
//! the memory model and never the engine.

pub(crate) mod classic;
mod list;
pub(crate) mod mglru;
pub(crate) mod opt;
mod seq;

use crate::config::LruModel;
use crate::ids::{CpuId, Pfn};
use crate::mm::pagetable::PageId;
use crate::mm::swap::Shadow;
use crate::mm::Mm;

pub(crate) use crate::mm::vmscan::{Fate, ScanControl};

/// Where `folio_add_lru` should put a folio: with the folios reclaim looks at first
/// (classic: the inactive list; MGLRU: an older generation) or with those it protects
/// (the active list; the youngest generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    Inactive,
    Active,
}

/// Who adds a folio to the lists or reports its refault: a page fault, which MGLRU
/// treats apart (`lru_gen_in_fault`: the folio goes to the youngest generation), or any
/// other path (swapoff, zswap's writeback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Fault,
    Other,
}

/// List sizes in pages, as /proc/vmstat reports them (`nr_inactive_anon`,
/// `nr_active_anon`). An LRU whose structure is not two lists folds itself into this view
/// as the kernel does (MGLRU counts its two youngest generations as active). Used for the
/// report only: no decision of the engine reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LruSizes {
    pub(crate) inactive_anon: u64,
    pub(crate) active_anon: u64,
}

/// An anonymous-memory LRU implementation. Cloned with the simulation it is part of
/// ([`crate::Simulation::fork`]).
pub(crate) trait Lru: std::fmt::Debug + Send + dyn_clone::DynClone {
    /// `folio_add_lru`: a new or swapped-in folio joins the lists. A folio a page fault
    /// adds ([`Origin::Fault`], `lru_gen_in_fault`) MGLRU places young whatever
    /// `placement` says; the classic lists go by `placement` alone.
    fn add(&mut self, mm: &mut Mm, pfn: Pfn, placement: Placement, origin: Origin);
    /// The folio leaves the lists outside reclaim (freed by unmap, exit or swap-in path).
    fn remove(&mut self, mm: &mut Mm, pfn: Pfn);
    /// The large folio at `head`, on a list, was split into `nr` order-0 folios: link
    /// the tail pages next to it (`lru_add_split_folio`).
    fn split(&mut self, mm: &mut Mm, head: Pfn, nr: u32);
    /// `folio_rotate_reclaimable`: writeback ended on a folio reclaim wants; move it to
    /// where the next scan frees it first.
    fn rotate_reclaimable(&mut self, mm: &mut Mm, pfn: Pfn);
    /// Before a batch is isolated: processes the I/O completions that fell due while the
    /// reclaimer's clock ran ahead on `cpu` (`Mm::poll_io`) and rotates the folios whose
    /// writeback ended to where this batch can free them.
    fn rotate_completed(&mut self, mm: &mut Mm, cpu: CpuId) {
        mm.poll_io(cpu);
        let rotations = mm.take_rotations();
        for &pfn in &rotations {
            self.rotate_reclaimable(mm, pfn);
        }
        mm.recycle_rotations(rotations);
    }
    /// `shrink_lruvec`: scan at `sc.priority`, reclaiming toward `sc.nr_to_reclaim`.
    fn shrink(&mut self, mm: &mut Mm, sc: &mut ScanControl);
    /// One reclaim invocation (every priority it went through) has ended
    /// (`snapshot_refaults` at the end of `do_try_to_free_pages` and `balance_pgdat`).
    fn reclaim_done(&mut self, _mm: &mut Mm) {}
    /// A swap-in found `shadow` in the slot it read into `pfn` (`workingset_refault`,
    /// `lru_gen_refault`), on behalf of `origin`: count the refault and say where the
    /// folio goes. `Placement::Active` also means the refault was recent (the evicted
    /// folio was still part of the working set), which policies hear.
    fn refault(&mut self, mm: &mut Mm, pfn: Pfn, shadow: Shadow, origin: Origin) -> Placement;
    /// Current list sizes.
    fn sizes(&self) -> LruSizes;
    /// Pages a memory cgroup charge asks reclaim for when the group is at its limit:
    /// `SWAP_CLUSTER_MAX` in the kernel; one for a reference model that evicts exactly one
    /// page per miss, as a textbook LRU cache does.
    fn charge_batch(&self) -> u64 {
        crate::mm::vmscan::SWAP_CLUSTER_MAX
    }
    /// Whether page tables are charged to the memory cgroup beside the folios, as the
    /// kernel charges them; a reference model is a cache of the limit's size, where only
    /// the pages it caches take room.
    fn charges_page_tables(&self) -> bool {
        true
    }
    /// Whether the engine must call [`Lru::accessed`] on every resident access. Real
    /// kernels learn of accesses through PTE young bits, so only reference models say yes.
    fn tracks_accesses(&self) -> bool {
        false
    }
    /// A resident page was accessed (only when [`Lru::tracks_accesses`]).
    fn accessed(&mut self, _mm: &mut Mm, _pfn: Pfn) {}
    /// Whether the engine must call [`Lru::next_use`] on every access by a task. Only a
    /// policy that sees the future (OPT) says yes; it must say yes to
    /// [`Lru::tracks_accesses`] too, under which the engine asks.
    fn wants_next_uses(&self) -> bool {
        false
    }
    /// A task accesses `page` (resident or about to fault), and accesses it next at
    /// `next_use` (`None`: never), as its access stream says. Called before the access
    /// is handled, and again if the access is retried after a wait.
    fn next_use(&mut self, _mm: &mut Mm, _page: PageId, _next_use: Option<u64>) {}
    /// Host speed only, called once per access a task reads (for a run of resident hits,
    /// after the run, see [`Lru::warm_steps_left`]): look one folio further at
    /// the tails of the lists, where the next isolations will take folios, and start
    /// loading its state into the host's cache, so that reclaim finds it there instead of
    /// waiting on one miss after another. Changes nothing the simulation computes.
    fn warm_tails(&mut self, _mm: &Mm) {}
    /// How many more calls of [`Lru::warm_tails`] would do anything before the next
    /// isolation; 0 when it has nothing to do.
    fn warm_steps_left(&self) -> usize {
        0
    }
    /// kswapd's `lru_gen_age_node` at `priority`: false when every generation is
    /// younger than MGLRU's `min_ttl_ms`, so that kswapd calls the OOM killer instead of
    /// evicting the working set. The classic lists have no such test.
    fn age_node(&mut self, _mm: &Mm, _priority: u32) -> bool {
        true
    }
    /// The generation histogram `/sys/kernel/debug/lru_gen_full` prints, for an LRU that
    /// has generations.
    fn lru_gen_report(&self, _mm: &Mm) -> Option<crate::report::LruGenReport> {
        None
    }
    /// Recounts the lists from scratch and checks them against the frame flags.
    fn check_invariants(&self, mm: &Mm);
    /// The OPT policy behind this trait object, for tests that inspect its state.
    #[cfg(test)]
    fn as_opt(&self) -> Option<&opt::OptLru> {
        None
    }
}

dyn_clone::clone_trait_object!(Lru);

/// The LRU a scenario's `lru` setting names, for a run of root `seed`.
pub(crate) fn build(model: LruModel, lru_gen: &crate::config::LruGenConfig, seed: u64) -> Box<dyn Lru> {
    match model {
        LruModel::Classic => Box::new(classic::ClassicLru::new(seed)),
        LruModel::Exact => Box::new(classic::ClassicLru::exact()),
        LruModel::Mglru => Box::new(mglru::MgLru::new(lru_gen)),
        LruModel::Opt => Box::new(opt::OptLru::default()),
    }
}
