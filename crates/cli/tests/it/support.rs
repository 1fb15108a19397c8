//! The one place that runs the binary and picks its output apart.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// What one invocation produced.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) success: bool,
    /// The exit status: 0 ok, 1 usage or input error, 2 the simulated system failed.
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// A fresh, empty directory for one test's files: `NAME` under the test module's
/// `GROUP`, in Cargo's scratch directory for tests; what an earlier run left there goes.
pub(crate) fn scratch_dir(group: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(group).join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("the old scratch directory can be removed");
    }
    std::fs::create_dir_all(&dir).expect("the scratch directory can be created");
    dir
}

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository exists")
}

/// A file under `crates/cli/tests/data/`, as a string argument.
pub(crate) fn data(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name).display().to_string()
}

/// A file under the repository root, as a string argument.
pub(crate) fn in_repo(path: &str) -> String {
    repo().join(path).display().to_string()
}

/// Runs `swapsim` with `args` from the repository root.
pub(crate) fn swapsim(args: &[&str]) -> Output {
    swapsim_in(&repo(), args)
}

/// Runs `swapsim` with `args` from the directory `cwd`.
pub(crate) fn swapsim_in(cwd: &std::path::Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_swapsim"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the swapsim binary runs");
    let output = Output {
        success: out.status.success(),
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    };
    assert!(!output.stderr.contains("panicked"), "swapsim panicked: {}", output.stderr);
    output
}

/// Runs `swapsim` expecting success and returns stdout.
pub(crate) fn ok(args: &[&str]) -> String {
    let out = swapsim(args);
    assert!(out.success, "swapsim {args:?} failed: {}", out.stderr);
    out.stdout
}

/// Runs `swapsim` expecting a usage or input error (exit status 1) and returns its
/// one-line error message.
pub(crate) fn fails(args: &[&str]) -> String {
    let out = swapsim(args);
    assert!(!out.success, "swapsim {args:?} succeeded: {}", out.stdout);
    assert_eq!(out.code, Some(1), "swapsim {args:?}: an input error exits 1: {}", out.stderr);
    assert!(out.stderr.starts_with("error: "), "unexpected stderr: {}", out.stderr);
    out.stderr
}

/// `run --format json` with extra arguments; returns the raw document.
pub(crate) fn run_json(scenario: &str, extra: &[&str]) -> String {
    let mut args = vec!["run", scenario, "--format", "json"];
    args.extend_from_slice(extra);
    ok(&args)
}

/// The raw document with its `host` member (always last) cut off, or a panic if the
/// document does not end with it.
pub(crate) fn without_host(doc: &str) -> &str {
    let at = doc.rfind("\"host\":").expect("the document has a host member");
    let tail: Value = serde_json::from_str(&format!("{{{}", &doc[at..])).expect("host is the last member");
    assert!(tail["host"]["wall_s"].is_number());
    &doc[..at]
}

/// Parses a JSON document.
pub(crate) fn parse(doc: &str) -> Value {
    serde_json::from_str(doc).expect("stdout is one JSON document")
}
