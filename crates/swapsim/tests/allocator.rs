//! The slot allocator policies through whole runs: under each, the engine keeps its
//! invariants after every event (slots in use match the references and the swap cache,
//! cluster bookkeeping recounts), swap-out of large folios, swap-in, exits and a
//! hibernation with resume included, and a run is a pure function of the scenario.

use swapsim::Scenario;
use swapsim_core::{SimReport, Simulation};
use swapsim_policies::AllocatorConfig;

/// Processes of 64 kB folios cycling through a small zram under a tight memcg: large
/// folios swap out, fall back, swap in as pages and are released at exit.
const CHURN: &str = r#"
    seed = 5
    [machine]
    memory = "24MiB"
    cpus = 2
    [memcg]
    limit = "3MiB"
    page_cache = "1MiB"
    [[swap.devices]]
    name = "zram0"
    size = "12MiB"
    model = { preset = "this-vm-zram" }
    [thp]
    hugepages = { "16kB" = "always", "64kB" = "always", "2048kB" = "never" }
    swapin = "order0"
    [workload.jobs]
    jobs = 6
    concurrency = 3
    size_median = "3MiB"
    size_sigma = 0.3
    link_fraction = 0.0
    accesses_per_page = 3.0
"#;

/// A machine that swaps a little, hibernates to an SSD and resumes.
const HIBERNATE: &str = r#"
    seed = 7
    [machine]
    memory = "40MiB"
    cpus = 2
    [memcg]
    limit = "6MiB"
    [[swap.devices]]
    name = "ssd"
    size = "64MiB"
    model = { preset = "nvme" }
    [workload.generator]
    pattern = "rand"
    region = "5MiB"
    passes = 1
    tasks = 2
    [[timeline]]
    at = "workload-end"
    op = "set-memcg-limit"
    limit = "max"
    [[timeline]]
    op = "hibernate"
    [[timeline]]
    op = "resume"
"#;

/// Runs `text` under `allocator`, checking the engine's invariants after every event.
fn run_checked(text: &str, allocator: AllocatorConfig) -> SimReport {
    let set = format!("swap.allocator=\"{}\"", allocator.name());
    let prepared = Scenario::from_toml(text).and_then(|s| s.edits(&[set.as_str()])).and_then(|s| s.prepare());
    let (setup, _trace) = prepared.and_then(|p| p.setup()).expect("the scenario builds");
    let mut sim = Simulation::new(setup).expect("the setup is valid");
    sim.check_invariants();
    while sim.step().expect("the run does not fail") {
        sim.check_invariants();
    }
    sim.into_report()
}

#[test]
fn every_allocator_keeps_the_invariants_and_is_deterministic() {
    for allocator in AllocatorConfig::ALL {
        let churn = run_checked(CHURN, allocator);
        assert!(churn.vmstat.pswpout > 0, "{}: the churn swaps", allocator.name());
        let m = churn.mthp.get("64kB").cloned().unwrap_or_default();
        assert!(m.swpout + m.swpout_fallback > 0, "{}: 64 kB folios reach swap-out", allocator.name());
        assert_eq!(format!("{churn:?}"), format!("{:?}", run_checked(CHURN, allocator)));
        let hib = run_checked(HIBERNATE, allocator);
        let results: Vec<&str> = hib.operations.iter().map(|o| o.result.as_str()).collect();
        assert_eq!(results[1..], ["completed", "completed"], "{}: {results:?}", allocator.name());
        assert_eq!(format!("{hib:?}"), format!("{:?}", run_checked(HIBERNATE, allocator)));
    }
}

/// The slow path takes the image's slots one cluster apart, so no two image writes merge
/// (the device's 32 clusters are more than the 16 recent requests the scheduler merges
/// against): without a memcg limit nothing swaps, and every write is the image's.
#[test]
fn the_slow_path_leaves_the_image_unmerged() {
    let image_only = HIBERNATE.replace("[memcg]\n    limit = \"6MiB\"\n", "");
    let writes = |allocator| {
        let report = run_checked(&image_only, allocator);
        assert_eq!(report.vmstat.pswpout, 0, "nothing swaps before the image");
        let w = &report.block[0].writes;
        w.completed_kib as f64 / w.dispatches.max(1) as f64
    };
    let (slow, fast) = (writes(AllocatorConfig::HibernateSlowPath), writes(AllocatorConfig::Kernel));
    assert!(slow < 4.5 && fast > 16.0, "KiB per write: slow path {slow:.1}, fast path {fast:.1}");
}
