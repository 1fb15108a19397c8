//! `[workload.queue]`: a queue of traces, each replayed as a process of its own, `-j N`.

use crate::support::*;
use std::path::PathBuf;

/// A scenario file in a scratch directory of its own, with `traces/queue/` of the
/// repository reachable as `queue/`.
fn scenario_with(name: &str, queue: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("queue-tests").join(name);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let text = format!(
        "seed = 1\n[memcg]\nlimit = \"16MiB\"\n[[swap.devices]]\nname = \"vda\"\nsize = \"1GiB\"\n\
         [workload]\n{queue}\n"
    );
    let path = dir.join("scenario.toml");
    std::fs::write(&path, text).expect("scenario written");
    path.display().to_string()
}

fn queue_dir() -> String {
    in_repo("traces/queue")
}

#[test]
fn the_bundled_queue_runs_every_job_to_its_exit() {
    let doc = parse(&run_json(&in_repo("scenarios/queue.toml"), &[]));
    assert_eq!(doc["outcome"]["kind"], "completed");
    let jobs = &doc["jobs"];
    assert_eq!(jobs["jobs"], 8);
    assert_eq!(jobs["exited"], 8);
    let per_job = jobs["per_job"].as_array().expect("per-job figures");
    let names: Vec<&str> = per_job.iter().map(|j| j["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "a glob's jobs start in the order of their names");
    // -j3: the first three start together after the launcher's delay; the fourth when
    // the first of them exits, a delay later.
    let start = |j: usize| per_job[j]["start_s"].as_f64().unwrap();
    let end = |j: usize| per_job[j]["end_s"].as_f64().unwrap();
    assert!((start(0) - 0.0185).abs() < 1e-9 && start(1) == start(0) && start(2) == start(0));
    let first_exit = (0..3).map(end).fold(f64::INFINITY, f64::min);
    assert!((start(3) - (first_exit + 0.0185)).abs() < 1e-6, "{} vs {first_exit}", start(3));
    let makespan = (0..8).map(end).fold(0.0, f64::max);
    assert!((jobs["makespan_s"].as_f64().unwrap() - makespan).abs() < 1e-9);
    // The memory cgroup is smaller than the jobs running together: they swap, and each
    // job's faults and swap-ins add up to the machine's.
    let sum = |key: &str| per_job.iter().map(|j| j[key].as_u64().unwrap()).sum::<u64>();
    assert!(doc["vmstat"]["pswpin"].as_u64().unwrap() > 0);
    assert_eq!(sum("faults"), doc["vmstat"]["pgfault"].as_u64().unwrap());
    assert_eq!(sum("major_faults"), doc["vmstat"]["pgmajfault"].as_u64().unwrap());
    assert_eq!(doc["scenario"]["workload"]["queue"]["concurrency"], 3);
}

#[test]
fn the_table_lists_each_job() {
    let table = ok(&["run", &in_repo("scenarios/queue.toml")]);
    assert!(table.contains("workload: queue of 8 traces, -j 3"), "{table}");
    assert!(table.contains("05-seq-8M-p3.trace.zst"), "{table}");
    assert_eq!(table.matches("  exited").count(), 8, "{table}");
}

#[test]
fn seeds_of_a_queue_sweep_alike_whatever_the_thread_count() {
    let scenario = in_repo("scenarios/queue.toml");
    let sweep = |jobs: &str| {
        ok(&[
            "sweep",
            &scenario,
            "--vary",
            "workload.queue.concurrency=2,3",
            "--seeds",
            "2",
            "--format",
            "json",
            "--jobs",
            jobs,
        ])
    };
    let (one, three) = (sweep("1"), sweep("3"));
    assert_eq!(without_host(&one), without_host(&three));
    let doc = parse(&one);
    let wall = |v: usize| doc["variants"][v]["runs"][0]["report"]["jobs"]["makespan_s"].as_f64().unwrap();
    assert_ne!(wall(0), wall(1), "the concurrency reached the runs");
}

#[test]
fn a_list_gives_each_job_its_own_delay() {
    let dir = queue_dir();
    let scenario = scenario_with(
        "list",
        &format!(
            "[workload.queue]\nconcurrency = 1\ndelay = \"1ms\"\njobs = [\"{dir}/05-seq-8M-p3.trace.zst\", \
             {{ trace = \"{dir}/01-zipf-12M-p2.trace.zst\", delay = \"40ms\" }}]"
        ),
    );
    let doc = parse(&run_json(&scenario, &[]));
    let per_job = doc["jobs"]["per_job"].as_array().expect("per-job figures");
    assert_eq!(per_job.len(), 2);
    assert!((per_job[0]["start_s"].as_f64().unwrap() - 0.001).abs() < 1e-9);
    let gap = per_job[1]["start_s"].as_f64().unwrap() - per_job[0]["end_s"].as_f64().unwrap();
    assert!((gap - 0.040).abs() < 1e-6, "{gap}");
}

#[test]
fn bad_queues_are_refused_with_the_field_named() {
    let dir = queue_dir();
    let cases = [
        ("no-match", "[workload.queue]\nconcurrency = 2\ntraces = \"nothing/*.zst\"".to_string(), "matches no file"),
        (
            "both",
            format!("[workload.queue]\nconcurrency = 2\ntraces = \"{dir}/*.zst\"\njobs = [\"{dir}/05-seq-8M-p3.trace.zst\"]"),
            "give jobs or traces, not both",
        ),
        ("none", "[workload.queue]\nconcurrency = 2".to_string(), "no jobs"),
        (
            "zero",
            format!("[workload.queue]\nconcurrency = 0\ntraces = \"{dir}/*.zst\""),
            "workload.queue.concurrency: 0 is outside 1..=1024",
        ),
        (
            "delay",
            format!("[workload.queue]\nconcurrency = 1\njobs = [{{ trace = \"{dir}/05-seq-8M-p3.trace.zst\", delay = \"soon\" }}]"),
            "workload.queue.jobs[0].delay",
        ),
        (
            "missing",
            "[workload.queue]\nconcurrency = 1\njobs = [\"no-such.trace\"]".to_string(),
            "no-such.trace",
        ),
        (
            "two-processes",
            format!(
                "[workload.queue]\nconcurrency = 1\njobs = [\"{}\"]",
                in_repo("traces/capture-rand-2proc-limit32M.perf.zst")
            ),
            "a queue job is one process",
        ),
        (
            "with-trace",
            format!("trace = \"{dir}/05-seq-8M-p3.trace.zst\"\n[workload.queue]\nconcurrency = 1\ntraces = \"{dir}/*.zst\""),
            "not trace and [workload.queue]",
        ),
    ];
    for (name, queue, expected) in cases {
        let err = fails(&["run", &scenario_with(name, &queue)]);
        assert!(err.contains(expected), "{name}: {err}");
    }
    let err = fails(&["run", &in_repo("scenarios/queue.toml"), "--repeat", "2"]);
    assert!(err.contains("--repeat: does not apply to a queue of traces"), "{err}");
}
