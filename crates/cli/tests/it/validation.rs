//! Issue 5: the validation cases replay in CI, and fidelity cannot silently regress.

use crate::support::*;
use serde_json::Value;

#[test]
fn issue5_validation_stays_within_recorded_bounds() {
    let doc = parse(&ok(&["validate", &in_repo("validation/linux-6.18"), "--format", "json"]));
    let bounds_text = std::fs::read_to_string(repo().join("validation/linux-6.18/bounds.json"))
        .expect("bounds.json is committed");
    let bounds: Value = serde_json::from_str(&bounds_text).expect("bounds.json is JSON");
    let known_misses = bounds["known_misses"].as_object().expect("known_misses");
    let bounds = bounds["worst_abs_error"].as_object().expect("worst_abs_error");
    let summary = doc["summary"].as_array().expect("summary");
    for (counter, bound) in bounds {
        let row = summary
            .iter()
            .find(|s| s["counter"] == counter.as_str())
            .unwrap_or_else(|| panic!("summary lacks {counter}"));
        let worst = row["worst_abs_error"].as_f64().expect("worst_abs_error");
        let bound = bound.as_f64().expect("bound");
        assert!(
            worst <= bound,
            "{counter}: worst error {worst} exceeds the recorded bound {bound} ({})",
            row["worst_case"]
        );
    }
    // Every scored figure has a bound, and is within its target unless bounds.json says
    // why not.
    for row in summary.iter().filter(|s| s["scored"] == true) {
        let counter = row["counter"].as_str().expect("counter");
        assert!(bounds.contains_key(counter), "bounds.json lacks the scored figure {counter}");
        let target = row["target"].as_f64().expect("a scored figure has a target");
        let worst = row["worst_abs_error"].as_f64().expect("worst");
        if !known_misses.contains_key(counter) {
            assert!(worst <= target, "{counter}: worst error {worst} is outside its target {target}: {row}");
        }
    }
    // The event counts a kernel developer reads first, on the median case too.
    for counter in ["vmstat.pswpin", "vmstat.pswpout", "vmstat.pgmajfault", "vmstat.workingset_refault_anon"]
    {
        let row = summary.iter().find(|s| s["counter"] == counter).expect("summarised");
        assert!(row["median_abs_error"].as_f64().expect("median") <= 0.15, "{row}");
    }
}

#[test]
fn validate_summary_lists_every_shared_figure() {
    let doc = parse(&ok(&["validate", &in_repo("validation/linux-6.18"), "--format", "json"]));
    let summary = doc["summary"].as_array().expect("summary");
    let listed: Vec<&str> = summary.iter().map(|s| s["counter"].as_str().expect("counter")).collect();
    // Figures the issue named as unscored before, and the rest of the measured shape.
    for figure in [
        "block.write_service_us_mean",
        "block.read_service_us_p99",
        "vmstat.pgdeactivate",
        "vmstat.workingset_restore_anon",
        "vmstat.pgscan_anon",
        "block.bio_backmerges_all",
        "at_end.VmSwap_kib",
        "swapoff.block.read_service_us_mean",
    ] {
        assert!(listed.contains(&figure), "summary lacks {figure}");
    }
    assert!(summary.iter().any(|s| s["scored"] == false), "unscored figures are listed too");
    let text = ok(&["validate", &in_repo("validation/linux-6.18"), "--case", "A-seq-pc0-vma"]);
    assert!(text.contains("verdict: "), "{text}");
    assert!(text.contains("vmstat.pgscan_anon"), "{text}");
}

#[test]
fn validate_json_mirrors_the_measured_shape() {
    let doc = parse(&ok(&[
        "validate",
        &in_repo("validation/linux-6.18"),
        "--case",
        "B-swapoff-pc3-vma",
        "--format",
        "json",
    ]));
    let case = &doc["cases"][0];
    assert_eq!(case["id"], "B-swapoff-pc3-vma");
    for phase in ["fill", "swapoff"] {
        for group in ["vmstat", "block"] {
            assert!(case["sim"][phase][group].is_object(), "sim.{phase}.{group}");
            assert!(case["real"][phase][group].is_object(), "real.{phase}.{group}");
        }
    }
    assert!(case["sim"]["timing"]["swapoff_s"].is_number());
    let ratio = case["ratio"]["swapoff"]["vmstat"]["pswpin"].as_f64().expect("ratio");
    assert!((0.9..1.1).contains(&ratio), "{ratio}");
}

#[test]
fn validate_rejects_an_unknown_case() {
    let err = fails(&["validate", &in_repo("validation/linux-6.18"), "--case", "Z-nope"]);
    assert!(err.contains("--case Z-nope: no such case"), "{err}");
}

#[test]
fn profile_fit_recovers_the_validation_disk() {
    let dir = repo().join("validation/linux-6.18/device");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("device dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().contains("-qd")))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    let mut args = vec!["profile", "fit", "--name", "mine"];
    args.extend(files.iter().map(String::as_str));
    let text = ok(&args);
    let fitted: toml::Table = text.parse().expect("the output is TOML");
    let base = fitted["read_base_us"].as_float().expect("read_base_us");
    // The block tracepoints measured about 18 µs for a 4 KiB read on this disk.
    let service_4k = base + 4.0 * fitted["read_us_per_kib"].as_float().expect("slope");
    assert!((16.0..21.0).contains(&service_4k), "{service_4k}");
    assert_eq!(fitted["channels"].as_integer(), Some(2));
    assert_eq!(fitted["name"].as_str(), Some("mine"));
    // A fitted profile is usable as a device model as it is.
    let err = fails(&["profile", "fit", &in_repo("README.md")]);
    assert!(err.contains("not JSON"), "{err}");
}
