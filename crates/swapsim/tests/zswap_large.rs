//! Large swap-in of zswap entries through whole runs: whatever the swap-in size policy, the
//! engine's invariants hold after every event (frames and slots conserved, a page in exactly
//! one place); a large folio comes in only under a policy that swaps zswap entries in
//! large, only from zswap (never from the disk, which has no synchronous path), every page
//! of it loaded from zswap; and a run is a function of its seed.

use proptest::prelude::*;
use swapsim::Scenario;
use swapsim_core::SimReport;
use swapsim_policies::SwapinConfig;

/// A small machine with 16 and 64 kB mTHP, zswap (shrinker on or off) over a disk
/// partition, and a workload of `pattern` over 6 MiB under a 2 MiB limit.
fn scenario(seed: u64, pattern: &str, shrinker: bool, swapin: SwapinConfig) -> Scenario {
    let text = format!(
        r#"
        seed = {seed}
        [machine]
        memory = "64MiB"
        cpus = 2
        [memcg]
        limit = "2MiB"
        version = 1
        page_cache = "32KiB"
        [thp]
        swapin = "{}"
        hugepages = {{ "16kB" = "always", "64kB" = "always", "2048kB" = "never" }}
        [[swap.devices]]
        name = "vda"
        size = "32MiB"
        backing = "block"
        model = {{ preset = "nvme" }}
        [zswap]
        enabled = true
        shrinker_enabled = {shrinker}
        [workload]
        contents = "half"
        [workload.generator]
        pattern = "{pattern}"
        region = "6MiB"
        passes = 2
        write_fraction = 0.3
        "#,
        swapin.name()
    );
    Scenario::from_toml(&text).expect("the scenario is valid")
}

/// Runs `scenario`, checking the engine's invariants after every event.
fn run_checked(scenario: &Scenario) -> SimReport {
    let (setup, _trace) = scenario.prepare().and_then(|p| p.setup()).expect("it builds");
    let mut sim = swapsim_core::Simulation::new(setup).expect("the setup is valid");
    sim.check_invariants();
    while sim.step().expect("the run does not fail") {
        sim.check_invariants();
    }
    sim.into_report()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn large_zswap_ins_come_only_from_zswap_and_only_when_the_policy_allows(
        choice in 0usize..SwapinConfig::ALL.len(),
        pattern in prop::sample::select(vec!["seq", "rand", "hotcold"]),
        shrinker in any::<bool>(),
        seed in 1u64..500,
    ) {
        let swapin = SwapinConfig::ALL[choice];
        let s = scenario(seed, pattern, shrinker, swapin);
        let report = run_checked(&s);
        let v = &report.vmstat;
        prop_assert!(v.zswpout > 0, "the run stores in zswap");
        let large_pages: u64 = report
            .mthp
            .iter()
            .map(|(size, m)| m.swpin * size.trim_end_matches("kB").parse::<u64>().expect("a size") / 4)
            .sum();
        let zswap_large = swapin.build().zswap_large();
        if !zswap_large {
            prop_assert_eq!(large_pages, 0, "nothing large once zswap exists");
        }
        // Every page of a large folio is loaded from zswap: the disk gives none.
        prop_assert!(large_pages <= v.zswpin, "{} pages in large folios, {} loaded", large_pages, v.zswpin);
        // Each major fault reads at least one page, from zswap or the disk.
        prop_assert!(v.pgmajfault <= v.zswpin + v.pswpin + v.swpin_zero);
        // The same scenario and seed give the same report.
        let again = run_checked(&s);
        prop_assert_eq!(format!("{report:?}"), format!("{again:?}"));
    }
}

#[test]
fn the_rfc_brings_zswap_entries_in_large_where_the_kernel_does_not() {
    let kernel = run_checked(&scenario(7, "seq", false, SwapinConfig::Kernel));
    let large = run_checked(&scenario(7, "seq", false, SwapinConfig::ZswapLarge));
    let swpin = |r: &SimReport| r.mthp.values().map(|m| m.swpin).sum::<u64>();
    assert_eq!(swpin(&kernel), 0);
    assert!(swpin(&large) > 0, "{:?}", large.mthp);
    // Without the swap cache a zswap fault reads no neighbours ahead.
    assert!(
        large.vmstat.swap_ra < kernel.vmstat.swap_ra,
        "{} {}",
        large.vmstat.swap_ra,
        kernel.vmstat.swap_ra
    );
}
