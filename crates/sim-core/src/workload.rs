//! What tasks do: streams of page accesses.
//!
//! A task replays an [`AccessSource`]: a trace reader or a built-in generator. The engine
//! pulls one access at a time, so a trace of any length replays in constant memory (save
//! under `lru = "opt"`, whose next uses a stream holds per record, see
//! [`AccessSource::next_use`]).

use crate::error::TraceError;
use crate::ids::{TaskId, VirtPage};
use crate::time::SimDuration;

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
///
/// The engine reads a task's stream ahead of the access it simulates, up to a batch of
/// accesses at a time (to make one call for many, and to start loading their page-table
/// entries early), and stops reading when the task ends or is killed. A source's stream must therefore not depend on when it is asked; every source
/// in the workspace is a fixed sequence.
pub trait AccessSource: Send {
    /// The next access, `Ok(None)` at the end, or an error naming the line.
    fn next_access(&mut self) -> Result<Option<Access>, TraceError>;
    /// Appends the next accesses to `out`, at most `max`, as [`AccessSource::next_access`]
    /// would give them one by one: fewer than `max` only at the end of the stream, and on
    /// an error, the accesses before it are appended and the error returned. One call for
    /// many accesses is what the engine uses; the default asks `next_access` in a loop.
    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        for _ in 0..max {
            match self.next_access()? {
                Some(access) => out.push(access),
                None => break,
            }
        }
        Ok(())
    }
    /// Whether [`AccessSource::next_use`] answers for this stream. Asked once per task,
    /// when a run with `lru = "opt"` is set up, which refuses a stream that does not.
    /// Default false.
    fn knows_next_uses(&self) -> bool {
        false
    }
    /// When the page of the access last returned is accessed again: the position of that
    /// later access in the numbering the workload's streams share (for a trace, its
    /// records in file order, counted from 0), or `None` when it never is. What Belady's
    /// optimal policy (`lru = "opt"`) evicts by; the engine asks only then, right after
    /// each access it reads, so an implementation keeps the answer at hand rather than
    /// computing it.
    /// Meaningless unless [`AccessSource::knows_next_uses`]; the default says never.
    fn next_use(&self) -> Option<u64> {
        None
    }
    /// A copy of the stream as it stands, which continues independently, for a forked
    /// simulation ([`crate::Simulation::fork`]); `None` (the default) when it cannot be
    /// copied, which makes forking a simulation whose task still reads it fail.
    fn fork(&self) -> Option<Box<dyn AccessSource>> {
        None
    }
}

impl<I> AccessSource for I
where
    I: Iterator<Item = Access> + Send,
{
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        Ok(self.next())
    }
    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        out.extend(self.by_ref().take(max));
        Ok(())
    }
}

/// An iterator of accesses that copies: a generated stream, which a forked simulation
/// ([`crate::Simulation::fork`]) continues from where the original stood. Reads as the
/// iterator itself would.
#[derive(Clone, Debug)]
pub struct ForkableIter<I>(pub I);

impl<I> AccessSource for ForkableIter<I>
where
    I: Iterator<Item = Access> + Clone + Send + 'static,
{
    fn next_access(&mut self) -> Result<Option<Access>, TraceError> {
        Ok(self.0.next())
    }
    fn next_accesses(&mut self, out: &mut Vec<Access>, max: usize) -> Result<(), TraceError> {
        out.extend(self.0.by_ref().take(max));
        Ok(())
    }
    fn fork(&self) -> Option<Box<dyn AccessSource>> {
        Some(Box::new(self.clone()))
    }
}

/// A virtual memory area the task maps before it starts (an anonymous private mapping).
#[derive(Clone, Debug, PartialEq)]
pub struct RegionSpec {
    /// First virtual page.
    pub start: VirtPage,
    /// Length in pages.
    pub pages: u64,
    /// madvise hint for transparent huge pages. Default none.
    pub thp: crate::thp::ThpHint,
    /// What its pages hold, which decides how they compress. Default random bytes.
    pub contents: crate::contents::Contents,
}

impl RegionSpec {
    /// A region of `pages` pages from `start`, with no madvise hint and random contents.
    pub fn new(start: VirtPage, pages: u64) -> RegionSpec {
        RegionSpec { start, pages, thp: crate::thp::ThpHint::Default, contents: Default::default() }
    }
}

/// A task to run: a name for reports, its mapped regions and its access stream. Accesses
/// outside every declared region map an implicit 1 GiB-aligned region on first touch.
///
/// Build one with [`TaskSpec::new`], which gives every other field its default (its own
/// address space, starting with the run, keeping its memory when it ends), then set the
/// fields that differ. The struct is `#[non_exhaustive]` so that adding a field never
/// breaks a caller.
#[non_exhaustive]
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
    /// When the task starts. Default [`TaskStart::AtStart`].
    pub start: TaskStart,
    /// The end of the stream is the process's exit (`do_exit` → `exit_mmap`): once no
    /// other task of the address space is left, every page of it is unmapped, its frames
    /// freed (unless I/O holds them), its swap slots released and its swap-cache-only
    /// folios dropped. Default false: the task's memory stays as it was, which is what a
    /// trace that ends mid-process wants.
    pub exit_on_end: bool,
    /// A read of a page the task never touched creates the page, as a store would, instead
    /// of mapping the shared zero page: its data is taken to exist before its first access.
    /// For traces of object requests (libCacheSim's), which hold only reads: the first
    /// request of an object brings in data that exists, and must take memory. Default false,
    /// the kernel's behaviour for anonymous memory.
    pub reads_create: bool,
    /// Once its start condition holds, the task waits this long before it runs: the time
    /// a launcher (a shell, `make`, a test harness) takes to start it. Default zero.
    pub start_delay: SimDuration,
    /// The task's process is started during the run by `exec`: when it starts, its CPU
    /// pays `cpu.exec_ns` and counts `cpu.exec_faults` page faults before its first
    /// access. Default false (the task's process is already running).
    pub exec: bool,
}

/// When a task starts. A task that has not started yet is not runnable, holds no memory,
/// and keeps the workload from counting as ended.
///
/// A task *ends* when it has replayed its whole stream or was OOM-killed; a task killed
/// before it started ends then too (it will never run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskStart {
    /// At the start of the run.
    #[default]
    AtStart,
    /// When task `index` of [`crate::Setup::tasks`] ends; it must be an earlier task, so
    /// that every task eventually starts. N chains of such tasks run N "slots" of work
    /// back to back.
    AfterTask(TaskId),
    /// When `n` tasks have ended, whichever they are; `n` must be at least 1 and at most
    /// the task's own index. With the first N tasks starting at once and task `i` waiting
    /// for `i - N + 1` ends, the tasks form a queue served by N workers in index order:
    /// each end hands the next task its slot, as `make -j N` does.
    AfterEnds(u32),
    /// When `n` processes (address spaces) other than its own have ended, each when its
    /// last task ended, whichever they are; `n` must be at least 1 and at most the number
    /// of other processes among the tasks before it. The queue of [`TaskStart::AfterEnds`]
    /// for processes of several threads: a job's threads start together, when a job ends.
    AfterExits(u32),
}

impl TaskSpec {
    /// A task named `name` replaying `accesses` over `regions`, in an address space of its
    /// own, starting with the run and keeping its memory when it ends.
    pub fn new(
        name: impl Into<String>,
        regions: Vec<RegionSpec>,
        accesses: Box<dyn AccessSource>,
    ) -> TaskSpec {
        TaskSpec {
            name: name.into(),
            address_space: None,
            regions,
            accesses,
            start: TaskStart::AtStart,
            exit_on_end: false,
            reads_create: false,
            start_delay: SimDuration::ZERO,
            exec: false,
        }
    }
}

impl std::fmt::Debug for TaskSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSpec")
            .field("name", &self.name)
            .field("regions", &self.regions)
            .field("start", &self.start)
            .field("exit_on_end", &self.exit_on_end)
            .field("reads_create", &self.reads_create)
            .field("start_delay", &self.start_delay)
            .field("exec", &self.exec)
            .finish_non_exhaustive()
    }
}
