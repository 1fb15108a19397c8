//! Replays held to libCacheSim's counts: the exact LRU and OPT models and `swapsim mrc`
//! against libCacheSim 0.3.5's `LRU` and `Belady` on the bundled check traces, and
//! libCacheSim's own trace formats (oracleGeneral, txt, csv) read, converted and replayed
//! (traces/README.md says how each expected count was obtained).

use crate::support::{data, fails, in_repo, ok, parse, run_json};
use crate::traces::{info, path, scratch};

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
