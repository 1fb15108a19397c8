//! Captured traces: `trace info|head|convert|generate`, and `run --trace` in every format
//! (the replays held to libCacheSim's counts are in `libcachesim.rs`).
//!
//! The samples under `crates/cli/tests/data/` are tiny hand-checked captures: `sample.perf`
//! (`perf script` of `exceptions:page_fault_user`, two threads of one process and one
//! unrelated event), `sample.ftrace` (a `trace` file of `page_fault_user`), `sample.lackey`
//! (valgrind lackey with its `==pid==` banner lines and one load spanning two pages) and
//! `sample.txt` (the text format). Native files are made by `trace convert` in the tests.

use crate::support::{data, fails, ok, parse, run_json, scratch_dir, swapsim, without_host};
use std::path::{Path, PathBuf};

/// A fresh directory for one test's files.
pub(crate) fn scratch(name: &str) -> PathBuf {
    scratch_dir("traces", name)
}

pub(crate) fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// Lines of a sample that satisfy `is_event`, as `grep -c` would count them.
fn count_lines(sample: &str, is_event: impl Fn(&str) -> bool) -> u64 {
    let text = std::fs::read_to_string(data(sample)).expect("the sample exists");
    text.lines().filter(|line| is_event(line)).count() as u64
}

fn is_perf_fault(line: &str) -> bool {
    line.contains(" exceptions:page_fault_user: ")
}

fn is_ftrace_fault(line: &str) -> bool {
    !line.starts_with('#') && line.contains(" page_fault_user: ")
}

/// lackey data accesses: ` L`, ` S` and ` M` lines (instruction fetches start with `I`).
fn is_lackey_access(line: &str) -> bool {
    [" L ", " S ", " M "].iter().any(|op| line.starts_with(op))
}

fn is_text_access(line: &str) -> bool {
    line.starts_with("R ") || line.starts_with("W ")
}

/// `trace info --json` of a file.
pub(crate) fn info(file: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["trace", "info", file, "--json"];
    args.extend_from_slice(extra);
    parse(&ok(&args))
}

#[test]
fn info_counts_the_event_lines_of_every_format() {
    let perf = info(&data("sample.perf"), &[]);
    assert_eq!(perf["format"], "perf");
    assert_eq!(perf["records"], count_lines("sample.perf", is_perf_fault));
    let tasks: Vec<(u64, u64, u64)> = perf["tasks"]
        .as_array()
        .expect("tasks is an array")
        .iter()
        .map(|t| (t["pid"].as_u64().unwrap(), t["tid"].as_u64().unwrap(), t["records"].as_u64().unwrap()))
        .collect();
    assert_eq!(tasks, [(4101, 4101, 4), (4101, 4102, 3)]);
    let skipped: u64 = perf["skipped"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(skipped, count_lines("sample.perf", |l| !is_perf_fault(l)), "the sched_switch line");

    let ftrace = info(&data("sample.ftrace"), &[]);
    assert_eq!(ftrace["format"], "ftrace");
    assert_eq!(ftrace["records"], count_lines("sample.ftrace", is_ftrace_fault));

    // One load spans two pages and counts once per page.
    let lackey = info(&data("sample.lackey"), &[]);
    assert_eq!(lackey["format"], "lackey");
    assert_eq!(lackey["records"], count_lines("sample.lackey", is_lackey_access) + 1);

    let text = info(&data("sample.txt"), &[]);
    assert_eq!(text["format"], "text");
    assert_eq!(text["records"], count_lines("sample.txt", is_text_access));
    assert_eq!(text["distinct_pages"], 5);
    assert_eq!(text["footprint_bytes"], 5 * 4096);
    assert_eq!((text["reads"].as_u64(), text["writes"].as_u64()), (Some(4), Some(4)));
}

#[test]
fn info_table_for_people() {
    let table = ok(&["trace", "info", &data("sample.txt")]);
    for expected in [
        "format          text",
        "records         8",
        "distinct pages  5",
        "footprint       20 KiB (5 pages × 4 KiB)",
        "time span       none (the format records no time)",
        "reads           4 (50.0 %)",
        "skipped         0",
    ] {
        assert!(table.contains(expected), "missing {expected:?} in\n{table}");
    }
}

#[test]
fn head_prints_the_first_records() {
    let head = ok(&["trace", "head", &data("sample.perf"), "-n", "3"]);
    expect_test::expect![[r#"
        4101/4101 8312.100000000 W 0x7f3a2c000000
        4101/4101 8312.100010000 W 0x7f3a2c001000
        4101/4102 8312.100012000 R 0x7f3a2d000000
    "#]]
    .assert_eq(&head);
}

#[test]
fn run_replays_every_format() {
    let dir = scratch("run-every-format");
    let native = path(&dir, "sample.swt");
    ok(&["trace", "convert", &data("sample.perf"), &native]);
    let cases = [
        (data("sample.perf"), "perf", count_lines("sample.perf", is_perf_fault), 2),
        (data("sample.ftrace"), "ftrace", count_lines("sample.ftrace", is_ftrace_fault), 1),
        (data("sample.lackey"), "lackey", count_lines("sample.lackey", is_lackey_access) + 1, 1),
        (data("sample.txt"), "text", count_lines("sample.txt", is_text_access), 1),
        (native, "native", count_lines("sample.perf", is_perf_fault), 2),
    ];
    for (file, format, records, n_tasks) in cases {
        let doc = parse(&run_json(&data("tiny.toml"), &["--trace", &file]));
        assert_eq!(doc["outcome"]["kind"], "completed", "{file}");
        assert_eq!(doc["trace"]["format"], format, "{file}");
        assert_eq!(doc["trace"]["records"], records, "{file}");
        assert_eq!(doc["accesses"], records, "{file}: one access per record");
        assert_eq!(doc["trace"]["tasks"].as_array().unwrap().len(), n_tasks, "{file}");
        assert_eq!(doc["scenario"]["workload"]["trace"], file.as_str());
    }
    // Naming the format gives the same run as detecting it.
    let detected = parse(&run_json(&data("tiny.toml"), &["--trace", &data("sample.ftrace")]));
    let named = parse(&run_json(
        &data("tiny.toml"),
        &["--trace", &data("sample.ftrace"), "--trace-format", "ftrace"],
    ));
    assert_eq!(detected["vmstat"], named["vmstat"]);
    assert_eq!(named["scenario"]["workload"]["trace_format"], "ftrace");
}

/// The native trace `file` cut before its summary frame, whose length its last four bytes
/// give: a file as written before the frame existed.
fn without_summary_frame(file: &str) -> Vec<u8> {
    let bytes = std::fs::read(file).expect("the trace exists");
    let tail: [u8; 4] = bytes[bytes.len() - 4..].try_into().expect("four bytes");
    bytes[..bytes.len() - u32::from_le_bytes(tail) as usize].to_vec()
}

#[test]
fn a_native_summary_frame_stands_in_for_the_first_pass() {
    let dir = scratch("summary-frame");
    let native = path(&dir, "sample.swt");
    // Two threads with times: the frame gives both the tasks and the time origin, and the
    // replay is the one of the trace read through first.
    ok(&["trace", "convert", &data("sample.perf"), &native]);
    let framed = run_json(&data("tiny.toml"), &["--trace", &native, "--pace", "timestamps"]);
    let bare = without_summary_frame(&native);
    std::fs::write(&native, &bare).expect("the trace can be rewritten");
    let read_through = run_json(&data("tiny.toml"), &["--trace", &native, "--pace", "timestamps"]);
    assert_eq!(without_host(&framed), without_host(&read_through));
    assert_eq!(info(&native, &[])["records"], count_lines("sample.perf", is_perf_fault));

    // An untimed trace read three times over (`--repeat`): the frame's counts, tripled,
    // stand in for the first pass; a timed trace read twice is still read through.
    let untimed = (path(&dir, "text.swt"), "sample.txt", count_lines("sample.txt", is_text_access), 3);
    let timed = (path(&dir, "perf.swt"), "sample.perf", count_lines("sample.perf", is_perf_fault), 2);
    for (file, sample, per_reading, repeat) in [untimed, timed] {
        ok(&["trace", "convert", &data(sample), &file]);
        let args = ["--trace", file.as_str(), "--repeat", &repeat.to_string()];
        let framed = run_json(&data("tiny.toml"), &args);
        std::fs::write(&file, without_summary_frame(&file)).expect("the trace can be rewritten");
        let read_through = run_json(&data("tiny.toml"), &args);
        assert_eq!(without_host(&framed), without_host(&read_through), "{file} --repeat {repeat}");
        assert_eq!(parse(&framed)["accesses"], per_reading * repeat, "{file}");
    }

    // One timed thread: the frame gives the time origin too.
    let one = path(&dir, "one.swt");
    ok(&["trace", "convert", &data("sample.ftrace"), &one]);
    let framed = run_json(&data("tiny.toml"), &["--trace", &one, "--pace", "timestamps"]);
    let frame_at = without_summary_frame(&one).len();
    let framed_bytes = std::fs::read(&one).expect("the trace exists");
    std::fs::write(&one, &framed_bytes[..frame_at]).expect("the trace can be rewritten");
    let read_through = run_json(&data("tiny.toml"), &["--trace", &one, "--pace", "timestamps"]);
    assert_eq!(without_host(&framed), without_host(&read_through));

    // A frame that miscounts the thread's records, or moves its first time, makes the
    // replay fail at the thread's end; each still agrees with itself.
    let tampered = |changes: &[(usize, i64)]| {
        let mut bytes = framed_bytes.clone();
        for &(field, by) in changes {
            let at = frame_at + field;
            let n = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
            bytes[at..at + 8].copy_from_slice(&n.wrapping_add_signed(by).to_le_bytes());
        }
        std::fs::write(&one, &bytes).expect("the trace can be rewritten");
        fails(&["run", &data("tiny.toml"), "--trace", &one])
    };
    // The total and the task's count, one more each.
    let err = tampered(&[(16, 1), (68 + 8, 1)]);
    assert!(err.contains("were counted before the replay"), "{err}");
    // The first time, one nanosecond early.
    let err = tampered(&[(48, -1)]);
    assert!(err.contains("the trace's first time is"), "{err}");

    // Two timed threads: a first time one nanosecond early fails the replay too, found by
    // the reader the threads share.
    let two = path(&dir, "two.swt");
    ok(&["trace", "convert", &data("sample.perf"), &two]);
    let frame_at = without_summary_frame(&two).len();
    let mut bytes = std::fs::read(&two).expect("the trace exists");
    let at = frame_at + 48;
    let first = u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
    bytes[at..at + 8].copy_from_slice(&(first - 1).to_le_bytes());
    std::fs::write(&two, &bytes).expect("the trace can be rewritten");
    let err = fails(&["run", &data("tiny.toml"), "--trace", &two, "--pace", "timestamps"]);
    assert!(err.contains("the trace's first time is"), "{err}");
}

#[test]
fn compressed_traces_are_detected() {
    let dir = scratch("compressed");
    let plain = std::fs::read(data("sample.perf")).expect("the sample exists");
    let gzip = path(&dir, "sample.perf.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, &plain).expect("compressing in memory");
    std::fs::write(&gzip, encoder.finish().expect("compressing in memory")).expect("writable scratch");
    // A misleading name: detection reads the bytes, not the extension.
    let zstd = path(&dir, "sample-zstd.perf");
    std::fs::write(&zstd, zstd::encode_all(&plain[..], 3).expect("compressing in memory")).expect("writable");
    let expected = info(&data("sample.perf"), &[]);
    for file in [gzip, zstd] {
        let doc = info(&file, &[]);
        assert_eq!(doc["format"], "perf", "{file}");
        assert_eq!(doc["records"], expected["records"], "{file}");
        assert_eq!(doc["tasks"], expected["tasks"], "{file}");
        let run = parse(&run_json(&data("tiny.toml"), &["--trace", &file]));
        assert_eq!(run["accesses"], expected["records"], "{file}");
    }
}

#[test]
fn a_malformed_line_names_the_file_and_line() {
    let bad = data("bad.perf");
    let err = fails(&["run", &data("tiny.toml"), "--trace", &bad]);
    assert!(err.contains(&format!("trace {bad}: line 3: ")), "{err}");
    let out = swapsim(&["trace", "info", &bad]);
    assert_eq!(out.stdout, "");
    assert!(!out.success && out.stderr.contains(&format!("trace {bad}: line 3: ")), "{}", out.stderr);
    // Naming the wrong format fails on the first line.
    let err = fails(&["trace", "info", &data("sample.perf"), "--format", "lackey"]);
    assert!(err.contains("line 1: "), "{err}");
}

#[test]
fn lenient_runs_skip_and_count_bad_lines() {
    let bad = data("bad.perf");
    let doc = parse(&run_json(&data("tiny.toml"), &["--trace", &bad, "--lenient"]));
    assert_eq!(doc["outcome"]["kind"], "completed");
    assert_eq!(doc["trace"]["records"], 3);
    let skipped = doc["trace"]["skipped"].as_object().expect("skipped by reason");
    assert_eq!(skipped.values().map(|n| n.as_u64().unwrap()).sum::<u64>(), 1, "{skipped:?}");
    assert_eq!(doc["scenario"]["workload"]["lenient"], true);
    let table = ok(&["run", &data("tiny.toml"), "--trace", &bad, "--lenient"]);
    let line = table.lines().find(|l| l.starts_with("trace: ")).expect("a trace line");
    assert!(line.starts_with("trace: perf, 3 records, 1 task, skipped 1 ("), "{line}");
    let info = info(&bad, &["--lenient"]);
    assert_eq!(info["records"], 3);
    // The same from the scenario file, with the other trace keys.
    let doc = parse(&run_json(&data("lenient-trace.toml"), &[]));
    assert_eq!(doc["trace"]["records"], 3);
    assert_eq!(doc["scenario"]["workload"]["pace"], "cpu");
    assert_eq!(doc["scenario"]["workload"]["trace_format"], "perf");
}

#[test]
fn pace_decides_where_think_time_comes_from() {
    let file = data("sample.perf");
    let timed = parse(&run_json(&data("tiny.toml"), &["--trace", &file]));
    let cpu = parse(&run_json(&data("tiny.toml"), &["--trace", &file, "--pace", "cpu"]));
    assert_eq!(timed["vmstat"]["pgfault"], cpu["vmstat"]["pgfault"]);
    // The perf sample spans 61 µs between its first and last fault; the CPU cost profile
    // charges far less for seven accesses.
    assert!(timed["sim_time_s"].as_f64().unwrap() > cpu["sim_time_s"].as_f64().unwrap(), "{timed} {cpu}");
}

#[test]
fn repeat_replays_the_trace_in_a_row() {
    let file = data("sample.txt");
    let doc = parse(&run_json(&data("tiny.toml"), &["--trace", &file, "--repeat", "3"]));
    assert_eq!(doc["accesses"], 24);
    assert_eq!(doc["trace"]["records"], 8);
    assert_eq!(doc["trace"]["repeat"], 3);
    assert_eq!(doc["scenario"]["workload"]["repeat"], 3);
    let err = fails(&["run", &data("tiny.toml"), "--trace", &file, "--repeat", "0"]);
    assert!(err.contains("--repeat: 0 is outside 1..=1000"), "{err}");
    let err = fails(&["run", &data("tiny.toml"), "--repeat", "2"]);
    assert!(err.contains("--repeat: only applies to a trace workload"), "{err}");
}

#[test]
fn convert_round_trips_text_through_native() {
    let dir = scratch("convert");
    let native = path(&dir, "sample.swt");
    let text = path(&dir, "back.txt");
    let direct = path(&dir, "direct.txt");
    let said = ok(&["trace", "convert", &data("sample.txt"), &native]);
    assert!(said.starts_with("wrote 8 records (text to native) to "), "{said}");
    assert_eq!(info(&native, &[])["format"], "native");
    ok(&["trace", "convert", &native, &text]);
    ok(&["trace", "convert", &data("sample.txt"), &direct, "--to", "text"]);
    let back = std::fs::read_to_string(&text).expect("written");
    assert_eq!(back, std::fs::read_to_string(&direct).expect("written"));
    let original = std::fs::read_to_string(data("sample.txt")).expect("the sample exists");
    let body = |t: &str| t.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(body(&back), body(&original));
    // Compressed text output reads back the same.
    let packed = path(&dir, "back.txt.zst");
    ok(&["trace", "convert", &native, &packed]);
    assert_eq!(ok(&["trace", "head", &packed, "-n", "100"]), ok(&["trace", "head", &text, "-n", "100"]));
    // Two tasks do not fit in the text format.
    let err = fails(&["trace", "convert", &data("sample.perf"), &path(&dir, "two.txt")]);
    assert!(err.contains("the text format holds one task"), "{err}");
}

#[test]
fn generate_is_deterministic_per_seed() {
    let dir = scratch("generate");
    let phases = ["--phase", "seq:64KiB:1", "--phase", "zipf:128KiB:2:0.5"];
    let write = |name: &str, seed: &str| {
        let out = path(&dir, name);
        let mut args = vec!["trace", "generate", "-o", &out, "--seed", seed];
        args.extend_from_slice(&phases);
        let said = ok(&args);
        // The fill writes the 32 pages of the largest region, then 16 + 2 × 32 accesses.
        assert!(said.starts_with("wrote 112 records to "), "{said}");
        std::fs::read(&out).expect("written")
    };
    let first = write("a.txt", "5");
    assert_eq!(first, write("b.txt", "5"));
    assert_ne!(first, write("c.txt", "6"));
    let text = String::from_utf8(first).expect("text");
    assert!(text.starts_with("# swapsim trace generate pages=32 fill=true"), "{text}");
    // Native output holds the same accesses.
    let native = path(&dir, "a.swt");
    let mut args = vec!["trace", "generate", "-o", &native, "--seed", "5"];
    args.extend_from_slice(&phases);
    ok(&args);
    let back = path(&dir, "a-back.txt");
    ok(&["trace", "convert", &native, &back]);
    let body = |t: &str| t.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(body(&std::fs::read_to_string(&back).expect("written")), body(&text));
    // A scenario's generator, and the old write-trace spelling, give the same file.
    let from_scenario = path(&dir, "tiny.txt");
    let from_alias = path(&dir, "tiny-alias.txt");
    ok(&["trace", "generate", &data("tiny.toml"), "-o", &from_scenario]);
    ok(&["write-trace", &data("tiny.toml"), "-o", &from_alias]);
    assert_eq!(std::fs::read(&from_scenario).expect("written"), std::fs::read(&from_alias).expect("written"));
}

#[test]
fn generate_rejects_bad_phases() {
    let err = fails(&["trace", "generate", "-o", "unused.txt", "--phase", "loop:1MiB:1"]);
    assert!(err.contains("\"loop\" is not a pattern"), "{err}");
    let err = fails(&["trace", "generate", "-o", "unused.txt", "--phase", "rand:1MiB:1:1.5"]);
    assert!(err.contains("write_fraction: 1.5 is outside 0..=1"), "{err}");
}

/// Every bundled real capture replays, and `trace info` counts as many records as `grep -c`
/// counts event lines (no lackey access in these captures spans two pages, so lines and
/// records agree one to one).
#[test]
fn bundled_captures_replay_and_count_like_grep() {
    type IsEvent = fn(&str) -> bool;
    let captures: [(&str, IsEvent); 4] = [
        ("traces/capture-seq-64M-limit32M.perf.zst", is_perf_fault),
        ("traces/capture-rand-2proc-limit32M.perf.zst", is_perf_fault),
        ("traces/capture-true.lackey.zst", is_lackey_access),
        ("traces/capture-hotcold-16M.lackey.zst", is_lackey_access),
    ];
    for (capture, is_event) in captures {
        let file = crate::support::in_repo(capture);
        let bytes = std::fs::read(&file).expect("the capture is committed");
        let text = String::from_utf8(zstd::decode_all(&bytes[..]).expect("zstd")).expect("utf-8");
        let grep_c = text.lines().filter(|l| is_event(l)).count() as u64;
        let doc = info(&file, &[]);
        assert_eq!(doc["records"].as_u64(), Some(grep_c), "{capture}");
        let report = parse(&run_json(
            &crate::support::in_repo("scenarios/demo.toml"),
            &["--trace", &file, "--set", "memcg.limit=16MiB"],
        ));
        assert_eq!(report["outcome"]["kind"], "completed", "{capture}");
        assert_eq!(report["accesses"].as_u64(), Some(grep_c), "{capture}: every record replayed");
    }
}
