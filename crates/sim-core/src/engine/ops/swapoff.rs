//! The swapoff walk: swapoff itself and `mm_reclaim/release`.
//!
//! Swapoff models `try_to_unuse` (mm/swapfile.c): walk every address space's page tables
//! in order; for each PTE holding a slot of the device, look the slot up in the swap cache
//! and on a miss read it through `swapin_readahead` with a synthetic fault, exactly as a
//! fault would (so neighbours are read ahead); then `unuse_pte` installs an old PTE and the
//! slot is freed. No fault is counted, but `pswpin` and `swap_ra` are, and `swap_ra_hit`
//! when the configured kernel credits swapoff's hits. After a full walk the remaining
//! swap-cache-only slots are dropped; the walk repeats until the device is empty.
//!
//! `mm_reclaim/release` (the opportunistic-reclaim RFC's partial `try_to_unuse`) runs the
//! same walk with a budget of PTEs to restore and without disabling the device: each
//! writable device is walked once, in priority order, until the budget is spent. There is
//! no final sweep, and since the device stays on, reclaim may push pages out to it again
//! meanwhile; those behind the walk stay in swap.
//!
//! Simplified: shmem is not modelled (no `shmem_unuse`); the walk visits tasks' address
//! spaces in task order rather than the kernel's mmlist order; a swapoff that runs out of
//! memory stops and re-enables the device, as the kernel's does with -ENOMEM, and a
//! release that does stops there.

use super::super::job::{Finish, JobFailure, JobStep, SwapoffState};
use super::super::wait::{Step, SwapinBy, Wait};
use super::super::World;
use crate::engine::fault::SwapIn;
use crate::ids::{Pfn, SpaceId, SwapSlot, TaskId, VirtPage};
use crate::mm::frames::flag;
use crate::mm::pagetable::CHUNK_PAGES;

impl World {
    /// One step of the swapoff walk `s` by kernel task `t`: swap in the next PTE that
    /// holds a slot of the device, or yield after 64 PTEs that hold none.
    pub(in crate::engine) fn swapoff_step(&mut self, t: TaskId, s: &mut SwapoffState) -> JobStep {
        if s.sweeping {
            return self.swapoff_sweep(s);
        }
        if s.budget == Some(0) {
            return JobStep::Finished(Finish::Completed);
        }
        // Find the next PTE that holds a slot of the device, charging the walk.
        let walk_ns = self.mm.cfg.cpu.swapoff_walk_ns;
        let n_spaces = self.mm.pt.spaces.len();
        loop {
            let SwapoffState { device, space, region_idx, vpage, .. } = *s;
            if space.index() >= n_spaces {
                if s.disable {
                    s.sweeping = true;
                } else if s.then.is_empty() {
                    return JobStep::Finished(Finish::Completed);
                } else {
                    // The next device, walked from the start.
                    s.device = s.then.remove(0);
                    s.restart();
                }
                return JobStep::Continue;
            }
            let regions = &self.mm.pt.spaces[space.index()].regions;
            if region_idx >= regions.len() {
                (s.space, s.region_idx, s.vpage) = (SpaceId(space.0 + 1), 0, 0);
                continue;
            }
            let r = &regions[region_idx];
            let vp = vpage.max(r.start.0);
            if vp >= r.end().0 {
                (s.region_idx, s.vpage) = (region_idx + 1, 0);
                continue;
            }
            let region_end = r.end().0;
            let chunk_end = (vp / CHUNK_PAGES + 1) * CHUNK_PAGES;
            let Some(first) = self.mm.pt.existing_page(space, region_idx, VirtPage(vp)) else {
                // A page table that was never allocated: skip its 2 MiB.
                s.vpage = chunk_end;
                continue;
            };
            // Look at the PTEs up to the next one whose page is a multiple of 64, where the
            // walk yields, within this page table and region: each costs `walk_ns`, and the
            // first that holds a slot of the device is swapped in.
            let n = (region_end.min(chunk_end).min(vp.next_multiple_of(64) + 1) - vp) as usize;
            let (looked, found) = self.mm.pt.find_swap_pte(first, n, device);
            self.mm.spend(walk_ns * looked as u64);
            let Some((page, slot)) = found else {
                let last = vp + n as u64 - 1;
                s.vpage = last + 1;
                // Yield now and then so that a long walk over unrelated PTEs lets events in.
                if last.is_multiple_of(64) {
                    return JobStep::Continue;
                }
                continue;
            };
            let vp = vp + looked as u64 - 1;
            let step = self.swap_fault(SwapIn {
                t,
                space,
                page,
                region_idx,
                vpage: VirtPage(vp),
                slot,
                write: false,
                by: SwapinBy::Swapoff,
            });
            return match step {
                // Retry this PTE once memory frees up.
                Step::WaitWriteback => JobStep::Wait(Wait::Writeback),
                Step::Oom => self.abort_swapoff(s, JobFailure::OutOfMemory),
                // The PTE is restored, or will be when the read completes.
                Step::Done | Step::WaitRead => {
                    s.vpage = vp + 1;
                    if let Some(budget) = &mut s.budget {
                        *budget -= 1;
                    }
                    s.released += 1;
                    if step == Step::Done {
                        JobStep::Continue
                    } else {
                        // The fault put the read it waits for in the task; the job's step
                        // hands it on.
                        let wait = self.tasks[t].wait.take();
                        JobStep::Wait(
                            wait.expect("a swap fault that waits for its read names it in its task"),
                        )
                    }
                }
            };
        }
    }

    /// After the walk: free what only the swap cache still holds, then finish or walk again.
    fn swapoff_sweep(&mut self, s: &mut SwapoffState) -> JobStep {
        let device = s.device;
        let cached: Vec<(u32, Pfn)> = self.mm.swap.cached_slots(device);
        let mut busy = false;
        for (offset, pfn) in cached {
            // The sweep works page by page: a large folio is split first.
            if self.mm.frames.order(pfn) > 0 {
                self.split_folio(self.mm.frames.head(pfn));
            }
            let slot = SwapSlot { device, offset };
            if self.mm.swap.count(slot) > 0 {
                continue;
            }
            if self.mm.frames.test(pfn, flag::LOCKED | flag::WRITEBACK) {
                busy = true;
            } else if self.mm.frames.owner(pfn).is_some() {
                self.mm.folio_free_swap(pfn);
            } else {
                self.lru.remove(&mut self.mm, pfn);
                self.mm.swap.cache_delete(slot, None);
                self.mm.frames.set_swap_slot(pfn, None);
                self.mm.free_frame(pfn);
            }
        }
        if self.mm.swap.devices[device.0 as usize].inuse() == 0 {
            return JobStep::Finished(Finish::Completed);
        }
        if busy {
            return JobStep::Wait(Wait::AnyIo);
        }
        // Slots still referenced: walk again (try_to_unuse's retry loop).
        s.restart();
        s.sweeping = false;
        JobStep::Continue
    }

    /// Stops a swapoff (re-enabling its device) or a release on `why`.
    fn abort_swapoff(&mut self, s: &SwapoffState, why: JobFailure) -> JobStep {
        self.mm.swap.enable(s.device);
        JobStep::Finished(Finish::Failed(why))
    }
}
