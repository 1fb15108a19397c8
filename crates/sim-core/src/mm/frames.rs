//! Physical frames, the buddy allocator that hands them out, and the folio flags the model
//! tracks.
//!
//! Frames are allocated lazily: the table grows with the frames in use, not to the
//! machine's RAM, so simulating a 256 MiB cgroup on a 24 GiB machine costs memory for
//! 256 MiB only. A folio of order `k` occupies `2^k` contiguous frames whose first pfn is
//! a multiple of `2^k`; every frame records the order, and all but the first are marked as
//! tails. The metadata also keeps flag bits for MGLRU's generation and references.
//!
//! Allocation follows `mm/page_alloc.c`. Order-0 frees go to a per-CPU page list
//! (`free_unref_page`) that order-0 allocation reuses last in, first out. Larger blocks
//! come from per-order free lists (`__rmqueue_smallest`, which splits a larger block with
//! `expand`), and freeing a block merges it with its free buddy as long as it can
//! (`__free_one_page`). When a large allocation finds no free block, the per-CPU list is
//! drained into the buddy lists (`drain_all_pages`) so that its frames can merge.
//!
//! Simplified: one per-CPU list for the whole machine, holding order-0 frames only; no
//! zones, NUMA nodes, migrate types or page contents. Physical memory is a page count
//! rather than an address range: when no free block of the order exists the table grows
//! past its end (the frames that pad it to alignment go to the free lists), so a large
//! allocation fails only when `2^order` pages are not available, never from
//! fragmentation, and nothing is compacted.

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

/// Largest order the allocator hands out and merges to: the PMD size.
pub(crate) const MAX_ORDER: u8 = crate::thp::PMD_ORDER;
const NR_ORDERS: usize = MAX_ORDER as usize + 1;

/// Bits of the `order` byte that hold the order.
const ORDER_MASK: u8 = 0x0f;
/// Marks the first frame of a free block on a buddy list (`PageBuddy`); the order bits
/// hold the block's order (`buddy_order`).
const BUDDY: u8 = 0x40;
/// Marks every frame of a large folio but its head (`PageTail`).
const TAIL: u8 = 0x80;
/// End of a buddy list.
const NIL: u32 = u32::MAX;

/// Per-frame metadata: 16 bytes. The flags word has room for MGLRU's generation and
/// reference bits. On the first frame of a free buddy block, `owner` and `swap_offset`
/// link the block into its order's free list (the kernel reuses `page->lru` likewise).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameMeta {
    /// The PTE mapping this frame, if mapped.
    owner: u32,
    /// Swap-cache slot offset (0 = not in the swap cache; slot 0 is never allocated).
    swap_offset: u32,
    swap_device: u8,
    /// Order of the folio (or free block) plus the `TAIL` and `BUDDY` markers.
    order: u8,
    pub(crate) flags: u16,
    /// Where the folio's entry is on the classic LRU list it is on (`lru::seq`);
    /// meaningless off the lists. Here rather than in a table of its own because the list
    /// is changed where the frame's flags are: one cache line, not two.
    lru_pos: u32,
}

impl FrameMeta {
    /// A frame nobody uses: unmapped, uncached, no flags.
    const FREE: FrameMeta =
        FrameMeta { owner: NO_OWNER, swap_offset: 0, swap_device: 0, order: 0, flags: 0, lru_pos: 0 };

    /// A frame of a freshly allocated folio of `order`.
    const fn folio(order: u8, tail: bool) -> FrameMeta {
        FrameMeta { order: if tail { order | TAIL } else { order }, flags: flag::IN_USE, ..FrameMeta::FREE }
    }
}

const _: () = assert!(std::mem::size_of::<FrameMeta>() == 16, "frame metadata stays 16 bytes");

/// The frame table.
#[derive(Clone, Debug)]
pub(crate) struct Frames {
    meta: Vec<FrameMeta>,
    /// Frames freed one at a time, most recent last: the per-CPU page list (`pcp->lists`).
    pcp: Vec<u32>,
    /// First free block of each order (`zone->free_area[order]`), `NIL` when none.
    free_area: [u32; NR_ORDERS],
    /// Bit `o` set when `free_area[o]` lists a block, so that finding the smallest free
    /// block is one bit scan: an order-0 allocation with the per-CPU list empty asks on
    /// every page while the table grows.
    free_orders: u16,
    /// Pages in use.
    used: u64,
    /// Pages of physical memory.
    total: u64,
    /// Pages taken by memory that is not a folio (zswap's pool).
    reserved: u64,
    /// A large folio was allocated at some point; until then every folio has one page and
    /// `nr_pages` need not read the frame's metadata.
    any_large: bool,
}

impl Frames {
    pub(crate) fn new(total: u64) -> Frames {
        Frames {
            meta: Vec::new(),
            pcp: Vec::new(),
            free_area: [NIL; NR_ORDERS],
            free_orders: 0,
            used: 0,
            total,
            reserved: 0,
            any_large: false,
        }
    }

    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    pub(crate) fn free_pages(&self) -> u64 {
        self.total.saturating_sub(self.used + self.reserved)
    }

    /// Sets the pages that memory other than folios takes (zswap's pool); they count as
    /// used for the watermarks and the allocator.
    pub(crate) fn set_reserved(&mut self, pages: u64) {
        self.reserved = pages;
    }

    /// Takes a free frame (an order-0 folio); `None` when physical memory is exhausted.
    /// The most recently freed frame comes first, then the smallest free block, else the
    /// table grows.
    #[inline]
    pub(crate) fn alloc(&mut self) -> Option<Pfn> {
        if self.used + self.reserved >= self.total {
            return None;
        }
        let idx = match self.pcp.pop() {
            Some(i) => i,
            None => self.take_block(0).unwrap_or_else(|| self.grow(0)),
        };
        self.used += 1;
        self.meta[idx as usize] = FrameMeta::folio(0, false);
        Some(Pfn(idx))
    }

    /// Frees an order-0 folio onto the per-CPU list.
    #[inline]
    pub(crate) fn free(&mut self, pfn: Pfn) {
        let m = &mut self.meta[pfn.0 as usize];
        assert!(m.flags & flag::IN_USE != 0, "double free of frame {}", pfn.0);
        assert!(m.order == 0, "frame {} belongs to a folio of order {}", pfn.0, m.order & ORDER_MASK);
        assert!(m.swap_offset == 0 && m.owner == NO_OWNER, "freeing frame {} still mapped or cached", pfn.0);
        *m = FrameMeta::FREE;
        self.used -= 1;
        self.pcp.push(pfn.0);
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

    /// The order of the folio containing `pfn` (head or tail).
    #[inline]
    pub(crate) fn order(&self, pfn: Pfn) -> u8 {
        self.meta[pfn.0 as usize].order & ORDER_MASK
    }

    /// Prefetches the metadata of the frame at `pfn` into the host's cache. Changes
    /// nothing.
    pub(crate) fn prefetch(&self, pfn: Pfn) {
        if let Some(meta) = self.meta.get(pfn.0 as usize) {
            crate::prefetch::prefetch(meta);
        }
    }

    /// Where the folio at `pfn` is on its classic LRU list, as the list last recorded.
    #[inline]
    pub(crate) fn lru_pos(&self, pfn: Pfn) -> u32 {
        self.meta[pfn.0 as usize].lru_pos
    }

    #[inline]
    pub(crate) fn set_lru_pos(&mut self, pfn: Pfn, pos: u32) {
        self.meta[pfn.0 as usize].lru_pos = pos;
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

    /// Frames in use (heads and tails), in index order.
    pub(crate) fn in_use(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.meta.iter().enumerate().filter(|(_, m)| m.flags & flag::IN_USE != 0).map(|(i, _)| Pfn(i as u32))
    }
}

/// Large folios.
impl Frames {
    /// Takes `2^order` contiguous frames whose first pfn is a multiple of `2^order` and
    /// returns the head; `None` when fewer than `2^order` pages are free.
    pub(crate) fn alloc_folio(&mut self, order: u8) -> Option<Pfn> {
        assert!(order <= MAX_ORDER, "order {order} above {MAX_ORDER}");
        if order == 0 {
            return self.alloc();
        }
        let nr = 1usize << order;
        if self.used + self.reserved + nr as u64 > self.total {
            return None;
        }
        self.any_large = true;
        let head = match self.take_block(order) {
            Some(p) => p,
            None => {
                self.drain_pcp();
                self.take_block(order).unwrap_or_else(|| self.grow(order))
            }
        };
        self.used += nr as u64;
        let h = head as usize;
        self.meta[h] = FrameMeta::folio(order, false);
        self.meta[h + 1..h + nr].fill(FrameMeta::folio(order, true));
        Some(Pfn(head))
    }

    /// Frees every frame of the folio headed by `head`; a large one goes straight to the
    /// buddy lists, merging with its free buddies.
    pub(crate) fn free_folio(&mut self, head: Pfn) {
        assert!(self.is_head(head), "frame {} is not the head of a folio in use", head.0);
        let order = self.order(head);
        if order == 0 {
            return self.free(head);
        }
        let h = head.0 as usize;
        for (i, m) in self.meta[h..h + (1 << order)].iter_mut().enumerate() {
            assert!(m.flags & flag::IN_USE != 0, "frame {} of folio {} is free", h + i, head.0);
            assert!(
                m.swap_offset == 0 && m.owner == NO_OWNER,
                "freeing frame {} of folio {} still mapped or cached",
                h + i,
                head.0
            );
            *m = FrameMeta::FREE;
        }
        self.used -= 1 << order;
        self.free_one(head.0, order);
    }

    /// Turns the folio headed by `head` into `2^order` order-0 folios (`split_folio`):
    /// every frame gets order 0 and the head's flags but keeps its own writeback bit;
    /// owners and swap slots stay.
    pub(crate) fn split(&mut self, head: Pfn) {
        assert!(self.is_head(head), "frame {} is not the head of a folio in use", head.0);
        let h = head.0 as usize;
        let m = self.meta[h];
        // Each page keeps its own writeback state: a large folio's pages complete one by one.
        let wb = flag::WRITEBACK;
        for f in &mut self.meta[h..h + (1 << m.order)] {
            f.order = 0;
            f.flags = (m.flags & !wb) | (f.flags & wb);
        }
    }

    /// Pages in the folio containing `pfn`.
    #[inline]
    pub(crate) fn nr_pages(&self, pfn: Pfn) -> u32 {
        if self.any_large {
            1 << self.order(pfn)
        } else {
            1
        }
    }

    /// The head of the folio containing `pfn` (`page_folio`).
    pub(crate) fn head(&self, pfn: Pfn) -> Pfn {
        let o = self.meta[pfn.0 as usize].order;
        if o & TAIL == 0 {
            pfn
        } else {
            Pfn(pfn.0 & !((1 << (o & ORDER_MASK)) - 1))
        }
    }

    /// True for the first frame of a folio in use (any order).
    pub(crate) fn is_head(&self, pfn: Pfn) -> bool {
        let m = &self.meta[pfn.0 as usize];
        m.flags & flag::IN_USE != 0 && m.order & TAIL == 0
    }

    /// Pages of the folios flagged `PG_lru`, recounted from the flags (for the LRUs'
    /// invariant checks).
    pub(crate) fn lru_flagged_pages(&self) -> u64 {
        self.folios().filter(|&p| self.test(p, flag::LRU)).map(|p| u64::from(self.nr_pages(p))).sum()
    }

    /// Heads of the folios in use, in index order.
    pub(crate) fn folios(&self) -> impl Iterator<Item = Pfn> + '_ {
        let mut i = 0;
        std::iter::from_fn(move || {
            while let Some(m) = self.meta.get(i) {
                let at = i;
                if m.flags & flag::IN_USE == 0 {
                    i += 1;
                    continue;
                }
                debug_assert!(m.order & TAIL == 0, "frame {at}: a tail without its head");
                i += 1 << (m.order & ORDER_MASK);
                return Some(Pfn(at as u32));
            }
            None
        })
    }
}

/// The buddy lists behind both.
impl Frames {
    /// `__rmqueue_smallest`: unlinks the smallest free block of at least `order` and
    /// returns its first `2^order` frames, the rest going back to the lists (`expand`).
    fn take_block(&mut self, order: u8) -> Option<u32> {
        let above = self.free_orders >> order;
        if above == 0 {
            return None;
        }
        let mut o = order + above.trailing_zeros() as u8;
        let pfn = self.free_area[o as usize];
        self.list_del(pfn);
        while o > order {
            o -= 1;
            self.list_add(pfn + (1 << o), o);
        }
        Some(pfn)
    }

    /// Extends the table by a block of `order`, aligned; the frames skipped for alignment
    /// go to the free lists.
    fn grow(&mut self, order: u8) -> u32 {
        let mut pad = self.meta.len() as u32;
        let start = pad.next_multiple_of(1 << order);
        self.meta.resize((start + (1 << order)) as usize, FrameMeta::FREE);
        while pad < start {
            let o = pad.trailing_zeros().min((start - pad).ilog2()).min(u32::from(MAX_ORDER)) as u8;
            self.free_one(pad, o);
            pad += 1 << o;
        }
        start
    }

    /// `drain_all_pages`: hands the per-CPU list to the buddy lists.
    fn drain_pcp(&mut self) {
        let pcp = std::mem::take(&mut self.pcp);
        for &pfn in &pcp {
            self.free_one(pfn, 0);
        }
        self.pcp = pcp;
        self.pcp.clear();
    }

    /// `__free_one_page`: merges the free block at `pfn` with its buddy while the buddy is
    /// a free block of the same order, then lists the result.
    fn free_one(&mut self, mut pfn: u32, mut order: u8) {
        while order < MAX_ORDER {
            let buddy = pfn ^ (1 << order);
            if self.meta.get(buddy as usize).is_none_or(|m| m.order != BUDDY | order) {
                break;
            }
            self.list_del(buddy);
            pfn &= !(1 << order);
            order += 1;
        }
        self.list_add(pfn, order);
    }

    fn list_add(&mut self, pfn: u32, order: u8) {
        let next = self.free_area[order as usize];
        if next != NIL {
            self.meta[next as usize].swap_offset = pfn;
        }
        self.meta[pfn as usize] =
            FrameMeta { owner: next, swap_offset: NIL, order: BUDDY | order, ..FrameMeta::FREE };
        self.free_area[order as usize] = pfn;
        self.free_orders |= 1 << order;
    }

    fn list_del(&mut self, pfn: u32) {
        let m = self.meta[pfn as usize];
        debug_assert!(m.order & BUDDY != 0, "frame {pfn} heads no free block");
        let (next, prev) = (m.owner, m.swap_offset);
        if prev == NIL {
            let o = m.order & ORDER_MASK;
            self.free_area[o as usize] = next;
            if next == NIL {
                self.free_orders &= !(1 << o);
            }
        } else {
            self.meta[prev as usize].owner = next;
        }
        if next != NIL {
            self.meta[next as usize].swap_offset = prev;
        }
        self.meta[pfn as usize] = FrameMeta::FREE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recounts the table: every frame is in use, on the per-CPU list, or in exactly one
    /// listed free block, and free blocks that could merge have merged.
    fn check(f: &Frames) {
        let mut seen = vec![false; f.meta.len()];
        let mut mark = |i: u32| {
            assert!(!std::mem::replace(&mut seen[i as usize], true), "frame {i} free twice");
        };
        for &p in &f.pcp {
            assert_eq!(f.meta[p as usize].order, 0, "frame {p} on the per-CPU list");
            mark(p);
        }
        for o in 0..=MAX_ORDER {
            let listed = f.free_area[o as usize] != NIL;
            assert_eq!(f.free_orders & (1 << o) != 0, listed, "order {o}'s bit in the free-order mask");
            let (mut p, mut prev) = (f.free_area[o as usize], NIL);
            while p != NIL {
                let m = f.meta[p as usize];
                assert_eq!((m.order, m.swap_offset, m.flags), (BUDDY | o, prev, 0), "block {p} of order {o}");
                assert_eq!(p % (1 << o), 0, "block {p} of order {o} misaligned");
                let buddy = f.meta.get((p ^ (1 << o)) as usize);
                assert!(o == MAX_ORDER || buddy.is_none_or(|b| b.order != BUDDY | o), "block {p} unmerged");
                (p..p + (1 << o)).for_each(&mut mark);
                (prev, p) = (p, m.owner);
            }
        }
        let mut used = 0;
        for (i, m) in f.meta.iter().enumerate() {
            if m.flags & flag::IN_USE != 0 {
                assert!(!seen[i], "frame {i} both used and free");
                let head = f.head(Pfn(i as u32)).0 as usize;
                assert_eq!(f.meta[head].order, m.order & ORDER_MASK, "frame {i}: head {head}");
                used += 1;
            } else {
                assert!(seen[i], "frame {i} lost");
            }
        }
        assert_eq!(used, f.used);
        let pages: u32 = f.folios().map(|h| f.nr_pages(h)).sum();
        assert_eq!(u64::from(pages), f.used);
    }

    fn allocs(f: &mut Frames, n: usize) -> Vec<u32> {
        (0..n).map(|_| f.alloc().expect("memory left").0).collect()
    }

    #[test]
    fn order0_reuses_the_last_freed_frame_then_grows() {
        let mut f = Frames::new(8);
        assert_eq!(allocs(&mut f, 4), [0, 1, 2, 3]);
        f.free(Pfn(1));
        f.free(Pfn(3));
        assert_eq!(allocs(&mut f, 3), [3, 1, 4]);
        f.free(Pfn(0));
        f.free(Pfn(2));
        assert_eq!(allocs(&mut f, 5), [2, 0, 5, 6, 7]);
        assert_eq!(f.alloc(), None);
        assert_eq!(f.meta.len(), 8);
        check(&f);
    }

    #[test]
    fn every_order_is_aligned_and_padding_stays_free() {
        let mut f = Frames::new(4096);
        assert_eq!(allocs(&mut f, 1), [0]);
        for order in 1..=MAX_ORDER {
            let head = f.alloc_folio(order).unwrap();
            assert_eq!(head.0, 1 << order, "order {order}");
            for p in head.0..head.0 + (1 << order) {
                assert_eq!((f.order(Pfn(p)), f.head(Pfn(p)), f.is_head(Pfn(p))), (order, head, p == head.0));
                assert!(f.test(Pfn(p), flag::IN_USE));
            }
            assert_eq!(f.nr_pages(head), 1 << order);
            check(&f);
        }
        assert_eq!(f.used(), 1024 - 1);
        // The padding frame 1 is the only free frame below the table's end.
        assert_eq!(allocs(&mut f, 2), [1, 1024]);
        assert_eq!(f.folios().count(), 12);
        assert_eq!(f.in_use().count(), 1025);
        check(&f);
    }

    #[test]
    fn freed_pages_of_a_split_pmd_folio_merge_back_into_one_block() {
        let mut f = Frames::new(1024);
        let head = f.alloc_folio(9).unwrap();
        f.split(head);
        for i in 0..512 {
            f.free(Pfn(i * 7 % 512));
        }
        check(&f);
        assert_eq!(f.alloc_folio(9), Some(head));
        assert_eq!(f.meta.len(), 512);
        // Two freed halves merge as they are freed.
        f.free_folio(head);
        let (a, b) = (f.alloc_folio(8).unwrap(), f.alloc_folio(8).unwrap());
        assert_eq!((a.0, b.0), (0, 256));
        f.free_folio(b);
        f.free_folio(a);
        assert_eq!(f.free_area[9], 0);
        check(&f);
    }

    #[test]
    fn order0_takes_the_smallest_free_block_apart() {
        let mut f = Frames::new(16);
        let head = f.alloc_folio(2).unwrap();
        f.free_folio(head);
        assert_eq!(allocs(&mut f, 5), [0, 1, 2, 3, 4]);
        check(&f);
    }

    #[test]
    fn split_copies_head_flags_and_keeps_owners_then_frees_page_by_page() {
        let mut f = Frames::new(16);
        let head = f.alloc_folio(3).unwrap();
        f.set(head, flag::ACTIVE | flag::LRU);
        for p in 0..8 {
            f.set_owner(Pfn(p), Some(PageId(100 + p)));
        }
        f.split(head);
        for p in 0..8 {
            let pfn = Pfn(p);
            assert!(f.is_head(pfn) && f.order(pfn) == 0 && f.head(pfn) == pfn);
            assert_eq!(f.flags(pfn), flag::IN_USE | flag::ACTIVE | flag::LRU);
            assert_eq!(f.owner(pfn), Some(PageId(100 + p)));
        }
        assert_eq!(f.folios().count(), 8);
        for p in 0..8 {
            f.set_owner(Pfn(p), None);
            f.free(Pfn(p));
        }
        assert_eq!(f.used(), 0);
        check(&f);
    }

    #[test]
    fn large_allocations_fail_only_without_enough_pages() {
        let mut f = Frames::new(10);
        let a = f.alloc_folio(3).unwrap();
        assert_eq!(f.alloc_folio(2), None);
        assert!(f.alloc_folio(1).is_some());
        assert_eq!((f.alloc(), f.free_pages()), (None, 0));
        f.free_folio(a);
        assert!(f.alloc_folio(2).is_some());
        check(&f);
    }

    #[test]
    #[should_panic(expected = "belongs to a folio of order 2")]
    fn order0_free_refuses_a_large_folio() {
        let mut f = Frames::new(8);
        let head = f.alloc_folio(2).unwrap();
        f.free(head);
    }

    #[test]
    fn random_mixes_keep_the_table_consistent() {
        let mut f = Frames::new(3000);
        let mut held: Vec<Pfn> = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let r = (x >> 33) as usize;
            match r % 8 {
                0..=2 => held.extend(f.alloc()),
                3 => held.extend(f.alloc_folio((r / 8 % 10) as u8)),
                4 if !held.is_empty() => {
                    let head = held[r / 8 % held.len()];
                    let n = f.nr_pages(head);
                    f.split(head);
                    held.extend((1..n).map(|i| Pfn(head.0 + i)));
                }
                _ if !held.is_empty() => f.free_folio(held.swap_remove(r / 8 % held.len())),
                _ => {}
            }
            check(&f);
        }
        assert!(f.meta.len() < 3 * 3000, "table grew to {}", f.meta.len());
    }
}
