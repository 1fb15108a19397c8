//! Bad input ends in a non-zero exit and one message naming the file, line or field;
//! never in a panic (`support::swapsim` fails the test on any panic message).

use crate::support::{data, fails, in_repo};

fn run_fails(scenario: &str, extra: &[&str]) -> String {
    let mut args = vec!["run", scenario];
    args.extend_from_slice(extra);
    fails(&args)
}

#[test]
fn misspelled_key_names_file_line_and_key() {
    let err = run_fails(&data("bad-key.toml"), &[]);
    assert!(err.contains("bad-key.toml"), "{err}");
    assert!(err.contains("line 5, column 1"), "{err}");
    assert!(err.contains("unknown field `limt`"), "{err}");
}

#[test]
fn bad_size_names_line_and_value() {
    let err = run_fails(&data("bad-size.toml"), &[]);
    assert!(err.contains("bad-size.toml") && err.contains("line 2"), "{err}");
    assert!(
        err.contains("memcg.limit") && err.contains("12 parsecs") && err.contains("unknown unit"),
        "{err}"
    );
}

#[test]
fn unknown_readahead_policy_lists_the_choices() {
    let err = run_fails(&data("bad-readahead.toml"), &[]);
    assert!(err.contains("bad-readahead.toml") && err.contains("line 3"), "{err}");
    assert!(err.contains("aggressive") && err.contains("cluster"), "{err}");
}

#[test]
fn unknown_device_preset_names_the_field() {
    let err = run_fails(&data("bad-preset.toml"), &[]);
    assert!(err.contains("bad-preset.toml"), "{err}");
    assert!(err.contains("swap.devices[0].model: preset: unknown device preset \"ssd\""), "{err}");
}

#[test]
fn missing_trace_names_the_path() {
    let err = run_fails(&data("missing-trace.toml"), &[]);
    assert!(err.contains("no-such-file.trace") && err.contains("cannot open trace"), "{err}");
    let err = run_fails(&data("tiny.toml"), &["--trace", "nowhere/at-all.trace"]);
    assert!(err.contains("nowhere/at-all.trace"), "{err}");
}

#[test]
fn malformed_trace_line_names_path_and_line() {
    let err = run_fails(&data("bad-trace.toml"), &[]);
    assert!(err.contains("bad.trace"), "{err}");
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn missing_scenario_file() {
    let err = run_fails("does/not/exist.toml", &[]);
    assert!(err.contains("cannot read scenario does/not/exist.toml"), "{err}");
}

#[test]
fn out_of_range_values_name_the_field() {
    let err = run_fails(&data("tiny.toml"), &["--set", "memcg.swappiness=300"]);
    assert!(err.contains("tiny.toml") && err.contains("memcg.swappiness: 300 is outside 0..=200"), "{err}");
    let err = run_fails(&data("tiny.toml"), &["--set", "workload.generator.write_fraction=2.0"]);
    assert!(err.contains("workload.generator.write_fraction"), "{err}");
    let err = run_fails(&in_repo("scenarios/jobs.toml"), &["--set", "workload.jobs.concurrency=0"]);
    assert!(err.contains("jobs.toml") && err.contains("workload.jobs.concurrency: 0 is below 1"), "{err}");
}

#[test]
fn workload_must_be_exactly_one() {
    let err = run_fails(&data("tiny.toml"), &["--set", "workload.trace=x.trace"]);
    assert!(
        err.contains(
            "workload: give one of trace, [workload.generator], [workload.jobs] or [workload.queue], not trace and [workload.generator]"
        ),
        "{err}"
    );
    let err = run_fails(&data("tiny.toml"), &["--set", "workload.jobs.concurrency=2"]);
    assert!(err.contains("not [workload.generator] and [workload.jobs]"), "{err}");
    let err = run_fails(&data("no-workload.toml"), &[]);
    assert!(err.contains("workload: missing"), "{err}");
}

#[test]
fn bad_command_line_is_rejected_by_clap() {
    let out = crate::support::swapsim(&["run", &in_repo("scenarios/demo.toml"), "--format", "yaml"]);
    assert!(!out.success);
    assert!(out.stderr.contains("yaml"), "{}", out.stderr);
}

#[test]
fn bad_zswap_knobs_name_the_field() {
    let tiny = data("tiny.toml");
    let err = run_fails(&tiny, &["--set", "zswap.enabled=true", "--set", "zswap.max_pool_percent=101"]);
    assert!(
        err.contains("tiny.toml") && err.contains("zswap.max_pool_percent: 101 is outside 0..=100"),
        "{err}"
    );
    let err = run_fails(&tiny, &["--set", "zswap.compressor=\"lz5\""]);
    assert!(err.contains("zswap.compressor") && err.contains("unknown variant `lz5`"), "{err}");
    let err = run_fails(&tiny, &["--set", "memcg.version=1", "--set", "memcg.zswap_max=\"1MiB\""]);
    assert!(err.contains("memcg.zswap_max: cgroup v1 has no such file"), "{err}");
    let err = run_fails(&tiny, &["--set", "workload.contents={sizes=[]}"]);
    assert!(err.contains("workload.contents.sizes: the table is empty"), "{err}");
}
