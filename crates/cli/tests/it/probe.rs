//! `swapsim probe`: the workload program run without a cgroup (no root needed), and the
//! plan of a bundled case on a fake machine tree. Nothing here changes the real machine.

use crate::support::{fails, in_repo, ok, parse, scratch_dir};
use std::path::Path;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("the scratch file can be written");
    path.display().to_string()
}

#[test]
fn exec_performs_a_tiny_trace_and_prints_its_times() {
    let dir = scratch_dir("probe", "exec");
    let mut text = String::from("# gtwork pages=600 fill_accesses=600 format=\"<R|W> <page_index>\"\n");
    text.extend((0..600).map(|page| format!("W {page}\n")));
    text.extend((0..600).rev().map(|page| format!("{} {page}\n", if page % 5 == 0 { "W" } else { "R" })));
    let plain = write(&dir, "tiny.trace", text.as_bytes());
    let packed = write(&dir, "tiny.trace.zst", &zstd::stream::encode_all(text.as_bytes(), 3).expect("zstd"));
    for (trace, contents, thp) in [(&plain, "random", "nohugepage"), (&packed, "text", "default")] {
        let out = ok(&["probe", "exec", trace, "--contents", contents, "--thp", thp]);
        assert_eq!(out.lines().count(), 1, "one JSON line: {out}");
        let line = parse(&out);
        assert_eq!(line["accesses"], 1200);
        let fill_s = line["fill_s"].as_f64().expect("fill_s");
        let total_s = line["total_s"].as_f64().expect("total_s");
        assert!(0.0 <= fill_s && fill_s <= total_s, "{out}");
    }
    // Joining a cgroup writes the process's id to its `cgroup.procs` (a scratch file here),
    // and pinning keeps to the CPU given.
    let procs = write(&dir, "cgroup.procs", b"");
    let out = ok(&["probe", "exec", &plain, "--cgroup-procs", &procs, "--cpu", "0", "--contents", "zero"]);
    assert_eq!(parse(&out)["accesses"], 1200);
    let pid = std::fs::read_to_string(&procs).expect("the scratch cgroup.procs");
    assert!(pid.trim().parse::<u32>().is_ok_and(|pid| pid > 0), "{pid:?}");
    let err = fails(&[
        "probe",
        "exec",
        &plain,
        "--cgroup-procs",
        &dir.join("none/cgroup.procs").display().to_string(),
    ]);
    assert!(
        err.contains("cannot join the memory cgroup: cannot write") && err.contains("none/cgroup.procs"),
        "{err}"
    );
}

#[test]
fn exec_names_the_file_and_line_of_a_bad_trace() {
    let dir = scratch_dir("probe", "exec-bad");
    let bad = write(&dir, "bad.trace", b"# pages=4\nW 0\nW 9\n");
    let err = fails(&["probe", "exec", &bad]);
    assert!(err.contains("bad.trace") && err.contains("line 3"), "{err}");
    let headless = write(&dir, "headless.trace", b"W 0\n");
    let err = fails(&["probe", "exec", &headless]);
    assert!(err.contains("headless.trace: line 1: the header declares no pages=N"), "{err}");
}

#[test]
fn disk_timing_refuses_bad_arguments_and_names_its_scratch_file() {
    let dir = scratch_dir("probe", "disk-bad");
    let out = dir.display().to_string();
    let err = fails(&["probe", "disk", "--out", &out, "--disk-seconds", "0", "--timer", "own"]);
    assert!(err.contains("--disk-seconds 0"), "{err}");
    let nowhere = dir.join("no/such/folder/scratch").display().to_string();
    let err = fails(&["probe", "disk", "--out", &out, "--scratch", &nowhere, "--timer", "own"]);
    assert!(err.contains("no/such/folder/scratch"), "{err}");
    assert!(!dir.join("device/profile.toml").exists(), "no profile from a failed timing");
}

#[test]
fn plan_prints_the_steps_of_a_bundled_case_and_changes_nothing() {
    let root = scratch_dir("probe", "plan-root");
    let files = [
        ("sys/fs/cgroup/memory/.keep", ""),
        ("proc/sys/vm/page-cluster", "0\n"),
        ("sys/kernel/mm/swap/vma_ra_enabled", "false\n"),
        ("sys/module/zswap/parameters/enabled", "N\n"),
        ("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n"),
    ];
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("a parent")).expect("a fake folder");
        std::fs::write(full, text).expect("a fake file");
    }
    let case = in_repo("validation/linux-6.18/cases/A-seq-pc3-vma.json");
    let state_dir = root.join("state").display().to_string();
    let root_arg = root.display().to_string();
    let args = ["probe", "plan", &case, "--root", &root_arg, "--state-dir", &state_dir];
    let out = ok(&args);
    assert!(out.contains("set    /proc/sys/vm/page-cluster = 3 (was 0)"), "{out}");
    assert!(out.contains("set    /sys/kernel/mm/swap/vma_ra_enabled = true (was false)"), "{out}");
    assert!(out.contains("keep   /sys/module/zswap/parameters/enabled = N (already)"), "{out}");
    assert!(out.contains("swapon /var/tmp/swapsim-probe.swap"), "{out}");
    assert!(out.ends_with("a probe may start\n"), "{out}");
    assert_eq!(std::fs::read_to_string(root.join("proc/sys/vm/page-cluster")).expect("the knob"), "0\n");
    assert!(!root.join("state").exists(), "a plan saves no state");
    // Foreign swap: the plan is printed, then the refusal.
    std::fs::write(
        root.join("proc/swaps"),
        "Filename\tType\tSize\tUsed\tPriority\n/dev/vdb\tpartition\t1\t0\t-2\n",
    )
    .expect("a fake swap");
    let err = fails(&args);
    assert!(
        err.contains("a probe would refuse to start: swap this probe did not make is on (/dev/vdb)"),
        "{err}"
    );
    // Nothing saved, nothing to restore.
    let out = ok(&["probe", "restore", "--state-dir", &state_dir]);
    assert!(out.starts_with("nothing to restore"), "{out}");
}

/// The trace the real-kernel probes run: 16 MiB sequential, three passes.
const TINY_TRACE: &str = "traces/wl-seq-16M-p3-w0.2-s205.trace.zst";

/// A scratch case folder holding `TINY_TRACE` and the case `id` with `setup`'s limit and
/// `workload`; probes it with `repeats` repeats on the real kernel and returns the output
/// folder and what the probe said.
fn probe_for_real(
    name: &str,
    id: &str,
    kind: &str,
    limit_mib: u64,
    workload: serde_json::Value,
    repeats: &str,
    extra: &[&str],
) -> (String, String) {
    let dir = scratch_dir("probe", name);
    let input = dir.join("in");
    std::fs::create_dir_all(input.join("cases")).expect("a case folder");
    std::fs::create_dir_all(input.join("traces")).expect("a trace folder");
    std::fs::copy(in_repo(&format!("validation/linux-6.18/{TINY_TRACE}")), input.join(TINY_TRACE))
        .expect("the trace");
    let case = serde_json::json!({
        "format": "swapsim-validation/1", "id": id, "kind": kind, "kernel": "-", "measured_on": "-",
        "setup": {
            "cpus": 1, "kernel": "-", "machine_ram_bytes": 0, "memcg_limit_bytes": limit_mib << 20,
            "memcg_version": 1, "mthp_always_kib": [], "page_cluster": 3, "swappiness": 60,
            "vma_ra_enabled": true, "zswap": { "enabled": false, "ever_enabled": false },
            "swap": { "device": "swap file", "kind": "file", "rotational": true, "size_bytes": 256u64 << 20 },
        },
        "workload": workload,
        "operations": [{ "op": if kind == "jobs" { "run_queue" } else { "run_trace" } }],
        "measured": {},
    });
    let case_file = write(&input.join("cases"), &format!("{id}.json"), case.to_string().as_bytes());
    let out = dir.join("out").display().to_string();
    let disk = std::env::var("SWAPSIM_PROBE_DISK").unwrap_or_else(|_| "vda".into());
    let mut args =
        vec!["probe", "run", &case_file, "--out", &out, "--repeats", repeats, "--block-device", &disk];
    args.extend_from_slice(extra);
    let said = ok(&args);
    (out, said)
}

/// A tiny probe on the real kernel: the 16 MiB trace in an 8 MiB group on a swap file, two
/// repeats, then scored by `validate`; then a tiny queue (two probes of one machine cannot
/// run at once: the second refuses while the first's state file exists). It changes the
/// machine's swap settings while it runs (and restores them), so it needs root and runs
/// only when `SWAPSIM_PROBE_REAL=1` is set; CI never sets it. `SWAPSIM_PROBE_DISK` names
/// the disk holding `/var/tmp` for the block figures (default `vda`).
#[test]
fn a_tiny_probe_runs_on_the_real_kernel_when_asked() {
    if std::env::var_os("SWAPSIM_PROBE_REAL").is_none() {
        return;
    }
    let workload = serde_json::json!({
        "trace": TINY_TRACE, "region_bytes": 16u64 << 20, "pattern": "seq", "passes": 3, "seed": 205,
        "write_fraction": 0.2, "page_contents": "random non-zero bytes", "thp": "off",
    });
    let (out, said) = probe_for_real("real", "P-tiny", "live", 8, workload, "2", &[]);
    assert!(said.contains("wrote") && said.contains("(2 runs, 0 OOM-killed)"), "{said}");
    // The disk was timed first, and validate replays the case on it.
    let profile = std::fs::read_to_string(Path::new(&out).join("device/profile.toml")).expect("a profile");
    assert!(profile.contains("read_base_us"), "{profile}");
    let doc = parse(&ok(&["validate", &out, "--seeds", "1", "--format", "json"]));
    assert!(doc["disk"].as_str().is_some_and(|d| d.contains("fitted disk")), "{}", doc["disk"]);
    let case = &doc["cases"][0];
    let pswpin = case["real"]["vmstat"]["pswpin"].as_f64().expect("the kernel's pswpin");
    assert!(pswpin > 0.0, "a 16 MiB trace in 8 MiB swaps in: {case}");
    assert!(case["sim"]["vmstat"]["pswpin"].as_f64().is_some_and(|s| s > 0.0), "{case}");

    // A queue: three jobs of the same trace, two at a time, in 24 MiB.
    let job = serde_json::json!({ "trace": TINY_TRACE, "region_bytes": 16u64 << 20, "pattern": "seq",
                                  "passes": 3, "seed": 205, "write_fraction": 0.2 });
    let workload = serde_json::json!({ "page_contents": "random non-zero bytes", "thp": "off",
                                       "queue": { "concurrency": 2, "jobs": [job, job, job] } });
    let (out, said) =
        probe_for_real("real-queue", "PJ-tiny", "jobs", 24, workload, "1", &["--no-disk-timing"]);
    assert!(said.contains("(1 runs, 0 OOM-killed)"), "{said}");
    let written: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(&out).join("cases/PJ-tiny-probe.json")).expect("the case"),
    )
    .expect("JSON");
    let jobs = written["measured"]["jobs_timing"].as_array().expect("jobs_timing");
    assert_eq!(jobs.len(), 3);
    let time = |j: usize, key: &str| jobs[j][key].as_f64().expect("a job time");
    assert!(
        time(2, "start_s") >= time(0, "end_s").min(time(1, "end_s")),
        "the third job waits for a slot: {jobs:?}"
    );
    let doc = parse(&ok(&["validate", &out, "--seeds", "1", "--format", "json"]));
    assert_eq!(doc["cases"][0]["kind"], "jobs");
}
