//! What tasks do: streams of page accesses.
//!
//! A task replays an [`AccessSource`]: a trace reader or a built-in generator. The engine
//! pulls one access at a time, so a trace of any length replays in constant memory.

use crate::error::TraceError;
use crate::ids::VirtPage;

/// One memory access by a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The virtual page touched.
    pub vpage: VirtPage,
    /// True for a store, false for a load.
    pub write: bool,
    /// User time spent before this access, in nanoseconds, when the source knows it (trace
    /// timestamps); `None` means "charge the CPU cost profile's `access_ns`".
    pub think_ns: Option<u64>,
}

/// A stream of accesses for one task.
pub trait AccessSource: Send {
    /// The next access, `Ok(None)` at the end, or an error naming the line.
    fn next_access(&mut self) -> Result<Option<Access>, TraceError>;
}

impl<I> AccessSource for I
where
    I: Iterator<Item = Access> + Send,
{
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        Ok(self.next())
    }
}

/// A virtual memory area the task maps before it starts (an anonymous private mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionSpec {
    /// First virtual page.
    pub start: VirtPage,
    /// Length in pages.
    pub pages: u64,
    /// madvise hint for transparent huge pages. Default none.
    pub thp: crate::thp::ThpHint,
}

impl RegionSpec {
    /// A region of `pages` pages from `start`, with no madvise hint.
    pub fn new(start: VirtPage, pages: u64) -> RegionSpec {
        RegionSpec { start, pages, thp: crate::thp::ThpHint::Default }
    }
}

/// A task to run: a name for reports, its mapped regions and its access stream. Accesses
/// outside every declared region map an implicit 1 GiB-aligned region on first touch.
pub struct TaskSpec {
    /// Name used in reports and errors (e.g. the trace file).
    pub name: String,
    /// Tasks with the same key share one address space, as the threads of a process do
    /// (the key is typically the pid); `None` gives the task an address space of its own.
    /// Regions declared by any task sharing a space are mapped in it.
    pub address_space: Option<u64>,
    /// VMAs mapped at start.
    pub regions: Vec<RegionSpec>,
    /// The access stream.
    pub accesses: Box<dyn AccessSource>,
}

impl std::fmt::Debug for TaskSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSpec")
            .field("name", &self.name)
            .field("regions", &self.regions)
            .finish_non_exhaustive()
    }
}
