//! Tests of the registry: registering, naming a registered policy in a scenario, by an
//! edit and in a sweep, the messages for unknown and duplicate names, and the built-in
//! names unchanged.

use super::*;
use crate::sweep::{Axis, Plan, SweepOptions};
use crate::Scenario;
use expect_test::expect;
use std::sync::atomic::{AtomicUsize, Ordering};
use swapsim_core::{ClusterAllocator, FaultView, KernelWriteback, NoProtection, Order0Swapin, ReadaheadPlan};

/// Reads only the faulting page, under a name of its own.
#[derive(Clone, Debug)]
struct Alone;

impl Readahead for Alone {
    fn kind(&self) -> &'static str {
        "alone"
    }
    fn plan(&mut self, _fault: &FaultView) -> ReadaheadPlan {
        ReadaheadPlan::TargetOnly
    }
}

use crate::scenario::SMALL_SWAPPING as SMALL;

/// A registry with "alone" as a readahead policy.
fn with_alone() -> Arc<Registry> {
    let mut registry = Registry::new();
    registry.register_readahead("alone", |_: &PolicyContext| Box::new(Alone)).expect("a free name");
    registry.into_shared()
}

/// The whole error chain of `res`, or "ok".
fn message<T>(res: Result<T>) -> String {
    match res {
        Ok(_) => "ok".to_owned(),
        Err(err) => format!("{err:#}"),
    }
}

#[test]
fn a_registered_readahead_policy_runs_when_a_scenario_names_it() {
    let text = SMALL.replace("[memcg]", "[swap]\nreadahead = \"alone\"\n[memcg]");
    let scenario = Scenario::from_toml_with(&text, with_alone()).expect("the name is registered");
    let prepared = scenario.prepare().expect("valid");
    assert_eq!(prepared.resolved().swap.readahead, Choice::Registered("alone".to_owned()));
    assert_eq!(prepared.resolved().swap.readahead_resolved.name(), "alone");
    let report = prepared.run().expect("it runs");
    assert_eq!(report.readahead, "alone");
    assert!(report.vmstat.pswpin > 0, "the scenario swaps");
    assert_eq!(report.vmstat.swap_ra, 0, "the policy reads nothing ahead");
    // The same scenario and seed give the same report.
    assert_eq!(format!("{report:?}"), format!("{:?}", prepared.run().expect("it runs")));
}

#[test]
fn set_and_a_sweep_name_a_registered_policy() {
    let scenario = Scenario::from_toml_with(SMALL, with_alone()).expect("valid");
    let edited = scenario.clone().set("swap.readahead", "alone").expect("a registered name");
    assert_eq!(edited.run().expect("it runs").readahead, "alone");

    let axis = Axis::parse("swap.readahead=kernel,alone").expect("an axis");
    let plan = Plan::new(vec![axis], Vec::new()).expect("a plan");
    let run = crate::sweep(&scenario, &plan, SweepOptions { shard: None, jobs: 1, progress: &() })
        .expect("the sweep runs");
    let ran: Vec<&str> = run.variants.iter().map(|v| v.runs[0].report.readahead.as_str()).collect();
    assert_eq!(ran, ["cluster", "alone"]);
    assert!(run.variants[1].runs[0].report.vmstat.swap_ra < run.variants[0].runs[0].report.vmstat.swap_ra);
}

#[test]
fn an_unknown_name_lists_the_built_in_and_registered_names() {
    let text = SMALL.replace("[memcg]", "[swap]\nreadahead = \"alon\"\n[memcg]");
    let from_file = Scenario::from_toml_with(&text, with_alone());
    expect![[r#"scenario <inline>: swap.readahead: line 3, column 13: unknown readahead policy "alon" (built in: kernel, cluster, fixed, vma, zswap-bypass, none; registered: alone)"#]]
        .assert_eq(&message(from_file));

    let by_edit = Scenario::from_toml_with(SMALL, with_alone()).and_then(|s| s.set("thp.swapin", "alone"));
    expect![[r#"scenario <inline>: --set thp.swapin=alone: thp.swapin: unknown swap-in size policy "alone" (built in: kernel, order0, throttled, zswap-large, zswap-large-throttled; none registered)"#]]
        .assert_eq(&message(by_edit));

    // Without the registry, the name is refused where it is written.
    let without = Scenario::from_toml(SMALL).and_then(|s| s.set("swap.readahead", "alone"));
    assert!(message(without).contains("unknown readahead policy \"alone\""));

    // A timeline's set-readahead is checked as well.
    let timeline =
        format!("{SMALL}[[timeline]]\nat = \"1ms\"\nop = \"set-readahead\"\nreadahead = \"nope\"\n");
    let err = message(Scenario::from_toml_with(&timeline, with_alone()));
    assert!(
        err.contains("timeline[0].readahead: line 14, column 13: unknown readahead policy \"nope\""),
        "{err}"
    );
}

#[test]
fn a_name_is_registered_once_and_never_over_a_built_in_one() {
    let mut registry = Registry::new();
    registry.register_readahead("alone", |_: &PolicyContext| Box::new(Alone)).expect("a free name");
    let errors: Vec<String> = [
        registry.register_readahead("alone", |_: &PolicyContext| Box::new(Alone)).err(),
        registry.register_readahead("cluster", |_: &PolicyContext| Box::new(Alone)).err(),
        registry.register_readahead("a,b", |_: &PolicyContext| Box::new(Alone)).err(),
        registry.register_allocator("kernel", |_: &PolicyContext| Box::new(ClusterAllocator)).err(),
    ]
    .into_iter()
    .map(|err| err.expect("refused").to_string())
    .collect();
    expect![[r#"
        [
            "readahead policy \"alone\" is registered twice",
            "readahead policy \"cluster\" is built in; register it under another name",
            "readahead policy name \"a,b\": use letters, digits, '-', '_' and '.', starting with a letter",
            "slot allocator policy \"kernel\" is built in; register it under another name",
        ]
    "#]]
    .assert_debug_eq(&errors);
    // The same name in another family is another policy.
    registry.register_swapin("alone", |_: &PolicyContext| Box::new(Order0Swapin)).expect("another family");
    assert_eq!(registry.names(Family::Readahead), ["alone"]);
    assert_eq!(
        format!("{registry:?}"),
        r#"{"swap.readahead": ["alone"], "swap.allocator": [], "thp.swapin": ["alone"], "zswap.protection": [], "zswap.writeback": []}"#
    );
}

#[test]
fn every_family_builds_its_registered_policy_once_per_run() {
    let builds = Arc::new(AtomicUsize::new(0));
    let counted = |builds: &Arc<AtomicUsize>| {
        let builds = Arc::clone(builds);
        move || builds.fetch_add(1, Ordering::SeqCst)
    };
    let mut registry = Registry::new();
    let (a, b, c, d, e) =
        (counted(&builds), counted(&builds), counted(&builds), counted(&builds), counted(&builds));
    registry
        .register_readahead("mine", move |_: &PolicyContext| {
            a();
            Box::new(Alone)
        })
        .and_then(|r| {
            r.register_swapin("mine", move |_: &PolicyContext| {
                b();
                Box::new(Order0Swapin)
            })
        })
        .and_then(|r| {
            r.register_zswap_protection("mine", move |_: &PolicyContext| {
                c();
                Box::new(NoProtection)
            })
        })
        .and_then(|r| {
            r.register_zswap_writeback("mine", move |_: &PolicyContext| {
                d();
                Box::new(KernelWriteback)
            })
        })
        .and_then(|r| {
            r.register_allocator("mine", move |ctx: &PolicyContext| {
                assert_eq!((ctx.family, ctx.name, ctx.page_cluster), (Family::Allocator, "mine", 3));
                e();
                Box::new(ClusterAllocator)
            })
        })
        .expect("free names");
    let scenario = Scenario::from_toml_with(SMALL, registry.into_shared())
        .and_then(|s| {
            s.edits(&[
                "swap.readahead=mine",
                "swap.allocator=mine",
                "thp.swapin=mine",
                "zswap.protection=mine",
                "zswap.writeback=mine",
            ])
        })
        .expect("registered names");
    let report = scenario.run().expect("it runs");
    assert_eq!(report.readahead, "alone");
    assert_eq!(builds.load(Ordering::SeqCst), 5, "one build per family");
    let echoed = serde_json::to_value(scenario.prepare().expect("valid").resolved()).expect("serialises");
    let names = [&echoed["swap"]["allocator"], &echoed["thp"]["swapin"], &echoed["zswap"]["writeback"]];
    assert!(names.iter().all(|name| *name == "mine"), "{echoed}");
}

#[test]
fn built_in_names_stay_built_in_and_run_as_without_a_registry() {
    for family in Family::ALL {
        assert!(Registry::new().names(family).is_empty());
    }
    let builtin: ReadaheadChoice = Choice::from_name("fixed");
    assert_eq!(builtin, Choice::Builtin(swapsim_policies::ReadaheadConfig::Fixed));
    let plain = Scenario::from_toml(SMALL).expect("valid").set("swap.readahead", "fixed").expect("built in");
    let with = Scenario::from_toml_with(SMALL, with_alone()).expect("valid").set("swap.readahead", "fixed");
    let (plain, with) = (plain.run().expect("runs"), with.expect("built in").run().expect("runs"));
    assert_eq!(format!("{plain:?}"), format!("{with:?}"));
    // Echoed as before: the bare name, and the default allocator left out.
    let resolved = Scenario::from_toml(SMALL).and_then(|s| s.prepare()).expect("valid");
    let echoed = serde_json::to_value(resolved.resolved()).expect("serialises");
    assert_eq!(echoed["swap"]["readahead"], "kernel");
    assert!(echoed["swap"].get("allocator").is_none());
}

#[test]
fn a_policy_stream_is_its_own() {
    let ctx = PolicyContext {
        seed: 7,
        readahead: ReadaheadContext::default(),
        page_cluster: 3,
        family: Family::Readahead,
        name: "mine",
    };
    let other = PolicyContext { name: "other", ..ctx };
    let draw = |ctx: &PolicyContext| rand::RngCore::next_u64(&mut ctx.rng());
    assert_eq!(draw(&ctx), draw(&ctx), "derived from the seed and the name alone");
    assert_ne!(draw(&ctx), draw(&other));
    assert_ne!(draw(&ctx), draw(&PolicyContext { seed: 8, ..ctx }));
}
