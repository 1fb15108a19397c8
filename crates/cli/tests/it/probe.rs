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
