//! The block layer between swap I/O and device models.
//!
//! Models the parts of `block/blk-mq.c`, `block/blk-merge.c` and mq-deadline that decide
//! how many requests swap I/O becomes: per-task plugging (`blk_start_plug`), merging a bio
//! into the plug's last request or into a queued request (back and front merges up to
//! `max_sectors_kb`), plug flushes on request count and size, and a tag limit
//! (`nr_requests`) past which requests wait in the scheduler queue in FIFO order.
//!
//! Simplified: no bio splitting, no segment limits, one hardware queue per device, FIFO
//! dispatch (mq-deadline's read/write batching and expiry are not modelled), scheduler
//! merges are tried against the 16 most recently queued requests.
//!
//! A device may complete requests one by one, or in passes of its host (`passes`).

use crate::config::BlockConfig;
use crate::device::{BlockDevice, DeviceTraits, IoDir, IoRequest};
use crate::ids::{DeviceId, Pfn};
use crate::stats::{BlockStats, DirStats, LatencyHistogram};
use crate::time::SimTime;
use std::collections::VecDeque;

mod passes;
use passes::Passes;

const SECTORS_PER_PAGE: u64 = 8;
const SCHED_MERGE_WINDOW: usize = 16;
const SIZE_BUCKETS: usize = 10;

/// The frame a hibernation image page names in a request. Image pages are no frames of
/// the model (the kernel copies the snapshot through buffers the model does not keep):
/// the block layer sizes, merges and times them like any page, and completion skips them.
pub(crate) const IMAGE_PFN: Pfn = Pfn(u32::MAX);

/// Index of a request in the block layer's slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ReqId(pub(crate) u32);

#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) device: DeviceId,
    pub(crate) dir: IoDir,
    /// First sector.
    pub(crate) sector: u64,
    /// Pages in sector order.
    pub(crate) frames: VecDeque<Pfn>,
    issued: SimTime,
}

impl Request {
    fn end_sector(&self) -> u64 {
        self.sector + self.frames.len() as u64 * SECTORS_PER_PAGE
    }
    fn bytes(&self) -> u64 {
        self.frames.len() as u64 * crate::ids::PAGE_SIZE
    }
}

#[derive(Clone, Debug)]
struct DirCounters {
    stats: DirStats,
    service: LatencyHistogram,
}

#[derive(Clone)]
struct DeviceQueue {
    model: Box<dyn BlockDevice>,
    traits: DeviceTraits,
    name: String,
    in_flight: u32,
    queued: VecDeque<ReqId>,
    reads: DirCounters,
    writes: DirCounters,
    io_unplugs: u64,
    timer_unplugs: u64,
    sizes: [u64; SIZE_BUCKETS],
    last_dispatch: SimTime,
    /// The host's passes not yet signalled, for a device that completes in passes.
    passes: Passes,
}

impl std::fmt::Debug for DeviceQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceQueue").field("name", &self.name).field("in_flight", &self.in_flight).finish()
    }
}

impl DeviceQueue {
    fn dir(&mut self, dir: IoDir) -> &mut DirCounters {
        match dir {
            IoDir::Read => &mut self.reads,
            IoDir::Write => &mut self.writes,
        }
    }
}

/// A task's plug: requests built but not yet handed to the scheduler.
#[derive(Clone, Debug, Default)]
struct Plug {
    depth: u32,
    requests: Vec<ReqId>,
}

/// A one-page bio for a swap slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bio {
    pub(crate) device: DeviceId,
    pub(crate) dir: IoDir,
    pub(crate) offset: u32,
    pub(crate) pfn: Pfn,
}

/// A request that completed, for the engine to finish its pages.
#[derive(Debug)]
pub(crate) struct Completion {
    pub(crate) dir: IoDir,
    pub(crate) frames: VecDeque<Pfn>,
}

/// The block layer: all device queues, the request slab and the per-task plugs.
#[derive(Clone, Debug)]
pub(crate) struct BlockLayer {
    cfg: BlockConfig,
    queues: Vec<DeviceQueue>,
    slab: Vec<Option<Request>>,
    free_ids: Vec<u32>,
    plugs: Vec<Plug>,
    /// Scratch for `flush_plug`: the devices a flush handed requests to, in first-seen order.
    touched_scratch: Vec<DeviceId>,
    /// Emptied frame lists of finished or merged requests, reused by new requests so that
    /// a bio does not allocate; at most `SPARE_FRAMES_MAX` are kept.
    spare_frames: Vec<VecDeque<Pfn>>,
}

/// How many emptied frame lists the block layer keeps for reuse.
const SPARE_FRAMES_MAX: usize = 4096;

/// A submitting context with a plug of its own (`current->plug`): a task, kswapd or
/// zswap's pool-limit worker. Handed out by [`BlockLayer::add_plug_owner`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlugOwner(u32);

/// What a completion event of a request found ([`BlockLayer::complete`]).
#[derive(Debug)]
pub(crate) enum Finished {
    /// The request completed.
    Request(Completion),
    /// The request opened a pass of its device's host, which has grown since: its event
    /// comes again at this time.
    Later(SimTime),
    /// The request's pass was signalled: this many requests of the device completed, to be
    /// taken in order with [`BlockLayer::complete_member`].
    Pass(DeviceId, u32),
}

/// Something the engine must schedule: a request completes at `at`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dispatched {
    pub(crate) req: ReqId,
    pub(crate) at: SimTime,
}

impl BlockLayer {
    pub(crate) fn new(cfg: BlockConfig, models: Vec<(String, Box<dyn BlockDevice>)>) -> BlockLayer {
        let queues = models
            .into_iter()
            .map(|(name, model)| DeviceQueue {
                traits: model.traits(),
                model,
                name,
                in_flight: 0,
                queued: VecDeque::new(),
                reads: DirCounters { stats: DirStats::default(), service: LatencyHistogram::default() },
                writes: DirCounters { stats: DirStats::default(), service: LatencyHistogram::default() },
                io_unplugs: 0,
                timer_unplugs: 0,
                sizes: [0; SIZE_BUCKETS],
                last_dispatch: SimTime::ZERO,
                passes: Passes::default(),
            })
            .collect();
        BlockLayer {
            cfg,
            queues,
            slab: Vec::new(),
            free_ids: Vec::new(),
            plugs: Vec::new(),
            touched_scratch: Vec::new(),
            spare_frames: Vec::new(),
        }
    }

    /// Adds a plug for a new submitting context and names it.
    pub(crate) fn add_plug_owner(&mut self) -> PlugOwner {
        self.plugs.push(Plug::default());
        PlugOwner((self.plugs.len() - 1) as u32)
    }

    /// True for devices that complete I/O in the submitting context (zram, pmem).
    pub(crate) fn is_synchronous(&self, dev: DeviceId) -> bool {
        self.queues[dev.0 as usize].traits.synchronous
    }

    /// The device's tags (`nr_requests`).
    pub(crate) fn queue_depth(&self, dev: DeviceId) -> u32 {
        self.queues[dev.0 as usize].traits.queue_depth
    }

    /// `blk_start_plug`; nested plugs join the outer one.
    pub(crate) fn start_plug(&mut self, owner: PlugOwner) {
        if self.cfg.plugging {
            self.plugs[owner.0 as usize].depth += 1;
        }
    }

    /// `blk_finish_plug`: the outermost call flushes (an explicit unplug).
    pub(crate) fn finish_plug(&mut self, owner: PlugOwner, now: SimTime, out: &mut Vec<Dispatched>) {
        if !self.cfg.plugging {
            return;
        }
        let plug = &mut self.plugs[owner.0 as usize];
        plug.depth = plug.depth.checked_sub(1).expect("unbalanced finish_plug");
        if plug.depth == 0 {
            self.flush_plug(owner, now, true, out);
        }
    }

    fn flush_plug(&mut self, owner: PlugOwner, now: SimTime, explicit: bool, out: &mut Vec<Dispatched>) {
        if self.plugs[owner.0 as usize].requests.is_empty() {
            return;
        }
        // The plug's vector and the touched-device list are taken and given back, not
        // dropped, so a flush allocates nothing once they have grown to their working size.
        let mut requests = std::mem::take(&mut self.plugs[owner.0 as usize].requests);
        let mut touched = std::mem::take(&mut self.touched_scratch);
        for &id in &requests {
            let dev = self.req(id).device;
            if !touched.contains(&dev) {
                touched.push(dev);
            }
            self.insert(id);
        }
        requests.clear();
        self.plugs[owner.0 as usize].requests = requests;
        for &dev in &touched {
            let q = &mut self.queues[dev.0 as usize];
            if explicit {
                q.io_unplugs += 1;
            } else {
                q.timer_unplugs += 1;
            }
            self.dispatch(dev, now, out);
        }
        touched.clear();
        self.touched_scratch = touched;
    }

    /// A frame list holding only `pfn`, reusing a spare one when there is one.
    fn new_frames(&mut self, pfn: Pfn) -> VecDeque<Pfn> {
        let mut frames = self.spare_frames.pop().unwrap_or_default();
        frames.push_back(pfn);
        frames
    }

    /// Takes back the frame list of a [`Completion`] once the engine has finished its
    /// pages, for reuse by a later request.
    pub(crate) fn recycle_frames(&mut self, mut frames: VecDeque<Pfn>) {
        if self.spare_frames.len() < SPARE_FRAMES_MAX {
            frames.clear();
            self.spare_frames.push(frames);
        }
    }

    fn req(&self, id: ReqId) -> &Request {
        self.slab[id.0 as usize].as_ref().expect("live request")
    }
    fn req_mut(&mut self, id: ReqId) -> &mut Request {
        self.slab[id.0 as usize].as_mut().expect("live request")
    }

    #[inline]
    fn alloc_req(&mut self, r: Request) -> ReqId {
        match self.free_ids.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(r);
                ReqId(i)
            }
            None => {
                self.slab.push(Some(r));
                ReqId(self.slab.len() as u32 - 1)
            }
        }
    }

    /// Tries to merge a one-page bio at `sector` into request `id`: back merge when the
    /// request ends where the bio starts, front merge when the bio ends where it starts.
    #[inline]
    fn try_merge(&mut self, id: ReqId, dev: DeviceId, dir: IoDir, sector: u64, pfn: Pfn) -> bool {
        let max_bytes = u64::from(self.queues[dev.0 as usize].traits.max_sectors_kb) * 1024;
        let r = self.req(id);
        if r.device != dev || r.dir != dir || r.bytes() + crate::ids::PAGE_SIZE > max_bytes {
            return false;
        }
        let front = if r.end_sector() == sector {
            false
        } else if sector + SECTORS_PER_PAGE == r.sector {
            true
        } else {
            return false;
        };
        let r = self.req_mut(id);
        if front {
            r.frames.push_front(pfn);
            r.sector = sector;
        } else {
            r.frames.push_back(pfn);
        }
        let c = &mut self.queues[dev.0 as usize].dir(dir).stats;
        c.merges += 1;
        if front {
            c.front_merges += 1;
        }
        true
    }

    /// Submits a one-page bio (`submit_bio`) on behalf of plug owner `owner`.
    pub(crate) fn submit(&mut self, owner: PlugOwner, bio: Bio, now: SimTime, out: &mut Vec<Dispatched>) {
        let Bio { device: dev, dir, offset, pfn } = bio;
        let sector = u64::from(offset) * SECTORS_PER_PAGE;
        {
            let c = &mut self.queues[dev.0 as usize].dir(dir).stats;
            c.queued += 1;
            c.queued_kib += crate::ids::PAGE_SIZE / 1024;
        }
        let plugged = self.cfg.plugging && self.plugs[owner.0 as usize].depth > 0;
        if plugged {
            if let Some(&last) = self.plugs[owner.0 as usize].requests.last() {
                if self.try_merge(last, dev, dir, sector, pfn) {
                    return;
                }
            }
            if self.cfg.scheduler_merges && self.try_sched_merge(dev, dir, sector, pfn) {
                return;
            }
            let plug = &self.plugs[owner.0 as usize];
            let flush = plug.requests.len() as u32 >= self.cfg.plug_max_requests
                || plug
                    .requests
                    .last()
                    .is_some_and(|&l| self.req(l).bytes() >= u64::from(self.cfg.plug_flush_kb) * 1024);
            if flush {
                self.flush_plug(owner, now, true, out);
            }
            let frames = self.new_frames(pfn);
            let id = self.alloc_req(Request { device: dev, dir, sector, frames, issued: now });
            self.plugs[owner.0 as usize].requests.push(id);
        } else {
            if self.cfg.scheduler_merges && self.try_sched_merge(dev, dir, sector, pfn) {
                return;
            }
            let frames = self.new_frames(pfn);
            let id = self.alloc_req(Request { device: dev, dir, sector, frames, issued: now });
            self.queues[dev.0 as usize].queued.push_back(id);
            self.dispatch(dev, now, out);
        }
    }

    fn try_sched_merge(&mut self, dev: DeviceId, dir: IoDir, sector: u64, pfn: Pfn) -> bool {
        let n = self.queues[dev.0 as usize].queued.len();
        (1..=n.min(SCHED_MERGE_WINDOW)).any(|k| {
            let id = self.queues[dev.0 as usize].queued[n - k];
            self.try_merge(id, dev, dir, sector, pfn)
        })
    }

    /// Hands a plugged request to the scheduler, merging it into a queued one if adjacent.
    fn insert(&mut self, id: ReqId) {
        let dev = self.req(id).device;
        if self.cfg.scheduler_merges {
            let (dir, sector, end) = {
                let r = self.req(id);
                (r.dir, r.sector, r.end_sector())
            };
            let max_bytes = u64::from(self.queues[dev.0 as usize].traits.max_sectors_kb) * 1024;
            let bytes = self.req(id).bytes();
            let q = &self.queues[dev.0 as usize];
            let target = q.queued.iter().rev().take(SCHED_MERGE_WINDOW).copied().find(|&t| {
                let r = self.req(t);
                r.dir == dir
                    && r.bytes() + bytes <= max_bytes
                    && (r.end_sector() == sector || end == r.sector)
            });
            if let Some(t) = target {
                let mut moved = self.slab[id.0 as usize].take().expect("live request");
                self.free_ids.push(id.0);
                let n = moved.frames.len() as u64;
                let tr = self.req_mut(t);
                if tr.end_sector() == sector {
                    tr.frames.extend(moved.frames.drain(..));
                } else {
                    for f in moved.frames.drain(..).rev() {
                        tr.frames.push_front(f);
                    }
                    tr.sector = sector;
                }
                self.recycle_frames(moved.frames);
                // Each page of the merged request joined an existing request.
                self.queues[dev.0 as usize].dir(dir).stats.merges += n;
                return;
            }
        }
        self.queues[dev.0 as usize].queued.push_back(id);
    }

    /// Issues queued requests while tags are free.
    fn dispatch(&mut self, dev: DeviceId, now: SimTime, out: &mut Vec<Dispatched>) {
        loop {
            let q = &mut self.queues[dev.0 as usize];
            if q.in_flight >= q.traits.queue_depth {
                return;
            }
            let Some(id) = q.queued.pop_front() else { return };
            let t = now.max(q.last_dispatch);
            q.last_dispatch = t;
            let r = self.slab[id.0 as usize].as_mut().expect("live request");
            r.issued = t;
            let req = IoRequest { dir: r.dir, sector: r.sector, bytes: r.bytes() };
            let q = &mut self.queues[dev.0 as usize];
            let done = q.model.service(t, &req).max(t);
            q.in_flight += 1;
            q.dir(req.dir).stats.dispatches += 1;
            if q.passes.join(id, t, done) {
                continue;
            }
            let at = match q.model.pass_signal() {
                Some(signal) => q.passes.open(id, done, signal),
                None => done,
            };
            out.push(Dispatched { req: id, at });
        }
    }

    /// Performs a request synchronously, as a `SWP_SYNCHRONOUS_IO` device does (zram): no
    /// plug, no queue, completed before the call returns. The bio covers `pages`
    /// consecutive pages from `bio.offset` (more than one for a large folio), served as one
    /// request: the device's per-request base once, its per-KiB cost (on zram, compressing
    /// or decompressing each page on its own) for every page. Returns the completion time;
    /// the submitting context waits for it.
    pub(crate) fn submit_sync_pages(&mut self, bio: Bio, pages: u32, now: SimTime) -> SimTime {
        let q = &mut self.queues[bio.device.0 as usize];
        let bytes = u64::from(pages) * crate::ids::PAGE_SIZE;
        let t = now.max(q.last_dispatch);
        q.last_dispatch = t;
        let req = IoRequest { dir: bio.dir, sector: u64::from(bio.offset) * SECTORS_PER_PAGE, bytes };
        let done = q.model.service(t, &req).max(t);
        q.sizes[(pages.max(1).ilog2() as usize).min(SIZE_BUCKETS - 1)] += 1;
        let c = q.dir(bio.dir);
        c.stats.queued += 1;
        c.stats.queued_kib += bytes / 1024;
        c.stats.dispatches += 1;
        c.stats.completed += 1;
        c.stats.completed_kib += bytes / 1024;
        c.stats.service_ns_total += done.since(t).0;
        c.service.record(done.since(t).0);
        done
    }

    /// The completion event of request `id` came at `now`. On a device that completes each
    /// request on its own, the request finished; on one that completes in passes, `id`
    /// stands for its pass, which is signalled now or, grown since it opened, later.
    pub(crate) fn complete(&mut self, id: ReqId, now: SimTime, out: &mut Vec<Dispatched>) -> Finished {
        let dev = self.req(id).device;
        let passes = &mut self.queues[dev.0 as usize].passes;
        if passes.is_empty() {
            return Finished::Request(self.finish(id, now, out));
        }
        match passes.signal(id, now) {
            Ok(members) => Finished::Pass(dev, members),
            Err(later) => Finished::Later(later),
        }
    }

    /// The next request of the pass of `dev` signalled at `now` ([`Finished::Pass`]).
    pub(crate) fn complete_member(
        &mut self,
        dev: DeviceId,
        now: SimTime,
        out: &mut Vec<Dispatched>,
    ) -> Completion {
        let id = self.queues[dev.0 as usize].passes.next_member();
        self.finish(id, now, out)
    }

    /// A request finished: account it, free its tag and issue more.
    fn finish(&mut self, id: ReqId, now: SimTime, out: &mut Vec<Dispatched>) -> Completion {
        let r = self.slab[id.0 as usize].take().expect("completing a live request");
        self.free_ids.push(id.0);
        let dev = r.device;
        let q = &mut self.queues[dev.0 as usize];
        q.in_flight -= 1;
        let kib = r.bytes() / 1024;
        let bucket = ((kib / 4).max(1).ilog2() as usize).min(SIZE_BUCKETS - 1);
        q.sizes[bucket] += 1;
        let c = q.dir(r.dir);
        c.stats.completed += 1;
        c.stats.completed_kib += kib;
        c.stats.service_ns_total += now.since(r.issued).0;
        c.service.record(now.since(r.issued).0);
        self.dispatch(dev, now, out);
        Completion { dir: r.dir, frames: r.frames }
    }

    /// Frames of a live request (for invariant checks).
    pub(crate) fn live_frames(&self) -> impl Iterator<Item = (IoDir, Pfn)> + '_ {
        self.slab.iter().flatten().flat_map(|r| r.frames.iter().map(move |&f| (r.dir, f)))
    }

    /// Figures summed over all devices.
    pub(crate) fn totals(&self) -> crate::stats::BlockTotals {
        let mut t = crate::stats::BlockTotals::default();
        for q in &self.queues {
            t.reads.add(&q.reads.stats);
            t.writes.add(&q.writes.stats);
            t.unplugs += q.io_unplugs + q.timer_unplugs;
        }
        t
    }

    pub(crate) fn stats(&self) -> Vec<BlockStats> {
        self.queues
            .iter()
            .map(|q| BlockStats {
                device: q.name.clone(),
                model: q.model.kind().to_string(),
                reads: q.reads.stats.clone(),
                writes: q.writes.stats.clone(),
                io_unplugs: q.io_unplugs,
                timer_unplugs: q.timer_unplugs,
                request_kib_histogram: q
                    .sizes
                    .iter()
                    .enumerate()
                    .filter(|(_, &n)| n > 0)
                    .map(|(i, &n)| (4u64 << i, n))
                    .collect(),
                read_service: q.reads.service.summary(),
                write_service: q.writes.service.summary(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug)]
    struct Fixed(u64, u32);
    impl BlockDevice for Fixed {
        fn kind(&self) -> &str {
            "fixed"
        }
        fn traits(&self) -> DeviceTraits {
            DeviceTraits { rotational: false, synchronous: false, queue_depth: self.1, max_sectors_kb: 16 }
        }
        fn service(&mut self, now: SimTime, _req: &IoRequest) -> SimTime {
            SimTime(now.0 + self.0)
        }
    }

    fn check(plugging: bool, offsets: &[u32]) -> (DirStats, u64, Vec<Dispatched>) {
        let cfg = BlockConfig { plugging, ..BlockConfig::default() };
        let mut b = BlockLayer::new(cfg, vec![("d".into(), Box::new(Fixed(1000, 1)))]);
        let owner = b.add_plug_owner();
        let mut out = Vec::new();
        b.start_plug(owner);
        for (i, &off) in offsets.iter().enumerate() {
            b.submit(
                owner,
                Bio { device: DeviceId(0), dir: IoDir::Read, offset: off, pfn: Pfn(i as u32) },
                SimTime(0),
                &mut out,
            );
        }
        b.finish_plug(owner, SimTime(0), &mut out);
        let mut all = out.clone();
        while let Some(d) = out.pop() {
            let mut more = Vec::new();
            assert!(matches!(b.complete(d.req, d.at, &mut more), Finished::Request(_)));
            all.extend(more.iter().copied());
            out.extend(more);
        }
        let s = b.stats().remove(0);
        (s.reads, s.io_unplugs, all)
    }

    #[test]
    fn plugging_merges_contiguous_slots_up_to_max_sectors() {
        // Slots 1..=6 contiguous, 9 apart; max request 16 KiB = 4 pages.
        let (s, unplugs, _) = check(true, &[1, 2, 3, 4, 5, 6, 9]);
        assert_eq!((s.queued, s.merges, s.dispatches, s.completed), (7, 4, 3, 3));
        assert_eq!(unplugs, 1);
        // Front merge: a bio just before the request.
        let (s, _, _) = check(true, &[5, 4]);
        assert_eq!((s.merges, s.front_merges, s.dispatches), (1, 1, 1));
    }

    /// A host serving one request at a time, `cost` ns each, that signals a pass `signal`
    /// ns after its last request.
    #[derive(Clone, Debug)]
    struct Host {
        cost: u64,
        signal: u64,
        free: SimTime,
    }
    impl BlockDevice for Host {
        fn kind(&self) -> &str {
            "host"
        }
        fn traits(&self) -> DeviceTraits {
            DeviceTraits { rotational: false, synchronous: false, queue_depth: 64, max_sectors_kb: 4 }
        }
        fn service(&mut self, now: SimTime, _req: &IoRequest) -> SimTime {
            self.free = SimTime(now.max(self.free).0 + self.cost);
            self.free
        }
        fn pass_signal(&mut self) -> Option<crate::time::SimDuration> {
            Some(crate::time::SimDuration(self.signal))
        }
    }

    #[test]
    fn a_host_completes_what_it_serves_in_one_pass_together() {
        let host = Host { cost: 10, signal: 100, free: SimTime::ZERO };
        let mut b = BlockLayer::new(
            BlockConfig { plugging: false, ..BlockConfig::default() },
            vec![("d".into(), Box::new(host))],
        );
        let owner = b.add_plug_owner();
        let mut out = Vec::new();
        let read =
            |offset: u32| Bio { device: DeviceId(0), dir: IoDir::Read, offset: offset * 4, pfn: Pfn(offset) };
        // Three requests at 0, 5 and 25 ns: the first two are one pass (served by 20 ns),
        // the third finds the host idle and opens another.
        b.submit(owner, read(0), SimTime(0), &mut out);
        b.submit(owner, read(1), SimTime(5), &mut out);
        b.submit(owner, read(2), SimTime(25), &mut out);
        let at: Vec<(u32, u64)> = out.iter().map(|d| (d.req.0, d.at.0)).collect();
        // One event per pass; the first was scheduled before its pass grew.
        assert_eq!(at, vec![(0, 110), (2, 135)]);
        let mut more = Vec::new();
        assert!(matches!(b.complete(ReqId(0), SimTime(110), &mut more), Finished::Later(SimTime(120))));
        let Finished::Pass(dev, 2) = b.complete(ReqId(0), SimTime(120), &mut more) else {
            panic!("a pass of 2")
        };
        let frames: Vec<Pfn> =
            (0..2).map(|_| b.complete_member(dev, SimTime(120), &mut more).frames[0]).collect();
        assert_eq!(frames, vec![Pfn(0), Pfn(1)]);
        assert!(matches!(b.complete(ReqId(2), SimTime(135), &mut more), Finished::Pass(_, 1)));
        b.complete_member(dev, SimTime(135), &mut more);
        let s = b.stats().remove(0);
        // Service as the guest sees it: 120, 115 and 110 ns.
        assert_eq!((s.reads.completed, s.reads.service_ns_total), (3, 345));
        assert!(more.is_empty());
    }

    #[test]
    fn without_plugging_only_queued_requests_merge() {
        // Depth 1: the first request is issued at once; later ones queue and merge there.
        let (s, unplugs, _) = check(false, &[1, 2, 3]);
        assert_eq!((s.queued, s.merges, s.dispatches), (3, 1, 2));
        assert_eq!(unplugs, 0);
    }
}
