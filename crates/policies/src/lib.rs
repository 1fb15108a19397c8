//! swapsim-policies: the decision-making policies the swap engine consults.
//!
//! The engine in `swapsim-core` owns time, memory and I/O; at a few points it asks a policy
//! what to do and carries the answer out. This crate holds those policies and the serde
//! configuration that picks one at run time: swap-in readahead (the [`readahead`] module),
//! which neighbouring pages to read together with a faulting one, and the swap-in folio
//! size (the [`swapin`] module), whether a fault on zram brings a whole large folio back,
//! and zswap's shrinker protection (the [`zswap`] module), which compressed entries stay
//! in the pool when memory pressure writes others back to the swap device, and zswap's
//! writeback trigger (the [`writeback`] module), when the pool-limit worker starts and how
//! it walks the memory cgroups.
//! in the pool when memory pressure writes others back to the swap device, and swap slot
//! allocation (the [`allocator`] module), where a device looks for a folio's slots.
//!
//! Policies only *decide*. They never touch the event queue, never perform I/O, and never
//! see a concrete device model: everything they know arrives in the read-only
//! [`FaultView`](swapsim_core::FaultView) the engine passes in, plus feedback through
//! [`Readahead::observe`](swapsim_core::Readahead::observe), which hears every
//! [`Feedback`](swapsim_core::Feedback) and ignores what it does not use.
//!
//! # Choosing and running a readahead policy
//!
//! A scenario names the policy as a plain string (`readahead = "kernel"`). The special
//! value `"kernel"` follows the kernel's own selection rule, which depends on whether a
//! rotational swap device is active, so it is resolved against a [`ReadaheadContext`]
//! when the policy is built:
//!
//! ```
//! use swapsim_core::{DeviceId, FaultView, Feedback, ReadaheadPlan, RegionId, SpaceId, SwapSlot, TaskId, VirtPage};
//! use swapsim_policies::{ReadaheadConfig, ReadaheadContext};
//!
//! // An HDD is among the swap devices, so the kernel would use cluster readahead.
//! let ctx = ReadaheadContext { vma_ra_enabled: true, any_rotational: true };
//! assert_eq!(ReadaheadConfig::Kernel.resolve(&ctx), ReadaheadConfig::Cluster);
//! let mut policy = ReadaheadConfig::Kernel.build(&ctx);
//! assert_eq!(policy.kind(), "cluster");
//!
//! let slot = SwapSlot { device: DeviceId(0), offset: 13 };
//! // A fault at page 77 of a 4096-page VMA whose page sits in slot 13 of a 1024-slot
//! // device; `page_cluster` is the kernel's default, 3.
//! let fault = FaultView::new(TaskId(0), SpaceId(0), RegionId(0), VirtPage(0)..VirtPage(4096), VirtPage(77), slot, 1024);
//! // The hit counter starts at 4, which asks for 8 pages: the aligned cluster around slot 13.
//! assert_eq!(policy.plan(&fault), ReadaheadPlan::Slots { first: 8, last: 15 });
//! // The next miss, with no readahead hit in between, decays the window by half.
//! let mut far = fault;
//! far.offset = 500;
//! assert_eq!(policy.plan(&far), ReadaheadPlan::Slots { first: 500, last: 503 });
//! // A readahead page being used is credited, so the next window grows back to 4 pages
//! // instead of decaying to 2.
//! policy.observe(&Feedback::SwapCacheHit { region: RegionId(0), vpage: VirtPage(78), readahead: true });
//! let mut next = fault;
//! next.offset = 900;
//! assert_eq!(policy.plan(&next), ReadaheadPlan::Slots { first: 900, last: 903 });
//! ```

#![warn(missing_docs)]

pub mod readahead;

pub use readahead::{
    ClusterReadahead, FixedReadahead, ReadaheadConfig, ReadaheadContext, VmaReadahead, ZswapBypassReadahead,
};
pub mod swapin;
pub use swapin::{KernelSwapin, SwapinConfig, ThrottledSwapin};
pub mod zswap;
pub use zswap::{DecayProtection, SecondChanceProtection, ZswapProtectionConfig};
pub mod writeback;
pub use writeback::{PreFixWriteback, ProactiveWriteback, ZswapWritebackConfig};
pub mod allocator;
pub use allocator::{AllocatorConfig, FreeListScanAllocator, SlowPathHibernation};
