//! One swap area: its per-slot words and its cluster allocator (`mm/swapfile.c`).
//!
//! A slot's count, swap-cache word and zero mark share one packed word; the swap cache
//! (`cache.rs`) reads and writes the cache word through the accessors here, and only this
//! file knows the clusters, their lists and the allocation hints. Freeing a slot clears
//! its whole word, so a free cluster is all zero words.
//!
//! The allocator carries out a [`SlotPlan`]: it tries the plan's sources in order and
//! checks every slot it gives out (free, aligned to the folio, inside one cluster), so no
//! plan can hand out a busy slot.

use super::SwaponSpec;
use crate::ids::{CpuId, Pfn};
use crate::policy::allocator::{AfterAlloc, ClusterLists, SlotPlan, SlotSource};
use std::collections::VecDeque;

/// The count that marks a slot unusable (`SWAP_MAP_BAD`): the header's.
pub(super) const BAD_SLOT: u8 = 0xff;
/// No zswap entry in a slot.
pub(super) const NO_ZSWAP: u32 = u32::MAX;
/// The cache-word tag of a frame caching the slot.
pub(super) const TAG_FRAME: u32 = 1 << 30;
/// The cache-word tag of a workingset shadow.
pub(super) const TAG_SHADOW: u32 = 2 << 30;
/// The tag bits of a cache word; no tag is an empty word.
pub(super) const TAG_MASK: u32 = 3 << 30;
/// Folio orders with their own clusters and hints (`SWAP_NR_ORDERS`): 0 up to the PMD order.
const NR_ORDERS: usize = crate::thp::PMD_ORDER as usize + 1;

/// Where a slot's count sits in its packed word (see `SwapDevice::slots`).
pub(super) const COUNT_SHIFT: u32 = 32;
/// A slot's zero mark in its packed word.
pub(super) const ZERO_BIT: u64 = 1 << 40;
/// The bits of a slot's word that a slot in use has one of: a swap count, or a frame in
/// the swap cache. A slot is free when its word has none ([`SwapDevice::is_free`]).
const BUSY_BITS: u64 = (0xff << COUNT_SHIFT) | TAG_FRAME as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClusterState {
    Free,
    /// Some allocator hint points into it.
    Current,
    Nonfull,
    Full,
}

#[derive(Clone, Copy, Debug)]
struct Cluster {
    /// Allocated slots, plus the header and any slots past the device's end.
    used: u32,
    state: ClusterState,
    /// The folio order the cluster serves; meaningless while it is free.
    order: u8,
}

/// A cluster list to refill from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Free,
    Nonfull(u8),
    Frag(u8),
}

/// The index of the first free slot's word in `words`. Usually the first word is free
/// (the slot after the last one allocated); otherwise, as a reused cluster can hold long
/// runs of slots in use, the scan tests four words a step, with no early exit inside the
/// four, and finds the free one among them afterwards.
#[inline]
pub(super) fn first_free(words: &[u64]) -> Option<usize> {
    if *words.first()? & BUSY_BITS == 0 {
        return Some(0);
    }
    let mut base = 1;
    for four in words[1..].chunks_exact(4) {
        let all_busy = (four[0] & BUSY_BITS != 0)
            & (four[1] & BUSY_BITS != 0)
            & (four[2] & BUSY_BITS != 0)
            & (four[3] & BUSY_BITS != 0);
        if !all_busy {
            break;
        }
        base += 4;
    }
    words[base..].iter().position(|&w| w & BUSY_BITS == 0).map(|i| base + i)
}

/// One swap area.
#[derive(Debug)]
pub(crate) struct SwapDevice {
    pub(crate) priority: i32,
    rotational: bool,
    /// Accepting new allocations (`SWP_WRITEOK`: cleared by swapoff, set by swapon).
    pub(super) writeok: bool,
    /// A block device rather than a swap file (`SWP_BLKDEV`): only these take large
    /// folios whole.
    pub(super) blkdev: bool,
    /// Per slot, packed in one word: the swap-cache word (bits 0..32: a frame, a shadow or
    /// nothing, `TAG_*`), the swap count (`si->swap_map`, bits 32..40) and the zero mark
    /// (its bit of `si->zeromap`, bit 40: the page was all zeros when written). The paths
    /// that read one read the others, so one cache line serves them all; and an all-zero
    /// word is a free slot, so the table starts as untouched zeroed memory.
    slots: Vec<u64>,
    /// zswap's entry per slot (`NO_ZSWAP` for none); empty while zswap is off.
    pub(super) zswap: Vec<u32>,
    /// Allocated slots, header excluded.
    inuse: u32,
    cluster_slots: u32,
    clusters: Vec<Cluster>,
    free_clusters: VecDeque<u32>,
    /// Partly used clusters of each order, the kernel's `frag_clusters` folded in; empty
    /// when the device keeps free clusters only ([`ClusterLists::FreeOnly`]).
    nonfull_clusters: [VecDeque<u32>; NR_ORDERS],
    /// Clusters a plan put back after taking slots from them (`AfterAlloc::Relocate`,
    /// the kernel's `relocate_cluster` onto `frag_clusters`), in rotation order.
    frag_clusters: [VecDeque<u32>; NR_ORDERS],
    /// Which lists the device keeps.
    lists: ClusterLists,
    /// Next offset to try for each order, per CPU on non-rotational devices
    /// (`percpu_cluster->next[order]`) or a single entry on rotational ones
    /// (`global_cluster->next[order]`).
    hints: Vec<[Option<u32>; NR_ORDERS]>,
    /// Where a scan of the swap map starts, per hint (`cluster_next_cpu`, or the
    /// device's `cluster_next` on a rotational one): past the slot the last scan found.
    scan_next: Vec<u32>,
}

impl Clone for SwapDevice {
    /// A free cluster's words are all zero (a released slot's word is cleared), except
    /// the header's mark in a first cluster nothing was allocated from yet: the copy
    /// starts as untouched zeroed memory and copies only the clusters in use and those
    /// holding unusable slots, so most of a large device's table is never touched in the
    /// copy either.
    fn clone(&self) -> SwapDevice {
        let mut slots = vec![0u64; self.slots.len()];
        let per = self.cluster_slots as usize;
        let kept = |cl: &Cluster| cl.state != ClusterState::Free || cl.used > 0;
        for (c, _) in self.clusters.iter().enumerate().filter(|(_, cl)| kept(cl)) {
            let range = c * per..((c + 1) * per).min(self.slots.len());
            slots[range.clone()].copy_from_slice(&self.slots[range]);
        }
        SwapDevice {
            priority: self.priority,
            rotational: self.rotational,
            writeok: self.writeok,
            blkdev: self.blkdev,
            slots,
            zswap: self.zswap.clone(),
            inuse: self.inuse,
            cluster_slots: self.cluster_slots,
            clusters: self.clusters.clone(),
            free_clusters: self.free_clusters.clone(),
            nonfull_clusters: self.nonfull_clusters.clone(),
            frag_clusters: self.frag_clusters.clone(),
            lists: self.lists,
            hints: self.hints.clone(),
            scan_next: self.scan_next.clone(),
        }
    }
}

impl SwapDevice {
    /// The device `spec` describes, at `priority` (the one `spec` asks for, or the one
    /// swapon gave it), keeping `lists`.
    pub(super) fn new(spec: &SwaponSpec, priority: i32, lists: ClusterLists) -> SwapDevice {
        let SwaponSpec { blkdev, slots, rotational, cluster_slots, cpus, .. } = *spec;
        assert!(cluster_slots.is_power_of_two(), "clusters of {cluster_slots} slots");
        let n_clusters = slots.div_ceil(cluster_slots);
        let mut clusters =
            vec![Cluster { used: 0, state: ClusterState::Free, order: 0 }; n_clusters as usize];
        let mut words = vec![0u64; slots as usize];
        words[0] = u64::from(BAD_SLOT) << COUNT_SHIFT;
        clusters[0].used = 1;
        // The tail of the last cluster beyond the device's end is never usable.
        let tail = n_clusters * cluster_slots - slots;
        clusters[n_clusters as usize - 1].used += tail;
        let free_clusters = (0..n_clusters).collect();
        SwapDevice {
            priority,
            rotational,
            writeok: true,
            blkdev,
            slots: words,
            zswap: Vec::new(),
            inuse: 0,
            cluster_slots,
            clusters,
            free_clusters,
            nonfull_clusters: Default::default(),
            frag_clusters: Default::default(),
            lists,
            hints: vec![[None; NR_ORDERS]; if rotational { 1 } else { cpus }],
            scan_next: vec![1; if rotational { 1 } else { cpus }],
        }
    }

    /// Whether the device is rotational (one allocation hint for the device).
    pub(super) fn rotational(&self) -> bool {
        self.rotational
    }

    /// Slots including the header (the kernel's `si->max`).
    pub(crate) fn max(&self) -> u32 {
        self.slots.len() as u32
    }

    #[inline]
    pub(super) fn slot_cache(&self, off: u32) -> u32 {
        self.slots[off as usize] as u32
    }
    #[inline]
    pub(super) fn slot_count(&self, off: u32) -> u8 {
        (self.slots[off as usize] >> COUNT_SHIFT) as u8
    }
    #[inline]
    pub(super) fn slot_zero(&self, off: u32) -> bool {
        self.slots[off as usize] & ZERO_BIT != 0
    }
    #[inline]
    pub(super) fn set_slot_cache(&mut self, off: u32, w: u32) {
        let s = &mut self.slots[off as usize];
        *s = (*s & !u64::from(u32::MAX)) | u64::from(w);
    }
    #[inline]
    pub(super) fn set_slot_count(&mut self, off: u32, c: u8) {
        let s = &mut self.slots[off as usize];
        *s = (*s & !(0xff << COUNT_SHIFT)) | (u64::from(c) << COUNT_SHIFT);
    }
    #[inline]
    pub(super) fn set_slot_zero(&mut self, off: u32, zero: bool) {
        let s = &mut self.slots[off as usize];
        *s = if zero { *s | ZERO_BIT } else { *s & !ZERO_BIT };
    }
    /// Prefetches slot `off`'s word, if the device has that slot.
    #[inline]
    pub(super) fn prefetch_slot(&self, off: u32) {
        if let Some(word) = self.slots.get(off as usize) {
            crate::prefetch::prefetch(word);
        }
    }
    /// Usable slots (the kernel's `si->pages`).
    pub(crate) fn pages(&self) -> u32 {
        self.max() - 1
    }
    /// Allocated slots, header excluded.
    pub(crate) fn inuse(&self) -> u32 {
        self.inuse
    }

    #[inline]
    pub(super) fn is_free(&self, off: u32) -> bool {
        self.slots[off as usize] & BUSY_BITS == 0
    }

    /// Every slot of the clusters in use, with its cache word, in offset order. A free
    /// cluster's slots are all free, so its part of the table, most of a large device's,
    /// is never read.
    pub(super) fn cache_words_in_use(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let per = self.cluster_slots as usize;
        self.clusters.iter().enumerate().filter(|(_, cl)| cl.state != ClusterState::Free).flat_map(
            move |(c, _)| {
                let first = c * per;
                let words = &self.slots[first..(first + per).min(self.slots.len())];
                words.iter().enumerate().map(move |(i, &w)| ((first + i) as u32, w as u32))
            },
        )
    }

    /// The cluster of slot `off`. Clusters are a power of two slots long (the
    /// configuration checks it), so a shift does instead of a division, which the slot
    /// paths would otherwise pay several times per page.
    #[inline]
    fn cluster_of(&self, off: u32) -> u32 {
        off >> self.cluster_slots.trailing_zeros()
    }

    /// `alloc_swap_scan_cluster`: the first `nr` free slots of cluster `c` at or after
    /// `from` that start at a multiple of `nr`.
    #[inline]
    pub(super) fn take_in_cluster(&self, c: u32, from: u32, nr: u32) -> Option<u32> {
        let end = ((c + 1) * self.cluster_slots).min(self.max());
        if nr == 1 {
            // Order 0, the common case: the plain scan, without the block checks.
            let start = from.max(c * self.cluster_slots);
            let words = self.slots.get(start as usize..end as usize)?;
            return first_free(words).map(|i| start + i as u32);
        }
        // The aligned blocks of `nr` slots that fit before `end`, each tested word by word.
        let start = from.max(c * self.cluster_slots).next_multiple_of(nr);
        let words = self.slots.get(start as usize..end as usize)?;
        words
            .chunks_exact(nr as usize)
            .position(|block| block.iter().all(|&w| w & BUSY_BITS == 0))
            .map(|i| start + i as u32 * nr)
    }

    /// Marks the end of allocation from cluster `c` via a hint (`relocate_cluster`).
    fn retire(&mut self, c: u32) {
        let cl = &mut self.clusters[c as usize];
        if cl.state == ClusterState::Current {
            cl.state = if cl.used == self.cluster_slots {
                ClusterState::Full
            } else if cl.used == 0 {
                cl.order = 0;
                self.free_clusters.push_back(c);
                ClusterState::Free
            } else {
                if self.lists == ClusterLists::PerOrder {
                    self.nonfull_clusters[cl.order as usize].push_back(c);
                }
                ClusterState::Nonfull
            };
        }
    }

    /// Puts cluster `c`, just allocated from, back on a list (`relocate_cluster`): among
    /// the full ones, or at the tail of its order's fragmented clusters.
    fn relocate(&mut self, c: u32) {
        let cl = &mut self.clusters[c as usize];
        debug_assert!(cl.used > 0, "cluster {c} relocated empty");
        cl.state = if cl.used == self.cluster_slots {
            ClusterState::Full
        } else {
            self.frag_clusters[cl.order as usize].push_back(c);
            ClusterState::Nonfull
        };
    }

    fn queue(&mut self, list: List) -> &mut VecDeque<u32> {
        match list {
            List::Free => &mut self.free_clusters,
            List::Nonfull(o) => &mut self.nonfull_clusters[o as usize],
            List::Frag(o) => &mut self.frag_clusters[o as usize],
        }
    }

    /// Isolates the clusters queued on `list` (`isolate_lock_cluster`) and scans each
    /// from its start for `nr` slots; clusters without room go back to the tail, so each
    /// is tried once. A free cluster takes `order`.
    fn refill(&mut self, list: List, order: u8, nr: u32) -> Option<u32> {
        for _ in 0..self.queue(list).len() {
            let c = self.queue(list).pop_front()?;
            let cl = &mut self.clusters[c as usize];
            match list {
                // The clusters holding the header or the device's end start on the free
                // list here so that order-0 allocation opens them in index order; the
                // kernel's `setup_clusters` makes them order-0 non-full clusters, which
                // they become when a larger order finds them first.
                List::Free
                    if cl.state == ClusterState::Free
                        && order > 0
                        && cl.used > 0
                        && cl.used < self.cluster_slots =>
                {
                    cl.state = ClusterState::Nonfull;
                    self.nonfull_clusters[0].push_back(c);
                    continue;
                }
                List::Free if cl.state == ClusterState::Free => cl.order = order,
                List::Nonfull(o) | List::Frag(o) if cl.state == ClusterState::Nonfull && cl.order == o => {}
                _ => continue,
            }
            cl.state = ClusterState::Current;
            if let Some(off) = self.take_in_cluster(c, 0, nr) {
                return Some(off);
            }
            self.retire(c);
        }
        None
    }

    /// `cluster_alloc_swap_entry`: `2^order` free slots, aligned, in one cluster, from the
    /// first of `plan`'s sources that has them; records `head`'s frames as their
    /// swap-cache folio.
    pub(super) fn alloc(&mut self, cpu: CpuId, order: u8, head: Pfn, plan: &SlotPlan) -> Option<u32> {
        let cpu = cpu.index();
        let nr = 1u32 << order;
        if !self.writeok
            || self.inuse + nr > self.pages()
            || nr > self.cluster_slots
            || (order > 0 && !self.blkdev)
        {
            return None;
        }
        let h = match self.hints.len() {
            _ if self.rotational => 0,
            n if cpu < n => cpu,
            n => cpu % n,
        };
        for &source in plan.sources {
            let found = match source {
                SlotSource::Current => self.in_current(h, order, nr),
                // Since 6.14 ("prefer nonfull over free clusters") a device without page
                // discard refills partly used clusters before opening a free one.
                SlotSource::Nonfull => self.refill(List::Nonfull(order), order, nr),
                SlotSource::Free => self.refill(List::Free, order, nr),
                SlotSource::Frag => self.refill(List::Frag(order), order, nr),
                SlotSource::Steal if order == 0 => {
                    (1..NR_ORDERS as u8).find_map(|o| self.refill(List::Nonfull(o), 0, 1))
                }
                SlotSource::Scan if order == 0 => {
                    let off = self.scan(h)?;
                    self.take_scanned(h, off, head);
                    return Some(off);
                }
                SlotSource::Steal | SlotSource::Scan => None,
            };
            let Some(off) = found else { continue };
            let c = self.cluster_of(off);
            debug_assert!(
                order == 0 || self.clusters[c as usize].order == order,
                "order-{order} slots at {off}"
            );
            debug_assert_eq!(self.clusters[c as usize].state, ClusterState::Current, "slots at {off}");
            match plan.then {
                AfterAlloc::KeepCurrent => self.take(h, order, off, head),
                AfterAlloc::Relocate => {
                    self.take_slots(order, off, head);
                    if self.hints[h][order as usize].is_some_and(|hint| self.cluster_of(hint) == c) {
                        self.hints[h][order as usize] = None;
                    }
                    self.relocate(c);
                }
            }
            return Some(off);
        }
        None
    }

    /// The CPU's current cluster of `order`, from hint `h` on: `nr` free slots, or the
    /// cluster given up when it has none.
    #[inline]
    fn in_current(&mut self, h: usize, order: u8, nr: u32) -> Option<u32> {
        let hint = self.hints[h][order as usize]?;
        let c = self.cluster_of(hint);
        let cl = self.clusters[c as usize];
        // Order 0 may continue in a cluster of any order (`cluster_is_usable`).
        if cl.state != ClusterState::Current || (order != 0 && cl.order != order) {
            return None;
        }
        // The common case: a free slot follows the hint in the CPU's cluster, most often
        // at the hint itself (a hint is always below the device's end).
        if order == 0 && self.is_free(hint) {
            return Some(hint);
        }
        let found = self.take_in_cluster(c, hint, nr);
        if found.is_none() {
            self.retire(c);
        }
        found
    }

    /// `scan_swap_map_slots`'s scan (before 6.12): the first free slot from hint `h`'s scan
    /// position to the device's end, then from slot 1, whatever cluster it is in.
    fn scan(&self, h: usize) -> Option<u32> {
        let from = self.scan_next[h].clamp(1, self.max());
        let after = first_free(&self.slots[from as usize..]).map(|i| from + i as u32);
        after.or_else(|| first_free(&self.slots[1..from as usize]).map(|i| 1 + i as u32))
    }

    /// Gives the slot at `off`, found by a scan, to the page `head`: a free cluster it
    /// lies in is free no more, a partly used one may be full now, and the scan goes on
    /// from the next slot. No CPU's current cluster changes.
    fn take_scanned(&mut self, h: usize, off: u32, head: Pfn) {
        let c = self.cluster_of(off);
        if self.clusters[c as usize].state == ClusterState::Free {
            let cl = &mut self.clusters[c as usize];
            cl.state = ClusterState::Nonfull;
            cl.order = 0;
            if self.lists == ClusterLists::PerOrder {
                self.nonfull_clusters[0].push_back(c);
            }
        }
        self.take_slots(0, off, head);
        let cl = &mut self.clusters[c as usize];
        if cl.state == ClusterState::Nonfull && cl.used == self.cluster_slots {
            cl.state = ClusterState::Full;
        }
        self.scan_next[h] = off + 1;
    }

    /// Gives the `2^order` slots from `off` to the folio headed by `head` and moves hint
    /// `h` of the order past them, retiring the cluster when they end it. A cluster that
    /// hint held before, if another, is given up first.
    #[inline]
    fn take(&mut self, h: usize, order: u8, off: u32, head: Pfn) {
        let c = self.take_slots(order, off, head);
        if let Some(old) = self.hints[h][order as usize] {
            let old_c = self.cluster_of(old);
            if old_c != c {
                self.retire(old_c);
            }
        }
        let next = off + (1u32 << order);
        if next & (self.cluster_slots - 1) == 0 || next >= self.max() {
            self.hints[h][order as usize] = None;
            self.retire(c);
        } else {
            self.hints[h][order as usize] = Some(next);
        }
    }

    /// Gives the `2^order` slots from `off` to the folio headed by `head`; returns their
    /// cluster.
    #[inline]
    fn take_slots(&mut self, order: u8, off: u32, head: Pfn) -> u32 {
        let nr = 1u32 << order;
        let c = self.cluster_of(off);
        for i in 0..nr {
            debug_assert!(self.is_free(off + i), "slot {} handed out busy", off + i);
            self.set_slot_cache(off + i, TAG_FRAME | (head.0 + i));
        }
        self.inuse += nr;
        self.clusters[c as usize].used += nr;
        c
    }

    /// Frees slot `off`, which nothing references or caches any more
    /// (`swap_entries_free`): its word is cleared, zero mark included, and its zswap
    /// entry, if any, is returned for `zswap_invalidate` to free.
    #[inline]
    pub(super) fn release(&mut self, off: u32) -> Option<u32> {
        self.set_slot_cache(off, 0);
        self.inuse -= 1;
        let c = self.cluster_of(off);
        let cl = &mut self.clusters[c as usize];
        cl.used -= 1;
        match cl.state {
            ClusterState::Full => {
                cl.state = ClusterState::Nonfull;
                if self.lists == ClusterLists::PerOrder {
                    self.nonfull_clusters[cl.order as usize].push_back(c);
                }
            }
            ClusterState::Nonfull if cl.used == 0 => {
                cl.state = ClusterState::Free;
                cl.order = 0;
                self.free_clusters.push_back(c);
            }
            _ => {}
        }
        self.set_slot_zero(off, false);
        let e = self.zswap.get_mut(off as usize)?;
        (*e != NO_ZSWAP).then(|| std::mem::replace(e, NO_ZSWAP))
    }

    /// Recounts the device `d` from scratch and checks the cluster and list bookkeeping.
    pub(super) fn check_invariants(&self, d: usize) {
        assert_eq!(self.slot_count(0), BAD_SLOT, "device {d}: header slot lost its mark");
        let mut inuse = 0;
        let mut unusable = vec![0u32; self.clusters.len()];
        unusable[0] = 1;
        let last = self.clusters.len() - 1;
        unusable[last] += self.clusters.len() as u32 * self.cluster_slots - self.max();
        let mut per_cluster = unusable.clone();
        for off in 1..self.max() {
            let w = self.slot_cache(off);
            assert_ne!(w & TAG_MASK, TAG_MASK, "device {d} slot {off}: corrupt cache word");
            if !self.is_free(off) {
                inuse += 1;
                per_cluster[(off / self.cluster_slots) as usize] += 1;
            } else {
                // Clear to the last bit, which `clone` relies on for free clusters.
                assert_eq!(
                    self.slots[off as usize], 0,
                    "device {d} slot {off}: free slot keeps a shadow or mark"
                );
            }
        }
        assert_eq!(inuse, self.inuse, "device {d}: inuse counter");
        // Which lists name each cluster: bit `o` for order `o`'s non-full list, and the
        // top bit for the free list. Stale entries are allowed; missing ones are not.
        const ON_FREE: u16 = 1 << 15;
        let mut listed = vec![0u16; self.clusters.len()];
        self.free_clusters.iter().for_each(|&c| listed[c as usize] |= ON_FREE);
        for (o, list) in self.nonfull_clusters.iter().chain(&self.frag_clusters).enumerate() {
            list.iter().for_each(|&c| listed[c as usize] |= 1 << (o % NR_ORDERS));
        }
        let mut hinted = vec![false; self.clusters.len()];
        self.hints
            .iter()
            .flatten()
            .flatten()
            .for_each(|&off| hinted[(off / self.cluster_slots) as usize] = true);
        for (c, cl) in self.clusters.iter().enumerate() {
            assert_eq!(cl.used, per_cluster[c], "device {d} cluster {c}: used counter");
            assert!(1 << cl.order <= self.cluster_slots, "device {d} cluster {c}: order {}", cl.order);
            let ok = match cl.state {
                ClusterState::Free => cl.used == unusable[c] && listed[c] & ON_FREE != 0,
                ClusterState::Nonfull => {
                    cl.used < self.cluster_slots
                        && (self.lists == ClusterLists::FreeOnly || listed[c] & 1 << cl.order != 0)
                }
                ClusterState::Full => cl.used == self.cluster_slots,
                ClusterState::Current => hinted[c],
            };
            assert!(ok, "device {d} cluster {c}: {cl:?} disagrees with its slots, lists or hints");
        }
    }
}
