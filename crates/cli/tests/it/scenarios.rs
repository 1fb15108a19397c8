//! Every bundled scenario runs (shrunk with `--set` where the full size would be slow)
//! and shows the behaviour it exists to show.

use crate::support::{in_repo, ok, parse, repo, run_json, without_host};
use serde_json::Value;

fn run(name: &str, sets: &[&str]) -> Value {
    let mut extra = Vec::new();
    for set in sets {
        extra.extend(["--set", set]);
    }
    let doc = parse(&run_json(&in_repo(&format!("scenarios/{name}")), &extra));
    assert_eq!(doc["outcome"]["kind"], "completed", "{name}: {}", doc["outcome"]);
    doc
}

fn counter(doc: &Value, name: &str) -> u64 {
    doc["vmstat"][name].as_u64().unwrap_or_else(|| panic!("no counter {name}"))
}

#[test]
fn every_scenario_has_a_test() {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("scenarios"))
        .expect("scenarios/ exists")
        .map(|entry| entry.expect("readable entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "demo.toml",
            "hdd-cluster.toml",
            "hibernate.toml",
            "jobs.toml",
            "lackey-hotcold.toml",
            "mglru.toml",
            "queue.toml",
            "seq-thrash.toml",
            "swapoff.toml",
            "two-devices.toml",
            "zipf-memcg.toml",
            "zswap.toml"
        ]
    );
}

/// The scenarios shaped like the validation machine run on what was validated there: the
/// `this-vm` device preset and the CPU costs fitted to its timings (`CpuCosts::this_vm`,
/// which the scenario files spell out and this test keeps them equal to). The job queue
/// uses them too, on four CPUs for `-j 4`.
#[test]
fn scenarios_of_the_validation_machine_use_its_validated_disk_and_cpu_costs() {
    let this_vm = serde_json::to_value(swapsim_core::config::CpuCosts::this_vm()).expect("serialisable");
    let scenarios = [
        ("demo.toml", 1),
        ("seq-thrash.toml", 1),
        ("swapoff.toml", 1),
        ("zipf-memcg.toml", 1),
        ("jobs.toml", 4),
        ("zswap.toml", 1),
        ("mglru.toml", 1),
    ];
    for (name, cpus) in scenarios {
        // One event is enough to see the resolved scenario.
        let doc = parse(&run_json(&in_repo(&format!("scenarios/{name}")), &["--set", "limits.max_events=1"]));
        let scenario = &doc["scenario"];
        assert_eq!(scenario["machine"]["cpus"], cpus, "{name}: the validation cases ran on one CPU");
        for device in scenario["swap"]["devices"].as_array().expect("devices") {
            assert_eq!(device["model"]["name"], "this-vm", "{name}");
        }
        assert_eq!(scenario["cpu"], this_vm, "{name}: [cpu] differs from CpuCosts::this_vm");
    }
}

/// The hibernation scenario, scaled down: the default image target leaves 2/5 of RAM, the
/// rest goes to swap first; the image is not swap I/O; resume reads it back.
#[test]
fn hibernate_after_opportunistic_reclaim_writes_a_small_image_and_release_pulls_pages_back() {
    let small = ["machine.memory=256MiB", "swap.devices.0.size=512MiB", "workload.generator.region=54MiB"];
    let doc = run("hibernate.toml", &small);
    let ops = doc["operations"].as_array().expect("operations");
    let names: Vec<&str> = ops.iter().map(|o| o["op"].as_str().expect("op")).collect();
    assert_eq!(names, ["mm-reclaim-run", "hibernate", "resume", "mm-reclaim-release"]);
    assert!(ops.iter().all(|o| o["result"] == "completed"), "{ops:?}");
    let (run_op, hib, res, release) = (&ops[0], &ops[1], &ops[2], &ops[3]);
    // The reclaim stops at its 2 s timeout, having freed most of the 85% written.
    assert_eq!(run_op["stopped_by"], "timeout");
    assert_eq!(run_op["duration_s"], 2.0);
    let reclaimed = run_op["reclaimed_pages"].as_u64().unwrap();
    assert!(reclaimed > 54 * 256 * 4 / 2, "{run_op}");
    // What is left fits under the default image_size: hibernation reclaims nothing more.
    let h = &hib["hibernation"];
    assert_eq!(h["target_pages"].as_u64().unwrap(), 256 * 256 * 2 / 5);
    assert!(h["image_pages"].as_u64().unwrap() <= h["target_pages"].as_u64().unwrap());
    assert_eq!((hib["pswpout"].as_u64(), h["reclaimed_pages"].as_u64()), (Some(0), Some(0)));
    // Resume reads the image, which is not swap-in, after the 3 s boot.
    assert_eq!(res["pswpin"], 0);
    assert_eq!(
        res["block"]["reads"]["completed_kib"].as_u64().unwrap(),
        h["image_slots"].as_u64().unwrap() * 4
    );
    assert!(res["duration_s"].as_f64().unwrap() > 3.0, "the boot alone takes 3 s");
    // Release brings back the pages asked for, reading them as swap-ins, but for those
    // still in the swap cache (the four tasks' pages interleave in the swap area, so
    // readahead of one brings others in).
    assert_eq!(release["released_pages"], 20000);
    let read = release["pswpin"].as_u64().unwrap();
    assert!((18_000..=20_000 + release["swap_ra"].as_u64().unwrap()).contains(&read), "{release}");
}

#[test]
fn demo_swaps_with_cluster_readahead() {
    let doc = run("demo.toml", &[]);
    assert_eq!(doc["scenario"]["swap"]["readahead_resolved"], "cluster", "this-vm reports rotational");
    assert!(counter(&doc, "pswpout") > 0 && counter(&doc, "pgmajfault") > 0);
}

#[test]
fn zipf_over_three_times_the_limit_swaps() {
    let doc = run(
        "zipf-memcg.toml",
        &["memcg.limit=8MiB", "workload.generator.region=24MiB", "workload.generator.passes=1"],
    );
    assert_eq!(doc["scenario"]["workload"]["generator"]["pattern"], "zipf");
    let pages = 24 * 256;
    assert!(counter(&doc, "pswpout") >= pages - 8 * 256, "the fill alone must push out the excess");
    assert!(counter(&doc, "pgmajfault") > 0);
    // A skewed pattern keeps its hot pages resident: far fewer faults than accesses.
    assert!(counter(&doc, "pgmajfault") < pages);
}

#[test]
fn sequential_thrash_faults_on_every_page_and_readahead_helps() {
    let doc = run(
        "seq-thrash.toml",
        &["memcg.limit=4MiB", "workload.generator.region=8MiB", "workload.generator.passes=2"],
    );
    let pages = 8 * 256;
    // Every page of every pass was evicted before it came round again: it is brought back
    // either by a major fault or by readahead.
    assert!(counter(&doc, "pswpin") >= 2 * pages - 4 * 256, "pswpin {}", counter(&doc, "pswpin"));
    assert!(counter(&doc, "swap_ra_hit") > 0, "sequential access must use readahead pages");
    assert!(counter(&doc, "pgmajfault") < counter(&doc, "pswpin"), "readahead saves major faults");
}

#[test]
fn hdd_uses_cluster_readahead_and_pays_for_seeks() {
    // Shrunk for speed, the group gets a little page cache: an anonymous-only process in a
    // fresh 4 MiB group can otherwise thrash into the OOM killer before the first statistics
    // flush, as the kernel's reclaim does (see crates/sim-core/src/engine/charge.rs).
    let doc = run(
        "hdd-cluster.toml",
        &["memcg.limit=4MiB", "memcg.page_cache=256KiB", "workload.generator.region=8MiB"],
    );
    assert_eq!(doc["scenario"]["swap"]["readahead"], "kernel");
    assert_eq!(doc["scenario"]["swap"]["readahead_resolved"], "cluster");
    assert_eq!(doc["block"][0]["model"], "hdd");
    assert!(counter(&doc, "pgmajfault") > 0);
    let p50 = doc["fault_latency"]["major"]["p50_us"].as_f64().unwrap();
    assert!(p50 > 1000.0, "a major fault on a disk takes milliseconds, got {p50} µs");
}

#[test]
fn equal_priorities_share_swap_out_between_devices() {
    let doc = run("two-devices.toml", &["memcg.limit=4MiB", "workload.generator.region=12MiB"]);
    let writes: Vec<u64> =
        doc["block"].as_array().unwrap().iter().map(|b| b["writes"]["queued"].as_u64().unwrap()).collect();
    assert_eq!(writes.len(), 2);
    assert!(writes.iter().all(|&w| w > 0), "both devices take swap-out: {writes:?}");
    let (lo, hi) = (writes[0].min(writes[1]), writes[0].max(writes[1]));
    assert!(hi <= 2 * lo, "round robin keeps them within a factor of two: {writes:?}");
    // With different priorities only the higher one is used while it has room.
    let doc = run(
        "two-devices.toml",
        &["memcg.limit=4MiB", "workload.generator.region=12MiB", "swap.devices.1.priority=1"],
    );
    assert_eq!(doc["block"][1]["writes"]["queued"], 0);
}

/// A zipf workload over a region 2–4x the memcg limit swaps, its counters agree with each
/// other, and raising page_cluster raises swap_ra and lowers the read dispatches per MiB
/// read.
#[test]
fn zipf_swaps_and_page_cluster_trades_dispatches_for_readahead() {
    let shrink = ["memcg.limit=8MiB", "workload.generator.region=24MiB", "workload.generator.passes=2"];
    let at = |pc: &str| {
        let mut sets = shrink.to_vec();
        sets.push(pc);
        run("zipf-memcg.toml", &sets)
    };
    let pc0 = at("swap.page_cluster=0");
    let pc3 = at("swap.page_cluster=3");
    let per_mib = |doc: &Value| {
        let reads = &doc["block"][0]["reads"];
        let dispatches = reads["dispatches"].as_f64().expect("dispatches");
        let mib = reads["completed_kib"].as_f64().expect("completed_kib") / 1024.0;
        dispatches / mib
    };
    for doc in [&pc0, &pc3] {
        let (pswpin, majfault) = (counter(doc, "pswpin"), counter(doc, "pgmajfault"));
        assert!(counter(doc, "pswpout") > 0 && pswpin > 0 && majfault > 0);
        // Every page read from swap is counted once: the faulting page or a readahead page.
        assert!(majfault <= pswpin);
        assert_eq!(pswpin, majfault + counter(doc, "swap_ra"));
        assert_eq!(doc["block"][0]["reads"]["queued"].as_u64(), Some(pswpin));
    }
    assert_eq!(counter(&pc0, "swap_ra"), 0, "page_cluster 0 disables readahead");
    assert!(counter(&pc3, "swap_ra") > 0);
    assert!(per_mib(&pc3) < per_mib(&pc0), "pc3 {} vs pc0 {} dispatches/MiB", per_mib(&pc3), per_mib(&pc0));
}

/// Swapoff brings every swapped page back (counted as pswpin, not as faults) and
/// empties the device; the timeline reports its duration and I/O.
#[test]
fn swapoff_empties_the_device_without_counting_faults() {
    let doc = run(
        "swapoff.toml",
        &["memcg.limit=8MiB", "workload.generator.region=48MiB", "swap.devices.0.size=128MiB"],
    );
    let ops = doc["operations"].as_array().expect("operations");
    assert_eq!(ops.len(), 2);
    assert_eq!(ops[0]["op"], "set-memcg-limit");
    let swapoff = &ops[1];
    assert_eq!(swapoff["op"], "swapoff");
    assert_eq!(swapoff["result"], "completed");
    assert!(swapoff["duration_s"].as_f64().expect("finished") > 0.0);
    // Pages written during the fill come back, except those still in the swap cache.
    let swapped_in = swapoff["pswpin"].as_u64().expect("pswpin");
    assert!(swapped_in > 0 && swapped_in <= counter(&doc, "pswpout"));
    assert_eq!(swapped_in, counter(&doc, "pswpin"), "all reads happened during swapoff");
    assert_eq!(counter(&doc, "pgmajfault"), 0, "swapoff is not a fault");
    assert_eq!(doc["at_end"]["swap_pages"], 0);
    assert_eq!(doc["at_end"]["swap_slots_used"], 0);
    assert_eq!(doc["at_end"]["rss_pages"], 48 * 256);
    // The 6.18 default credits no readahead hits during swapoff.
    assert_eq!(swapoff["swap_ra_hit"], 0);
    assert!(swapoff["swap_ra"].as_u64().expect("swap_ra") > 0);
}

/// The job queue, shrunk to 12 jobs of a few MiB under an 8 MiB limit: four run at a time
/// (never more), each starts and exits, the queue swaps, every exit released its memory,
/// and the report's jobs summary spans the queue; the table shows it in one line, and the
/// same seed gives the same document.
#[test]
fn jobs_run_four_at_a_time_and_release_their_memory_at_exit() {
    let shrink = [
        "workload.jobs.jobs=12",
        "workload.jobs.size_median=4MiB",
        "workload.jobs.link_size_median=16MiB",
        "memcg.limit=8MiB",
    ];
    let doc = run("jobs.toml", &shrink);
    assert_eq!(doc["scenario"]["workload"]["jobs"]["concurrency"], 4);
    let jobs = &doc["jobs"];
    assert_eq!(
        (jobs["jobs"].as_u64(), jobs["started"].as_u64(), jobs["exited"].as_u64()),
        (Some(12), Some(12), Some(12))
    );
    assert!(counter(&doc, "pswpout") > 0 && counter(&doc, "pgmajfault") > 0, "the queue swaps");
    let tasks = doc["tasks"].as_array().expect("tasks");
    let span = |t: &Value| (t["start_s"].as_f64().expect("started"), t["end_s"].as_f64().expect("ended"));
    for task in tasks {
        assert_eq!(task["exited"], true, "{task}");
        let (start, _) = span(task);
        let running = tasks.iter().map(span).filter(|&(s, e)| s <= start && e > start).count();
        assert!(running <= 4, "{running} jobs running at {start} s");
    }
    let first_start = tasks.iter().map(|t| span(t).0).fold(f64::INFINITY, f64::min);
    let last_end = tasks.iter().map(|t| span(t).1).fold(0.0, f64::max);
    assert!((jobs["wall_s"].as_f64().expect("wall") - (last_end - first_start)).abs() < 1e-9);
    // Every page was unmapped at exit; only folios that I/O held at an exit may remain,
    // in the swap cache.
    let at_end = &doc["at_end"];
    assert_eq!((at_end["rss_pages"].as_u64(), at_end["swap_pages"].as_u64()), (Some(0), Some(0)));
    assert_eq!(at_end["memcg_usage_pages"], at_end["nr_swapcached"]);
    let path = in_repo("scenarios/jobs.toml");
    let mut extra = Vec::new();
    for set in shrink {
        extra.extend(["--set", set]);
    }
    let text = ok(&[&["run", path.as_str()], extra.as_slice()].concat());
    assert!(text.contains("workload: 12 jobs, -j 4, sizes median 4MiB (links 16MiB, 2 %)"), "{text}");
    assert!(text.contains("jobs             12 of 12 started, 12 exited, wall "), "{text}");
    assert_eq!(without_host(&run_json(&path, &extra)), without_host(&run_json(&path, &extra)));
}

#[test]
fn zswap_fills_its_one_percent_pool_and_writes_the_oldest_back() {
    // Shrunk four times over: the pool limit (1 % of RAM) scales with the machine.
    let small = ["machine.memory=6GiB", "memcg.limit=64MiB", "workload.generator.region=256MiB"];
    let doc = run("zswap.toml", &small);
    let zswap = &doc["zswap"];
    assert_eq!(zswap["protection"], "second-chance");
    let (zswpout, zswpwb) = (counter(&doc, "zswpout"), counter(&doc, "zswpwb"));
    assert!(zswpout > 20_000 && zswpwb > 1_000, "zswpout {zswpout}, zswpwb {zswpwb}");
    // Written back pages reach the disk; so do pages refused while the pool was full.
    assert!(counter(&doc, "pswpout") >= zswpwb);
    assert!(zswap["pool_limit_hit"].as_u64().expect("pool_limit_hit") > 0);
    // The pool ends near its limit: 1 % of 6 GiB.
    let pool = zswap["pool_total_size"].as_u64().expect("pool_total_size");
    assert!(pool <= (6u64 << 30) / 100 + (1 << 20), "pool {pool}");
    // Without zswap the same run reads every swapped page from the disk.
    let mut off_sets = small.to_vec();
    off_sets.push("zswap.enabled=false");
    let off = run("zswap.toml", &off_sets);
    assert!(off["zswap"].is_null());
    assert!(counter(&off, "pswpin") > counter(&doc, "pswpin"));
}

/// MGLRU, shrunk to an 8 MiB limit over a 24 MiB region: reclaim swaps through the
/// generations, aging walked the page tables and opened new generations, and the report's
/// histogram keeps between two and four generations (`MIN_NR_GENS..=MAX_NR_GENS`) that
/// hold every anonymous page on the LRU at the end, and nothing else.
#[test]
fn mglru_ages_generations_and_evicts_from_the_oldest() {
    let doc = run("mglru.toml", &["memcg.limit=8MiB", "workload.generator.region=24MiB"]);
    assert_eq!(doc["scenario"]["lru"], "mglru");
    assert!(counter(&doc, "pswpout") > 0 && counter(&doc, "pgmajfault") > 0, "the run swaps");
    let gens = &doc["lru_gen"];
    let generations = gens["generations"].as_array().expect("lru_gen.generations");
    assert!((2..=4).contains(&generations.len()), "{} generations: {gens}", generations.len());
    let (min_seq, max_seq) = (gens["min_seq"].as_u64().unwrap(), gens["max_seq"].as_u64().unwrap());
    assert_eq!(max_seq - min_seq + 1, generations.len() as u64, "{gens}");
    let seqs: Vec<u64> = generations.iter().map(|g| g["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (min_seq..=max_seq).collect::<Vec<_>>(), "oldest first");
    let aging = &gens["aging"];
    let runs = aging["runs"].as_u64().expect("aging.runs");
    assert!(runs > 0 && max_seq >= runs, "aging opened generations: {aging}");
    assert!(aging["ptes_walked"].as_u64().expect("ptes_walked") > 0, "enabled = 0x0007 walks: {aging}");
    let in_histogram: u64 = generations.iter().map(|g| g["anon_pages"].as_u64().unwrap()).sum();
    let at_end = &doc["at_end"];
    let on_lru = at_end["nr_active_anon"].as_u64().unwrap() + at_end["nr_inactive_anon"].as_u64().unwrap();
    assert_eq!(in_histogram, on_lru, "{gens}");
    assert!(in_histogram > 0 && in_histogram <= 8 * 256, "the limit bounds the LRU: {in_histogram}");
}

/// The bundled lackey capture of a program twice the size of its scenario's limit swaps: its
/// cold pages go out and come back on every pass, and every one of its accesses is replayed.
#[test]
fn lackey_capture_swaps_under_its_limit() {
    let doc = run("lackey-hotcold.toml", &[]);
    assert_eq!(doc["accesses"].as_u64(), Some(417_070));
    // 16 MiB against an 8 MiB limit: at least the region's cold half leaves and comes back
    // on each of the six passes after the fill.
    assert!(counter(&doc, "pswpout") > 3 * 2048, "{}", doc["vmstat"]);
    assert!(counter(&doc, "pswpin") > 3 * 2048, "{}", doc["vmstat"]);
}
