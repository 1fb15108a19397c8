//! The swap cache (`mm/swap_state.c`) over the devices' slot words, with the zero map and
//! zswap's entry per slot.
//!
//! A slot's cache word holds nothing, the frame caching it, or the shadow reclaim left
//! when it dropped that frame. Deleting the last holder of a slot frees it
//! (`Swap::release_if_unused`); the cluster bookkeeping behind that is the device's.

use super::device::{BAD_SLOT, NO_ZSWAP, TAG_FRAME, TAG_MASK, TAG_SHADOW};
use super::Swap;
use crate::ids::{DeviceId, Pfn, SwapSlot};

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

impl Swap {
    #[inline]
    pub(crate) fn cache_entry(&self, slot: SwapSlot) -> CacheEntry {
        CacheEntry::decode(self.devices[slot.device.0 as usize].slot_cache(slot.offset), slot)
    }

    /// Every slot of `dev` that a frame caches, in offset order.
    pub(crate) fn cached_slots(&self, dev: DeviceId) -> Vec<(u32, Pfn)> {
        // A cached slot is allocated, so free clusters hold none and are not read.
        self.devices[dev.0 as usize]
            .cache_words_in_use()
            .filter(|&(_, w)| w & TAG_MASK == TAG_FRAME)
            .map(|(off, w)| (off, Pfn(w & !TAG_MASK)))
            .collect()
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
        self.release(slot);
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
}
