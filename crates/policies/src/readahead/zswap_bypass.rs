//! Readahead that leaves zswap alone: Alexandre Ghiti's RFC (June 2026) to read no swap
//! readahead for entries stored in zswap, as a zram device already gets none.
//!
//! A page in zswap costs no I/O to bring back, so reading its neighbours along with it
//! saves no seek and no request; it only decompresses pages that may never be used, takes
//! their memory, and empties their entries from the pool (a load from the swap cache is
//! exclusive). The policy keeps the kernel's own window for a page on the device, where
//! reading neighbours together does share the I/O, and reads nothing ahead when the
//! faulting page is in zswap.

use swapsim_core::{EntryLocation, FaultView, Feedback, Readahead, ReadaheadPlan};

/// The kernel's readahead ([`super::ClusterReadahead`] or [`super::VmaReadahead`], by
/// the kernel's rule), except that a fault on a page held in zswap reads only that page,
/// and a window around a page on the device skips the neighbours held in zswap.
///
/// Modelled on the RFC's description ("no swap readahead for zswap-backed entries"):
/// the faulting entry's location decides as `SWP_SYNCHRONOUS_IO` decides for zram in
/// `do_swap_page`. Skipping the zswap neighbours of a device window is this model's
/// reading of "for entries stored in zswap"; the RFC's own code was not available. Pages
/// in the zero map cost nothing either way and are read as the kernel reads them.
/// The wrapped policy still hears every feedback, so its window adapts as it would.
#[derive(Clone, Debug)]
pub struct ZswapBypassReadahead {
    inner: Box<dyn Readahead>,
}

impl ZswapBypassReadahead {
    /// The bypass around `inner`, the policy the kernel would use.
    pub fn new(inner: Box<dyn Readahead>) -> ZswapBypassReadahead {
        ZswapBypassReadahead { inner }
    }
}

impl Readahead for ZswapBypassReadahead {
    fn kind(&self) -> &'static str {
        "zswap-bypass"
    }

    fn plan(&mut self, fault: &FaultView) -> ReadaheadPlan {
        match fault.location {
            EntryLocation::Zswap => ReadaheadPlan::TargetOnly,
            EntryLocation::Zero | EntryLocation::Device => self.inner.plan(fault),
        }
    }

    fn observe(&mut self, feedback: &Feedback) {
        self.inner.observe(feedback);
    }

    fn admit(&mut self, location: EntryLocation) -> bool {
        location != EntryLocation::Zswap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::readahead::test_support::fault_at;
    use crate::readahead::ClusterReadahead;
    use expect_test::expect;

    #[test]
    fn a_zswap_target_reads_alone_and_a_device_target_gets_the_kernel_window() {
        let mut policy = ZswapBypassReadahead::new(Box::new(ClusterReadahead::default()));
        let mut in_zswap = fault_at(100, 100);
        in_zswap.location = EntryLocation::Zswap;
        let mut zero = fault_at(300, 300);
        zero.location = EntryLocation::Zero;
        let plans = [in_zswap, fault_at(200, 200), zero].map(|f| policy.plan(&f));
        let admitted =
            [EntryLocation::Zero, EntryLocation::Zswap, EntryLocation::Device].map(|l| policy.admit(l));
        expect![[r#"
            (
                [
                    TargetOnly,
                    Slots {
                        first: 200,
                        last: 207,
                    },
                    Slots {
                        first: 300,
                        last: 303,
                    },
                ],
                [
                    true,
                    false,
                    true,
                ],
            )
        "#]]
        .assert_debug_eq(&(plans, admitted));
    }
}
