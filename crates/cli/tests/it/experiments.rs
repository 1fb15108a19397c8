//! The named experiments at reduced scale: each gives its rows and a verdict checked figure
//! by figure, and the published directions hold.

use crate::support::*;
use serde_json::Value;

fn experiment(name: &str, scale: &str) -> Value {
    parse(&ok(&["experiment", "run", name, "--scale", scale, "--format", "json"]))
}

#[test]
fn list_names_every_experiment() {
    let text = ok(&["experiment", "list"]);
    for name in [
        "swapoff-readahead",
        "plug-merge",
        "mthp-swapin",
        "zswap-second-chance",
        "hibernate-reclaim",
        "zswap-large-swapin",
        "zswap-readahead-bypass",
        "zswap-shrink-start",
        "mthp-swap-allocator",
        "hibernate-alloc-fastpath",
    ] {
        assert!(text.contains(name), "{name}: {text}");
    }
}

#[test]
fn swapoff_starts_from_the_resumed_state() {
    // The guest hibernated with the default image_size: what the image held (2/5 of
    // memory, less the kernel's part) is resident after resume, so swapoff reads only the
    // rest of the 85% written, and every readahead window is used.
    let doc = experiment("swapoff-readahead", "0.03");
    assert!(doc["setup"].as_str().expect("setup").contains("hibernates"), "{}", doc["setup"]);
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 32);
    // 246 MiB guest, 4 x 52 MiB written.
    let written = 4 * 52 * 256;
    for row in rows {
        let pswpin = row["pswpin"].as_u64().expect("pswpin");
        assert!(pswpin * 10 > written * 5 && pswpin * 10 < written * 8, "{row}: {pswpin} of {written}");
    }
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
    check_verdict(&doc);
    // Where the fixed curve is lowest is one of the checks, judged against the published 4.
    let checks = doc["verdict"]["checks"].as_array().expect("checks");
    let minimum = checks
        .iter()
        .find(|c| c["curve"] == "fixed" && c["criterion"] == "minimum at page-cluster")
        .expect("a check of the fixed curve's minimum");
    assert_eq!(minimum["published"], 4.0);
    let at = minimum["simulated"].as_f64().expect("simulated");
    assert_eq!(minimum["reproduced"], (at - 4.0).abs() <= 1.0, "{minimum}");
    let best = doc["verdict"]["details"]
        .as_array()
        .and_then(|d| d.iter().find(|pair| pair[0] == "best_fixed_page_cluster"))
        .expect("best_fixed_page_cluster");
    assert_eq!(best[1].as_f64(), Some(at), "the check names the simulated minimum");
}

/// The swapoff experiment's verdict called a fixed-readahead curve lowest at page-cluster
/// 8 reproduced against a published minimum at 4: every figure is now a check with a
/// tolerance, and only checks within it say "reproduced", as does the verdict only when
/// all of them are.
fn check_verdict(doc: &Value) {
    let verdict = &doc["verdict"];
    let checks = verdict["checks"].as_array().expect("checks");
    assert!(!checks.is_empty());
    for check in checks {
        let reproduced = check["reproduced"].as_bool().expect("reproduced");
        let text = check["text"].as_str().expect("text");
        let status = if reproduced { ": reproduced: " } else { ": not reproduced: " };
        assert!(text.contains(status), "{text}");
        assert!(text.contains(check["tolerance"].as_str().expect("tolerance")), "{text}");
    }
    let all = checks.iter().all(|c| c["reproduced"] == true);
    assert_eq!(verdict["reproduced"], all, "{verdict}");
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
    check_verdict(&doc);
}

/// At a tenth of the size the job queue still swaps: `order0` never swaps in a large
/// folio, and the throttle leaves fewer 16 kB swap-ins than the kernel's policy. The queue
/// of traces gives the same four rows, and its checks follow the job queue's in the verdict.
#[test]
fn mthp_swapin_throttle_cuts_large_swapins() {
    let doc = experiment("mthp-swapin", "0.1");
    let rows = doc["rows"].as_array().expect("rows");
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            let field = |key: &str| r[key].as_str().unwrap_or_else(|| panic!("a row lacks {key}"));
            format!("{}:{}/{}", field("workload"), field("lru"), field("swapin"))
        })
        .collect();
    let policies = ["classic/order0", "classic/kernel", "classic/throttled", "mglru/kernel"];
    let expected: Vec<String> =
        ["jobs", "queue"].iter().flat_map(|w| policies.iter().map(move |p| format!("{w}:{p}"))).collect();
    assert_eq!(names, expected);
    for workload in ["jobs", "queue"] {
        let row = |name: &str| {
            rows.iter()
                .find(|r| {
                    r["workload"] == workload
                        && if name == "mglru" {
                            r["lru"] == "mglru"
                        } else {
                            r["lru"] == "classic" && r["swapin"] == name
                        }
                })
                .expect("row")
        };
        let count =
            |name: &str, key: &str| row(name)[key].as_u64().unwrap_or_else(|| panic!("{name} lacks {key}"));
        for name in ["order0", "kernel", "throttled", "mglru"] {
            assert!(count(name, "pswpout") > 0, "{workload} {name} did not swap");
            assert_eq!(row(name)["outcome"], "completed", "{}", row(name));
            assert!(row(name)["wall_s"].as_f64().expect("wall_s") > 0.0);
        }
        assert_eq!(count("order0", "swpin_16k"), 0);
        assert!(count("kernel", "swpin_16k") > 0);
        assert!(count("mglru", "swpin_16k") > 0, "MGLRU swaps in large folios too");
        if workload == "jobs" {
            assert!(count("throttled", "swpin_16k") < count("kernel", "swpin_16k"), "{}", doc["rows"]);
            assert!(
                count("throttled", "swpin_fallback_charge_16k")
                    > count("kernel", "swpin_fallback_charge_16k")
            );
        }
    }
    let checks = doc["verdict"]["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), 8);
    assert!(checks[4..].iter().all(|c| c["curve"].as_str().expect("curve").starts_with("queue of traces ")));
    check_verdict(&doc);
}

/// At a tenth of the size (one build instead of five) the four settings each give a row
/// on each workload with every column, zswap's counters move as each setting allows, and
/// the verdict is worded check by check.
#[test]
fn zswap_second_chance_gives_four_rows() {
    let doc = experiment("zswap-second-chance", "0.1");
    let all = doc["rows"].as_array().expect("rows");
    let workloads: Vec<&str> = all.iter().map(|r| r["workload"].as_str().expect("workload")).collect();
    assert_eq!(workloads, ["jobs", "jobs", "jobs", "jobs", "queue", "queue", "queue", "queue"]);
    for workload in ["jobs", "queue"] {
        let rows: Vec<&serde_json::Value> = all.iter().filter(|r| r["workload"] == workload).collect();
        four_zswap_rows(&rows);
    }
    assert_eq!(doc["verdict"]["checks"].as_array().expect("checks").len(), 4);
    check_verdict(&doc);
    let csv = ok(&["experiment", "run", "zswap-second-chance", "--scale", "0.1", "--format", "csv"]);
    let header: Vec<&str> = csv.lines().next().expect("a header").split(',').collect();
    for key in ["workload", "zswap", "pswpin", "zswpwb", "wall_s", "builds_finished"] {
        assert!(header.contains(&key), "{header:?} lacks {key}");
    }
    assert!(!header.contains(&"builds"), "the per-build list is for JSON only: {header:?}");
    assert_eq!(csv.lines().count(), 9, "{csv}");
}

/// One workload's four zswap rows: every column, and the counters each setting allows.
fn four_zswap_rows(rows: &[&serde_json::Value]) {
    let names: Vec<&str> = rows.iter().map(|r| r["zswap"].as_str().expect("zswap")).collect();
    assert_eq!(names, ["off", "no-shrinker", "decay", "second-chance"]);
    let row = |name: &str| rows.iter().find(|r| r["zswap"] == name).expect("row");
    let count =
        |name: &str, key: &str| row(name)[key].as_u64().unwrap_or_else(|| panic!("{name} lacks {key}"));
    for name in names {
        for key in ["pswpin", "zswpin", "zswpout", "zswpwb", "pswpout", "shrinker_scanned", "jobs_oom_killed"]
        {
            count(name, key);
        }
        assert!(row(name)["wall_s"].as_f64().expect("wall_s") > 0.0);
        assert_eq!(row(name)["builds"].as_array().expect("builds").len(), 1, "scale 0.1 runs one build");
    }
    // Without zswap nothing is stored; without the shrinker nothing is written back; with
    // it, under either protection, entries are visited and written back.
    assert_eq!(count("off", "zswpout"), 0);
    assert!(count("off", "pswpout") > 0, "the build did not swap");
    assert!(count("no-shrinker", "zswpout") > 0);
    assert_eq!(count("no-shrinker", "zswpwb"), 0);
    for name in ["decay", "second-chance"] {
        assert!(count(name, "zswpwb") > 0, "{name} wrote nothing back");
        assert!(count(name, "shrinker_scanned") >= count(name, "zswpwb"));
    }
}

/// At a twentieth of the size, the bypass reads nothing ahead, the kernel's readahead
/// reads some, and each published figure has its check.
#[test]
fn zswap_readahead_bypass_removes_the_readahead_of_zswap_pages() {
    let doc = experiment("zswap-readahead-bypass", "0.05");
    let rows = doc["rows"].as_array().expect("rows");
    let keys: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{}/{}/{}",
                r["workload"].as_str().unwrap(),
                r["memcg_mib"],
                r["readahead"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(keys.len(), 6, "{keys:?}");
    for r in rows {
        let ra = r["swap_ra"].as_u64().expect("swap_ra");
        match r["readahead"].as_str().expect("readahead") {
            "zswap-bypass" => assert_eq!(ra, 0, "{r}"),
            _ => assert!(r["zswpin"].as_u64().expect("zswpin") > 0, "{r}"),
        }
    }
    let queue_kernel =
        rows.iter().find(|r| r["workload"] == "queue" && r["readahead"] == "kernel").expect("row");
    assert!(queue_kernel["swap_ra"].as_u64().expect("swap_ra") > 0, "{queue_kernel}");
    assert_eq!(doc["verdict"]["checks"].as_array().expect("checks").len(), 6);
    check_verdict(&doc);
}

/// At a twentieth of the size, the three triggers give a row each; before 6.12 the worker
/// writes nothing back and stores nothing in the measured passes, the others store.
#[test]
fn zswap_shrink_start_gives_three_rows() {
    let doc = experiment("zswap-shrink-start", "0.05");
    let rows = doc["rows"].as_array().expect("rows");
    let names: Vec<&str> = rows.iter().map(|r| r["writeback"].as_str().expect("writeback")).collect();
    assert_eq!(names, ["pre-6.12", "kernel", "proactive"]);
    let count = |i: usize, key: &str| rows[i][key].as_u64().unwrap_or_else(|| panic!("{key}"));
    assert_eq!(count(0, "zswpwb"), 0);
    for row in rows {
        assert!(row["elapsed_s"].as_f64().expect("elapsed_s") > 0.0);
        assert_eq!(row["runs"].as_array().expect("runs").len(), 3);
    }
    assert!(count(1, "zswpout") > count(0, "zswpout"));
    assert_eq!(doc["verdict"]["checks"].as_array().expect("checks").len(), 2);
    check_verdict(&doc);
}

#[test]
fn the_table_lists_each_check_under_the_verdict() {
    let text = ok(&["experiment", "run", "plug-merge", "--scale", "0.05"]);
    let verdict = text.lines().position(|line| line.starts_with("verdict (")).expect("a verdict line");
    let summary = text.lines().nth(verdict + 1).expect("a line after the verdict");
    assert!(summary.ends_with("of 2 published figures within tolerance"), "{summary}");
    let checks: Vec<&str> =
        text.lines().skip(verdict + 2).take_while(|line| line.starts_with("  ")).collect();
    assert_eq!(checks.len(), 2, "{text}");
    assert!(checks[0].starts_with("  dispatches: ") && checks[1].starts_with("  throughput: "), "{text}");
}

#[test]
fn unknown_experiment_is_an_error() {
    let err = fails(&["experiment", "run", "nope"]);
    assert!(err.contains("unknown experiment \"nope\"") && err.contains("swapoff-readahead"), "{err}");
}

#[test]
fn hibernate_reclaim_moves_the_time_out_of_hibernation() {
    let doc = experiment("hibernate-reclaim", "0.05");
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    let row = |kernel: &str, image: &str| {
        rows.iter().find(|r| r["kernel"] == kernel && r["image_size"] == image).expect("row")
    };
    let f = |r: &Value, key: &str| r[key].as_f64().unwrap_or_else(|| panic!("{key}: {r}"));
    for image in ["default", "0"] {
        let (vanilla, mm) = (row("vanilla", image), row("mm_reclaim", image));
        // Reclaiming beforehand leaves hibernation only the kernel's part to write.
        assert!(f(mm, "hibernate_s") * 3.0 < f(vanilla, "hibernate_s"), "{vanilla} {mm}");
        assert_eq!(mm["reclaimed_pages"], 0, "{mm}");
        assert!(mm["pre_reclaimed_pages"].as_u64().unwrap() > 0, "{mm}");
        assert!(f(mm, "release_s") > 0.0, "{mm}");
        assert!(vanilla["reclaimed_pages"].as_u64().unwrap() > 0, "{vanilla}");
    }
    // The default image holds 2/5 of memory: a longer resume, a shorter shrink than 0's.
    let (default, zero) = (row("vanilla", "default"), row("vanilla", "0"));
    assert!(f(default, "resume_s") > f(zero, "resume_s"));
    assert!(f(default, "shrink_s") < f(zero, "shrink_s"));
    assert!(default["image_pages"].as_u64().unwrap() > 2 * zero["image_pages"].as_u64().unwrap());
    check_verdict(&doc);
}

/// At a tenth of the size, 6.18 swaps in nothing large once zswap exists, the RFC swaps
/// zswap entries in as large folios and loads more pages from zswap, and the throttle cuts
/// the large swap-ins back; the verdict is worded check by check.
#[test]
fn zswap_large_swapin_brings_zswap_entries_in_large() {
    let doc = experiment("zswap-large-swapin", "0.1");
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 9, "three policies over three seeds");
    let sum = |policy: &str, key: &str| -> u64 {
        rows.iter().filter(|r| r["swapin"] == policy).map(|r| r[key].as_u64().expect("a count")).sum()
    };
    assert_eq!(sum("kernel", "swpin_large"), 0);
    assert!(sum("zswap-large", "swpin_large") > 0, "{}", doc["rows"]);
    assert!(sum("zswap-large", "zswpin") > sum("kernel", "zswpin"));
    assert!(sum("zswap-large-throttled", "swpin_large") < sum("zswap-large", "swpin_large"));
    for row in rows {
        assert!(row["zswpout"].as_u64().expect("zswpout") > 0, "{row}");
    }
    check_verdict(&doc);
}

/// Per-order cluster lists leave no 64 kB fallback on the stress workload, where the
/// allocator before 6.12 falls back for most folios.
#[test]
fn mthp_swap_allocator_lists_remove_the_fallbacks() {
    let doc = experiment("mthp-swap-allocator", "0.05");
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6, "stress, its warm-up and the build, under two allocators");
    let pct = |workload: &str, allocator: &str| {
        rows.iter()
            .find(|r| r["workload"] == workload && r["allocator"] == allocator)
            .and_then(|r| r["fallback_pct"].as_f64())
            .unwrap_or_else(|| panic!("no row {workload} {allocator}"))
    };
    assert!(pct("stress", "free-list-scan") > 50.0, "{}", pct("stress", "free-list-scan"));
    // The published share with the series is 0; the check allows 1 percentage point (a
    // few late fallbacks when the small device's clusters run out).
    assert!(pct("stress", "kernel") < 1.0, "{}", pct("stress", "kernel"));
    // At this scale the build's tiny cgroup OOM-kills jobs, which breaks the direction:
    // only the stress checks are held here; the full-scale verdict is in the README.
    let checks = doc["verdict"]["checks"].as_array().expect("checks");
    assert!(checks
        .iter()
        .filter(|c| c["curve"].as_str().is_some_and(|n| n.starts_with("stress")))
        .all(|c| c["reproduced"] == true));
    check_verdict(&doc);
}

/// The slow path's image goes out in single-page writes, the fast path's merged; the
/// SATA II drive hibernates faster with the fast path, by more than the spread over seeds.
#[test]
fn hibernate_fast_path_merges_the_image_writes() {
    let doc = experiment("hibernate-alloc-fastpath", "0.05");
    let rows = doc["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 12, "two devices, two allocators, three seeds");
    for r in rows {
        let kib = r["write_request_kib"].as_f64().expect("write_request_kib");
        if r["allocator"] == "hibernate-slow-path" {
            assert!(kib < 8.0, "{r}");
        } else {
            assert!(kib > 16.0, "{r}");
        }
    }
    assert_eq!(doc["verdict"]["direction_matches"], true, "{}", doc["verdict"]);
    check_verdict(&doc);
}
