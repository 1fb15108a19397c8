//! The footprint of zswap's compressed pool: a model of zsmalloc (`mm/zsmalloc.c`, Linux
//! 6.18).
//!
//! The pool does not cost the sum of the compressed sizes. zsmalloc rounds every object up to
//! a size class, packs each class's objects into zspages (chains of 1 to 8 pages), and a
//! zspage goes back to the page allocator only when its last object is freed. This module
//! keeps that bookkeeping, with no object data, so that [`ZsPool::total_pages`] is what
//! `zs_get_total_pages` would say for the same sequence of allocations and frees.
//!
//! # Size classes (built once, in [`ZsPool::new`])
//! - Class `i` (0..=254) is for allocations (object plus handle, below) up to `32 + 16 * i`
//!   bytes (`ZS_MIN_ALLOC_SIZE` 32, `ZS_SIZE_CLASS_DELTA` = 4096 >> 8 = 16), capped at 4096.
//! - Each class's zspage is the chain of 1..=8 pages (`CONFIG_ZSMALLOC_CHAIN_SIZE`, default
//!   8) that leaves the fewest bytes unused after packing whole objects; the shortest chain
//!   wins a tie, and a power-of-two size always takes one page. `objs_per_zspage` is the
//!   chain's bytes divided by the size.
//! - Neighbouring classes with the same (pages, objects) per zspage are merged, into the
//!   largest size of the run: an object's footprint is that size. All the sizes that only
//!   fit once into a one-page zspage thereby merge into one huge class of 4096 bytes: an
//!   object from about 3.6 KiB up takes a whole page.
//! - `zs_malloc` adds the 8-byte handle it stores in front of each object
//!   (`ZS_HANDLE_SIZE`) to the length before choosing a class; 6.18 still does this for every
//!   object, huge ones included (a huge zspage keeps the handle elsewhere, but the class is
//!   chosen first).
//!
//! # Zspages
//! Each class keeps its zspages in twelve fullness groups by the share of slots in use:
//! 0 (empty), 1..=10 for "up to 10%" .. "90% up to 99%" (`100 * inuse / objs / 10 + 1`),
//! 11 for full. A group is a list; a zspage that changes group goes to the front of its new
//! one. An allocation takes the front zspage of the fullest non-full group (99% down to 0%,
//! `find_get_zspage`), or a new zspage when the class has none with room. A free moves its
//! zspage down a group when the share drops across a step, and frees the zspage once it is
//! empty.
//!
//! Simplified:
//! - No compaction. zsmalloc moves objects out of sparse zspages only from its shrinker
//!   (under memory pressure, through the global shrinker list) and from zram's `compact`
//!   knob; neither runs here, so a pool keeps the fragmentation its frees leave.
//! - No page migration, no deferred free of a zspage whose pages are locked, no allocation
//!   failure: every `malloc` succeeds.
//! - Which free slot of a zspage an object takes is not kept (it changes nothing the model
//!   reports); only the count of slots in use.
//! - The handle itself (a slab object of 8 bytes outside the pool) and the `struct zspage`
//!   descriptor are not counted, as `zs_get_total_pages` does not count them.

use crate::ids::PAGE_SIZE;

const PAGE: u32 = PAGE_SIZE as u32;
/// Smallest class size.
const ZS_MIN_ALLOC_SIZE: u32 = 32;
/// Step between class sizes: `PAGE_SIZE >> CLASS_BITS`.
const ZS_SIZE_CLASS_DELTA: u32 = PAGE >> 8;
/// Number of class indices: 255 with 4 KiB pages.
const ZS_SIZE_CLASSES: usize = ((PAGE - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA) + 1) as usize;
/// Longest zspage, in pages (`CONFIG_ZSMALLOC_CHAIN_SIZE`'s default).
const CHAIN_SIZE: u32 = 8;
/// Bytes of the handle stored in front of each object.
const ZS_HANDLE_SIZE: u32 = 8;
/// Fullness groups: 0 empty, 1..=10 partly used, 11 full.
const GROUPS: usize = 12;
const GROUP_EMPTY: u8 = 0;
const GROUP_FULL: u8 = 11;
/// No zspage (list end) / no live zspage behind a handle.
const NIL: u32 = u32::MAX;
/// `Zspage::group` of a zspage slot that is on the free list.
const DEAD: u8 = u8::MAX;

/// A live object of a [`ZsPool`], as `zs_malloc` returns it, with the zspage that holds it:
/// the pool moves no object (no compaction), so the zspage stays what it was, and freeing
/// the object reaches its zspage without first reading the handle's table entry, a cache
/// miss of its own on every zswap load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ZsHandle {
    id: u32,
    zspage: u32,
}

/// One merged size class.
#[derive(Debug, Clone)]
struct SizeClass {
    /// Footprint of each object, in bytes.
    size: u32,
    pages_per_zspage: u32,
    objs_per_zspage: u32,
    /// Front zspage of each fullness group's list, `NIL` if empty.
    heads: [u32; GROUPS],
}

/// A zspage: 12 bytes, kept in a dense table and linked into its group's list by index.
#[derive(Debug, Clone, Copy)]
struct Zspage {
    /// Index into `ZsPool::classes`.
    class: u8,
    /// Fullness group, or `DEAD` for a free slot of the table.
    group: u8,
    inuse: u16,
    prev: u32,
    next: u32,
}

/// The zsmalloc pool: size classes, zspages and the objects in them.
#[derive(Clone, Debug)]
pub(crate) struct ZsPool {
    classes: Vec<SizeClass>,
    /// Class index (by rounded-up size) to merged class in `classes`.
    class_of: [u8; ZS_SIZE_CLASSES],
    zspages: Vec<Zspage>,
    free_zspages: Vec<u32>,
    /// Handle to the zspage holding it, `NIL` for a free handle.
    objects: Vec<u32>,
    free_handles: Vec<u32>,
    total_pages: u64,
    live_objects: u64,
}

impl Default for ZsPool {
    fn default() -> ZsPool {
        ZsPool::new()
    }
}

/// The chain length (1..=`CHAIN_SIZE` pages) that wastes the fewest bytes for `size`
/// (`calculate_zspage_chain_size`).
fn chain_pages(size: u32) -> u32 {
    if size.is_power_of_two() {
        return 1;
    }
    (1..=CHAIN_SIZE).min_by_key(|&k| (k * PAGE) % size).unwrap_or(1)
}

/// The class index of an allocation of `size` bytes, handle included.
fn class_index(size: u32) -> usize {
    let index =
        if size > ZS_MIN_ALLOC_SIZE { (size - ZS_MIN_ALLOC_SIZE).div_ceil(ZS_SIZE_CLASS_DELTA) } else { 0 };
    (index as usize).min(ZS_SIZE_CLASSES - 1)
}

/// The fullness group of a zspage with `inuse` of `objs` slots taken.
fn fullness(inuse: u32, objs: u32) -> u8 {
    if inuse == 0 {
        GROUP_EMPTY
    } else if inuse == objs {
        GROUP_FULL
    } else {
        (100 * inuse / objs / 10 + 1) as u8
    }
}

impl ZsPool {
    /// An empty pool, its size classes built as `zs_create_pool` builds them.
    pub(crate) fn new() -> ZsPool {
        let mut classes: Vec<SizeClass> = Vec::new();
        let mut class_of = [0u8; ZS_SIZE_CLASSES];
        // From the largest size down, so that a merged class keeps the largest size of its run.
        for i in (0..ZS_SIZE_CLASSES).rev() {
            let size = (ZS_MIN_ALLOC_SIZE + i as u32 * ZS_SIZE_CLASS_DELTA).min(PAGE);
            let pages = chain_pages(size);
            let objs = pages * PAGE / size;
            match classes.last() {
                Some(prev) if prev.pages_per_zspage == pages && prev.objs_per_zspage == objs => {}
                _ => classes.push(SizeClass {
                    size,
                    pages_per_zspage: pages,
                    objs_per_zspage: objs,
                    heads: [NIL; GROUPS],
                }),
            }
            class_of[i] = (classes.len() - 1) as u8;
        }
        ZsPool {
            classes,
            class_of,
            zspages: Vec::new(),
            free_zspages: Vec::new(),
            objects: Vec::new(),
            free_handles: Vec::new(),
            total_pages: 0,
            live_objects: 0,
        }
    }

    /// Stores an object of `len` bytes (1..=PAGE_SIZE). Never fails (the model has no
    /// allocation failure).
    pub(crate) fn malloc(&mut self, len: u32) -> ZsHandle {
        assert!((1..=PAGE).contains(&len), "zsmalloc object of {len} bytes is outside 1..={PAGE}");
        let c = self.class_of[class_index(len + ZS_HANDLE_SIZE)];
        let class = &self.classes[usize::from(c)];
        let pages = class.pages_per_zspage;
        // The front zspage of the fullest group that still has room (99% down to 0%).
        let found = class.heads[..usize::from(GROUP_FULL)].iter().rev().copied().find(|&z| z != NIL);
        let z = match found {
            Some(z) => {
                self.zspages[z as usize].inuse += 1;
                self.refile(z);
                z
            }
            None => {
                let fresh = Zspage { class: c, group: DEAD, inuse: 1, prev: NIL, next: NIL };
                let z = match self.free_zspages.pop() {
                    Some(z) => {
                        self.zspages[z as usize] = fresh;
                        z
                    }
                    None => {
                        self.zspages.push(fresh);
                        (self.zspages.len() - 1) as u32
                    }
                };
                self.total_pages += u64::from(pages);
                let group = self.group_of(z);
                self.link(z, group);
                z
            }
        };
        self.live_objects += 1;
        match self.free_handles.pop() {
            Some(h) => {
                self.objects[h as usize] = z;
                ZsHandle { id: h, zspage: z }
            }
            None => {
                self.objects.push(z);
                ZsHandle { id: (self.objects.len() - 1) as u32, zspage: z }
            }
        }
    }

    /// Frees the object behind `h`; its zspage goes back when it was the last one there.
    pub(crate) fn free(&mut self, h: ZsHandle) {
        let z = h.zspage;
        debug_assert_eq!(self.objects.get(h.id as usize), Some(&z), "zsmalloc handle {} is not live", h.id);
        self.objects[h.id as usize] = NIL;
        self.free_handles.push(h.id);
        self.live_objects -= 1;
        self.zspages[z as usize].inuse -= 1;
        if self.zspages[z as usize].inuse == 0 {
            self.unlink(z);
            let class = usize::from(self.zspages[z as usize].class);
            self.total_pages -= u64::from(self.classes[class].pages_per_zspage);
            self.zspages[z as usize].group = DEAD;
            self.free_zspages.push(z);
        } else {
            self.refile(z);
        }
    }

    /// Prefetches what freeing `h` reads and writes: its zspage and its handle's entry.
    #[inline]
    pub(crate) fn prefetch_free(&self, h: ZsHandle) {
        if let Some(zs) = self.zspages.get(h.zspage as usize) {
            crate::prefetch::prefetch(zs);
        }
        if let Some(entry) = self.objects.get(h.id as usize) {
            crate::prefetch::prefetch(entry);
        }
    }

    /// zs_get_total_pages: pages of every live zspage.
    pub(crate) fn total_pages(&self) -> u64 {
        self.total_pages
    }

    /// Live objects.
    pub(crate) fn objects(&self) -> u64 {
        self.live_objects
    }

    /// The footprint of the object behind `h`, in bytes (its class size).
    #[cfg(test)]
    pub(crate) fn object_size(&self, h: ZsHandle) -> u32 {
        let z = self.objects[h.id as usize];
        assert!(z != NIL, "zsmalloc handle {} is not live", h.id);
        self.classes[usize::from(self.zspages[z as usize].class)].size
    }

    /// The class an object of `len` bytes would go to: (footprint in bytes, pages per
    /// zspage, objects per zspage).
    #[cfg(test)]
    pub(crate) fn class_for(&self, len: u32) -> (u32, u32, u32) {
        let class = &self.classes[usize::from(self.class_of[class_index(len + ZS_HANDLE_SIZE)])];
        (class.size, class.pages_per_zspage, class.objs_per_zspage)
    }

    /// The smallest object length, in bytes, that goes to the huge class and so takes a page
    /// to itself (`zs_huge_class_size`).
    #[cfg(test)]
    pub(crate) fn huge_class_size(&self) -> u32 {
        (1..=PAGE).find(|&len| self.class_for(len).2 == 1).unwrap_or(PAGE)
    }

    /// Live zspages.
    #[cfg(test)]
    pub(crate) fn zspages(&self) -> u64 {
        (self.zspages.len() - self.free_zspages.len()) as u64
    }

    /// Internal consistency (every live handle in one zspage, counts add up, fullness groups
    /// right).
    pub(crate) fn check(&self) -> Result<(), String> {
        let n = self.zspages.len();
        let mut seen = vec![false; n];
        let mut listed = 0usize;
        for (c, class) in self.classes.iter().enumerate() {
            if u64::from(class.size) * u64::from(class.objs_per_zspage)
                > u64::from(class.pages_per_zspage) * PAGE_SIZE
            {
                return Err(format!(
                    "class {c}: {} objects of {} B overflow its zspage",
                    class.objs_per_zspage, class.size
                ));
            }
            for (g, &head) in class.heads.iter().enumerate() {
                let (mut prev, mut z) = (NIL, head);
                while z != NIL {
                    let zs = self
                        .zspages
                        .get(z as usize)
                        .ok_or(format!("class {c} lists zspage {z}, past the table"))?;
                    if seen[z as usize] {
                        return Err(format!("zspage {z} is listed twice"));
                    }
                    seen[z as usize] = true;
                    listed += 1;
                    if zs.group == DEAD || usize::from(zs.class) != c || usize::from(zs.group) != g {
                        return Err(format!(
                            "zspage {z} on class {c} group {g} says class {} group {}",
                            zs.class, zs.group
                        ));
                    }
                    if zs.prev != prev {
                        return Err(format!("zspage {z}: back link {} where {prev} is in front", zs.prev));
                    }
                    let want = fullness(u32::from(zs.inuse), class.objs_per_zspage);
                    if want != zs.group || zs.inuse == 0 || u32::from(zs.inuse) > class.objs_per_zspage {
                        return Err(format!(
                            "zspage {z}: {} of {} in use, in group {}",
                            zs.inuse, class.objs_per_zspage, g
                        ));
                    }
                    prev = z;
                    z = zs.next;
                }
            }
        }
        let dead = self.zspages.iter().filter(|z| z.group == DEAD).count();
        if dead != self.free_zspages.len() || listed + dead != n {
            return Err(format!(
                "{n} zspages: {listed} listed, {dead} dead, {} on the free list",
                self.free_zspages.len()
            ));
        }
        let mut inuse = vec![0u32; n];
        let mut live = 0u64;
        for (h, &z) in self.objects.iter().enumerate() {
            if z == NIL {
                continue;
            }
            if z as usize >= n || self.zspages[z as usize].group == DEAD {
                return Err(format!("handle {h} points at zspage {z}, which is not live"));
            }
            inuse[z as usize] += 1;
            live += 1;
        }
        for (z, zs) in self.zspages.iter().enumerate() {
            if zs.group != DEAD && inuse[z] != u32::from(zs.inuse) {
                return Err(format!(
                    "zspage {z} counts {} objects, {} handles point at it",
                    zs.inuse, inuse[z]
                ));
            }
        }
        let free = self.objects.len() as u64 - live;
        if live != self.live_objects || free != self.free_handles.len() as u64 {
            return Err(format!(
                "{live} live handles, {} counted, {free} free but {} listed",
                self.live_objects,
                self.free_handles.len()
            ));
        }
        let pages: u64 = self
            .zspages
            .iter()
            .filter(|z| z.group != DEAD)
            .map(|z| u64::from(self.classes[usize::from(z.class)].pages_per_zspage))
            .sum();
        if pages != self.total_pages {
            return Err(format!("live zspages hold {pages} pages, the pool counts {}", self.total_pages));
        }
        Ok(())
    }

    /// The group zspage `z` belongs in now.
    fn group_of(&self, z: u32) -> u8 {
        let zs = self.zspages[z as usize];
        fullness(u32::from(zs.inuse), self.classes[usize::from(zs.class)].objs_per_zspage)
    }

    /// Moves `z` to the front of its group's list if its group changed (`fix_fullness_group`).
    fn refile(&mut self, z: u32) {
        let group = self.group_of(z);
        if group != self.zspages[z as usize].group {
            self.unlink(z);
            self.link(z, group);
        }
    }

    /// Puts `z` at the front of `group`'s list (`insert_zspage`).
    fn link(&mut self, z: u32, group: u8) {
        let class = usize::from(self.zspages[z as usize].class);
        let head = self.classes[class].heads[usize::from(group)];
        if head != NIL {
            self.zspages[head as usize].prev = z;
        }
        let zs = &mut self.zspages[z as usize];
        zs.group = group;
        zs.prev = NIL;
        zs.next = head;
        self.classes[class].heads[usize::from(group)] = z;
    }

    /// Takes `z` off its group's list (`remove_zspage`).
    fn unlink(&mut self, z: u32) {
        let Zspage { class, group, prev, next, .. } = self.zspages[z as usize];
        if prev == NIL {
            self.classes[usize::from(class)].heads[usize::from(group)] = next;
        } else {
            self.zspages[prev as usize].next = next;
        }
        if next != NIL {
            self.zspages[next as usize].prev = prev;
        }
        let zs = &mut self.zspages[z as usize];
        zs.prev = NIL;
        zs.next = NIL;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contents::{compressed_len, Compressor, Contents};
    use crate::rng::SimRng;
    use rand::Rng;

    /// A seeded stream for the tests.
    struct Draws(SimRng);
    impl Draws {
        fn new(seed: u64) -> Draws {
            Draws(SimRng::derive(seed, "zsmalloc-test"))
        }
        fn below(&mut self, n: u64) -> u64 {
            self.0.random_range(0..n)
        }
    }

    #[test]
    fn class_table_facts() {
        let pool = ZsPool::new();
        assert_eq!(ZS_SIZE_CLASSES, 255);
        // 2100 bytes + the 8-byte handle = 2108, index ceil((2108 - 32) / 16) = 130, size 2112.
        // For sizes in 2049..=2184 a chain of k pages holds 2k - 1 objects and wastes
        // 4096k - (2k - 1) * size, which shrinks as k grows: 8 pages, 15 objects. The same
        // (8, 15) holds for 2064 up to 2176 (32768 / 15 = 2184.5; 2192 fits only 14 times),
        // and the merged class takes the largest size: 2176.
        assert_eq!(pool.class_for(2100), (2176, 8, 15));
        assert_eq!(pool.class_for(2168), (2176, 8, 15));
        // 2213 (a half page under lzo) + 8 = 2221 -> 2224. Wasted bytes per chain of k pages:
        // 1872, 1520, 1168, 816, 464, 112, 1984, 1632: 6 pages, 11 objects, and no neighbour
        // shares (6, 11) (24576 / 11 = 2234.2 leaves no other multiple of 16 between 2208 and 2240).
        assert_eq!(pool.class_for(2213), (2224, 6, 11));
        // The smallest class: 32 bytes is a power of two, one page of 128.
        assert_eq!(pool.class_for(1), (32, 1, 128));
        assert_eq!(pool.class_for(24), (32, 1, 128));
        // 48: three pages hold 256 with nothing left over.
        assert_eq!(pool.class_for(40), (48, 3, 256));
        // Huge: from the top, 3632 is the first size where a longer chain beats one page
        // (8 pages hold 9, wasting 80 bytes, against 464 on one page); every size above it fits
        // once into one page, and all of those merge into the 4096-byte class.
        assert_eq!(pool.class_for(3624), (3632, 8, 9));
        assert_eq!(pool.class_for(3625), (4096, 1, 1));
        assert_eq!(pool.huge_class_size(), 3625);
        assert_eq!(pool.class_for(4096), (4096, 1, 1));
        // Every class index maps to a class at least as large, merged runs share (pages, objs).
        for i in 0..ZS_SIZE_CLASSES {
            let class = &pool.classes[usize::from(pool.class_of[i])];
            assert!(class.size >= (ZS_MIN_ALLOC_SIZE + i as u32 * ZS_SIZE_CLASS_DELTA).min(PAGE));
            assert!(class.pages_per_zspage <= CHAIN_SIZE);
            assert_eq!(class.objs_per_zspage, class.pages_per_zspage * PAGE / class.size);
        }
    }

    #[test]
    fn fill_then_free_returns_every_page() {
        let mut pool = ZsPool::default();
        let mut d = Draws::new(1);
        let handles: Vec<ZsHandle> = (0..5000).map(|_| pool.malloc(1 + d.below(4096) as u32)).collect();
        assert_eq!(pool.objects(), 5000);
        assert!(pool.total_pages() > 0);
        pool.check().unwrap();
        for &h in handles.iter().rev().step_by(2) {
            pool.free(h);
        }
        pool.check().unwrap();
        for &h in handles.iter().rev().skip(1).step_by(2) {
            pool.free(h);
        }
        pool.check().unwrap();
        assert_eq!((pool.total_pages(), pool.objects(), pool.zspages()), (0, 0, 0));
        // Handles and zspage slots are reused.
        let h = pool.malloc(100);
        assert!((h.id as usize) < handles.len());
        pool.check().unwrap();
    }

    #[test]
    fn allocation_prefers_the_fullest_zspage() {
        let mut pool = ZsPool::new();
        // 2100-byte objects: 15 to an 8-page zspage. Fill two zspages.
        let a: Vec<ZsHandle> = (0..15).map(|_| pool.malloc(2100)).collect();
        let b: Vec<ZsHandle> = (0..15).map(|_| pool.malloc(2100)).collect();
        assert_eq!(pool.total_pages(), 16);
        // Leave A at 14 of 15 (93%: group 10) and B at 3 of 15 (20%: group 3).
        pool.free(a[0]);
        for &h in &b[3..] {
            pool.free(h);
        }
        pool.check().unwrap();
        let zs_a = pool.objects[a[1].id as usize];
        let zs_b = pool.objects[b[0].id as usize];
        // The next object goes to A, the fuller one, not B, the more recently touched.
        let h = pool.malloc(2100);
        assert_eq!(pool.objects[h.id as usize], zs_a);
        // A is full now; the next one goes to B, and no new zspage is made.
        let h = pool.malloc(2100);
        assert_eq!(pool.objects[h.id as usize], zs_b);
        assert_eq!(pool.total_pages(), 16);
        pool.check().unwrap();
    }

    #[test]
    fn huge_objects_take_a_page_each() {
        let mut pool = ZsPool::new();
        let h: Vec<ZsHandle> = (0..10).map(|i| pool.malloc(3700 + i * 30)).collect();
        assert_eq!(pool.total_pages(), 10);
        assert!(h.iter().all(|&h| pool.object_size(h) == PAGE));
        // An incompressible page stored as it is: 4096 bytes, one page.
        let raw = pool.malloc(PAGE);
        assert_eq!((pool.object_size(raw), pool.total_pages()), (PAGE, 11));
        pool.free(h[3]);
        assert_eq!(pool.total_pages(), 10);
        pool.check().unwrap();
    }

    #[test]
    fn randomized_malloc_free_stays_consistent() {
        for seed in 1..=4u64 {
            let mut pool = ZsPool::new();
            let mut d = Draws::new(seed);
            let mut live: Vec<ZsHandle> = Vec::new();
            for step in 0..20_000 {
                // Grow for the first half, then shrink, with frees interleaved all along.
                let grow = if step < 10_000 { 3 } else { 1 };
                if live.is_empty() || d.below(4) < grow {
                    let len = match d.below(3) {
                        0 => 1 + d.below(256) as u32,
                        1 => 1500 + d.below(1200) as u32,
                        _ => 1 + d.below(u64::from(PAGE)) as u32,
                    };
                    let h = pool.malloc(len);
                    assert!(pool.object_size(h) >= len + ZS_HANDLE_SIZE || pool.object_size(h) == PAGE);
                    live.push(h);
                } else {
                    let i = d.below(live.len() as u64) as usize;
                    pool.free(live.swap_remove(i));
                }
                if step % 997 == 0 {
                    pool.check().unwrap();
                }
            }
            pool.check().unwrap();
            assert_eq!(pool.objects(), live.len() as u64);
            let mut per_zspage = vec![0u32; pool.zspages.len()];
            for &h in &live {
                per_zspage[pool.objects[h.id as usize] as usize] += 1;
            }
            let pages: u64 = per_zspage
                .iter()
                .enumerate()
                .filter(|&(_, &n)| n > 0)
                .map(|(z, _)| u64::from(pool.classes[usize::from(pool.zspages[z].class)].pages_per_zspage))
                .sum();
            assert_eq!(pages, pool.total_pages());
            for h in live.drain(..) {
                pool.free(h);
            }
            assert_eq!(pool.total_pages(), 0);
            pool.check().unwrap();
        }
    }

    #[test]
    fn half_pages_under_lzo_footprint() {
        // The kernel, 6.18, stored 66,027 half pages with lzo in 152,461,312 bytes of pool:
        // 2309 bytes a page. Every half page compresses to 2213 bytes here, a 2224-byte class
        // of 11 objects to 6 pages: 66,027 / 11 = 6002.5, so 6003 zspages, 36,018 pages,
        // 2234.4 bytes a page packed tight, 3.2% under the kernel. Not tuned to close the gap:
        // the kernel's own LZO may come out a few bytes longer on these pages (2233 to 2264
        // bytes would land in the 2272-byte class, 9 objects to 5 pages: 2275.6 bytes a
        // page), and a pool that held more pages earlier in a run keeps zspages that its
        // frees left partly empty.
        let n = 66_027u64;
        let mut pool = ZsPool::new();
        let handles: Vec<ZsHandle> =
            (0..n).map(|k| pool.malloc(compressed_len(Compressor::Lzo, &Contents::Half, k))).collect();
        let per_page = (pool.total_pages() * PAGE_SIZE) as f64 / n as f64;
        eprintln!("fill: {} pages, {per_page:.1} bytes per stored page", pool.total_pages());
        assert_eq!(pool.total_pages(), 36_018);
        assert!((2200.0..2400.0).contains(&per_page), "{per_page}");
        // Churn: free a random third and store as many again, as swap-ins and new swap-outs
        // would. With one class, new objects fill the holes the frees left (fullest zspage
        // first), so the footprint stays where the fill put it.
        let mut d = Draws::new(66_027);
        let mut live = handles;
        for round in 0..3u64 {
            for _ in 0..n / 3 {
                let i = d.below(live.len() as u64) as usize;
                pool.free(live.swap_remove(i));
            }
            for k in 0..n / 3 {
                live.push(pool.malloc(compressed_len(Compressor::Lzo, &Contents::Half, n * (round + 1) + k)));
            }
        }
        pool.check().unwrap();
        let churned = (pool.total_pages() * PAGE_SIZE) as f64 / live.len() as f64;
        eprintln!("after churn: {} pages, {churned:.1} bytes per stored page", pool.total_pages());
        assert!(churned >= per_page && churned < 2300.0, "{churned}");
        // Shrinking is what leaves holes: free a random fifth and store nothing. Few zspages
        // lose all 11 objects, so the pages stay while the objects go.
        for _ in 0..n / 5 {
            let i = d.below(live.len() as u64) as usize;
            pool.free(live.swap_remove(i));
        }
        let shrunk = (pool.total_pages() * PAGE_SIZE) as f64 / live.len() as f64;
        eprintln!("after freeing a fifth: {} pages, {shrunk:.1} bytes per stored page", pool.total_pages());
        assert!(shrunk > 2600.0, "{shrunk}");
        pool.check().unwrap();
    }
}
