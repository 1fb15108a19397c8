//! Captured traces: `trace info|head|convert|generate`, and `run --trace` in every format.
//!
//! The samples under `crates/cli/tests/data/` are tiny hand-checked captures: `sample.perf`
//! (`perf script` of `exceptions:page_fault_user`, two threads of one process and one
//! unrelated event), `sample.ftrace` (a `trace` file of `page_fault_user`), `sample.lackey`
//! (valgrind lackey with its `==pid==` banner lines and one load spanning two pages) and
//! `sample.txt` (the text format). Native files are made by `trace convert` in the tests.

use crate::support::{data, fails, in_repo, ok, parse, run_json, scratch_dir, swapsim, without_host};
use std::path::{Path, PathBuf};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    scratch_dir("traces", name)
}

fn path(dir: &Path, name: &str) -> String {
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
fn info(file: &str, extra: &[&str]) -> serde_json::Value {
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
    let captures: [(&str, IsEvent); 3] = [
        ("traces/capture-seq-64M-limit32M.perf.zst", is_perf_fault),
        ("traces/capture-rand-2proc-limit32M.perf.zst", is_perf_fault),
        ("traces/capture-true.lackey.zst", is_lackey_access),
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

/// `lru = "exact"` evicts one page per miss from a strict LRU list, so with no readahead
/// its page faults are a textbook LRU cache's misses. The expected count is libCacheSim
/// 0.3.5's `LRU` on the same page sequence and capacity (traces/README.md says how it was
/// obtained): 4,096 first touches and 14,241 swap-ins.
#[test]
fn exact_lru_misses_exactly_like_libcachesim_lru() {
    const LIBCACHESIM_LRU_MISSES: u64 = 18_337;
    let doc = parse(&run_json(&data("exact-lru.toml"), &[]));
    assert_eq!(doc["outcome"]["kind"], "completed");
    let vmstat = &doc["vmstat"];
    assert_eq!(vmstat["pgfault"].as_u64(), Some(LIBCACHESIM_LRU_MISSES), "{vmstat}");
    assert_eq!(
        vmstat["pgfault"].as_u64().unwrap() - vmstat["pswpin"].as_u64().unwrap(),
        4096,
        "first touches"
    );
    // With the readahead-less kernel model instead, reclaim's batches of 32 and second
    // chances make the count differ: the equality is the exact model's, not a coincidence.
    let classic = parse(&run_json(&data("exact-lru.toml"), &["--set", "lru=classic"]));
    assert_ne!(classic["vmstat"]["pgfault"].as_u64(), Some(LIBCACHESIM_LRU_MISSES));
}

/// `lru = "opt"` evicts, one page per miss, the resident page used again furthest in the
/// future, so with no readahead its page faults are Belady's misses: libCacheSim 0.3.5's
/// `Belady` on the same page sequence and capacity counts 11,945 (traces/README.md), and so
/// does `swapsim mrc`'s OPT curve at 512 pages.
#[test]
fn opt_misses_exactly_like_libcachesim_belady() {
    const LIBCACHESIM_BELADY_MISSES: u64 = 11_945;
    let doc = parse(&run_json(&data("opt-lru.toml"), &[]));
    assert_eq!(doc["outcome"]["kind"], "completed");
    let vmstat = &doc["vmstat"];
    assert_eq!(vmstat["pgfault"].as_u64(), Some(LIBCACHESIM_BELADY_MISSES), "{vmstat}");
    assert_eq!(
        vmstat["pgfault"].as_u64().unwrap() - vmstat["pswpin"].as_u64().unwrap(),
        4096,
        "first touches"
    );
    // Eviction went through reclaim's mechanics, one page per miss once the 512 pages
    // were full.
    assert_eq!(vmstat["pgsteal_anon"].as_u64(), Some(LIBCACHESIM_BELADY_MISSES - 512), "{vmstat}");
    // The same run twice gives the same report.
    let again = parse(&run_json(&data("opt-lru.toml"), &[]));
    assert_eq!(again["vmstat"], doc["vmstat"]);
    // A generated workload has no next uses: the setting is refused, by name.
    let err = fails(&["run", &data("tiny.toml"), "--set", "lru=opt"]);
    assert!(err.contains("lru: \"opt\" needs a trace workload"), "{err}");
}

/// `swapsim mrc` on the bundled check trace: its LRU curve at 512 pages is libCacheSim's
/// LRU count (and so the exact model's faults), its OPT curve libCacheSim's Belady count
/// (traces/README.md); CSV and the SVG plot come out too.
#[test]
fn mrc_matches_libcachesim_lru_and_belady() {
    let trace = crate::support::in_repo("traces/zipf-16M-lru-check.trace.zst");
    let dir = scratch("mrc");
    let svg = path(&dir, "mrc.svg");
    let doc = parse(&ok(&["mrc", &trace, "--sizes", "256,2MiB,4096", "--json", "--plot", &svg]));
    assert_eq!((doc["accesses"].as_u64(), doc["distinct_pages"].as_u64()), (Some(36_864), Some(4096)));
    let points = doc["points"].as_array().expect("points");
    let at = |pages: u64| points.iter().find(|p| p["pages"] == pages).expect("size");
    assert_eq!(at(512)["lru_misses"], 18_337);
    assert_eq!(at(512)["opt_misses"], 11_945);
    // With room for every page, only the compulsory misses are left.
    assert_eq!((at(4096)["lru_misses"].as_u64(), at(4096)["opt_misses"].as_u64()), (Some(4096), Some(4096)));
    let drawn = std::fs::read_to_string(&svg).expect("the plot was written");
    assert!(
        drawn.starts_with("<svg") && drawn.contains("OPT (Belady)"),
        "{}",
        &drawn[..200.min(drawn.len())]
    );
    let csv = ok(&["mrc", &trace, "--sizes", "512", "--csv"]);
    assert_eq!(
        csv.lines().nth(1).map(|l| l.split(',').take(2).collect::<Vec<_>>()),
        Some(vec!["512", "18337"])
    );
    assert!(fails(&["mrc", &trace, "--sizes", "0"]).contains("--sizes: 0 pages is not a memory size"));
    assert!(fails(&["mrc", &trace, "--sizes", "3KiB"]).contains("not a whole number of 4 KiB pages"));
}

/// The page addresses `trace head` prints, in order.
fn head_addresses(file: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["trace", "head", file, "-n", "1000"];
    args.extend_from_slice(extra);
    ok(&args).lines().map(|line| line.rsplit(' ').next().expect("an address").to_string()).collect()
}

/// `traces/sample.oracleGeneral`, written by hand (see traces/README.md): ten requests of
/// objects 42, 7, 42, 1 << 40, 7, 9, 42, 1 << 40, 5, 9 over seconds 100 to 104.
#[test]
fn libcachesim_oracle_general_sample_reads_under_both_mappings() {
    let sample = in_repo("traces/sample.oracleGeneral");
    let summary = info(&sample, &[]);
    assert_eq!(summary["format"], "oracle-general");
    assert_eq!(summary["records"], 10);
    assert_eq!(summary["distinct_pages"], 5);
    assert_eq!((summary["reads"].as_u64(), summary["writes"].as_u64()), (Some(10), Some(0)));
    assert_eq!(summary["time_span_s"], 4.0);
    // The default mapping: object ids modulo 1 GiB of pages, so 1 << 40 lands on page 0.
    expect_test::expect![[r#"
        0/0 100.000000000 R 0x2a000
        0/0 100.000000000 R 0x7000
        0/0 101.000000000 R 0x2a000
        0/0 101.000000000 R 0x0
    "#]]
    .assert_eq(&ok(&["trace", "head", &sample, "-n", "4"]));
    let dense = head_addresses(&sample, &["--object-map", "dense"]);
    assert_eq!(
        dense,
        ["0x0", "0x1000", "0x0", "0x2000", "0x1000", "0x3000", "0x0", "0x2000", "0x4000", "0x3000"]
    );
    let small = head_addresses(&sample, &["--object-region", "16KiB", "--format", "oracle-general"]);
    assert_eq!(
        small,
        ["0x2000", "0x3000", "0x2000", "0x0", "0x3000", "0x1000", "0x2000", "0x0", "0x1000", "0x1000"]
    );
    let err = fails(&["trace", "info", &sample, "--object-map", "dense", "--object-region", "1GiB"]);
    assert!(err.contains("--object-region: only applies to --object-map modulo"), "{err}");
    let err = fails(&["trace", "info", &sample, "--object-region", "5000"]);
    assert!(err.contains("5000 is not a positive whole number of 4 KiB pages"), "{err}");
}

#[test]
fn a_truncated_oracle_general_trace_names_the_byte_offset() {
    let dir = scratch("oracle-truncated");
    let truncated = path(&dir, "cut.oracleGeneral");
    let bytes = std::fs::read(in_repo("traces/sample.oracleGeneral")).expect("the sample exists");
    std::fs::write(&truncated, &bytes[..bytes.len() - 5]).expect("the scratch file can be written");
    let err = fails(&["trace", "info", &truncated, "--format", "oracle-general"]);
    assert!(err.contains("byte offset 216: last record is truncated: 19 of 24 bytes (request 9)"), "{err}");
}

#[test]
fn convert_round_trips_native_through_oracle_general() {
    let dir = scratch("convert-oracle");
    let native = path(&dir, "sample.swt");
    let oracle = path(&dir, "sample.oracleGeneral");
    let packed = path(&dir, "sample.oracleGeneral.zst");
    let back = path(&dir, "back.swt");
    ok(&["trace", "convert", &data("sample.txt"), &native]);
    let said = ok(&["trace", "convert", &native, &oracle]);
    assert!(said.starts_with("wrote 8 records (native to oracle-general) to "), "{said}");
    ok(&["trace", "convert", &native, &packed, "--to", "oracle-general"]);
    ok(&["trace", "convert", &packed, &back]);
    assert_eq!(info(&oracle, &[])["format"], "oracle-general");
    assert_eq!(info(&packed, &[])["format"], "oracle-general");
    // Pages below the region come back as they were (as reads: oracleGeneral has no writes).
    let original = head_addresses(&native, &[]);
    assert_eq!(head_addresses(&oracle, &[]), original);
    assert_eq!(head_addresses(&back, &[]), original);
    // The dense mapping is the identity when pages first appear in order 0, 1, 2, ...
    let in_order = path(&dir, "in-order.txt");
    std::fs::write(&in_order, "R 0\nR 1\nW 0\nR 2\nR 1\nR 3\n").expect("the scratch file can be written");
    let in_order_oracle = path(&dir, "in-order.oracleGeneral");
    ok(&["trace", "convert", &in_order, &in_order_oracle]);
    assert_eq!(head_addresses(&in_order_oracle, &["--object-map", "dense"]), head_addresses(&in_order, &[]));
    // Two tasks do not fit.
    let err = fails(&["trace", "convert", &data("sample.perf"), &path(&dir, "two.oracleGeneral")]);
    assert!(err.contains("the oracle-general format holds one task"), "{err}");
}

#[test]
fn run_replays_oracle_general_under_the_flag_or_scenario_mapping() {
    let sample = in_repo("traces/sample.oracleGeneral");
    let doc = parse(&run_json(&data("tiny.toml"), &["--trace", &sample]));
    assert_eq!(doc["outcome"]["kind"], "completed");
    assert_eq!(doc["trace"]["format"], "oracle-general");
    assert_eq!(doc["accesses"], 10);
    assert!(doc["scenario"]["workload"].get("object_map").is_none(), "the default is not echoed");
    let flag = parse(&run_json(&data("tiny.toml"), &["--trace", &sample, "--object-map", "dense"]));
    assert_eq!(flag["scenario"]["workload"]["object_map"], "dense");
    let set =
        parse(&run_json(&data("tiny.toml"), &["--trace", &sample, "--set", "workload.object_map=dense"]));
    assert_eq!(set["vmstat"], flag["vmstat"]);
    assert_eq!(set["scenario"]["workload"]["object_map"], "dense");
    let region = parse(&run_json(&data("tiny.toml"), &["--trace", &sample, "--object-region", "64KiB"]));
    assert_eq!(region["scenario"]["workload"]["object_region"], "64KiB");
    let err = fails(&["run", &data("tiny.toml"), "--trace", &sample, "--set", "workload.object_map=sparse"]);
    assert!(
        err.contains("workload.object_map: \"sparse\" is not an object mapping (expected modulo or dense)"),
        "{err}"
    );
}

/// The trace parameters of `traces/sample.libcachesim.csv`, as libCacheSim is given them.
const SAMPLE_CSV_PARAMS: &str = "time-col=1,obj-id-col=3,obj-size-col=4";

/// The bundled libCacheSim txt and csv samples (traces/README.md), replayed as they are
/// with the dense mapping under the exact LRU: their page faults are libCacheSim 0.3.5's
/// `LRU` misses at the same capacity, counted from libCacheSim's own txt and csv readers,
/// and so are the LRU misses `swapsim mrc` counts on them. Every libCacheSim request is a
/// read, and each object's first one creates its page (`reads_create`): the same requests
/// as a text trace of reads map the shared zero page instead, take no memory and never
/// swap (checked below).
#[test]
fn libcachesim_txt_and_csv_samples_miss_exactly_like_libcachesim_lru() {
    const TXT_LRU_MISSES_AT_64: u64 = 336;
    const CSV_LRU_MISSES_AT_16: u64 = 108;
    let dir = scratch("libcachesim-text-exact");
    let txt = in_repo("traces/sample.libcachesim.txt");
    let csv = in_repo("traces/sample.libcachesim.csv");
    let cases = [
        (&txt, vec![], "256KiB", TXT_LRU_MISSES_AT_64, 211),
        (&csv, vec!["libcachesim-csv", SAMPLE_CSV_PARAMS], "64KiB", CSV_LRU_MISSES_AT_16, 61),
    ];
    for (idx, (sample, format, limit, lru_misses, n_objects)) in cases.into_iter().enumerate() {
        // The LRU curve `swapsim mrc` computes from the sample itself agrees.
        let pages = if limit == "256KiB" { "64" } else { "16" };
        let mut args = vec!["mrc", sample, "--sizes", pages, "--json", "--object-map", "dense"];
        if let [name, params] = format[..] {
            args.extend(["--format", name, "--trace-params", params]);
        }
        let curve = parse(&ok(&args));
        assert_eq!(curve["points"][0]["lru_misses"].as_u64(), Some(lru_misses), "{sample}: {curve}");
        let set = format!("memcg.limit={limit}");
        let mut args = vec!["--trace", sample.as_str(), "--object-map", "dense", "--set", &set];
        if let [name, params] = format[..] {
            args.extend(["--trace-format", name, "--trace-params", params]);
        }
        let doc = parse(&run_json(&data("exact-lru.toml"), &args));
        assert_eq!(doc["outcome"]["kind"], "completed");
        let vmstat = &doc["vmstat"];
        assert_eq!(vmstat["pgfault"].as_u64(), Some(lru_misses), "{sample}: {vmstat}");
        assert_eq!(
            vmstat["pgfault"].as_u64().unwrap() - vmstat["pswpin"].as_u64().unwrap(),
            n_objects,
            "first touches"
        );
        // The same requests as a text trace of reads: the zero page, and nothing swapped.
        let reads = path(&dir, &format!("reads-{idx}.txt"));
        let mut args = vec!["trace", "convert", sample, &reads, "--object-map", "dense"];
        if let [name, params] = format[..] {
            args.extend(["--from", name, "--trace-params", params]);
        }
        ok(&args);
        let doc = parse(&run_json(&data("exact-lru.toml"), &["--trace", &reads, "--set", &set]));
        let vmstat = &doc["vmstat"];
        assert_eq!((vmstat["pgfault"].as_u64(), vmstat["pswpin"].as_u64()), (Some(n_objects), Some(0)));
    }
}

#[test]
fn libcachesim_txt_is_detected_and_csv_needs_its_name_and_columns() {
    let txt = in_repo("traces/sample.libcachesim.txt");
    let csv = in_repo("traces/sample.libcachesim.csv");
    let summary = info(&txt, &[]);
    assert_eq!(summary["format"], "libcachesim-txt");
    assert_eq!((summary["records"].as_u64(), summary["distinct_pages"].as_u64()), (Some(800), Some(211)));
    let summary = info(&csv, &["--format", "libcachesim-csv", "--trace-params", SAMPLE_CSV_PARAMS]);
    assert_eq!(summary["format"], "libcachesim-csv");
    assert_eq!((summary["records"].as_u64(), summary["distinct_pages"].as_u64()), (Some(200), Some(61)));
    assert_eq!(summary["time_span_s"], 75.0);
    // libCacheSim's own flag name is taken too, and the first requests are in its order:
    // times in whole seconds, objects numbered by first request under the dense mapping.
    expect_test::expect![[r#"
        0/0 1700000000.000000000 R 0x0
        0/0 1700000001.000000000 R 0x1000
        0/0 1700000001.000000000 R 0x2000
    "#]]
    .assert_eq(&ok(&[
        "trace",
        "head",
        &csv,
        "-n",
        "3",
        "--format",
        "libcachesim-csv",
        "--object-map",
        "dense",
        "--trace-type-params",
        SAMPLE_CSV_PARAMS,
    ]));
    let err = fails(&["trace", "info", &csv]);
    assert!(err.contains("unrecognised trace format"), "{err}");
    let err = fails(&["trace", "info", &csv, "--format", "libcachesim-csv"]);
    assert!(err.contains("trace parameters: libcachesim-csv needs obj-id-col"), "{err}");
    let err =
        fails(&["trace", "info", &csv, "--format", "libcachesim-csv", "--trace-params", "obj-id-col=0"]);
    assert!(err.contains("obj-id-col=0: expected a column number, 1 to 4097"), "{err}");
    let err =
        fails(&["trace", "info", &csv, "--format", "libcachesim-csv", "--trace-params", "obj-id-col=9"]);
    assert!(
        err.contains(
            "line 2, column 31: obj-id-col=9: the line has 4 fields separated by tabs, expected at least 9"
        ),
        "{err}"
    );
    let err = fails(&["trace", "info", &txt, "--trace-params", SAMPLE_CSV_PARAMS]);
    assert!(
        err.contains("only applies to libcachesim-csv; libcachesim-txt takes obj-id-is-num only"),
        "{err}"
    );
    let err = fails(&[
        "mrc",
        &in_repo("traces/sample.oracleGeneral"),
        "--sizes",
        "4",
        "--trace-params",
        "obj-id-col=1",
    ]);
    assert!(err.contains("obj-id-col given, but oracle-general traces take none"), "{err}");
}

#[test]
fn run_takes_trace_params_from_the_flag_or_the_scenario() {
    let csv = in_repo("traces/sample.libcachesim.csv");
    let flag = parse(&run_json(
        &data("tiny.toml"),
        &["--trace", &csv, "--trace-format", "libcachesim-csv", "--trace-params", SAMPLE_CSV_PARAMS],
    ));
    assert_eq!(flag["outcome"]["kind"], "completed");
    assert_eq!(flag["trace"]["format"], "libcachesim-csv");
    assert_eq!(flag["accesses"], 200);
    assert_eq!(flag["scenario"]["workload"]["trace_params"], "obj-id-col=3,time-col=1,obj-size-col=4");
    let set = parse(&run_json(
        &data("tiny.toml"),
        &[
            "--trace",
            &csv,
            "--set",
            "workload.trace_format=libcachesim-csv",
            "--set",
            &format!("workload.trace_params={SAMPLE_CSV_PARAMS}"),
        ],
    ));
    assert_eq!(set["vmstat"], flag["vmstat"]);
    // The flag wins over the scenario.
    let both = parse(&run_json(
        &data("tiny.toml"),
        &[
            "--trace",
            &csv,
            "--trace-format",
            "libcachesim-csv",
            "--set",
            "workload.trace_params=obj-id-col=99",
            "--trace-params",
            SAMPLE_CSV_PARAMS,
        ],
    ));
    assert_eq!(both["vmstat"], flag["vmstat"]);
    let err =
        fails(&["run", &data("tiny.toml"), "--trace", &csv, "--set", "workload.trace_params=colour=red"]);
    assert!(err.contains("workload.trace_params: colour: unknown parameter"), "{err}");
    let err = fails(&["run", &data("tiny.toml"), "--trace-params", "obj-id-col=1"]);
    assert!(err.contains("--trace-params: only applies to a trace workload"), "{err}");
}
