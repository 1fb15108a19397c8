//! `run --sample-every`, `--series-out` and `--series-svg`: the time series of a run.

use crate::support::*;
use serde_json::Value;

/// The report of `run --format json` without what sampling adds (`series`, and the
/// echoed `[report]`) and without `host`.
fn without_sampling(doc: &str) -> Value {
    let mut doc = parse(doc);
    let map = doc.as_object_mut().expect("a JSON object");
    map.remove("host");
    map.remove("series");
    map["scenario"].as_object_mut().expect("the scenario").remove("report");
    doc
}

#[test]
fn sampling_changes_no_figure_of_the_report() {
    // One interval each: a few samples, or many boundaries between two events.
    let cases: [(&str, &[&str], &str); 4] = [
        ("scenarios/queue.toml", &[], "250us"),
        ("scenarios/demo.toml", &["--seed", "5"], "3ms"),
        ("scenarios/jobs.toml", &["--set", "workload.jobs.jobs=6"], "1ms"),
        ("scenarios/hibernate.toml", &["--set", "workload.generator.region=64MiB"], "7ms"),
    ];
    for (scenario, extra, every) in cases {
        let plain = run_json(&in_repo(scenario), extra);
        assert!(!plain.contains("\"series\""), "{scenario}: no series unless asked for");
        let mut args = extra.to_vec();
        args.extend(["--sample-every", every]);
        let sampled = run_json(&in_repo(scenario), &args);
        assert_eq!(without_sampling(&sampled), without_sampling(&plain), "{scenario} every {every}");
        let doc = parse(&sampled);
        assert!(!doc["series"]["samples"].as_array().expect("samples").is_empty(), "{scenario}");
        assert_eq!(doc["scenario"]["report"]["sample_every"], every);
    }
}

/// The CSV text as (header, rows), every row as long as the header.
fn csv_table(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    // No field of these files is quoted: task names of the bundled queue have no comma.
    let mut lines = text.lines().map(|line| line.split(',').map(str::to_string).collect::<Vec<_>>());
    let header = lines.next().expect("a header line");
    let rows: Vec<Vec<String>> = lines.collect();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{row:?}");
    }
    (header, rows)
}

#[test]
fn the_csv_rows_add_up_to_the_report_and_the_json_file_matches() {
    let dir = scratch_dir("series", "csv");
    let csv_path = dir.join("queue.csv");
    let json_path = dir.join("queue.json");
    let scenario = in_repo("scenarios/queue.toml");
    let csv_arg = csv_path.display().to_string();
    let doc = run_json(&scenario, &["--sample-every", "10ms", "--series-out", &csv_arg]);
    let doc = parse(&doc);
    let json_arg = json_path.display().to_string();
    ok(&["run", &scenario, "--sample-every", "10ms", "--series-out", &json_arg]);
    let (header, rows) = csv_table(&std::fs::read_to_string(&csv_path).expect("the CSV file is written"));
    let column =
        |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let sum =
        |name: &str| rows.iter().map(|row| row[column(name)].parse::<u64>().expect("a count")).sum::<u64>();
    for counter in [
        "pswpin",
        "pswpout",
        "pgmajfault",
        "pgfault",
        "zswpin",
        "zswpout",
        "zswpwb",
        "swap_ra",
        "pgscan_direct",
        "pgsteal_direct",
        "pgscan_kswapd",
        "workingset_refault_anon",
    ] {
        assert_eq!(sum(counter), doc["vmstat"][counter].as_u64().unwrap(), "{counter}");
    }
    assert_eq!(sum("events"), doc["events"].as_u64().unwrap());
    // Block requests by direction, and their service times in the JSON samples.
    let devices = doc["block"].as_array().expect("block figures per device");
    let total = |dir: &str, field: &str| devices.iter().map(|d| d[dir][field].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("read_requests"), total("reads", "completed"));
    assert_eq!(sum("write_requests"), total("writes", "completed"));
    assert!(sum("read_requests") > 0 && sum("write_requests") > 0, "the queue reads and writes");
    let samples = doc["series"]["samples"].as_array().unwrap();
    let service = |f: &str| samples.iter().map(|s| s[f].as_u64().unwrap()).sum::<u64>();
    assert_eq!(service("read_service_ns"), total("reads", "service_ns_total"));
    assert_eq!(service("write_service_ns"), total("writes", "service_ns_total"));
    for row in &rows {
        let (n, mean) = (&row[column("read_requests")], &row[column("read_service_us_mean")]);
        assert_eq!(n == "0", mean.is_empty(), "a mean only over requests: {n} {mean}");
    }
    assert_eq!(sum("accesses"), doc["accesses"].as_u64().unwrap());
    assert!(sum("pswpin") > 0, "the queue swaps");
    // Samples every 10 ms to the run's end; the last one at the end.
    let times: Vec<f64> = rows.iter().map(|row| row[column("t_s")].parse().expect("seconds")).collect();
    for (k, t) in times[..times.len() - 1].iter().enumerate() {
        assert!((t - (k + 1) as f64 * 0.01).abs() < 1e-9, "sample {k} at {t}");
    }
    assert!((times[times.len() - 1] - doc["sim_time_s"].as_f64().unwrap()).abs() < 1e-9);
    // Each job has its columns; every job starts not started and ends finished.
    let states = header.iter().filter(|h| h.starts_with("task.") && h.ends_with(".state")).count();
    assert_eq!(states, 8, "{header:?}");
    let first_state = column("task.01-zipf-12M-p2.trace.zst.state");
    assert_eq!(rows.last().unwrap()[first_state], "finished");
    let stall: f64 = rows.iter().map(|row| row[column("stall_s")].parse::<f64>().unwrap()).sum();
    let io_wait: f64 =
        doc["tasks"].as_array().unwrap().iter().map(|t| t["io_wait_s"].as_f64().unwrap()).sum();
    assert!(stall + 1e-9 >= io_wait && stall > 0.0, "stall {stall} s, I/O wait {io_wait} s");
    // The report's own CSV row stays one row of totals: the series has its own file.
    let row = ok(&["run", &scenario, "--sample-every", "10ms", "--format", "csv"]);
    assert_eq!(row.lines().count(), 2);
    assert!(!row.contains("series.") && row.contains("vmstat.pswpin"), "{row}");
    // The JSON file holds the same samples as the run's JSON document.
    let series = parse(&std::fs::read_to_string(&json_path).expect("the JSON file is written"));
    assert_eq!(series, doc["series"]);
    assert_eq!(series["samples"].as_array().unwrap().len(), rows.len());
}

/// Checks that `svg` is one well-formed element tree: every tag closed in order.
fn check_well_formed(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(at) = rest.find('<') {
        let end = rest[at..].find('>').expect("every tag is closed") + at;
        let tag = &rest[at + 1..end];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name), "closing {name}");
        } else if !tag.ends_with('/') && !tag.starts_with('?') && !tag.starts_with('!') {
            open.push(tag.split_whitespace().next().expect("a tag name"));
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "unclosed: {open:?}");
}

#[test]
fn the_chart_is_an_svg_naming_every_series_and_marking_the_timeline() {
    let dir = scratch_dir("series", "svg");
    let svg_path = dir.join("swapoff.svg");
    let svg_arg = svg_path.display().to_string();
    let scenario = in_repo("scenarios/swapoff.toml");
    let table = ok(&[
        "run",
        &scenario,
        "--set",
        "workload.generator.region=512MiB",
        "--sample-every",
        "20ms",
        "--series-svg",
        &svg_arg,
    ]);
    assert!(table.contains(" samples every 20ms"), "the table says the run was sampled: {table}");
    let svg = std::fs::read_to_string(&svg_path).expect("the SVG file is written");
    assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
    check_well_formed(&svg);
    for name in [
        "pswpin/s",
        "pswpout/s",
        "zswpin/s",
        "zswpout/s",
        "pgmajfault/s",
        "resident MiB",
        "swapped MiB",
        "zswap pool MiB",
        "memcg usage MiB",
        "swapoff",
        "set-memcg-limit",
    ] {
        assert!(svg.contains(&format!(">\n{name}\n<")), "the chart names {name}");
    }
}

#[test]
fn bad_intervals_and_files_are_refused_before_the_run() {
    let scenario = in_repo("scenarios/queue.toml");
    for bad in ["0", "0ms", "fast", "10", "-1s", "1.5 parsecs"] {
        let err = fails(&["run", &scenario, &format!("--sample-every={bad}")]);
        assert!(err.contains("--sample-every"), "{bad}: {err}");
    }
    let err = fails(&["run", &scenario, "--series-out", "x.csv"]);
    assert!(err.contains("--sample-every"), "{err}");
    let err = fails(&["run", &scenario, "--sample-every", "1ms", "--series-out", "x.txt"]);
    assert!(err.contains("x.txt") && err.contains(".csv"), "{err}");
    let err = fails(&["run", &scenario, "--set", "report.sample_every=0s"]);
    assert!(err.contains("report.sample_every"), "{err}");
}
