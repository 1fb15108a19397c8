//! zswap (`mm/zswap.c`): the compressed cache between reclaim and the swap device.
//!
//! An entry per stored page records its slot, its compressed length, its zsmalloc
//! object and its referenced bit; the slot's word in the swap device points back to it.
//! Entries sit on one LRU (oldest first), linked through their indices. This module
//! holds the entry table and the mechanics that need no LRU of folios or policy: the
//! pool limit with its hysteresis, store, load and the release of entries whose slots
//! were freed. Writeback and the two shrinkers are in the engine (`engine/zswap.rs`).
//!
//! Simplified: one memory cgroup, so the kernel's per-memcg, per-node `list_lru` is one
//! list and every entry is charged to that cgroup; a page's compressed length is a fixed
//! draw from its region's contents class (rewriting it does not change it); zsmalloc's
//! allocations never fail, so `reject_alloc_fail` and `reject_kmemcache_fail` stay 0;
//! compression never fails (`reject_compress_fail`).

use super::zsmalloc::{ZsHandle, ZsPool};
use super::Mm;
use crate::contents::compressed_len;
use crate::ids::{Pfn, SwapSlot, PAGE_SIZE};
use crate::policy::readahead::EntryLocation;
use crate::policy::zswap::ZswapProtection;
use crate::policy::zswap_writeback::{WritebackEvent, ZswapPoolView, ZswapWriteback};
use crate::time::SimTime;
use crate::zswap::Incompressible;

/// No entry: the end of the LRU list.
const NIL: u32 = u32::MAX;
/// Copying a page stored uncompressed back out of the pool, in ns (a 4 KiB memcpy).
const COPY_PAGE_NS: u64 = 300;

#[derive(Clone, Copy, Debug)]
struct Entry {
    slot: SwapSlot,
    /// Compressed length in bytes; `PAGE_SIZE` for a page stored as it is.
    len: u32,
    /// The page's contents class (index into the page tables' classes).
    contents: u8,
    handle: ZsHandle,
    referenced: bool,
    live: bool,
    prev: u32,
    next: u32,
}

/// Event counts the report gives with debugfs names.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ZswapCounts {
    pub(crate) pool_limit_hit: u64,
    pub(crate) written_back_pages: u64,
    pub(crate) reject_reclaim_fail: u64,
    pub(crate) reject_compress_poor: u64,
    pub(crate) reject_memcg_limit: u64,
    pub(crate) shrink_worker_runs: u64,
    pub(crate) shrinker_scanned: u64,
}

/// zswap's state.
#[derive(Clone, Debug)]
pub(crate) struct Zswap {
    /// The shrinkers' protection policy.
    pub(crate) policy: Box<dyn ZswapProtection>,
    /// When the pool-limit worker starts and how it counts failures.
    pub(crate) trigger: Box<dyn ZswapWriteback>,
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// Oldest and youngest entries on the LRU.
    head: u32,
    tail: u32,
    pub(crate) lru_len: u64,
    pub(crate) pool: ZsPool,
    /// `zswap_stored_pages`, and those stored uncompressed.
    pub(crate) stored: u64,
    pub(crate) incompressible: u64,
    /// Compressed bytes of every entry (the memory cgroup's `zswap`).
    pub(crate) bytes: u64,
    /// `zswap_pool_reached_full`.
    pub(crate) full: bool,
    /// `zswap_max_pages()` and `zswap_accept_thr_pages()`.
    pub(crate) max_pages: u64,
    pub(crate) accept_pages: u64,
    /// `memory.zswap.max` in pages, `u64::MAX` for none.
    pub(crate) memcg_max_pages: u64,
    /// Compressed length and contents class of the page last loaded into a frame, for
    /// folios stored again before anything maps them (a readahead neighbour loaded from
    /// zswap).
    frame_len: Vec<(u32, u8)>,
    orphans: Vec<u32>,
    pub(crate) counts: ZswapCounts,
    /// Stores refused on a full pool since the worker last looked: each queues the
    /// pool-limit worker (`queue_work`). On the tasks' CPUs it runs once per queueing; on
    /// a housekeeping CPU the times below decide (`engine/zswap.rs`).
    pub(crate) worker_kicks: u32,
    /// When the first of `worker_kicks` happened ([`Zswap::take_kicks`] clears both).
    first_kick_at: Option<SimTime>,
    /// When the last queueing happened, ever.
    pub(crate) last_kick_at: SimTime,
    /// Pages of pool charged to the memory cgroup (cgroup v2 only).
    pub(crate) charged_pages: u64,
    /// Whether anything has read zswap's switches or its policies yet: a store was tried,
    /// the memory-pressure shrinker was called, or a swap-in was told to the policy. Until
    /// then a run continues alike whatever the shrinker switch and the protection policy
    /// say ([`crate::Simulation::retune_zswap`]).
    pub(crate) knobs_read: bool,
}

impl Zswap {
    /// zswap for a machine of `total_pages` pages.
    pub(crate) fn new(
        cfg: &crate::zswap::ZswapConfig,
        memcg: &crate::config::MemcgConfig,
        total_pages: u64,
        policy: Box<dyn ZswapProtection>,
        trigger: Box<dyn ZswapWriteback>,
    ) -> Zswap {
        let max_pages = total_pages * u64::from(cfg.max_pool_percent) / 100;
        Zswap {
            policy,
            trigger,
            entries: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            lru_len: 0,
            pool: ZsPool::new(),
            stored: 0,
            incompressible: 0,
            bytes: 0,
            full: false,
            max_pages,
            accept_pages: max_pages * u64::from(cfg.accept_threshold_percent) / 100,
            knobs_read: false,
            memcg_max_pages: memcg.zswap_max.map_or(u64::MAX, |b| b.pages()),
            frame_len: Vec::new(),
            orphans: Vec::new(),
            counts: ZswapCounts::default(),
            worker_kicks: 0,
            first_kick_at: None,
            last_kick_at: SimTime::ZERO,
            charged_pages: 0,
        }
    }

    /// The oldest entry on the LRU.
    pub(crate) fn lru_first(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    pub(crate) fn slot(&self, e: u32) -> SwapSlot {
        self.entries[e as usize].slot
    }

    pub(crate) fn referenced_mut(&mut self, e: u32) -> &mut bool {
        &mut self.entries[e as usize].referenced
    }

    pub(crate) fn len(&self, e: u32) -> u32 {
        self.entries[e as usize].len
    }

    pub(crate) fn contents(&self, e: u32) -> u8 {
        self.entries[e as usize].contents
    }

    fn unlink(&mut self, e: u32) {
        let Entry { prev, next, .. } = self.entries[e as usize];
        match prev {
            NIL => self.head = next,
            p => self.entries[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.entries[n as usize].prev = prev,
        }
        self.lru_len -= 1;
    }

    fn push_tail(&mut self, e: u32) {
        let tail = self.tail;
        {
            let x = &mut self.entries[e as usize];
            x.prev = tail;
            x.next = NIL;
        }
        match tail {
            NIL => self.head = e,
            t => self.entries[t as usize].next = e,
        }
        self.tail = e;
        self.lru_len += 1;
    }

    /// Moves an entry to the young end (`LRU_ROTATE`, and the rotation before writeback).
    pub(crate) fn rotate(&mut self, e: u32) {
        self.unlink(e);
        self.push_tail(e);
    }

    fn insert(&mut self, slot: SwapSlot, len: u32, contents: u8) -> u32 {
        let referenced = self.policy.stored(self.lru_len + 1);
        let handle = self.pool.malloc(len);
        let entry = Entry { slot, len, contents, handle, referenced, live: true, prev: NIL, next: NIL };
        let e = match self.free.pop() {
            Some(e) => {
                self.entries[e as usize] = entry;
                e
            }
            None => {
                self.entries.push(entry);
                (self.entries.len() - 1) as u32
            }
        };
        self.push_tail(e);
        self.stored += 1;
        self.bytes += u64::from(len);
        if len == PAGE_SIZE as u32 {
            self.incompressible += 1;
        }
        e
    }

    /// Prefetches entry `e`, which a zswap load is about to read.
    #[inline]
    pub(crate) fn prefetch_entry(&self, e: u32) {
        if let Some(x) = self.entries.get(e as usize) {
            crate::prefetch::prefetch(x);
        }
    }

    /// Prefetches what [`Zswap::free_entry`] of `e` reads and writes besides the entry
    /// itself: its neighbours on the LRU and its object's place in the pool. A zswap load
    /// frees the entry it read: these misses then overlap instead of following each other.
    #[inline]
    pub(crate) fn prefetch_free(&self, e: u32) {
        let Some(x) = self.entries.get(e as usize) else { return };
        for n in [x.prev, x.next] {
            if let Some(neighbour) = self.entries.get(n as usize) {
                crate::prefetch::prefetch(neighbour);
            }
        }
        self.pool.prefetch_free(x.handle);
    }

    /// `zswap_entry_free`: off the LRU, out of the pool.
    pub(crate) fn free_entry(&mut self, e: u32) {
        let x = self.entries[e as usize];
        assert!(x.live, "zswap entry {e} freed twice");
        self.unlink(e);
        self.pool.free(x.handle);
        self.entries[e as usize].live = false;
        self.stored -= 1;
        self.bytes -= u64::from(x.len);
        if x.len == PAGE_SIZE as u32 {
            self.incompressible -= 1;
        }
        self.free.push(e);
    }

    /// `zswap_check_limits`: the pool is full from the moment it reaches its limit until
    /// it falls to the accept threshold (or, for a trigger without the hysteresis, until
    /// it is below the limit).
    pub(crate) fn check_limits(&mut self) -> bool {
        let cur = self.pool.total_pages();
        if cur >= self.max_pages {
            self.counts.pool_limit_hit += 1;
            self.full = true;
        } else if self.full && (cur <= self.accept_pages || !self.trigger.hysteresis()) {
            self.full = false;
        }
        self.full
    }

    /// The pool as the writeback trigger sees it.
    pub(crate) fn pool_view(&self) -> ZswapPoolView {
        ZswapPoolView::new(self.pool.total_pages(), self.max_pages, self.accept_pages)
    }

    fn remember_len(&mut self, pfn: Pfn, len: u32, contents: u8) {
        let i = pfn.0 as usize;
        if self.frame_len.len() <= i {
            self.frame_len.resize(i + 1, (PAGE_SIZE as u32, 0));
        }
        self.frame_len[i] = (len, contents);
    }

    /// Live entries, walking the LRU (for invariant checks).
    pub(crate) fn lru_entries(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.lru_len as usize);
        let mut e = self.head;
        while e != NIL {
            v.push(e);
            e = self.entries[e as usize].next;
        }
        v
    }

    /// Checks the LRU links, the counters and the pool against the entries.
    pub(crate) fn check(&self) {
        let lru = self.lru_entries();
        assert_eq!(lru.len() as u64, self.lru_len, "zswap LRU length");
        let live: Vec<u32> =
            (0..self.entries.len() as u32).filter(|&e| self.entries[e as usize].live).collect();
        assert_eq!(live.len() as u64, self.stored, "zswap stored_pages");
        assert_eq!(lru.len(), live.len(), "a live zswap entry is off the LRU");
        assert_eq!(self.pool.objects(), self.stored, "zsmalloc objects vs zswap entries");
        let bytes: u64 = live.iter().map(|&e| u64::from(self.entries[e as usize].len)).sum();
        assert_eq!(bytes, self.bytes, "zswap compressed bytes");
        if let Err(e) = self.pool.check() {
            panic!("zsmalloc: {e}");
        }
    }

    /// A queueing of the worker at `now`.
    fn queue_worker(&mut self, now: SimTime) {
        self.worker_kicks += 1;
        self.first_kick_at.get_or_insert(now);
        self.last_kick_at = self.last_kick_at.max(now);
    }

    /// The queueings since the worker last looked, and when the first of them happened;
    /// none are left.
    pub(crate) fn take_kicks(&mut self) -> (u32, Option<SimTime>) {
        (std::mem::take(&mut self.worker_kicks), self.first_kick_at.take())
    }
}

/// What a swap-in read found in zswap or the zero map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The zero map: the page is zero-filled without I/O.
    Zero,
    /// zswap: decompressed in the reading context.
    Zswap,
    /// Neither: the device must be read.
    Device,
}

impl Mm {
    /// Whether zswap is configured (it keeps entries per slot).
    #[inline]
    pub(crate) fn zswap_on(&self) -> bool {
        self.swap.zswap_on
    }

    /// Where the page of in-use `slot` lives, in `swap_read_folio`'s order.
    pub(crate) fn entry_location(&self, slot: SwapSlot) -> EntryLocation {
        if self.swap.is_zero(slot) {
            EntryLocation::Zero
        } else if self.zswap_on() && self.swap.zswap_entry(slot).is_some() {
            EntryLocation::Zswap
        } else {
            EntryLocation::Device
        }
    }

    /// Entries whose slots were freed and that the next [`Mm::zswap_sync`] frees.
    pub(crate) fn zswap_pending_orphans(&self) -> u64 {
        (self.zswap.orphans.len() + self.swap.zswap_orphans_len()) as u64
    }

    /// Frees the entries of slots freed since the last call, and brings the pool's memory
    /// (taken from RAM, and on cgroup v2 charged to the memory cgroup) up to date.
    pub(crate) fn zswap_sync(&mut self) {
        if !self.zswap_on() {
            return;
        }
        let mut orphans = std::mem::take(&mut self.zswap.orphans);
        self.swap.take_zswap_orphans(&mut orphans);
        for e in orphans.drain(..) {
            self.zswap.free_entry(e);
        }
        self.zswap.orphans = orphans;
        let pages = self.zswap.pool.total_pages();
        self.frames.set_reserved(pages);
        if self.cfg.memcg.version == 2 {
            // obj_cgroup_charge_zswap: compressed bytes, charged in whole pages.
            let charged = self.zswap.bytes.div_ceil(PAGE_SIZE);
            self.memcg_usage = self.memcg_usage + charged - self.zswap.charged_pages;
            self.zswap.charged_pages = charged;
        }
    }

    /// Records what each page of the folio at `head` holds (its compressed length and
    /// contents class), from the PTEs that still map it: reclaim calls this before
    /// unmapping, for the zero check and zswap to read after. Nothing to do when every
    /// region holds random bytes and zswap is off.
    #[inline(always)]
    pub(crate) fn note_folio_contents(&mut self, head: Pfn) {
        if !self.zswap_on() && self.pt.contents.len() == 1 && !self.pt.contents[0].is_zero() {
            return;
        }
        self.note_folio_contents_slow(head);
    }

    #[inline(never)]
    fn note_folio_contents_slow(&mut self, head: Pfn) {
        for i in 0..self.frames.nr_pages(head) {
            let pfn = Pfn(head.0 + i);
            if let Some(page) = self.frames.owner(pfn) {
                let id = self.pt.page_contents_id(page);
                let len = compressed_len(
                    self.cfg.zswap.compressor,
                    &self.pt.contents[id as usize],
                    u64::from(page.0),
                );
                self.zswap.remember_len(pfn, len, id);
            }
        }
    }

    /// `is_folio_zero_filled`: whether every page of the folio holds zeros, as last noted.
    pub(crate) fn folio_zero_filled(&self, head: Pfn) -> bool {
        let nr = self.frames.nr_pages(head);
        (0..nr).all(|i| {
            self.zswap
                .frame_len
                .get((head.0 + i) as usize)
                .is_some_and(|&(_, id)| self.pt.contents[id as usize].is_zero())
        })
    }

    /// The compressed length and contents class of page `i` of the folio at `head`, as
    /// last noted (random bytes if never).
    fn page_len(&self, head: Pfn, i: u32) -> (u32, u8) {
        self.zswap.frame_len.get((head.0 + i) as usize).copied().unwrap_or((PAGE_SIZE as u32, 0))
    }

    /// `zswap_store` for the folio at `head` whose pages hold `first`.. of their device:
    /// compresses and stores every page, or none. Compression time is charged to the
    /// acting context. On failure the caller writes the folio to the device.
    pub(crate) fn zswap_store(&mut self, head: Pfn, first: SwapSlot) -> bool {
        let nr = self.frames.nr_pages(head);
        let ok = self.zswap_try_store(head, first, nr);
        if !ok {
            // check_old: stale entries of these slots must not be written back over the
            // new data.
            for i in 0..nr {
                if let Some(e) = self.swap.set_zswap_entry(first.nth(i), None) {
                    self.zswap.free_entry(e);
                }
            }
        }
        self.zswap_sync();
        ok
    }

    fn zswap_try_store(&mut self, head: Pfn, first: SwapSlot, nr: u32) -> bool {
        self.zswap.knobs_read = true;
        if !self.cfg.zswap.enabled {
            return false;
        }
        self.zswap_sync();
        // obj_cgroup_may_zswap. Simplified: the kernel first writes back one of the
        // group's entries and stores if that worked; the model refuses.
        if self.zswap.bytes / PAGE_SIZE >= self.zswap.memcg_max_pages {
            self.zswap.counts.reject_memcg_limit += 1;
            return false;
        }
        if self.zswap.check_limits() {
            let at = self.now();
            self.zswap.trigger.observe(WritebackEvent::StoreRefused { at });
            return false;
        }
        let writeback = self.cfg.memcg.zswap_writeback;
        let compressor = self.cfg.zswap.compressor;
        // Compress every page first: a page that does not compress refuses the whole folio
        // before any entry is stored. The lengths are a pure lookup, read again to store.
        for i in 0..nr {
            let (len, id) = self.page_len(head, i);
            self.spend(compressor.compress_ns(&self.pt.contents[id as usize]) + self.cfg.cpu.zswap_store_ns);
            if len >= PAGE_SIZE as u32
                && (self.cfg.zswap.incompressible == Incompressible::Reject || !writeback)
            {
                self.zswap.counts.reject_compress_poor += 1;
                return false;
            }
        }
        for i in 0..nr {
            let (len, id) = self.page_len(head, i);
            let len = len.clamp(1, PAGE_SIZE as u32);
            let slot = first.nth(i);
            if let Some(old) = self.swap.set_zswap_entry(slot, None) {
                self.zswap.free_entry(old);
            }
            let e = self.zswap.insert(slot, len, id);
            self.swap.set_zswap_entry(slot, Some(e));
        }
        let pool = self.zswap.pool_view();
        if self.zswap.trigger.shrink_start_pages(&pool).is_some_and(|start| pool.pool_pages > start) {
            // queue_work(shrink_wq, ...) before the pool is full.
            self.queue_zswap_worker();
        }
        true
    }

    /// `queue_work(shrink_wq, &zswap_shrink_work)` from the acting context, now: the
    /// engine runs the pool-limit worker.
    pub(crate) fn queue_zswap_worker(&mut self) {
        let now = self.now();
        self.zswap.queue_worker(now);
    }

    /// `swap_read_folio`'s first two backends for the page read into `pfn` from `slot`:
    /// the zero map, then zswap. A zswap hit in the swap cache is an exclusive load: the
    /// entry is freed and the folio dirtied, since the device holds no copy. Returns
    /// where the page comes from; `Device` means the caller reads it.
    pub(crate) fn swap_read_backend(&mut self, slot: SwapSlot, pfn: Pfn, into: ReadInto) -> Backend {
        if self.swap.is_zero(slot) {
            self.vmstat.swpin_zero += 1;
            return Backend::Zero;
        }
        if !self.zswap_on() {
            return Backend::Device;
        }
        let Some(e) = self.swap.zswap_entry(slot) else { return Backend::Device };
        let (len, id) = (self.zswap.len(e), self.zswap.contents(e));
        if into == ReadInto::SwapCache {
            self.zswap.prefetch_free(e);
        }
        let cost = if len == PAGE_SIZE as u32 {
            COPY_PAGE_NS
        } else {
            self.cfg.zswap.compressor.decompress_ns(&self.pt.contents[id as usize])
        };
        self.spend(cost + self.cfg.cpu.zswap_load_ns);
        self.vmstat.zswpin += 1;
        self.zswap.remember_len(pfn, len, id);
        if into == ReadInto::SwapCache {
            self.swap.set_zswap_entry(slot, None);
            self.zswap.free_entry(e);
            self.frames.set(pfn, super::frames::flag::DIRTY);
            self.zswap_sync();
        }
        Backend::Zswap
    }
}

/// Where a swap-in reads a page into: a swap-cache folio, or (the synchronous-device
/// bypass) a folio outside the swap cache, which leaves a zswap entry in place until the
/// slot is freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadInto {
    SwapCache,
    Bypass,
}

impl Mm {
    /// The pool's size in bytes and the pages stored, as the last sync left them (entries
    /// of freed slots count until the next sync frees them); zeros without zswap. Reads
    /// only: a time series samples it without changing the run.
    pub(crate) fn zswap_gauges(&self) -> (u64, u64) {
        if !self.zswap_on() {
            return (0, 0);
        }
        (self.zswap.pool.total_pages() * PAGE_SIZE, self.zswap.stored)
    }

    /// The debugfs gauges and counts.
    pub(crate) fn zswap_report(&self) -> crate::zswap::ZswapReport {
        let z = &self.zswap;
        crate::zswap::ZswapReport {
            protection: z.policy.name().to_string(),
            pool_total_size: z.pool.total_pages() * PAGE_SIZE,
            stored_pages: z.stored,
            stored_incompressible_pages: z.incompressible,
            written_back_pages: z.counts.written_back_pages,
            pool_limit_hit: z.counts.pool_limit_hit,
            reject_reclaim_fail: z.counts.reject_reclaim_fail,
            reject_compress_poor: z.counts.reject_compress_poor,
            reject_memcg_limit: z.counts.reject_memcg_limit,
            memcg_zswap_bytes: z.bytes,
            shrink_worker_runs: z.counts.shrink_worker_runs,
            shrinker_scanned: z.counts.shrinker_scanned,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MemcgConfig;
    use crate::ids::DeviceId;
    use crate::policy::zswap::NoProtection;
    use crate::policy::zswap_writeback::KernelWriteback;
    use crate::zswap::ZswapConfig;

    /// zswap for a machine of 1000 pages with the given pool and accept percentages.
    fn zswap(max_pool_percent: u32, accept_threshold_percent: u32) -> Zswap {
        let cfg = ZswapConfig {
            enabled: true,
            max_pool_percent,
            accept_threshold_percent,
            ..ZswapConfig::default()
        };
        Zswap::new(&cfg, &MemcgConfig::default(), 1000, Box::new(NoProtection), Box::new(KernelWriteback))
    }

    fn slot(offset: u32) -> SwapSlot {
        SwapSlot { device: DeviceId(0), offset }
    }

    /// Stores `n` uncompressed pages (each takes one page of pool on its own) from slot
    /// `first` on, and returns their entries.
    fn fill(z: &mut Zswap, first: u32, n: u32) -> Vec<u32> {
        (first..first + n).map(|o| z.insert(slot(o), PAGE_SIZE as u32, 0)).collect()
    }

    #[test]
    fn the_pool_stays_full_from_its_limit_down_to_the_accept_threshold() {
        // 10 % of 1000 pages: full at 100 pages, open again at 90 % of that.
        let mut z = zswap(10, 90);
        assert_eq!((z.max_pages, z.accept_pages), (100, 90));
        let mut entries = fill(&mut z, 1, 99);
        assert_eq!(z.pool.total_pages(), 99, "a page stored as it is takes a page of pool");
        assert!(!z.check_limits(), "one page below the limit");
        assert_eq!(z.counts.pool_limit_hit, 0);
        entries.extend(fill(&mut z, 100, 1));
        assert!(z.check_limits(), "at the limit");
        assert!(z.full);
        assert_eq!(z.counts.pool_limit_hit, 1);
        // Between the threshold and the limit the pool stays full; only a look at a pool
        // at its limit counts as a hit.
        for pages in (91..=99).rev() {
            z.free_entry(entries.pop().unwrap());
            assert_eq!(z.pool.total_pages(), pages);
            assert!(z.check_limits(), "still full at {pages} pages");
        }
        assert_eq!(z.counts.pool_limit_hit, 1);
        z.free_entry(entries.pop().unwrap());
        assert_eq!(z.pool.total_pages(), 90);
        assert!(!z.check_limits(), "open again at the accept threshold");
        assert!(!z.full);
        // Stores are accepted again up to the limit, without going through the threshold.
        entries.extend(fill(&mut z, 200, 9));
        assert!(!z.check_limits(), "99 pages, not full");
        entries.extend(fill(&mut z, 300, 1));
        assert!(z.check_limits(), "the limit again");
        assert_eq!(z.counts.pool_limit_hit, 2);
        assert!(z.check_limits(), "every look at a pool at its limit is a hit");
        assert_eq!(z.counts.pool_limit_hit, 3);
        z.check();
    }

    #[test]
    fn a_zero_limit_refuses_everything_and_a_full_threshold_reopens_below_the_limit() {
        let mut z = zswap(0, 90);
        assert!(z.check_limits(), "an empty pool is at a limit of 0 pages");
        assert_eq!(z.counts.pool_limit_hit, 1);
        // accept_threshold_percent 100: the pool reopens as soon as it is below the limit.
        let mut z = zswap(10, 100);
        let mut entries = fill(&mut z, 1, 100);
        assert!(z.check_limits());
        z.free_entry(entries.pop().unwrap());
        assert!(!z.check_limits(), "99 pages is at a threshold of 100");
        // accept_threshold_percent 0: full until the pool is empty.
        let mut z = zswap(10, 0);
        let mut entries = fill(&mut z, 1, 100);
        assert!(z.check_limits());
        while entries.len() > 1 {
            z.free_entry(entries.pop().unwrap());
            assert!(z.check_limits(), "{} pages", z.pool.total_pages());
        }
        z.free_entry(entries.pop().unwrap());
        assert!(!z.check_limits(), "an empty pool is at a threshold of 0");
    }

    #[test]
    fn the_lru_keeps_store_order_through_rotations_and_frees() {
        let mut z = zswap(20, 90);
        let e: Vec<u32> = (1..=5).map(|o| z.insert(slot(o), 1000 + o, 0)).collect();
        assert_eq!(z.lru_entries(), e);
        z.rotate(e[0]);
        z.free_entry(e[2]);
        assert_eq!(z.lru_entries(), [e[1], e[3], e[4], e[0]]);
        assert_eq!(z.lru_first(), Some(e[1]));
        assert_eq!((z.stored, z.bytes), (4, 1001 + 1002 + 1004 + 1005));
        // A freed index is reused and the new entry goes to the young end.
        let f = z.insert(slot(9), 4096, 0);
        assert_eq!(f, e[2]);
        assert_eq!(z.lru_entries(), [e[1], e[3], e[4], e[0], f]);
        assert_eq!(z.incompressible, 1);
        z.check();
        for x in z.lru_entries() {
            z.free_entry(x);
        }
        assert_eq!((z.stored, z.bytes, z.incompressible, z.lru_len), (0, 0, 0, 0));
        assert_eq!(z.lru_first(), None);
        assert_eq!(z.pool.total_pages(), 0, "an empty pool holds no zspage");
        z.check();
    }
}
