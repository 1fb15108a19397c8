//! `check_invariants`: every structure recounted from scratch and checked against the
//! others. Tests call it after every event; the `strict-invariants` feature makes `run` do
//! the same.

use super::job::{Image, Job};
use super::task::{TaskKind, TaskState};
use super::wait::Wait;
use super::World;
use crate::device::IoDir;
use crate::ids::{DeviceId, Pfn, SpaceId, SwapSlot, TaskId};
use crate::mm::frames::flag;
use crate::mm::pagetable::{PageId, PteState};

impl World {
    /// Recounts every structure from scratch and checks that they agree: frames, LRU
    /// lists, swap slots, swap cache and page tables; every page is in exactly one place.
    /// Panics with a description on the first violation.
    pub(crate) fn check_invariants(&self) {
        let mm = &self.mm;
        mm.swap.check_invariants();
        self.lru.check_invariants(mm);
        assert_eq!(
            mm.memcg_usage(),
            mm.frames.used() + mm.zswap.charged_pages + mm.pt.table_pages(),
            "memcg usage vs frames in use, zswap's charge and page tables"
        );
        if let Some(limit) = mm.memcg_limit() {
            // zswap's writeback charges its folios past the limit (reclaim context).
            if !mm.zswap_on() {
                assert!(
                    mm.memcg_usage() <= limit + 1,
                    "memcg usage {} exceeds limit {limit}",
                    mm.memcg_usage()
                );
            }
        }
        if mm.zswap_on() {
            self.check_zswap();
        }
        // Slot references from PTEs must equal the swap counts exactly.
        let mut refs: Vec<Vec<u8>> = mm.swap.devices.iter().map(|d| vec![0u8; d.max() as usize]).collect();
        for (i, pte) in mm.pt.ptes.iter().enumerate() {
            let page = PageId(i as u32);
            match pte.state() {
                PteState::Present(pfn) => {
                    assert!(mm.frames.test(pfn, flag::IN_USE), "page {i} maps free frame {}", pfn.0);
                    assert_eq!(
                        mm.frames.owner(pfn),
                        Some(page),
                        "frame {} does not point back to page {i}",
                        pfn.0
                    );
                    if let Some(s) = mm.frames.swap_slot(pfn) {
                        assert_eq!(mm.swap.count(s), 0, "mapped page {i} still counted in {s}");
                    }
                }
                PteState::Swap(s) => {
                    refs[s.device.0 as usize][s.offset as usize] += 1;
                    if let Some(pfn) = mm.swap.cached_frame(s) {
                        assert_eq!(
                            mm.frames.owner(pfn),
                            None,
                            "page {i}: cached frame of {s} is mapped elsewhere"
                        );
                    }
                }
                PteState::None | PteState::Zero => {}
            }
        }
        // A hibernation image holds its slots once each, with no folio, zero mark or
        // zswap entry; from the snapshot until the thaw, memory is exactly as it was then.
        for (image, complete) in self.images() {
            for &s in &image.slots {
                assert_eq!(s.device, image.device, "image {s} off the resume device");
                refs[s.device.0 as usize][s.offset as usize] += 1;
                assert!(mm.swap.cached_frame(s).is_none(), "image {s} has a swap-cache folio");
                assert!(!mm.swap.is_zero(s), "image {s} is marked zero-filled");
                assert!(mm.swap.zswap_entry(s).is_none(), "image {s} holds a zswap entry");
            }
            if complete {
                assert_eq!(
                    self.fingerprint(image.slots.len() as u64),
                    image.fingerprint,
                    "memory changed while the machine was hibernated"
                );
                assert!(image.pages > 0 && !image.slots.is_empty(), "a hibernated machine without an image");
            }
        }
        for (d, dev_refs) in refs.iter().enumerate() {
            for (off, &n) in dev_refs.iter().enumerate().skip(1) {
                let slot = SwapSlot { device: DeviceId(d as u8), offset: off as u32 };
                assert_eq!(mm.swap.count(slot), n, "{slot}: swap count vs PTE references and image slots");
            }
        }
        let mut wb = 0;
        let live: Vec<(IoDir, Pfn)> = mm.block.live_frames().collect();
        for pfn in mm.frames.in_use() {
            let f = mm.frames.flags(pfn);
            let slot = mm.frames.swap_slot(pfn);
            if let Some(s) = slot {
                assert_eq!(
                    mm.swap.cached_frame(s),
                    Some(pfn),
                    "frame {} claims {s} but the swap cache disagrees",
                    pfn.0
                );
            }
            if f & flag::WRITEBACK != 0 {
                wb += 1;
                assert!(
                    live.contains(&(IoDir::Write, pfn)),
                    "frame {} under writeback without a write request",
                    pfn.0
                );
            }
        }
        for head in mm.frames.folios() {
            let f = mm.frames.flags(head);
            let nr = mm.frames.nr_pages(head);
            assert!(f & flag::LRU != 0, "folio {} in use but on no LRU list", head.0);
            assert_eq!(head.0 % nr, 0, "folio {} of {nr} pages is not aligned in the frame table", head.0);
            // A folio is mapped whole by consecutive, aligned PTEs, or not at all.
            let owners: Vec<Option<PageId>> = (0..nr).map(|i| mm.frames.owner(Pfn(head.0 + i))).collect();
            if let Some(first) = owners[0] {
                assert_eq!(first.0 % nr, 0, "folio {} mapped from an unaligned page {}", head.0, first.0);
                for (i, o) in owners.iter().enumerate() {
                    assert_eq!(*o, Some(PageId(first.0 + i as u32)), "folio {} page {i} mapping", head.0);
                }
            } else {
                assert!(owners.iter().all(Option::is_none), "folio {} is partly mapped", head.0);
            }
            // A folio in swap holds 2^order consecutive, aligned slots of one device.
            let slots: Vec<Option<SwapSlot>> =
                (0..nr).map(|i| mm.frames.swap_slot(Pfn(head.0 + i))).collect();
            if let Some(first) = slots[0] {
                assert_eq!(first.offset % nr, 0, "folio {} in unaligned slots from {first}", head.0);
                for (i, s) in slots.iter().enumerate() {
                    let want = first.nth(i as u32);
                    assert_eq!(*s, Some(want), "folio {} page {i} slot", head.0);
                }
            } else {
                assert!(slots.iter().all(Option::is_none), "folio {} is partly in swap", head.0);
            }
            assert!(
                owners[0].is_some() || slots[0].is_some(),
                "folio {} is neither mapped nor cached",
                head.0
            );
            if f & flag::WAITED != 0 {
                assert!(f & flag::LOCKED != 0, "frame {} waited on but not locked", head.0);
                let waiters = self.tasks.iter().filter(|t| t.waits_on(head).is_some()).count();
                assert!(waiters > 0, "frame {} flagged waited on, but no task waits", head.0);
            }
            if f & flag::LOCKED != 0 {
                assert!(
                    live.contains(&(IoDir::Read, head)),
                    "frame {} locked without a read request",
                    head.0
                );
            }
        }
        assert_eq!(wb, mm.nr_writeback(), "nr_writeback counter");
        assert!(
            self.tasks.iter().all(|t| t.state != TaskState::Runnable || t.wait.is_none()),
            "runnable task with a wait"
        );
        let mut sleepers = super::Sleepers::default();
        for wait in self.tasks.iter().filter_map(|t| t.wait.as_ref()) {
            sleepers.add(wait);
        }
        assert_eq!(sleepers, self.sleepers, "sleeper counts");
        for t in &self.tasks {
            if let Some(Wait::Frame { pfn, .. }) = t.wait {
                assert!(
                    mm.frames.test(pfn, flag::WAITED),
                    "task {} waits on frame {} not flagged waited on",
                    t.name,
                    pfn.0
                );
            }
        }
        self.check_task_lifecycle();
    }

    /// Starts and ends: a waiting task has done nothing and is on no CPU, the end counter
    /// and each CPU's live-task count match the tasks, and an address space whose every
    /// task exited holds no PTE.
    fn check_task_lifecycle(&self) {
        let user = |t: &&super::task::Task| t.is_user();
        let mut live = vec![0u32; self.cpus.len()];
        for (i, t) in self.tasks.iter().enumerate().filter(|(_, t)| user(t)) {
            if matches!(t.state, TaskState::Waiting | TaskState::Starting) {
                assert!(
                    t.started_at.is_none() && t.accesses == 0 && t.wait.is_none(),
                    "waiting task {} has run",
                    t.name
                );
                assert!(
                    self.cpus.iter().all(|c| c.current != Some(TaskId::from_index(i))
                        && !c.runq.contains(&TaskId::from_index(i))),
                    "waiting task {} is on a CPU",
                    t.name
                );
            }
            let ended = matches!(t.state, TaskState::Done | TaskState::Killed);
            assert_eq!(t.ended_at.is_some(), ended, "task {} end recorded vs state {:?}", t.name, t.state);
            if t.started_at.is_some() && !ended {
                live[t.cpu.index()] += 1;
            }
        }
        let n_ended = self.tasks.iter().filter(user).filter(|t| t.ended_at.is_some()).count();
        assert_eq!(n_ended, self.n_ended, "ended user tasks vs the end counter");
        for (c, cpu) in self.cpus.iter().enumerate() {
            assert_eq!(cpu.live_users, live[c], "cpu {c}: live user tasks");
        }
        for space in (0..self.mm.pt.spaces.len()).map(SpaceId::from_index) {
            let mut tasks = self.tasks.iter().filter(user).filter(|t| t.space == space).peekable();
            let exited = tasks.peek().is_some() && tasks.all(|t| t.exit_on_end && t.state == TaskState::Done);
            if exited {
                for page in self.mm.pt.space_pages(space) {
                    assert_eq!(
                        self.mm.pt.pte(page).state(),
                        PteState::None,
                        "address space {space} exited but page {} is still mapped",
                        page.0
                    );
                }
            }
        }
    }

    /// Every hibernation image that holds slots: the one on disk while the machine is off,
    /// and those of hibernate and resume jobs, each with whether it is complete (written,
    /// so that memory must match its fingerprint).
    fn images(&self) -> impl Iterator<Item = (&Image, bool)> {
        let jobs = self.tasks.iter().filter_map(|t| match &t.kind {
            TaskKind::Kernel(Job::Hibernate(h)) => Some((&h.image, false)),
            TaskKind::Kernel(Job::Resume(r)) => Some((&r.image, true)),
            _ => None,
        });
        self.image.iter().map(|image| (image, true)).chain(jobs)
    }

    /// zswap: the entry table, LRU and pool agree, and every stored page is in zswap
    /// only: its slot names the entry back, holds no swap-cache folio and no zero mark.
    fn check_zswap(&self) {
        let mm = &self.mm;
        mm.zswap.check();
        let mut named = 0;
        for d in 0..mm.swap.devices.len() {
            let dev = DeviceId(d as u8);
            for (off, e) in mm.swap.zswap_slots(dev) {
                let slot = SwapSlot { device: dev, offset: off };
                named += 1;
                assert_eq!(mm.zswap.slot(e), slot, "zswap entry {e} does not name {slot} back");
                assert!(
                    mm.swap.cached_frame(slot).is_none(),
                    "{slot} is both in zswap and in the swap cache"
                );
                assert!(!mm.swap.is_zero(slot), "{slot} is both in zswap and zero-filled");
                assert!(mm.swap.count(slot) > 0, "{slot} holds a zswap entry but is free");
            }
        }
        assert_eq!(named + mm.zswap_pending_orphans(), mm.zswap.stored, "zswap entries vs slots naming them");
    }
}
