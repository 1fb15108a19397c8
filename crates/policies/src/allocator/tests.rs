//! Tests of the slot allocator policies and their configuration.

use super::*;
use expect_test::expect;
use swapsim_core::{SlotPurpose, SlotRequest, SlotSource};

/// Each policy's plan for every kind of request, one line each.
fn plans(cfg: AllocatorConfig) -> String {
    let policy = cfg.build();
    let mut out = format!("{} lists {:?}\n", policy.name(), policy.cluster_lists());
    for purpose in [SlotPurpose::SwapOut, SlotPurpose::Hibernation] {
        for (order, rotational) in [(0, false), (4, false), (0, true)] {
            let plan = policy.plan(&SlotRequest::new(order, purpose, rotational));
            out.push_str(&format!(
                "  {purpose:?} order {order}{}: {:?} then {:?}\n",
                if rotational { " rotational" } else { "" },
                plan.sources,
                plan.then
            ));
        }
    }
    out
}

#[test]
fn every_policy_plans_every_request() {
    let all: String = AllocatorConfig::ALL.into_iter().map(plans).collect();
    expect![[r#"
        kernel lists PerOrder
          SwapOut order 0: [Current, Nonfull, Free, Steal] then KeepCurrent
          SwapOut order 4: [Current, Nonfull, Free] then KeepCurrent
          SwapOut order 0 rotational: [Current, Nonfull, Free, Steal] then KeepCurrent
          Hibernation order 0: [Current, Nonfull, Free, Steal] then KeepCurrent
          Hibernation order 4: [Current, Nonfull, Free] then KeepCurrent
          Hibernation order 0 rotational: [Current, Nonfull, Free, Steal] then KeepCurrent
        free-list-scan lists FreeOnly
          SwapOut order 0: [Current, Free, Scan] then KeepCurrent
          SwapOut order 4: [Current, Free] then KeepCurrent
          SwapOut order 0 rotational: [Current, Free, Scan] then KeepCurrent
          Hibernation order 0: [Current, Free, Scan] then KeepCurrent
          Hibernation order 4: [Current, Free] then KeepCurrent
          Hibernation order 0 rotational: [Current, Free, Scan] then KeepCurrent
        hibernate-slow-path lists PerOrder
          SwapOut order 0: [Current, Nonfull, Free, Frag, Steal] then KeepCurrent
          SwapOut order 4: [Current, Nonfull, Free] then KeepCurrent
          SwapOut order 0 rotational: [Current, Nonfull, Free, Frag, Steal] then KeepCurrent
          Hibernation order 0: [Nonfull, Free, Frag, Steal] then Relocate
          Hibernation order 4: [Nonfull, Free, Frag, Steal] then Relocate
          Hibernation order 0 rotational: [Current, Nonfull, Free, Frag, Steal] then KeepCurrent
    "#]]
    .assert_eq(&all);
}

#[test]
fn names_round_trip_and_unknown_names_are_rejected() {
    for cfg in AllocatorConfig::ALL {
        assert_eq!(AllocatorConfig::from_name(cfg.name()), Ok(cfg));
        assert_eq!(cfg.build().name(), cfg.name());
        let toml = format!("a = \"{}\"", cfg.name());
        #[derive(serde::Deserialize)]
        struct A {
            a: AllocatorConfig,
        }
        assert_eq!(toml::from_str::<A>(&toml).expect("it parses").a, cfg);
    }
    let err = AllocatorConfig::from_name("pre-6.12").expect_err("no such policy");
    assert_eq!(
        err.to_string(),
        "swap.allocator: unknown policy \"pre-6.12\" (expected one of kernel, free-list-scan, hibernate-slow-path)"
    );
    assert!(AllocatorConfig::default().is_default());
}

#[test]
fn scans_are_planned_only_where_order_0_is_asked_and_large_folios_never_scan() {
    for cfg in AllocatorConfig::ALL {
        let policy = cfg.build();
        for purpose in [SlotPurpose::SwapOut, SlotPurpose::Hibernation] {
            for order in 1..=9 {
                let plan = policy.plan(&SlotRequest::new(order, purpose, false));
                if purpose == SlotPurpose::SwapOut {
                    assert!(!plan.sources.contains(&SlotSource::Scan), "{} order {order}", cfg.name());
                    assert!(!plan.sources.is_empty(), "{} order {order}", cfg.name());
                }
            }
        }
    }
}
