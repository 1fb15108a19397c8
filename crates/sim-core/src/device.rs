//! The block device boundary.
//!
//! The engine's block layer decides which requests exist (plugging, merging, tags); a
//! device model decides only how long each dispatched request takes. Models live in the
//! `swapsim-devices` crate. A model's answer is a function of the request, the model's own
//! state and its own random stream, nothing else.

use crate::time::{SimDuration, SimTime};

/// Direction of a block request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoDir {
    /// A swap-in.
    Read,
    /// A swap-out.
    Write,
}

/// One request as dispatched to the device (after merging).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    /// Read or write.
    pub dir: IoDir,
    /// First 512-byte sector.
    pub sector: u64,
    /// Length in bytes (a multiple of 4096 for swap).
    pub bytes: u64,
}

/// Static facts about a device that the kernel reads at swapon time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceTraits {
    /// The device reports itself rotational: the kernel then forces cluster readahead for
    /// all swap and uses one allocation cluster per device instead of one per CPU.
    pub rotational: bool,
    /// Completes I/O synchronously in the submitting task (zram, pmem): `SWP_SYNCHRONOUS_IO`.
    pub synchronous: bool,
    /// Tags: the most requests the driver accepts at once (`nr_requests`).
    pub queue_depth: u32,
    /// The largest request the block layer may build, in KiB (`max_sectors_kb`).
    pub max_sectors_kb: u32,
}

/// A latency model for one swap device.
///
/// Implementors are `Clone` (a `#[derive(Clone)]` does): a simulation copies its policies
/// and devices when it is forked ([`crate::Simulation::fork`]).
pub trait BlockDevice: std::fmt::Debug + Send + dyn_clone::DynClone {
    /// Stable name of the model or profile, e.g. `"virtio"`.
    fn kind(&self) -> &str;

    /// Facts the kernel reads at swapon.
    fn traits(&self) -> DeviceTraits;

    /// The block layer issues `req` at `now`; return the time it completes. Called once per
    /// dispatched request, with `now` never decreasing between calls. For a device that
    /// completes in passes ([`pass_signal`](BlockDevice::pass_signal)), the time the
    /// device has served it, which the guest learns only when the pass is signalled.
    fn service(&mut self, now: SimTime, req: &IoRequest) -> SimTime;

    /// For a device that completes requests in passes, as a virtual disk whose host
    /// serves its queue in a loop and signals the guest once the loop finds the queue
    /// empty: how long after a pass's last request is served the guest sees the pass's
    /// completions, all together. The block layer asks once per pass, when a request finds
    /// the device idle and opens one; a request dispatched while a pass is being served
    /// joins it, and the pass lasts until its last request is served. `None` (the
    /// default): every request completes on its own, at the time `service` returned. A
    /// device answers alike every time: always `Some` or always `None`.
    fn pass_signal(&mut self) -> Option<SimDuration> {
        None
    }
}

dyn_clone::clone_trait_object!(BlockDevice);
