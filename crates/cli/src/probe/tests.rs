//! Planning, applying and restoring a probe on a fake machine: a temporary folder laid out
//! like sysfs, procfs and cgroupfs, and a fake [`System`] that records what it is asked and
//! imitates the kernel there (a made cgroup gets its control files, `swapon` lists the area
//! in the fake `/proc/swaps`). Nothing here touches the real machine.

use super::host::Host;
use super::plan::{plan, Places, Plan, Step};
use super::setup::{apply, restore_saved, Applied, Restored, StartOptions, STATE_FILE};
use super::system::System;
use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Every knob of the fake machine, with its value there.
const KNOBS: &[(&str, &str)] = &[
    ("/proc/sys/vm/page-cluster", "3"),
    ("/proc/sys/vm/swappiness", "60"),
    ("/sys/kernel/mm/swap/vma_ra_enabled", "true"),
    ("/sys/kernel/mm/transparent_hugepage/hugepages-16kB/enabled", "always inherit madvise [never]"),
    ("/sys/kernel/mm/transparent_hugepage/hugepages-32kB/enabled", "always inherit madvise [never]"),
    ("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled", "always inherit madvise [never]"),
    ("/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled", "always [inherit] madvise never"),
    // A value written back would lose the blank line, so a test sees whether it was written.
    ("/sys/module/zswap/parameters/enabled", "N\n"),
    ("/sys/module/zswap/parameters/compressor", "lzo-rle"),
    ("/sys/module/zswap/parameters/shrinker_enabled", "Y"),
    ("/sys/module/zswap/parameters/max_pool_percent", "20"),
    ("/sys/module/zswap/parameters/accept_threshold_percent", "90"),
    ("/sys/kernel/mm/lru_gen/enabled", "0x0007"),
    ("/sys/kernel/mm/lru_gen/min_ttl_ms", "0"),
];

const SWAPS_HEADER: &str = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n";

/// A fake machine's tree, removed when the test ends.
struct Machine(Host);

impl std::ops::Deref for Machine {
    type Target = Host;
    fn deref(&self) -> &Host {
        &self.0
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        // A tree left behind by a failed removal is harmless: the next run replaces it.
        let _ = std::fs::remove_dir_all(self.0.root());
    }
}

/// A fresh fake machine with a cgroup v1 or v2 memory controller.
fn machine(name: &str, cgroup_version: u64) -> Machine {
    let root = std::env::temp_dir().join(format!("swapsim-probe-{}-{name}", std::process::id()));
    if root.exists() {
        std::fs::remove_dir_all(&root).expect("the old fake machine can be removed");
    }
    let host = Host::new(&root);
    for (path, value) in KNOBS {
        put(&host, path, value);
    }
    put(&host, "/proc/swaps", SWAPS_HEADER);
    // Order 1 is for shmem only: no `enabled`, so no anonymous size the probe sets.
    put(&host, "/sys/kernel/mm/transparent_hugepage/hugepages-8kB/shmem_enabled", "[never]");
    std::fs::create_dir_all(host.path("/sys/block/zram0")).expect("a fake zram device");
    std::fs::create_dir_all(host.path("/var/tmp")).expect("a fake /var/tmp");
    if cgroup_version == 1 {
        std::fs::create_dir_all(host.path("/sys/fs/cgroup/memory")).expect("a fake v1 mount");
    } else {
        put(&host, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids");
        put(&host, "/sys/fs/cgroup/cgroup.subtree_control", "cpu");
    }
    Machine(host)
}

fn put(host: &Host, path: &str, text: &str) {
    let full = host.path(path);
    std::fs::create_dir_all(full.parent().expect("a parent")).expect("the parent can be made");
    std::fs::write(full, text).expect("a fake machine's file");
}

fn raw(host: &Host, path: &str) -> String {
    std::fs::read_to_string(host.path(path)).expect("a fake machine's file")
}

/// Every knob's value, as the probe reads it.
fn knob_values(host: &Host) -> Vec<(String, String)> {
    KNOBS.iter().map(|(path, _)| (path.to_string(), host.value(path).expect("a knob"))).collect()
}

fn state_dir(host: &Host) -> PathBuf {
    host.root().join("state")
}

fn options(host: &Host) -> StartOptions {
    StartOptions { state_dir: state_dir(host), leave_existing_swap: false }
}

fn places() -> Places {
    Places {
        swap_file: "/var/tmp/probe.swap".to_string(),
        zram: "zram0".to_string(),
        swap_device: None,
        disk: None,
    }
}

/// A case's document with the given `setup` fields over a swap-file case's.
fn case(setup: Value) -> Value {
    let mut doc = json!({
        "format": "swapsim-validation/1",
        "setup": {
            "memcg_limit_bytes": 268435456u64, "memcg_version": 1, "swappiness": 60, "page_cluster": 0,
            "vma_ra_enabled": false, "mthp_always_kib": ["16", 64],
            "swap": {"kind": "file", "size_bytes": 2147483648u64, "rotational": true},
            "zswap": {"enabled": false, "ever_enabled": true}
        }
    });
    for (key, value) in setup.as_object().expect("fields") {
        doc["setup"][key] = value.clone();
    }
    doc
}

fn plan_of(host: &Host, doc: &Value) -> Plan {
    plan(host, Path::new("case.json"), doc, &places()).expect("a good case")
}

/// What the fake was asked, in order.
type Log = Rc<RefCell<Vec<String>>>;

/// A fake [`System`] on a fake machine.
struct FakeSystem {
    host: Host,
    log: Log,
    /// An operation that fails.
    fail_on: Option<&'static str>,
    /// An operation during which Ctrl-C arrives.
    interrupt_on: Option<(&'static str, Arc<AtomicBool>)>,
}

impl FakeSystem {
    fn new(host: &Host) -> FakeSystem {
        FakeSystem { host: host.clone(), log: Log::default(), fail_on: None, interrupt_on: None }
    }

    fn record(&mut self, op: &'static str, what: &str) -> Result<()> {
        // Every change comes after the state file holds every original value.
        let state = std::fs::read_to_string(state_dir(&self.host).join(STATE_FILE));
        let saved = state.is_ok_and(|text| text.contains("\"original\": \"3\""));
        self.log.borrow_mut().push(format!("{op} {what}{}", if saved { "" } else { " (no state saved)" }));
        if let Some((on, flag)) = &self.interrupt_on {
            if *on == op {
                flag.store(true, Ordering::SeqCst);
            }
        }
        if self.fail_on == Some(op) {
            bail!("{op} failed on purpose");
        }
        Ok(())
    }

    /// The machine's name of a placed path.
    fn machine_path(&self, path: &Path) -> String {
        format!("/{}", path.strip_prefix(self.host.root()).expect("under the root").display())
    }
}

impl System for FakeSystem {
    fn make_cgroup(&mut self, dir: &Path) -> Result<()> {
        self.record("mkdir", &self.machine_path(dir))?;
        std::fs::create_dir(dir)?;
        for name in
            ["cgroup.procs", "memory.limit_in_bytes", "memory.swappiness", "memory.max", "memory.swap.max"]
        {
            std::fs::write(dir.join(name), "")?;
        }
        std::fs::write(dir.join("memory.zswap.max"), "max")?;
        std::fs::write(dir.join("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")?;
        Ok(())
    }
    fn remove_cgroup(&mut self, dir: &Path) -> Result<()> {
        self.record("rmdir", &self.machine_path(dir))?;
        Ok(std::fs::remove_dir_all(dir)?)
    }
    fn make_swap_file(&mut self, path: &Path, size_bytes: u64) -> Result<()> {
        self.record("mkswapfile", &self.machine_path(path))?;
        Ok(std::fs::write(path, size_bytes.to_string())?)
    }
    fn remove_swap_file(&mut self, path: &Path) -> Result<()> {
        self.record("rm", &self.machine_path(path))?;
        Ok(std::fs::remove_file(path)?)
    }
    fn format_swap_device(&mut self, path: &Path, size_bytes: u64) -> Result<()> {
        self.record("mkswapdev", &format!("{} {size_bytes}", self.machine_path(path)))
    }
    fn make_zram(&mut self, device: &str, algorithm: Option<&str>, size_bytes: u64) -> Result<()> {
        self.record("zram", &format!("{device} {} {size_bytes}", algorithm.unwrap_or("-")))
    }
    fn reset_zram(&mut self, device: &str) -> Result<()> {
        self.record("zram-reset", device)
    }
    fn swapon(&mut self, path: &Path) -> Result<()> {
        let name = self.machine_path(path);
        self.record("swapon", &name)?;
        let swaps = raw(&self.host, "/proc/swaps");
        put(&self.host, "/proc/swaps", &format!("{swaps}{name}\tfile\t2097148\t0\t-2\n"));
        Ok(())
    }
    fn swapoff(&mut self, path: &Path) -> Result<()> {
        let name = self.machine_path(path);
        self.record("swapoff", &name)?;
        let swaps: String = raw(&self.host, "/proc/swaps")
            .lines()
            .filter(|line| !line.starts_with(&format!("{name}\t")))
            .map(|line| format!("{line}\n"))
            .collect();
        put(&self.host, "/proc/swaps", &swaps);
        Ok(())
    }
}

fn apply_quietly<'s>(
    host: &Host,
    plan: &Plan,
    system: &'s mut FakeSystem,
    warnings: &mut Vec<String>,
) -> Result<Applied<'s>> {
    let never = AtomicBool::new(false);
    apply(host, plan, system, &options(host), &never, &mut |warning| warnings.push(warning.to_string()))
}

/// The machine is as it was: every knob, no cgroup, no swap, no swap file, no state file.
fn assert_restored(host: &Host, before: &[(String, String)]) {
    assert_eq!(knob_values(host), before);
    assert!(
        !host.exists("/sys/fs/cgroup/memory/swapsim-probe") && !host.exists("/sys/fs/cgroup/swapsim-probe")
    );
    assert_eq!(raw(host, "/proc/swaps"), SWAPS_HEADER);
    assert!(!host.exists("/var/tmp/probe.swap"));
    assert!(!state_dir(host).join(STATE_FILE).exists(), "the state file is removed");
}

#[test]
fn a_plan_reads_the_case_and_the_machine() {
    let host = machine("plan", 1);
    let doc = case(json!({}));
    let plan = plan_of(&host, &doc);
    let lines: Vec<String> = plan.steps.iter().map(Step::describe).collect();
    expect_test::expect![[r#"
        [
            "mkdir  /sys/fs/cgroup/memory/swapsim-probe",
            "set    /sys/fs/cgroup/memory/swapsim-probe/memory.limit_in_bytes = 268435456",
            "set    /sys/fs/cgroup/memory/swapsim-probe/memory.swappiness = 60",
            "set    /proc/sys/vm/page-cluster = 0 (was 3)",
            "set    /sys/kernel/mm/swap/vma_ra_enabled = false (was true)",
            "set    /sys/kernel/mm/transparent_hugepage/hugepages-16kB/enabled = always (was never)",
            "keep   /sys/kernel/mm/transparent_hugepage/hugepages-32kB/enabled = never (already)",
            "set    /sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled = always (was never)",
            "set    /sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled = never (was inherit)",
            "keep   /sys/module/zswap/parameters/enabled = N (already)",
            "create swap file /var/tmp/probe.swap of 2147483648 bytes (fallocate, mkswap)",
            "swapon /var/tmp/probe.swap",
        ]
    "#]]
    .assert_debug_eq(&lines);
    // The swap file's disk is not named: its rotational flag is left alone, with a note.
    assert_eq!(plan.notes.len(), 1, "{:?}", plan.notes);
    assert!(plan.notes[0].contains("rotational = 1") && plan.notes[0].contains("--block-device"));
    // The bundled case plans on the fake machine as well.
    let bundled = repo().join("validation/linux-6.18/cases/D2-nothp-seq-zram.json");
    let plan = super::plan::plan_file(&host, &bundled, &places()).expect("a bundled case");
    assert!(plan.steps.contains(&Step::Swapon { path: "/dev/zram0".to_string() }), "{:?}", plan.steps);
}

pub(super) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_bad_case_is_named_by_file_and_field() {
    let host = machine("bad-case", 1);
    let check = |doc: Value, expected: &str| {
        let err = plan(&host, Path::new("case.json"), &doc, &places()).expect_err("a bad case");
        assert!(format!("{err:#}").contains(expected), "{err:#}");
    };
    let mut missing = case(json!({}));
    missing["setup"].as_object_mut().expect("setup").remove("page_cluster");
    check(missing, "case.json: setup.page_cluster missing");
    check(case(json!({"page_cluster": "3"})), "case.json: setup.page_cluster is not a whole number");
    check(
        case(json!({"mthp_always_kib": ["8"]})),
        "case.json: setup.mthp_always_kib: this kernel has no 8kB",
    );
    check(
        case(json!({"swap": {"kind": "tape", "size_bytes": 1}})),
        "setup.swap.kind \"tape\" is not file, partition or zram",
    );
    check(json!({"format": "other/2"}), "case.json: format \"other/2\" is not swapsim-validation/1");
}

#[test]
fn success_restores_every_knob_and_removes_the_cgroup_and_swap() {
    let host = machine("success", 1);
    let before = knob_values(&host);
    let doc = case(json!({
        "swap": {"kind": "zram", "size_bytes": 3221225472u64, "rotational": false, "zram_algorithm": "lzo-rle"},
        "zswap": {"enabled": true, "ever_enabled": false, "compressor": "lzo", "shrinker_enabled": false,
                  "max_pool_percent": 20, "accept_threshold_percent": 90},
        "lru_gen": {"enabled": false, "min_ttl_ms": 1000},
    }));
    let plan = plan_of(&host, &doc);
    assert!(plan.notes.iter().any(|note| note.contains("large-folio swap-in off")), "{:?}", plan.notes);
    let mut system = FakeSystem::new(&host);
    let log = system.log.clone();
    let mut warnings = Vec::new();
    let applied = apply_quietly(&host, &plan, &mut system, &mut warnings).expect("the set-up");
    assert_eq!(warnings.len(), 1, "one warning before zswap's enabled is written: {warnings:?}");
    assert_eq!(host.value("/proc/sys/vm/page-cluster").expect("a knob"), "0");
    assert_eq!(host.value("/sys/module/zswap/parameters/enabled").expect("a knob"), "Y");
    assert_eq!(host.value("/sys/module/zswap/parameters/compressor").expect("a knob"), "lzo");
    assert_eq!(host.value("/sys/kernel/mm/lru_gen/min_ttl_ms").expect("a knob"), "1000");
    assert_eq!(raw(&host, "/sys/fs/cgroup/memory/swapsim-probe/memory.limit_in_bytes"), "268435456");
    assert!(raw(&host, "/proc/swaps").contains("/dev/zram0\t"));
    applied.restore().expect("the restore");
    assert_restored(&host, &before);
    expect_test::expect![[r#"
        [
            "mkdir /sys/fs/cgroup/memory/swapsim-probe",
            "zram zram0 lzo-rle 3221225472",
            "swapon /dev/zram0",
            "swapoff /dev/zram0",
            "zram-reset zram0",
            "rmdir /sys/fs/cgroup/memory/swapsim-probe",
        ]
    "#]]
    .assert_debug_eq(&log.borrow());
}

#[test]
fn a_named_swap_device_is_formatted_its_disk_flag_restored_and_refused_when_in_use() {
    let host = machine("swap-device", 1);
    put(&host, "/sys/class/block/vdb/queue/rotational", "1\n");
    put(&host, "/sys/class/block/vdb/size", "4194304\n");
    put(&host, "/proc/mounts", "/dev/vda1 / ext4 rw 0 0\n");
    let doc = case(json!({"swap": {"kind": "partition", "size_bytes": 1073741824u64, "rotational": false}}));
    // A partition case needs a device to swap on.
    let err = plan(&host, Path::new("case.json"), &doc, &places()).expect_err("no device");
    assert!(format!("{err:#}").contains("--swap-device"), "{err:#}");
    let on_vdb = Places { swap_device: Some("/dev/vdb".into()), disk: Some("vdb".into()), ..places() };
    let plan = plan(&host, Path::new("case.json"), &doc, &on_vdb).expect("a plan");
    let lines: Vec<String> = plan.steps.iter().skip(4).map(Step::describe).collect();
    assert!(
        lines.ends_with(&[
            "format /dev/vdb as swap of 1073741824 bytes (mkswap; its former contents are lost)".to_string(),
            "swapon /dev/vdb".to_string(),
            "set    /sys/class/block/vdb/queue/rotational = 0 (was 1)".to_string(),
        ]),
        "{lines:?}"
    );
    let mut system = FakeSystem::new(&host);
    let log = system.log.clone();
    let applied = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).expect("the set-up");
    assert_eq!(host.value("/sys/class/block/vdb/queue/rotational").expect("a knob"), "0");
    applied.restore().expect("the restore");
    assert_eq!(host.value("/sys/class/block/vdb/queue/rotational").expect("a knob"), "1");
    assert_eq!(raw(&host, "/proc/swaps"), SWAPS_HEADER);
    let ops: Vec<String> = log.borrow().iter().filter(|op| !op.contains("cgroup")).cloned().collect();
    assert_eq!(ops, ["mkswapdev /dev/vdb 1073741824", "swapon /dev/vdb", "swapoff /dev/vdb"]);
    // Mounted, or not a block device: refused before anything is written.
    put(&host, "/proc/mounts", "/dev/vdb /data ext4 rw 0 0\n");
    let err = super::setup::check(&host, &plan, &options(&host)).expect_err("mounted");
    assert!(format!("{err:#}").contains("/dev/vdb is mounted (/dev/vdb /data"), "{err:#}");
    put(&host, "/proc/mounts", "/dev/vdb2 /data ext4 rw 0 0\n");
    let err = super::setup::check(&host, &plan, &options(&host)).expect_err("a partition mounted");
    assert!(format!("{err:#}").contains("/dev/vdb is mounted (/dev/vdb2"), "{err:#}");
    put(&host, "/proc/mounts", "/dev/vdb10x /data ext4 rw 0 0\n/dev/vdbb /b ext4 rw 0 0\n");
    super::setup::check(&host, &plan, &options(&host)).expect("other devices' mounts");
    put(&host, "/sys/class/block/vdb/holders/dm-0", "");
    let err = super::setup::check(&host, &plan, &options(&host)).expect_err("held");
    assert!(format!("{err:#}").contains("in use by another block device"), "{err:#}");
    let on_file = Places { swap_device: Some("/home/me/file".into()), disk: None, ..places() };
    let plan = super::plan::plan(&host, Path::new("case.json"), &doc, &on_file).expect("a plan");
    let err = super::setup::check(&host, &plan, &options(&host)).expect_err("not a device");
    assert!(format!("{err:#}").contains("/home/me/file: not a block device"), "{err:#}");
}

#[test]
fn cgroup_v2_enables_the_controller_and_sets_the_global_swappiness() {
    let host = machine("v2", 2);
    let before = knob_values(&host);
    let plan = plan_of(&host, &case(json!({"swappiness": 100})));
    assert!(
        plan.notes.iter().any(|note| note.contains("cgroup v1; this machine has v2")),
        "{:?}",
        plan.notes
    );
    let mut system = FakeSystem::new(&host);
    let applied = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).expect("the set-up");
    assert_eq!(raw(&host, "/sys/fs/cgroup/cgroup.subtree_control"), "+memory");
    assert_eq!(raw(&host, "/sys/fs/cgroup/swapsim-probe/memory.max"), "268435456");
    assert_eq!(raw(&host, "/sys/fs/cgroup/swapsim-probe/memory.swap.max"), "max");
    assert_eq!(host.value("/proc/sys/vm/swappiness").expect("a knob"), "100");
    // The fake kernel does not apply `+memory`; the restore writes `-memory` only if listed.
    put(&host, "/sys/fs/cgroup/cgroup.subtree_control", "cpu memory");
    applied.restore().expect("the restore");
    assert_eq!(raw(&host, "/sys/fs/cgroup/cgroup.subtree_control"), "-memory");
    assert_restored(&host, &before);
}

#[test]
fn zswap_enabled_is_never_written_when_it_need_not_change() {
    let host = machine("zswap-unchanged", 1);
    let plan = plan_of(&host, &case(json!({})));
    let mut system = FakeSystem::new(&host);
    let mut warnings = Vec::new();
    let applied = apply_quietly(&host, &plan, &mut system, &mut warnings).expect("the set-up");
    applied.restore().expect("the restore");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(raw(&host, "/sys/module/zswap/parameters/enabled"), "N\n", "neither set nor restored");
}

#[test]
fn a_failed_step_restores_everything_made_before_it() {
    let host = machine("failed-step", 1);
    let before = knob_values(&host);
    let plan = plan_of(&host, &case(json!({})));
    let mut system = FakeSystem::new(&host);
    system.fail_on = Some("swapon");
    let log = system.log.clone();
    let err = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).err().expect("swapon fails");
    let message = format!("{err:#}");
    assert!(message.contains("every change it made was restored"), "{message}");
    assert!(message.contains("step 12: swapon /var/tmp/probe.swap: swapon failed on purpose"), "{message}");
    assert_restored(&host, &before);
    assert_eq!(
        *log.borrow(),
        [
            "mkdir /sys/fs/cgroup/memory/swapsim-probe",
            "mkswapfile /var/tmp/probe.swap",
            "swapon /var/tmp/probe.swap",
            "rm /var/tmp/probe.swap",
            "rmdir /sys/fs/cgroup/memory/swapsim-probe",
        ]
    );
}

#[test]
fn a_knob_that_cannot_be_written_stops_the_set_up_and_a_later_restore_finishes() {
    let host = machine("broken-knob", 1);
    let before = knob_values(&host);
    let plan = plan_of(&host, &case(json!({})));
    // The knob turns into a folder after the plan read it: writing it fails midway.
    let knob = host.path("/sys/kernel/mm/swap/vma_ra_enabled");
    std::fs::remove_file(&knob).expect("the knob");
    std::fs::create_dir(&knob).expect("a folder in its place");
    let mut system = FakeSystem::new(&host);
    let err = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).err().expect("the write fails");
    let message = format!("{err:#}");
    assert!(message.contains("step 5: set    /sys/kernel/mm/swap/vma_ra_enabled = false"), "{message}");
    assert!(message.contains("then restoring failed too"), "{message}");
    // What was written before it is back; the state file keeps the broken knob to undo.
    assert_eq!(host.value("/proc/sys/vm/page-cluster").expect("a knob"), "3");
    assert!(!host.exists("/sys/fs/cgroup/memory/swapsim-probe"));
    let state = std::fs::read_to_string(state_dir(&host).join(STATE_FILE)).expect("the state file stays");
    assert!(state.contains("vma_ra_enabled"), "{state}");
    // Once the cause is fixed, `probe restore` finishes the job.
    std::fs::remove_dir(&knob).expect("the folder");
    put(&host, "/sys/kernel/mm/swap/vma_ra_enabled", "false");
    let mut fresh = |host: &Host| -> Box<dyn System> { Box::new(FakeSystem::new(host)) };
    assert_eq!(restore_saved(&state_dir(&host), &mut fresh).expect("the restore"), Restored::Steps(1));
    assert_restored(&host, &before);
}

#[test]
fn ctrl_c_while_applying_restores_everything() {
    let host = machine("interrupted", 1);
    let before = knob_values(&host);
    let plan = plan_of(&host, &case(json!({})));
    let flag = Arc::new(AtomicBool::new(false));
    let mut system = FakeSystem::new(&host);
    system.interrupt_on = Some(("mkswapfile", flag.clone()));
    let log = system.log.clone();
    let res = apply(&host, &plan, &mut system, &options(&host), &flag, &mut |_| {});
    let message = format!("{:#}", res.err().expect("interrupted"));
    assert!(message.contains("every change it made was restored: interrupted"), "{message}");
    assert_restored(&host, &before);
    assert!(!log.borrow().iter().any(|op| op.starts_with("swapon")), "{:?}", log.borrow());
    assert!(!log.borrow().iter().any(|op| op.contains("no state saved")), "{:?}", log.borrow());
}

#[test]
fn a_crashed_probe_is_restored_from_its_state_file_and_a_dropped_one_at_once() {
    let host = machine("crashed", 1);
    let before = knob_values(&host);
    let plan = plan_of(&host, &case(json!({})));
    let mut system = FakeSystem::new(&host);
    let applied = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).expect("the set-up");
    // A crash: the process ends without restoring.
    std::mem::forget(applied);
    assert_eq!(host.value("/proc/sys/vm/page-cluster").expect("a knob"), "0");
    let mut fresh = |host: &Host| -> Box<dyn System> { Box::new(FakeSystem::new(host)) };
    assert_eq!(restore_saved(&state_dir(&host), &mut fresh).expect("the restore"), Restored::Steps(10));
    assert_restored(&host, &before);
    assert_eq!(restore_saved(&state_dir(&host), &mut fresh).expect("nothing left"), Restored::Nothing);
    // An error in the caller drops the guard, which restores.
    let mut system = FakeSystem::new(&host);
    drop(apply_quietly(&host, &plan, &mut system, &mut Vec::new()).expect("the set-up"));
    assert_restored(&host, &before);
}

#[test]
fn a_probe_refuses_to_start_over_a_stale_state_file_or_foreign_swap() {
    let host = machine("refusals", 1);
    let before = knob_values(&host);
    let plan = plan_of(&host, &case(json!({})));
    let mut system = FakeSystem::new(&host);
    std::fs::create_dir_all(state_dir(&host)).expect("the state folder");
    std::fs::write(state_dir(&host).join(STATE_FILE), "{}").expect("a stale state file");
    let err = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).err().expect("a stale state file");
    assert!(format!("{err:#}").contains("run `swapsim probe restore` first"), "{err:#}");
    std::fs::remove_file(state_dir(&host).join(STATE_FILE)).expect("the stale state file");

    put(&host, "/proc/swaps", &format!("{SWAPS_HEADER}/dev/vda2\tpartition\t1048572\t0\t-2\n"));
    let err = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).err().expect("foreign swap");
    assert!(format!("{err:#}").contains("swap this probe did not make is on (/dev/vda2)"), "{err:#}");
    assert!(format!("{err:#}").contains("--leave-existing-swap"), "{err:#}");
    assert_eq!(knob_values(&host), before, "nothing was written");
    assert!(system.log.borrow().is_empty(), "nothing was made");
    // Told to leave it alone, the probe starts, and its restore leaves that swap on.
    let never = AtomicBool::new(false);
    let leave = StartOptions { leave_existing_swap: true, ..options(&host) };
    let applied = apply(&host, &plan, &mut system, &leave, &never, &mut |_| {}).expect("the set-up");
    applied.restore().expect("the restore");
    assert_eq!(raw(&host, "/proc/swaps"), format!("{SWAPS_HEADER}/dev/vda2\tpartition\t1048572\t0\t-2\n"));

    put(&host, "/var/tmp/probe.swap", "somebody's file");
    put(&host, "/proc/swaps", SWAPS_HEADER);
    let err = apply_quietly(&host, &plan, &mut system, &mut Vec::new()).err().expect("an existing swap file");
    assert!(format!("{err:#}").contains("probe.swap already exists"), "{err:#}");
    assert_eq!(raw(&host, "/var/tmp/probe.swap"), "somebody's file");
}

/// A workload program stand-in: each run adds `100 × run number` swap-ins to the fake
/// `/proc/vmstat`, and the run numbered `killed` ends as the memcg OOM killer ends one.
struct FakeWorkload {
    host: Host,
    n: u64,
    killed: Option<u64>,
}

impl super::run::Workload for FakeWorkload {
    fn run(&mut self, cgroup_procs: &Path) -> Result<super::run::Ending> {
        self.n += 1;
        assert!(cgroup_procs.exists(), "the cgroup is made before the workload runs");
        let pswpin: u64 = raw(&self.host, "/proc/vmstat").trim().trim_start_matches("pswpin ").parse()?;
        put(&self.host, "/proc/vmstat", &format!("pswpin {}\n", pswpin + 100 * self.n));
        if self.killed == Some(self.n) {
            std::fs::write(
                cgroup_procs.with_file_name("memory.oom_control"),
                "oom_kill_disable 0\noom_kill 1\n",
            )?;
            return Ok(super::run::Ending::Killed);
        }
        Ok(super::run::Ending::Completed { fill_s: 0.1, total_s: 0.5, jobs: Vec::new() })
    }
}

#[test]
fn a_probe_run_measures_each_repeat_on_a_clean_machine_and_writes_a_case() {
    let host = machine("run", 1);
    put(&host, "/proc/vmstat", "pswpin 1000\n");
    // zswap's pool as the snapshot after the workload's exit finds it: emptied.
    put(&host, "/sys/kernel/debug/zswap/stored_pages", "0\n");
    put(&host, "/proc/sys/kernel/osrelease", "6.18.0-fake\n");
    let before = knob_values(&host);
    let mut doc = case(json!({"swap": {"kind": "zram", "size_bytes": 1073741824u64, "rotational": false}}));
    doc["id"] = json!("T-fake");
    doc["kind"] = json!("live");
    doc["workload"] = json!({"trace": "traces/t.trace", "region_bytes": 8192, "pattern": "seq", "passes": 1,
                             "seed": 1, "write_fraction": 0.0, "page_contents": "half random, half constant",
                             "thp": "off"});
    let case_file = host.path("/cases-in/cases/T-fake.json");
    put(&host, "/cases-in/cases/T-fake.json", &doc.to_string());
    put(&host, "/cases-in/traces/t.trace", "# pages=2\nW 0\nW 1\n");
    let probe = super::run::Probe {
        case_file: &case_file,
        places: places(),
        options: options(&host),
        block_device: None,
        repeats: 3,
        // No tracefs on the fake machine: the file lists no request, and says why.
        requests_out: Some(host.path("/requests.csv")),
    };
    let mut system = FakeSystem::new(&host);
    let mut workload = FakeWorkload { host: host.clone(), n: 0, killed: Some(2) };
    let never = AtomicBool::new(false);
    let mut said = Vec::new();
    let runs = super::run::repeats(&host, &probe, &mut system, &mut workload, &never, &mut |s| {
        said.push(s.to_string())
    })
    .expect("three repeats");
    assert_restored(&host, &before);
    assert_eq!(
        system.log.borrow().iter().filter(|op| op.starts_with("swapon")).count(),
        3,
        "a fresh swap each time"
    );
    let pswpin: Vec<f64> = runs.iter().map(|r| r.figures["vmstat.pswpin"]).collect();
    assert_eq!(pswpin, [100.0, 200.0, 300.0]);
    assert!(
        runs.iter().all(|r| !r.figures.keys().any(|k| k.starts_with("zswap_at_end"))),
        "a pool level read after the workload exited is left out, not recorded as 0"
    );
    assert!(said[1].contains("OOM-killed"), "{said:?}");
    let listed = std::fs::read_to_string(host.path("/requests.csv")).expect("the request list is written");
    assert_eq!(listed.lines().count(), 1, "a header only: {listed}");
    assert!(said.iter().any(|s| s.contains("0 of 3 repeats had a complete block trace")), "{said:?}");
    let out = host.path("/out");
    put(&host, "/proc/cpuinfo", "processor\t: 0\nmodel name\t: Fake CPU\nprocessor\t: 1\n");
    put(&host, "/sys/class/block/zram0/queue/rotational", "0\n");
    let file = super::run::write_case(&host, &case_file, "T-fake-probe", &runs, &out, Some("zram0"), None)
        .expect("the case");
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("written")).expect("JSON");
    assert_eq!(written["kernel"], "6.18.0-fake");
    assert_eq!(written["setup"]["machine"]["cpus_online"], 2);
    assert_eq!(written["setup"]["machine"]["cpu_model"], "Fake CPU");
    assert_eq!(written["setup"]["machine"]["swap_disk"], json!({"name": "zram0", "rotational": false}));
    assert_eq!(written["measured"]["vmstat"]["pswpin"], json!({"median": 200, "min": 100, "max": 300}));
    assert_eq!(written["measured"]["oom_kills"]["runs_oom_killed"], 1);
    assert!(written["measured"].get("zswap_at_end").is_none(), "{}", written["measured"]);
    assert_eq!(written["workload"], doc["workload"]);
    assert!(out.join("traces/t.trace").exists(), "the trace is copied beside the case");
    assert_eq!(
        super::run::workload_flags(&case_file, &doc["workload"]).expect("flags"),
        ("half", "nohugepage")
    );
}
