//! The work of kernel tasks: the state of each long timeline operation, owned by the task
//! that runs it (`TaskKind::Kernel`), and what a step of it can end in. Plain data with
//! constructors; the steps live in `ops/`, one file per family. A leaf of the engine.
//!
//! A running operation's state is in one place, its job: how far a swapoff has walked,
//! how much an `mm_reclaim/run` has freed, where a hibernation stands and the image it is
//! writing. The operation's report is filled from the job when it ends, or when the run
//! ends first ([`Job::fill_report`]). What outlives the job is machine state and lives in
//! the world: a hibernation image on disk while the machine is off, and the frozen tasks.

use crate::ids::{DeviceId, SpaceId, SwapSlot};
use crate::mm::vmscan::DEF_PRIORITY;
use crate::time::{SimDuration, SimTime};
use crate::timeline::{HibernateOp, HibernationReport, OpReport};

/// What a kernel task works on. Each kind's state is boxed, so that taking the job out of
/// its task for a step (and putting it back) moves a pointer, not the state.
#[derive(Clone, Debug)]
pub(crate) enum Job {
    /// `try_to_unuse`: swapoff, or `mm_reclaim/release`.
    Swapoff(Box<SwapoffState>),
    /// Reclaim until memcg usage is at most `goal` pages (lowering `memory.max`), or
    /// everything that can go (swap-out-all).
    Reclaim(Box<ReclaimGoal>),
    /// `/sys/power/mm_reclaim/run`.
    MmReclaim(Box<MmReclaim>),
    /// Hibernate (freeze, shrink, write the image, power off).
    Hibernate(Box<HibTask>),
    /// Resume from the image.
    Resume(Box<ResumeTask>),
    /// Nothing left to do: the job is over, or out being stepped.
    Done,
}

impl Job {
    /// Writes what the job has done so far into its operation's report.
    pub(crate) fn fill_report(&self, report: &mut OpReport) {
        match self {
            Job::Swapoff(s) if !s.disable => report.released_pages = Some(s.released),
            Job::MmReclaim(m) => {
                report.reclaimed_pages = Some(m.reclaimed);
                report.stopped_by = m.stopped_by.map(str::to_string);
            }
            Job::Hibernate(h) => {
                let mut figures = h.report.clone();
                if h.drained {
                    report.reclaimed_pages = Some(figures.reclaimed_pages);
                } else {
                    // What the shrink has freed is reported once it is over.
                    figures.reclaimed_pages = 0;
                }
                report.hibernation = Some(figures);
            }
            Job::Resume(r) => report.hibernation = Some(r.report.clone()),
            Job::Swapoff(_) | Job::Reclaim(_) | Job::Done => {}
        }
    }
}

/// How a step of a job went.
#[derive(Clone, Debug)]
pub(crate) enum JobStep {
    /// More to do: the task runs again.
    Continue,
    /// The task sleeps until what it waits for completes.
    Wait(super::wait::Wait),
    /// The job is over, with this result.
    Finished(Finish),
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Finish {
    /// It did what it was asked, when its task's clock says.
    Completed,
    /// It did what it was asked, at this instant rather than its task's clock (a timeout
    /// closes the report at its deadline).
    CompletedAt(SimTime),
    /// It failed.
    Failed(JobFailure),
}

/// Why a job failed; the report's result says it in words ([`JobFailure::describe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobFailure {
    /// Swapoff or a release found no memory for a page (the kernel's -ENOMEM).
    OutOfMemory,
    /// Hibernation: more saveable pages after the shrink than fit beside their copy.
    ImageTooLarge { saveable: u64, max_size: u64 },
    /// Hibernation: the image does not fit in the resume device's free slots.
    ImageDoesNotFit {
        saveable: u64,
        device: DeviceId,
        free: u64,
        needed: u64,
        image_slots: u64,
        compress: bool,
    },
    /// Hibernation: the allocator ran out of slots it could reach while writing.
    SwapRanOut { device: DeviceId, written: u64, total: u64 },
}

impl JobFailure {
    /// The report's result: "failed: " and why, naming devices by `device_name`.
    pub(crate) fn describe(self, device_name: impl Fn(DeviceId) -> String) -> String {
        match self {
            JobFailure::OutOfMemory => "failed: out of memory".into(),
            JobFailure::ImageTooLarge { saveable, max_size } => format!(
                "failed: not enough memory for the image: {saveable} saveable pages after shrinking, \
                 at most {max_size} fit beside their copy"
            ),
            JobFailure::ImageDoesNotFit { saveable, device, free, needed, image_slots, compress } => format!(
                "failed: image of {saveable} pages does not fit: {free} free swap slots on \"{}\" \
                 (needs {needed}: {image_slots} image slots{})",
                device_name(device),
                if compress { "" } else { " plus PAGES_FOR_IO 1024, and one more" },
            ),
            JobFailure::SwapRanOut { device, written, total } => format!(
                "failed: swap on \"{}\" ran out after {written} of {total} image slots",
                device_name(device)
            ),
        }
    }
}

/// Where a swapoff walk is.
#[derive(Clone, Debug)]
pub(crate) struct SwapoffState {
    pub(crate) device: DeviceId,
    pub(crate) space: SpaceId,
    pub(crate) region_idx: usize,
    pub(crate) vpage: u64,
    /// Walk finished: drop the remaining swap-cache-only slots.
    pub(crate) sweeping: bool,
    /// PTEs still to restore before stopping (`mm_reclaim/release`); `None`: all.
    pub(crate) budget: Option<u64>,
    /// PTEs restored so far (reported by `mm_reclaim/release`).
    pub(crate) released: u64,
    /// Swapoff proper: the device is off and the walk repeats until it is empty. Without
    /// it (`mm_reclaim/release`) the device stays on and each device is walked once.
    pub(crate) disable: bool,
    /// Devices to walk after this one, in order (`mm_reclaim/release`).
    pub(crate) then: Vec<DeviceId>,
}

impl SwapoffState {
    /// Swapoff of `device`: walk every address space until the device is empty.
    pub(crate) fn swapoff(device: DeviceId) -> SwapoffState {
        SwapoffState::walk(device, None, true, Vec::new())
    }

    /// `mm_reclaim/release`: restore up to `budget` PTEs (`None`: all) from `device`,
    /// then from each of `then` in turn, leaving the devices on.
    pub(crate) fn release(device: DeviceId, budget: Option<u64>, then: Vec<DeviceId>) -> SwapoffState {
        SwapoffState::walk(device, budget, false, then)
    }

    fn walk(device: DeviceId, budget: Option<u64>, disable: bool, then: Vec<DeviceId>) -> SwapoffState {
        SwapoffState {
            device,
            space: SpaceId(0),
            region_idx: 0,
            vpage: 0,
            sweeping: false,
            budget,
            released: 0,
            disable,
            then,
        }
    }

    /// Back to the first PTE of the first address space.
    pub(crate) fn restart(&mut self) {
        (self.space, self.region_idx, self.vpage) = (SpaceId(0), 0, 0);
    }
}

/// Reclaim until memcg usage is at most `goal` pages, or (no goal) everything that can go.
#[derive(Clone, Debug)]
pub(crate) struct ReclaimGoal {
    pub(crate) goal: Option<u64>,
    /// Where the paced `shrink_all_memory` stands.
    pub(crate) shrink: ShrinkAll,
}

impl ReclaimGoal {
    pub(crate) fn new(goal: Option<u64>) -> ReclaimGoal {
        ReclaimGoal { goal, shrink: ShrinkAll::default() }
    }
}

/// `/sys/power/mm_reclaim/run`: reclaim until `target` pages were freed (0: until nothing
/// more can go) or the clock reaches `deadline`.
#[derive(Clone, Debug)]
pub(crate) struct MmReclaim {
    pub(crate) target: u64,
    /// Pages freed so far.
    pub(crate) reclaimed: u64,
    pub(crate) deadline: Option<SimTime>,
    /// Where the paced `shrink_all_memory` stands.
    pub(crate) shrink: ShrinkAll,
    /// Why it stopped: "target", "exhausted" or "timeout".
    pub(crate) stopped_by: Option<&'static str>,
}

impl MmReclaim {
    pub(crate) fn new(target: u64, deadline: Option<SimTime>) -> MmReclaim {
        MmReclaim { target, reclaimed: 0, deadline, shrink: ShrinkAll::default(), stopped_by: None }
    }
}

/// Where a paced `shrink_all_memory` stands between passes (`World::shrink_pass`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShrinkAll {
    /// The next pass's reclaim priority.
    pub(crate) priority: u32,
    /// Age the active list whatever the statistics say (after a fruitless sweep).
    pub(crate) force_deactivate: bool,
    /// Pages scanned by passes in a row that only aged pages.
    pub(crate) aging_scanned: u64,
    /// Sweeps down to priority 0 in a row that freed and wrote nothing.
    pub(crate) fruitless: u32,
}

impl Default for ShrinkAll {
    fn default() -> Self {
        ShrinkAll { priority: DEF_PRIORITY, force_deactivate: false, aging_scanned: 0, fruitless: 0 }
    }
}

/// A hibernation image: where it is, what it holds, and the memory it must find again.
#[derive(Clone, Debug)]
pub(crate) struct Image {
    /// The resume device.
    pub(crate) device: DeviceId,
    /// Swap slots holding the image, in write order; held until resume frees them.
    pub(crate) slots: Vec<SwapSlot>,
    /// Saveable pages in the image (uncompressed).
    pub(crate) pages: u64,
    /// Image bytes on the device (compressed if compressing), map pages included.
    pub(crate) bytes: u64,
    /// Decompression CPU of the whole image, in ns (one thread).
    pub(crate) decompress_ns: u64,
    /// Fingerprint of memory at the snapshot, checked by resume and the invariants (0
    /// before the snapshot).
    pub(crate) fingerprint: u64,
}

impl Image {
    /// An image on `device` with nothing in it yet.
    pub(crate) fn new(device: DeviceId) -> Image {
        Image { device, slots: Vec::new(), pages: 0, bytes: 0, decompress_ns: 0, fingerprint: 0 }
    }
}

/// The tasks frozen by a hibernation, from the freeze until the thaw.
#[derive(Clone, Debug, Default)]
pub(crate) struct Frozen {
    /// Tasks were paused before the freeze: the thaw leaves them paused.
    pub(crate) was_paused: bool,
    /// kswapd and zswap-worker events that came while frozen, rescheduled at the thaw.
    pub(crate) deferred: Vec<crate::event::Event>,
}

/// Where a hibernate task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HibPhase {
    Freeze,
    Shrink,
    Drain,
    Write,
    WriteWait,
    PowerOff,
}

/// The state of a hibernate task.
#[derive(Clone, Debug)]
pub(crate) struct HibTask {
    pub(crate) phase: HibPhase,
    pub(crate) op: HibernateOp,
    /// The image target in pages.
    pub(crate) target: u64,
    /// `max_size` of `hibernate_preallocate_memory`.
    pub(crate) max_size: u64,
    /// Where the shrink stands.
    pub(crate) shrink: ShrinkAll,
    /// The shrink is over and the image is fixed: the pages it reclaimed are reported.
    pub(crate) drained: bool,
    pub(crate) shrink_start: SimTime,
    pub(crate) io_start: SimTime,
    /// The image: its device from the start, its contents from the snapshot on, its
    /// slots as they are written.
    pub(crate) image: Image,
    /// Image slots to write, and written so far.
    pub(crate) total_slots: u64,
    pub(crate) next: u64,
    /// Compression CPU of the whole image, in ns (one thread).
    pub(crate) cpu_ns: u64,
    pub(crate) threads: u64,
    /// The figures the report shows.
    pub(crate) report: HibernationReport,
}

impl HibTask {
    /// A hibernation to `device` (named `device_name`), started at `now`.
    pub(crate) fn new(
        op: HibernateOp,
        now: SimTime,
        threads: u64,
        device: DeviceId,
        device_name: String,
    ) -> HibTask {
        HibTask {
            phase: HibPhase::Freeze,
            op,
            target: 0,
            max_size: 0,
            shrink: ShrinkAll::default(),
            drained: false,
            shrink_start: now,
            io_start: now,
            image: Image::new(device),
            total_slots: 0,
            next: 0,
            cpu_ns: 0,
            threads,
            report: HibernationReport { device: device_name, ..Default::default() },
        }
    }
}

/// Where a resume task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResumePhase {
    Boot,
    Read,
    ReadWait,
}

/// The state of a resume task: the image it reads back.
#[derive(Clone, Debug)]
pub(crate) struct ResumeTask {
    pub(crate) phase: ResumePhase,
    pub(crate) image: Image,
    /// Resume's boot time before the image is read.
    pub(crate) boot: SimDuration,
    pub(crate) io_start: SimTime,
    /// Image slots read so far.
    pub(crate) next: u64,
    /// The readahead window.
    pub(crate) window: u64,
    pub(crate) threads: u64,
    /// The figures the report shows.
    pub(crate) report: HibernationReport,
}
