//! The named experiments at reduced scale: the published directions must hold.
//! Issue 3 (swapoff readahead and plug merging experiments).

use crate::support::*;
use serde_json::Value;

fn experiment(name: &str, scale: &str) -> Value {
    parse(&ok(&["experiment", "run", name, "--scale", scale, "--format", "json"]))
}

#[test]
fn list_names_both_experiments() {
    let text = ok(&["experiment", "list"]);
    assert!(text.contains("swapoff-readahead") && text.contains("plug-merge"), "{text}");
}

#[test]
fn swapoff_readahead_fixed_beats_pre_5_8_scaling() {
    let doc = experiment("swapoff-readahead", "0.03");
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 32, "page-cluster 1..8 under four policies");
    let time = |policy: &str, pc: u64| {
        rows.iter()
            .find(|r| r["policy"] == policy && r["page_cluster"] == pc)
            .and_then(|r| r["swapoff_s"].as_f64())
            .unwrap_or_else(|| panic!("no row {policy} {pc}"))
    };
    for pc in 3..=5 {
        let ratio = time("scaling-pre-5.8", pc) / time("fixed", pc);
        assert!(ratio >= 1.5, "page-cluster {pc}: fixed only {ratio:.2}x faster");
    }
    // Crediting swapoff's hits lets the scaling window grow.
    assert!(time("scaling", 3) < time("scaling-pre-5.8", 3));
    for r in rows {
        assert!(r["pswpin"].as_u64().expect("pswpin") > 0);
        for key in ["policy", "page_cluster", "swapoff_s", "pswpin", "read_requests"] {
            assert!(!r[key].is_null(), "row lacks {key}");
        }
    }
    assert_eq!(doc["verdict"]["direction_matches"], true, "{}", doc["verdict"]);
    assert!(doc["host"]["wall_s"].is_number());
}

#[test]
fn plug_merge_cuts_dispatches_per_mib() {
    let doc = experiment("plug-merge", "0.1");
    let rows = doc["rows"].as_array().expect("rows");
    let per_mib = |plug: bool| {
        let r = rows.iter().find(|r| r["plug"] == plug).expect("row");
        for key in
            ["device", "reads_queued", "read_dispatches", "read_merges", "read_mib", "throughput_mib_s"]
        {
            assert!(!r[key].is_null(), "row lacks {key}");
        }
        r["read_dispatches"].as_f64().expect("dispatches") / r["read_mib"].as_f64().expect("MiB")
    };
    let ratio = per_mib(false) / per_mib(true);
    assert!(ratio >= 2.0, "plugging cut dispatches per MiB only {ratio:.2}x");
}

#[test]
fn unknown_experiment_is_an_error() {
    let err = fails(&["experiment", "run", "nope"]);
    assert!(err.contains("unknown experiment \"nope\"") && err.contains("swapoff-readahead"), "{err}");
}
