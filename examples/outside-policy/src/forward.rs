//! Forward readahead: the faulting swap slot and the slots after it.
//!
//! The policy of docs/writing-a-policy.md, kept here as a crate of one's own keeps it: the
//! core's `Readahead` trait implemented outside the repository, with its tests.

use swapsim_core::{FaultView, Readahead, ReadaheadPlan};

/// Forward readahead: the faulting slot and the slots after it, up to `2^page_cluster`
/// slots in all, on the faulting device.
///
/// The kernel's cluster window is aligned (`offset & !mask ..= offset | mask`), so on a
/// forward scan it also reads slots behind the fault, which were read or are no longer
/// wanted. This policy reads only ahead. It keeps no state and ignores feedback.
#[derive(Clone, Copy, Debug, Default)]
pub struct ForwardReadahead;

impl Readahead for ForwardReadahead {
    fn kind(&self) -> &'static str {
        "forward"
    }

    fn plan(&mut self, fault: &FaultView) -> ReadaheadPlan {
        // `vm.page-cluster` is at most 31 in the kernel; clamp so the shift cannot overflow.
        let pages = 1u32 << fault.page_cluster.min(31);
        // The engine does not clamp: stay below the device's last slot.
        let last = fault.offset.saturating_add(pages - 1).min(fault.device_slots - 1);
        if last == fault.offset {
            ReadaheadPlan::TargetOnly
        } else {
            ReadaheadPlan::Slots { first: fault.offset, last }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;
    use proptest::prelude::*;
    use swapsim_core::{DeviceId, RegionId, SpaceId, SwapSlot, TaskId, VirtPage};

    /// A fault at slot `offset` of a 1024-slot device, with `page_cluster` 3.
    fn fault_at(offset: u32) -> FaultView {
        let slot = SwapSlot { device: DeviceId(0), offset };
        let vma = VirtPage(0)..VirtPage(4096);
        FaultView::new(TaskId(0), SpaceId(0), RegionId(0), vma, VirtPage(u64::from(offset)), slot, 1024)
    }

    #[test]
    fn reads_forward_from_the_fault_and_stops_at_the_device_end() {
        let mut policy = ForwardReadahead;
        let mut page_cluster_0 = fault_at(100);
        page_cluster_0.page_cluster = 0;
        let plans = [fault_at(100), fault_at(1020), fault_at(1023), page_cluster_0].map(|f| policy.plan(&f));
        expect![[r#"
            [
                Slots {
                    first: 100,
                    last: 107,
                },
                Slots {
                    first: 1020,
                    last: 1023,
                },
                TargetOnly,
                TargetOnly,
            ]
        "#]]
        .assert_debug_eq(&plans);
    }

    proptest! {
        #[test]
        fn every_plan_holds_the_target_and_stays_on_the_device(
            device_slots in 2u32..5000,
            offset_permille in 0u32..1000,
            page_cluster in 0u32..40,
        ) {
            let offset = 1 + (device_slots - 1) * offset_permille / 1000;
            let mut fault = fault_at(offset);
            fault.device_slots = device_slots;
            fault.page_cluster = page_cluster;
            match ForwardReadahead.plan(&fault) {
                ReadaheadPlan::TargetOnly => {}
                ReadaheadPlan::Slots { first, last } => {
                    // Slot 0 is the swap header; the last slot is device_slots - 1.
                    prop_assert!(1 <= first && first <= offset && offset <= last);
                    prop_assert!(last < device_slots);
                    prop_assert!(first < last, "a one-slot window is TargetOnly");
                    prop_assert!(u64::from(last - first) < 1u64 << page_cluster.min(31));
                }
                ReadaheadPlan::Pages { .. } => prop_assert!(false, "a slot policy plans slots"),
            }
        }
    }
}
