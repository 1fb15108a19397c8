//! I/O completion (`mm/page_io.c` and the end of writeback in `mm/filemap.c`).
//!
//! The block layer reports completed requests; this module unlocks read folios, ends
//! writeback of written ones and records what the LRU (rotations) and sleeping tasks
//! (finished reads, writeback progress) must learn. The engine delivers that afterwards.
//! Reclaim polls completions that fell due while it scanned (`poll_io`).

use super::frames::flag;
use super::Mm;
use crate::block::{Bio, Completion, Finished, PlugOwner, ReqId, IMAGE_PFN};
use crate::device::IoDir;
use crate::event::Event;
use crate::ids::{CpuId, Pfn, SwapSlot};
use crate::thp::PMD_ORDER;
use crate::time::SimTime;

/// Scheduling an event before the queue's present is an engine bug.
#[cold]
#[inline(never)]
fn scheduled_in_past(e: crate::queue::ScheduleInPast, ev: Event) -> ! {
    panic!("engine invariant broken: {e} (event {ev:?})");
}

/// Where a folio stands after [`Mm::pageout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pageout {
    /// Written in the acting context (a synchronous device): the folio is clean now.
    Clean,
    /// Its write is in flight; the folio is freed once it completes.
    UnderWriteback,
}

impl Mm {
    /// `pageout` → `swap_writepage` of the folio at `pfn` (its order's pages) to its
    /// slots from `slot`, by `owner`: counts `pswpout` and `pgpgout` (and the size's
    /// mTHP `swpout`), charges the submission, and writes. A synchronous device takes one
    /// bio of the folio's size, completed in this context. Otherwise the folio is marked
    /// for reclaim (`PG_reclaim`, rotated when its write ends) and each page goes as a bio
    /// of its own under writeback, which the caller's plug merges into one request.
    pub(crate) fn pageout(&mut self, pfn: Pfn, slot: SwapSlot, owner: PlugOwner) -> Pageout {
        let order = self.frames.order(pfn);
        let nr = 1u32 << order;
        self.vmstat.pswpout += u64::from(nr);
        self.vmstat.pgpgout += 4 * u64::from(nr);
        if order > 0 {
            self.mthp.at(order).swpout += 1;
            if order == PMD_ORDER {
                self.vmstat.thp_swpout += 1;
            }
        }
        self.spend(self.cfg.cpu.swapout_submit_ns);
        if self.block.is_synchronous(slot.device) {
            // zram compresses and stores each page of the folio on its own.
            self.spend(u64::from(nr - 1) * self.cfg.cpu.swapout_page_ns);
            let bio = Bio { device: slot.device, dir: IoDir::Write, offset: slot.offset, pfn };
            self.submit_sync(bio, nr);
            return Pageout::Clean;
        }
        self.frames.set(pfn, flag::RECLAIM);
        self.nr_writeback += u64::from(nr);
        for i in 0..nr {
            let frame = Pfn(pfn.0 + i);
            let bio = Bio { device: slot.device, dir: IoDir::Write, offset: slot.offset + i, pfn: frame };
            self.frames.set(frame, flag::WRITEBACK);
            self.submit(owner, bio);
        }
        Pageout::UnderWriteback
    }

    #[inline]
    pub(crate) fn schedule(&mut self, at: SimTime, ev: Event) {
        if let Err(e) = self.queue.schedule(at, ev) {
            scheduled_in_past(e, ev);
        }
    }

    /// Schedules the completions of requests the block layer issued. Called after every
    /// access, so the test for none is inlined and the work is not: a function that
    /// saves registers before testing cost the resident replay 2% of its time.
    #[inline]
    pub(crate) fn flush_dispatched(&mut self) {
        if !self.dispatched.is_empty() {
            self.schedule_dispatched();
        }
    }

    #[inline(never)]
    fn schedule_dispatched(&mut self) {
        let mut d = std::mem::take(&mut self.dispatched);
        for x in d.drain(..) {
            self.schedule(x.at, Event::IoComplete(x.req));
        }
        self.dispatched = d;
    }

    /// The completion event of block request `req` came at `now`: finish it, or every
    /// request of its pass when its device completes in passes, or put the event off
    /// while its pass grows.
    pub(crate) fn complete_io(&mut self, req: ReqId, now: SimTime) {
        match self.block.complete(req, now, &mut self.dispatched) {
            Finished::Request(done) => self.finish_io(done, now),
            Finished::Later(at) => {
                self.schedule(at, Event::IoComplete(req));
                return;
            }
            Finished::Pass(dev, members) => {
                for _ in 0..members {
                    let done = self.block.complete_member(dev, now, &mut self.dispatched);
                    self.finish_io(done, now);
                }
            }
        }
        self.news.io_done = Some(now);
        self.flush_dispatched();
    }

    /// A block request completed at `now`: unlock read folios, end writeback of written
    /// ones, and record what the LRU and sleeping tasks must learn.
    fn finish_io(&mut self, done: Completion, now: SimTime) {
        match done.dir {
            IoDir::Read => {
                for &pfn in &done.frames {
                    if pfn == IMAGE_PFN {
                        self.image_io_done();
                    } else if self.frames.test(pfn, flag::WAITED) {
                        self.news.reads_done.push((pfn, now));
                    } else {
                        self.frames.clear(pfn, flag::LOCKED);
                    }
                }
            }
            IoDir::Write => {
                for &pfn in &done.frames {
                    if pfn == IMAGE_PFN {
                        self.image_io_done();
                        continue;
                    }
                    self.frames.clear(pfn, flag::WRITEBACK);
                    self.end_writeback(1);
                    // A large folio's writeback ends with its last page.
                    let head = self.frames.head(pfn);
                    if !self.folio_writeback(head) && self.frames.test_and_clear(head, flag::RECLAIM) {
                        self.news.rotations.push(head);
                    }
                }
                self.news.write_done = Some(now);
            }
        }
        self.block.recycle_frames(done.frames);
    }

    /// A page of a hibernation image completed.
    fn image_io_done(&mut self) {
        assert!(self.image_inflight > 0, "an image page completed with none in flight");
        self.image_inflight -= 1;
    }

    /// Processes I/O completions that fell due while the acting context, a reclaimer on
    /// `cpu`, ran ahead. Reclaim calls this between batches, so that writes completing
    /// during a long scan free their folios as in the kernel.
    ///
    /// Completions are taken in time order as long as they are the earliest pending
    /// events, or come only after `cpu`'s own next turn (which waits for this reclaimer)
    /// or the zswap pool-limit worker's turn. In the kernel a completion is taken by its
    /// interrupt whatever the CPUs do; the model stops at any other event, since what it
    /// does may change what the completion finds. Passing the worker's turn lets the
    /// worker's next step, when it runs on another CPU, see these completions a little
    /// early. The queue's time stays where it was, so that other contexts may still act
    /// between it and the completions taken.
    pub(crate) fn poll_io(&mut self, cpu: CpuId) {
        let waits = |e: &Event| match *e {
            Event::ZswapShrink => true,
            Event::CpuRun(c) => c == cpu,
            _ => false,
        };
        self.flush_dispatched();
        loop {
            let (at, req) = match self.queue.peek() {
                Some((at, &Event::IoComplete(req))) if at <= self.now => {
                    self.queue.take_first();
                    (at, req)
                }
                Some((at, e)) if at <= self.now && waits(e) => {
                    let is_io = |e: &Event| matches!(e, Event::IoComplete(_));
                    match self.queue.take_due_past(self.now, is_io, waits) {
                        Some((at, Event::IoComplete(req))) => (at, req),
                        _ => return,
                    }
                }
                _ => return,
            };
            self.events += 1;
            self.complete_io(req, at);
        }
    }
}
