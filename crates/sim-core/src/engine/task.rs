//! What the engine schedules: tasks (user access streams and the kernel work the timeline
//! starts) and CPUs. Below the scheduler, the fault path and the timeline operations: it
//! names only the leaves `wait` and `job`.

use super::job::Job;
use super::wait::{PendingFault, Wait};
use crate::block::PlugOwner;
use crate::ids::{CpuId, Pfn, SpaceId, TaskId};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Access, TaskStart};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    /// Not started yet: waiting for its [`TaskStart`] condition. On no run queue.
    Waiting,
    /// Its start condition held; it waits out its start delay (an `Event::Start` is due).
    /// On no run queue.
    Starting,
    Runnable,
    Blocked,
    Done,
    Killed,
}

/// A task's scheduling state and counts. Its access stream, which may not be copyable,
/// lives apart, in the simulation's streams (`super::stream`), so that the rest of the
/// world is a plain clone.
#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub(crate) name: String,
    pub(crate) kind: TaskKind,
    /// The address space it runs in (user tasks; a kernel task's is never read).
    pub(crate) space: SpaceId,
    pub(crate) cpu: CpuId,
    /// Its submitting context in the block layer.
    pub(crate) owner: PlugOwner,
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
    /// CPU work done on the task's behalf while it was off its CPU (finishing a swap fault
    /// it slept on, its wake-up, the `exec` that starts it), which occupies the CPU when
    /// the task next runs, before anything else it does.
    pub(crate) owed_cpu: SimDuration,
    /// Its virtual runtime, in nanoseconds: the CPU time it has run, from where it was
    /// placed when it started or last woke (`se->vruntime`, every task of weight 1024).
    pub(crate) vruntime: u64,
    /// Its lag when it last went to sleep (`se->vlag`): how far the average virtual
    /// runtime of its CPU's runnable user tasks was ahead of its own, clamped.
    pub(crate) lag: i64,
    /// When it starts (user tasks; kernel tasks start when spawned).
    pub(crate) start: TaskStart,
    /// Its end is its process's exit: the address space is torn down.
    pub(crate) exit_on_end: bool,
    /// A read of an untouched page creates it (`TaskSpec::reads_create`).
    pub(crate) reads_create: bool,
    /// When it started; `None` while waiting.
    pub(crate) started_at: Option<SimTime>,
    /// When its end was counted (stream finished or OOM-killed); `None` before.
    pub(crate) ended_at: Option<SimTime>,
    /// Once its start condition holds, how long it waits before it runs.
    pub(crate) start_delay: SimDuration,
    /// Its process is started by `exec` when it starts (`TaskSpec::exec`).
    pub(crate) exec: bool,
    /// Page faults, major faults and pages read from swap by its own faults.
    pub(crate) faults: FaultCounts,
}

/// What a task's own faults did, for the per-job report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FaultCounts {
    pub(crate) faults: u64,
    pub(crate) major: u64,
    pub(crate) swapins: u64,
}

impl Task {
    /// User task `name` of address space `space`, on `cpu` with plug `owner`, starting as
    /// `start` says: runnable at time zero, or waiting for its condition.
    pub(crate) fn user(name: String, space: SpaceId, cpu: CpuId, owner: PlugOwner, spec: UserStart) -> Task {
        let at_start = spec.start == TaskStart::AtStart && spec.start_delay == SimDuration::ZERO;
        Task {
            name,
            kind: TaskKind::User,
            space,
            cpu,
            owner,
            next_use: None,
            retry: None,
            state: if at_start { TaskState::Runnable } else { TaskState::Waiting },
            wait: None,
            clock: SimTime::ZERO,
            accesses: 0,
            checkpoint_at: u64::MAX,
            blocked_since: SimTime::ZERO,
            io_wait: SimDuration::ZERO,
            owed_cpu: SimDuration::ZERO,
            vruntime: 0,
            lag: 0,
            start: spec.start,
            exit_on_end: spec.exit_on_end,
            reads_create: spec.reads_create,
            started_at: at_start.then_some(SimTime::ZERO),
            ended_at: None,
            start_delay: spec.start_delay,
            exec: spec.exec,
            faults: FaultCounts::default(),
        }
    }

    /// Kernel task `name` running `job` on `cpu` with plug `owner`, runnable from `now`.
    pub(crate) fn kernel(name: String, job: Job, cpu: CpuId, owner: PlugOwner, now: SimTime) -> Task {
        Task {
            name,
            kind: TaskKind::Kernel(job),
            space: SpaceId(0),
            cpu,
            owner,
            next_use: None,
            retry: None,
            state: TaskState::Runnable,
            wait: None,
            clock: now,
            accesses: 0,
            checkpoint_at: u64::MAX,
            blocked_since: now,
            io_wait: SimDuration::ZERO,
            owed_cpu: SimDuration::ZERO,
            vruntime: 0,
            lag: 0,
            start: TaskStart::AtStart,
            exit_on_end: false,
            reads_create: false,
            started_at: Some(now),
            ended_at: None,
            start_delay: SimDuration::ZERO,
            exec: false,
            faults: FaultCounts::default(),
        }
    }

    /// Whether it replays an access stream (rather than run kernel work).
    #[inline]
    pub(crate) fn is_user(&self) -> bool {
        matches!(self.kind, TaskKind::User)
    }

    /// The swap fault the task sleeps on, when it waits for the read of the folio at `pfn`
    /// (several tasks may: threads faulting on one page, swapoff on a faulted page).
    pub(crate) fn waits_on(&self, pfn: Pfn) -> Option<PendingFault> {
        match self.wait {
            Some(Wait::Frame { pfn: p, fault }) if p == pfn => Some(fault),
            _ => None,
        }
    }
}

/// What a task runs: a user access stream (kept in the simulation's streams), or the job
/// of kernel work the timeline started.
#[derive(Clone, Debug)]
pub(crate) enum TaskKind {
    User,
    Kernel(Job),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Cpu {
    pub(crate) current: Option<TaskId>,
    pub(crate) runq: std::collections::VecDeque<TaskId>,
    /// A `CpuRun` event for this CPU is pending.
    pub(crate) scheduled: bool,
    pub(crate) last: Option<TaskId>,
    /// User tasks placed on this CPU that have started and not ended: what a new task's
    /// placement compares.
    pub(crate) live_users: u32,
    /// When the CPU finished the work of the task it last ran: a task picked after it
    /// starts no earlier.
    pub(crate) busy_until: SimTime,
    /// When the current task's slice began, and when it ends: past its end, a task
    /// waiting on the run queue takes the CPU (`SimTime::MAX` while none waits).
    pub(crate) slice_start: SimTime,
    pub(crate) slice_end: SimTime,
    /// When the current task was put on the CPU (before its context switch).
    pub(crate) run_from: SimTime,
    /// Time the CPU spent running tasks, context switches included.
    pub(crate) busy: SimDuration,
}

/// How a user task starts and ends, from its [`crate::TaskSpec`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct UserStart {
    pub(crate) start: TaskStart,
    pub(crate) start_delay: SimDuration,
    pub(crate) exec: bool,
    pub(crate) exit_on_end: bool,
    pub(crate) reads_create: bool,
}

impl std::ops::Index<TaskId> for Vec<Task> {
    type Output = Task;
    #[inline(always)]
    fn index(&self, t: TaskId) -> &Task {
        &self[t.index()]
    }
}

impl std::ops::IndexMut<TaskId> for Vec<Task> {
    #[inline(always)]
    fn index_mut(&mut self, t: TaskId) -> &mut Task {
        &mut self[t.index()]
    }
}

impl std::ops::Index<CpuId> for Vec<Cpu> {
    type Output = Cpu;
    #[inline(always)]
    fn index(&self, c: CpuId) -> &Cpu {
        &self[c.index()]
    }
}

impl std::ops::IndexMut<CpuId> for Vec<Cpu> {
    #[inline(always)]
    fn index_mut(&mut self, c: CpuId) -> &mut Cpu {
        &mut self[c.index()]
    }
}
