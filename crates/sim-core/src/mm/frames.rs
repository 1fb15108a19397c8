//! Physical frames and the folio flags the model tracks.
//!
//! Frames are allocated lazily: the table grows to the largest number of frames ever in
//! use, not to the machine's RAM, so simulating a 256 MiB cgroup on a 24 GiB machine costs
//! memory for 256 MiB only. Every frame holds one order-0 folio; the metadata keeps a byte
//! for the folio order and flag bits for MGLRU's generation and references.
//!
//! Not modelled: zones, NUMA nodes, large folios, page contents.

use super::pagetable::PageId;
use crate::ids::{DeviceId, Pfn, SwapSlot};

/// Folio flag bits (names follow `PG_*` in include/linux/page-flags.h).
pub(crate) mod flag {
    pub(crate) const ACTIVE: u16 = 1 << 0;
    pub(crate) const REFERENCED: u16 = 1 << 1;
    pub(crate) const WORKINGSET: u16 = 1 << 2;
    /// The folio's data differs from its swap slot (or it has no slot yet).
    pub(crate) const DIRTY: u16 = 1 << 3;
    pub(crate) const WRITEBACK: u16 = 1 << 4;
    /// A read is in flight; the folio is not uptodate yet.
    pub(crate) const LOCKED: u16 = 1 << 5;
    /// Brought in by readahead and not used yet.
    pub(crate) const READAHEAD: u16 = 1 << 6;
    /// Reclaim wants the folio as soon as its writeback ends.
    pub(crate) const RECLAIM: u16 = 1 << 7;
    /// On an LRU list (not isolated).
    pub(crate) const LRU: u16 = 1 << 8;
    pub(crate) const IN_USE: u16 = 1 << 9;
    /// A task sleeps on this folio's read; it stays locked until the task maps it.
    pub(crate) const WAITED: u16 = 1 << 10;
    /// MGLRU's generation of the folio plus one, 0 when it is on no generation
    /// (`LRU_GEN_MASK` in page->flags); three bits hold `MAX_NR_GENS` (4) generations.
    pub(crate) const LRU_GEN_MASK: u16 = 0b111 << 11;
    /// MGLRU's reference counter (`LRU_REFS_MASK`), which with `PG_referenced` and
    /// `PG_workingset` places a folio in a tier: two bits, as on 64-bit kernels.
    pub(crate) const LRU_REFS_MASK: u16 = 0b11 << 14;
}

const NO_OWNER: u32 = u32::MAX;

/// Per-frame metadata: 12 bytes. The flags word has room for MGLRU's generation and
/// reference bits, and `order` for the folio order a large folio's head frame records.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameMeta {
    /// The PTE mapping this frame, if mapped.
    owner: u32,
    /// Swap-cache slot offset (0 = not in the swap cache; slot 0 is never allocated).
    swap_offset: u32,
    swap_device: u8,
    /// Folio order (0 here: every frame holds one order-0 folio).
    order: u8,
    pub(crate) flags: u16,
}

impl FrameMeta {
    /// A frame nobody uses: unmapped, uncached, no flags.
    const FREE: FrameMeta = FrameMeta { owner: NO_OWNER, swap_offset: 0, swap_device: 0, order: 0, flags: 0 };
}

const _: () = assert!(std::mem::size_of::<FrameMeta>() == 12, "frame metadata stays 12 bytes");

/// The frame table.
#[derive(Debug)]
pub(crate) struct Frames {
    meta: Vec<FrameMeta>,
    free: Vec<u32>,
    used: u64,
    total: u64,
}

impl Frames {
    pub(crate) fn new(total: u64) -> Frames {
        Frames { meta: Vec::new(), free: Vec::new(), used: 0, total }
    }

    pub(crate) fn used(&self) -> u64 {
        self.used
    }
    pub(crate) fn free_pages(&self) -> u64 {
        self.total - self.used
    }

    /// Takes a free frame; `None` when physical memory is exhausted.
    pub(crate) fn alloc(&mut self) -> Option<Pfn> {
        if self.used >= self.total {
            return None;
        }
        let idx = match self.free.pop() {
            Some(i) => i,
            None => {
                self.meta.push(FrameMeta::FREE);
                (self.meta.len() - 1) as u32
            }
        };
        self.used += 1;
        self.meta[idx as usize] = FrameMeta { flags: flag::IN_USE, ..FrameMeta::FREE };
        Some(Pfn(idx))
    }

    pub(crate) fn free(&mut self, pfn: Pfn) {
        let m = &mut self.meta[pfn.0 as usize];
        assert!(m.flags & flag::IN_USE != 0, "double free of frame {}", pfn.0);
        assert!(m.swap_offset == 0 && m.owner == NO_OWNER, "freeing frame {} still mapped or cached", pfn.0);
        *m = FrameMeta::FREE;
        self.used -= 1;
        self.free.push(pfn.0);
    }

    #[inline]
    pub(crate) fn flags(&self, pfn: Pfn) -> u16 {
        self.meta[pfn.0 as usize].flags
    }
    #[inline]
    pub(crate) fn test(&self, pfn: Pfn, f: u16) -> bool {
        self.meta[pfn.0 as usize].flags & f != 0
    }
    #[inline]
    pub(crate) fn set(&mut self, pfn: Pfn, f: u16) {
        self.meta[pfn.0 as usize].flags |= f;
    }
    #[inline]
    pub(crate) fn clear(&mut self, pfn: Pfn, f: u16) {
        self.meta[pfn.0 as usize].flags &= !f;
    }
    /// Clears `f` and reports whether it was set.
    pub(crate) fn test_and_clear(&mut self, pfn: Pfn, f: u16) -> bool {
        let was = self.test(pfn, f);
        self.clear(pfn, f);
        was
    }

    /// The order of the folio containing `pfn`.
    pub(crate) fn order(&self, pfn: Pfn) -> u8 {
        self.meta[pfn.0 as usize].order & 0x7f
    }
    pub(crate) fn head(&self, pfn: Pfn) -> Pfn {
        Pfn(pfn.0 & !((1u32 << self.order(pfn)) - 1))
    }
    pub(crate) fn nr_pages(&self, pfn: Pfn) -> u32 {
        1 << self.order(pfn)
    }
    pub(crate) fn is_head(&self, pfn: Pfn) -> bool {
        self.meta[pfn.0 as usize].order & 0x80 == 0
    }
    // TEMPORARY stand-ins until the buddy allocator lands.
    pub(crate) fn alloc_folio(&mut self, order: u8) -> Option<Pfn> {
        let nr = 1u32 << order;
        if self.used + u64::from(nr) > self.total {
            return None;
        }
        while self.meta.len() % nr as usize != 0 {
            self.meta.push(FrameMeta::FREE);
            self.free.push((self.meta.len() - 1) as u32);
        }
        let head = self.meta.len() as u32;
        for i in 0..nr {
            let tail = if i == 0 { 0 } else { 0x80 };
            self.meta.push(FrameMeta { flags: flag::IN_USE, order: order | tail, ..FrameMeta::FREE });
        }
        self.used += u64::from(nr);
        Some(Pfn(head))
    }
    pub(crate) fn free_folio(&mut self, head: Pfn) {
        let nr = self.nr_pages(head);
        for i in (0..nr).rev() {
            self.meta[(head.0 + i) as usize].order = 0;
            self.free(Pfn(head.0 + i));
        }
    }
    pub(crate) fn split(&mut self, head: Pfn) {
        let nr = self.nr_pages(head);
        let flags = self.meta[head.0 as usize].flags;
        for i in 0..nr {
            let m = &mut self.meta[(head.0 + i) as usize];
            m.order = 0;
            m.flags = flags;
        }
    }
    pub(crate) fn folios(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.in_use().filter(|&p| self.is_head(p))
    }

    pub(crate) fn owner(&self, pfn: Pfn) -> Option<PageId> {
        let o = self.meta[pfn.0 as usize].owner;
        (o != NO_OWNER).then_some(PageId(o))
    }
    pub(crate) fn set_owner(&mut self, pfn: Pfn, owner: Option<PageId>) {
        self.meta[pfn.0 as usize].owner = owner.map_or(NO_OWNER, |p| p.0);
    }

    pub(crate) fn swap_slot(&self, pfn: Pfn) -> Option<SwapSlot> {
        let m = &self.meta[pfn.0 as usize];
        (m.swap_offset != 0).then_some(SwapSlot { device: DeviceId(m.swap_device), offset: m.swap_offset })
    }
    pub(crate) fn set_swap_slot(&mut self, pfn: Pfn, slot: Option<SwapSlot>) {
        let m = &mut self.meta[pfn.0 as usize];
        match slot {
            Some(s) => {
                m.swap_offset = s.offset;
                m.swap_device = s.device.0;
            }
            None => {
                m.swap_offset = 0;
                m.swap_device = 0;
            }
        }
    }

    /// Frames in use, in index order.
    pub(crate) fn in_use(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.meta.iter().enumerate().filter(|(_, m)| m.flags & flag::IN_USE != 0).map(|(i, _)| Pfn(i as u32))
    }
}
