//! Large swap-in of zswap entries: Usama Arif's October 2024 RFC "mm: zswap: add support
//! for zswapin of large folios" (not merged), on top of the kernel's choice or of
//! refault throttling.
//!
//! In 6.18, once zswap's pool exists no swap-in is large (a large folio could be partly in
//! zswap, which `zswap_load` could not fill), and a zswap entry on a disk is read through
//! the swap cache, readahead included. The RFC lets a fault on a zswap entry with one
//! reference skip the swap cache as a synchronous device's does, and lets the aligned
//! range around it come in as one large folio when every one of its pages is in zswap
//! (`zswap_present_test` in `can_swapin_thp`); `zswap_load` then decompresses the pages one
//! by one into the folio. A range partly in zswap and partly on the disk stays order 0.
//! The engine applies these conditions ([`SwapinSize::zswap_large`]); the orders tried and
//! whether a large charge may go ahead are the wrapped policy's.

use swapsim_core::thp::OrderMask;
use swapsim_core::{Feedback, SwapinSize, SwapinView};

/// Another swap-in size policy, with zswap entries swapped in large.
#[derive(Clone, Debug)]
pub struct ZswapLargeSwapin {
    inner: Box<dyn SwapinSize>,
    name: &'static str,
}

impl ZswapLargeSwapin {
    /// `inner`'s choices, zswap entries included, reported as `name`.
    pub fn new(inner: Box<dyn SwapinSize>, name: &'static str) -> ZswapLargeSwapin {
        ZswapLargeSwapin { inner, name }
    }
}

impl SwapinSize for ZswapLargeSwapin {
    fn name(&self) -> &'static str {
        self.name
    }
    fn orders(&mut self, view: &SwapinView) -> OrderMask {
        self.inner.orders(view)
    }
    fn may_charge(&mut self, order: u8) -> bool {
        self.inner.may_charge(order)
    }
    fn zswap_large(&self) -> bool {
        true
    }
    fn observe(&mut self, feedback: &Feedback) {
        self.inner.observe(feedback);
    }
}
