//! Plain data shared by the scheduler, the fault path and the kernel jobs: how a step of a
//! task ended ([`Step`]), what a sleeping task waits for ([`Wait`]), the swap fault it
//! finishes when it wakes ([`PendingFault`]), and the counts of sleepers a completion
//! wakes ([`Sleepers`]). A leaf of the engine: it names no other engine module.

use crate::ids::{Pfn, SwapSlot};
use crate::mm::pagetable::PageId;
use crate::time::SimTime;

/// What happened to one access, or to one step of a kernel job. It carries no data, so
/// that it comes back from the fault path in registers: a fault that waits for a read has
/// put the read in its task's `wait` already. (Returned through memory, a wait written
/// field by field and read back at once as a whole made the host wait for every store
/// before it, cache misses included, at every fault.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Done,
    /// The access is retried once writeback makes room ([`Wait::Writeback`]).
    WaitWriteback,
    /// The task waits for the read its `wait` names ([`Wait::Frame`]).
    WaitRead,
    Oom,
}

/// Why a task is blocked.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// A swap fault waits for the read of `pfn`; the fault finishes when it completes.
    Frame { pfn: Pfn, fault: PendingFault },
    /// A charge waits for any writeback to complete, then the access is retried.
    Writeback,
    /// A kernel task waits for any I/O to complete, then looks again.
    AnyIo,
}

/// Whether a fault is major (it read from swap) or minor (it found the swap cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FaultKind {
    Major,
    Minor,
}

/// Who swaps a page in: a page fault, or swapoff's page-table walk (`unuse_pte`), which
/// counts no fault, installs the PTE old and frees the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SwapinBy {
    Fault,
    Swapoff,
}

/// A swap-in a task sleeps on: what it maps when the read of its folio completes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingFault {
    pub(crate) page: PageId,
    pub(crate) slot: SwapSlot,
    pub(crate) write: bool,
    pub(crate) start: SimTime,
    pub(crate) kind: FaultKind,
    pub(crate) by: SwapinBy,
}

/// How many tasks sleep on writeback and on any I/O: a completion wakes them, and while
/// there are none it need not look at every task. Kept by `Simulation::sleep` and
/// `take_wait` (waking, the OOM kill), the only places a task's wait changes; the
/// invariants check it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sleepers {
    pub(crate) writeback: u32,
    pub(crate) any_io: u32,
}

impl Sleepers {
    fn count(&mut self, wait: &Wait) -> Option<&mut u32> {
        match wait {
            Wait::Frame { .. } => None,
            Wait::Writeback => Some(&mut self.writeback),
            Wait::AnyIo => Some(&mut self.any_io),
        }
    }

    pub(crate) fn add(&mut self, wait: &Wait) {
        if let Some(n) = self.count(wait) {
            *n += 1;
        }
    }

    pub(crate) fn remove(&mut self, wait: &Wait) {
        if let Some(n) = self.count(wait) {
            assert!(*n > 0, "a sleeper leaves only after it was counted");
            *n -= 1;
        }
    }
}
