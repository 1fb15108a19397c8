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

/// A simulated task: a thread of a user process replaying an access stream, or a kernel
/// thread the timeline started. Numbered in the order tasks are created: the setup's tasks
/// first, in the order [`crate::Setup::tasks`] lists them, then kernel tasks as they are
/// spawned. Threads of one process share an address space ([`SpaceId`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TaskId(pub u32);

/// An address space: the memory of one process (its page tables and VMAs), shared by the
/// process's threads. Numbered in the order the spaces are created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SpaceId(pub u32);

/// A virtual memory area (VMA) inside an address space, numbered densely across the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegionId(pub u32);

/// A simulated CPU: the machine's CPUs that run user tasks come first
/// (`machine.cpus` of them), then one for kswapd, then one for each kernel task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuId(pub u32);

macro_rules! index_newtype {
    ($($id:ident),*) => {$(
        impl $id {
            /// The identity as an index into the tables it numbers.
            #[inline(always)]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The identity of table index `i` (tables the model numbers stay below 2^32).
            #[inline(always)]
            pub fn from_index(i: usize) -> $id {
                debug_assert!(u32::try_from(i).is_ok(), "identities are numbered below 2^32");
                $id(i as u32)
            }
        }
    )*};
}

index_newtype!(TaskId, SpaceId, CpuId, RegionId);

macro_rules! display_number {
    ($($id:ident),*) => {$(
        impl fmt::Display for $id {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    )*};
}

display_number!(TaskId, SpaceId, CpuId);

impl fmt::Display for SwapSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "swap{}:{}", self.device.0, self.offset)
    }
}
