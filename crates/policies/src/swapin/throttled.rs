//! Refault-throttled large swap-in: Barry Song's January 2025 RFC "mm: throttle large
//! folios swap-in based on thrashing" (not merged), as §7.4 of the model reference
//! describes it.
//!
//! The kernel change keeps a 5-bit counter in spare bits of each lruvec's flags word. In
//! the refault path, for anonymous memory only: a *recent* refault (the page was evicted
//! while still in the working set) of a *large* folio sets the counter to its maximum, 31;
//! any other refault decrements it by one, never below zero. While the counter is
//! non-zero, `mem_cgroup_swapin_charge_folio` fails the charge of a large folio, so the
//! swap-in falls back order by order to a single page. It thus takes 31 consecutive
//! refaults that are not recent to re-enable large swap-in.
//!
//! Simplified: the model has one lruvec (one memory cgroup on one node), so one counter;
//! the congestion bit that shares the flags word is never set here.

use swapsim_core::thp::OrderMask;
use swapsim_core::{Feedback, SwapinSize, SwapinView};

/// The counter's maximum: five bits.
pub const THROTTLE_MAX: u8 = 31;

/// Large swap-in as the kernel does it, refused while recent large refaults are seen.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThrottledSwapin {
    counter: u8,
}

impl ThrottledSwapin {
    /// The counter's current value (0 lets large swap-ins through).
    pub fn counter(&self) -> u8 {
        self.counter
    }
}

impl SwapinSize for ThrottledSwapin {
    fn name(&self) -> &'static str {
        "throttled"
    }
    fn orders(&mut self, view: &SwapinView) -> OrderMask {
        view.candidates
    }
    fn may_charge(&mut self, order: u8) -> bool {
        order == 0 || self.counter == 0
    }
    fn observe(&mut self, feedback: &Feedback) {
        if let Feedback::Refault { activated, order, .. } = *feedback {
            if activated && order > 0 {
                self.counter = THROTTLE_MAX;
            } else if !activated {
                self.counter = self.counter.saturating_sub(1);
            }
        }
    }
}
