//! Swap devices: slot maps, allocation clusters, priorities and the swap cache.
//!
//! Models `mm/swapfile.c` (6.12–6.18 cluster allocator) and the swap cache of
//! `mm/swap_state.c`. Each device has one count byte per slot (how many PTEs reference it)
//! and one swap-cache word per slot that holds either the frame caching the slot or, after
//! reclaim dropped that frame, a workingset shadow. A slot is allocated while its count is
//! non-zero or a frame caches it (the kernel's `SWAP_HAS_CACHE`). Slot 0 holds the swap
//! header and is never allocated.
//!
//! Allocation follows the kernel's order for order-0 folios (6.14 and later, device
//! without page discard): continue in the current cluster (one per CPU on non-rotational
//! devices, one per device on rotational ones), else refill a non-full cluster, else open
//! a free one. Devices are chosen by priority, round-robin
//! among equal priorities.
//!
//! Simplified: no discard, no count continuation (a slot is referenced by at most one PTE
//! since anonymous memory is never shared here), no fragment-list bookkeeping, no large
//! folio orders.

use crate::ids::{DeviceId, Pfn, SwapSlot};

const BAD_SLOT: u8 = 0xff;
const TAG_FRAME: u32 = 1 << 30;
const TAG_SHADOW: u32 = 2 << 30;
const TAG_MASK: u32 = 3 << 30;
/// Bits of payload a shadow entry keeps in its swap-cache word.
pub(crate) const SHADOW_BITS: u32 = 30;

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
    used: u32,
    state: ClusterState,
}

/// One swap area.
#[derive(Debug)]
pub(crate) struct SwapDevice {
    pub(crate) priority: i32,
    pub(crate) rotational: bool,
    /// Accepting new allocations (cleared by swapoff).
    pub(crate) writeok: bool,
    count: Vec<u8>,
    cache: Vec<u32>,
    /// Allocated slots, header excluded.
    inuse: u32,
    cluster_slots: u32,
    clusters: Vec<Cluster>,
    free_clusters: std::collections::VecDeque<u32>,
    nonfull_clusters: std::collections::VecDeque<u32>,
    /// Next offset to try, per CPU (non-rotational) or a single entry (rotational).
    hints: Vec<Option<u32>>,
}

impl SwapDevice {
    fn new(slots: u32, priority: i32, rotational: bool, cluster_slots: u32, cpus: usize) -> SwapDevice {
        let n_clusters = slots.div_ceil(cluster_slots);
        let mut clusters = vec![Cluster { used: 0, state: ClusterState::Free }; n_clusters as usize];
        let mut count = vec![0u8; slots as usize];
        count[0] = BAD_SLOT;
        clusters[0].used = 1;
        // The tail of the last cluster beyond the device's end is never usable.
        let tail = n_clusters * cluster_slots - slots;
        clusters[n_clusters as usize - 1].used += tail;
        let free_clusters = (0..n_clusters).collect();
        SwapDevice {
            priority,
            rotational,
            writeok: true,
            count,
            cache: vec![0; slots as usize],
            inuse: 0,
            cluster_slots,
            clusters,
            free_clusters,
            nonfull_clusters: Default::default(),
            hints: vec![None; if rotational { 1 } else { cpus }],
        }
    }

    /// Slots including the header (the kernel's `si->max`).
    pub(crate) fn max(&self) -> u32 {
        self.count.len() as u32
    }
    /// Usable slots (the kernel's `si->pages`).
    pub(crate) fn pages(&self) -> u32 {
        self.max() - 1
    }
    /// Allocated slots, header excluded.
    pub(crate) fn inuse(&self) -> u32 {
        self.inuse
    }

    pub(crate) fn is_full(&self) -> bool {
        self.inuse == self.pages()
    }

    #[inline]
    fn is_free(&self, off: u32) -> bool {
        self.count[off as usize] == 0 && self.cache[off as usize] & TAG_FRAME == 0
    }

    fn cluster_full(&self, c: u32) -> bool {
        self.clusters[c as usize].used == self.cluster_slots
    }

    /// Scans cluster `c` from `from` for a free slot; takes it if found.
    fn take_in_cluster(&mut self, c: u32, from: u32) -> Option<u32> {
        let end = ((c + 1) * self.cluster_slots).min(self.max());
        (from.max(c * self.cluster_slots)..end).find(|&off| self.is_free(off))
    }

    /// Marks the end of allocation from cluster `c` via a hint.
    fn retire(&mut self, c: u32) {
        let cl = &mut self.clusters[c as usize];
        if cl.state == ClusterState::Current {
            cl.state = if cl.used == self.cluster_slots {
                ClusterState::Full
            } else if cl.used == 0 {
                self.free_clusters.push_back(c);
                ClusterState::Free
            } else {
                self.nonfull_clusters.push_back(c);
                ClusterState::Nonfull
            };
        }
    }

    fn alloc(&mut self, cpu: usize, pfn: Pfn) -> Option<u32> {
        if !self.writeok || self.is_full() {
            return None;
        }
        let h = if self.rotational { 0 } else { cpu % self.hints.len() };
        let mut found = None;
        if let Some(hint) = self.hints[h] {
            let c = hint / self.cluster_slots;
            if self.clusters[c as usize].state == ClusterState::Current {
                found = self.take_in_cluster(c, hint);
                if found.is_none() {
                    self.retire(c);
                }
            }
        }
        while found.is_none() {
            // Since 6.14 ("prefer nonfull over free clusters") a device without page
            // discard refills partly used clusters before opening a free one.
            let c = if let Some(c) = self.nonfull_clusters.pop_front() {
                if self.clusters[c as usize].state != ClusterState::Nonfull || self.cluster_full(c) {
                    continue;
                }
                c
            } else if let Some(c) = self.free_clusters.pop_front() {
                if self.clusters[c as usize].state != ClusterState::Free {
                    continue;
                }
                c
            } else {
                break;
            };
            self.clusters[c as usize].state = ClusterState::Current;
            found = self.take_in_cluster(c, 0);
            if found.is_none() {
                self.retire(c);
            }
        }
        let off = found?;
        let c = off / self.cluster_slots;
        self.cache[off as usize] = TAG_FRAME | pfn.0;
        self.inuse += 1;
        self.clusters[c as usize].used += 1;
        let next = off + 1;
        if next % self.cluster_slots == 0 || next >= self.max() {
            self.hints[h] = None;
            self.retire(c);
        } else {
            self.hints[h] = Some(next);
        }
        Some(off)
    }

    fn release(&mut self, off: u32) {
        self.cache[off as usize] = 0;
        self.inuse -= 1;
        let c = off / self.cluster_slots;
        let cl = &mut self.clusters[c as usize];
        cl.used -= 1;
        match cl.state {
            ClusterState::Full => {
                cl.state = ClusterState::Nonfull;
                self.nonfull_clusters.push_back(c);
            }
            ClusterState::Nonfull if cl.used == 0 => {
                cl.state = ClusterState::Free;
                self.free_clusters.push_back(c);
            }
            _ => {}
        }
    }
}

/// All swap devices plus the global free-slot accounting.
#[derive(Debug, Default)]
pub(crate) struct Swap {
    pub(crate) devices: Vec<SwapDevice>,
    /// Device indices by descending priority; equal priorities rotate.
    avail: Vec<u8>,
}

impl Swap {
    /// Activates a device (`swapon`). `priority` None gives -2, -3, ... in swapon order.
    pub(crate) fn swapon(&mut self, spec: SwaponSpec) -> DeviceId {
        let prio = spec
            .priority
            .map(i32::from)
            .unwrap_or(-2 - self.devices.iter().filter(|d| d.priority < 0).count() as i32);
        let id = self.devices.len() as u8;
        self.devices.push(SwapDevice::new(spec.slots, prio, spec.rotational, spec.cluster_slots, spec.cpus));
        self.avail.push(id);
        self.sort_avail();
        DeviceId(id)
    }

    fn sort_avail(&mut self) {
        let devices = &self.devices;
        self.avail.sort_by_key(|&d| std::cmp::Reverse(devices[d as usize].priority));
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

    /// Allocates a slot for `pfn` and records `pfn` as its swap-cache folio
    /// (`folio_alloc_swap`). `None` when every device is full.
    pub(crate) fn alloc(&mut self, cpu: usize, pfn: Pfn) -> Option<SwapSlot> {
        let mut i = 0;
        while i < self.avail.len() {
            let prio = self.devices[self.avail[i] as usize].priority;
            let group_end = i + self.avail[i..]
                .iter()
                .take_while(|&&d| self.devices[d as usize].priority == prio)
                .count();
            for k in i..group_end {
                let d = self.avail[k];
                if let Some(off) = self.devices[d as usize].alloc(cpu, pfn) {
                    // Requeue behind its equal-priority siblings (plist_requeue).
                    self.avail[k..group_end].rotate_left(1);
                    return Some(SwapSlot { device: DeviceId(d), offset: off });
                }
            }
            i = group_end;
        }
        None
    }

    // TEMPORARY stand-in until per-order clusters land.
    pub(crate) fn alloc_folio(&mut self, cpu: usize, order: u8, pfn: Pfn) -> Option<SwapSlot> {
        if order == 0 {
            self.alloc(cpu, pfn)
        } else {
            None
        }
    }

    #[inline]
    pub(crate) fn count(&self, slot: SwapSlot) -> u8 {
        self.devices[slot.device.0 as usize].count[slot.offset as usize]
    }
    pub(crate) fn inc_count(&mut self, slot: SwapSlot) {
        let c = &mut self.devices[slot.device.0 as usize].count[slot.offset as usize];
        assert!(*c < BAD_SLOT - 1, "swap count overflow at {slot}");
        *c += 1;
    }
    /// Drops one PTE reference (`swap_free`); releases the slot if nothing else holds it.
    pub(crate) fn dec_count(&mut self, slot: SwapSlot) {
        let dev = &mut self.devices[slot.device.0 as usize];
        let c = &mut dev.count[slot.offset as usize];
        assert!(*c > 0 && *c != BAD_SLOT, "swap count underflow at {slot}");
        *c -= 1;
        self.release_if_unused(slot);
    }

    /// True while the slot is allocated (referenced or cached).
    #[cfg(test)]
    fn in_use(&self, slot: SwapSlot) -> bool {
        let dev = &self.devices[slot.device.0 as usize];
        slot.offset != 0 && !dev.is_free(slot.offset)
    }

    pub(crate) fn cache_entry(&self, slot: SwapSlot) -> CacheEntry {
        let w = self.devices[slot.device.0 as usize].cache[slot.offset as usize];
        match w & TAG_MASK {
            0 => CacheEntry::Empty,
            TAG_FRAME => CacheEntry::Frame(Pfn(w & !TAG_MASK)),
            TAG_SHADOW => CacheEntry::Shadow(Shadow(w & !TAG_MASK)),
            _ => unreachable!("corrupt swap cache word {w:#x} at {slot}"),
        }
    }

    /// Every slot of `dev` that a frame caches, in offset order.
    pub(crate) fn cached_slots(&self, dev: DeviceId) -> Vec<(u32, Pfn)> {
        let d = &self.devices[dev.0 as usize];
        d.cache
            .iter()
            .enumerate()
            .filter(|(_, &w)| w & TAG_MASK == TAG_FRAME)
            .map(|(off, &w)| (off as u32, Pfn(w & !TAG_MASK)))
            .collect()
    }

    #[inline]
    pub(crate) fn cached_frame(&self, slot: SwapSlot) -> Option<Pfn> {
        let w = self.devices[slot.device.0 as usize].cache[slot.offset as usize];
        (w & TAG_MASK == TAG_FRAME).then_some(Pfn(w & !TAG_MASK))
    }

    /// Inserts a folio for an allocated slot (swap-in); returns the shadow it replaces.
    pub(crate) fn cache_insert(&mut self, slot: SwapSlot, pfn: Pfn) -> Option<Shadow> {
        let old = self.cache_entry(slot);
        assert!(!matches!(old, CacheEntry::Frame(_)), "{slot} already cached");
        assert!(self.count(slot) > 0, "caching free {slot}");
        self.devices[slot.device.0 as usize].cache[slot.offset as usize] = TAG_FRAME | pfn.0;
        match old {
            CacheEntry::Shadow(s) => Some(s),
            _ => None,
        }
    }

    /// Removes the cached folio (`__delete_from_swap_cache`), leaving `shadow` behind if the
    /// slot stays allocated; releases the slot when no PTE references it.
    pub(crate) fn cache_delete(&mut self, slot: SwapSlot, shadow: Option<Shadow>) {
        let dev = &mut self.devices[slot.device.0 as usize];
        let w = &mut dev.cache[slot.offset as usize];
        assert!(*w & TAG_MASK == TAG_FRAME, "{slot} not cached");
        *w = match shadow {
            Some(s) => TAG_SHADOW | (s.0 & !TAG_MASK),
            None => 0,
        };
        self.release_if_unused(slot);
    }

    fn release_if_unused(&mut self, slot: SwapSlot) {
        let dev = &mut self.devices[slot.device.0 as usize];
        let off = slot.offset as usize;
        if dev.count[off] == 0 && dev.cache[off] & TAG_MASK != TAG_FRAME {
            dev.release(slot.offset);
        }
    }

    /// Recounts every device from scratch and checks the cluster and list bookkeeping.
    pub(crate) fn check_invariants(&self) {
        for (d, dev) in self.devices.iter().enumerate() {
            assert_eq!(dev.count[0], BAD_SLOT, "device {d}: header slot lost its mark");
            let mut inuse = 0;
            let mut per_cluster = vec![0u32; dev.clusters.len()];
            per_cluster[0] = 1;
            let last = dev.clusters.len() - 1;
            per_cluster[last] += dev.clusters.len() as u32 * dev.cluster_slots - dev.max();
            for off in 1..dev.max() {
                let w = dev.cache[off as usize];
                assert_ne!(w & TAG_MASK, TAG_MASK, "device {d} slot {off}: corrupt cache word");
                if !dev.is_free(off) {
                    inuse += 1;
                    per_cluster[(off / dev.cluster_slots) as usize] += 1;
                } else {
                    assert_eq!(w, 0, "device {d} slot {off}: free slot keeps a shadow");
                }
            }
            assert_eq!(inuse, dev.inuse, "device {d}: inuse counter");
            for (c, cl) in dev.clusters.iter().enumerate() {
                assert_eq!(cl.used, per_cluster[c], "device {d} cluster {c}: used counter");
                if cl.state == ClusterState::Full {
                    assert_eq!(cl.used, dev.cluster_slots, "device {d} cluster {c}: full but has free slots");
                }
            }
        }
    }
}

/// Parameters of a `swapon`.
#[derive(Clone, Debug)]
pub(crate) struct SwaponSpec {
    pub(crate) slots: u32,
    pub(crate) priority: Option<i16>,
    pub(crate) rotational: bool,
    pub(crate) cluster_slots: u32,
    pub(crate) cpus: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swap_with(devs: &[(u32, Option<i16>, bool)]) -> Swap {
        let mut s = Swap::default();
        for &(slots, priority, rotational) in devs {
            s.swapon(SwaponSpec { slots, priority, rotational, cluster_slots: 8, cpus: 2 });
        }
        s
    }

    fn take(s: &mut Swap, cpu: usize, n: usize) -> Vec<(u8, u32)> {
        (0..n).map(|i| s.alloc(cpu, Pfn(i as u32)).map(|x| (x.device.0, x.offset)).unwrap()).collect()
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
        let slots: Vec<SwapSlot> = (0..7).map(|i| s.alloc(0, Pfn(i)).unwrap()).collect();
        assert!(s.alloc(0, Pfn(99)).is_none());
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
        assert_eq!(s.alloc(0, Pfn(50)), Some(slots[3]));
        s.check_invariants();
    }
}
