//! Progress bars are for a person at a terminal: with stderr piped, as here and in any
//! script, the long commands print no bar, no spinner and no terminal control codes, and
//! their stdout is what it would be without a bar.

use crate::support::{data, in_repo, swapsim};

/// What the bars draw with: escape sequences, carriage returns, and indicatif's bar and
/// spinner glyphs.
const BAR_MARKS: [&str; 6] = ["\u{1b}", "\r", "█", "░", "⠁", "⠋"];

/// Runs `swapsim` with `args` (stderr piped), expects success, and checks that stderr
/// holds nothing a progress bar draws; returns stdout.
fn check_silent(args: &[&str]) -> String {
    let out = swapsim(args);
    assert!(out.success, "swapsim {args:?} failed: {}", out.stderr);
    for mark in BAR_MARKS {
        assert!(!out.stderr.contains(mark), "swapsim {args:?} drew progress on stderr: {:?}", out.stderr);
    }
    for unit in ["accesses,", "variants,", "runs,", "cases,"] {
        assert!(!out.stderr.contains(unit), "swapsim {args:?} reported progress: {:?}", out.stderr);
    }
    assert!(!out.stdout.contains('\u{1b}') && !out.stdout.contains('\r'), "{:?}", out.stdout);
    out.stdout
}

#[test]
fn a_run_shows_no_progress_without_a_terminal() {
    // About 200,000 accesses: several of the engine's progress reports.
    let scenario = data("tiny.toml");
    for format in ["table", "json"] {
        check_silent(&["run", &scenario, "--set", "workload.generator.passes=130", "--format", format]);
    }
}

#[test]
fn a_sweep_shows_no_progress_without_a_terminal() {
    let scenario = data("tiny.toml");
    check_silent(&["sweep", &scenario, "--vary", "swap.page_cluster=0,1,2", "--format", "json"]);
}

#[test]
fn an_experiment_shows_no_progress_without_a_terminal() {
    check_silent(&["experiment", "run", "plug-merge", "--scale", "0.02", "--format", "json"]);
}

#[test]
fn validate_shows_no_progress_without_a_terminal() {
    let dir = in_repo("validation/linux-6.18");
    let cases = ["--case", "A-seq-pc0-vma", "--case", "B-swapoff-pc8-novma"];
    check_silent(&[&["validate", dir.as_str()], &cases[..]].concat());
}
