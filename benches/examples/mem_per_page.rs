//! Host memory the simulator needs per simulated page.
//!
//! ```text
//! cargo run --release -p swapsim-benches --example mem_per_page
//! ```
//!
//! Runs two child processes of this same program and reads each one's peak resident set
//! (`VmHWM` in /proc/self/status) after its run:
//!
//! * `big`: a 4 GiB region (1,048,576 pages) under a 1 GiB memory cgroup limit, with a
//!   4 GiB swap device, filled and then given one random pass.
//! * `small`: the same shape at 4 MiB (1,024 pages), 1 MiB limit, 4 MiB swap device.
//!
//! Bytes per page = (VmHWM(big) − VmHWM(small)) / (pages(big) − pages(small)). The
//! difference cancels the program's fixed cost (binary, allocator, stack), so what remains
//! is what grows with the simulated memory: PTEs for every page, frame metadata and LRU
//! links for the pages the limit lets stay resident, swap-slot counts and swap-cache words
//! for every slot of the device, and transient growth of those vectors.
//!
//! Linux only: it needs /proc/self/status.

use std::process::Command;
use swapsim_core::gen::{GeneratorConfig, Pattern};
use swapsim_core::{ByteSize, Outcome};

/// The two sizes measured: (name, region, memcg limit, swap device size).
const CASES: [(&str, ByteSize, ByteSize, ByteSize); 2] = [
    ("small", ByteSize::mib(4), ByteSize::mib(1), ByteSize::mib(4)),
    ("big", ByteSize::gib(4), ByteSize::gib(1), ByteSize::gib(4)),
];

/// Peak resident set of this process in KiB, from /proc/self/status.
fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status is readable");
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM is present");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("VmHWM is a number of kB")
}

/// Simulates one case and prints `pages=<n> vm_hwm_kib=<n>` for the parent to parse.
fn child(name: &str) {
    let &(_, region, limit, swap) = CASES.iter().find(|c| c.0 == name).expect("known case");
    let mut gen = GeneratorConfig::new(Pattern::Rand, region);
    gen.passes = 1;
    gen.validate().expect("workload is valid");
    // The shared benchmark scenario (virtio device, cluster readahead), with this case's
    // swap size.
    let report = swapsim_benches::scenario(&gen, Some(limit), 3)
        .set("swap.devices.0.size", &swap.0.to_string())
        .and_then(|scenario| scenario.run())
        .expect("run succeeds");
    assert_eq!(report.outcome, Outcome::Completed);
    // The run must really have swapped, or it did not exercise the swap-side tables.
    assert!(report.vmstat.pswpout > 0 && report.vmstat.pswpin > 0);
    println!("pages={} vm_hwm_kib={}", region.pages(), vm_hwm_kib());
}

/// Runs `case` in a child process and returns (pages, VmHWM in KiB).
fn measure(case: &str) -> (u64, u64) {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe).arg(case).output().expect("child runs");
    assert!(out.status.success(), "{case} failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    let field = |key: &str| -> u64 {
        text.split_whitespace()
            .find_map(|tok| tok.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{case}: no {key} in {text:?}"))
    };
    (field("pages="), field("vm_hwm_kib="))
}

fn main() {
    if let Some(case) = std::env::args().nth(1) {
        child(&case);
        return;
    }
    let (pages_small, hwm_small) = measure("small");
    let (pages_big, hwm_big) = measure("big");
    println!("small: {pages_small} pages, VmHWM {hwm_small} KiB");
    println!("big:   {pages_big} pages, VmHWM {hwm_big} KiB");
    let bytes_per_page = (hwm_big - hwm_small) as f64 * 1024.0 / (pages_big - pages_small) as f64;
    println!("bytes per simulated page: {bytes_per_page:.1}");
}
