//! Hibernation (`kernel/power/hibernate.c`, `snapshot.c`, `swap.c`): the `hibernate` and
//! `resume` timeline operations.
//!
//! `hibernate` freezes the user tasks (in-flight I/O still completes; kswapd and zswap's
//! worker, freezable kernel threads, wait too), then runs as a kernel task:
//! 1. `hibernate_preallocate_memory`: the image target is `image_size` (default 2/5 of
//!    RAM) capped at `max_size`; when saveable pages exceed it, `shrink_all_memory`
//!    (direct reclaim, swap-out through the block layer) runs until they fit or
//!    `MAX_RECLAIM_RETRIES` sweeps in a row free nothing (see `shrink_step` for how it
//!    is paced by the disk);
//! 2. the snapshot: every I/O still in flight completes first, then the image is fixed;
//! 3. `swsusp_write`: the image goes sequentially to slots allocated on the resume device,
//!    as one-page bios merged in a plug, compressed by `clamp(cpus - 1, 1, 3)` threads;
//! 4. power off. Nothing runs until `resume`.
//!
//! `resume` boots, reads the image back with readahead windows of `CMP_MIN_RD_PAGES` up to
//! `CMP_MAX_RD_PAGES`, decompresses, frees the image slots and thaws the tasks. The model
//! never drops RAM state, so restoring memory means finding it exactly as it was at the
//! snapshot, which a fingerprint of the page tables, frames and LRU checks. Pages
//! reclaimed before the snapshot stay in swap and come back by faults.
//!
//! Image I/O is not swap I/O: it is in the block figures and the hibernation report, never
//! in `pswpin`/`pswpout`.
//!
//! Simplified:
//! - Saveable pages are the frames in use (anonymous folios, the swap cache, zswap's pool)
//!   plus the kernel's own memory (`[hibernation] kernel_image`), which is no frame of the
//!   model and is only counted into the image. `count` (saveable + free) is RAM; the
//!   kernel's reserves and highmem are not modelled. Metadata (`size`) is two memory
//!   bitmaps, one bit per page of RAM each.
//! - Step 7 (preallocating the image frames, which reclaims further) is not modelled: the
//!   shrink goes all the way to the target, and an image still above `max_size` fails as
//!   the preallocation would (-ENOMEM).
//! - The snapshot copy (`swsusp_save`) costs `COPY_NS` per saveable page.
//! - Compression: each page's compressed length is drawn from its region's contents as
//!   zswap's are (`compressed_len`, LZO), the kernel part at a fixed 2:1; the kernel
//!   compresses 32-page chunks, which compress somewhat better than pages one by one.
//!   Per-page CPU costs are LZO's measured ones. CPU work and I/O overlap, so writing
//!   takes about `max(I/O time, CPU time / threads)`; the CRC32 thread is free.
//! - Swap-map pages: one per 511 image pages, plus the `swsusp_info` header page.
//! - Space: uncompressed, `enough_swap` (free slots > image pages + `PAGES_FOR_IO`) is
//!   checked as the kernel does; compressed, the kernel finds out during the write that
//!   swap runs out, and the model checks up front that the compressed stream fits.
//! - The resume device must be an active, non-zram swap device; the model checks that
//!   when the operation starts, before freezing.
//! - Resume: the boot kernel's own memory, the page copy into place and `T_restore` are
//!   not modelled beyond `boot`; decompression costs LZO's per-page figures.
//! - Every operation but `resume` fails while the machine is off, `mark` included.
//! - The shrink makes its own priority passes rather than call the engine's `reclaim`,
//!   to pace its writes by the disk (see `Simulation::shrink_pass` in `reclaim.rs`).

use super::super::{Simulation, Step, Wait};
use crate::block::{Bio, IMAGE_PFN};
use crate::contents::{compressed_len, Compressor, Contents};
use crate::device::IoDir;
use crate::engine::task::{TaskKind, TaskState};
use crate::event::Event;
use crate::ids::{DeviceId, SwapSlot, PAGE_SIZE};
use crate::mm::pagetable::PteState;
use crate::time::{SimDuration, SimTime};
use crate::timeline::{HibernateOp, HibernationReport, OpReport};

/// `PAGES_FOR_IO`: pages kept free for I/O while the image is written (4 MiB).
pub(crate) const PAGES_FOR_IO: u64 = 1024;
/// `/sys/power/reserved_size` default, 1 MiB, in pages.
const RESERVED_PAGES: u64 = 256;
/// Sector numbers one swap-map page lists (`MAP_PAGE_ENTRIES`).
const MAP_PAGE_ENTRIES: u64 = 511;
/// `CMP_THREADS`: the most compression threads.
const CMP_THREADS: u64 = 3;
/// Image slots written per step of the writer, one `hib_bio_batch` of one-page bios under
/// one plug (the kernel submits each compressed page as soon as a thread has it; the
/// batch only bounds how often the model's writer yields).
const WRITE_BATCH: u64 = 256;
/// Image pages allowed in flight while writing before the writer waits for completions
/// (the kernel waits when free memory falls to half of what it was; the model bounds the
/// queue instead).
const WRITE_INFLIGHT: u64 = 8192;
/// `CMP_MIN_RD_PAGES`: resume's first readahead window.
const CMP_MIN_RD_PAGES: u64 = 1024;
/// `CMP_MAX_RD_PAGES`: resume's readahead window after the first.
const CMP_MAX_RD_PAGES: u64 = 8192;
/// `swsusp_save`'s copy of a saveable page into a preallocated image frame: a 4 KiB
/// `copy_page` at about 16 GB/s.
const COPY_NS: u64 = 250;

/// The hibernation in progress, or the image on disk while the machine is off.
#[derive(Clone, Debug)]
pub(crate) struct Hibernation {
    /// The resume device.
    pub(crate) device: DeviceId,
    /// Swap slots holding the image, in write order; held until resume frees them.
    pub(crate) slots: Vec<SwapSlot>,
    /// Saveable pages in the image (uncompressed).
    pub(crate) image_pages: u64,
    /// Image bytes on the device (compressed if compressing), map pages included.
    pub(crate) image_bytes: u64,
    /// Decompression CPU of the whole image, in ns (one thread).
    decompress_ns: u64,
    /// Tasks were paused before the freeze: the thaw leaves them paused.
    was_paused: bool,
    /// kswapd and zswap-worker events that came while frozen, rescheduled at the thaw.
    deferred: Vec<Event>,
    /// The image is written and the machine is off: only `resume` may run.
    pub(crate) powered_off: bool,
    /// Fingerprint of memory at the snapshot, checked by resume and the invariants.
    pub(crate) fingerprint: Option<u64>,
}

/// Where a hibernate or resume kernel task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Freeze,
    Shrink,
    Drain,
    Write,
    WriteWait,
    PowerOff,
    Boot,
    Read,
    ReadWait,
}

/// The state of a hibernate or resume kernel task.
#[derive(Clone, Debug)]
pub(crate) struct HibTask {
    phase: Phase,
    op: HibernateOp,
    /// The image target in pages.
    target: u64,
    /// `max_size` of `hibernate_preallocate_memory`.
    max_size: u64,
    /// Where the shrink stands.
    shrink: super::ShrinkAll,
    reclaimed: u64,
    shrink_start: SimTime,
    io_start: SimTime,
    /// Image slots written or read so far.
    next: u64,
    /// Image slots to write.
    total_slots: u64,
    /// Compression (or decompression) CPU of the whole image, in ns (one thread).
    cpu_ns: u64,
    threads: u64,
    /// The readahead window while resuming.
    window: u64,
    /// Resume's boot time before the image is read.
    boot: SimDuration,
}

impl HibTask {
    /// A task at `phase`, started at `now`, nothing done yet.
    fn new(phase: Phase, op: HibernateOp, now: SimTime, threads: u64) -> HibTask {
        HibTask {
            phase,
            op,
            target: 0,
            max_size: 0,
            shrink: super::ShrinkAll::default(),
            reclaimed: 0,
            shrink_start: now,
            io_start: now,
            next: 0,
            total_slots: 0,
            cpu_ns: 0,
            threads,
            window: CMP_MIN_RD_PAGES,
            boot: SimDuration::ZERO,
        }
    }
}

impl Simulation {
    /// Starts a `hibernate`: checks the resume device, freezes the tasks and spawns the
    /// kernel task. Returns false when the operation failed at once (the report says why).
    pub(in crate::engine) fn start_hibernate(
        &mut self,
        op: HibernateOp,
        now: SimTime,
        report: &mut OpReport,
    ) -> bool {
        let device = match self.resume_device(op.device.as_deref()) {
            Ok(d) => d,
            Err(why) => {
                report.result = format!("failed: {why}");
                return false;
            }
        };
        let name = self.mm.cfg.devices[device.0 as usize].name.clone();
        report.device = Some(name.clone());
        report.hibernation = Some(HibernationReport { device: name, ..Default::default() });
        self.hibernation = Some(Hibernation {
            device,
            slots: Vec::new(),
            image_pages: 0,
            image_bytes: 0,
            decompress_ns: 0,
            was_paused: self.paused,
            deferred: Vec::new(),
            powered_off: false,
            fingerprint: None,
        });
        self.paused = true;
        let task = HibTask::new(Phase::Freeze, op, now, self.compress_threads());
        self.spawn_kernel_task("hibernate".into(), TaskKind::Hibernate(Box::new(task)), now);
        true
    }

    /// Starts a `resume`. Returns false when there is no image (the report says so).
    pub(in crate::engine) fn start_resume(
        &mut self,
        boot: SimDuration,
        now: SimTime,
        report: &mut OpReport,
    ) -> bool {
        let Some(h) = self.hibernation.as_ref().filter(|h| h.powered_off) else {
            report.result = "failed: no hibernation image".into();
            return false;
        };
        let name = self.mm.cfg.devices[h.device.0 as usize].name.clone();
        let (image_pages, image_bytes, slots, cpu_ns) =
            (h.image_pages, h.image_bytes, h.slots.len() as u64, h.decompress_ns);
        let r = report;
        r.device = Some(name.clone());
        r.hibernation = Some(HibernationReport {
            device: name,
            image_pages,
            image_bytes,
            image_slots: slots,
            cpu_s: SimDuration(cpu_ns / self.compress_threads()).as_secs_f64(),
            ..Default::default()
        });
        let op = HibernateOp { image_size: None, compress: true, device: None };
        let task = HibTask {
            total_slots: slots,
            cpu_ns,
            boot,
            ..HibTask::new(Phase::Boot, op, now, self.compress_threads())
        };
        self.spawn_kernel_task("resume".into(), TaskKind::Hibernate(Box::new(task)), now);
        true
    }

    /// Why an operation other than `resume` cannot run now, if the machine is off.
    pub(in crate::engine) fn hibernated_refusal(&self, op: &str) -> Option<String> {
        self.hibernation
            .as_ref()
            .filter(|h| h.powered_off)
            .map(|_| format!("failed: the machine is hibernated: {op} cannot run before resume"))
    }

    /// A kswapd or zswap-worker event while frozen waits for the thaw.
    pub(in crate::engine) fn defer_frozen(&mut self, ev: Event) {
        self.hibernation.as_mut().expect("frozen").deferred.push(ev);
    }

    fn op_report_mut(&mut self) -> &mut OpReport {
        &mut self.op_running.as_mut().expect("an operation is running").report
    }

    fn hib_report_mut(&mut self) -> &mut HibernationReport {
        self.op_report_mut().hibernation.as_mut().expect("a hibernation report")
    }

    /// `hibernate.c`'s resume device: the named one, else the active swap device with the
    /// highest priority.
    fn resume_device(&self, name: Option<&str>) -> Result<DeviceId, String> {
        let devices = &self.mm.swap.devices;
        let dev = match name {
            Some(n) => {
                let d = self.device_id(n).ok_or_else(|| format!("no swap device named \"{n}\""))?;
                if !devices[d.0 as usize].writeok {
                    return Err(format!("\"{n}\" is not an active swap device"));
                }
                d
            }
            None => {
                let best = (0..devices.len())
                    .filter(|&d| devices[d].writeok)
                    .max_by_key(|&d| (devices[d].priority, std::cmp::Reverse(d)))
                    .ok_or("no swap device to write the image to")?;
                DeviceId(best as u8)
            }
        };
        if self.mm.block.is_synchronous(dev) {
            let n = &self.mm.cfg.devices[dev.0 as usize].name;
            return Err(format!(
                "\"{n}\" is a zram (in-memory) device: it does not survive power-off and cannot hold the image"
            ));
        }
        Ok(dev)
    }

    /// `hibernate_preallocate_memory`'s and `save_compressed_image`'s thread count:
    /// `clamp(online CPUs - 1, 1, CMP_THREADS)`.
    fn compress_threads(&self) -> u64 {
        (u64::from(self.mm.cfg.machine.cpus).saturating_sub(1)).clamp(1, CMP_THREADS)
    }

    fn ram_pages(&self) -> u64 {
        self.mm.cfg.machine.memory.pages()
    }

    fn kernel_pages(&self) -> u64 {
        self.mm.cfg.hibernation.kernel_pages(self.ram_pages())
    }

    /// Saveable pages: frames in use (folios and zswap's pool) plus the kernel's memory.
    fn saveable(&self) -> u64 {
        self.ram_pages() - self.mm.frames.free_pages().min(self.ram_pages()) + self.kernel_pages()
    }

    fn hib_task(&mut self, t: usize) -> &mut HibTask {
        match &mut self.tasks[t].kind {
            TaskKind::Hibernate(h) => h,
            _ => unreachable!("hibernate step of a hibernate task"),
        }
    }

    /// One unit of a hibernate or resume task's work.
    pub(in crate::engine) fn hibernate_step(&mut self, t: usize) -> Step {
        match self.hib_task(t).phase {
            Phase::Freeze => {
                self.mm.spend(self.mm.cfg.hibernation.freeze_ms * 1_000_000);
                self.preallocate(t);
                Step::Done
            }
            Phase::Shrink => self.shrink_step(t),
            Phase::Drain => self.drain_step(t),
            Phase::Write => self.write_step(t),
            Phase::WriteWait => {
                if self.mm.image_inflight > 0 {
                    return Step::Blocked(Wait::AnyIo);
                }
                let io_s = self.mm.now.since(self.hib_task(t).io_start).as_secs_f64();
                self.hib_report_mut().image_io_s = io_s;
                self.hibernation.as_mut().expect("hibernating").powered_off = true;
                self.hib_task(t).phase = Phase::PowerOff;
                Step::Done
            }
            Phase::PowerOff => {
                self.mm.spend(self.mm.cfg.hibernation.poweroff_ms * 1_000_000);
                self.tasks[t].state = TaskState::Done;
                Step::Done
            }
            Phase::Boot => {
                let boot = self.hib_task(t).boot;
                self.mm.spend(boot.0);
                self.hib_task(t).phase = Phase::Read;
                Step::Done
            }
            Phase::Read => self.read_step(t),
            Phase::ReadWait => {
                if self.mm.image_inflight > 0 {
                    return Step::Blocked(Wait::AnyIo);
                }
                self.finish_resume(t);
                Step::Done
            }
        }
    }

    /// `hibernate_preallocate_memory`, steps 1 to 5: the target, and whether to shrink.
    fn preallocate(&mut self, t: usize) {
        let count = self.ram_pages();
        let saveable = self.saveable();
        // Two memory bitmaps (`memory_bm_create` for orig_bm and copy_bm): one bit per page.
        let size = 2 * count.div_ceil(PAGE_SIZE * 8);
        let max_size = (count.saturating_sub(size + PAGES_FOR_IO) / 2).saturating_sub(2 * RESERVED_PAGES);
        let h = self.hib_task(t);
        let wanted = h.op.image_size.unwrap_or(count * 2 / 5);
        let mut target = wanted.min(max_size);
        if target < saveable {
            let sizes = self.lru.sizes();
            let reclaimable = sizes.inactive_anon + sizes.active_anon;
            let minimum = saveable.saturating_sub(reclaimable);
            target = target.max(minimum);
        }
        let now = self.mm.now;
        let h = self.hib_task(t);
        h.target = target;
        h.max_size = max_size;
        h.shrink_start = now;
        h.phase = Phase::Shrink;
        self.hib_report_mut().target_pages = target;
    }

    /// `shrink_all_memory(saveable - target)`, one paced pass per step
    /// ([`Simulation::shrink_pass`], shared with mm-reclaim-run, swap-out-all and lowering
    /// `memory.max`), until the image fits or `MAX_RECLAIM_RETRIES` sweeps in a row free
    /// and write nothing.
    fn shrink_step(&mut self, t: usize) -> Step {
        let saveable = self.saveable();
        let target = self.hib_task(t).target;
        if saveable <= target {
            self.hib_task(t).phase = Phase::Drain;
            return Step::Done;
        }
        let mut state = self.hib_task(t).shrink;
        let (freed, next) = self.shrink_pass(t, &mut state, saveable - target);
        let h = self.hib_task(t);
        h.shrink = state;
        h.reclaimed += freed;
        match next {
            Some(step) => step,
            None => {
                h.phase = Phase::Drain;
                Step::Done
            }
        }
    }

    /// Before the snapshot every I/O in flight completes (the freezer and `dpm_suspend`
    /// quiesce the block layer); then the image is fixed, checked against the resume
    /// device, and the write begins.
    fn drain_step(&mut self, t: usize) -> Step {
        if self.mm.block.live_frames().next().is_some() {
            return Step::Blocked(Wait::AnyIo);
        }
        let shrink_s = self.mm.now.since(self.hib_task(t).shrink_start).as_secs_f64();
        let reclaimed = self.hib_task(t).reclaimed;
        let saveable = self.saveable();
        {
            let r = self.op_report_mut();
            r.reclaimed_pages = Some(reclaimed);
            let hr = r.hibernation.as_mut().expect("a hibernation report");
            hr.shrink_s = shrink_s;
            hr.reclaimed_pages = reclaimed;
            hr.image_pages = saveable;
        }
        let max_size = self.hib_task(t).max_size;
        if saveable > max_size {
            return self.fail_hibernate(
                t,
                format!(
                    "failed: not enough memory for the image: {saveable} saveable pages after shrinking, \
                     at most {max_size} fit beside their copy"
                ),
            );
        }
        // swsusp_save: the copy into preallocated frames.
        self.mm.spend(saveable * COPY_NS);
        let compress = self.hib_task(t).op.compress;
        let (data_bytes, compress_ns, decompress_ns) = self.image_contents(compress);
        let data_slots = data_bytes.div_ceil(PAGE_SIZE);
        // The swap map pages, and the `swsusp_info` header.
        let total_slots = data_slots + data_slots.div_ceil(MAP_PAGE_ENTRIES) + 1;
        let image_bytes = data_bytes + (total_slots - data_slots) * PAGE_SIZE;
        let h = self.hibernation.as_ref().expect("hibernating");
        let dev = &self.mm.swap.devices[h.device.0 as usize];
        let free = u64::from(dev.pages() - dev.inuse());
        let needed = if compress { total_slots } else { saveable + PAGES_FOR_IO + 1 };
        if free < needed {
            let name = self.mm.cfg.devices[h.device.0 as usize].name.clone();
            return self.fail_hibernate(
                t,
                format!(
                    "failed: image of {saveable} pages does not fit: {free} free swap slots on \"{name}\" \
                     (needs {needed}: {} image slots{})",
                    if compress { total_slots } else { saveable },
                    if compress { "" } else { " plus PAGES_FOR_IO 1024, and one more" },
                ),
            );
        }
        let fingerprint = self.fingerprint();
        let h = self.hibernation.as_mut().expect("hibernating");
        h.image_pages = saveable;
        h.image_bytes = image_bytes;
        h.decompress_ns = decompress_ns;
        h.fingerprint = Some(fingerprint);
        self.hib_report_mut().image_bytes = image_bytes;
        self.hib_report_mut().image_slots = total_slots;
        let threads = self.hib_task(t).threads;
        self.hib_report_mut().cpu_s = SimDuration(compress_ns / threads).as_secs_f64();
        let now = self.mm.now;
        let task = self.hib_task(t);
        task.total_slots = total_slots;
        task.cpu_ns = compress_ns;
        task.io_start = now;
        task.phase = Phase::Write;
        Step::Done
    }

    /// The image's data bytes and the compression and decompression CPU of the whole
    /// image (one thread), from each saveable page's contents.
    fn image_contents(&self, compress: bool) -> (u64, u64, u64) {
        let kernel = self.kernel_pages();
        let used = self.saveable() - kernel;
        if !compress {
            return ((used + kernel) * PAGE_SIZE, 0, 0);
        }
        let lzo = Compressor::Lzo;
        let pt = &self.mm.pt;
        let (mut bytes, mut cns, mut dns) = (0u64, 0u64, 0u64);
        let mut owned = 0u64;
        for pfn in self.mm.frames.in_use() {
            let Some(page) = self.mm.frames.owner(pfn) else { continue };
            owned += 1;
            let c = &pt.contents[pt.page_contents_id(page) as usize];
            bytes += u64::from(compressed_len(lzo, c, u64::from(page.0)));
            cns += lzo.compress_ns(c);
            dns += lzo.decompress_ns(c);
        }
        // Swap-cache folios that no PTE maps and zswap's pool (already compressed).
        let rest = used - owned.min(used);
        let random = Contents::Random;
        bytes += rest * u64::from(compressed_len(lzo, &random, 0));
        cns += rest * lzo.compress_ns(&random);
        dns += rest * lzo.decompress_ns(&random);
        // The kernel's memory compresses 2:1, at the cost of half-random pages.
        let half = Contents::Half;
        bytes += kernel * PAGE_SIZE / 2;
        cns += kernel * lzo.compress_ns(&half);
        dns += kernel * lzo.decompress_ns(&half);
        (bytes, cns, dns)
    }

    /// `save_image` / `save_compressed_image`: one batch of image slots allocated and
    /// submitted under a plug, paced by the compression threads.
    fn write_step(&mut self, t: usize) -> Step {
        if self.mm.image_inflight >= WRITE_INFLIGHT {
            return Step::Blocked(Wait::AnyIo);
        }
        let (owner, device) = (self.tasks[t].owner, self.hibernation.as_ref().expect("hibernating").device);
        let HibTask { next, total_slots, cpu_ns, threads, .. } = *self.hib_task(t);
        let n = WRITE_BATCH.min(total_slots - next);
        // The threads compress the batch before it is written.
        self.mm.spend(cpu_ns * n / total_slots.max(1) / threads);
        self.mm.block.start_plug(owner);
        for _ in 0..n {
            let Some(slot) = self.mm.swap.alloc_hibernation_slot(device) else {
                // Free slots the allocator cannot reach (another CPU's current cluster):
                // the kernel's write fails with -ENOSPC here too.
                let now = self.mm.now;
                self.mm.block.finish_plug(owner, now, &mut self.mm.dispatched);
                let name = self.mm.cfg.devices[device.0 as usize].name.clone();
                let written = self.hibernation.as_ref().expect("hibernating").slots.len();
                return self.fail_hibernate(
                    t,
                    format!(
                        "failed: swap on \"{name}\" ran out after {written} of {total_slots} image slots"
                    ),
                );
            };
            self.hibernation.as_mut().expect("hibernating").slots.push(slot);
            self.submit_image_bio(owner, device, IoDir::Write, slot.offset);
        }
        let now = self.mm.now;
        self.mm.block.finish_plug(owner, now, &mut self.mm.dispatched);
        let h = self.hib_task(t);
        h.next += n;
        if h.next == total_slots {
            h.phase = Phase::WriteWait;
        }
        Step::Done
    }

    /// One page of the image as a bio under the caller's plug, counted in flight.
    fn submit_image_bio(&mut self, owner: usize, device: DeviceId, dir: IoDir, offset: u32) {
        let bio = Bio { device, dir, offset, pfn: IMAGE_PFN };
        self.mm.image_inflight += 1;
        let now = self.mm.now;
        self.mm.block.submit(owner, bio, now, &mut self.mm.dispatched);
    }

    /// `load_compressed_image` / `load_image`: read the image ahead in windows of
    /// `CMP_MIN_RD_PAGES` growing to `CMP_MAX_RD_PAGES`, decompressing as it arrives.
    fn read_step(&mut self, t: usize) -> Step {
        let HibTask { next, total_slots, cpu_ns, threads, window, .. } = *self.hib_task(t);
        if self.mm.image_inflight > window / 2 {
            return Step::Blocked(Wait::AnyIo);
        }
        let owner = self.tasks[t].owner;
        let n = (window - self.mm.image_inflight).min(total_slots - next);
        let device = self.hibernation.as_ref().expect("an image").device;
        self.mm.block.start_plug(owner);
        for i in next..next + n {
            let offset = self.hibernation.as_ref().expect("an image").slots[i as usize].offset;
            self.submit_image_bio(owner, device, IoDir::Read, offset);
        }
        let now = self.mm.now;
        self.mm.block.finish_plug(owner, now, &mut self.mm.dispatched);
        // Decompression of what the previous windows brought in overlaps this read.
        self.mm.spend(cpu_ns * n / total_slots.max(1) / threads);
        let h = self.hib_task(t);
        h.next += n;
        h.window = CMP_MAX_RD_PAGES;
        if h.next == total_slots {
            h.phase = Phase::ReadWait;
        }
        Step::Done
    }

    /// The image is back: check that memory is as it was, free the image slots and thaw.
    fn finish_resume(&mut self, t: usize) {
        let io_s = self.mm.now.since(self.hib_task(t).io_start).as_secs_f64();
        self.hib_report_mut().image_io_s = io_s;
        let want = self.hibernation.as_ref().and_then(|h| h.fingerprint);
        assert_eq!(Some(self.fingerprint()), want, "memory changed while the machine was hibernated");
        self.thaw();
        self.tasks[t].state = TaskState::Done;
    }

    /// The hibernation failed after the freeze: free any image slots and thaw.
    fn fail_hibernate(&mut self, t: usize, why: String) -> Step {
        self.op_report_mut().result = why;
        self.thaw();
        self.tasks[t].state = TaskState::Done;
        Step::Done
    }

    /// Frees the image, thaws the tasks (unless they were paused before) and lets kswapd
    /// and zswap's worker run again.
    fn thaw(&mut self) {
        let h = self.hibernation.take().expect("hibernating");
        for &slot in &h.slots {
            self.mm.swap.free_hibernation_slot(slot);
        }
        let now = self.mm.now.max(self.mm.queue.now());
        for ev in h.deferred {
            self.schedule(now, ev);
        }
        self.paused = h.was_paused;
        if self.paused {
            return;
        }
        for c in 0..self.mm.cfg.machine.cpus as usize {
            let cpu = &self.cpus[c];
            if !cpu.scheduled && (cpu.current.is_some() || !cpu.runq.is_empty()) {
                self.cpus[c].scheduled = true;
                self.schedule(now, Event::CpuRun(c as u32));
            }
        }
    }

    /// A digest of what a resume must find as it was at the snapshot: every PTE, the
    /// frames in use, the LRU sizes, memcg usage and the swap slots besides the image.
    pub(in crate::engine) fn fingerprint(&self) -> u64 {
        let mut d = Digest(0);
        let slot_word = |slot: SwapSlot| u64::from(slot.device.0) | u64::from(slot.offset) << 8;
        for pte in &self.mm.pt.ptes {
            d.add(match pte.state() {
                PteState::None => 0,
                PteState::Zero => 1,
                PteState::Present(p) => 2 | u64::from(p.0) << 2,
                PteState::Swap(slot) => 3 | slot_word(slot) << 2,
            });
        }
        for pfn in self.mm.frames.in_use() {
            d.add(u64::from(pfn.0));
            d.add(self.mm.frames.owner(pfn).map_or(0, |p| u64::from(p.0) + 1));
            d.add(self.mm.frames.swap_slot(pfn).map_or(0, |slot| slot_word(slot) + 1));
        }
        let sizes = self.lru.sizes();
        let image = self.hibernation.as_ref().map_or(0, |h| h.slots.len() as u64);
        for word in
            [sizes.inactive_anon, sizes.active_anon, self.mm.memcg_usage, self.mm.swap.used_slots() - image]
        {
            d.add(word);
        }
        d.0
    }
}

/// A 64-bit digest folded word by word (xor, multiply, rotate): fast, not cryptographic;
/// it only has to tell a changed memory state from the one saved at the snapshot.
struct Digest(u64);

impl Digest {
    fn add(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
}
