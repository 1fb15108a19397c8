//! The fault path: `do_anonymous_page`, `do_swap_page` and `swapin_readahead`.
//!
//! A resident access only sets PTE bits (the fast path in `access`); everything else is a
//! fault. A swap-cache hit is a minor fault; a miss asks the readahead policy for a
//! window, reads it under one plug and blocks the task on the target's read.
//!
//! A fault on a synchronous device (zram) whose entry has one reference takes the
//! 6.12–6.18 bypass: no swap cache, no readahead, possibly a whole large folio
//! (`alloc_swap_folio`), and the slot is freed once the page is mapped.
//!
//! Simplified: readahead pages that cannot be charged without blocking are skipped; the
//! target page of a swap fault is charged before its neighbours; a large folio found in
//! the swap cache is mapped whole when all its PTEs still name its slots, and split
//! first otherwise (the kernel maps the one page of a partly mapped folio); swapoff on a
//! synchronous device goes through the swap cache.

use super::charge::{Alloc, OnShortage};
use super::wait::{FaultKind, PendingFault, Step, SwapinBy, Wait};
use super::World;
use crate::block::Bio;
use crate::block::PlugOwner;
use crate::config::SwapoffHits;
use crate::device::IoDir;
use crate::error::SimError;
use crate::ids::{Pfn, SpaceId, SwapSlot, TaskId, VirtPage};
use crate::lru::{Origin, Placement};
use crate::mm::frames::flag;
use crate::mm::pagetable::{MapError, PageId, Pte, PteState};
use crate::mm::zswap::{Backend, ReadInto};
use crate::policy::readahead::{FaultView, ReadaheadPlan};
use crate::policy::zswap::ZswapSwapin;
use crate::policy::zswap_writeback::WritebackEvent;
use crate::policy::Feedback;
use crate::workload::Access;

/// A swap-in to perform: by task `t` (whose CPU and plug are used) of `page` in address
/// space `space`, for a fault or for swapoff.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SwapIn {
    pub(crate) t: TaskId,
    pub(crate) space: SpaceId,
    pub(crate) page: PageId,
    pub(crate) region_idx: usize,
    pub(crate) vpage: VirtPage,
    pub(crate) slot: SwapSlot,
    pub(crate) write: bool,
    pub(crate) by: SwapinBy,
}

/// Which page of a swap-in's window a read is for: the faulting one, which the fault
/// waits on and maps, or a readahead neighbour, which goes to the swap cache only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReadRole {
    Target,
    Neighbour,
}

impl World {
    /// The fast path of an access: when `peeked`, the access's page as `next_access` found
    /// it when it prefetched the PTE, is resident and the LRU does not follow accesses,
    /// sets the PTE's accessed (and for a store dirty) bit and returns true; otherwise
    /// returns false and changes nothing, and [`Simulation::access`] handles the access. A
    /// virtual page keeps its PTE once it has one, so the lookup need not be done again.
    /// Apart from `access` so that the common case returns a flag, not a `Result`.
    #[inline(always)]
    pub(super) fn resident_hit(&mut self, a: &Access, peeked: Option<PageId>) -> bool {
        match peeked {
            Some(p) if !self.track_access && self.mm.pt.pte(p).is_present() => {
                self.mm.pt.pte_mut(p).touch(a.write);
                true
            }
            _ => false,
        }
    }

    /// Handles one access by task `t`, which did not take [`World::resident_hit`].
    pub(super) fn access(&mut self, t: TaskId, a: Access) -> Result<Step, SimError> {
        let space = self.tasks[t].space;
        let look = match self.mm.pt.lookup(space, a.vpage) {
            Some(l) => l,
            None => {
                let idx =
                    self.mm.pt.map_implicit(space, a.vpage).map_err(|e| self.map_error(t, a.vpage, e))?;
                crate::mm::pagetable::Lookup { region_idx: idx, page: None }
            }
        };
        let page = match look.page {
            Some(p) => p,
            None => {
                // pte_alloc: the page table is charged before the fault allocates a folio,
                // so a large folio's charge finds that much less room.
                let charged = self.lru.charges_page_tables();
                if charged {
                    // Before its first PTE page, the process's other kernel memory (the
                    // upper page-table levels and the slab of its mappings), then the PTE page.
                    let due = self.mm.pt.kmem_due(space, self.mm.cfg.memcg.process_kmem.pages());
                    for i in 0..=due {
                        match self.charge_page_table(t) {
                            Ok(()) if i < due => self.mm.pt.count_kmem_page(space),
                            Ok(()) => {}
                            Err(Alloc::Oom) => return Ok(Step::Oom),
                            Err(_) => return Ok(Step::WaitWriteback),
                        }
                    }
                }
                let p = self
                    .mm
                    .pt
                    .page_for(space, look.region_idx, a.vpage)
                    .map_err(|e| self.map_error(t, a.vpage, e))?;
                if charged {
                    self.mm.pt.count_table_page(space);
                }
                p
            }
        };
        if self.track_next_use {
            self.tell_next_use(t, page);
        }
        match self.mm.pt.pte(page).state() {
            // Resident, and the LRU follows accesses (or the page was read ahead after
            // the fast path looked).
            PteState::Present(pfn) => {
                self.mm.pt.pte_mut(page).touch(a.write);
                if self.track_access {
                    self.lru.accessed(&mut self.mm, pfn);
                }
                Ok(Step::Done)
            }
            PteState::Zero if !a.write => {
                self.mm.pt.pte_mut(page).touch(false);
                Ok(Step::Done)
            }
            PteState::None if !a.write && !self.tasks[t].reads_create => {
                // A read of untouched anonymous memory maps the shared zero page.
                self.mm.vmstat.pgfault += 1;
                self.mm.spend(self.mm.cfg.cpu.fault_ns);
                *self.mm.pt.pte_mut(page) = Pte::zero();
                Ok(Step::Done)
            }
            PteState::None => Ok(self.anon_fault(t, page, Some((look.region_idx, a.vpage)))),
            PteState::Zero => Ok(self.anon_fault(t, page, None)),
            PteState::Swap(slot) => Ok(self.swap_fault(SwapIn {
                t,
                space,
                page,
                region_idx: look.region_idx,
                vpage: a.vpage,
                slot,
                write: a.write,
                by: SwapinBy::Fault,
            })),
        }
    }

    /// Tells the LRU (OPT) when task `t`'s current access to `page` is followed by the
    /// next one to it, as the task's stream says.
    fn tell_next_use(&mut self, t: TaskId, page: PageId) {
        let next_use = self.tasks[t].next_use;
        self.lru.next_use(&mut self.mm, page, next_use);
    }

    pub(super) fn map_error(&self, t: TaskId, vpage: VirtPage, e: MapError) -> SimError {
        SimError::Map { task: self.tasks[t].name.clone(), vpage: vpage.0, reason: e }
    }

    /// `do_anonymous_page` for a write (or, with `at` `None`, the copy of the zero page on
    /// a write, which is always order 0). `at` is the region and virtual page of an
    /// untouched PTE, where a large folio may be allocated. Every PTE of the new folio is
    /// mapped young and dirty, as x86 page protections and a write fault make them.
    pub(super) fn anon_fault(&mut self, t: TaskId, page: PageId, at: Option<(usize, VirtPage)>) -> Step {
        let start = self.mm.now();
        let space = self.tasks[t].space;
        let large = at.and_then(|(region_idx, vpage)| self.alloc_anon_folio(space, region_idx, vpage));
        let (head, first, nr) = match large {
            Some(l) => (l.head, l.first_page, 1u32 << l.order),
            None => match self.alloc_frame(t, OnShortage::Wait) {
                Alloc::Got(p) => (p, page, 1),
                Alloc::Wait => return Step::WaitWriteback,
                Alloc::Oom => return Step::Oom,
            },
        };
        self.mm.vmstat.pgfault += 1;
        let cpu = &self.mm.cfg.cpu;
        self.mm.spend(cpu.fault_ns + cpu.anon_fault_ns + u64::from(nr - 1) * cpu.anon_fault_page_ns);
        for i in 0..nr {
            let (p, pfn) = (PageId(first.0 + i), Pfn(head.0 + i));
            *self.mm.pt.pte_mut(p) = Pte::present(pfn, true, true);
            self.mm.frames.set_owner(pfn, Some(p));
        }
        self.lru.add(&mut self.mm, head, Placement::Inactive, Origin::Fault);
        self.lat_anon.record(self.mm.now().since(start).0);
        Step::Done
    }

    /// `do_swap_page` (or swapoff's `unuse_pte_range` step): a swap-cache hit is a minor
    /// fault; a miss reads the page and its readahead window and blocks the task until the
    /// target's read completes.
    pub(super) fn swap_fault(&mut self, f: SwapIn) -> Step {
        let SwapIn { t, space, page, region_idx, vpage, slot, write, by } = f;
        self.swapped_in = true;
        // Swapoff is not a fault: no fault counters, and the readahead bookkeeping on a
        // hit only if the kernel modelled credits it.
        let credit_hits =
            by == SwapinBy::Fault || self.mm.cfg.swap.swapoff_readahead_hits == SwapoffHits::Credited;
        let start = self.mm.now();
        let owner = self.tasks[t].owner;
        let region = self.mm.pt.spaces[space.index()].regions[region_idx].id;
        if let Some(pfn) = self.mm.swap.cached_frame(slot) {
            if by == SwapinBy::Fault {
                self.mm.vmstat.pgfault += 1;
                self.mm.spend(self.mm.cfg.cpu.fault_ns);
            }
            if credit_hits {
                let readahead = self.mm.frames.test_and_clear(pfn, flag::READAHEAD);
                if readahead {
                    self.mm.vmstat.swap_ra_hit += 1;
                }
                self.policies.readahead.observe(&Feedback::SwapCacheHit { region, vpage, readahead });
            }
            let (pfn, page, slot) = self.prepare_cached_large(pfn, page, slot, by);
            let fault = PendingFault { page, slot, write, start, kind: FaultKind::Minor, by };
            if self.mm.frames.test(pfn, flag::LOCKED) {
                self.mm.frames.set(pfn, flag::WAITED);
                return self.wait_for_read(f.t, pfn, fault);
            }
            self.finish_swap_fault(pfn, fault);
            return Step::Done;
        }
        // The policy is asked only when the device has no bypass of its own.
        let bypass = self.mm.block.is_synchronous(slot.device)
            || (self.policies.swapin.zswap_large() && self.mm.swap.zswap_entry(slot).is_some());
        if by == SwapinBy::Fault && bypass && self.mm.swap.count(slot) == 1 {
            return self.swapin_bypass(f, start);
        }
        let target = match self.alloc_frame(t, OnShortage::Wait) {
            Alloc::Got(p) => p,
            Alloc::Wait => return Step::WaitWriteback,
            Alloc::Oom => return Step::Oom,
        };
        if self.mm.swap.cached_frame(slot).is_some() {
            // The charge's reclaim wrote this page back from zswap.
            return self.hit_after_all(target, f);
        }
        if by == SwapinBy::Fault {
            self.mm.spend(self.mm.cfg.cpu.fault_ns);
        }
        let view = {
            let r = &self.mm.pt.spaces[space.index()].regions[region_idx];
            FaultView {
                task: t,
                space,
                region,
                region_start: r.start,
                region_end: r.end(),
                vpage,
                device: slot.device,
                offset: slot.offset,
                device_slots: self.mm.swap.devices[slot.device.0 as usize].max(),
                page_cluster: self.mm.cfg.swap.page_cluster,
                swapoff: by == SwapinBy::Swapoff,
                location: self.mm.entry_location(slot),
            }
        };
        let fault = PendingFault { page, slot, write, start, kind: FaultKind::Major, by };
        // The task will sleep on the target; a read that completes early (a plug flushed
        // by size, then polled by nested reclaim) must still wake it.
        self.mm.frames.set(target, flag::WAITED);
        if self.mm.block.is_synchronous(slot.device) {
            // Swapoff on a synchronous device reads only the faulting page, through the
            // swap cache, in this context.
            self.mm.frames.clear(target, flag::WAITED);
            if self.read_swap_cache(owner, space, slot, target, ReadRole::Target, by) {
                let bio = Bio { device: slot.device, dir: IoDir::Read, offset: slot.offset, pfn: target };
                self.mm.submit_sync(bio, 1);
            }
            self.mm.frames.clear(target, flag::LOCKED);
            self.count_major(by);
            self.finish_swap_fault(target, fault);
            return Step::Done;
        }
        let plan = self.policies.readahead.plan(&view);
        let mut window = std::mem::take(&mut self.window_scratch);
        self.window(space, region_idx, slot, plan, &mut window);
        self.mm.start_plug(owner);
        let mut target_read = true;
        let mut target_cached = false;
        for &s in &window {
            if s == slot {
                // A neighbour's charge may have reclaimed, and zswap's shrinker written the
                // target back into the swap cache: __read_swap_cache_async finds it there.
                target_cached = self.mm.swap.cached_frame(slot).is_some();
                if !target_cached {
                    target_read = self.read_swap_cache(owner, space, s, target, ReadRole::Target, by);
                }
            } else if self.mm.swap.wants_read(s) {
                if !self.policies.readahead.admit(self.mm.entry_location(s)) {
                    continue;
                }
                // A neighbour: skip it rather than block if memory is short.
                if let Alloc::Got(pfn) = self.alloc_frame(t, OnShortage::Skip) {
                    if !self.mm.swap.wants_read(s) {
                        // The charge's reclaim freed the slot or brought it into the
                        // swap cache (zswap writeback) meanwhile.
                        self.mm.free_frame(pfn);
                        continue;
                    }
                    self.read_swap_cache(owner, space, s, pfn, ReadRole::Neighbour, by);
                }
            }
        }
        window.clear();
        self.window_scratch = window;
        self.mm.finish_plug(owner);
        if target_cached {
            return self.hit_after_all(target, f);
        }
        self.count_major(by);
        if !target_read {
            // The target came from the zero map or zswap: no wait.
            self.mm.frames.clear(target, flag::LOCKED | flag::WAITED);
            self.finish_swap_fault(target, fault);
            return Step::Done;
        }
        self.wait_for_read(f.t, target, fault)
    }

    /// Task `t` waits for the read of `pfn`, which finishes `fault` when it completes.
    #[inline]
    fn wait_for_read(&mut self, t: TaskId, pfn: Pfn, fault: PendingFault) -> Step {
        debug_assert!(self.tasks[t].wait.is_none(), "a running task waits already");
        self.tasks[t].wait = Some(Wait::Frame { pfn, fault });
        Step::WaitRead
    }

    /// A swap fault that charged `target` for its page finds the page in the swap cache
    /// after all: reclaim run by a charge (its own or a readahead neighbour's) had zswap
    /// write it back, and `__read_swap_cache_async` finds it there. The frame is given
    /// back and the fault retried, which counts it once, as a swap-cache hit.
    fn hit_after_all(&mut self, target: Pfn, f: SwapIn) -> Step {
        self.mm.frames.clear(target, flag::WAITED);
        self.mm.free_frame(target);
        self.swap_fault(f)
    }

    /// Counts a swap fault that missed the swap cache (swapoff counts none).
    fn count_major(&mut self, by: SwapinBy) {
        if by == SwapinBy::Fault {
            self.mm.vmstat.pgfault += 1;
            self.mm.vmstat.pgmajfault += 1;
        }
    }

    /// Inserts frame `pfn` into the swap cache for `slot` (`add_to_swap_cache` in
    /// `__read_swap_cache_async`) and puts it on the LRU, where a shadow left in the slot
    /// says (`workingset_refault`). Returns whether the slot held a shadow and the refault
    /// activated the folio. `origin`: a page fault, or swapoff or zswap's writeback.
    pub(super) fn swap_cache_add(&mut self, slot: SwapSlot, pfn: Pfn, origin: Origin) -> Option<bool> {
        let shadow = self.mm.swap.cache_insert(slot, pfn);
        self.mm.frames.set_swap_slot(pfn, Some(slot));
        let placement = match shadow {
            Some(s) => self.lru.refault(&mut self.mm, pfn, s, origin),
            None => Placement::Inactive,
        };
        self.lru.add(&mut self.mm, pfn, placement, origin);
        shadow.map(|_| placement == Placement::Active)
    }

    /// The slots a readahead plan covers, in the order the kernel visits them, clamped to
    /// the device (cluster plans) or to chunks that exist (VMA plans).
    pub(super) fn window(
        &self,
        space: SpaceId,
        region_idx: usize,
        target: SwapSlot,
        plan: ReadaheadPlan,
        out: &mut Vec<SwapSlot>,
    ) {
        debug_assert!(out.is_empty());
        match plan {
            ReadaheadPlan::TargetOnly => out.push(target),
            ReadaheadPlan::Slots { first, last } => {
                let max = self.mm.swap.devices[target.device.0 as usize].max();
                let first = first.max(1);
                let last = last.min(max - 1);
                out.extend((first..=last).map(|o| SwapSlot { device: target.device, offset: o }));
                if !out.contains(&target) {
                    out.push(target);
                }
            }
            ReadaheadPlan::Pages { first, last } => {
                let mut has_target = false;
                for vp in first.0..=last.0 {
                    if let Some(p) = self.mm.pt.existing_page(space, region_idx, VirtPage(vp)) {
                        if let PteState::Swap(s) = self.mm.pt.pte(p).state() {
                            has_target |= s == target;
                            out.push(s);
                        }
                    }
                }
                if !has_target {
                    out.push(target);
                }
            }
        }
    }

    /// `__read_swap_cache_async` plus `swap_read_folio` for one slot, on behalf of plug
    /// owner `owner`, for address space `space`. A page the zero map or zswap supplies is
    /// ready on return, and the result is false; otherwise the device read is submitted
    /// (asynchronous devices) or left to the caller (synchronous ones), and the result is
    /// true. A ready readahead neighbour is unlocked; a ready target stays locked until
    /// the caller maps it: the fault holds a reference to it, so that the reclaim which
    /// the neighbours' charges may run cannot free it in between.
    pub(super) fn read_swap_cache(
        &mut self,
        owner: PlugOwner,
        space: SpaceId,
        slot: SwapSlot,
        pfn: Pfn,
        role: ReadRole,
        by: SwapinBy,
    ) -> bool {
        let target = role == ReadRole::Target;
        self.mm.frames.set(pfn, flag::LOCKED);
        let origin = match by {
            SwapinBy::Fault => Origin::Fault,
            SwapinBy::Swapoff => Origin::Other,
        };
        if let Some(activated) = self.swap_cache_add(slot, pfn, origin) {
            let feedback = Feedback::Refault { space, slot, activated, order: 0 };
            self.policies.readahead.observe(&feedback);
            self.policies.swapin.observe(&feedback);
        }
        if !target {
            self.mm.frames.set(pfn, flag::READAHEAD);
            self.mm.vmstat.swap_ra += 1;
        }
        let backend = self.mm.swap_read_backend(slot, pfn, ReadInto::SwapCache);
        if self.mm.zswap_on() {
            self.mm.zswap.knobs_read = true;
            self.mm.zswap.policy.swapin(ZswapSwapin::new(backend == Backend::Device, target));
            if backend == Backend::Device {
                let at = self.mm.now();
                self.mm.zswap.trigger.observe(WritebackEvent::DiskSwapin { at });
            }
        }
        if backend != Backend::Device {
            if !target {
                self.mm.frames.clear(pfn, flag::LOCKED);
            }
            return false;
        }
        self.mm.vmstat.pswpin += 1;
        self.mm.vmstat.pgpgin += 4;
        self.mm.spend(self.mm.cfg.cpu.swapin_submit_ns);
        if self.mm.block.is_synchronous(slot.device) {
            return true;
        }
        self.mm.submit(owner, Bio { device: slot.device, dir: IoDir::Read, offset: slot.offset, pfn });
        true
    }

    /// Maps the folio at `pfn` for the swap-in `f` its task waited on (or that found it
    /// ready), in the acting context, from its current time.
    pub(super) fn finish_swap_fault(&mut self, pfn: Pfn, f: PendingFault) {
        if self.mm.pt.pte(f.page).state() != PteState::Swap(f.slot) {
            // Another task waiting on the same folio mapped it first: this one finds the
            // PTE changed (`pte_same` fails in do_swap_page and unuse_pte) and maps
            // nothing; a fault's access is then retried and finds the page present.
            if f.by == SwapinBy::Fault {
                self.mm.pt.pte_mut(f.page).touch(f.write);
                self.record_fault_latency(f);
            }
            return;
        }
        if f.by == SwapinBy::Swapoff {
            self.mm.unuse_pte(f.page, pfn, f.slot);
            return;
        }
        self.mm.map_swapped(f.page, pfn, f.slot, f.write);
        self.record_fault_latency(f);
    }

    fn record_fault_latency(&mut self, f: PendingFault) {
        let lat = self.mm.now().since(f.start).0;
        match f.kind {
            FaultKind::Major => self.lat_major.record(lat),
            FaultKind::Minor => self.lat_minor.record(lat),
        }
    }
}
