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
//! This file holds [`Swap`], the set of devices: swapon and swapoff's write gate, the
//! totals, the allocation front end that picks a device by priority, hibernation slots
//! and swap counts. `device.rs` is one swap area (`SwapDevice`): its packed per-slot
//! words and its cluster allocator. `cache.rs` is the swap cache over those words, with
//! the zero map and zswap's entry per slot.
//!
//! Where a device looks for slots, and in which order, is the slot allocator policy's
//! plan (`policy/allocator.rs`): the default is the 6.18 order above; older kernels and
//! hibernation's slow path are plans too. [`Swap`] holds the policy and asks it on every
//! allocation; the device carries the plan out and checks what it finds.
//!
//! Simplified: no discard, no count continuation (a slot is referenced by at most one PTE
//! since anonymous memory is never shared here), and the kernel's fragment lists are not
//! told apart from the non-full lists, except for the clusters a plan puts back after
//! each allocation (`AfterAlloc::Relocate`), which go to fragment lists of their own.

mod cache;
mod device;
#[cfg(test)]
mod tests;

pub(crate) use cache::{CacheEntry, Shadow, SHADOW_BITS};
use device::{SwapDevice, BAD_SLOT, NO_ZSWAP, TAG_FRAME, TAG_MASK};

use crate::ids::{CpuId, DeviceId, Pfn, SwapSlot};
use crate::policy::allocator::{ClusterAllocator, SlotAllocator, SlotPurpose, SlotRequest};

/// All swap devices plus the global free-slot accounting.
#[derive(Clone, Debug)]
pub(crate) struct Swap {
    pub(crate) devices: Vec<SwapDevice>,
    /// Device indices by descending priority; equal priorities rotate.
    avail: Vec<u8>,
    /// zswap is configured: devices keep an entry per slot.
    pub(crate) zswap_on: bool,
    /// zswap entries whose slots were freed, for the memory model to release.
    zswap_orphans: Vec<u32>,
    /// Where devices look for slots.
    allocator: Box<dyn SlotAllocator>,
}

impl Default for Swap {
    fn default() -> Swap {
        Swap::new(Box::new(ClusterAllocator))
    }
}

impl Swap {
    /// No devices yet; slots allocated as `allocator` plans.
    pub(crate) fn new(allocator: Box<dyn SlotAllocator>) -> Swap {
        Swap { devices: Vec::new(), avail: Vec::new(), zswap_on: false, zswap_orphans: Vec::new(), allocator }
    }

    /// Activates a device (`swapon`). `priority` None gives -2, -3, ... in swapon order.
    pub(crate) fn swapon(&mut self, spec: SwaponSpec) -> DeviceId {
        let prio = spec
            .priority
            .map(i32::from)
            .unwrap_or(-2 - self.devices.iter().filter(|d| d.priority < 0).count() as i32);
        let id = self.devices.len() as u8;
        let mut dev = SwapDevice::new(&spec, prio, self.allocator.cluster_lists());
        if self.zswap_on {
            dev.zswap = vec![NO_ZSWAP; spec.slots as usize];
        }
        self.devices.push(dev);
        self.avail.push(id);
        self.sort_avail();
        DeviceId(id)
    }

    /// Turns zswap on or off before anything was swapped out: each device's zswap index
    /// is sized as `swapon` sizes it (none while zswap is off).
    pub(crate) fn set_zswap_on(&mut self, on: bool) {
        debug_assert!(
            self.devices.iter().all(|d| d.zswap.iter().all(|&e| e == NO_ZSWAP)),
            "zswap holds entries"
        );
        self.zswap_on = on;
        for dev in &mut self.devices {
            dev.zswap = if on { vec![NO_ZSWAP; dev.max() as usize] } else { Vec::new() };
        }
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
        self.devices.iter().filter(|d| d.writeok).map(|d| u64::from(d.pages() - d.inuse())).sum()
    }
    pub(crate) fn used_slots(&self) -> u64 {
        self.devices.iter().map(|d| u64::from(d.inuse())).sum()
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
            let off = self.alloc_on(d, cpu, order, head)?;
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
                if let Some(off) = self.alloc_on(d, cpu, order, head) {
                    // Requeue behind its equal-priority siblings (plist_requeue).
                    self.avail[k..group_end].rotate_left(1);
                    return Some(SwapSlot { device: DeviceId(d), offset: off });
                }
            }
            i = group_end;
        }
        None
    }

    /// Swap-out's `2^order` slots on device `d`, as the allocator plans them.
    #[inline]
    fn alloc_on(&mut self, d: u8, cpu: CpuId, order: u8, head: Pfn) -> Option<u32> {
        let dev = &mut self.devices[d as usize];
        let plan = self.allocator.plan(&SlotRequest::new(order, SlotPurpose::SwapOut, dev.rotational()));
        dev.alloc(cpu, order, head, &plan)
    }

    /// `swap_alloc_hibernation_slot`: one slot of `dev` for the hibernation image (from
    /// `alloc_swapdev_block`), by the cluster allocator as the policy plans it (by
    /// default as order-0 swap-out on CPU 0). It is
    /// held with a count of one and no swap-cache folio, as the kernel's swap map holds it
    /// without any PTE, until [`Swap::free_hibernation_slot`]. `None` when the device is
    /// full or swapped off.
    pub(crate) fn alloc_hibernation_slot(&mut self, dev: DeviceId) -> Option<SwapSlot> {
        let d = &mut self.devices[dev.0 as usize];
        let plan = self.allocator.plan(&SlotRequest::new(0, SlotPurpose::Hibernation, d.rotational()));
        let off = d.alloc(CpuId(0), 0, Pfn(0), &plan)?;
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

    /// Frees `slot` if nothing references or caches it any more.
    #[inline]
    fn release_if_unused(&mut self, slot: SwapSlot) {
        let dev = &mut self.devices[slot.device.0 as usize];
        if dev.slot_count(slot.offset) == 0 && dev.slot_cache(slot.offset) & TAG_MASK != TAG_FRAME {
            self.release(slot);
        }
    }

    /// Frees `slot`, which nothing references or caches any more; its zswap entry, if
    /// any, waits in the orphans for the memory model to free at its next zswap step.
    #[inline]
    fn release(&mut self, slot: SwapSlot) {
        if let Some(e) = self.devices[slot.device.0 as usize].release(slot.offset) {
            self.zswap_orphans.push(e);
        }
    }

    /// Prefetches the slot's count and swap-cache word (see `Mm::warm_batch`).
    #[inline]
    pub(crate) fn prefetch_slot(&self, slot: SwapSlot) {
        self.devices[slot.device.0 as usize].prefetch_slot(slot.offset);
    }

    /// Prefetches the slot's zswap word, which names its zswap entry.
    #[inline]
    pub(crate) fn prefetch_zswap_word(&self, slot: SwapSlot) {
        if let Some(word) = self.devices[slot.device.0 as usize].zswap.get(slot.offset as usize) {
            crate::prefetch::prefetch(word);
        }
    }

    /// Recounts every device from scratch and checks the cluster and list bookkeeping.
    pub(crate) fn check_invariants(&self) {
        for (d, dev) in self.devices.iter().enumerate() {
            dev.check_invariants(d);
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
