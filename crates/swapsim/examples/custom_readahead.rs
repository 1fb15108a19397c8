//! The worked example of docs/writing-a-policy.md: a forward readahead policy, its tests,
//! and a comparison with the kernel's policy, kept compiled and tested so that the guide's
//! code cannot rot. A test below checks that every Rust block of the guide appears here or
//! in the policy's file (`examples/outside-policy/src/forward.rs`) word for word.
//!
//! `cargo run --release -p swapsim --example custom_readahead` prints the comparison;
//! `cargo test -p swapsim --example custom_readahead` runs the tests.
//!
//! The policy is not one of the product's: it exists to be read. In the guide it goes to
//! `crates/policies/src/readahead/forward.rs` and is wired into `ReadaheadConfig`; here it
//! is handed to the engine directly, which is also how to try a policy before wiring it.

// The policy and its unit tests live in one file, shared with the crate of one's own in
// examples/outside-policy, where the guide's last section puts them.
#[path = "../../../examples/outside-policy/src/forward.rs"]
mod forward;
pub use forward::ForwardReadahead;

/// Runs `scenario` once with the policy it names and once with `ForwardReadahead`.
fn compare(scenario: &swapsim::Scenario) -> anyhow::Result<[swapsim_core::SimReport; 2]> {
    let prepared = scenario.prepare()?;
    let kernel = prepared.run()?;
    let (mut setup, _trace) = prepared.setup()?;
    setup.policies = swapsim_core::Policies::default().with_readahead(Box::new(ForwardReadahead));
    let forward = swapsim_core::run(setup)?;
    Ok([kernel, forward])
}

/// One figure of a report, as a number.
type Figure = fn(&swapsim_core::SimReport) -> f64;

fn main() -> anyhow::Result<()> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/seq-thrash.toml");
    let scenario = swapsim::Scenario::load(path)?
        .set("memcg.limit", "64MiB")?
        .set("workload.generator.region", "128MiB")?;
    let reports = compare(&scenario)?;
    println!("{:<24} {:>12} {:>12}", "seq-thrash, shrunk", reports[0].readahead, reports[1].readahead);
    let rows: [(&str, Figure); 6] = [
        ("pgmajfault", |r| r.vmstat.pgmajfault as f64),
        ("pswpin", |r| r.vmstat.pswpin as f64),
        ("swap_ra", |r| r.vmstat.swap_ra as f64),
        ("swap_ra_hit", |r| r.vmstat.swap_ra_hit as f64),
        ("read dispatches", |r| r.block[0].reads.dispatches as f64),
        ("simulated time s", |r| r.sim_time_s),
    ];
    for (name, value) in rows {
        let [kernel, forward] = [value(&reports[0]), value(&reports[1])];
        let digits = if name.ends_with(" s") { 3 } else { 0 };
        println!("{name:<24} {kernel:>12.digits$} {forward:>12.digits$}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A small scenario that swaps: `tasks` tasks of `pattern` over 3 MiB each under a
    /// 1 MiB limit; afterwards the limit is lifted and the device swapped off, so that
    /// swapoff's synthetic faults are planned too.
    fn small(pattern: &str, tasks: u32, page_cluster: u32, seed: u64) -> swapsim::Scenario {
        let toml = format!(
            r#"
            seed = {seed}
            [machine]
            cpus = 2
            [memcg]
            limit = "1MiB"
            [swap]
            page_cluster = {page_cluster}
            [[swap.devices]]
            name = "vda"
            size = "32MiB"
            [workload.generator]
            pattern = "{pattern}"
            region = "3MiB"
            passes = 2
            tasks = {tasks}
            [[timeline]]
            at = "workload-end"
            op = "set-memcg-limit"
            limit = "64MiB"
            [[timeline]]
            op = "swapoff"
            device = "vda"
            "#
        );
        swapsim::Scenario::from_toml(&toml).expect("the scenario is valid")
    }

    /// Runs `scenario` under `ForwardReadahead`, checking the engine's invariants after
    /// every event, and returns the report.
    fn run_checked(scenario: &swapsim::Scenario) -> swapsim_core::SimReport {
        let (mut setup, _trace) = scenario.prepare().and_then(|p| p.setup()).expect("it builds");
        setup.policies = swapsim_core::Policies::default().with_readahead(Box::new(ForwardReadahead));
        let mut sim = swapsim_core::Simulation::new(setup).expect("the setup is valid");
        sim.check_invariants();
        while sim.step().expect("the run does not fail") {
            sim.check_invariants();
        }
        sim.into_report()
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
            ..ProptestConfig::default()
        })]

        #[test]
        fn the_engine_keeps_its_invariants_and_the_run_is_deterministic(
            pattern in prop::sample::select(&["seq", "rand", "zipf", "stride"][..]),
            tasks in 1u32..3,
            page_cluster in 0u32..5,
            seed in 1u64..1000,
        ) {
            let scenario = small(pattern, tasks, page_cluster, seed);
            let report = run_checked(&scenario);
            prop_assert_eq!(report.readahead.as_str(), "forward");
            let v = &report.vmstat;
            prop_assert!(v.pswpout > 0, "the scenario swaps");
            // Swapoff brought everything back, and it took no faults to do it.
            let swapoff = report.operations.last().expect("swapoff ran");
            prop_assert_eq!(swapoff.result.as_str(), "completed");
            prop_assert_eq!(report.at_end.swap_slots_used, 0);
            // Every page the workload read is its faulting page or a readahead page.
            prop_assert_eq!(v.pswpin - swapoff.pswpin, v.pgmajfault + v.swap_ra - swapoff.swap_ra);
            prop_assert!(v.swap_ra_hit <= v.swap_ra);
            // The same scenario and seed give the same report.
            prop_assert_eq!(format!("{report:?}"), format!("{:?}", run_checked(&scenario)));
        }
    }

    #[test]
    fn compare_runs_the_scenario_under_both_policies() {
        let [kernel, forward] = compare(&small("seq", 1, 3, 1)).expect("both run");
        // The default device reports rotational, so the kernel's choice is cluster readahead.
        assert_eq!((kernel.readahead.as_str(), forward.readahead.as_str()), ("cluster", "forward"));
        assert_eq!(kernel.accesses, forward.accesses);
    }

    /// The guide shows code from this file: every Rust block of docs/writing-a-policy.md
    /// before "From a crate of your own" must appear here word for word, and every line a
    /// `diff` block keeps or removes must be in the file the block names, so that the patch
    /// still applies. The section "From a crate of your own" shows the crate
    /// `examples/outside-policy/`: its Rust blocks are in that crate's sources and its
    /// TOML block in its Cargo.toml.
    #[test]
    fn the_guide_shows_this_code() {
        let guide = include_str!("../../../docs/writing-a-policy.md");
        let (in_repo, outside) = guide.split_once("\n## From a crate of your own").expect("the section");
        let this_file = [
            include_str!("custom_readahead.rs"),
            include_str!("../../../examples/outside-policy/src/forward.rs"),
        ]
        .concat();
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut n_rust = 0;
        let mut n_diff = 0;
        for (tag, body) in blocks(in_repo) {
            match tag {
                "rust" => {
                    n_rust += 1;
                    assert!(
                        this_file.contains(body.trim_end()),
                        "a Rust block of the guide is not here:\n{body}"
                    );
                }
                "diff" => {
                    n_diff += 1;
                    let mut lines = body.lines();
                    let target =
                        lines.next().and_then(|l| l.strip_prefix("--- a/")).expect("--- a/PATH first");
                    let text = std::fs::read_to_string(repo.join(target)).expect("the diff's file exists");
                    for line in lines.filter(|l| l.starts_with(' ') || l.starts_with('-')) {
                        let line = line[1..].trim();
                        assert!(text.contains(line), "{target} no longer has the line {line:?}");
                    }
                }
                _ => {}
            }
        }
        assert!(n_rust >= 4 && n_diff >= 1, "{n_rust} Rust and {n_diff} diff blocks");

        let krate = repo.join("examples/outside-policy");
        let read = |path: &str| std::fs::read_to_string(krate.join(path)).expect("a file of the crate");
        let sources: String =
            ["src/lib.rs", "src/main.rs", "src/forward.rs", "src/capped.rs", "tests/cli.rs"]
                .map(read)
                .concat();
        let manifest = read("Cargo.toml");
        let mut n_checked = 0;
        for (tag, body) in blocks(outside) {
            let file = match tag {
                "rust" => &sources,
                "toml" => &manifest,
                _ => continue,
            };
            n_checked += 1;
            assert!(
                file.contains(body.trim_end()),
                "a {tag} block of the guide is not in the crate:\n{body}"
            );
        }
        assert!(n_checked >= 5, "{n_checked} blocks of the crate checked");
    }

    /// The fenced blocks of `text`, as (tag, body).
    fn blocks(text: &str) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        let mut parts = text.split("\n```");
        while let (Some(_prose), Some(block)) = (parts.next(), parts.next()) {
            out.push(block.split_once('\n').unwrap_or((block, "")));
        }
        out
    }
}
