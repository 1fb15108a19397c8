//! Hostile and unusual numbers: costs and time gaps that once overflowed the simulated
//! clock, sizes past what the model or the host can hold, and runs that cannot finish.
//! Each ends in a clear error (exit 1) or a report that says how the run really ended.

use crate::support::{fails, parse, scratch_dir, swapsim, Output};
use std::path::PathBuf;

/// Writes `files` (name, text) into a fresh directory `name` and returns its path.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch_dir("hostile", name);
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("the file can be written");
    }
    dir
}

fn run_json(dir: &std::path::Path, scenario: &str) -> (Output, serde_json::Value) {
    let path = dir.join(scenario).display().to_string();
    let out = swapsim(&["run", &path, "--format", "json"]);
    let doc = if out.stdout.is_empty() { serde_json::Value::Null } else { parse(&out.stdout) };
    (out, doc)
}

const SMALL: &str = r#"
seed = 7
[memcg]
limit = "2MiB"
[[swap.devices]]
name = "vda"
size = "64MiB"
[workload.generator]
pattern = "rand"
region = "6MiB"
passes = 2
"#;

#[test]
fn a_cost_past_the_clock_is_refused_by_name_not_a_panic() {
    let dir = scratch("cost", &[("s.toml", &format!("{SMALL}[cpu]\naccess_ns = 10000000000000000\n"))]);
    let err = fails(&["run", &dir.join("s.toml").display().to_string()]);
    assert!(err.contains("cpu.access_ns: 10000000000000000 ns is above the longest cost accepted"), "{err}");
    assert!(err.contains("(10 s, inclusive)"), "{err}");
}

#[test]
fn a_trace_gap_of_centuries_stops_at_the_time_limit_and_never_says_completed() {
    // Two faults 2^64 ns apart: the clock once overflowed here; with a limit of 10 s the
    // second fault lies past it and is never made.
    let perf = "           stress  4101/4101  [002]  0.000001: exceptions:page_fault_user: address=0x7f3a2c000000 ip=0x55e0c1a01234 error_code=0x6\n           stress  4101/4101  [002]  18446744073.709551: exceptions:page_fault_user: address=0x7f3a2c001008 ip=0x55e0c1a01234 error_code=0x6\n";
    let scenario = "seed = 1\n[memcg]\nlimit = \"2MiB\"\n[[swap.devices]]\nname = \"vda\"\nsize = \"64MiB\"\n[workload]\ntrace = \"gap.perf\"\nrepeat = 5\n[limits]\nmax_sim_seconds = 10\n";
    let dir = scratch("gap", &[("gap.perf", perf), ("s.toml", scenario)]);
    let (out, doc) = run_json(&dir, "s.toml");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(doc["outcome"]["kind"], "time_limit", "{}", out.stdout);
    assert_eq!(doc["sim_time_s"], 10.0);
    assert_eq!(doc["tasks"][0]["accesses"], 1, "the access past the limit is not made");
    // With the largest limit accepted the same trace, repeated, saturates the clock at
    // the end of time instead of wrapping it, and the run still stops at the limit, which
    // lies just before.
    let unlimited = scenario.replace("max_sim_seconds = 10", "max_sim_seconds = 9223372036854775807");
    let dir = scratch("gap-unlimited", &[("gap.perf", perf), ("s.toml", &unlimited)]);
    let (out, doc) = run_json(&dir, "s.toml");
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(doc["outcome"]["kind"], "time_limit", "{}", out.stdout);
}

#[test]
fn sizes_past_the_model_name_the_limit_and_whether_it_is_inclusive() {
    let huge = SMALL.replace("size = \"64MiB\"", "size = \"16TiB\"");
    let dir = scratch("huge", &[("s.toml", &huge)]);
    let err = fails(&["run", &dir.join("s.toml").display().to_string()]);
    assert!(
        err.contains("swap.devices[0].size: 16TiB is above the largest swap device, 16TiB minus one page (4294967295 slots of 4KiB, inclusive)"),
        "{err}"
    );
    let image = format!("{SMALL}[machine]\nmemory = \"1GiB\"\n[hibernation]\nkernel_image = \"100GiB\"\n");
    let dir = scratch("image", &[("s.toml", &image)]);
    let err = fails(&["run", &dir.join("s.toml").display().to_string()]);
    assert!(
        err.contains("hibernation.kernel_image: 100GiB is more than half of machine.memory (1GiB)"),
        "{err}"
    );
}

#[test]
fn a_readahead_window_as_large_as_the_memory_limit_is_refused() {
    let crawl = SMALL
        .replace("limit = \"2MiB\"", "limit = \"16MiB\"")
        .replace("[[swap.devices]]", "[swap]\npage_cluster = 12\nreadahead = \"fixed\"\n[[swap.devices]]");
    let dir = scratch("crawl", &[("s.toml", &crawl)]);
    let err = fails(&["run", &dir.join("s.toml").display().to_string()]);
    assert!(
        err.contains("swap.page_cluster: 12: a readahead window of 4096 pages is at least memcg.limit"),
        "{err}"
    );
    assert!(err.contains("use at most 11"), "{err}");
}

#[test]
fn tasks_paused_for_good_are_unfinished_and_exit_2() {
    let paused = format!("{SMALL}[[timeline]]\nop = \"pause-tasks\"\nat = \"1ms\"\n");
    let dir = scratch("paused", &[("s.toml", &paused)]);
    let (out, doc) = run_json(&dir, "s.toml");
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(doc["outcome"]["kind"], "unfinished", "{}", out.stdout);
    assert_eq!(doc["outcome"]["tasks"], 1);
    let text = swapsim(&["run", &dir.join("s.toml").display().to_string()]);
    let outcome = text.stdout.lines().find(|l| l.starts_with("outcome ")).expect("an outcome line");
    assert!(!outcome.contains("completed"), "{outcome}");
    assert!(outcome.contains("paused by the timeline (pause-tasks) and never resumed"), "{outcome}");
}

#[test]
fn swapon_of_a_device_already_on_fails_with_ebusy() {
    let busy = format!("{SMALL}[[timeline]]\nop = \"swapon\"\ndevice = \"vda\"\nat = \"1ms\"\n");
    let dir = scratch("busy", &[("s.toml", &busy)]);
    let (out, doc) = run_json(&dir, "s.toml");
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert_eq!(doc["operations"][0]["result"], "device \"vda\" is already on (EBUSY)");
}
