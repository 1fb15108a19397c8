//! What the engine schedules: tasks (user access streams and the kernel work the timeline
//! starts) and CPUs. A leaf of the engine: the scheduler, the fault path and the timeline
//! operations all name these types, and they name none of those.

use super::Wait;
use crate::error::TraceError;
use crate::ids::DeviceId;
use crate::mm::pagetable::PageId;
use crate::time::{SimDuration, SimTime};
use crate::workload::{Access, AccessSource, TaskStart};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    /// Not started yet: waiting for its [`TaskStart`] condition. On no run queue.
    Waiting,
    Runnable,
    Blocked,
    Done,
    Killed,
}

pub(crate) struct Task {
    pub(crate) name: String,
    pub(crate) kind: TaskKind,
    pub(crate) space: usize,
    pub(crate) cpu: usize,
    /// Plug owner index in the block layer.
    pub(crate) owner: usize,
    pub(crate) source: Box<dyn AccessSource>,
    /// Accesses taken from `source` ahead of the one being simulated, ending with the
    /// stream's end or error once the source gave it (see `Simulation::next_access`).
    pub(crate) ahead: VecDeque<Ahead>,
    /// The next use of the access being simulated (`AccessSource::next_use`), when the LRU
    /// wants next uses.
    pub(crate) next_use: Option<u64>,
    /// An access to retry after a wait.
    pub(crate) retry: Option<Access>,
    pub(crate) state: TaskState,
    pub(crate) wait: Option<Wait>,
    pub(crate) clock: SimTime,
    pub(crate) accesses: u64,
    /// Fire the waiting timeline operation when `accesses` reaches this (`u64::MAX`: none).
    pub(crate) checkpoint_at: u64,
    pub(crate) blocked_since: SimTime,
    pub(crate) io_wait: SimDuration,
    /// When it starts (user tasks; kernel tasks start when spawned).
    pub(crate) start: TaskStart,
    /// Its end is its process's exit: the address space is torn down.
    pub(crate) exit_on_end: bool,
    /// When it started; `None` while waiting.
    pub(crate) started_at: Option<SimTime>,
    /// When its end was counted (stream finished or OOM-killed); `None` before.
    pub(crate) ended_at: Option<SimTime>,
}

impl Task {
    /// A copy of the task for a forked simulation ([`crate::Simulation::fork`]), or `None`
    /// when its stream cannot be copied: a live user task whose source does not fork, or
    /// one holding a read error not yet delivered. A task that has ended, and a kernel
    /// task (it reads no stream), takes an empty source.
    pub(crate) fn fork(&self) -> Option<Task> {
        let source: Box<dyn AccessSource> = if self.ended_at.is_some() || !matches!(self.kind, TaskKind::User)
        {
            Box::new(std::iter::empty())
        } else {
            self.source.fork()?
        };
        let ahead = self
            .ahead
            .iter()
            .map(|a| Some(Ahead { next: a.next.as_ref().ok().copied().map(Ok)?, ..*a }))
            .collect::<Option<VecDeque<Ahead>>>()?;
        Some(Task { name: self.name.clone(), kind: self.kind.clone(), source, ahead, ..*self })
    }
}

/// What an access source answers: an access, its end, or an error.
pub(crate) type Next = Result<Option<Access>, TraceError>;

/// An answer of a task's source read ahead of the access being simulated.
#[derive(Debug)]
pub(crate) struct Ahead {
    pub(crate) next: Next,
    /// Its next use, when the LRU wants next uses.
    pub(crate) next_use: Option<u64>,
    /// The access's page, when it existed as it was read: its PTE was prefetched then.
    pub(crate) page: Option<PageId>,
}

/// What a task runs: a user access stream, or kernel work started by the timeline.
#[derive(Clone, Debug)]
pub(crate) enum TaskKind {
    User,
    Swapoff(SwapoffState),
    /// Reclaim until memcg usage is at most `goal` pages, or everything that can go.
    Reclaim {
        goal: Option<u64>,
        /// Where the paced `shrink_all_memory` stands.
        shrink: super::ops::ShrinkAll,
    },
    /// `/sys/power/mm_reclaim/run`: reclaim until `target` pages were freed (0: until
    /// nothing more can go) or the clock reaches `deadline`.
    MmReclaim {
        target: u64,
        /// Pages freed so far.
        reclaimed: u64,
        deadline: Option<SimTime>,
        /// Where the paced `shrink_all_memory` stands.
        shrink: super::ops::ShrinkAll,
    },
    /// Hibernate (freeze, shrink, write the image, power off) or resume from the image.
    Hibernate(Box<super::ops::HibTask>),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Cpu {
    pub(crate) current: Option<usize>,
    pub(crate) runq: std::collections::VecDeque<usize>,
    /// A `CpuRun` event for this CPU is pending.
    pub(crate) scheduled: bool,
    pub(crate) last: Option<usize>,
    /// User tasks placed on this CPU that have started and not ended: what a new task's
    /// placement compares.
    pub(crate) live_users: u32,
}

/// Where a swapoff walk is.
#[derive(Clone, Debug)]
pub(crate) struct SwapoffState {
    pub(crate) device: DeviceId,
    pub(crate) space: usize,
    pub(crate) region_idx: usize,
    pub(crate) vpage: u64,
    /// Walk finished: drop the remaining swap-cache-only slots.
    pub(crate) sweeping: bool,
    /// PTEs still to restore before stopping (`mm_reclaim/release`); `None`: all.
    pub(crate) budget: Option<u64>,
    /// Swapoff proper: the device is off and the walk repeats until it is empty. Without
    /// it (`mm_reclaim/release`) the device stays on and each device is walked once.
    pub(crate) disable: bool,
    /// Devices to walk after this one, in order (`mm_reclaim/release`).
    pub(crate) then: Vec<DeviceId>,
}
