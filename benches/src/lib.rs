//! Shared set-up for the benchmarks and the measurement examples: one 512 MiB virtio swap
//! device and the kernel's scaling cluster readahead, from a fixed seed.
//!
//! The set-up is a scenario run through the `swapsim` library, so a benchmark builds its
//! components exactly as `swapsim run` would for the same scenario and cannot drift from
//! it.

use swapsim::Scenario;
use swapsim_core::gen::GeneratorConfig;
use swapsim_core::{ByteSize, Setup};

/// Seed of every benchmark run.
pub const SEED: u64 = 42;

/// The machine, swap device and policy every benchmark shares.
const BASE: &str = r#"
[swap]
readahead = "cluster"
[[swap.devices]]
name = "vda"
size = "512MiB"
model = { preset = "virtio" }
"#;

/// The scenario of a run of `gen` under `memcg_limit` (`None`: unlimited).
pub fn scenario(gen: &GeneratorConfig, memcg_limit: Option<ByteSize>, page_cluster: u32) -> Scenario {
    let generator = toml::Value::try_from(gen).expect("a generator config serialises");
    let mut scenario = Scenario::from_toml(BASE)
        .and_then(|s| s.set("swap.page_cluster", &page_cluster.to_string()))
        .and_then(|s| s.set("workload.generator", &generator.to_string()))
        .expect("the benchmark scenario is valid")
        .with_seed(SEED);
    if let Some(limit) = memcg_limit {
        scenario = scenario.set("memcg.limit", &limit.0.to_string()).expect("a limit in bytes is valid");
    }
    scenario
}

/// The engine set-up of a run of `gen` under `memcg_limit`, built as `swapsim run` builds it.
pub fn setup(gen: &GeneratorConfig, memcg_limit: Option<ByteSize>, page_cluster: u32) -> Setup {
    let prepared =
        scenario(gen, memcg_limit, page_cluster).prepare().expect("the benchmark scenario is valid");
    let (setup, _) = prepared.setup().expect("the virtio preset builds");
    setup
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim_core::gen::Pattern;
    use swapsim_core::Outcome;

    /// The generator survives the trip through the scenario's TOML, and the run swaps.
    #[test]
    fn the_shared_scenario_runs_the_generator_given() {
        let mut gen = GeneratorConfig::new(Pattern::Rand, ByteSize::mib(4));
        gen.passes = 2;
        gen.write_fraction = 0.5;
        let prepared = scenario(&gen, Some(ByteSize::mib(1)), 0).prepare().expect("valid");
        assert_eq!(prepared.generator(), Some(&gen));
        assert_eq!(prepared.seed(), SEED);
        let report = swapsim_core::run(setup(&gen, Some(ByteSize::mib(1)), 0)).expect("run succeeds");
        assert_eq!(report.outcome, Outcome::Completed);
        assert!(report.vmstat.pswpin > 0);
    }
}
