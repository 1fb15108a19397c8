//! Hostile numbers through whole runs: random CPU costs, device parameters and trace time
//! gaps, up to the largest each field accepts and beyond. Each run must end in a report or
//! a clear error, never a panic; a report of a run cut short by the time limit never says
//! "completed".

use proptest::prelude::*;
use swapsim::Scenario;
use swapsim_core::Outcome;

/// A perf capture of `gaps.len() + 1` page faults, the first at 1 µs and each next one
/// `gaps[i]` microseconds after the one before (at most 1.8e10 s, about 2^64 ns).
fn perf_trace(gaps: &[u64]) -> String {
    let mut us = 1u64;
    let mut text = String::new();
    for (i, gap) in std::iter::once(&0).chain(gaps).enumerate() {
        us = us.saturating_add(*gap).min(18_000_000_000_000_000);
        let addr = 0x7f3a_2c00_0000u64 + (i as u64 % 1024) * 4096;
        text.push_str(&format!(
            " stress 4101/4101 [002] {}.{:06}: exceptions:page_fault_user: address={addr:#x} ip=0x55e0c1a01234 error_code=0x6\n",
            us / 1_000_000,
            us % 1_000_000
        ));
    }
    text
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn hostile_costs_devices_and_time_gaps_end_in_a_report_or_an_error(
        access_ns in prop_oneof![6 => 0u64..2_000, 3 => 0u64..=10_000_000_000, 1 => Just(10_000_000_000_000_000)],
        fault_ns in prop_oneof![6 => 0u64..5_000, 3 => Just(10_000_000_000), 1 => Just(i64::MAX as u64)],
        wakeup_ns in 0u64..=10_000_000_000,
        channels in prop_oneof![8 => 1u32..=4, 1 => Just(4096), 1 => Just(5000)],
        read_base_us in prop_oneof![8 => 0.0f64..100.0, 1 => Just(1e9), 1 => Just(1e300)],
        bandwidth in prop_oneof![1 => Just(0.001), 8 => 1.0f64..10_000.0, 1 => Just(1e12)],
        jitter in prop_oneof![3 => Just(0.0), 6 => 0.0f64..=2.0, 1 => Just(3.0)],
        gaps in prop::collection::vec(
            prop_oneof![8 => 0u64..1_000, 1 => Just(4_294_967_296_000_000), 1 => Just(1u64 << 62)],
            1..40,
        ),
        max_sim_seconds in prop_oneof![Just(10u64), Just(86_400), Just(i64::MAX as u64)],
        repeat in 1u32..=5,
    ) {
        let dir = std::env::temp_dir().join(format!("swapsim-hostile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let trace = dir.join(format!("t{}.perf", gaps.len()));
        std::fs::write(&trace, perf_trace(&gaps)).expect("the trace is written");
        let toml = format!(
            r#"
            seed = 5
            [memcg]
            limit = "1MiB"
            [[swap.devices]]
            name = "vda"
            size = "64MiB"
            model = {{ preset = "virtio", channels = {channels}, read_base_us = {read_base_us:e}, bandwidth_mib_s = {bandwidth:e}, jitter_cv = {jitter:e} }}
            [workload]
            trace = "{}"
            repeat = {repeat}
            [cpu]
            access_ns = {access_ns}
            fault_ns = {fault_ns}
            wakeup_ns = {wakeup_ns}
            [limits]
            max_sim_seconds = {max_sim_seconds}
            "#,
            trace.display()
        );
        match Scenario::from_toml(&toml).and_then(|s| s.run()) {
            Err(err) => {
                let text = format!("{err:#}");
                prop_assert!(!text.is_empty());
            }
            Ok(report) => {
                let limit_ns = u128::from(max_sim_seconds) * 1_000_000_000;
                if report.outcome == Outcome::Completed {
                    prop_assert!(u128::from((report.sim_time_s * 1e9) as u64) <= limit_ns + 1_000);
                }
            }
        }
    }
}
