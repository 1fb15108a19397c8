//! `swapsim demo`: four readahead policies over the bundled workload.

use crate::support::{ok, parse, without_host};

#[test]
fn demo_json_holds_one_full_report_per_policy() {
    let raw = ok(&["demo", "--format", "json"]);
    let doc = parse(&raw);
    let variants = doc["variants"].as_array().expect("variants is an array");
    let names: Vec<&str> = variants.iter().map(|v| v["readahead"].as_str().unwrap()).collect();
    assert_eq!(names, ["cluster", "fixed", "vma", "none"]);
    for variant in variants {
        let report = &variant["report"];
        assert_eq!(report["readahead"], variant["readahead"], "the policy that ran is the one asked for");
        assert_eq!(report["scenario"]["swap"]["readahead"], variant["readahead"]);
        assert_eq!(report["scenario"]["workload"]["trace"], "traces/demo-zipf.trace.zst");
        assert!(report.get("host").is_none(), "per-variant reports carry no host figures");
        for key in ["swapsim_version", "seed", "outcome", "vmstat", "block", "fault_latency", "sim_time_s"] {
            assert!(report.get(key).is_some(), "missing {key}");
        }
        assert_eq!(report["outcome"]["kind"], "completed");
        assert!(report["vmstat"]["pgmajfault"].as_u64().unwrap() > 0);
    }
    assert_eq!(variants[3]["report"]["vmstat"]["swap_ra"], 0, "no readahead reads nothing extra");
    let fixed_ra = variants[1]["report"]["vmstat"]["swap_ra"].as_u64().unwrap();
    let cluster_ra = variants[0]["report"]["vmstat"]["swap_ra"].as_u64().unwrap();
    assert!(fixed_ra > cluster_ra, "a fixed window reads ahead more than the scaling one");
    assert!(doc["host"]["wall_s"].is_number());
    // Reproducible apart from `host`.
    assert_eq!(without_host(&raw), without_host(&ok(&["demo", "--format", "json"])));
}

#[test]
fn demo_table_compares_the_policies_side_by_side() {
    let text = ok(&["demo"]);
    let header = text.lines().find(|l| l.starts_with("readahead ")).expect("a header row");
    let columns: Vec<&str> = header.split_whitespace().skip(1).collect();
    assert_eq!(columns, ["cluster", "fixed", "vma", "none"]);
    for row in [
        "pgmajfault",
        "pswpin",
        "pswpout",
        "swap_ra ",
        "swap_ra_hit",
        "read dispatches",
        "reads per dispatch",
        "major fault p50 µs",
        "major fault p99 µs",
        "simulated time s",
    ] {
        let line = text.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no row {row}"));
        let n_values = line[row.len()..].split_whitespace().count();
        assert_eq!(n_values, 4, "row {row}: {line}");
    }
    assert!(
        text.contains("seed 1 · 24GiB RAM · memcg 32MiB · swap vda 2GiB this-vm · page-cluster 3"),
        "{text}"
    );
}
