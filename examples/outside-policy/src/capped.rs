//! A swap-in size policy: large folios, but none over 64 KiB.
//!
//! On zram the kernel may swap in a whole large folio (`alloc_swap_folio`, 6.12 and
//! later), trying every order its conditions allow from the largest down. A large folio
//! that comes back whole costs one decompression per page even when the task wants one of
//! them, so this policy tries only the orders up to 64 KiB (order 4) and lets the rest fall
//! back to order 0.

use swapsim_core::thp::OrderMask;
use swapsim_core::{SwapinSize, SwapinView};

/// The largest order [`CappedSwapin`] swaps in: 16 pages, 64 KiB.
pub const CAPPED_ORDER_MAX: u8 = 4;

/// The kernel's choice of orders, capped at [`CAPPED_ORDER_MAX`].
#[derive(Clone, Copy, Debug, Default)]
pub struct CappedSwapin;

impl SwapinSize for CappedSwapin {
    fn name(&self) -> &'static str {
        "capped-64k"
    }

    fn orders(&mut self, view: &SwapinView) -> OrderMask {
        // Bit n of the mask is order n: keep orders 1..=4.
        let allowed: OrderMask = (1 << (CAPPED_ORDER_MAX + 1)) - 2;
        view.candidates & allowed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn keeps_the_orders_up_to_64k() {
        let mut policy = CappedSwapin;
        // 16 KiB (order 2), 64 KiB (order 4) and 2 MiB (order 9) allowed by the kernel.
        let all = (1 << 2) | (1 << 4) | (1 << 9);
        let masks =
            [all, 1 << 9, 0].map(|candidates| format!("{:#b}", policy.orders(&SwapinView::new(candidates))));
        expect![[r#"
            [
                "0b10100",
                "0b0",
                "0b0",
            ]
        "#]]
        .assert_debug_eq(&masks);
    }
}
