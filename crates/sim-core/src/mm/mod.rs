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

use crate::block::{Bio, BlockLayer, Dispatched, PlugOwner};
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
///
/// The structures that guard their own invariants (frames, page tables, swap, the block
/// layer, zswap) and the add-only counters (`vmstat`, `mthp`) are open to the crate. The
/// accounting between them (memory cgroup usage, pages under writeback, image I/O in
/// flight), the clock of the acting context and the news of completed I/O are private to
/// the memory model and change only through the methods below, which check them: an
/// accounting error panics where it happens instead of wrapping silently.
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
    /// zswap: entries, LRU, pool and the shrinkers' protection policy.
    pub(crate) zswap: zswap::Zswap,
    /// Watermarks of the one zone.
    pub(crate) wmark: Watermarks,
    /// The event queue; Mm owns it so that reclaim can absorb I/O completions that fall
    /// due while it scans.
    pub(crate) queue: EventQueue<Event>,
    /// `lruvec->nonresident_age`.
    pub(crate) nonresident_age: u64,
    /// Clock of the acting context; kernel work advances it.
    now: SimTime,
    memcg_limit: Option<u64>,
    memcg_usage: u64,
    nr_writeback: u64,
    /// Hibernation image pages submitted and not yet completed (`crate::block::IMAGE_PFN`).
    image_inflight: u64,
    /// Requests issued to devices whose completions must be scheduled.
    dispatched: Vec<Dispatched>,
    /// Events taken off the queue.
    events: u64,
    /// What completions left for the engine to deliver.
    news: IoNews,
}

/// What I/O completions left for the engine to deliver to the LRU and to sleeping tasks.
#[derive(Clone, Debug, Default)]
pub(crate) struct IoNews {
    /// Folios whose writeback ended with `RECLAIM` set, for the LRU to rotate.
    pub(crate) rotations: Vec<Pfn>,
    /// Reads that completed for folios a task sleeps on, with the completion time.
    pub(crate) reads_done: Vec<(Pfn, SimTime)>,
    /// The latest write completion not yet announced to tasks waiting on writeback.
    pub(crate) write_done: Option<SimTime>,
    /// The latest completion of any kind not yet announced to kernel tasks waiting on I/O.
    pub(crate) io_done: Option<SimTime>,
}

impl IoNews {
    /// Whether there is anything to deliver.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.rotations.is_empty()
            && self.reads_done.is_empty()
            && self.write_done.is_none()
            && self.io_done.is_none()
    }
}

impl Mm {
    /// A machine with nothing mapped yet.
    pub(crate) fn new(parts: MmParts) -> Mm {
        let MmParts { cfg, pt, swap, block, total_pages, zswap_policy, zswap_trigger } = parts;
        let zswap = zswap::Zswap::new(&cfg.zswap, &cfg.memcg, total_pages, zswap_policy, zswap_trigger);
        let wmark =
            Watermarks::derive(total_pages, cfg.machine.min_free_kbytes, cfg.machine.watermark_scale_factor);
        // The hot page cache takes its frames and its share of the limit for the whole run;
        // what is left is what folios and zswap's charged pool may use.
        let page_cache = cfg.memcg.page_cache.pages();
        let memcg_limit = cfg.memcg.limit.map(|l| l.pages().saturating_sub(page_cache));
        Mm {
            frames: Frames::new(total_pages - page_cache),
            pt,
            swap,
            block,
            vmstat: Vmstat::default(),
            mthp: Default::default(),
            cfg,
            zswap,
            wmark,
            queue: EventQueue::default(),
            nonresident_age: 0,
            now: SimTime::ZERO,
            memcg_limit,
            memcg_usage: 0,
            nr_writeback: 0,
            image_inflight: 0,
            dispatched: Vec::new(),
            events: 0,
            news: IoNews::default(),
        }
    }

    pub(crate) fn cost(&self) -> &CpuCosts {
        &self.cfg.cpu
    }

    /// The acting context's clock: the task, kswapd or worker whose work is being
    /// simulated. Kernel work it does advances it ([`Mm::spend`], synchronous I/O).
    #[inline(always)]
    pub(crate) fn now(&self) -> SimTime {
        self.now
    }

    /// A context starts acting at `at`: a task is picked up, kswapd or zswap's worker
    /// starts a batch, a sleeper's swap fault is finished at its wake-up time. The engine
    /// calls this where control passes from one context to another; it saves and
    /// restores nothing, so a caller that acts for another context in between restores
    /// its own time itself (`World::acting_at`).
    #[inline(always)]
    pub(crate) fn act_at(&mut self, at: SimTime) {
        self.now = at;
    }

    /// Charges modelled kernel CPU time to the acting context.
    #[inline]
    pub(crate) fn spend(&mut self, ns: u64) {
        self.now += SimDuration(ns);
    }

    /// `vm.page-cluster` written while the run goes on.
    pub(crate) fn set_page_cluster(&mut self, page_cluster: u32) {
        self.cfg.swap.page_cluster = page_cluster;
    }

    /// Takes the swap-in knobs of `swap` (`vm.page-cluster`, `vma_ra_enabled`, swapoff's
    /// readahead-hit accounting), the only settings a fork may change before its first
    /// swap-in.
    pub(crate) fn take_swapin_knobs(&mut self, swap: &crate::config::SwapConfig) {
        self.cfg.swap.page_cluster = swap.page_cluster;
        self.cfg.swap.swapoff_readahead_hits = swap.swapoff_readahead_hits;
        self.cfg.swap.vma_ra_enabled = swap.vma_ra_enabled;
    }

    /// Pages charged to the memory cgroup besides its hot page cache
    /// (`memcg.page_cache`): folios in frames, and zswap's pool where it is charged.
    #[inline]
    pub(crate) fn memcg_usage(&self) -> u64 {
        self.memcg_usage
    }

    /// The memory cgroup's limit in pages less its hot page cache: what
    /// [`Mm::memcg_usage`] may reach; `None` without a limit.
    #[inline]
    pub(crate) fn memcg_limit(&self) -> Option<u64> {
        self.memcg_limit
    }

    /// Writes `memory.max` in pages (`None`: no limit); the hot page cache keeps its share
    /// of it. Reclaiming down to a lowered limit is the writer's work, not this call's.
    pub(crate) fn set_memcg_limit(&mut self, limit: Option<u64>) {
        self.memcg_limit = limit.map(|l| l.saturating_sub(self.page_cache_pages()));
    }

    /// Pages of hot page cache charged to the memory cgroup (`memcg.page_cache`).
    #[inline]
    pub(crate) fn page_cache_pages(&self) -> u64 {
        self.cfg.memcg.page_cache.pages()
    }

    /// Charges `nr` pages to the memory cgroup (the caller has decided the charge may
    /// go ahead).
    #[inline]
    pub(crate) fn charge(&mut self, nr: u64) {
        self.memcg_usage += nr;
    }

    /// Uncharges `nr` pages. Panics if more are uncharged than were charged.
    #[inline]
    pub(crate) fn uncharge(&mut self, nr: u64) {
        self.memcg_usage = match self.memcg_usage.checked_sub(nr) {
            Some(usage) => usage,
            None => panic!("memcg: uncharging {nr} pages with {} charged", self.memcg_usage),
        };
    }

    /// Pages under writeback to a swap device.
    #[inline]
    pub(crate) fn nr_writeback(&self) -> u64 {
        self.nr_writeback
    }

    /// `nr` pages whose writeback to a device completed.
    fn end_writeback(&mut self, nr: u64) {
        self.nr_writeback = match self.nr_writeback.checked_sub(nr) {
            Some(n) => n,
            None => panic!("writeback: {nr} pages completed with {} in flight", self.nr_writeback),
        };
    }

    /// Hibernation image pages submitted and not completed yet.
    #[inline]
    pub(crate) fn image_inflight(&self) -> u64 {
        self.image_inflight
    }

    /// Events taken off the queue so far.
    #[inline]
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    /// Takes the next event off the queue, counting it.
    #[inline]
    pub(crate) fn pop_event(&mut self) -> Option<(SimTime, Event)> {
        let next = self.queue.pop()?;
        self.events += 1;
        Some(next)
    }

    /// What completions left for the engine to deliver.
    #[inline]
    pub(crate) fn news(&self) -> &IoNews {
        &self.news
    }

    /// Takes the reads that completed for folios tasks sleep on.
    pub(crate) fn take_reads_done(&mut self) -> Vec<(Pfn, SimTime)> {
        std::mem::take(&mut self.news.reads_done)
    }

    /// Hands back a list of delivered reads, cleared, for the next completions.
    pub(crate) fn recycle_reads_done(&mut self, mut spent: Vec<(Pfn, SimTime)>) {
        spent.clear();
        self.news.reads_done = spent;
    }

    /// Takes the latest write completion not yet announced to tasks waiting on writeback.
    pub(crate) fn take_write_done(&mut self) -> Option<SimTime> {
        self.news.write_done.take()
    }

    /// Takes the latest completion not yet announced to kernel tasks waiting on any I/O.
    pub(crate) fn take_io_done(&mut self) -> Option<SimTime> {
        self.news.io_done.take()
    }

    /// Takes the folios whose writeback ended for the LRU to rotate (reclaim does so
    /// before it isolates a batch; `Lru::rotate_completed`).
    pub(crate) fn take_rotations(&mut self) -> Vec<Pfn> {
        std::mem::take(&mut self.news.rotations)
    }

    /// Hands back a rotation list once rotated, cleared, for the next completions.
    pub(crate) fn recycle_rotations(&mut self, mut spent: Vec<Pfn>) {
        spent.clear();
        self.news.rotations = spent;
    }

    /// Whether requests were issued whose completions are not scheduled yet.
    #[inline]
    pub(crate) fn has_dispatched(&self) -> bool {
        !self.dispatched.is_empty()
    }

    /// `blk_start_plug` for `owner`.
    #[inline]
    pub(crate) fn start_plug(&mut self, owner: PlugOwner) {
        self.block.start_plug(owner);
    }

    /// `blk_finish_plug` for `owner` at the acting context's time.
    #[inline]
    pub(crate) fn finish_plug(&mut self, owner: PlugOwner) {
        self.block.finish_plug(owner, self.now, &mut self.dispatched);
    }

    /// `submit_bio` of a one-page bio by `owner` at the acting context's time.
    #[inline]
    pub(crate) fn submit(&mut self, owner: PlugOwner, bio: Bio) {
        self.block.submit(owner, bio, self.now, &mut self.dispatched);
    }

    /// A bio of `nr` pages to a synchronous device, completed in the acting context: its
    /// clock moves to the completion.
    #[inline]
    pub(crate) fn submit_sync(&mut self, bio: Bio, nr: u32) {
        self.now = self.block.submit_sync_pages(bio, nr, self.now);
    }

    /// One page of a hibernation image as a bio under `owner`'s plug, counted in flight.
    pub(crate) fn submit_image_bio(&mut self, owner: PlugOwner, bio: Bio) {
        debug_assert_eq!(bio.pfn, crate::block::IMAGE_PFN);
        self.image_inflight += 1;
        self.submit(owner, bio);
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
        self.uncharge(nr);
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
    /// zswap's writeback trigger.
    pub(crate) zswap_trigger: Box<dyn crate::policy::zswap_writeback::ZswapWriteback>,
}
