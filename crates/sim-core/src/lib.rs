//! swapsim-core: a deterministic discrete-event model of the Linux swap subsystem.
//!
//! The core owns the engine (simulated time, the event queue, tasks and CPUs), the memory
//! model (page tables, frames, LRU, swap slots, swap cache, workingset shadows, reclaim)
//! and the block layer (plugging, merging, tags). It defines the boundaries that other
//! crates implement: [`Readahead`] policies and [`BlockDevice`] latency models. It does no
//! file I/O, never reads the wall clock, and draws randomness only from seed-derived
//! streams, so a run is a pure function of (configuration, workload, seed).
//!
//! ```
//! use swapsim_core::{run, ByteSize, CoreConfig, Policies, Setup, SwapDeviceSpec, TaskSpec, RegionSpec, VirtPage};
//! use swapsim_core::workload::Access;
//! # use swapsim_core::device::{BlockDevice, DeviceTraits, IoRequest};
//! # use swapsim_core::SimTime;
//! # #[derive(Clone, Debug)] struct Fixed;
//! # impl BlockDevice for Fixed {
//! #     fn kind(&self) -> &str { "fixed" }
//! #     fn traits(&self) -> DeviceTraits { DeviceTraits { rotational: false, synchronous: false, queue_depth: 32, max_sectors_kb: 1280 } }
//! #     fn service(&mut self, now: SimTime, _r: &IoRequest) -> SimTime { SimTime(now.0 + 20_000) }
//! # }
//! let mut cfg = CoreConfig::default();
//! cfg.memcg.limit = Some(ByteSize::mib(4));
//! cfg.devices.push(SwapDeviceSpec { name: "swap0".into(), size: ByteSize::mib(64), priority: None, backing: None });
//! // Touch 8 MiB twice, in order, under a 4 MiB limit: the second pass must swap.
//! let pages = 2048u64;
//! let accesses = (0..2 * pages).map(move |i| Access { vpage: VirtPage(i % pages), write: true, think_ns: None });
//! let report = run(Setup {
//!     config: cfg.validate().unwrap(),
//!     seed: 1,
//!     devices: vec![Box::new(Fixed)],
//!     policies: Policies::default(),
//!     tasks: vec![TaskSpec::new("demo", vec![RegionSpec::new(VirtPage(0), pages)], Box::new(accesses))],
//!     timeline: Vec::new(),
//! }).unwrap();
//! assert!(report.vmstat.pswpout > 0 && report.vmstat.pswpin > 0);
//! ```

#![allow(missing_docs)]

pub mod config;
pub mod contents;
pub mod device;
pub mod error;
pub mod gen;
pub mod ids;
pub mod policy;
pub mod queue;
pub mod report;
pub mod rng;
pub mod series;
pub mod size;
pub mod stats;
pub mod thp;
pub mod time;
pub mod timeline;
pub mod workload;
pub mod zswap;

mod block;
mod engine;
mod event;
mod lru;
mod mm;
mod prefetch;

pub use config::{ByteSize, CoreConfig, SwapBacking, SwapDeviceSpec, ValidatedConfig};
pub use device::{BlockDevice, DeviceTraits, IoDir, IoRequest};
pub use engine::{run, run_with_progress, Setup, Simulation, ValidSetup, PROGRESS_ACCESSES};
pub use error::{ConfigError, ForkError, MapError, SetupError, SimError, TraceError};
pub use ids::{CpuId, DeviceId, Pfn, RegionId, SpaceId, SwapSlot, TaskId, VirtPage, PAGE_SIZE};
pub use policy::allocator::{
    AfterAlloc, ClusterAllocator, ClusterLists, SlotAllocator, SlotPlan, SlotPurpose, SlotRequest, SlotSource,
};
pub use policy::readahead::{EntryLocation, FaultView, NoReadahead, Readahead, ReadaheadPlan};
pub use policy::swapin::{Order0Swapin, SwapinSize, SwapinView};
pub use policy::zswap::{NoProtection, ZswapLruView, ZswapProtection, ZswapSwapin, ZswapVisit};
pub use policy::zswap_writeback::{
    KernelWriteback, MemcgVisit, WritebackEvent, ZswapPoolView, ZswapWriteback,
};
pub use policy::{Feedback, Policies};
pub use report::{JobReport, JobsReport, Outcome, SimReport};
pub use rng::SimRng;
pub use series::{Sample, Series, TaskPhase, TaskSample};
pub use time::{SimDuration, SimTime};
pub use timeline::{HibernateOp, HibernationReport, OpReport, OpResult, Operation, TimelineOp, Trigger};
pub use workload::{Access, AccessSource, ForkableIter, RegionSpec, TaskSpec, TaskStart};
