//! Page tables: sparse 64-bit virtual address spaces over dense PTE arrays.
//!
//! Each address space holds VMAs (regions). A region's pages are grouped into 512-page
//! chunks aligned like the kernel's PTE tables (one chunk covers one 2 MiB PMD range), and
//! chunks are allocated on first touch, so a huge sparse mapping costs nothing until used.
//! All chunks of all address spaces live in one flat `Vec<Pte>`, so a page is named by a
//! dense `PageId` (chunk × 512 + index) that frames can point back to (the reverse map).
//!
//! A large folio is mapped by the `2^order` consecutive PTEs of its naturally aligned
//! virtual range; since that range never crosses a chunk, its pages have consecutive
//! `PageId`s too.
//!
//! Not modelled: sharing between address spaces (fork, COW of anonymous pages), file
//! mappings, huge PMD mappings (a PMD-sized folio is mapped by 512 PTEs).

use crate::ids::{DeviceId, Pfn, RegionId, SpaceId, SwapSlot, VirtPage};
use crate::thp::OrderMask;

/// Pages per chunk: one PTE table, covering 2 MiB.
pub(crate) const CHUNK_PAGES: u64 = 512;
const NO_CHUNK: u32 = u32::MAX;

/// Dense identity of a mapped virtual page across all address spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct PageId(pub(crate) u32);

/// A page table entry packed in 64 bits.
///
/// bits 0..2 state (none, present, swap, zero page); bit 3 accessed ("young"); bit 4
/// dirty; bits 8..16 swap device; bits 32..64 frame number or slot offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Pte(u64);

/// The decoded state of a PTE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PteState {
    /// Never touched (or unmapped).
    None,
    /// Mapped to a frame.
    Present(Pfn),
    /// Swapped out to a slot.
    Swap(SwapSlot),
    /// Mapped read-only to the shared zero page (a read of untouched anonymous memory).
    Zero,
}

const ST_MASK: u64 = 0b111;
const ST_PRESENT: u64 = 1;
const ST_SWAP: u64 = 2;
const ST_ZERO: u64 = 3;
const ACCESSED: u64 = 1 << 3;
const DIRTY: u64 = 1 << 4;

// The accessors are `#[inline]`: the access path reads a PTE's state once per access, and
// without the hint a change elsewhere in the crate can put a call there (codegen units).
impl Pte {
    #[inline]
    pub(crate) fn present(pfn: Pfn, accessed: bool, dirty: bool) -> Pte {
        let mut v = ST_PRESENT | (u64::from(pfn.0) << 32);
        if accessed {
            v |= ACCESSED;
        }
        if dirty {
            v |= DIRTY;
        }
        Pte(v)
    }
    #[inline]
    pub(crate) fn swap(slot: SwapSlot) -> Pte {
        Pte(ST_SWAP | (u64::from(slot.device.0) << 8) | (u64::from(slot.offset) << 32))
    }
    #[inline]
    pub(crate) fn zero() -> Pte {
        Pte(ST_ZERO | ACCESSED)
    }
    #[inline]
    pub(crate) fn state(self) -> PteState {
        match self.0 & ST_MASK {
            0 => PteState::None,
            ST_PRESENT => PteState::Present(Pfn((self.0 >> 32) as u32)),
            ST_SWAP => PteState::Swap(SwapSlot {
                device: DeviceId(((self.0 >> 8) & 0xff) as u8),
                offset: (self.0 >> 32) as u32,
            }),
            ST_ZERO => PteState::Zero,
            other => unreachable!("corrupt pte state {other}"),
        }
    }
    #[inline]
    pub(crate) fn is_present(self) -> bool {
        self.0 & ST_MASK == ST_PRESENT
    }
    #[inline]
    pub(crate) fn is_swap(self) -> bool {
        self.0 & ST_MASK == ST_SWAP
    }
    #[inline]
    pub(crate) fn accessed(self) -> bool {
        self.0 & ACCESSED != 0
    }
    #[inline]
    pub(crate) fn dirty(self) -> bool {
        self.0 & DIRTY != 0
    }
    /// Records a hardware access: sets the accessed bit and, for a store, the dirty bit.
    #[inline]
    pub(crate) fn touch(&mut self, write: bool) {
        self.0 |= ACCESSED | if write { DIRTY } else { 0 };
    }
    #[inline]
    pub(crate) fn clear_accessed(&mut self) {
        self.0 &= !ACCESSED;
    }
}

/// A VMA.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    pub(crate) id: RegionId,
    pub(crate) start: VirtPage,
    pub(crate) pages: u64,
    /// Large folio orders the region may allocate (`thp_vma_allowable_orders`, from the
    /// THP knobs and the region's madvise hint); 0 for none.
    pub(crate) orders: OrderMask,
    /// What its pages hold: an index into [`PageTables::contents`].
    pub(crate) contents: u8,
    /// Chunk id per 2 MiB-aligned block the region overlaps, `NO_CHUNK` until touched.
    chunks: Vec<u32>,
}

impl Region {
    pub(crate) fn end(&self) -> VirtPage {
        VirtPage(self.start.0 + self.pages)
    }
    fn contains(&self, vpage: VirtPage) -> bool {
        vpage.0 >= self.start.0 && vpage.0 < self.start.0 + self.pages
    }
    fn chunk_index(&self, vpage: VirtPage) -> usize {
        ((vpage.0 / CHUNK_PAGES) - (self.start.0 / CHUNK_PAGES)) as usize
    }
}

/// One task's address space: its VMAs sorted by start.
#[derive(Clone, Debug, Default)]
pub(crate) struct AddressSpace {
    pub(crate) regions: Vec<Region>,
    last: usize,
    /// Kernel pages charged to the memory cgroup for this space: one per chunk of PTEs
    /// (`pte_alloc_one`) and the process's other kernel memory (`kmem_pages`); released
    /// by `exit_mmap`.
    table_pages: u64,
    /// Of `table_pages`, those charged for the process's kernel memory besides its PTE
    /// pages (`MemcgConfig::process_kmem`), before its first PTE page.
    kmem_pages: u64,
}

/// Where a virtual page lives in the PTE store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lookup {
    pub(crate) region_idx: usize,
    pub(crate) page: Option<PageId>,
}

/// All address spaces' PTEs.
#[derive(Clone, Debug, Default)]
pub(crate) struct PageTables {
    pub(crate) ptes: Vec<Pte>,
    pub(crate) spaces: Vec<AddressSpace>,
    /// (address space, region index) per RegionId, for reports and policies.
    pub(crate) region_owner: Vec<(u32, u32)>,
    /// Largest virtual page accepted (a 57-bit address space).
    max_vpage: u64,
    /// Large folio orders of regions mapped without a hint (implicit regions).
    pub(crate) default_orders: OrderMask,
    /// Page contents classes in use; regions and chunks name them by index.
    pub(crate) contents: Vec<crate::contents::Contents>,
    /// Contents of implicit regions (index into `contents`).
    pub(crate) default_contents: u8,
    /// Contents of each chunk's region, by chunk.
    chunk_contents: Vec<u8>,
    /// The PTEs of each chunk that lie inside its region: `[lo, hi)` within the chunk.
    chunk_bounds: Vec<(u16, u16)>,
}

pub(crate) use crate::error::MapError;

impl PageTables {
    pub(crate) fn new() -> PageTables {
        PageTables {
            max_vpage: (1u64 << 45) - 1,
            contents: vec![crate::contents::Contents::default()],
            ..Default::default()
        }
    }

    /// The index of a contents class, registering it on first use.
    pub(crate) fn contents_id(&mut self, c: &crate::contents::Contents) -> u8 {
        if let Some(i) = self.contents.iter().position(|x| x == c) {
            return i as u8;
        }
        assert!(self.contents.len() < 255, "more than 255 page contents classes");
        self.contents.push(c.clone());
        (self.contents.len() - 1) as u8
    }

    /// The index of the contents class of the page behind PTE `page`.
    #[inline]
    pub(crate) fn page_contents_id(&self, page: PageId) -> u8 {
        self.chunk_contents[(page.0 / CHUNK_PAGES as u32) as usize]
    }

    pub(crate) fn add_space(&mut self) -> SpaceId {
        self.spaces.push(AddressSpace::default());
        SpaceId::from_index(self.spaces.len() - 1)
    }

    /// Maps a VMA. Overlapping an existing VMA is refused.
    pub(crate) fn map_region(
        &mut self,
        space: SpaceId,
        start: VirtPage,
        pages: u64,
        orders: OrderMask,
        contents: u8,
    ) -> Result<usize, MapError> {
        if pages == 0 || start.0.checked_add(pages).is_none_or(|end| end - 1 > self.max_vpage) {
            return Err(MapError::OutOfRange { vpage: start.0.saturating_add(pages) });
        }
        let id = RegionId(self.region_owner.len() as u32);
        let first_chunk = start.0 / CHUNK_PAGES;
        let last_chunk = (start.0 + pages - 1) / CHUNK_PAGES;
        let region = Region {
            id,
            start,
            pages,
            orders,
            contents,
            chunks: vec![NO_CHUNK; (last_chunk - first_chunk + 1) as usize],
        };
        let regions = &mut self.spaces[space.index()].regions;
        let pos = regions.partition_point(|r| r.start.0 < start.0);
        let overlaps_prev = pos > 0 && regions[pos - 1].end().0 > start.0;
        let overlaps_next = pos < regions.len() && regions[pos].start.0 < start.0 + pages;
        if overlaps_prev || overlaps_next {
            return Err(MapError::Overlap { start: start.0, pages });
        }
        regions.insert(pos, region);
        self.region_owner.push((space.0, 0));
        for (i, r) in self.spaces[space.index()].regions.iter().enumerate() {
            self.region_owner[r.id.0 as usize] = (space.0, i as u32);
        }
        self.spaces[space.index()].last = pos;
        Ok(pos)
    }

    /// The index of the region of `space` that holds `vpage`: the one found last if it
    /// does, else found by binary search; `None` outside every VMA.
    #[inline]
    fn region_of(&self, space: SpaceId, vpage: VirtPage) -> Option<usize> {
        let asp = &self.spaces[space.index()];
        if asp.regions.get(asp.last).is_some_and(|r| r.contains(vpage)) {
            return Some(asp.last);
        }
        let pos = asp.regions.partition_point(|r| r.start.0 <= vpage.0);
        (pos > 0 && asp.regions[pos - 1].contains(vpage)).then(|| pos - 1)
    }

    /// Finds the region and PTE of `vpage` without allocating; `None` outside every VMA.
    #[inline]
    pub(crate) fn lookup(&mut self, space: SpaceId, vpage: VirtPage) -> Option<Lookup> {
        let idx = self.region_of(space, vpage)?;
        self.spaces[space.index()].last = idx;
        Some(Lookup { region_idx: idx, page: self.existing_page(space, idx, vpage) })
    }

    /// Prefetches the PTE of `page` (see `Mm::warm_batch` and [`AccessView`]).
    #[inline]
    pub(crate) fn prefetch_pte(&self, page: PageId) {
        if let Some(pte) = self.ptes.get(page.0 as usize) {
            crate::prefetch::prefetch(pte);
        }
    }

    /// The PTE of `vpage` in the given region, allocating its chunk on first touch.
    pub(crate) fn page_for(
        &mut self,
        space: SpaceId,
        region_idx: usize,
        vpage: VirtPage,
    ) -> Result<PageId, MapError> {
        let region = &mut self.spaces[space.index()].regions[region_idx];
        debug_assert!(region.contains(vpage));
        let ci = region.chunk_index(vpage);
        if region.chunks[ci] == NO_CHUNK {
            let chunk = self.ptes.len() as u64 / CHUNK_PAGES;
            if chunk >= u64::from(u32::MAX) / CHUNK_PAGES {
                return Err(MapError::TooManyPages);
            }
            region.chunks[ci] = chunk as u32;
            self.chunk_contents.push(region.contents);
            let chunk_start = vpage.0 / CHUNK_PAGES * CHUNK_PAGES;
            let lo = region.start.0.max(chunk_start) - chunk_start;
            let hi = region.end().0.min(chunk_start + CHUNK_PAGES) - chunk_start;
            self.chunk_bounds.push((lo as u16, hi as u16));
            self.ptes.resize(self.ptes.len() + CHUNK_PAGES as usize, Pte::default());
        }
        Ok(PageId(region.chunks[ci] * CHUNK_PAGES as u32 + (vpage.0 % CHUNK_PAGES) as u32))
    }

    /// The PTE of `vpage` in a region if its chunk exists.
    #[inline]
    pub(crate) fn existing_page(&self, space: SpaceId, region_idx: usize, vpage: VirtPage) -> Option<PageId> {
        let region = &self.spaces[space.index()].regions[region_idx];
        if !region.contains(vpage) {
            return None;
        }
        let chunk = region.chunks[region.chunk_index(vpage)];
        (chunk != NO_CHUNK).then(|| PageId(chunk * CHUNK_PAGES as u32 + (vpage.0 % CHUNK_PAGES) as u32))
    }

    /// Maps an implicit 1 GiB-aligned region around `vpage` (for traces without VMA data),
    /// shrunk so that it does not overlap existing regions.
    pub(crate) fn map_implicit(&mut self, space: SpaceId, vpage: VirtPage) -> Result<usize, MapError> {
        if vpage.0 > self.max_vpage {
            return Err(MapError::OutOfRange { vpage: vpage.0 });
        }
        const SPAN: u64 = 1 << 18;
        let mut start = vpage.0 & !(SPAN - 1);
        let mut end = (start + SPAN).min(self.max_vpage + 1);
        for r in &self.spaces[space.index()].regions {
            if r.end().0 <= vpage.0 {
                start = start.max(r.end().0);
            } else if r.start.0 > vpage.0 {
                end = end.min(r.start.0);
            }
        }
        self.map_region(space, VirtPage(start), end - start, self.default_orders, self.default_contents)
    }

    /// The aligned range of `2^order` pages around `vpage` as PTE ids, if it lies inside
    /// the region (`thp_vma_suitable_order`) and its chunk exists. Aligned ranges of at
    /// most 512 pages never cross a chunk, so the ids are consecutive.
    pub(crate) fn folio_range(
        &self,
        space: SpaceId,
        region_idx: usize,
        vpage: VirtPage,
        order: u8,
    ) -> Option<(VirtPage, PageId)> {
        let nr = 1u64 << order;
        let first = VirtPage(vpage.0 & !(nr - 1));
        let region = &self.spaces[space.index()].regions[region_idx];
        if first.0 < region.start.0 || first.0 + nr > region.end().0 {
            return None;
        }
        self.existing_page(space, region_idx, first).map(|p| (first, p))
    }

    /// Every allocated PTE of an address space, in virtual address order (the order
    /// swapoff and exit walk page tables).
    pub(crate) fn space_pages(&self, space: SpaceId) -> Vec<PageId> {
        let mut out = Vec::new();
        for r in &self.spaces[space.index()].regions {
            let base_chunk = r.start.0 / CHUNK_PAGES;
            for (ci, &chunk) in r.chunks.iter().enumerate() {
                if chunk == NO_CHUNK {
                    continue;
                }
                let chunk_start = (base_chunk + ci as u64) * CHUNK_PAGES;
                let lo = chunk_start.max(r.start.0);
                let hi = (chunk_start + CHUNK_PAGES).min(r.end().0);
                out.extend((lo..hi).map(|vp| PageId(chunk * CHUNK_PAGES as u32 + (vp % CHUNK_PAGES) as u32)));
            }
        }
        out
    }

    /// Resident and swapped-out pages of `space` (VmRSS and VmSwap in pages): one pass
    /// over its allocated PTEs.
    pub(crate) fn space_page_counts(&self, space: SpaceId) -> (u64, u64) {
        let (mut present, mut swapped) = (0u64, 0u64);
        for chunk in self.space_chunks(space) {
            let (lo, hi) = self.chunk_range(chunk);
            for pte in &self.ptes[lo as usize..hi as usize] {
                present += u64::from(pte.is_present());
                swapped += u64::from(pte.is_swap());
            }
        }
        (present, swapped)
    }

    /// The PTEs of `chunk` inside its region, as `PageId`s `[lo, hi)`: the range a
    /// page-table walker of that VMA visits in the chunk's PMD.
    pub(crate) fn chunk_range(&self, chunk: u32) -> (u32, u32) {
        let (lo, hi) = self.chunk_bounds[chunk as usize];
        let base = chunk * CHUNK_PAGES as u32;
        (base + u32::from(lo), base + u32::from(hi))
    }

    /// Counts one page-table page charged for a new chunk of `space`.
    pub(crate) fn count_table_page(&mut self, space: SpaceId) {
        self.spaces[space.index()].table_pages += 1;
    }

    /// Counts one page of the process's kernel memory besides its PTE pages, charged to
    /// the memory cgroup for `space` and released with its page tables.
    pub(crate) fn count_kmem_page(&mut self, space: SpaceId) {
        let s = &mut self.spaces[space.index()];
        s.table_pages += 1;
        s.kmem_pages += 1;
    }

    /// How many of the `want` pages of kernel memory a process charges before its first
    /// PTE page `space` has still to charge: none once a PTE page was charged.
    pub(crate) fn kmem_due(&self, space: SpaceId, want: u64) -> u64 {
        let s = &self.spaces[space.index()];
        if s.table_pages > s.kmem_pages {
            0
        } else {
            want.saturating_sub(s.kmem_pages)
        }
    }

    /// Page-table pages charged for every address space's chunks.
    pub(crate) fn table_pages(&self) -> u64 {
        self.spaces.iter().map(|s| s.table_pages).sum()
    }

    /// Takes the page-table pages charged for `space`'s chunks, leaving none: its page
    /// tables are freed (`free_pgtables`).
    pub(crate) fn take_table_pages(&mut self, space: SpaceId) -> u64 {
        self.spaces[space.index()].kmem_pages = 0;
        std::mem::take(&mut self.spaces[space.index()].table_pages)
    }

    /// The allocated chunks of an address space in virtual address order.
    pub(crate) fn space_chunks(&self, space: SpaceId) -> impl Iterator<Item = u32> + '_ {
        self.spaces[space.index()]
            .regions
            .iter()
            .flat_map(|r| r.chunks.iter().copied().filter(|&c| c != NO_CHUNK))
    }

    #[inline]
    pub(crate) fn pte(&self, page: PageId) -> Pte {
        self.ptes[page.0 as usize]
    }
    /// Swapoff's look along a page table: the first of the `n` PTEs from `page` on
    /// (consecutive virtual pages of one 2 MiB block, which have consecutive PTEs) that
    /// holds a slot of `device`, with its slot, and how many PTEs were looked at to find
    /// it (all `n` if none does). The first PTE is tested on its own: the walk resumes
    /// after the PTE it last swapped in, so that is usually the one.
    #[inline]
    pub(crate) fn find_swap_pte(
        &self,
        page: PageId,
        n: usize,
        device: DeviceId,
    ) -> (usize, Option<(PageId, SwapSlot)>) {
        debug_assert!(n > 0 && page.0 as u64 / CHUNK_PAGES == (page.0 as u64 + n as u64 - 1) / CHUNK_PAGES);
        let ours = |pte: Pte| match pte.state() {
            PteState::Swap(slot) if slot.device == device => Some(slot),
            _ => None,
        };
        if let Some(slot) = ours(self.pte(page)) {
            return (1, Some((page, slot)));
        }
        let rest = &self.ptes[page.0 as usize + 1..page.0 as usize + n];
        match rest.iter().enumerate().find_map(|(i, &pte)| Some((i, ours(pte)?))) {
            Some((i, slot)) => (i + 2, Some((PageId(page.0 + 1 + i as u32), slot))),
            None => (n, None),
        }
    }
    #[inline]
    pub(crate) fn pte_mut(&mut self, page: PageId) -> &mut Pte {
        &mut self.ptes[page.0 as usize]
    }

    /// Address space `space`'s regions and every PTE, borrowed apart, for reading a
    /// task's accesses ahead and for a run of resident hits ([`AccessView`]).
    #[inline]
    pub(crate) fn access_view(&mut self, space: SpaceId) -> AccessView<'_> {
        let asp = &self.spaces[space.index()];
        let mut view = AccessView {
            regions: &asp.regions,
            start: 0,
            pages: 0,
            first_chunk: 0,
            chunks: &[],
            ptes: &mut self.ptes,
        };
        if let Some(region) = asp.regions.get(asp.last) {
            view.look_in(region);
        }
        view
    }
}

/// One address space's page tables as the access path reads them ahead and a run of
/// resident hits uses them: pages found as [`PageTables::lookup`] finds them but without
/// allocating or changing anything, not even the region `lookup` tries first, looking
/// first in the region of the last page found here; and the PTEs, to set a hit's bits.
/// While it lives nothing maps a page or a region, so the region's chunk table can be held.
pub(crate) struct AccessView<'a> {
    regions: &'a [Region],
    /// The region looked in first: its first page, its length and first chunk number
    /// (its start over [`CHUNK_PAGES`]), and its chunk table.
    start: u64,
    pages: u64,
    first_chunk: u64,
    chunks: &'a [u32],
    ptes: &'a mut [Pte],
}

impl<'a> AccessView<'a> {
    fn look_in(&mut self, region: &'a Region) {
        self.start = region.start.0;
        self.pages = region.pages;
        self.first_chunk = region.start.0 / CHUNK_PAGES;
        self.chunks = &region.chunks;
    }

    /// The page of `vpage` if it exists.
    #[inline(always)]
    pub(crate) fn peek_page(&mut self, vpage: VirtPage) -> Option<PageId> {
        if vpage.0.wrapping_sub(self.start) >= self.pages && !self.find_region(vpage) {
            return None;
        }
        let chunk = self.chunks[(vpage.0 / CHUNK_PAGES - self.first_chunk) as usize];
        (chunk != NO_CHUNK).then(|| PageId(chunk * CHUNK_PAGES as u32 + (vpage.0 % CHUNK_PAGES) as u32))
    }

    /// Looks in the region holding `vpage` from now on; false when no region holds it.
    #[cold]
    #[inline(never)]
    fn find_region(&mut self, vpage: VirtPage) -> bool {
        let pos = self.regions.partition_point(|r| r.start.0 <= vpage.0);
        match pos.checked_sub(1).map(|i| &self.regions[i]) {
            Some(region) if region.contains(vpage) => {
                self.look_in(region);
                true
            }
            _ => false,
        }
    }

    #[inline(always)]
    pub(crate) fn pte(&self, page: PageId) -> Pte {
        self.ptes[page.0 as usize]
    }

    #[inline(always)]
    pub(crate) fn pte_mut(&mut self, page: PageId) -> &mut Pte {
        &mut self.ptes[page.0 as usize]
    }

    /// Prefetches the PTE of `page`, as [`PageTables::prefetch_pte`] does.
    #[inline(always)]
    pub(crate) fn prefetch_pte(&self, page: PageId) {
        if let Some(pte) = self.ptes.get(page.0 as usize) {
            crate::prefetch::prefetch(pte);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pte_round_trips() {
        let slot = SwapSlot { device: DeviceId(3), offset: 0xdead_beef };
        assert_eq!(Pte::swap(slot).state(), PteState::Swap(slot));
        let mut p = Pte::present(Pfn(77), false, false);
        assert_eq!(p.state(), PteState::Present(Pfn(77)));
        p.touch(true);
        assert!(p.accessed() && p.dirty());
        p.clear_accessed();
        assert!(!p.accessed() && p.dirty());
        assert_eq!(Pte::default().state(), PteState::None);
    }

    #[test]
    fn sparse_regions_allocate_chunks_lazily() {
        let mut pt = PageTables::new();
        let s = pt.add_space();
        pt.map_region(s, VirtPage(1 << 30), 1 << 20, 0, 0).unwrap();
        assert_eq!(
            pt.map_region(s, VirtPage((1 << 30) + 5), 3, 0, 0),
            Err(MapError::Overlap { start: (1 << 30) + 5, pages: 3 })
        );
        let l = pt.lookup(s, VirtPage((1 << 30) + 700)).unwrap();
        assert_eq!(l.page, None);
        let p = pt.page_for(s, l.region_idx, VirtPage((1 << 30) + 700)).unwrap();
        assert_eq!(pt.ptes.len(), 512);
        assert_eq!(pt.lookup(s, VirtPage((1 << 30) + 700)).unwrap().page, Some(p));
        assert!(pt.lookup(s, VirtPage(5)).is_none());
        let r = pt.map_implicit(s, VirtPage(5)).unwrap();
        assert_eq!(pt.spaces[s.index()].regions[r].start, VirtPage(0));
    }
}
