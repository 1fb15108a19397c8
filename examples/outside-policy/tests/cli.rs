//! The `swapsim-forward` binary this crate builds: the swapsim command line, with the
//! registered policies nameable by `--set` and `--vary` like the built-in ones.

use serde_json::Value;
use std::process::{Command, Output};

/// `scenarios/seq-thrash.toml` of the repository, shrunk to a run of well under a second:
/// sequential passes over twice the memory cgroup's limit.
const SHRUNK: [&str; 6] = [
    "--set",
    "memcg.limit=4MiB",
    "--set",
    "workload.generator.region=8MiB",
    "--set",
    "workload.generator.passes=2",
];

/// Runs the binary with `args` after the bundled scenario's path where `SCENARIO` stands.
fn swapsim(args: &[&str]) -> Output {
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/seq-thrash.toml");
    let args = args.iter().map(|&arg| if arg == "SCENARIO" { scenario } else { arg });
    Command::new(env!("CARGO_BIN_EXE_swapsim-forward")).args(args).output().expect("the binary runs")
}

/// The JSON document a successful command printed.
fn json(args: &[&str]) -> Value {
    let out = swapsim(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

#[test]
fn run_with_the_registered_readahead_policy() {
    let mut args = vec!["run", "SCENARIO", "--format", "json", "--set", "swap.readahead=forward"];
    args.extend(SHRUNK);
    let forward = json(&args);
    assert_eq!(forward["readahead"], "forward", "the policy that ran");
    assert_eq!(forward["scenario"]["swap"]["readahead"], "forward");
    assert_eq!(forward["scenario"]["swap"]["readahead_resolved"], "forward");
    let vmstat = &forward["vmstat"];
    assert!(vmstat["pswpin"].as_u64().unwrap() > 0, "the scenario swaps");
    assert!(vmstat["swap_ra"].as_u64().unwrap() > 0, "forward reads ahead");

    // The kernel's policy on the same scenario reads a different set of pages.
    args[5] = "swap.readahead=kernel";
    let kernel = json(&args);
    assert_eq!(kernel["readahead"], kernel["scenario"]["swap"]["readahead_resolved"]);
    assert_ne!(kernel["readahead"], "forward");
    assert_ne!(kernel["vmstat"]["swap_ra"], vmstat["swap_ra"]);
}

#[test]
fn sweep_against_the_kernel_over_two_seeds() {
    let mut args = vec!["sweep", "SCENARIO", "--vary", "swap.readahead=kernel,forward", "--seeds", "2"];
    args.extend(SHRUNK);
    args.extend(["--baseline", "swap.readahead=kernel", "--format", "json"]);
    let doc = json(&args);
    assert_eq!(doc["seeds"], 2);
    let variants = doc["variants"].as_array().expect("variants");
    let policies: Vec<&Value> = variants.iter().map(|v| &v["settings"]["swap.readahead"]).collect();
    assert_eq!(policies, ["kernel", "forward"]);
    for variant in variants {
        let runs = variant["runs"].as_array().expect("one run per seed");
        assert_eq!(runs.len(), 2);
        assert!(runs.iter().all(|run| run["report"]["vmstat"]["pswpin"].as_u64().unwrap() > 0));
    }
    let rows = doc["summary"]["rows"].as_array().expect("summary rows");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["pgmajfault"]["ratio"], 1.0, "the baseline's own ratio");
    assert!(rows[1]["pgmajfault"]["mean"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_registered_swapin_policy_is_echoed() {
    let mut args = vec!["run", "SCENARIO", "--format", "json", "--set", "thp.swapin=capped-64k"];
    args.extend(SHRUNK);
    let doc = json(&args);
    assert_eq!(doc["scenario"]["thp"]["swapin"], "capped-64k");
}

#[test]
fn an_unknown_name_lists_the_built_in_and_registered_ones() {
    let out = swapsim(&["run", "SCENARIO", "--set", "swap.readahead=backward"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--set swap.readahead=backward"), "{err}");
    assert!(err.contains("unknown readahead policy \"backward\""), "{err}");
    assert!(err.contains("built in: kernel, cluster, fixed, vma, zswap-bypass, none"), "{err}");
    assert!(err.contains("registered: forward"), "{err}");
}
