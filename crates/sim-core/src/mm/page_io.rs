//! I/O completion (`mm/page_io.c` and the end of writeback in `mm/filemap.c`).
//!
//! The block layer reports completed requests; this module unlocks read folios, ends
//! writeback of written ones and records what the LRU (rotations) and sleeping tasks
//! (finished reads, writeback progress) must learn. The engine delivers that afterwards.
//! Reclaim polls completions that fell due while it scanned (`poll_io`).

use super::frames::flag;
use super::Mm;
use crate::block::{ReqId, IMAGE_PFN};
use crate::device::IoDir;
use crate::event::Event;
use crate::time::SimTime;

impl Mm {
    pub(crate) fn schedule(&mut self, at: SimTime, ev: Event) {
        if let Err(e) = self.queue.schedule(at, ev) {
            panic!("engine invariant broken: {e} (event {ev:?})");
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

    /// A block request completed at `now`: unlock read folios, end writeback of written
    /// ones, and record what the LRU and sleeping tasks must learn.
    pub(crate) fn complete_io(&mut self, req: ReqId, now: SimTime) {
        let mut out = std::mem::take(&mut self.dispatched);
        let done = self.block.complete(req, now, &mut out);
        self.dispatched = out;
        match done.dir {
            IoDir::Read => {
                for &pfn in &done.frames {
                    if pfn == IMAGE_PFN {
                        self.image_inflight -= 1;
                    } else if self.frames.test(pfn, flag::WAITED) {
                        self.reads_done.push((pfn, now));
                    } else {
                        self.frames.clear(pfn, flag::LOCKED);
                    }
                }
            }
            IoDir::Write => {
                for &pfn in &done.frames {
                    if pfn == IMAGE_PFN {
                        self.image_inflight -= 1;
                        continue;
                    }
                    self.frames.clear(pfn, flag::WRITEBACK);
                    self.nr_writeback -= 1;
                    // A large folio's writeback ends with its last page.
                    let head = self.frames.head(pfn);
                    if !self.folio_writeback(head) && self.frames.test_and_clear(head, flag::RECLAIM) {
                        self.rotations.push(head);
                    }
                }
                self.write_done = Some(now);
            }
        }
        self.block.recycle_frames(done.frames);
        self.io_done = Some(now);
        self.flush_dispatched();
    }

    /// Processes I/O completions that fell due while the acting context ran ahead, as
    /// long as they are the earliest pending events. Reclaim calls this between batches,
    /// so that writes completing during a long scan free their folios as in the kernel.
    pub(crate) fn poll_io(&mut self) {
        self.flush_dispatched();
        while let Some((at, &Event::IoComplete(req))) = self.queue.peek() {
            if at > self.now {
                break;
            }
            self.queue.pop();
            self.events += 1;
            self.complete_io(req, at);
        }
    }
}
