//! A run is a pure function of (scenario, seed): only `host` may differ between runs.

use crate::support::{data, in_repo, parse, run_json, without_host};

#[test]
fn same_seed_gives_identical_documents() {
    let scenario = data("tiny.toml");
    let first = run_json(&scenario, &[]);
    let second = run_json(&scenario, &[]);
    assert_eq!(without_host(&first), without_host(&second));
    let doc = parse(&first);
    assert_eq!(doc["seed"], 7);
    assert!(doc["vmstat"]["pswpout"].as_u64().unwrap() > 0, "the tiny scenario must swap");
}

#[test]
fn trace_replay_is_deterministic_too() {
    let scenario = in_repo("scenarios/demo.toml");
    let shrink = ["--set", "swap.page_cluster=2"];
    assert_eq!(without_host(&run_json(&scenario, &shrink)), without_host(&run_json(&scenario, &shrink)));
}

#[test]
fn another_seed_changes_a_random_workload() {
    let scenario = data("tiny.toml");
    let seed_7 = parse(&run_json(&scenario, &[]));
    let seed_8 = parse(&run_json(&scenario, &["--seed", "8"]));
    assert_eq!(seed_8["seed"], 8);
    assert_ne!(seed_7["vmstat"], seed_8["vmstat"]);
}

#[test]
fn document_has_the_documented_shape() {
    let doc = parse(&run_json(&data("tiny.toml"), &[]));
    let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "swapsim_version",
        "seed",
        "scenario",
        "outcome",
        "sim_time_s",
        "accesses",
        "vmstat",
        "block",
        "fault_latency",
        "host",
    ] {
        assert!(keys.contains(&key), "missing {key} in {keys:?}");
    }
    let scenario = &doc["scenario"];
    assert_eq!(scenario["memcg"]["limit"], "2MiB");
    assert_eq!(scenario["memcg"]["swappiness"], 60, "defaults are filled in");
    let device = &scenario["swap"]["devices"][0];
    assert_eq!(device["model"]["name"], "virtio");
    assert!(device["model"]["read_base_us"].is_number(), "the device profile is resolved in full");
    assert_eq!(scenario["swap"]["readahead"], "kernel");
    assert_eq!(scenario["swap"]["readahead_resolved"], "cluster", "virtio is rotational");
    assert_eq!(scenario["workload"]["generator"]["pattern"], "rand");
    assert!(doc["host"]["accesses_per_s"].is_number() && doc["host"]["events_per_s"].is_number());
}
