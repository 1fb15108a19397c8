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
    assert_eq!(err, "thp.swapin: unknown policy \"always\" (expected one of kernel, order0, throttled, zswap-large, zswap-large-throttled)");
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

#[test]
fn zswap_large_keeps_the_wrapped_choice_and_only_adds_zswap_entries() {
    let view = SwapinView::new(1 << 2 | 1 << 4);
    for c in [SwapinConfig::Kernel, SwapinConfig::Order0, SwapinConfig::Throttled] {
        assert!(!c.build().zswap_large(), "{}", c.name());
    }
    let mut large = SwapinConfig::ZswapLarge.build();
    assert!(large.zswap_large());
    assert_eq!(large.orders(&view), 1 << 2 | 1 << 4);
    // Throttled underneath: a recent large refault refuses large charges, zswap or not.
    let mut throttled = SwapinConfig::ZswapLargeThrottled.build();
    assert!(throttled.zswap_large() && throttled.may_charge(2));
    throttled.observe(&refault(true, 2));
    assert!(!throttled.may_charge(2) && throttled.may_charge(0));
    assert!(large.may_charge(2));
}
