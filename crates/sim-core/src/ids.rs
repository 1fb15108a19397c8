//! Identity newtypes, so that a slot can never be passed where a frame is expected.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Bytes in a page. The model is 4 KiB pages throughout, as on x86-64. It lives in this
/// leaf module (re-exported at the crate root) so that every module can import it
/// downward.
pub const PAGE_SIZE: u64 = 4096;

/// A physical page frame number: an index into the simulator's frame table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pfn(pub u32);

/// A virtual page number (virtual address >> 12) inside one address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct VirtPage(pub u64);

/// Index of a swap device in the order the scenario lists them (the kernel's swap type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DeviceId(pub u8);

/// A swap slot: device plus offset within the device. Offset 0 is the swap header and is
/// never allocated, so a zero offset doubles as "no slot" in packed encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SwapSlot {
    /// The device holding the slot.
    pub device: DeviceId,
    /// The slot's offset in pages from the start of the device.
    pub offset: u32,
}

impl SwapSlot {
    /// The slot `i` places further on the same device: page `i` of a large folio whose
    /// first page is in `self`.
    #[inline]
    pub fn nth(self, i: u32) -> SwapSlot {
        SwapSlot { device: self.device, offset: self.offset + i }
    }
}

/// A simulated task (process); each has its own address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaskId(pub u32);

/// A virtual memory area (VMA) inside an address space, numbered densely across the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegionId(pub u32);

/// A simulated CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuId(pub u32);

impl fmt::Display for SwapSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "swap{}:{}", self.device.0, self.offset)
    }
}
