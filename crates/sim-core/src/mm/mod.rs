//! The memory model: the state every mechanism acts on, and the mechanisms themselves.
//!
//! [`Mm`] holds page tables, frames, swap devices with the swap cache, the block layer,
//! the counters and the event queue. The mechanics a folio goes through are in files named
//! after the kernel source they model: `vmscan.rs` (`shrink_folio_list` and its scan
//! control), `workingset.rs` (shadow entries and refault distance), `memory.rs` (mapping a
//! swapped-in folio at the end of `do_swap_page`), `swapfile.rs` (`folio_free_swap`,
//! swapoff's `unuse_pte`) and `page_io.rs` (I/O completion and the end of writeback).
//!
//! This module knows nothing of the LRU implementation or the engine: reclaim asks the LRU
//! through the [`vmscan::ReclaimHooks`] it is handed, and events are the leaf
//! [`crate::event::Event`]. Imports go one way: engine → lru → mm.
//!
//! Simplified: one memory cgroup, one NUMA node with one zone, anonymous memory only.

pub(crate) mod frames;
pub(crate) mod memory;
pub(crate) mod page_io;
pub(crate) mod pagetable;
pub(crate) mod swap;
pub(crate) mod swapfile;
pub(crate) mod vmscan;
pub(crate) mod workingset;
pub(crate) mod zsmalloc;
pub(crate) mod zswap;

use crate::block::{BlockLayer, Dispatched};
use crate::config::{CoreConfig, CpuCosts};
use crate::event::Event;
use crate::ids::Pfn;
use crate::queue::EventQueue;
use crate::stats::Vmstat;
use crate::time::{SimDuration, SimTime};
use frames::Frames;
use pagetable::PageTables;
use swap::Swap;

/// Watermarks in pages (`__setup_per_zone_wmarks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Watermarks {
    pub(crate) min: u64,
    pub(crate) low: u64,
    pub(crate) high: u64,
}

impl Watermarks {
    /// Derives the watermarks from RAM as the kernel does: `min_free_kbytes` =
    /// sqrt(16 × RAM in KiB) clamped to [128, 262144] KiB, then
    /// gap = max(min/4, RAM × watermark_scale_factor / 10000), low = min + gap,
    /// high = min + 2 × gap.
    pub(crate) fn derive(total_pages: u64, min_free_kbytes: Option<u64>, scale_factor: u32) -> Watermarks {
        let kib = total_pages * 4;
        let min_kb = min_free_kbytes.unwrap_or_else(|| (16 * kib).isqrt().clamp(128, 262_144));
        let min = (min_kb / 4).min(total_pages / 2);
        let gap = (min / 4).max(total_pages * u64::from(scale_factor) / 10_000);
        Watermarks { min, low: min + gap, high: min + 2 * gap }
    }
}

/// The mechanics of memory management, everything but the LRU lists.
#[derive(Clone, Debug)]
pub(crate) struct Mm {
    pub(crate) frames: Frames,
    pub(crate) pt: PageTables,
    pub(crate) swap: Swap,
    pub(crate) block: BlockLayer,
    pub(crate) vmstat: Vmstat,
    /// Per-order mTHP counters.
    pub(crate) mthp: crate::thp::MthpCounters,
    pub(crate) cfg: CoreConfig,
    /// Clock of the acting context; kernel work advances it.
    pub(crate) now: SimTime,
    /// `lruvec->nonresident_age`.
    pub(crate) nonresident_age: u64,
    pub(crate) memcg_limit: Option<u64>,
    pub(crate) memcg_usage: u64,
    pub(crate) nr_writeback: u64,
    pub(crate) wmark: Watermarks,
    /// Requests issued to devices whose completions must be scheduled.
    pub(crate) dispatched: Vec<Dispatched>,
    /// The event queue; Mm owns it so that reclaim can absorb I/O completions that fall
    /// due while it scans.
    pub(crate) queue: EventQueue<Event>,
    /// Events taken off the queue.
    pub(crate) events: u64,
    /// Folios whose writeback ended with `RECLAIM` set, for the LRU to rotate.
    pub(crate) rotations: Vec<Pfn>,
    /// Reads that completed for folios a task sleeps on, with the completion time.
    pub(crate) reads_done: Vec<(Pfn, SimTime)>,
    /// The latest write completion not yet announced to tasks waiting on writeback.
    pub(crate) write_done: Option<SimTime>,
    /// The latest completion of any kind not yet announced to kernel tasks waiting on I/O.
    pub(crate) io_done: Option<SimTime>,
    /// zswap: entries, LRU, pool and the shrinkers' protection policy.
    pub(crate) zswap: zswap::Zswap,
    /// Hibernation image pages submitted and not yet completed (`crate::block::IMAGE_PFN`).
    pub(crate) image_inflight: u64,
}

impl Mm {
    /// A machine with nothing mapped yet.
    pub(crate) fn new(parts: MmParts) -> Mm {
        let MmParts { cfg, pt, swap, block, total_pages, zswap_policy } = parts;
        let zswap = zswap::Zswap::new(&cfg.zswap, &cfg.memcg, total_pages, zswap_policy);
        let wmark =
            Watermarks::derive(total_pages, cfg.machine.min_free_kbytes, cfg.machine.watermark_scale_factor);
        let memcg_limit = cfg.memcg.limit.map(|l| l.pages());
        Mm {
            frames: Frames::new(total_pages),
            pt,
            swap,
            block,
            vmstat: Vmstat::default(),
            mthp: Default::default(),
            cfg,
            now: SimTime::ZERO,
            nonresident_age: 0,
            memcg_limit,
            memcg_usage: 0,
            nr_writeback: 0,
            wmark,
            dispatched: Vec::new(),
            queue: EventQueue::default(),
            events: 0,
            rotations: Vec::new(),
            reads_done: Vec::new(),
            write_done: None,
            io_done: None,
            zswap,
            image_inflight: 0,
        }
    }

    pub(crate) fn cost(&self) -> &CpuCosts {
        &self.cfg.cpu
    }

    /// Charges modelled kernel CPU time to the acting context.
    #[inline]
    pub(crate) fn spend(&mut self, ns: u64) {
        self.now += SimDuration(ns);
    }

    /// Anonymous pages can be reclaimed only while swap has free slots.
    pub(crate) fn can_reclaim_anon(&self) -> bool {
        self.swap.free_slots() > 0
    }

    /// Frees the folio whose head is `pfn` and uncharges its pages.
    pub(crate) fn free_frame(&mut self, pfn: Pfn) {
        let nr = u64::from(self.frames.nr_pages(pfn));
        if nr == 1 {
            self.frames.free(pfn);
        } else {
            self.frames.free_folio(pfn);
        }
        self.memcg_usage -= nr;
    }

    /// `folio_test_writeback` of the folio whose head is `head`: any of its pages still
    /// being written (a large folio's pages complete one by one).
    #[inline]
    pub(crate) fn folio_writeback(&self, head: Pfn) -> bool {
        let nr = self.frames.nr_pages(head);
        if nr == 1 {
            return self.frames.test(head, frames::flag::WRITEBACK);
        }
        (0..nr).any(|i| self.frames.test(Pfn(head.0 + i), frames::flag::WRITEBACK))
    }

    /// Splits the large folio at `head` into order-0 folios (`split_folio`): each page
    /// keeps its frame, owner, swap slot and its own writeback state, and takes the head's
    /// other flags. Counts `split` for the size. Returns the number of pages.
    pub(crate) fn split_folio(&mut self, head: Pfn) -> u32 {
        let order = self.frames.order(head);
        let nr = 1u32 << order;
        if order == 0 {
            return 1;
        }
        self.frames.split(head);
        self.mthp.at(order).split += 1;
        nr
    }

    pub(crate) fn memcg_over(&self) -> bool {
        self.memcg_limit.is_some_and(|l| self.memcg_usage >= l)
    }
}

/// What [`Mm::new`] builds a machine from.
#[derive(Debug)]
pub(crate) struct MmParts {
    pub(crate) cfg: CoreConfig,
    pub(crate) pt: PageTables,
    pub(crate) swap: Swap,
    pub(crate) block: BlockLayer,
    /// RAM in pages.
    pub(crate) total_pages: u64,
    /// zswap's shrinker protection policy.
    pub(crate) zswap_policy: Box<dyn crate::policy::zswap::ZswapProtection>,
}
