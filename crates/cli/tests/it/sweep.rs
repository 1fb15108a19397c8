//! `swapsim sweep` and `swapsim merge`: variants in a stable order, each equal to a `run`
//! with the same edits, independent of the job count and of sharding.

use crate::support::{data, fails, ok, parse, run_json, scratch_dir, without_host};
use serde_json::Value;
use std::path::PathBuf;

/// The tiny scenario, one pass: a few milliseconds per variant.
const SHRINK: [&str; 2] = ["--set", "workload.generator.passes=1"];

/// `sweep` over the tiny scenario with `extra` arguments; returns stdout.
fn sweep(extra: &[&str]) -> String {
    let scenario = data("tiny.toml");
    let mut args = vec!["sweep", scenario.as_str()];
    args.extend_from_slice(&SHRINK);
    args.extend_from_slice(extra);
    ok(&args)
}

/// The two-key sweep most tests use: page_cluster 0, 3 × readahead cluster, none.
const TWO_KEYS: [&str; 4] = ["--vary", "swap.page_cluster=0,3", "--vary", "swap.readahead=cluster,none"];

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    scratch_dir("sweep", name)
}

fn write(path: &PathBuf, text: &str) -> String {
    std::fs::write(path, text).expect("the scratch file can be written");
    path.display().to_string()
}

#[test]
fn two_keys_give_four_variants_first_key_slowest_each_equal_to_run() {
    let mut args = TWO_KEYS.to_vec();
    args.extend(["--format", "json", "--jobs", "2"]);
    let doc = parse(&sweep(&args));
    assert_eq!(doc["scenario"], data("tiny.toml"), "the path as given");
    assert_eq!(doc["seed"], 7);
    assert_eq!(doc["fixed"], serde_json::json!(["workload.generator.passes=1"]));
    assert_eq!(
        doc["vary"],
        serde_json::json!([
            {"key": "swap.page_cluster", "values": [0, 3]},
            {"key": "swap.readahead", "values": ["cluster", "none"]},
        ])
    );
    assert!(doc.get("shard").is_none());
    assert_eq!(doc["host"]["jobs"], 2);
    let variants = doc["variants"].as_array().expect("variants is an array");
    let expected = [("0", "cluster"), ("0", "none"), ("3", "cluster"), ("3", "none")];
    assert_eq!(variants.len(), expected.len());
    for (idx, (variant, (page_cluster, readahead))) in variants.iter().zip(expected).enumerate() {
        assert_eq!(variant["index"], idx);
        let settings: Vec<(&String, String)> = variant["settings"]
            .as_object()
            .expect("settings is an object")
            .iter()
            .map(|(key, value)| (key, value.to_string()))
            .collect();
        assert_eq!(settings.len(), 2);
        assert_eq!(variant["settings"]["swap.page_cluster"], page_cluster.parse::<u32>().unwrap());
        assert_eq!(variant["settings"]["swap.readahead"], readahead);

        let pc = format!("swap.page_cluster={page_cluster}");
        let ra = format!("swap.readahead={readahead}");
        let mut run =
            parse(&run_json(&data("tiny.toml"), &[SHRINK[0], SHRINK[1], "--set", &pc, "--set", &ra]));
        run.as_object_mut().expect("an object").remove("host");
        assert_eq!(variant["report"], run, "variant {idx} differs from `run` with the same edits");
    }
    // The settings reached the runs: page_cluster 3 with cluster readahead reads ahead.
    assert!(variants[2]["report"]["vmstat"]["swap_ra"].as_u64().unwrap() > 0);
    assert_eq!(variants[0]["report"]["vmstat"]["swap_ra"], 0);
}

#[test]
fn the_job_count_changes_nothing_but_host() {
    let mut one = TWO_KEYS.to_vec();
    one.extend(["--format", "json", "--jobs", "1"]);
    let mut two = TWO_KEYS.to_vec();
    two.extend(["--format", "json", "--jobs", "2"]);
    let (one, two) = (sweep(&one), sweep(&two));
    assert_eq!(without_host(&one), without_host(&two));
    assert_eq!(parse(&one)["host"]["jobs"], 1);
}

#[test]
fn every_split_into_shards_merges_back_to_the_unsharded_document() {
    let vary = ["--vary", "swap.page_cluster=0..2", "--vary", "swap.readahead=cluster,fixed"];
    let mut whole = vary.to_vec();
    whole.extend(["--format", "json"]);
    let whole = sweep(&whole);
    let dir = scratch("every-split");
    for n in 1..=3 {
        let mut files = Vec::new();
        for k in 1..=n {
            let spec = format!("{k}/{n}");
            let mut args = vary.to_vec();
            args.extend(["--shard", spec.as_str()]);
            let shard = sweep(&args);
            let doc = parse(&shard);
            assert_eq!(doc["shard"], serde_json::json!({"k": k, "n": n, "total": 6}));
            let indices: Vec<u64> =
                doc["variants"].as_array().unwrap().iter().map(|v| v["index"].as_u64().unwrap()).collect();
            let expected: Vec<u64> = (0..6).filter(|idx| idx % n == k - 1).collect();
            assert_eq!(indices, expected, "shard {spec}");
            files.push(write(&dir.join(format!("shard-{k}-of-{n}.json")), &shard));
        }
        // Any order of the files gives the same result.
        files.reverse();
        let mut args = vec!["merge"];
        args.extend(files.iter().map(String::as_str));
        args.extend(["--format", "json"]);
        let merged = ok(&args);
        assert_eq!(without_host(&merged), without_host(&whole), "merging {n} shards");
        assert_eq!(parse(&merged)["host"]["shards"], n);
    }
}

#[test]
fn merge_refuses_missing_duplicate_and_foreign_shards() {
    let dir = scratch("merge-errors");
    let shard = |name: &str, spec: &str, vary: &str| {
        let text = sweep(&["--vary", vary, "--shard", spec]);
        write(&dir.join(name), &text)
    };
    let first = shard("first.json", "1/2", "swap.page_cluster=0..3");
    let second = shard("second.json", "2/2", "swap.page_cluster=0..3");
    let other = shard("other.json", "2/2", "swap.page_cluster=0..4");

    let err = fails(&["merge", &first]);
    assert!(err.contains("missing shard 2/2 (variants 1, 3)") && err.contains(&first), "{err}");
    let err = fails(&["merge", &first, &second, &first]);
    assert!(err.contains("duplicate shard 1/2") && err.contains(&first), "{err}");
    let err = fails(&["merge", &first, &other]);
    assert!(
        err.contains(&other) && err.contains("not a shard of the same sweep") && err.contains("vary"),
        "{err}"
    );

    // A shard file that lost a variant is named, as is a whole sweep given as a shard.
    let mut doc = parse(&std::fs::read_to_string(&second).unwrap());
    doc["variants"].as_array_mut().unwrap().pop();
    let truncated = write(&dir.join("truncated.json"), &serde_json::to_string_pretty(&doc).unwrap());
    let err = fails(&["merge", &first, &truncated]);
    assert!(err.contains(&truncated) && err.contains("lacks variants 3"), "{err}");
    let whole =
        write(&dir.join("whole.json"), &sweep(&["--vary", "swap.page_cluster=0,1", "--format", "json"]));
    let err = fails(&["merge", &whole]);
    assert!(err.contains(&whole) && err.contains("not one shard"), "{err}");
    let err = fails(&["merge", &dir.join("absent.json").display().to_string()]);
    assert!(err.contains("cannot read shard") && err.contains("absent.json"), "{err}");
}

#[test]
fn out_writes_json_csv_and_a_plot_with_one_line_per_second_key_value() {
    let dir = scratch("out").join("results");
    let dir_arg = dir.display().to_string();
    let mut args = TWO_KEYS.to_vec();
    args.extend(["--out", &dir_arg, "--metric", "swap_ra"]);
    let table = sweep(&args);
    assert!(table.starts_with("swapsim "), "the table is still printed: {table}");

    let json = std::fs::read_to_string(dir.join("sweep.json")).expect("sweep.json is written");
    assert_eq!(parse(&json)["variants"].as_array().unwrap().len(), 4);
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).expect("sweep.csv is written");
    let rows: Vec<Vec<&str>> = csv.lines().map(|line| line.split(',').collect()).collect();
    assert_eq!(rows[0][..3], ["swap.page_cluster", "swap.readahead", "pgmajfault"]);
    assert_eq!(rows.len(), 5);
    for row in &rows[1..] {
        assert_eq!(row.len(), rows[0].len());
        let pgmajfault: u64 = row[2].parse().expect("counts are plain integers");
        assert!(pgmajfault > 0);
    }

    let svg = std::fs::read_to_string(dir.join("sweep.svg")).expect("sweep.svg is written");
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(200)]);
    assert!(svg.trim_end().ends_with("</svg>"));
    for label in ["swap.readahead=cluster", "swap.readahead=none", "swap.page_cluster", "swap_ra"] {
        assert!(svg.contains(label), "the plot names {label}");
    }
    // One polyline per line, plus one per legend entry.
    assert!(svg.matches("<polyline").count() >= 4, "{svg}");
}

#[test]
fn a_single_key_sweep_plots_one_categorical_line() {
    let dir = scratch("one-line");
    let dir_arg = dir.display().to_string();
    sweep(&["--vary", "swap.readahead=cluster,fixed,none", "--out", &dir_arg, "--metric", "major_p99_us"]);
    let svg = std::fs::read_to_string(dir.join("sweep.svg")).expect("sweep.svg is written");
    for label in [">\ncluster\n<", ">\nfixed\n<", ">\nnone\n<", "major_p99_us"] {
        assert!(svg.contains(label), "the plot shows {label:?}");
    }
}

#[test]
fn table_and_csv_list_the_variants_in_order() {
    let mut args = TWO_KEYS.to_vec();
    args.extend(["--format", "csv"]);
    let csv = sweep(&args);
    let settings: Vec<String> =
        csv.lines().skip(1).map(|line| line.split(',').take(2).collect::<Vec<_>>().join(" ")).collect();
    assert_eq!(settings, ["0 cluster", "0 none", "3 cluster", "3 none"]);
    assert!(csv.lines().skip(1).all(|line| line.ends_with(",completed")), "{csv}");

    let mut args = TWO_KEYS.to_vec();
    args.extend(["--width", "0"]);
    let table = sweep(&args);
    let header = table.lines().find(|line| line.starts_with("swap.page_cluster")).expect("a header row");
    for column in
        ["pgmajfault", "swap_ra_hit", "read dispatches", "reads/dispatch", "major p99 µs", "sim time s"]
    {
        assert!(header.contains(column), "{header}");
    }
    let rows: Vec<String> = table
        .lines()
        .skip_while(|line| !line.starts_with("swap.page_cluster"))
        .skip(1)
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(rows, ["0 cluster", "0 none", "3 cluster", "3 none"]);
    assert!(table.contains("fixed: --set workload.generator.passes=1"), "{table}");
}

#[test]
fn bad_sweep_arguments_are_rejected_with_messages() {
    let tiny = data("tiny.toml");
    let check = |vary: &[&str], expected: &str| {
        let mut args = vec!["sweep", tiny.as_str()];
        args.extend_from_slice(vary);
        let err = fails(&args);
        assert!(err.contains(expected), "{args:?}: {err}");
    };
    check(&["--vary", "swap.page_cluster="], "--vary swap.page_cluster=: no values");
    check(&["--vary", "swap.page_cluster=3..1"], "the range 3..1 is empty");
    check(&["--vary", "swap.page_cluster=1..two"], "not a range of integers");
    check(&["--vary", "swap.page_clustr=0,1"], "unknown field `page_clustr`");
    check(&["--vary", "swap.page_clustr=0,1"], "--vary swap.page_clustr=0");
    check(&["--vary", "swap.page_cluster=0,99"], "swap.page_cluster: 99 is outside 0..=31");
    check(&["--vary", "swap.page_cluster"], "expected KEY=VALUES");
    check(&["--vary", "memcg.swappiness=0..100", "--vary", "swap.page_cluster=0..99"], "at most 10000");
    check(&["--vary", "seed=1,2"], "--seed");
    check(&["--vary", "swap.page_cluster=0,1", "--set", "swap.page_cluster=2"], "also varied");
    check(&["--vary", "swap.page_cluster=0,1", "--shard", "3/2"], "--shard \"3/2\" is not K/N");
    check(&["--vary", "swap.page_cluster=0,1", "--shard", "1/2", "--format", "csv"], "use --format json");
    check(&["--vary", "swap.page_cluster=0,1", "--metric", "pgmajfaults"], "unknown metric");
    check(&["--vary", "swap.page_cluster=0,1", "--jobs", "0"], "0");
    // --vary is required.
    check(&[], "--vary");
}

#[test]
fn progress_is_never_drawn_when_stderr_is_not_a_terminal() {
    let out = crate::support::swapsim(&[
        "sweep",
        &data("tiny.toml"),
        SHRINK[0],
        SHRINK[1],
        "--vary",
        "swap.page_cluster=0..3",
    ]);
    assert!(out.success, "{}", out.stderr);
    assert_eq!(out.stderr, "");
}

#[test]
fn the_same_seed_runs_every_variant() {
    let doc = parse(&sweep(&["--vary", "swap.page_cluster=0,1", "--seed", "9", "--format", "json"]));
    assert_eq!(doc["seed"], 9);
    for variant in doc["variants"].as_array().unwrap() {
        assert_eq!(variant["report"]["seed"], 9);
    }
    let value: &Value = &doc["variants"][1]["settings"]["swap.page_cluster"];
    assert_eq!(value, 1);
}

/// The CSV output as a header and rows of cells.
fn csv_rows(csv: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = csv.lines().map(|line| line.split(',').map(str::to_string).collect::<Vec<String>>());
    let header = lines.next().expect("a header row");
    (header, lines.collect())
}

/// The cell of `row` under `column`.
fn cell<'a>(header: &[String], row: &'a [String], column: &str) -> &'a str {
    let col = header.iter().position(|name| name == column).unwrap_or_else(|| panic!("no column {column}"));
    &row[col]
}

#[test]
fn baseline_adds_a_ratio_per_metric_and_the_baseline_variant_is_exactly_one() {
    let mut args = TWO_KEYS.to_vec();
    args.extend(["--baseline", "swap.readahead=cluster", "--format", "csv"]);
    let (header, rows) = csv_rows(&sweep(&args));
    let metrics = ["pgmajfault", "pswpin", "swap_ra", "read_dispatches", "major_p99_us", "sim_time_s"];
    for metric in metrics {
        let at = header.iter().position(|name| name == metric).expect("the metric's column");
        assert_eq!(header[at + 1], format!("{metric}_ratio"), "the ratio follows its metric");
    }
    // Rows: (0, cluster), (0, none), (3, cluster), (3, none); the baseline of each is the
    // cluster row with the same page_cluster.
    for (row_idx, base_idx) in [(0, 0), (1, 0), (2, 2), (3, 2)] {
        let (row, base) = (&rows[row_idx], &rows[base_idx]);
        for metric in metrics {
            let ratio = cell(&header, row, &format!("{metric}_ratio"));
            if row_idx == base_idx {
                assert_eq!(ratio, "1", "the baseline against itself, {metric}");
                continue;
            }
            let value: f64 = cell(&header, row, metric).parse().unwrap();
            let base_value: f64 = cell(&header, base, metric).parse().unwrap();
            if base_value == 0.0 && value != 0.0 {
                assert_eq!(ratio, "", "undefined against a zero");
            } else if value == base_value {
                assert_eq!(ratio, "1");
            } else {
                assert_eq!(ratio.parse::<f64>().unwrap(), value / base_value, "row {row_idx} {metric}");
            }
        }
    }
    // swap_ra: cluster reads ahead at page_cluster 3, none never does.
    assert_eq!(cell(&header, &rows[3], "swap_ra_ratio"), "0");

    let mut args = TWO_KEYS.to_vec();
    args.extend(["--baseline", "swap.readahead=cluster"]);
    let table = sweep(&args);
    // Too wide for one line of 120 characters: the metrics wrap into blocks, each headed by
    // the varied settings, and together they hold every metric's ratio.
    let headers: Vec<&str> = table.lines().filter(|line| line.starts_with("swap.page_cluster")).collect();
    assert!(headers.len() > 1, "{table}");
    assert_eq!(headers.iter().map(|header| header.matches("×base").count()).sum::<usize>(), 10, "{table}");
    assert!(table.lines().all(|line| line.chars().count() <= 120), "{table}");
    assert!(headers.last().unwrap().ends_with("status  outcome"), "{table}");
    assert!(table.contains("baseline: swap.readahead=cluster"), "{table}");

    let mut args = TWO_KEYS.to_vec();
    args.extend(["--baseline", "swap.page_cluster=3", "--format", "json"]);
    let doc = parse(&sweep(&args));
    assert_eq!(doc["baseline"], serde_json::json!({"key": "swap.page_cluster", "value": 3}));
    let summary = &doc["summary"];
    assert_eq!(summary["metrics"][0], "pgmajfault");
    for (idx, row) in summary["rows"].as_array().unwrap().iter().enumerate() {
        assert_eq!(row["index"], idx);
        assert_eq!(row["status"], "ok");
        let mean = &row["pgmajfault"]["mean"];
        assert_eq!(*mean, doc["variants"][idx]["report"]["vmstat"]["pgmajfault"].as_f64().unwrap());
        assert!(row["pgmajfault"].get("ci95").is_none(), "one seed, no interval");
        if idx >= 2 {
            assert_eq!(row["pgmajfault"]["ratio"], 1.0);
        }
    }
}

#[test]
fn a_baseline_must_be_a_varied_key_and_value() {
    let tiny = data("tiny.toml");
    let check = |baseline: &str, expected: &str| {
        let err = fails(&[
            "sweep",
            &tiny,
            TWO_KEYS[0],
            TWO_KEYS[1],
            TWO_KEYS[2],
            TWO_KEYS[3],
            "--baseline",
            baseline,
        ]);
        assert!(err.contains(expected), "{baseline}: {err}");
    };
    check("swap.readahead=vma", "vma is not a value of swap.readahead; it takes cluster, none");
    check(
        "memcg.limit=1MiB",
        "memcg.limit is not varied; the varied keys are swap.page_cluster, swap.readahead",
    );
    check("swap.readahead", "expected KEY=VALUE");
    let err = fails(&[
        "sweep",
        &tiny,
        "--vary",
        "swap.page_cluster=0,1",
        "--baseline",
        "swap.page_cluster=0",
        "--shard",
        "1/2",
    ]);
    assert!(err.contains("give --baseline to `swapsim merge`"), "{err}");
    let err = fails(&["sweep", &tiny, "--vary", "swap.page_cluster=0,1", "--seeds", "0"]);
    assert!(err.contains("--seeds 0"), "{err}");
}

#[test]
fn seeds_give_each_metric_a_mean_and_a_95_percent_interval() {
    let args = ["--vary", "swap.page_cluster=0,3", "--seeds", "3", "--format", "csv"];
    let (header, rows) = csv_rows(&sweep(&args));
    assert!(header.iter().any(|name| name == "pgmajfault_ci95"), "{header:?}");
    for (row, page_cluster) in rows.iter().zip(["0", "3"]) {
        // The same variant run alone at the seeds 7, 8, 9 (the scenario's seed and the next two).
        let samples: Vec<f64> = (7..10)
            .map(|seed| {
                let set = format!("swap.page_cluster={page_cluster}");
                let seed = seed.to_string();
                let doc = parse(&run_json(
                    &data("tiny.toml"),
                    &[SHRINK[0], SHRINK[1], "--set", &set, "--seed", &seed],
                ));
                doc["vmstat"]["pgmajfault"].as_f64().unwrap()
            })
            .collect();
        let mean = samples.iter().sum::<f64>() / 3.0;
        let variance = samples.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 2.0;
        let half_width = 4.302653 * (variance / 3.0).sqrt();
        let got_mean: f64 = cell(&header, row, "pgmajfault").parse().unwrap();
        let got_half_width: f64 = cell(&header, row, "pgmajfault_ci95").parse().unwrap();
        assert!((got_mean - mean).abs() < 1e-9, "{got_mean} vs {mean}");
        assert!((got_half_width - half_width).abs() < 1e-9, "{got_half_width} vs {half_width}");
        assert!(samples.iter().any(|&x| x != samples[0]), "the seeds differ: {samples:?}");
    }

    let table = sweep(&["--vary", "swap.page_cluster=0,3", "--seeds", "3"]);
    assert!(table.contains("seeds: 3 per variant (7..=9)"), "{table}");
    let row = table.lines().find(|line| line.starts_with("0 ")).expect("a row");
    assert!(row.contains(" ± "), "{row}");

    // JSON: one report per seed, in seed order, and the same bytes whatever --jobs says.
    let json = |jobs: &str| {
        sweep(&["--vary", "swap.page_cluster=0,3", "--seeds", "3", "--format", "json", "--jobs", jobs])
    };
    let (one, two) = (json("1"), json("2"));
    assert_eq!(without_host(&one), without_host(&two));
    let doc = parse(&one);
    assert_eq!(doc["seeds"], 3);
    let runs = doc["variants"][1]["runs"].as_array().expect("runs per seed");
    let seeds: Vec<u64> = runs.iter().map(|run| run["report"]["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, [7, 8, 9]);
    assert!(doc["variants"][1].get("report").is_none());
    assert!(doc["summary"]["rows"][1]["pgmajfault"]["ci95"].as_f64().unwrap() >= 0.0);
}

#[test]
fn seeded_shards_merge_with_a_baseline_into_the_unsharded_document() {
    let vary = ["--vary", "swap.page_cluster=0..2", "--seeds", "2"];
    let mut whole = vary.to_vec();
    whole.extend(["--baseline", "swap.page_cluster=1", "--format", "json"]);
    let whole = sweep(&whole);
    let dir = scratch("seeded-shards");
    let mut files = Vec::new();
    for spec in ["1/2", "2/2"] {
        let mut args = vary.to_vec();
        args.extend(["--shard", spec]);
        files.push(write(&dir.join(format!("shard-{}.json", &spec[..1])), &sweep(&args)));
    }
    let merged =
        ok(&["merge", &files[0], &files[1], "--baseline", "swap.page_cluster=1", "--format", "json"]);
    assert_eq!(without_host(&merged), without_host(&whole));
    assert_eq!(parse(&merged)["summary"]["rows"][1]["pgmajfault"]["ratio"], 1.0);
}

#[test]
fn a_variant_whose_system_failed_is_marked_and_the_sweep_still_succeeds() {
    // With 2 MiB the swapoff after the fill has no room and fails; with 8 MiB nothing was
    // swapped out and it succeeds.
    let path = data("swapoff-without-room.toml");
    let sweep_of = |extra: &[&str]| {
        let mut args = vec!["sweep", path.as_str(), "--vary", "memcg.limit=2MiB,8MiB"];
        args.extend_from_slice(extra);
        ok(&args)
    };
    let (header, rows) = csv_rows(&sweep_of(&["--format", "csv"]));
    assert_eq!(cell(&header, &rows[0], "status"), "failed: swapoff");
    assert_eq!(cell(&header, &rows[1], "status"), "ok");

    let table = sweep_of(&["--width", "0"]);
    let failed_row = table.lines().find(|line| line.starts_with("2MiB")).expect("a row");
    assert!(failed_row.contains("failed: swapoff"), "{failed_row}");

    let doc = parse(&sweep_of(&["--format", "json"]));
    assert_eq!(doc["variants"][0]["status"], "failed: swapoff");
    assert_eq!(doc["variants"][0]["report"]["operations"][0]["result"], "failed: out of memory");
    assert_eq!(doc["variants"][1]["status"], "ok");

    let doc = parse(&sweep_of(&["--seeds", "2", "--format", "json"]));
    assert_eq!(doc["variants"][0]["status"], "failed: swapoff in 2 of 2 seeds");
    assert_eq!(doc["variants"][0]["runs"][1]["status"], "failed: swapoff");
    assert_eq!(doc["summary"]["rows"][0]["status"], "failed: swapoff in 2 of 2 seeds");
}

/// The sweep command of examples/slurm-sweep.sh (its page-cluster axis and seeds narrowed,
/// to stay quick), run once per array task with the variables Slurm sets and once per pod
/// as examples/indexed-job.yaml runs it, merges back to exactly the single-machine sweep.
#[test]
fn array_job_shards_from_the_environment_merge_to_the_single_machine_sweep() {
    let script =
        std::fs::read_to_string(crate::support::repo().join("examples/slurm-sweep.sh")).expect("the script");
    let command = script.replace("\\\n", " ");
    let line = command.lines().find(|l| l.trim_start().starts_with("swapsim sweep")).expect("a sweep line");
    let args: Vec<String> = line
        .split('>')
        .next()
        .expect("a command")
        .split_whitespace()
        .skip(1)
        .map(|a| match a {
            "swap.page_cluster=0..7" => "swap.page_cluster=0..1".to_string(),
            "3" => "2".to_string(),
            other => other.to_string(),
        })
        .collect();
    assert!(args.contains(&"auto".to_string()), "{args:?}");
    let repo = crate::support::repo();
    let exec = |args: &[String], env: &[(&str, String)]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_swapsim"))
            .args(args)
            .current_dir(&repo)
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("JOB_COMPLETION_INDEX")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .output()
            .expect("swapsim runs");
        (
            out.status.code(),
            String::from_utf8(out.stdout).expect("UTF-8"),
            String::from_utf8(out.stderr).expect("UTF-8"),
        )
    };
    let run = |env: &[(&str, String)], extra: &[&str]| {
        let mut all = args.clone();
        all.extend(extra.iter().map(|a| a.to_string()));
        exec(&all, env)
    };
    // The whole sweep, unsharded.
    let whole_args: Vec<String> = args.iter().filter(|a| *a != "auto" && *a != "--shard").cloned().collect();
    let (code, whole, stderr) = exec(&whole_args, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let dir = scratch("array-jobs");
    for (engine, envs) in [
        (
            "slurm",
            (0..3)
                .map(|i| {
                    (
                        vec![("SLURM_ARRAY_TASK_ID", i.to_string()), ("SLURM_ARRAY_TASK_COUNT", "3".into())],
                        vec![],
                    )
                })
                .collect::<Vec<_>>(),
        ),
        (
            "indexed",
            (0..3)
                .map(|i| (vec![("JOB_COMPLETION_INDEX", i.to_string())], vec!["--shard-count", "3"]))
                .collect(),
        ),
    ] {
        let mut files = Vec::new();
        for (i, (env, extra)) in envs.iter().enumerate() {
            let (code, stdout, stderr) = run(env, extra);
            assert_eq!(code, Some(0), "{engine} task {i}: {stderr}");
            files.push(write(&dir.join(format!("{engine}-{i}.json")), &stdout));
        }
        let mut merge = vec!["merge"];
        merge.extend(files.iter().map(String::as_str));
        merge.extend(["--format", "json"]);
        assert_eq!(without_host(&ok(&merge)), without_host(&whole), "{engine}");
    }
    // Outside an array job, auto says what it looked for.
    let (code, _, stderr) = run(&[], &[]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX"), "{stderr}");
}
