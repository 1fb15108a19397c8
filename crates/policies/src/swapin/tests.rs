use super::*;
use swapsim_core::{DeviceId, Feedback, SpaceId, SwapSlot};

fn refault(activated: bool, order: u8) -> Feedback {
    Feedback::Refault {
        space: SpaceId(0),
        slot: SwapSlot { device: DeviceId(0), offset: 1 },
        activated,
        order,
    }
}

#[test]
fn names_round_trip_and_unknown_names_list_the_choices() {
    for c in SwapinConfig::ALL {
        assert_eq!(SwapinConfig::from_name(c.name()).unwrap(), c);
        assert_eq!(c.build().name(), c.name());
    }
    let err = SwapinConfig::from_name("always").unwrap_err().to_string();
    assert_eq!(err, "thp.swapin: unknown policy \"always\" (expected one of kernel, order0, throttled)");
}

#[test]
fn kernel_tries_every_candidate_and_order0_none() {
    let view = SwapinView::new(1 << 2 | 1 << 4);
    assert_eq!(KernelSwapin.orders(&view), 1 << 2 | 1 << 4);
    assert_eq!(Order0Swapin.orders(&view), 0);
    assert!(KernelSwapin.may_charge(4));
}

#[test]
fn a_recent_large_refault_throttles_until_31_non_recent_refaults() {
    let mut p = ThrottledSwapin::default();
    assert!(p.may_charge(2));
    // A recent refault of an order-0 folio does not arm the throttle.
    p.observe(&refault(true, 0));
    assert!(p.may_charge(2));
    p.observe(&refault(true, 2));
    assert_eq!(p.counter(), THROTTLE_MAX);
    assert!(!p.may_charge(2) && !p.may_charge(4));
    assert!(p.may_charge(0), "order 0 is never refused");
    for i in 0..THROTTLE_MAX {
        assert!(!p.may_charge(2), "still throttled after {i} non-recent refaults");
        p.observe(&refault(false, 0));
        // Recent order-0 refaults neither arm nor decay it.
        p.observe(&refault(true, 0));
    }
    assert_eq!(p.counter(), 0);
    assert!(p.may_charge(2));
    p.observe(&refault(false, 0));
    assert_eq!(p.counter(), 0, "never below zero");
}
