//! The files commands write: replaced only on success, never the input, always readable
//! back by the tool, and never left cut under the target's name (issue 35).

use crate::support::{data, fails, in_repo, ok, scratch_dir, swapsim};
use std::path::{Path, PathBuf};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    scratch_dir("outputs", name)
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = path(dir, name);
    std::fs::write(&path, text).expect("the scratch file can be written");
    path
}

/// The names in `dir`, sorted: what a command left behind, temporary files included.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the scratch directory is readable")
        .map(|entry| entry.expect("a directory entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Converting a bad trace onto an existing file used to truncate that file first and leave
/// it empty.
#[test]
fn a_failed_convert_leaves_the_old_output_and_no_temporary_file() {
    let dir = scratch("failed-convert");
    let keep = write(&dir, "keep.txt", "R 1\n");
    let bad = write(&dir, "bad.txt", "R 1\nX 2\n");
    for to in ["text", "native", "oracle-general"] {
        let err = fails(&["trace", "convert", &bad, &keep, "--to", to]);
        assert!(err.contains("bad.txt: line 2, column 1: expected R or W"), "{err}");
        assert_eq!(std::fs::read_to_string(&keep).expect("keep.txt is still there"), "R 1\n");
    }
    let fresh = path(&dir, "fresh.swt.zst");
    fails(&["trace", "convert", &bad, &fresh]);
    assert_eq!(listing(&dir), ["bad.txt", "keep.txt"]);
}

/// `trace convert same.txt same.txt` used to report success and keep a few records of the
/// input.
#[test]
fn convert_refuses_its_input_as_output_under_any_name() {
    let dir = scratch("same-file");
    let text: String = (0..5000).map(|page| format!("R {page}\n")).collect();
    let same = write(&dir, "same.txt", &text);
    let err = fails(&["trace", "convert", &same, &same]);
    assert!(err.contains("same.txt is the input"), "{err}");
    let linked = path(&dir, "linked.txt");
    std::fs::hard_link(&same, &linked).expect("a hard link in the scratch directory");
    let err = fails(&["trace", "convert", &same, &linked, "--to", "native"]);
    assert!(err.contains("linked.txt is the input"), "{err}");
    assert_eq!(std::fs::read_to_string(&same).expect("the input is intact"), text);
    // The plot of `mrc` may not overwrite the trace it was drawn from either.
    let err = fails(&["mrc", &same, "--sizes", "16", "--plot", &same]);
    assert!(err.contains("same.txt is the input"), "{err}");
    assert_eq!(std::fs::read_to_string(&same).expect("the input is intact"), text);
    assert_eq!(listing(&dir), ["linked.txt", "same.txt"]);
}

/// A perf capture of 5-level paging has pages above the text format's 2^36 - 1: writing them
/// as text used to succeed and leave a file `trace info` rejected.
#[test]
fn convert_refuses_a_page_the_text_format_cannot_hold() {
    let dir = scratch("page-too-large");
    let perf = write(
        &dir,
        "la57.perf",
        "stress 4101/4101 [003] 8312.100012: exceptions:page_fault_user: address=0x7f3a2d000000 ip=0x1 error_code=0x4\n\
         stress 4101/4101 [003] 8312.100013: exceptions:page_fault_user: address=0x1fffffffffff000 ip=0x1 error_code=0x4\n",
    );
    let text = path(&dir, "la57.txt");
    let err = fails(&["trace", "convert", &perf, &text]);
    assert!(
        err.contains("record 2 of trace")
            && err.contains(
                "page 35184372088831 (0x1fffffffffff) is above the largest page the text format holds"
            ),
        "{err}"
    );
    assert!(!Path::new(&text).exists(), "nothing is left under the target's name");
    // Native holds it, and reads back what it wrote.
    let native = path(&dir, "la57.swt");
    ok(&["trace", "convert", &perf, &native]);
    let info = ok(&["trace", "info", &native, "--json"]);
    let info: serde_json::Value = serde_json::from_str(&info).expect("JSON");
    assert_eq!(info["last_page"], 35_184_372_088_831u64);
    assert_eq!(listing(&dir), ["la57.perf", "la57.swt"]);
}

/// A cut `I` line of a lackey trace was counted as a skipped instruction fetch unless
/// `--instructions` was given.
#[test]
fn a_cut_lackey_instruction_line_is_an_error() {
    let dir = scratch("lackey-cut");
    let cut = write(&dir, "cut.lackey", " L 1000,4\nI  0401c4");
    for extra in [&[][..], &["--instructions"][..]] {
        let mut args = vec!["trace", "info", &cut, "--format", "lackey"];
        args.extend_from_slice(extra);
        let err = fails(&args);
        assert!(err.contains("cut.lackey: line 2, column 4: expected <hex address>,<size>"), "{err}");
    }
}

/// An error within the first 64 KiB of a corrupt zstd trace had no position and said its
/// cause twice ("X: X").
#[test]
fn a_corrupt_compressed_start_names_its_position_once() {
    let dir = scratch("corrupt-start");
    let text: String = (0..20_000).map(|page| format!("R {page}\n")).collect();
    let mut compressed = zstd::stream::encode_all(text.as_bytes(), 3).expect("compressing in memory");
    compressed[10] ^= 0xff;
    let file = path(&dir, "bad.txt.zst");
    std::fs::write(&file, compressed).expect("the scratch file can be written");
    let err = fails(&["trace", "info", &file]);
    let cause = err.trim_end().rsplit("zstd stream is corrupt: ").next().expect("a cause");
    assert!(err.contains("bad.txt.zst: byte offset 0: read error: zstd stream is corrupt: "), "{err}");
    assert!(!cause.contains(": "), "the cause is said once: {err}");
}

/// A command killed while writing leaves no file under the target's name: before, an
/// interrupted conversion left a cut file that read as a complete trace.
#[test]
fn an_interrupted_convert_leaves_no_target() {
    let dir = scratch("interrupted");
    let input = path(&dir, "in.swt");
    ok(&["trace", "generate", "--pattern", "rand", "--region", "2GiB", "--no-fill", "-o", &input]);
    let target = path(&dir, "out.oracleGeneral");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_swapsim"))
        .args(["trace", "convert", &input, &target])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the swapsim binary runs");
    let temp = format!(".out.oracleGeneral.tmp-{}", child.id());
    let started = || dir.join(&temp).exists() || Path::new(&target).exists();
    while !started() && child.try_wait().expect("waitable").is_none() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.kill().ok();
    let status = child.wait().expect("waitable");
    if status.success() {
        // It finished before the kill: then the target is whole.
        let info = ok(&["trace", "info", &target, "--json"]);
        assert!(info.contains("\"records\": 524288"), "{info}");
    } else {
        assert!(!Path::new(&target).exists(), "a killed convert left {target}");
        std::fs::remove_file(dir.join(&temp)).ok();
        let err = fails(&["trace", "info", &target]);
        assert!(err.contains("out.oracleGeneral"), "{err}");
    }
}

/// A native trace cut short by anything but this tool (a full disk, a partial copy) is
/// reported as truncated, not read as a shorter complete trace: its end marker carries the
/// record count.
#[test]
fn a_cut_native_trace_is_reported_as_truncated() {
    let dir = scratch("cut-native");
    let native = path(&dir, "whole.swt");
    ok(&["trace", "convert", &data("sample.txt"), &native]);
    let bytes = std::fs::read(&native).expect("written");
    let cut = path(&dir, "cut.swt");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("the scratch file can be written");
    let out = swapsim(&["trace", "info", &cut]);
    assert_eq!(out.code, Some(1), "{}", out.stdout);
    assert!(out.stderr.contains("cut.swt"), "{}", out.stderr);
}

/// `sweep --out` writes its files through the same rename: nothing temporary is left.
#[test]
fn sweep_out_leaves_only_its_files() {
    let dir = scratch("sweep-out");
    let out = dir.join("results");
    ok(&[
        "sweep",
        &data("tiny.toml"),
        "--vary",
        "swap.page_cluster=0,1",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(listing(&out), ["sweep.csv", "sweep.json", "sweep.svg"]);
}

/// The text traces the tool writes end with a marker their header promises, so that a copy
/// cut at a line boundary is not read as a shorter whole trace.
#[test]
fn a_cut_text_trace_is_reported_as_cut() {
    let dir = scratch("cut-text");
    let whole = path(&dir, "whole.txt");
    ok(&["trace", "convert", &data("sample.txt"), &whole]);
    let text = std::fs::read_to_string(&whole).expect("written");
    assert!(text.ends_with(&format!("# end lines={}\n", text.lines().count())), "{text}");
    let info = ok(&["trace", "info", &whole, "--json"]);
    assert!(info.contains("\"records\": 8"), "{info}");
    let lines: Vec<&str> = text.lines().collect();
    let cut = write(&dir, "cut.txt", &(lines[..lines.len() - 2].join("\n") + "\n"));
    let err = fails(&["trace", "info", &cut]);
    assert!(err.contains("cut.txt: line 8: the trace is cut"), "{err}");
    let err = fails(&["trace", "info", &cut, "--lenient"]);
    assert!(err.contains("the trace is cut"), "{err}");
    // A trace without records carries its marker too, and reads back empty.
    let empty = path(&dir, "empty.txt");
    let native_empty = path(&dir, "empty.swt");
    ok(&[
        "trace",
        "generate",
        "--pattern",
        "seq",
        "--region",
        "4KiB",
        "--passes",
        "0",
        "--no-fill",
        "-o",
        &native_empty,
    ]);
    ok(&["trace", "convert", &native_empty, &empty]);
    assert_eq!(std::fs::read_to_string(&empty).expect("written"), "# swapsim end=marked\n# end lines=2\n");
    let info = ok(&["trace", "info", &empty, "--json"]);
    assert!(info.contains("\"records\": 0"), "{info}");
}

/// Every file the tool writes goes through `outfile.rs`: no other module of the cli, and no
/// module of the library, creates or writes a file itself.
#[test]
fn every_file_is_written_through_outfile() {
    let forbidden = ["File::create", "fs::write(", ".write(true)", ".append(true)", "create_new("];
    let mut offenders = Vec::new();
    for dir in ["crates/cli/src", "crates/swapsim/src", "crates/trace-formats/src"] {
        let mut stack = vec![crate::support::repo().join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("the source directory is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let name = path.file_name().expect("a file name").to_string_lossy().into_owned();
                if !name.ends_with(".rs") || name == "outfile.rs" || name == "tests.rs" {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("the source is readable");
                // Unit tests at the end of a file may write scratch files.
                let code = text.split("#[cfg(test)]").next().unwrap_or(&text);
                for pattern in forbidden {
                    if code.contains(pattern) {
                        offenders.push(format!("{}: {pattern}", path.display()));
                    }
                }
            }
        }
    }
    assert!(offenders.is_empty(), "files written outside crates/cli/src/outfile.rs: {offenders:?}");
}

/// A run that never reclaims says so, rather than leaving a table of zeros to puzzle over;
/// one that swaps does not.
#[test]
fn a_run_that_never_reclaims_says_so() {
    let scenario = in_repo("scenarios/zipf-memcg.toml");
    let roomy = ok(&["run", &scenario, "--set", "memcg.limit=4GiB"]);
    assert!(roomy.contains("nothing was ever reclaimed"), "{roomy}");
    let tight = ok(&["run", &scenario]);
    assert!(!tight.contains("nothing was ever reclaimed"), "{tight}");
}

/// The text report says which LRU, zswap setting and mTHP sizes ran, and prints zswap's
/// pool figures, not only its three vmstat counters.
#[test]
fn the_text_report_names_the_policies_and_prints_the_zswap_pool() {
    let text = ok(&["run", &in_repo("scenarios/zswap.toml")]);
    assert!(text.contains("lru classic · zswap lzo, pool 1%"), "{text}");
    for figure in
        ["pool_total_size", "stored_pages", "pool_limit_hit", "reject_compress_poor", "shrink_worker_runs"]
    {
        assert!(text.lines().any(|l| l.trim_start().starts_with(figure)), "{figure}: {text}");
    }
    let plain = ok(&["run", &in_repo("scenarios/zipf-memcg.toml")]);
    assert!(plain.contains("· zswap off ·") && !plain.contains("pool_total_size"), "{plain}");
}

/// `run --format csv` is one header and one row of every report figure, keyed by the JSON
/// document's paths, with the same values as the JSON and nothing of `host`.
#[test]
fn a_run_as_one_csv_row_holds_the_json_figures() {
    let scenario = in_repo("scenarios/zipf-memcg.toml");
    let csv = ok(&["run", &scenario, "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(header.len(), row.len());
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["run", &scenario, "--format", "json"])).expect("JSON");
    let at = |key: &str| row[header.iter().position(|h| *h == key).unwrap_or_else(|| panic!("no {key}"))];
    assert_eq!(at("vmstat.pswpin"), json["vmstat"]["pswpin"].to_string());
    assert_eq!(at("block.0.device"), json["block"][0]["device"].as_str().expect("a device"));
    assert!(!header.iter().any(|h| h.starts_with("host.") || h.starts_with("scenario.")), "{}", lines[0]);
}
