//! Swap devices: slot maps, allocation clusters, priorities and the swap cache.
//!
//! Models `mm/swapfile.c` (6.12–6.18 cluster allocator) and the swap cache of
//! `mm/swap_state.c`. Each device has one count byte per slot (how many PTEs reference it)
//! and one swap-cache word per slot that holds either the frame caching the slot or, after
//! reclaim dropped that frame, a workingset shadow. A slot is allocated while its count is
//! non-zero or a frame caches it (the kernel's `SWAP_HAS_CACHE`). Slot 0 holds the swap
//! header and is never allocated.
//!
//! Allocation follows `cluster_alloc_swap_entry` (6.14 and later, device without page
//! discard). A folio of order `k` takes `2^k` contiguous slots whose first offset is a
//! multiple of `2^k`, all in one cluster dedicated to order `k`: a cluster's order is set
//! by the first allocation from it and holds until the cluster is empty again. For each
//! order the allocator continues in the current cluster of that order (one per CPU on
//! non-rotational devices, one per device on rotational ones), else refills a partly used
//! cluster of that order, else opens a free one. Order 0 finally steals from partly used
//! clusters of higher orders. Only block devices take large folios (`SWP_BLKDEV`).
//! Devices are chosen by priority, round-robin among equal priorities.
//!
//! Freeing single slots of a large-order cluster leaves holes that only order-0 stealing
//! can fill; that fragmentation is the kernel's too.
//!
//! Simplified: no discard, no count continuation (a slot is referenced by at most one PTE
//! since anonymous memory is never shared here), and the kernel's fragment lists are not
//! told apart from the non-full lists.

use crate::ids::{CpuId, DeviceId, Pfn, SwapSlot};
use std::collections::VecDeque;

const BAD_SLOT: u8 = 0xff;
/// No zswap entry in a slot.
const NO_ZSWAP: u32 = u32::MAX;
const TAG_FRAME: u32 = 1 << 30;
const TAG_SHADOW: u32 = 2 << 30;
const TAG_MASK: u32 = 3 << 30;
/// Bits of payload a shadow entry keeps in its swap-cache word.
pub(crate) const SHADOW_BITS: u32 = 30;
/// Folio orders with their own clusters and hints (`SWAP_NR_ORDERS`): 0 up to the PMD order.
const NR_ORDERS: usize = crate::thp::PMD_ORDER as usize + 1;

/// A shadow entry left in the swap cache when reclaim drops a folio: `SHADOW_BITS` bits
/// whose encoding belongs to the LRU policy that evicted the folio (the classic lists'
/// is `crate::mm::workingset::ClassicShadow`). The swap cache stores it uninterpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shadow(pub(crate) u32);

/// What a swap-cache word holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheEntry {
    Empty,
    Frame(Pfn),
    Shadow(Shadow),
}

impl CacheEntry {
    /// What the cache word `w` of `slot` holds.
    #[inline]
    fn decode(w: u32, slot: SwapSlot) -> CacheEntry {
        match w & TAG_MASK {
            0 => CacheEntry::Empty,
            TAG_FRAME => CacheEntry::Frame(Pfn(w & !TAG_MASK)),
            TAG_SHADOW => CacheEntry::Shadow(Shadow(w & !TAG_MASK)),
            _ => unreachable!("corrupt swap cache word {w:#x} at {slot}"),
        }
    }
}

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
}

/// Where a slot's count sits in its packed word (see `SwapDevice::slots`).
const COUNT_SHIFT: u32 = 32;
/// A slot's zero mark in its packed word.
const ZERO_BIT: u64 = 1 << 40;
/// The bits of a slot's word that a slot in use has one of: a swap count, or a frame in
/// the swap cache. A slot is free when its word has none ([`SwapDevice::is_free`]).
const BUSY_BITS: u64 = (0xff << COUNT_SHIFT) | TAG_FRAME as u64;

/// The index of the first free slot's word in `words`. Usually the first word is free
/// (the slot after the last one allocated); otherwise, as a reused cluster can hold long
/// runs of slots in use, the scan tests four words a step, with no early exit inside the
/// four, and finds the free one among them afterwards.
#[inline]
fn first_free(words: &[u64]) -> Option<usize> {
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
    pub(crate) rotational: bool,
    /// Accepting new allocations (`SWP_WRITEOK`: cleared by swapoff, set by swapon).
    writeok: bool,
    /// A block device rather than a swap file (`SWP_BLKDEV`): only these take large
    /// folios whole. Set by swapon.
    pub(crate) blkdev: bool,
    /// Per slot, packed in one word: the swap-cache word (bits 0..32: a frame, a shadow or
    /// nothing, `TAG_*`), the swap count (`si->swap_map`, bits 32..40) and the zero mark
    /// (its bit of `si->zeromap`, bit 40: the page was all zeros when written). The paths
    /// that read one read the others, so one cache line serves them all; and an all-zero
    /// word is a free slot, so the table starts as untouched zeroed memory.
    slots: Vec<u64>,
    /// zswap's entry per slot (`NO_ZSWAP` for none); empty while zswap is off.
    zswap: Vec<u32>,
    /// Allocated slots, header excluded.
    inuse: u32,
    cluster_slots: u32,
    clusters: Vec<Cluster>,
    free_clusters: VecDeque<u32>,
    /// Partly used clusters of each order, the kernel's `frag_clusters` folded in.
    nonfull_clusters: [VecDeque<u32>; NR_ORDERS],
    /// Next offset to try for each order, per CPU on non-rotational devices
    /// (`percpu_cluster->next[order]`) or a single entry on rotational ones
    /// (`global_cluster->next[order]`).
    hints: Vec<[Option<u32>; NR_ORDERS]>,
}

impl Clone for SwapDevice {
    /// A free cluster's words are all zero (a released slot's word is cleared), so the
    /// copy starts as untouched zeroed memory and copies only the clusters in use: most of
    /// a large device's table is never touched in the copy either.
    fn clone(&self) -> SwapDevice {
        let mut slots = vec![0u64; self.slots.len()];
        let per = self.cluster_slots as usize;
        for (c, _) in self.clusters.iter().enumerate().filter(|(_, cl)| cl.state != ClusterState::Free) {
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
            hints: self.hints.clone(),
        }
    }
}

impl SwapDevice {
    fn new(slots: u32, priority: i32, rotational: bool, cluster_slots: u32, cpus: usize) -> SwapDevice {
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
            blkdev: true,
            slots: words,
            zswap: Vec::new(),
            inuse: 0,
            cluster_slots,
            clusters,
            free_clusters,
            nonfull_clusters: Default::default(),
            hints: vec![[None; NR_ORDERS]; if rotational { 1 } else { cpus }],
        }
    }

    /// Slots including the header (the kernel's `si->max`).
    pub(crate) fn max(&self) -> u32 {
        self.slots.len() as u32
    }

    #[inline]
    fn slot_cache(&self, off: u32) -> u32 {
        self.slots[off as usize] as u32
    }
    #[inline]
    fn slot_count(&self, off: u32) -> u8 {
        (self.slots[off as usize] >> COUNT_SHIFT) as u8
    }
    #[inline]
    fn slot_zero(&self, off: u32) -> bool {
        self.slots[off as usize] & ZERO_BIT != 0
    }
    #[inline]
    fn set_slot_cache(&mut self, off: u32, w: u32) {
        let s = &mut self.slots[off as usize];
        *s = (*s & !u64::from(u32::MAX)) | u64::from(w);
    }
    #[inline]
    fn set_slot_count(&mut self, off: u32, c: u8) {
        let s = &mut self.slots[off as usize];
        *s = (*s & !(0xff << COUNT_SHIFT)) | (u64::from(c) << COUNT_SHIFT);
    }
    #[inline]
    fn set_slot_zero(&mut self, off: u32, zero: bool) {
        let s = &mut self.slots[off as usize];
        *s = if zero { *s | ZERO_BIT } else { *s & !ZERO_BIT };
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
    fn is_free(&self, off: u32) -> bool {
        self.slots[off as usize] & BUSY_BITS == 0
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
    fn take_in_cluster(&self, c: u32, from: u32, nr: u32) -> Option<u32> {
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
                self.nonfull_clusters[cl.order as usize].push_back(c);
                ClusterState::Nonfull
            };
        }
    }

    fn queue(&mut self, list: List) -> &mut VecDeque<u32> {
        match list {
            List::Free => &mut self.free_clusters,
            List::Nonfull(o) => &mut self.nonfull_clusters[o as usize],
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
                List::Nonfull(o) if cl.state == ClusterState::Nonfull && cl.order == o => {}
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

    /// `cluster_alloc_swap_entry`: `2^order` free slots, aligned, in one cluster of that
    /// order; records `head`'s frames as their swap-cache folio.
    fn alloc(&mut self, cpu: CpuId, order: u8, head: Pfn) -> Option<u32> {
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
        if let Some(hint) = self.hints[h][order as usize] {
            let c = self.cluster_of(hint);
            let cl = self.clusters[c as usize];
            // Order 0 may continue in a cluster of any order (`cluster_is_usable`).
            if cl.state == ClusterState::Current && (order == 0 || cl.order == order) {
                // The common case: a free slot follows the hint in the CPU's cluster,
                // most often at the hint itself (a hint is always below the device's end).
                if order == 0 && self.is_free(hint) {
                    self.take(h, 0, hint, head);
                    return Some(hint);
                }
                if let Some(off) = self.take_in_cluster(c, hint, nr) {
                    self.take(h, order, off, head);
                    return Some(off);
                }
                self.retire(c);
            }
        }
        // Since 6.14 ("prefer nonfull over free clusters") a device without page discard
        // refills partly used clusters before opening a free one.
        let mut found =
            self.refill(List::Nonfull(order), order, nr).or_else(|| self.refill(List::Free, order, nr));
        if order == 0 {
            found = found.or_else(|| (1..NR_ORDERS as u8).find_map(|o| self.refill(List::Nonfull(o), 0, 1)));
        }
        let off = found?;
        debug_assert!(
            order == 0 || self.clusters[(off / self.cluster_slots) as usize].order == order,
            "order-{order} slots at {off}"
        );
        self.take(h, order, off, head);
        Some(off)
    }

    /// Gives the `2^order` slots from `off` to the folio headed by `head` and moves hint
    /// `h` of the order past them, retiring the cluster when they end it.
    #[inline]
    fn take(&mut self, h: usize, order: u8, off: u32, head: Pfn) {
        let nr = 1u32 << order;
        let c = self.cluster_of(off);
        for i in 0..nr {
            self.set_slot_cache(off + i, TAG_FRAME | (head.0 + i));
        }
        self.inuse += nr;
        self.clusters[c as usize].used += nr;
        let next = off + nr;
        if next & (self.cluster_slots - 1) == 0 || next >= self.max() {
            self.hints[h][order as usize] = None;
            self.retire(c);
        } else {
            self.hints[h][order as usize] = Some(next);
        }
    }

    fn release(&mut self, off: u32) {
        self.set_slot_cache(off, 0);
        self.inuse -= 1;
        let c = self.cluster_of(off);
        let cl = &mut self.clusters[c as usize];
        cl.used -= 1;
        match cl.state {
            ClusterState::Full => {
                cl.state = ClusterState::Nonfull;
                self.nonfull_clusters[cl.order as usize].push_back(c);
            }
            ClusterState::Nonfull if cl.used == 0 => {
                cl.state = ClusterState::Free;
                cl.order = 0;
                self.free_clusters.push_back(c);
            }
            _ => {}
        }
    }
}

/// All swap devices plus the global free-slot accounting.
#[derive(Clone, Debug, Default)]
pub(crate) struct Swap {
    pub(crate) devices: Vec<SwapDevice>,
    /// Device indices by descending priority; equal priorities rotate.
    avail: Vec<u8>,
    /// zswap is configured: devices keep an entry per slot.
    pub(crate) zswap_on: bool,
    /// zswap entries whose slots were freed, for the memory model to release.
    zswap_orphans: Vec<u32>,
}

impl Swap {
    /// Activates a device (`swapon`). `priority` None gives -2, -3, ... in swapon order.
    pub(crate) fn swapon(&mut self, spec: SwaponSpec) -> DeviceId {
        let prio = spec
            .priority
            .map(i32::from)
            .unwrap_or(-2 - self.devices.iter().filter(|d| d.priority < 0).count() as i32);
        let id = self.devices.len() as u8;
        let mut dev = SwapDevice::new(spec.slots, prio, spec.rotational, spec.cluster_slots, spec.cpus);
        dev.blkdev = spec.blkdev;
        if self.zswap_on {
            dev.zswap = vec![NO_ZSWAP; spec.slots as usize];
        }
        self.devices.push(dev);
        self.avail.push(id);
        self.sort_avail();
        DeviceId(id)
    }

    fn sort_avail(&mut self) {
        let devices = &self.devices;
        self.avail.sort_by_key(|&d| std::cmp::Reverse(devices[d as usize].priority));
    }

    /// Whether `device` takes new allocations (`SWP_WRITEOK`).
    pub(crate) fn writeok(&self, device: DeviceId) -> bool {
        self.devices[device.0 as usize].writeok
    }

    /// Swapon of `device`: it takes new allocations again (`SWP_WRITEOK` set).
    pub(crate) fn enable(&mut self, device: DeviceId) {
        self.devices[device.0 as usize].writeok = true;
    }

    /// The start of swapoff of `device`: it takes no new allocations (`SWP_WRITEOK`
    /// cleared).
    pub(crate) fn disable(&mut self, device: DeviceId) {
        self.devices[device.0 as usize].writeok = false;
    }

    pub(crate) fn total_slots(&self) -> u64 {
        self.devices.iter().filter(|d| d.writeok).map(|d| u64::from(d.pages())).sum()
    }
    pub(crate) fn free_slots(&self) -> u64 {
        self.devices.iter().filter(|d| d.writeok).map(|d| u64::from(d.pages() - d.inuse)).sum()
    }
    pub(crate) fn used_slots(&self) -> u64 {
        self.devices.iter().map(|d| u64::from(d.inuse)).sum()
    }

    /// `vm_swap_full()`: less than half of the swap space is free.
    pub(crate) fn vm_swap_full(&self) -> bool {
        self.free_slots() * 2 < self.total_slots()
    }

    /// Allocates a slot for the order-0 folio `pfn` and records `pfn` as its swap-cache
    /// folio (`folio_alloc_swap`). `None` when every device is full.
    pub(crate) fn alloc(&mut self, cpu: CpuId, pfn: Pfn) -> Option<SwapSlot> {
        self.alloc_folio(cpu, 0, pfn)
    }

    /// `folio_alloc_swap` for a folio of `order` headed by `head`: returns the first of
    /// `2^order` contiguous slots on one device, its offset a multiple of `2^order`, and
    /// records frame `head + i` as the swap-cache folio of slot `i`. Devices are tried by
    /// priority; `None` when none has a cluster with room for the order, and the caller
    /// then splits the folio.
    pub(crate) fn alloc_folio(&mut self, cpu: CpuId, order: u8, head: Pfn) -> Option<SwapSlot> {
        if let [d] = self.avail[..] {
            // One device: no priority group to walk or rotate.
            let off = self.devices[d as usize].alloc(cpu, order, head)?;
            return Some(SwapSlot { device: DeviceId(d), offset: off });
        }
        let mut i = 0;
        while i < self.avail.len() {
            let prio = self.devices[self.avail[i] as usize].priority;
            let group_end = i + self.avail[i..]
                .iter()
                .take_while(|&&d| self.devices[d as usize].priority == prio)
                .count();
            for k in i..group_end {
                let d = self.avail[k];
                if let Some(off) = self.devices[d as usize].alloc(cpu, order, head) {
                    // Requeue behind its equal-priority siblings (plist_requeue).
                    self.avail[k..group_end].rotate_left(1);
                    return Some(SwapSlot { device: DeviceId(d), offset: off });
                }
            }
            i = group_end;
        }
        None
    }

    /// `swap_alloc_hibernation_slot`: one slot of `dev` for the hibernation image (from
    /// `alloc_swapdev_block`), by the same cluster allocator as order-0 swap-out. It is
    /// held with a count of one and no swap-cache folio, as the kernel's swap map holds it
    /// without any PTE, until [`Swap::free_hibernation_slot`]. `None` when the device is
    /// full or swapped off.
    pub(crate) fn alloc_hibernation_slot(&mut self, dev: DeviceId) -> Option<SwapSlot> {
        let d = &mut self.devices[dev.0 as usize];
        let off = d.alloc(CpuId(0), 0, Pfn(0))?;
        d.set_slot_cache(off, 0);
        d.set_slot_count(off, 1);
        Some(SwapSlot { device: dev, offset: off })
    }

    /// Frees a slot of the hibernation image (`free_all_swap_pages` after resume).
    pub(crate) fn free_hibernation_slot(&mut self, slot: SwapSlot) {
        debug_assert_eq!(self.count(slot), 1, "image {slot} is held once");
        self.dec_count(slot);
    }

    #[inline]
    pub(crate) fn count(&self, slot: SwapSlot) -> u8 {
        self.devices[slot.device.0 as usize].slot_count(slot.offset)
    }
    #[inline]
    pub(crate) fn inc_count(&mut self, slot: SwapSlot) {
        let dev = &mut self.devices[slot.device.0 as usize];
        let c = dev.slot_count(slot.offset);
        assert!(c < BAD_SLOT - 1, "swap count overflow at {slot}");
        dev.set_slot_count(slot.offset, c + 1);
    }
    /// Drops one PTE reference (`swap_free`); releases the slot if nothing else holds it.
    #[inline]
    pub(crate) fn dec_count(&mut self, slot: SwapSlot) {
        let dev = &mut self.devices[slot.device.0 as usize];
        let c = dev.slot_count(slot.offset);
        assert!(c > 0 && c != BAD_SLOT, "swap count underflow at {slot}");
        dev.set_slot_count(slot.offset, c - 1);
        if c == 1 {
            self.release_if_unused(slot);
        }
    }

    /// True while the slot is allocated (referenced or cached).
    #[cfg(test)]
    fn in_use(&self, slot: SwapSlot) -> bool {
        let dev = &self.devices[slot.device.0 as usize];
        slot.offset != 0 && !dev.is_free(slot.offset)
    }

    #[inline]
    pub(crate) fn cache_entry(&self, slot: SwapSlot) -> CacheEntry {
        CacheEntry::decode(self.devices[slot.device.0 as usize].slot_cache(slot.offset), slot)
    }

    /// Every slot of `dev` that a frame caches, in offset order.
    pub(crate) fn cached_slots(&self, dev: DeviceId) -> Vec<(u32, Pfn)> {
        let d = &self.devices[dev.0 as usize];
        let per = d.cluster_slots as usize;
        // A cached slot is allocated, so free clusters hold none: their part of the table,
        // most of a large device's, is never read.
        d.clusters
            .iter()
            .enumerate()
            .filter(|(_, cl)| cl.state != ClusterState::Free)
            .flat_map(|(c, _)| {
                let first = c * per;
                let words = &d.slots[first..(first + per).min(d.slots.len())];
                words.iter().enumerate().map(move |(i, &w)| ((first + i) as u32, w as u32))
            })
            .filter(|&(_, w)| w & TAG_MASK == TAG_FRAME)
            .map(|(off, w)| (off, Pfn(w & !TAG_MASK)))
            .collect()
    }

    /// Prefetches the slot's count and swap-cache word (see `Mm::warm_batch`).
    #[inline]
    pub(crate) fn prefetch_slot(&self, slot: SwapSlot) {
        if let Some(words) = self.devices[slot.device.0 as usize].slots.get(slot.offset as usize) {
            crate::prefetch::prefetch(words);
        }
    }

    #[inline]
    pub(crate) fn cached_frame(&self, slot: SwapSlot) -> Option<Pfn> {
        let w = self.devices[slot.device.0 as usize].slot_cache(slot.offset);
        (w & TAG_MASK == TAG_FRAME).then_some(Pfn(w & !TAG_MASK))
    }

    /// Inserts a folio for an allocated slot (swap-in); returns the shadow it replaces.
    #[inline]
    pub(crate) fn cache_insert(&mut self, slot: SwapSlot, pfn: Pfn) -> Option<Shadow> {
        let dev = &mut self.devices[slot.device.0 as usize];
        let w = dev.slot_cache(slot.offset);
        assert!(w & TAG_MASK != TAG_FRAME, "{slot} already cached");
        assert!(dev.slot_count(slot.offset) > 0, "caching free {slot}");
        dev.set_slot_cache(slot.offset, TAG_FRAME | pfn.0);
        match CacheEntry::decode(w, slot) {
            CacheEntry::Shadow(s) => Some(s),
            _ => None,
        }
    }

    /// Whether a swap-in must read `slot`: a PTE still references it and no folio caches
    /// it (`count > 0` and not cached, with one lookup of the slot's word).
    #[inline]
    pub(crate) fn wants_read(&self, slot: SwapSlot) -> bool {
        let dev = &self.devices[slot.device.0 as usize];
        dev.slot_count(slot.offset) > 0 && dev.slot_cache(slot.offset) & TAG_MASK != TAG_FRAME
    }

    /// Removes the cached folio (`__delete_from_swap_cache`), leaving `shadow` behind if the
    /// slot stays allocated; releases the slot when no PTE references it.
    #[inline]
    pub(crate) fn cache_delete(&mut self, slot: SwapSlot, shadow: Option<Shadow>) {
        let dev = &mut self.devices[slot.device.0 as usize];
        assert!(dev.slot_cache(slot.offset) & TAG_MASK == TAG_FRAME, "{slot} not cached");
        let w = match shadow {
            Some(s) => TAG_SHADOW | (s.0 & !TAG_MASK),
            None => 0,
        };
        dev.set_slot_cache(slot.offset, w);
        self.release_if_unused(slot);
    }

    #[inline]
    fn release_if_unused(&mut self, slot: SwapSlot) {
        let dev = &mut self.devices[slot.device.0 as usize];
        if dev.slot_count(slot.offset) == 0 && dev.slot_cache(slot.offset) & TAG_MASK != TAG_FRAME {
            Self::release(dev, &mut self.zswap_orphans, slot.offset);
        }
    }

    /// Frees slot `off` of `dev`, which nothing references or caches any more.
    #[inline]
    fn release(dev: &mut SwapDevice, zswap_orphans: &mut Vec<u32>, off: u32) {
        dev.release(off);
        // swap_entries_free: the zero mark goes, and zswap_invalidate frees the slot's
        // entry (the memory model frees the orphan at its next zswap step).
        dev.set_slot_zero(off, false);
        if let Some(e) = dev.zswap.get_mut(off as usize) {
            if *e != NO_ZSWAP {
                zswap_orphans.push(*e);
                *e = NO_ZSWAP;
            }
        }
    }

    /// Drops one PTE reference to `slot`, whose swap-cache folio is order 0, unlocked and
    /// not under writeback; when it was the last, drops the swap-cache copy too and frees
    /// the slot. The same as [`Swap::dec_count`] then `folio_free_swap`, in one step:
    /// swapoff's `unuse_pte` does this for every page. Returns whether the copy went.
    #[inline]
    pub(crate) fn put_cached_order0(&mut self, slot: SwapSlot) -> bool {
        let dev = &mut self.devices[slot.device.0 as usize];
        let c = dev.slot_count(slot.offset);
        assert!(c > 0 && c != BAD_SLOT, "swap count underflow at {slot}");
        debug_assert!(dev.slot_cache(slot.offset) & TAG_MASK == TAG_FRAME, "{slot} not cached");
        if c > 1 {
            dev.set_slot_count(slot.offset, c - 1);
            return false;
        }
        dev.set_slot_count(slot.offset, 0);
        dev.set_slot_cache(slot.offset, 0);
        Self::release(dev, &mut self.zswap_orphans, slot.offset);
        true
    }

    /// Whether the slot's page was all zeros when written (`swap_zeromap_batch`).
    #[inline]
    pub(crate) fn is_zero(&self, slot: SwapSlot) -> bool {
        self.devices[slot.device.0 as usize].slot_zero(slot.offset)
    }

    /// Marks the slot's page zero-filled, or clears the mark.
    pub(crate) fn set_zero(&mut self, slot: SwapSlot, zero: bool) {
        self.devices[slot.device.0 as usize].set_slot_zero(slot.offset, zero);
    }

    /// The zswap entry of a slot, if any.
    #[inline]
    pub(crate) fn zswap_entry(&self, slot: SwapSlot) -> Option<u32> {
        let e = *self.devices[slot.device.0 as usize].zswap.get(slot.offset as usize)?;
        (e != NO_ZSWAP).then_some(e)
    }

    /// Records (or, with `None`, removes) the zswap entry of a slot; returns the one it
    /// replaces.
    pub(crate) fn set_zswap_entry(&mut self, slot: SwapSlot, entry: Option<u32>) -> Option<u32> {
        let e = &mut self.devices[slot.device.0 as usize].zswap[slot.offset as usize];
        let old = std::mem::replace(e, entry.unwrap_or(NO_ZSWAP));
        (old != NO_ZSWAP).then_some(old)
    }

    /// Entries whose slots were freed and not yet taken.
    pub(crate) fn zswap_orphans_len(&self) -> usize {
        self.zswap_orphans.len()
    }

    /// Entries whose slots were freed since the last call (`zswap_invalidate`).
    pub(crate) fn take_zswap_orphans(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.zswap_orphans);
    }

    /// Every slot of `dev` that holds a zswap entry, with the entry.
    pub(crate) fn zswap_slots(&self, dev: DeviceId) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.devices[dev.0 as usize]
            .zswap
            .iter()
            .enumerate()
            .filter(|(_, &e)| e != NO_ZSWAP)
            .map(|(off, &e)| (off as u32, e))
    }

    /// Recounts every device from scratch and checks the cluster and list bookkeeping.
    pub(crate) fn check_invariants(&self) {
        for (d, dev) in self.devices.iter().enumerate() {
            assert_eq!(dev.slot_count(0), BAD_SLOT, "device {d}: header slot lost its mark");
            let mut inuse = 0;
            let mut unusable = vec![0u32; dev.clusters.len()];
            unusable[0] = 1;
            let last = dev.clusters.len() - 1;
            unusable[last] += dev.clusters.len() as u32 * dev.cluster_slots - dev.max();
            let mut per_cluster = unusable.clone();
            for off in 1..dev.max() {
                let w = dev.slot_cache(off);
                assert_ne!(w & TAG_MASK, TAG_MASK, "device {d} slot {off}: corrupt cache word");
                if !dev.is_free(off) {
                    inuse += 1;
                    per_cluster[(off / dev.cluster_slots) as usize] += 1;
                } else {
                    // Clear to the last bit, which `clone` relies on for free clusters.
                    assert_eq!(
                        dev.slots[off as usize], 0,
                        "device {d} slot {off}: free slot keeps a shadow or mark"
                    );
                }
            }
            assert_eq!(inuse, dev.inuse, "device {d}: inuse counter");
            // Which lists name each cluster: bit `o` for order `o`'s non-full list, and the
            // top bit for the free list. Stale entries are allowed; missing ones are not.
            const ON_FREE: u16 = 1 << 15;
            let mut listed = vec![0u16; dev.clusters.len()];
            dev.free_clusters.iter().for_each(|&c| listed[c as usize] |= ON_FREE);
            for (o, list) in dev.nonfull_clusters.iter().enumerate() {
                list.iter().for_each(|&c| listed[c as usize] |= 1 << o);
            }
            let mut hinted = vec![false; dev.clusters.len()];
            dev.hints
                .iter()
                .flatten()
                .flatten()
                .for_each(|&off| hinted[(off / dev.cluster_slots) as usize] = true);
            for (c, cl) in dev.clusters.iter().enumerate() {
                assert_eq!(cl.used, per_cluster[c], "device {d} cluster {c}: used counter");
                assert!(1 << cl.order <= dev.cluster_slots, "device {d} cluster {c}: order {}", cl.order);
                let ok = match cl.state {
                    ClusterState::Free => cl.used == unusable[c] && listed[c] & ON_FREE != 0,
                    ClusterState::Nonfull => cl.used < dev.cluster_slots && listed[c] & 1 << cl.order != 0,
                    ClusterState::Full => cl.used == dev.cluster_slots,
                    ClusterState::Current => hinted[c],
                };
                assert!(ok, "device {d} cluster {c}: {cl:?} disagrees with its slots, lists or hints");
            }
        }
    }
}

/// Parameters of a `swapon`.
#[derive(Clone, Debug)]
pub(crate) struct SwaponSpec {
    /// A block device (partition, zram) rather than a swap file: only those hold large
    /// folios whole.
    pub(crate) blkdev: bool,
    pub(crate) slots: u32,
    pub(crate) priority: Option<i16>,
    pub(crate) rotational: bool,
    pub(crate) cluster_slots: u32,
    pub(crate) cpus: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The four-at-a-time scan finds the slot a test of one word at a time finds, over
        /// words of every kind: free, cached, counted, zero-marked, shadows.
        #[test]
        fn first_free_is_the_first_free_word(kinds in proptest::collection::vec(0u8..5, 0..40)) {
            let words: Vec<u64> = kinds
                .iter()
                .map(|k| match k {
                    0 => 0,
                    1 => u64::from(TAG_FRAME | 7),
                    2 => 3 << COUNT_SHIFT,
                    3 => ZERO_BIT | u64::from(TAG_SHADOW | 5),
                    _ => (1 << COUNT_SHIFT) | u64::from(TAG_FRAME),
                })
                .collect();
            let one_by_one = words.iter().position(|&w| (w >> COUNT_SHIFT) as u8 == 0 && w as u32 & TAG_FRAME == 0);
            prop_assert_eq!(first_free(&words), one_by_one);
        }

        /// A block scan finds the first aligned run of `nr` free slots at or after `from` in
        /// a cluster, as testing each aligned offset slot by slot does, on a device whose
        /// last cluster is cut short.
        #[test]
        fn a_block_scan_finds_the_first_aligned_free_run(
            busy in proptest::collection::vec(any::<bool>(), 61),
            c in 0u32..8,
            from in 0u32..64,
            order in 1u8..4,
        ) {
            let mut dev = SwapDevice::new(61, 0, false, 8, 1);
            for (off, &b) in busy.iter().enumerate().skip(1) {
                if b {
                    dev.slots[off] = 1 << COUNT_SHIFT;
                }
            }
            let nr = 1u32 << order;
            let end = ((c + 1) * 8).min(61);
            let first = from.max(c * 8).next_multiple_of(nr);
            let slot_by_slot = (first..end.saturating_sub(nr - 1))
                .step_by(nr as usize)
                .find(|&off| (off..off + nr).all(|s| dev.slots[s as usize] & BUSY_BITS == 0));
            prop_assert_eq!(dev.take_in_cluster(c, from, nr), slot_by_slot);
        }
    }

    fn swap_with(devs: &[(u32, Option<i16>, bool)]) -> Swap {
        let mut s = Swap::default();
        for &(slots, priority, rotational) in devs {
            s.swapon(SwaponSpec { blkdev: true, slots, priority, rotational, cluster_slots: 8, cpus: 2 });
        }
        s
    }

    /// One device of `slots` slots in clusters of 8, for `cpus` CPUs.
    fn one_device(slots: u32, rotational: bool, cpus: usize) -> Swap {
        let mut s = Swap::default();
        s.swapon(SwaponSpec { blkdev: true, slots, priority: None, rotational, cluster_slots: 8, cpus });
        s
    }

    /// Offsets of `n` folios of `order` allocated on `cpu`, checking every slot's cache word.
    fn take_order(s: &mut Swap, cpu: usize, order: u8, n: usize) -> Vec<Option<u32>> {
        (0..n)
            .map(|i| {
                let head = Pfn(1000 * (i as u32 + 1));
                let slot = s.alloc_folio(CpuId::from_index(cpu), order, head)?;
                for k in 0..1 << order {
                    let at = SwapSlot { offset: slot.offset + k, ..slot };
                    assert_eq!((s.cached_frame(at), s.count(at)), (Some(Pfn(head.0 + k)), 0));
                }
                s.check_invariants();
                Some(slot.offset)
            })
            .collect()
    }

    /// Drops the swap-cache folio of each slot, releasing it.
    fn release(s: &mut Swap, offsets: impl IntoIterator<Item = u32>) {
        for offset in offsets {
            s.cache_delete(SwapSlot { device: DeviceId(0), offset }, None);
        }
        s.check_invariants();
    }

    fn take(s: &mut Swap, cpu: usize, n: usize) -> Vec<(u8, u32)> {
        (0..n)
            .map(|i| s.alloc(CpuId::from_index(cpu), Pfn(i as u32)).map(|x| (x.device.0, x.offset)).unwrap())
            .collect()
    }

    #[test]
    fn consecutive_allocations_are_contiguous_and_skip_the_header() {
        let mut s = swap_with(&[(32, None, false)]);
        assert_eq!(
            take(&mut s, 0, 9),
            [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (0, 7), (0, 8), (0, 9)]
        );
        // A second CPU takes its own cluster on an SSD.
        assert_eq!(take(&mut s, 1, 2), [(0, 16), (0, 17)]);
        s.check_invariants();
    }

    #[test]
    fn rotational_devices_share_one_cluster_between_cpus() {
        let mut s = swap_with(&[(32, None, true)]);
        assert_eq!(take(&mut s, 0, 2), [(0, 1), (0, 2)]);
        assert_eq!(take(&mut s, 1, 2), [(0, 3), (0, 4)]);
    }

    #[test]
    fn equal_priorities_round_robin_and_higher_priority_wins() {
        let mut s = swap_with(&[(32, Some(5), false), (32, Some(5), false), (32, Some(1), false)]);
        let devs: Vec<u8> = take(&mut s, 0, 4).into_iter().map(|(d, _)| d).collect();
        assert_eq!(devs, [0, 1, 0, 1]);
    }

    #[test]
    fn freed_slots_are_reused_and_full_devices_refuse() {
        let mut s = swap_with(&[(8, None, false)]);
        let slots: Vec<SwapSlot> = (0..7).map(|i| s.alloc(CpuId(0), Pfn(i)).unwrap()).collect();
        assert!(s.alloc(CpuId(0), Pfn(99)).is_none());
        assert!(s.vm_swap_full());
        // Slot referenced by a PTE, then the cache drops it with a shadow: still allocated.
        s.inc_count(slots[3]);
        s.cache_delete(slots[3], Some(Shadow(5 | 1 << 29)));
        assert_eq!(s.cache_entry(slots[3]), CacheEntry::Shadow(Shadow(5 | 1 << 29)));
        assert!(s.in_use(slots[3]));
        // The last reference goes: slot released and its shadow cleared.
        s.dec_count(slots[3]);
        assert!(!s.in_use(slots[3]));
        assert_eq!(s.cache_entry(slots[3]), CacheEntry::Empty);
        assert_eq!(s.alloc(CpuId(0), Pfn(50)), Some(slots[3]));
        s.check_invariants();
    }

    #[test]
    fn every_order_gets_aligned_contiguous_slots_in_its_own_cluster() {
        let mut s = one_device(64, false, 1);
        // The header's cluster is left to order 0; each order opens a cluster of its own.
        assert_eq!(take_order(&mut s, 0, 3, 1), [Some(8)]);
        assert_eq!(take_order(&mut s, 0, 2, 2), [Some(16), Some(20)]);
        assert_eq!(take_order(&mut s, 0, 1, 2), [Some(24), Some(26)]);
        assert_eq!(take_order(&mut s, 0, 0, 2), [Some(1), Some(2)]);
        assert_eq!(take_order(&mut s, 0, 1, 1), [Some(28)]);
        assert_eq!(s.used_slots(), 8 + 8 + 6 + 2);
        // Order 2 never continues in the order-1 cluster, though 30..32 is free there.
        assert_eq!(take_order(&mut s, 0, 2, 1), [Some(32)]);
    }

    #[test]
    fn order0_through_alloc_folio_is_alloc() {
        let mut a = swap_with(&[(32, Some(1), false), (32, Some(1), true)]);
        let mut b = swap_with(&[(32, Some(1), false), (32, Some(1), true)]);
        for i in 0..40 {
            assert_eq!(
                a.alloc(CpuId::from_index(i % 2), Pfn(i as u32)),
                b.alloc_folio(CpuId::from_index(i % 2), 0, Pfn(i as u32))
            );
        }
    }

    #[test]
    fn holes_in_large_order_clusters_serve_only_order0() {
        let mut s = one_device(32, false, 1);
        let order1: Vec<Option<u32>> = (8..32).step_by(2).map(Some).collect();
        assert_eq!(take_order(&mut s, 0, 1, 12), order1);
        assert_eq!(take_order(&mut s, 0, 1, 1), [None]);
        assert_eq!(take_order(&mut s, 0, 2, 1), [None]);
        assert_eq!(s.free_slots(), 7);
        // Freeing one slot of a pair leaves a hole no order-1 folio fits in.
        release(&mut s, [9, 17]);
        assert_eq!(take_order(&mut s, 0, 1, 1), [None]);
        // Order 0 fills the header's cluster, then steals the holes.
        let order0: Vec<Option<u32>> = (1..8).chain([9, 17]).map(Some).collect();
        assert_eq!(take_order(&mut s, 0, 0, 9), order0);
        assert_eq!(take_order(&mut s, 0, 0, 1), [None]);
    }

    #[test]
    fn an_emptied_cluster_loses_its_order() {
        let mut s = one_device(32, false, 1);
        assert_eq!(take_order(&mut s, 0, 1, 4), [Some(8), Some(10), Some(12), Some(14)]);
        assert_eq!(take_order(&mut s, 0, 2, 4), [Some(16), Some(20), Some(24), Some(28)]);
        release(&mut s, 8..16);
        assert_eq!(s.used_slots(), 16);
        assert_eq!(take_order(&mut s, 0, 2, 2), [Some(8), Some(12)]);
        // A freed block of the cluster's own order is reused through the non-full list.
        release(&mut s, 20..24);
        assert_eq!(take_order(&mut s, 0, 2, 1), [Some(20)]);
    }

    #[test]
    fn large_order_hints_are_per_cpu_on_ssds_and_shared_on_disks() {
        let mut ssd = one_device(64, false, 2);
        assert_eq!(take_order(&mut ssd, 0, 1, 1), [Some(8)]);
        assert_eq!(take_order(&mut ssd, 1, 1, 1), [Some(16)]);
        assert_eq!(take_order(&mut ssd, 0, 1, 1), [Some(10)]);
        // Each order has its own hint: order 2 on CPU 0 opens another cluster.
        assert_eq!(take_order(&mut ssd, 0, 2, 1), [Some(24)]);
        let mut hdd = one_device(64, true, 2);
        assert_eq!(take_order(&mut hdd, 0, 1, 1), [Some(8)]);
        assert_eq!(take_order(&mut hdd, 1, 1, 1), [Some(10)]);
        assert_eq!(take_order(&mut hdd, 0, 2, 1), [Some(16)]);
        assert_eq!(take_order(&mut hdd, 1, 2, 1), [Some(20)]);
    }

    #[test]
    fn large_folios_go_to_the_next_device_with_room() {
        let mut s = swap_with(&[(16, Some(5), false), (64, Some(5), false), (64, Some(1), false)]);
        // Device 0 holds one order-3 folio, then only the header's cluster is left.
        let at = |s: &mut Swap, order| s.alloc_folio(CpuId(0), order, Pfn(0)).map(|x| (x.device.0, x.offset));
        assert_eq!(at(&mut s, 3), Some((0, 8)));
        assert_eq!(at(&mut s, 3), Some((1, 8)));
        assert_eq!(at(&mut s, 3), Some((1, 16)));
        assert_eq!(at(&mut s, 0), Some((0, 1)));
        // A swap file takes no large folio at all.
        s.devices[1].blkdev = false;
        assert_eq!(at(&mut s, 1), Some((2, 8)));
        assert_eq!(at(&mut s, 0), Some((1, 1)));
        s.check_invariants();
    }

    #[test]
    fn random_orders_and_releases_keep_the_bookkeeping() {
        let mut s = swap_with(&[(200, Some(1), false), (120, Some(1), true)]);
        let mut held: Vec<SwapSlot> = Vec::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..20_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let r = (x >> 33) as usize;
            if r % 5 < 2 || held.is_empty() {
                let order = [0, 0, 1, 2, 3][r / 5 % 5];
                if let Some(slot) = s.alloc_folio(CpuId::from_index(r / 25 % 3), order, Pfn(i)) {
                    held.extend((0..1 << order).map(|k| SwapSlot { offset: slot.offset + k, ..slot }));
                }
            } else {
                let slot = held.swap_remove(r / 5 % held.len());
                s.cache_delete(slot, None);
            }
            s.check_invariants();
        }
        assert_eq!(s.used_slots(), held.len() as u64);
    }
}
