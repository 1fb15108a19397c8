//! What users type: sizes in decimal, binary and kernel units, trace paths given in a
//! scenario file or on the command line, and text traces with hexadecimal page numbers.

use crate::support::{data, fails, ok, repo, swapsim_in, without_host};

/// Runs `swapsim` from `cwd` expecting success and returns stdout.
fn ok_in(cwd: &std::path::Path, args: &[&str]) -> String {
    let out = swapsim_in(cwd, args);
    assert!(out.success, "swapsim {args:?} in {} failed: {}", cwd.display(), out.stderr);
    out.stdout
}

/// Runs `swapsim` from `cwd` expecting failure and returns its message.
fn fails_in(cwd: &std::path::Path, args: &[&str]) -> String {
    let out = swapsim_in(cwd, args);
    assert!(!out.success, "swapsim {args:?} in {} succeeded", cwd.display());
    assert!(out.stderr.starts_with("error: "), "unexpected stderr: {}", out.stderr);
    out.stderr
}

#[test]
fn a_trace_path_on_the_command_line_is_relative_to_the_current_directory() {
    // The scenario names a trace that does not exist; both flags replace it with the same
    // path, relative to wherever the command runs.
    for (cwd, dir) in [(repo(), "crates/cli/tests/data"), (repo().join("crates/cli/tests"), "data")] {
        let scenario = format!("{dir}/missing-trace.toml");
        let trace = format!("{dir}/small.trace");
        let by_flag = ok_in(&cwd, &["run", &scenario, "--format", "json", "--trace", &trace]);
        let set = format!("workload.trace={trace}");
        let by_set = ok_in(&cwd, &["run", &scenario, "--format", "json", "--set", &set]);
        assert_eq!(without_host(&by_flag), without_host(&by_set), "run in {}", cwd.display());
        assert!(by_set.contains(&format!("\"trace\": \"{trace}\"")), "{by_set}");
    }
}

#[test]
fn a_trace_path_in_a_scenario_is_relative_to_the_scenario_file() {
    // Run from crates/cli: bad-trace.toml's "bad.trace" is found next to the scenario.
    let cwd = repo().join("crates/cli");
    let err = fails_in(&cwd, &["run", "tests/data/bad-trace.toml"]);
    assert!(err.contains("trace tests/data/bad.trace") && err.contains("line 3, column 1"), "{err}");
    let err = fails_in(&cwd, &["run", "tests/data/missing-trace.toml"]);
    assert!(
        err.contains(
            "cannot open trace tests/data/no-such-file.trace \
             (workload.trace in the scenario, relative to the scenario file's directory)"
        ),
        "{err}"
    );
    let err = fails_in(&cwd, &["run", "tests/data/tiny.toml", "--trace", "no-such.trace"]);
    assert!(
        err.contains("cannot open trace no-such.trace (--trace, relative to the current directory)"),
        "{err}"
    );
    let err =
        fails_in(&cwd, &["run", "tests/data/missing-trace.toml", "--set", "workload.trace=no-such.trace"]);
    assert!(
        err.contains(
            "cannot open trace no-such.trace (--set workload.trace, relative to the current directory)"
        ),
        "{err}"
    );
}

#[test]
fn sizes_name_the_field_and_list_the_units() {
    let err = fails(&["run", &data("tiny.toml"), "--set", "memcg.limit=256KB"]);
    assert!(err.contains("--set memcg.limit=256KB: \"256KB\" has an unknown unit \"KB\""), "{err}");
    assert!(err.contains("write 256kB for powers of 1000 or 256KiB for powers of 1024"), "{err}");
    assert!(err.contains("accepted units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB"), "{err}");
    let err = fails(&["run", &data("bad-size.toml")]);
    assert!(err.contains("bad-size.toml: memcg.limit: TOML parse error at line 2, column 9"), "{err}");
    let err = fails(&["trace", "generate", "--phase", "seq:1 MB:1", "-o", "/dev/null"]);
    assert!(err.contains("976.56KiB (1000000 bytes) is not a whole number of 4096-byte pages"), "{err}");
    let err = fails(&["trace", "generate", "--pattern", "seq", "--region", "1 Mb", "-o", "/dev/null"]);
    assert!(err.contains("--pattern: region: \"1 Mb\" has an unknown unit \"Mb\""), "{err}");
}

#[test]
fn decimal_sizes_are_powers_of_1000_and_print_in_binary_units() {
    let report = ok(&["run", &data("tiny.toml"), "--set", "memcg.limit=2MB"]);
    assert!(report.contains("memcg 1.91MiB (2000000 bytes)"), "{report}");
    let doc = ok(&["run", &data("tiny.toml"), "--set", "memcg.limit=2 MB", "--format", "json"]);
    // JSON keeps the exact size, in a form that reads back to the same bytes.
    assert!(doc.contains("\"limit\": \"2000000\""), "{doc}");
    let binary = ok(&["run", &data("tiny.toml"), "--set", "memcg.limit=2048k"]);
    assert!(binary.contains("memcg 2MiB"), "{binary}");
}

#[test]
fn text_traces_take_hexadecimal_pages_with_0x() {
    let report = ok(&["run", &data("tiny.toml"), "--trace", &data("hex.trace"), "--format", "json"]);
    assert!(report.contains("\"records\": 4"), "{report}");
    let err = fails(&["run", &data("tiny.toml"), "--trace", &data("hex-no-prefix.trace")]);
    assert!(err.contains("hex-no-prefix.trace"), "{err}");
    assert!(
        err.contains(
            "line 3, column 3: expected a page number (decimal, or hexadecimal with 0x), \
             found \"1f\" (hexadecimal needs the 0x prefix)"
        ),
        "{err}"
    );
}
