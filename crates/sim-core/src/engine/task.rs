//! What the engine schedules: tasks (user access streams and the kernel work the timeline
//! starts) and CPUs. A leaf of the engine: the scheduler, the fault path and the timeline
//! operations all name these types, and they name none of those.

use super::fault::PendingFault;
use super::Wait;
use crate::error::TraceError;
use crate::ids::{DeviceId, Pfn};
use crate::mm::pagetable::PageId;
use crate::time::{SimDuration, SimTime};
use crate::workload::{Access, AccessSource, TaskStart};

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
    /// Accesses taken from `source` ahead of the one being simulated, then the stream's
    /// end or error once the source gave it (see `Simulation::next_access`).
    pub(crate) ahead: Lookahead,
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
    /// A read of an untouched page creates it (`TaskSpec::reads_create`).
    pub(crate) reads_create: bool,
    /// When it started; `None` while waiting.
    pub(crate) started_at: Option<SimTime>,
    /// When its end was counted (stream finished or OOM-killed); `None` before.
    pub(crate) ended_at: Option<SimTime>,
}

impl Task {
    /// The swap fault the task sleeps on, when it waits for the read of the folio at `pfn`
    /// (several tasks may: threads faulting on one page, swapoff on a faulted page).
    pub(crate) fn waits_on(&self, pfn: Pfn) -> Option<PendingFault> {
        match self.wait {
            Some(Wait::Frame { pfn: p, fault }) if p == pfn => Some(fault),
            _ => None,
        }
    }

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
        let ahead = self.ahead.fork()?;
        Some(Task { name: self.name.clone(), kind: self.kind.clone(), source, ahead, ..*self })
    }
}

/// Accesses a task took from its source and has not simulated yet: `accesses[at..]`,
/// then, once the source gave it, the stream's end or the error that ended it.
///
/// The engine takes them [`Lookahead::BATCH`] at a time, in one call to the source
/// ([`AccessSource::next_accesses`]), and keeps at least `sched::LOOKAHEAD` of them
/// ahead of the one it simulates so that their page-table entries can be loaded early.
#[derive(Debug, Default)]
pub(crate) struct Lookahead {
    pub(crate) accesses: Vec<Access>,
    /// The next use of each access (`AccessSource::next_use`), when the LRU wants next
    /// uses; empty otherwise.
    pub(crate) next_uses: Vec<Option<u64>>,
    /// The page of each access whose PTE was prefetched, when the page existed then.
    pub(crate) pages: Vec<Option<PageId>>,
    /// Index of the next access to simulate.
    pub(crate) at: usize,
    /// How the stream ended after `accesses`, once the source said: `Ok` at its end, or
    /// the error that ended it (handed out once, then `Ok`).
    pub(crate) end: Option<Result<(), TraceError>>,
}

impl Lookahead {
    /// Accesses taken from the source at once.
    pub(crate) const BATCH: usize = 128;

    /// Accesses taken and not simulated yet.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.accesses.len() - self.at
    }

    /// Drops the accesses already simulated and takes the next batch from `source`, with
    /// each access's next use when `next_uses` is set. Does nothing once the stream ended.
    #[inline(never)]
    pub(crate) fn refill(&mut self, source: &mut dyn AccessSource, next_uses: bool) {
        if self.end.is_some() {
            return;
        }
        self.accesses.drain(..self.at);
        self.pages.drain(..self.at);
        if next_uses {
            self.next_uses.drain(..self.at);
        }
        self.at = 0;
        let before = self.accesses.len();
        let read = if next_uses {
            // The next use answers for the access last returned: one at a time.
            (|| {
                for _ in 0..Self::BATCH {
                    let Some(access) = source.next_access()? else { break };
                    self.accesses.push(access);
                    self.next_uses.push(source.next_use());
                }
                Ok(())
            })()
        } else {
            source.next_accesses(&mut self.accesses, Self::BATCH)
        };
        let n_read = self.accesses.len() - before;
        match read {
            Ok(()) if n_read == Self::BATCH => {}
            Ok(()) => self.end = Some(Ok(())),
            Err(err) => self.end = Some(Err(err)),
        }
        self.pages.resize(self.accesses.len(), None);
    }

    /// A copy for a forked task, or `None` while it holds an error not handed out yet.
    fn fork(&self) -> Option<Lookahead> {
        let end = match &self.end {
            None => None,
            Some(Ok(())) => Some(Ok(())),
            Some(Err(_)) => return None,
        };
        Some(Lookahead {
            accesses: self.accesses.clone(),
            next_uses: self.next_uses.clone(),
            pages: self.pages.clone(),
            at: self.at,
            end,
        })
    }
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
