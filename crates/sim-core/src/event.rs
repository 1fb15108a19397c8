//! The closed set of things that can happen at a future time.
//!
//! A leaf module: the event queue lives in the memory model (reclaim absorbs I/O
//! completions that fall due while it scans) and the engine dispatches the events, so both
//! name `Event` without either importing the other.

use crate::block::ReqId;

/// The closed set of things that can happen at a future time.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// A CPU resumes running its current or next runnable task.
    CpuRun(crate::ids::CpuId),
    /// A block request completes.
    IoComplete(ReqId),
    /// kswapd runs its next reclaim batch.
    KswapdRun,
    /// zswap's pool-limit worker runs its next batch.
    ZswapShrink,
    /// The timeline operation with this index starts.
    Timeline(u32),
    /// A task whose start condition held starts, its start delay over.
    Start(crate::ids::TaskId),
}
