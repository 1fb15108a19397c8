//! Typed errors of the core. Messages are lowercase, carry no trailing period, and name
//! the place, the value and what was expected.

/// A configuration value is out of range or inconsistent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A field failed validation.
    #[error("{field}: {message}")]
    Invalid {
        /// Dotted path of the field, e.g. `memcg.swappiness`.
        field: String,
        /// What is wrong and what was expected.
        message: String,
    },
}

/// An access trace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A line did not parse.
    #[error("{}{message}", place(*line, *column))]
    Malformed {
        /// 1-based line number; 0 when the error is not about a line (the message then says
        /// where it is, a byte offset for instance), and the line is not printed.
        line: u64,
        /// 1-based column, in characters, of the offending text, when one place is to blame.
        column: Option<u64>,
        /// What was found and what was expected.
        message: String,
    },
    /// The underlying reader failed.
    #[error("line {line}: read error: {source}")]
    Io {
        /// 1-based line number being read.
        line: u64,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// `line 12: `, `line 12, column 3: `, or nothing for line 0: the start of a
/// [`TraceError::Malformed`] message.
fn place(line: u64, column: Option<u64>) -> String {
    match (line, column) {
        (0, _) => String::new(),
        (_, Some(column)) => format!("line {line}, column {column}: "),
        (_, None) => format!("line {line}: "),
    }
}

/// A run could not be set up or carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A task's access stream failed.
    #[error("task {task}: {source}")]
    Trace {
        /// The task's name.
        task: String,
        /// The trace error.
        source: TraceError,
    },
    /// The setup does not fit its configuration or itself ([`crate::Setup::validate`]).
    #[error("setup: {0}")]
    Setup(#[from] SetupError),
    /// A task touched a virtual page the model cannot map.
    #[error("task {task}: cannot map virtual page {vpage:#x}: {reason}")]
    Map {
        /// The task's name.
        task: String,
        /// The virtual page.
        vpage: u64,
        /// Why it cannot be mapped.
        reason: MapError,
    },
    /// A simulation cannot be forked or retuned as asked ([`crate::Simulation::fork`],
    /// [`crate::Simulation::retune_swapin`]).
    #[error("{0}")]
    Fork(#[from] ForkError),
}

/// What is wrong with a [`crate::Setup`], found before the run starts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The setup has a different number of device models than configured devices.
    #[error("{models} device models for {devices} configured swap devices")]
    DeviceModels {
        /// Device models given.
        models: usize,
        /// Swap devices configured.
        devices: usize,
    },
    /// A timeline trigger names a task that does not exist.
    #[error("timeline[{op}]: task {task} does not exist (the setup has {tasks} tasks)")]
    TimelineTask {
        /// Index of the timeline entry.
        op: usize,
        /// The task it names.
        task: usize,
        /// Tasks in the setup.
        tasks: usize,
    },
    /// A task starts after a task that is not an earlier one.
    #[error("task {task} ({name}): starts after task {after}, which is not an earlier task")]
    StartsAfterLater {
        /// Index of the task.
        task: usize,
        /// Its name.
        name: String,
        /// The task it waits for.
        after: usize,
    },
    /// A task waits for a number of ends outside `1..=` its own index.
    #[error("task {task} ({name}): starts after {ends} task ends, outside 1..={task} (the tasks before it)")]
    StartsAfterEnds {
        /// Index of the task.
        task: usize,
        /// Its name.
        name: String,
        /// The ends it waits for.
        ends: u32,
    },
    /// A task waits for more process exits than there are other processes before it.
    #[error(
        "task {task} ({name}): starts after {exits} process exits, outside 1..={processes} (the other processes \
         before it)"
    )]
    StartsAfterExits {
        /// Index of the task.
        task: usize,
        /// Its name.
        name: String,
        /// The exits it waits for.
        exits: u32,
        /// Other processes among the tasks before it.
        processes: usize,
    },
    /// A task's declared region cannot be mapped.
    #[error("task {task}: region at page {start} of {pages} pages: {reason}")]
    Region {
        /// The task's name.
        task: String,
        /// First virtual page of the region.
        start: u64,
        /// Its length in pages.
        pages: u64,
        /// Why it cannot be mapped.
        reason: MapError,
    },
    /// Belady's policy needs each access's next use, and a task's stream does not know it.
    #[error(
        "lru = \"opt\": task {task} ({name}) does not know when its pages are used next; \
         Belady's policy needs a trace replayed with next uses (a generated workload has none)"
    )]
    NoNextUses {
        /// Index of the task.
        task: usize,
        /// Its name.
        name: String,
    },
}

/// Why a virtual page or region cannot be mapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    /// The region overlaps one already mapped in the address space.
    #[error("overlaps a region already mapped in its address space")]
    Overlap {
        /// First virtual page of the region.
        start: u64,
        /// Its length in pages.
        pages: u64,
    },
    /// The region is empty or ends past the largest mappable page.
    #[error("empty or ending at page {vpage}, past the largest mappable page 2^45 - 1")]
    OutOfRange {
        /// The page it ends at (one past its last).
        vpage: u64,
    },
    /// Every page the model can hold (2^32 pages over all address spaces) is in use.
    #[error("the page tables are full: 2^32 pages over all address spaces")]
    TooManyPages,
}

/// Why a simulation cannot be forked or retuned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    /// A user task still reads a stream that cannot be copied, or holds a read error not
    /// yet delivered.
    #[error("cannot fork the simulation: task {task} reads a stream that does not fork")]
    StreamDoesNotFork {
        /// The task's name.
        task: String,
    },
    /// Pages were swapped in: the swap-in knobs were read.
    #[error("cannot retune swap-in: pages were already swapped in")]
    SwappedIn,
    /// A timeline operation set a swap-in knob that a retune would undo.
    #[error("cannot retune swap-in: a timeline operation already set page-cluster or the readahead policy")]
    KnobsSet,
    /// zswap's shrinker switch or policies were read (a store, a shrinker call or a
    /// swap-in), or a timeline operation started.
    #[error("cannot retune zswap: a store, the shrinker or a swap-in has read its switches, or the timeline has begun")]
    ZswapRead,
    /// The variant's timeline has another length.
    #[error("cannot retune: the variant has {variant} timeline operations, this run {this}")]
    TimelineLength {
        /// Operations in the variant's timeline.
        variant: usize,
        /// Operations in this run's.
        this: usize,
    },
    /// The variant's configuration differs in more than the knobs retuned.
    #[error("cannot retune: the variant's configuration differs in more than the knobs retuned")]
    ConfigDiffers,
}
