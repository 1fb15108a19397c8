//! The memory model: page tables, frames, swap devices with the swap cache.

pub(crate) mod frames;
pub(crate) mod pagetable;
pub(crate) mod swap;
