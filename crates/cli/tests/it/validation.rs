//! The validation cases replay in CI, and fidelity cannot silently regress.

use crate::support::*;
use serde_json::Value;

/// The ids of the cases in validation/linux-6.18, in file-name order.
fn case_ids() -> Vec<String> {
    let dir = repo().join("validation/linux-6.18/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the cases are committed")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(p).expect("readable")).expect("JSON");
            doc["id"].as_str().expect("every case has an id").to_string()
        })
        .collect()
}

/// A summary row's key in bounds.json: the figure, with its group when it is scored for
/// one group of cases only.
fn label(row: &Value) -> String {
    let counter = row["counter"].as_str().expect("counter");
    match row["scope"].as_str() {
        Some(scope) => format!("{counter} [{scope}]"),
        None => counter.to_string(),
    }
}

/// bounds.json with `worst_abs_error` recomputed from `summary` (worst error plus 3
/// points, for every scored figure) and everything else kept, in summary order.
fn regenerated_bounds(bounds: &Value, summary: &[Value]) -> String {
    let entries = |items: Vec<(String, String)>| -> String {
        let lines: Vec<String> =
            items.iter().map(|(k, v)| format!("  {}: {v}", Value::from(k.as_str()))).collect();
        if lines.is_empty() {
            "{}".to_string()
        } else {
            format!("{{\n{}\n }}", lines.join(",\n"))
        }
    };
    let labels: Vec<String> = summary.iter().filter(|s| s["scored"] == true).map(label).collect();
    let worst: Vec<(String, String)> = summary
        .iter()
        .filter(|s| s["scored"] == true)
        .map(|s| {
            let bound = ((s["worst_abs_error"].as_f64().expect("worst") + 0.03) * 1000.0).round() / 1000.0;
            (label(s), Value::from(bound).to_string())
        })
        .collect();
    let misses = bounds["known_misses"].as_object().expect("known_misses");
    let mut known: Vec<(String, String)> =
        labels.iter().filter_map(|l| misses.get(l).map(|why| (l.clone(), why.to_string()))).collect();
    known.extend(misses.iter().filter(|(k, _)| !labels.contains(k)).map(|(k, v)| (k.clone(), v.to_string())));
    let kept = |key: &str| -> Vec<(String, String)> {
        let map = bounds[key].as_object().unwrap_or_else(|| panic!("{key}"));
        map.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()
    };
    format!(
        "{{\n \"note\": {},\n \"worst_abs_error\": {},\n \"known_misses\": {},\n \"known_oom_mismatches\": {},\n \"not_yet_bounded\": {}\n}}\n",
        bounds["note"],
        entries(worst),
        entries(known),
        entries(kept("known_oom_mismatches")),
        entries(kept("not_yet_bounded"))
    )
}

/// Regenerate bounds.json after a deliberate change of the model with
/// `UPDATE_BOUNDS=1 cargo test -p swapsim-cli within_recorded_bounds`, and say so in the commit.
#[test]
fn validation_stays_within_recorded_bounds() {
    let path = repo().join("validation/linux-6.18/bounds.json");
    let bounds_text = std::fs::read_to_string(&path).expect("bounds.json is committed");
    let bounds_doc: Value = serde_json::from_str(&bounds_text).expect("bounds.json is JSON");
    // Cases the engine does not model yet are left out of the bounds, by name, each with
    // why; a name that is no case is a mistake.
    let not_yet = bounds_doc["not_yet_bounded"].as_object().expect("not_yet_bounded");
    let ids = case_ids();
    for id in not_yet.keys() {
        assert!(ids.contains(id), "bounds.json leaves out {id}, which is no case");
    }
    let dir = in_repo("validation/linux-6.18");
    let mut args = vec!["validate", dir.as_str(), "--format", "json"];
    for id in ids.iter().filter(|id| !not_yet.contains_key(id.as_str())) {
        args.extend(["--case", id.as_str()]);
    }
    let doc = parse(&ok(&args));
    let summary = doc["summary"].as_array().expect("summary");
    if std::env::var_os("UPDATE_BOUNDS").is_some() {
        std::fs::write(&path, regenerated_bounds(&bounds_doc, summary)).expect("bounds.json is writable");
        return;
    }
    let known_misses = bounds_doc["known_misses"].as_object().expect("known_misses");
    let bounds = bounds_doc["worst_abs_error"].as_object().expect("worst_abs_error");
    for (key, bound) in bounds {
        let row = summary.iter().find(|s| label(s) == *key).unwrap_or_else(|| panic!("summary lacks {key}"));
        let worst = row["worst_abs_error"].as_f64().expect("worst_abs_error");
        let bound = bound.as_f64().expect("bound");
        assert!(
            worst <= bound,
            "{key}: worst error {worst} exceeds the recorded bound {bound} ({})",
            row["worst_case"]
        );
    }
    // Every scored figure has a bound, and is within its target unless bounds.json says
    // why not.
    for row in summary.iter().filter(|s| s["scored"] == true) {
        let key = label(row);
        assert!(bounds.contains_key(&key), "bounds.json lacks the scored figure {key}");
        let target = row["target"].as_f64().expect("a scored figure has a target");
        let worst = row["worst_abs_error"].as_f64().expect("worst");
        if !known_misses.contains_key(&key) {
            assert!(worst <= target, "{key}: worst error {worst} is outside its target {target}: {row}");
            if let Some(median_target) = row["median_target"].as_f64() {
                let median = row["median_abs_error"].as_f64().expect("median");
                assert!(median <= median_target, "{key}: median error {median} is outside {median_target}");
            }
        }
    }
    // The event counts a kernel developer reads first, on the median case too.
    for counter in ["vmstat.pswpin", "vmstat.pswpout", "vmstat.pgmajfault", "vmstat.workingset_refault_anon"]
    {
        let row = summary.iter().find(|s| s["counter"] == counter).expect("summarised");
        assert!(row["median_abs_error"].as_f64().expect("median") <= 0.15, "{row}");
    }
    // No bounded case is OOM-killed where the kernel never was, or the other way round,
    // unless bounds.json says why; an entry whose case agrees with the kernel is stale.
    let known_oom = bounds_doc["known_oom_mismatches"].as_object().expect("known_oom_mismatches");
    for case in doc["cases"].as_array().expect("cases") {
        let id = case["id"].as_str().expect("id");
        assert_eq!(
            case["oom_mismatch"],
            known_oom.contains_key(id),
            "{id}: OOM kills vs known_oom_mismatches"
        );
    }
    for id in known_oom.keys() {
        assert!(ids.contains(id), "bounds.json excuses the OOM kills of {id}, which is no case");
    }
}

#[test]
fn validate_summary_lists_every_shared_figure() {
    // One seed: this checks the listing, not the figures.
    let doc =
        parse(&ok(&["validate", &in_repo("validation/linux-6.18"), "--seeds", "1", "--format", "json"]));
    assert_eq!(doc["seeds"], 1);
    let summary = doc["summary"].as_array().expect("summary");
    let listed: Vec<&str> = summary.iter().map(|s| s["counter"].as_str().expect("counter")).collect();
    // Figures that were once unscored, and the rest of the measured shape.
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
    let err = fails(&["validate", &in_repo("validation/linux-6.18"), "--seeds", "0"]);
    assert!(err.contains("seeds is 0"), "{err}");
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
    // The folder's own summary is JSON but not fio's: skipped with a note, the fit the same.
    let summary = in_repo("validation/linux-6.18/device/summary.json");
    args.push(&summary);
    let with_summary = ok(&args);
    assert!(
        with_summary.starts_with("# skipped ") && with_summary.contains("summary.json"),
        "{with_summary}"
    );
    assert_eq!(with_summary.lines().skip(1).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>());
    let err = fails(&["profile", "fit", &summary]);
    assert!(err.contains("none of the files is fio JSON output"), "{err}");
}

#[test]
fn validate_replays_the_zram_and_mthp_cases() {
    let doc = parse(&ok(&[
        "validate",
        &in_repo("validation/linux-6.18"),
        "--case",
        "D2-mthp16-64-zipf0.9-zram",
        "--case",
        "D-mthp16-64-seq-swapfile",
        "--format",
        "json",
    ]));
    let cases = doc["cases"].as_array().expect("cases");
    let [swapfile, zram] = cases.as_slice() else { panic!("two cases: {cases:?}") };
    for case in cases {
        assert!(case["skipped"].is_null(), "{}", case["id"]);
        assert_eq!(case["group"], "mthp-or-zram");
        assert_eq!(case["outcome"]["kind"], "completed");
        // Every measured mTHP counter is compared, simulated or not.
        for (size, counters) in case["real"]["mthp"].as_object().expect("mthp figures") {
            for counter in counters.as_object().expect("per size").keys() {
                assert!(
                    case["sim"]["mthp"][size][counter].is_number(),
                    "{} mthp.{size}.{counter}",
                    case["id"]
                );
            }
        }
    }
    assert!(swapfile["real"]["mthp"]["16kB"]["swpout_fallback"].is_number());
    assert!(swapfile["sim"]["mthp"]["16kB"]["swpin"].is_null(), "a counter the kernel did not measure");
    assert!(swapfile["sim"]["block"]["requests_issued_all"].is_number());
    // zram: bio-level block figures only.
    let block: Vec<&String> = zram["sim"]["block"].as_object().expect("block").keys().collect();
    assert_eq!(block, ["bio_backmerges_all", "bio_frontmerges_all", "bios_queued_all"]);
    assert_eq!(zram["kernel_oom_kills"]["runs_started"], 3);
    assert_eq!(zram["kernel_oom_kills"]["runs_oom_killed"], 0);
    // One of the six seeds lands its statistics flush in the window that thrashes into the
    // OOM killer, where the kernel's three runs did not: a known mismatch, recorded with its
    // evidence in bounds.json (validation_stays_within_recorded_bounds holds the two to
    // each other).
    assert_eq!(zram["oom_mismatch"], true);
    assert!(swapfile["kernel_oom_kills"].is_null(), "the case records no OOM kills");
    // Per-size swap counters are scored: 35% worst, 15% median.
    let summary = doc["summary"].as_array().expect("summary");
    for figure in
        ["mthp.16kB.swpin", "mthp.64kB.swpin_fallback", "mthp.16kB.swpout_fallback", "mthp.64kB.swpout"]
    {
        let row = summary.iter().find(|s| s["counter"] == figure).unwrap_or_else(|| panic!("{figure}"));
        assert_eq!(
            (row["target"].as_f64(), row["median_target"].as_f64()),
            (Some(0.35), Some(0.15)),
            "{row}"
        );
    }
    let total = summary
        .iter()
        .find(|s| s["counter"] == "timing.total_s" && s["scope"] == "mthp-or-zram")
        .expect("the run time of these cases is scored for their group");
    assert_eq!(total["target"].as_f64(), Some(0.25));
    assert!(!summary.iter().any(|s| s["scope"] == "swapfile-order0"), "no order-0 swap-file case ran");
}

/// Writes a validation directory of `cases` (file name, JSON) sharing one trace that writes
/// 1536 pages (6 MiB) once, and returns its path.
fn scratch_cases(name: &str, cases: &[(&str, Value)]) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cases")).expect("the scratch directory can be created");
    std::fs::create_dir_all(dir.join("traces")).expect("the scratch directory can be created");
    let trace: String = std::iter::once("# pages=1536 fill_accesses=1536\n".to_string())
        .chain((0..1536).map(|p| format!("W {p}\n")))
        .collect();
    std::fs::write(dir.join("traces/fill.trace"), trace).expect("the trace can be written");
    for (file, doc) in cases {
        std::fs::write(dir.join("cases").join(file), doc.to_string()).expect("the case can be written");
    }
    dir.display().to_string()
}

/// A live case writing 6 MiB under a 2 MiB memory cgroup on a swap file of `swap_bytes`,
/// with the kernel's OOM-kill record `oom`.
fn small_case(id: &str, swap_bytes: u64, oom: Value) -> Value {
    serde_json::json!({
        "format": "swapsim-validation/1",
        "id": id,
        "kind": "live",
        "setup": {
            "cpus": 1, "machine_ram_bytes": 1_073_741_824_u64, "memcg_limit_bytes": 2_097_152,
            "memcg_version": 1, "mthp_always_kib": [], "page_cluster": 3, "swappiness": 60,
            "vma_ra_enabled": true, "zswap": { "enabled": false, "ever_enabled": true },
            "swap": { "kind": "file", "rotational": true, "size_bytes": swap_bytes },
        },
        "workload": { "trace": "traces/fill.trace", "region_bytes": 6_291_456, "thp": "off" },
        "measured": {
            "oom_kills": oom,
            "vmstat": { "pswpout": { "median": 1024, "min": 1000, "max": 1050 } },
        },
    })
}

#[test]
fn validate_shows_oom_kills_next_to_the_kernel_and_flags_contradictions() {
    let never = serde_json::json!({ "runs_started": 3, "runs_oom_killed": 0, "note": "no OOM kill" });
    let always = serde_json::json!({ "runs_started": 3, "runs_oom_killed": 3 });
    let some = serde_json::json!({ "runs_started": 6, "runs_oom_killed": 2 });
    let dir = scratch_cases(
        "validate-oom",
        &[
            ("X1.json", small_case("X1-killed-kernel-never", 1 << 20, never)),
            ("X2.json", small_case("X2-survived-kernel-always", 64 << 20, always)),
            ("X3.json", small_case("X3-killed-kernel-sometimes", 1 << 20, some)),
        ],
    );
    let doc = parse(&ok(&["validate", &dir, "--format", "json"]));
    let by_id =
        |id: &str| doc["cases"].as_array().expect("cases").iter().find(|c| c["id"] == id).expect(id).clone();
    let killed = by_id("X1-killed-kernel-never");
    assert_eq!(killed["outcome"]["kind"], "oom_killed");
    assert_eq!(killed["oom_mismatch"], true);
    let survived = by_id("X2-survived-kernel-always");
    assert_eq!(survived["outcome"]["kind"], "completed");
    assert_eq!(survived["oom_mismatch"], true);
    let sometimes = by_id("X3-killed-kernel-sometimes");
    assert_eq!(sometimes["outcome"]["kind"], "oom_killed");
    assert_eq!(
        sometimes["oom_mismatch"], false,
        "the kernel killed 2 of 6 runs, the model at least as often"
    );
    let text = ok(&["validate", &dir]);
    let row = |id: &str| text.lines().find(|l| l.starts_with(id)).unwrap_or_else(|| panic!("{id}: {text}"));
    assert!(text
        .lines()
        .next()
        .is_some_and(|l| l.contains("kernel OOM kills") && l.contains("simulated run")));
    assert!(row("X1-killed-kernel-never").contains("0 of 3 runs"), "{text}");
    assert!(row("X1-killed-kernel-never").contains("OOM-killed in 6 of 6 seeds"), "{text}");
    assert!(row("X1-killed-kernel-never").ends_with("MISMATCH"), "{text}");
    assert!(row("X2-survived-kernel-always").contains("3 of 3 runs"), "{text}");
    assert!(row("X2-survived-kernel-always").ends_with("completed in 6 of 6 seeds MISMATCH"), "{text}");
    assert!(row("X3-killed-kernel-sometimes").contains("2 of 6 runs"), "{text}");
    assert!(!row("X3-killed-kernel-sometimes").contains("MISMATCH"), "{text}");
    let verdict = text.lines().find(|l| l.starts_with("verdict: ")).expect("a verdict");
    assert!(
        verdict.contains("OOM kills contradict the kernel's in: X1-killed-kernel-never (kernel 0 of 3 runs"),
        "{verdict}"
    );
    assert!(
        verdict
            .contains("X2-survived-kernel-always (kernel 3 of 3 runs, simulated completed in 6 of 6 seeds)"),
        "{verdict}"
    );
}

#[test]
fn validate_replays_zswap_cases_and_names_a_malformed_field() {
    let mut zswap =
        small_case("C-zswap", 64 << 20, serde_json::json!({ "runs_started": 1, "runs_oom_killed": 0 }));
    zswap["setup"]["zswap"] =
        serde_json::json!({ "enabled": true, "ever_enabled": true, "compressor": "lzo" });
    zswap["workload"]["page_contents"] = serde_json::json!("half random, half constant");
    // validate lays the simulated figures out as the case's measured ones.
    let stat = serde_json::json!({ "median": 1000, "min": 900, "max": 1100 });
    zswap["measured"]["vmstat"]["zswpout"] = stat.clone();
    zswap["measured"]["zswap_at_end"] = serde_json::json!({ "stored_pages": stat });
    let dir = scratch_cases("validate-zswap", &[("C-zswap.json", zswap)]);
    let doc: serde_json::Value =
        serde_json::from_str(&ok(&["validate", &dir, "--format", "json"])).expect("json");
    let case = &doc["cases"][0];
    assert!(case["skipped"].is_null(), "{case}");
    let sim = &case["sim"];
    // Every page written out went to zswap, none to the disk.
    assert!(sim["vmstat"]["zswpout"].as_f64().expect("zswpout") > 0.0, "{sim}");
    assert_eq!(sim["vmstat"]["pswpout"].as_f64(), Some(0.0), "{sim}");
    assert!(sim["zswap_at_end"]["stored_pages"].as_f64().expect("stored_pages") > 0.0, "{sim}");
    let mut bad =
        small_case("Z-bad", 64 << 20, serde_json::json!({ "runs_started": 1, "runs_oom_killed": 0 }));
    bad["setup"]["mthp_always_kib"] = serde_json::json!(["16", "48"]);
    let dir = scratch_cases("validate-bad-mthp", &[("Z-bad.json", bad)]);
    let err = fails(&["validate", &dir]);
    assert!(err.contains("cases/Z-bad.json: setup.mthp_always_kib[1]: \"48\" is not an mTHP size"), "{err}");
}

/// The claims the mTHP cases make, replayed: large swap-in multiplies the swap traffic of
/// a scattered pattern (the kernel: pswpin 494.9k with it, 145.4k once zswap's pool was
/// created in the boot, 3.4x), a swap file holds no large entry, and zram needs one major
/// fault per large swap-in.
#[test]
fn large_swapin_claims_hold_on_the_measured_cases() {
    let doc = parse(&ok(&[
        "validate",
        &in_repo("validation/linux-6.18"),
        "--case",
        "D-mthp16-64-seq-swapfile",
        "--case",
        "D2-mthp16-64-zipf0.9-zram",
        "--case",
        "D2k-mthp16-64-zipf0.9-zram",
        "--format",
        "json",
    ]));
    let cases = doc["cases"].as_array().expect("cases");
    let sim = |id: &str, path: &[&str]| -> f64 {
        let case = cases.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id}"));
        let mut v = &case["sim"];
        for p in path {
            v = &v[*p];
        }
        v.as_f64().unwrap_or_else(|| panic!("{id} {path:?}: {v}"))
    };
    let with = sim("D2-mthp16-64-zipf0.9-zram", &["vmstat", "pswpin"]);
    let without = sim("D2k-mthp16-64-zipf0.9-zram", &["vmstat", "pswpin"]);
    assert!(with / without > 2.5, "large swap-in multiplies pswpin: {with} vs {without}");
    assert_eq!(
        sim("D2k-mthp16-64-zipf0.9-zram", &["vmstat", "pgmajfault"]),
        without,
        "order-0 swap-ins only"
    );
    let majors = sim("D2-mthp16-64-zipf0.9-zram", &["vmstat", "pgmajfault"]);
    let large = sim("D2-mthp16-64-zipf0.9-zram", &["mthp", "16kB", "swpin"]) * 3.0
        + sim("D2-mthp16-64-zipf0.9-zram", &["mthp", "64kB", "swpin"]) * 15.0;
    // Each counter is a median over the seeds, so the identity holds to within rounding
    // between seeds.
    assert!(
        (with / (majors + large) - 1.0).abs() < 0.01,
        "one major fault per swap-in: {with} vs {majors} + {large}"
    );
    for size in ["16kB", "64kB"] {
        let allocated = sim("D-mthp16-64-seq-swapfile", &["mthp", size, "anon_fault_alloc"]);
        assert_eq!(sim("D-mthp16-64-seq-swapfile", &["mthp", size, "swpout_fallback"]), allocated, "{size}");
        assert!(allocated > 0.0);
    }
}

/// On the validation traces MGLRU gives a sane result next to the classic LRU (the kernel
/// measured the classic one only): every case completes without an OOM kill under MGLRU,
/// and under the classic LRU too except where the kernel's own runs were OOM-killed, and
/// its swap-ins are within 0.1x..10x of the classic replay's. The Markdown
/// report (docs/validation.md) lays both out; its table is read back here and the ratio
/// recomputed from its columns.
#[test]
fn mglru_is_sane_next_to_classic_on_every_validation_case() {
    // One seed per LRU: a sanity check of orders of magnitude, not of medians.
    let text = ok(&["validate", &in_repo("validation/linux-6.18"), "--seeds", "1", "--format", "markdown"]);
    let section = text
        .split("## Classic (validated) vs MGLRU (not validated here)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no comparison section: {text}"));
    let section = section.split("\n## ").next().expect("the section");
    assert!(section.contains("not validated"), "{section}");
    assert!(section.contains("MGLRU is sane on all "), "{section}");
    for id in case_ids() {
        let row = section
            .lines()
            .find(|l| l.starts_with(&format!("| {id} | ")) && l.ends_with(" |") && l.split('|').count() == 10)
            .unwrap_or_else(|| panic!("{id}: no row in {section}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let [_, _, kernel_runs, classic_run, mglru_run, classic, mglru, _, sane, _] = cells.as_slice() else {
            panic!("{row}")
        };
        assert_eq!(*mglru_run, "completed", "{id}: MGLRU was not sane: {row}");
        let kernel_killed = kernel_runs.split(' ').next().is_some_and(|n| n != "0" && n != "–");
        assert!(*classic_run == "completed" || kernel_killed, "{id}: {row}");
        let classic: f64 = classic.parse().unwrap_or_else(|_| panic!("{id}: {row}"));
        let mglru: f64 = mglru.parse().unwrap_or_else(|_| panic!("{id}: {row}"));
        if classic == 0.0 {
            assert_eq!(mglru, 0.0, "{id}: MGLRU swaps in where classic does not: {row}");
        } else {
            let ratio = mglru / classic;
            assert!((0.1..=10.0).contains(&ratio), "{id}: MGLRU swap-ins {ratio:.2}x classic's: {row}");
        }
        assert_eq!(*sane, "yes", "{id}: {row}");
    }
    // The classic figures are the validated ones, and say so.
    assert!(!text.contains("**Not a validation.**"), "a classic report is a validation");
}

#[test]
fn validate_under_mglru_says_it_is_no_validation_and_other_lrus_are_rejected() {
    let dir = in_repo("validation/linux-6.18");
    let doc =
        parse(&ok(&["validate", &dir, "--case", "A-seq-pc0-vma", "--lru", "mglru", "--format", "json"]));
    assert_eq!(doc["lru"], "mglru");
    let why = doc["not_validated"].as_str().expect("a replay under MGLRU says why it is no validation");
    assert!(why.contains("the kernel ran the classic LRU"), "{why}");
    assert_eq!(doc["cases"][0]["outcome"]["kind"], "completed");
    let classic = parse(&ok(&["validate", &dir, "--case", "A-seq-pc0-vma", "--format", "json"]));
    assert_eq!(classic["lru"], "classic");
    assert!(classic["not_validated"].is_null(), "{}", classic["not_validated"]);
    let text = ok(&["validate", &dir, "--case", "A-seq-pc0-vma", "--lru", "mglru"]);
    assert!(text.starts_with("NOT A VALIDATION: "), "{text}");
    assert!(text.contains("verdict: not validated, "), "{text}");
    let md = ok(&["validate", &dir, "--case", "A-seq-pc0-vma", "--lru", "mglru", "--format", "markdown"]);
    assert!(md.contains("--format markdown --lru mglru`"), "{md}");
    assert!(md.contains("**Not a validation.**"), "{md}");
    assert!(md.contains("## Classic (validated) vs MGLRU (not validated here)"), "{md}");
    let err = fails(&["validate", &dir, "--lru", "exact"]);
    assert!(err.contains("--lru") && err.contains("exact"), "{err}");
}

#[test]
fn a_case_printed_as_a_scenario_replays_as_validate_replays_it() {
    // A queue (its jobs' traces and launch jitter) and a single trace on the swap file.
    for id in ["J-small20-j3-swapfile", "A-seq-pc0-vma"] {
        let dir = in_repo("validation/linux-6.18");
        let toml = ok(&["validate", &dir, "--case", id, "--scenario-of-seed", "1"]);
        // Run from elsewhere: the printed trace paths must not depend on the directory.
        let scratch = scratch_dir("validation", &format!("scenario-of-{id}"));
        let file = scratch.join("case.toml");
        std::fs::write(&file, &toml).unwrap();
        let run = swapsim_in(&scratch, &["run", "case.toml", "--format", "json"]);
        assert!(run.success, "{id}: {}", run.stderr);
        let run: Value = serde_json::from_str(&run.stdout).unwrap();
        let validated: Value =
            serde_json::from_str(&ok(&["validate", &dir, "--case", id, "--seeds", "1", "--format", "json"]))
                .unwrap();
        let sim = &validated["cases"][0]["sim"];
        for counter in ["pswpin", "pswpout", "pgmajfault", "pgdeactivate", "workingset_refault_anon"] {
            let replayed = sim["vmstat"][counter].as_f64().unwrap_or_else(|| panic!("{id}: {counter}"));
            assert_eq!(run["vmstat"][counter].as_f64(), Some(replayed), "{id}: vmstat.{counter}");
        }
        assert!(sim["vmstat"]["pswpout"].as_f64().unwrap() > 0.0, "{id} swaps");
    }
    let err = fails(&["validate", &in_repo("validation/linux-6.18"), "--scenario-of-seed", "1"]);
    assert!(err.contains("needs exactly one --case"), "{err}");
    let err = fails(&[
        "validate",
        &in_repo("validation/linux-6.18"),
        "--case",
        "A-seq-pc0-vma",
        "--scenario-of-seed",
        "0",
    ]);
    assert!(err.contains("seeds start at 1"), "{err}");
}
