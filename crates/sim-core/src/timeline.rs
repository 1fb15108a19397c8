//! Scenario timelines: operations applied while a run is in progress.
//!
//! A timeline is a list of operations carried out one after another. Each waits for its
//! trigger (a simulated time, the end of the workload, or simply the end of the previous
//! operation) and for the previous operation to finish. Operations that take time
//! (swapoff, reclaiming memory) run as kernel tasks on CPUs of their own; the others take
//! effect at once. Policies are built by the caller, so that the core never depends on a
//! concrete policy.

use crate::ids::TaskId;
use crate::policy::readahead::Readahead;
use crate::stats::{BlockTotals, Vmstat};
use crate::time::{SimDuration, SimTime};
use serde::Serialize;

/// When an operation may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// As soon as the previous operation finished (at the start of the run for the first).
    AfterPrevious,
    /// At this simulated time, or when the previous operation finished if later.
    At(SimTime),
    /// When every task has replayed its whole stream (or was killed).
    WorkloadEnd,
    /// When task `task` (its index in the setup) has completed `accesses` accesses: a
    /// point inside the workload, such as the end of a fill.
    AfterAccesses {
        /// The task: its index in [`crate::Setup::tasks`].
        task: TaskId,
        /// Completed accesses of that task.
        accesses: u64,
    },
}

/// What an operation does.
#[derive(Clone, Debug)]
pub enum Operation {
    /// `swapoff`: bring every page on the device back into memory (`try_to_unuse`), then
    /// stop using the device.
    Swapoff {
        /// Device name as in the scenario.
        device: String,
    },
    /// `swapon` of a device that was swapped off.
    Swapon {
        /// Device name as in the scenario.
        device: String,
    },
    /// Set `vm.page-cluster`.
    SetPageCluster(u32),
    /// Replace the swap-in readahead policy (built by the caller).
    SetReadahead(Box<dyn Readahead>),
    /// Set or remove (`None`) the memory cgroup limit, in pages. Lowering it reclaims down
    /// to the new limit in the writer's context, as writing `memory.max` does.
    SetMemcgLimit(Option<u64>),
    /// Stop scheduling the tasks (they keep their memory).
    PauseTasks,
    /// Resume paused tasks.
    ResumeTasks,
    /// Push every anonymous page out to swap, the state a guest is in after hibernation
    /// and resume (`shrink_all_memory` until nothing more can go).
    SwapOutAll,
    /// Hibernate (suspend to disk): freeze the tasks, shrink memory until the image fits,
    /// write the image to a swap device and power the machine off. Nothing runs until a
    /// [`Operation::Resume`].
    Hibernate(HibernateOp),
    /// Resume from the hibernation image: boot, read the image back, restore memory
    /// exactly as it was, thaw the tasks. Pages swapped out before hibernation stay in
    /// swap and come back by faults.
    Resume {
        /// Time from power-on until the boot kernel starts reading the image.
        boot: SimDuration,
    },
    /// `/sys/power/mm_reclaim/run` (the opportunistic-reclaim RFC): reclaim `pages`
    /// pages with `shrink_all_memory` in a loop (0 = as many as possible), stopping early
    /// when a round reclaims nothing or the timeout expires.
    MmReclaimRun {
        /// Pages to reclaim; 0 = as many as possible.
        pages: u64,
        /// Stop after this long, as a signal to the writer would.
        timeout: Option<SimDuration>,
    },
    /// `/sys/power/mm_reclaim/release` (same RFC): swap `pages` pages back in (0 = all)
    /// from every swap device with the partial `try_to_unuse`, readahead included,
    /// leaving the devices on.
    MmReclaimRelease {
        /// Pages to bring back; 0 = all.
        pages: u64,
    },
    /// Does nothing; its report records when its trigger fired and the counters up to then.
    Mark(String),
}

/// The settings of a [`Operation::Hibernate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HibernateOp {
    /// `/sys/power/image_size` in pages; `None` = the kernel's default, 2/5 of RAM;
    /// 0 = as small as possible.
    pub image_size: Option<u64>,
    /// Compress the image (the kernel's default, LZO); `false` = `hibernate=nocompress`.
    pub compress: bool,
    /// The resume device by name; `None` = the swap device with the highest priority.
    pub device: Option<String>,
}

impl Operation {
    /// Stable name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Swapoff { .. } => "swapoff",
            Operation::Swapon { .. } => "swapon",
            Operation::SetPageCluster(_) => "set-page-cluster",
            Operation::SetReadahead(_) => "set-readahead",
            Operation::SetMemcgLimit(_) => "set-memcg-limit",
            Operation::PauseTasks => "pause-tasks",
            Operation::ResumeTasks => "resume-tasks",
            Operation::SwapOutAll => "swap-out-all",
            Operation::Hibernate(_) => "hibernate",
            Operation::Resume { .. } => "resume",
            Operation::MmReclaimRun { .. } => "mm-reclaim-run",
            Operation::MmReclaimRelease { .. } => "mm-reclaim-release",
            Operation::Mark(_) => "mark",
        }
    }
}

/// One timeline entry.
#[derive(Clone, Debug)]
pub struct TimelineOp {
    /// When it may start.
    pub trigger: Trigger,
    /// What it does.
    pub op: Operation,
}

/// What an operation did, for the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpReport {
    /// Operation name (see [`Operation::name`]).
    pub op: String,
    /// Device, for swapoff and swapon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Simulated time it started, in seconds.
    pub start_s: f64,
    /// Simulated time it finished, in seconds (absent if the run ended first).
    pub end_s: Option<f64>,
    /// `end_s - start_s`.
    pub duration_s: Option<f64>,
    /// How it ended: completed, still running when the run ended, or failed (and why).
    pub result: OpResult,
    /// Pages read from swap while it ran.
    pub pswpin: u64,
    /// Pages written to swap while it ran.
    pub pswpout: u64,
    /// Readahead pages read while it ran.
    pub swap_ra: u64,
    /// Readahead hits credited while it ran.
    pub swap_ra_hit: u64,
    /// Read requests completed, over all devices, while it ran.
    pub read_requests: u64,
    /// KiB read, over all devices, while it ran.
    pub read_kib: u64,
    /// Write requests completed, over all devices, while it ran.
    pub write_requests: u64,
    /// Every counter's change while it ran.
    pub vmstat: Vmstat,
    /// Block figures over all devices while it ran.
    pub block: BlockTotals,
    /// The label of a `mark`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Pages reclaimed (hibernate's shrink, mm-reclaim-run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reclaimed_pages: Option<u64>,
    /// Pages brought back from swap (mm-reclaim-release).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_pages: Option<u64>,
    /// Why an mm-reclaim operation stopped: "target", "exhausted" or "timeout".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// Image figures of a hibernate or resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hibernation: Option<HibernationReport>,
}

/// How a timeline operation ended. In reports it reads as one string: "completed",
/// "running", or the reason it failed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum OpResult {
    /// It did what it was asked.
    #[default]
    Completed,
    /// The run ended before it finished.
    Running,
    /// It failed, for this reason (for example `no swap device named "vdb"`, or
    /// `failed: out of memory` for a swapoff that ran out of memory and stopped).
    Failed(String),
}

impl OpResult {
    /// The result as reports print it.
    pub fn as_str(&self) -> &str {
        match self {
            OpResult::Completed => "completed",
            OpResult::Running => "running",
            OpResult::Failed(why) => why,
        }
    }

    /// Whether the operation failed.
    pub fn is_failure(&self) -> bool {
        matches!(self, OpResult::Failed(_))
    }
}

impl std::fmt::Display for OpResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for OpResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What a hibernate or resume did with the image. Image I/O is not swap I/O: it is not in
/// `pswpin`/`pswpout`, only here and in the block figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HibernationReport {
    /// The resume device.
    pub device: String,
    /// The image target in pages (`image_size` capped as the kernel caps it).
    pub target_pages: u64,
    /// Pages in the image (saveable pages after the shrink).
    pub image_pages: u64,
    /// Bytes written to or read from the device for the image (compressed if compression
    /// is on), map pages included.
    pub image_bytes: u64,
    /// Swap slots the image takes on the device: its data pages, one swap-map page per
    /// 511 of them, and the header page (hibernate only).
    pub image_slots: u64,
    /// Pages reclaimed to make the image fit (hibernate only).
    pub reclaimed_pages: u64,
    /// Time spent shrinking memory, in seconds (hibernate only).
    pub shrink_s: f64,
    /// Time spent writing (hibernate) or booting and reading (resume) the image, in seconds.
    pub image_io_s: f64,
    /// CPU time of compressing (hibernate) or decompressing (resume) the image, divided
    /// among the `clamp(cpus - 1, 1, 3)` threads, in seconds; it overlaps the image I/O.
    pub cpu_s: f64,
}
