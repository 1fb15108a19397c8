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
//!   to pace its writes by the disk (see `World::shrink_pass` in `reclaim.rs`).

use super::super::job::{
    Finish, Frozen, HibPhase, HibTask, Image, Job, JobFailure, JobStep, ResumePhase, ResumeTask,
};
use super::super::wait::Wait;
use super::super::World;
use crate::block::{Bio, IMAGE_PFN};
use crate::contents::{compressed_len, Compressor, Contents};
use crate::device::IoDir;
use crate::ids::{DeviceId, SwapSlot, TaskId, PAGE_SIZE};
use crate::mm::pagetable::PteState;
use crate::time::{SimDuration, SimTime};
use crate::timeline::{HibernateOp, HibernationReport, OpReport, OpResult};

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

impl World {
    /// Starts a `hibernate`: checks the resume device, freezes the tasks and returns the
    /// job. `None` when the operation failed at once (the report says why).
    pub(in crate::engine) fn start_hibernate(
        &mut self,
        op: HibernateOp,
        now: SimTime,
        report: &mut OpReport,
    ) -> Option<Job> {
        let device = match self.resume_device(op.device.as_deref()) {
            Ok(d) => d,
            Err(why) => {
                report.result = OpResult::Failed(format!("failed: {why}"));
                return None;
            }
        };
        let name = self.mm.cfg.devices[device.0 as usize].name.clone();
        report.device = Some(name.clone());
        report.hibernation = Some(HibernationReport { device: name.clone(), ..Default::default() });
        self.frozen = Some(Frozen { was_paused: self.paused, deferred: Vec::new() });
        self.paused = true;
        Some(Job::Hibernate(Box::new(HibTask::new(op, now, self.compress_threads(), device, name))))
    }

    /// Starts a `resume`: takes the image off the disk. `None` when there is none (the
    /// report says so).
    pub(in crate::engine) fn start_resume(
        &mut self,
        boot: SimDuration,
        now: SimTime,
        report: &mut OpReport,
    ) -> Option<Job> {
        let Some(image) = self.image.take() else {
            report.result = OpResult::Failed("failed: no hibernation image".into());
            return None;
        };
        let name = self.mm.cfg.devices[image.device.0 as usize].name.clone();
        let threads = self.compress_threads();
        let hr = HibernationReport {
            device: name.clone(),
            image_pages: image.pages,
            image_bytes: image.bytes,
            image_slots: image.slots.len() as u64,
            cpu_s: SimDuration(image.decompress_ns / threads).as_secs_f64(),
            ..Default::default()
        };
        report.device = Some(name);
        report.hibernation = Some(hr.clone());
        Some(Job::Resume(Box::new(ResumeTask {
            phase: ResumePhase::Boot,
            image,
            boot,
            io_start: now,
            next: 0,
            window: CMP_MIN_RD_PAGES,
            threads,
            report: hr,
        })))
    }

    /// Why an operation other than `resume` cannot run now, if the machine is off.
    pub(in crate::engine) fn hibernated_refusal(&self, op: &str) -> Option<String> {
        self.image
            .as_ref()
            .map(|_| format!("failed: the machine is hibernated: {op} cannot run before resume"))
    }

    /// `hibernate.c`'s resume device: the named one, else the active swap device with the
    /// highest priority.
    fn resume_device(&self, name: Option<&str>) -> Result<DeviceId, String> {
        let devices = &self.mm.swap.devices;
        let dev = match name {
            Some(n) => {
                let d = self.device_id(n).ok_or_else(|| format!("no swap device named \"{n}\""))?;
                if !self.mm.swap.writeok(d) {
                    return Err(format!("\"{n}\" is not an active swap device"));
                }
                d
            }
            None => {
                let best = (0..devices.len())
                    .filter(|&d| self.mm.swap.writeok(DeviceId(d as u8)))
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

    /// One unit of a hibernate task's work.
    pub(in crate::engine) fn hibernate_step(&mut self, t: TaskId, h: &mut HibTask) -> JobStep {
        match h.phase {
            HibPhase::Freeze => {
                self.mm.spend(self.mm.cfg.hibernation.freeze_ms * 1_000_000);
                self.preallocate(h);
                JobStep::Continue
            }
            HibPhase::Shrink => self.shrink_step(t, h),
            HibPhase::Drain => self.drain_step(h),
            HibPhase::Write => self.write_step(t, h),
            HibPhase::WriteWait => {
                if self.mm.image_inflight() > 0 {
                    return JobStep::Wait(Wait::AnyIo);
                }
                h.report.image_io_s = self.mm.now().since(h.io_start).as_secs_f64();
                // The image is on disk and the machine goes off: only resume may run now.
                let empty = Image::new(h.image.device);
                self.image = Some(std::mem::replace(&mut h.image, empty));
                h.phase = HibPhase::PowerOff;
                JobStep::Continue
            }
            HibPhase::PowerOff => {
                self.mm.spend(self.mm.cfg.hibernation.poweroff_ms * 1_000_000);
                JobStep::Finished(Finish::Completed)
            }
        }
    }

    /// One unit of a resume task's work.
    pub(in crate::engine) fn resume_step(&mut self, t: TaskId, r: &mut ResumeTask) -> JobStep {
        match r.phase {
            ResumePhase::Boot => {
                self.mm.spend(r.boot.0);
                r.phase = ResumePhase::Read;
                JobStep::Continue
            }
            ResumePhase::Read => self.read_step(t, r),
            ResumePhase::ReadWait => {
                if self.mm.image_inflight() > 0 {
                    return JobStep::Wait(Wait::AnyIo);
                }
                self.finish_resume(r);
                JobStep::Finished(Finish::Completed)
            }
        }
    }

    /// `hibernate_preallocate_memory`, steps 1 to 5: the target, and whether to shrink.
    fn preallocate(&mut self, h: &mut HibTask) {
        let count = self.ram_pages();
        let saveable = self.saveable();
        // Two memory bitmaps (`memory_bm_create` for orig_bm and copy_bm): one bit per page.
        let size = 2 * count.div_ceil(PAGE_SIZE * 8);
        let max_size = (count.saturating_sub(size + PAGES_FOR_IO) / 2).saturating_sub(2 * RESERVED_PAGES);
        let wanted = h.op.image_size.unwrap_or(count * 2 / 5);
        let mut target = wanted.min(max_size);
        if target < saveable {
            let sizes = self.lru.sizes();
            let reclaimable = sizes.inactive_anon + sizes.active_anon;
            let minimum = saveable.saturating_sub(reclaimable);
            target = target.max(minimum);
        }
        h.target = target;
        h.max_size = max_size;
        h.shrink_start = self.mm.now();
        h.phase = HibPhase::Shrink;
        h.report.target_pages = target;
    }

    /// `shrink_all_memory(saveable - target)`, one paced pass per step
    /// ([`World::shrink_pass`], shared with mm-reclaim-run, swap-out-all and lowering
    /// `memory.max`), until the image fits or `MAX_RECLAIM_RETRIES` sweeps in a row free
    /// and write nothing.
    fn shrink_step(&mut self, t: TaskId, h: &mut HibTask) -> JobStep {
        let saveable = self.saveable();
        if saveable <= h.target {
            h.phase = HibPhase::Drain;
            return JobStep::Continue;
        }
        let (freed, next) = self.shrink_pass(t, &mut h.shrink, saveable - h.target);
        h.report.reclaimed_pages += freed;
        match next {
            Some(step) => step,
            None => {
                h.phase = HibPhase::Drain;
                JobStep::Continue
            }
        }
    }

    /// Before the snapshot every I/O in flight completes (the freezer and `dpm_suspend`
    /// quiesce the block layer); then the image is fixed, checked against the resume
    /// device, and the write begins.
    fn drain_step(&mut self, h: &mut HibTask) -> JobStep {
        if self.mm.block.live_frames().next().is_some() {
            return JobStep::Wait(Wait::AnyIo);
        }
        let saveable = self.saveable();
        h.drained = true;
        h.report.shrink_s = self.mm.now().since(h.shrink_start).as_secs_f64();
        h.report.image_pages = saveable;
        if saveable > h.max_size {
            return self.fail_hibernate(h, JobFailure::ImageTooLarge { saveable, max_size: h.max_size });
        }
        // swsusp_save: the copy into preallocated frames.
        self.mm.spend(saveable * COPY_NS);
        let compress = h.op.compress;
        let (data_bytes, compress_ns, decompress_ns) = self.image_contents(compress);
        let data_slots = data_bytes.div_ceil(PAGE_SIZE);
        // The swap map pages, and the `swsusp_info` header.
        let total_slots = data_slots + data_slots.div_ceil(MAP_PAGE_ENTRIES) + 1;
        let image_bytes = data_bytes + (total_slots - data_slots) * PAGE_SIZE;
        let device = h.image.device;
        let dev = &self.mm.swap.devices[device.0 as usize];
        let free = u64::from(dev.pages() - dev.inuse());
        let needed = if compress { total_slots } else { saveable + PAGES_FOR_IO + 1 };
        if free < needed {
            let image_slots = if compress { total_slots } else { saveable };
            let why = JobFailure::ImageDoesNotFit { saveable, device, free, needed, image_slots, compress };
            return self.fail_hibernate(h, why);
        }
        h.image.pages = saveable;
        h.image.bytes = image_bytes;
        h.image.decompress_ns = decompress_ns;
        h.image.fingerprint = self.fingerprint(0);
        h.report.image_bytes = image_bytes;
        h.report.image_slots = total_slots;
        h.report.cpu_s = SimDuration(compress_ns / h.threads).as_secs_f64();
        h.total_slots = total_slots;
        h.cpu_ns = compress_ns;
        h.io_start = self.mm.now();
        h.phase = HibPhase::Write;
        JobStep::Continue
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
    fn write_step(&mut self, t: TaskId, h: &mut HibTask) -> JobStep {
        if self.mm.image_inflight() >= WRITE_INFLIGHT {
            return JobStep::Wait(Wait::AnyIo);
        }
        let (owner, device) = (self.tasks[t].owner, h.image.device);
        let HibTask { next, total_slots, cpu_ns, threads, .. } = *h;
        let n = WRITE_BATCH.min(total_slots - next);
        // The threads compress the batch before it is written.
        self.mm.spend(cpu_ns * n / total_slots.max(1) / threads);
        self.mm.start_plug(owner);
        for _ in 0..n {
            let Some(slot) = self.mm.swap.alloc_hibernation_slot(device) else {
                // Free slots the allocator cannot reach (another CPU's current cluster):
                // the kernel's write fails with -ENOSPC here too.
                self.mm.finish_plug(owner);
                let written = h.image.slots.len() as u64;
                return self
                    .fail_hibernate(h, JobFailure::SwapRanOut { device, written, total: total_slots });
            };
            h.image.slots.push(slot);
            self.mm.submit_image_bio(
                owner,
                Bio { device, dir: IoDir::Write, offset: slot.offset, pfn: IMAGE_PFN },
            );
        }
        self.mm.finish_plug(owner);
        h.next += n;
        if h.next == total_slots {
            h.phase = HibPhase::WriteWait;
        }
        JobStep::Continue
    }

    /// `load_compressed_image` / `load_image`: read the image ahead in windows of
    /// `CMP_MIN_RD_PAGES` growing to `CMP_MAX_RD_PAGES`, decompressing as it arrives.
    fn read_step(&mut self, t: TaskId, r: &mut ResumeTask) -> JobStep {
        if self.mm.image_inflight() > r.window / 2 {
            return JobStep::Wait(Wait::AnyIo);
        }
        let owner = self.tasks[t].owner;
        let total_slots = r.image.slots.len() as u64;
        let n = (r.window - self.mm.image_inflight()).min(total_slots - r.next);
        let device = r.image.device;
        self.mm.start_plug(owner);
        for &slot in &r.image.slots[r.next as usize..(r.next + n) as usize] {
            self.mm.submit_image_bio(
                owner,
                Bio { device, dir: IoDir::Read, offset: slot.offset, pfn: IMAGE_PFN },
            );
        }
        self.mm.finish_plug(owner);
        // Decompression of what the previous windows brought in overlaps this read.
        self.mm.spend(r.image.decompress_ns * n / total_slots.max(1) / r.threads);
        r.next += n;
        r.window = CMP_MAX_RD_PAGES;
        if r.next == total_slots {
            r.phase = ResumePhase::ReadWait;
        }
        JobStep::Continue
    }

    /// The image is back: check that memory is as it was, free the image slots and thaw.
    fn finish_resume(&mut self, r: &mut ResumeTask) {
        r.report.image_io_s = self.mm.now().since(r.io_start).as_secs_f64();
        let fingerprint = self.fingerprint(r.image.slots.len() as u64);
        assert_eq!(fingerprint, r.image.fingerprint, "memory changed while the machine was hibernated");
        self.free_image(&r.image);
        self.thaw();
    }

    /// The hibernation failed after the freeze: free the image slots written so far and
    /// thaw.
    fn fail_hibernate(&mut self, h: &mut HibTask, why: JobFailure) -> JobStep {
        self.free_image(&h.image);
        self.thaw();
        JobStep::Finished(Finish::Failed(why))
    }

    /// Gives the image's slots back to the swap device.
    fn free_image(&mut self, image: &Image) {
        for &slot in &image.slots {
            self.mm.swap.free_hibernation_slot(slot);
        }
    }

    /// Thaws the tasks (unless they were paused before) and lets kswapd and zswap's
    /// worker run again.
    fn thaw(&mut self) {
        let frozen = self.frozen.take().unwrap_or_default();
        let now = self.mm.now().max(self.mm.queue.now());
        for ev in frozen.deferred {
            match ev {
                crate::event::Event::ZswapShrink => self.zswap_worker_schedule(now),
                ev => self.schedule(now, ev),
            }
        }
        self.paused = frozen.was_paused;
        if !self.paused {
            self.kick_user_cpus(now);
        }
    }

    /// A digest of what a resume must find as it was at the snapshot: every PTE, the
    /// frames in use, the LRU sizes, memcg usage and the swap slots besides the image's
    /// `image` slots.
    pub(in crate::engine) fn fingerprint(&self, image: u64) -> u64 {
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
        for word in
            [sizes.inactive_anon, sizes.active_anon, self.mm.memcg_usage(), self.mm.swap.used_slots() - image]
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
