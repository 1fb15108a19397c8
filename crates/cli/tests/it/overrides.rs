//! `--set key=value` edits the scenario before it is read, and rejects unknown keys.

use crate::support::{data, fails, parse, run_json};

#[test]
fn set_changes_sections_and_devices() {
    let doc = parse(&run_json(
        &data("tiny.toml"),
        &[
            "--set",
            "memcg.limit=3MiB",
            "--set",
            "swap.page_cluster=0",
            "--set",
            "swap.readahead=fixed",
            "--set",
            "swap.devices.0.model.preset=nvme",
            "--set",
            "swap.devices.0.model.jitter_cv=0",
        ],
    ));
    let scenario = &doc["scenario"];
    assert_eq!(scenario["memcg"]["limit"], "3MiB");
    assert_eq!(scenario["swap"]["page_cluster"], 0);
    assert_eq!(scenario["swap"]["readahead_resolved"], "fixed");
    assert_eq!(doc["readahead"], "fixed", "the policy that ran");
    assert_eq!(scenario["swap"]["devices"][0]["model"]["name"], "nvme");
    assert_eq!(scenario["swap"]["devices"][0]["model"]["jitter_cv"], 0.0);
    assert_eq!(doc["block"][0]["model"], "nvme");
}

#[test]
fn set_changes_the_outcome() {
    let small = parse(&run_json(&data("tiny.toml"), &["--set", "memcg.limit=1MiB"]));
    let large = parse(&run_json(&data("tiny.toml"), &["--set", "memcg.limit=64MiB"]));
    assert!(small["vmstat"]["pswpout"].as_u64().unwrap() > 0);
    assert_eq!(large["vmstat"]["pswpout"], 0, "nothing swaps when the region fits");
}

#[test]
fn unknown_keys_are_rejected() {
    let err = fails(&["run", &data("tiny.toml"), "--set", "memcg.limt=1MiB"]);
    assert!(err.contains("--set memcg.limt=1MiB") && err.contains("unknown field `limt`"), "{err}");
    let err = fails(&["run", &data("tiny.toml"), "--set", "memcgg.limit=1MiB"]);
    assert!(err.contains("unknown field `memcgg`"), "{err}");
    let err = fails(&["run", &data("tiny.toml"), "--set", "swap.devices.3.name=x"]);
    assert!(err.contains("swap.devices has no element 3"), "{err}");
    let err = fails(&["run", &data("tiny.toml"), "--set", "seed.value=3"]);
    assert!(err.contains("seed is not a table"), "{err}");
    let err = fails(&["run", &data("tiny.toml"), "--set", "memcg.limit"]);
    assert!(err.contains("expected KEY=VALUE"), "{err}");
}

#[test]
fn bad_values_name_the_edit() {
    let err = fails(&["run", &data("tiny.toml"), "--set", "memcg.limit=12 parsecs"]);
    assert!(err.contains("--set memcg.limit=12 parsecs") && err.contains("unknown unit"), "{err}");
    let err = fails(&["run", &data("tiny.toml"), "--set", "swap.readahead=eager"]);
    assert!(err.contains("eager"), "{err}");
}

#[test]
fn trace_flag_replaces_the_generator() {
    let doc = parse(&run_json(&data("tiny.toml"), &["--trace", &data("small.trace")]));
    assert!(doc["scenario"]["workload"]["trace"].as_str().unwrap().ends_with("small.trace"));
    assert_eq!(doc["outcome"]["kind"], "completed");
    assert!(doc["vmstat"]["pswpin"].as_u64().unwrap() > 0, "4 MiB read back under a 2 MiB limit");
}
