//! A probe's result written as a validation case: the format `swapsim-validation/1` that
//! validation/linux-6.18/README.md documents and `swapsim validate` reads, so that a case
//! measured on the user's own kernel is scored exactly as the bundled ones are.

use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;

use super::measure::{oom_killed, summarize};

/// One run of the workload on the kernel: its figures ([`super::measure::delta`]) and the
/// executor's times.
#[derive(Clone, Debug)]
pub struct Run {
    /// The run's figures, keyed `section.name`.
    pub figures: BTreeMap<String, f64>,
    /// End of the fill, seconds from the first access.
    pub fill_s: f64,
    /// End of the last access, seconds from the first.
    pub total_s: f64,
    /// A queue's jobs, in queue order: each one's start and end, seconds from the queue's
    /// start (empty for a single process).
    pub jobs: Vec<(f64, f64)>,
}

/// What a case says besides its measurements.
#[derive(Clone, Debug)]
pub struct CaseHead {
    /// The case's id, also its file name.
    pub id: String,
    /// `uname -r`.
    pub kernel: String,
    /// The date of the measurement, `YYYY-MM-DD`.
    pub measured_on: String,
    /// The case's `setup` (machine, memory cgroup, swap device, knobs).
    pub setup: Value,
    /// The case's `workload` (trace path relative to the case directory, pattern, sizes;
    /// for a queue, `queue` with its jobs).
    pub workload: Value,
    /// `live` (one process running a trace) or `jobs` (a queue of processes).
    pub kind: String,
}

/// The case document for `head` and its `runs`, in the order the format lists its members.
/// Figures are the median, least and largest over the runs whose workload completed, as
/// the bundled cases give them; runs the OOM killer ended are counted in `oom_kills` only.
pub fn case_document(head: &CaseHead, runs: &[Run]) -> Result<Value> {
    if head.id.is_empty() || head.id.contains('/') {
        bail!("case id {:?}: must be a non-empty file name", head.id);
    }
    let completed: Vec<&Run> = runs.iter().filter(|r| !oom_killed(&r.figures)).collect();
    if completed.is_empty() {
        bail!("case {}: none of its {} runs completed (every one was OOM-killed)", head.id, runs.len());
    }
    let figures: Vec<BTreeMap<String, f64>> = completed.iter().map(|r| r.figures.clone()).collect();
    let mut measured = summarize(&figures);
    let queue = head.kind == "jobs";
    let times: Vec<BTreeMap<String, f64>> = completed
        .iter()
        .map(|r| {
            let mut t = BTreeMap::from([("timing.total_s".to_string(), r.total_s)]);
            if !queue {
                t.insert("timing.fill_s".to_string(), r.fill_s);
                t.insert("timing.passes_s".to_string(), r.total_s - r.fill_s);
            }
            t
        })
        .collect();
    if let (Value::Object(m), Value::Object(t)) = (&mut measured, summarize(&times)) {
        m.extend(t);
        m.insert("repeats".into(), json!(completed.len()));
        if queue {
            m.insert("jobs_timing".into(), jobs_timing(&completed));
        }
        let killed = runs.len() - completed.len();
        m.insert(
            "oom_kills".into(),
            json!({
                "runs_started": runs.len(),
                "runs_oom_killed": killed,
                "note": if killed == 0 { "no OOM kill".to_string() } else {
                    format!("{killed} of {} runs ended by the memcg OOM killer; the figures come from the others", runs.len())
                },
            }),
        );
    }
    if !matches!(head.kind.as_str(), "live" | "jobs") {
        bail!("case {}: kind {:?} is not live or jobs", head.id, head.kind);
    }
    Ok(json!({
        "format": "swapsim-validation/1",
        "id": head.id,
        "kind": head.kind,
        "kernel": head.kernel,
        "measured_on": head.measured_on,
        "setup": head.setup,
        "workload": head.workload,
        "operations": [{ "op": if queue { "run_queue" } else { "run_trace" } }],
        "measured": measured,
    }))
}

/// Each job's median start and end over the runs, in queue order (`measured.jobs_timing`).
fn jobs_timing(runs: &[&Run]) -> Value {
    let n_jobs = runs.iter().map(|r| r.jobs.len()).min().unwrap_or(0);
    let median = |mut xs: Vec<f64>| crate::validate::median(&mut xs).unwrap_or(0.0);
    let list: Vec<Value> = (0..n_jobs)
        .map(|j| {
            json!({
                "job": j,
                "start_s": median(runs.iter().map(|r| r.jobs[j].0).collect()),
                "end_s": median(runs.iter().map(|r| r.jobs[j].1).collect()),
            })
        })
        .collect();
    Value::Array(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::testdir::TestDir;
    use std::path::Path;

    fn repo() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
    }

    /// The head of a small live case on a bundled trace: 16 MiB sequential, three passes,
    /// in an 8 MiB group on a swap file.
    fn head() -> CaseHead {
        CaseHead {
            id: "P-seq16M-probe".into(),
            kind: "live".into(),
            kernel: "6.18.0-test".into(),
            measured_on: "2026-11-27".into(),
            setup: json!({
                "cpus": 1, "kernel": "6.18.0", "machine_ram_bytes": 25276063744u64,
                "memcg_limit_bytes": 8u64 << 20, "memcg_version": 2, "mthp_always_kib": [],
                "page_cluster": 3, "swappiness": 60, "vma_ra_enabled": true,
                "swap": { "device": "swap file", "kind": "file", "rotational": true, "size_bytes": 1u64 << 30 },
                "zswap": { "enabled": false, "ever_enabled": false },
            }),
            workload: json!({
                "trace": "traces/wl-seq-16M-p3-w0.2-s205.trace.zst", "region_bytes": 16u64 << 20,
                "pattern": "seq", "passes": 3, "seed": 205, "write_fraction": 0.2,
                "page_contents": "random", "thp": "off",
            }),
        }
    }

    fn run(pswpin: f64, oom: bool) -> Run {
        let figures = BTreeMap::from([
            ("vmstat.pswpin".to_string(), pswpin),
            ("vmstat.pswpout".to_string(), pswpin + 2048.0),
            ("vmstat.pgmajfault".to_string(), pswpin / 8.0),
            ("memcg.oom_kill".to_string(), if oom { 1.0 } else { 0.0 }),
        ]);
        Run { figures, fill_s: 0.05, total_s: 0.25, jobs: Vec::new() }
    }

    #[test]
    fn runs_become_the_cases_figures_and_kills_are_counted_apart() {
        let doc = case_document(
            &head(),
            &[run(9000.0, false), run(1.0, true), run(9300.0, false), run(9100.0, false)],
        )
        .unwrap();
        assert_eq!(doc["format"], "swapsim-validation/1");
        assert_eq!(doc["measured"]["vmstat"]["pswpin"], json!({"median": 9100, "min": 9000, "max": 9300}));
        assert_eq!(doc["measured"]["repeats"], 3);
        assert_eq!(doc["measured"]["oom_kills"]["runs_oom_killed"], 1);
        assert_eq!(doc["measured"]["timing"]["passes_s"]["median"], 0.2);
        assert!(doc["measured"].get("memcg").is_none());
        let mut queue = head();
        queue.kind = "jobs".into();
        let mut runs = vec![run(9000.0, false), run(9300.0, false), run(9100.0, false)];
        for (i, r) in runs.iter_mut().enumerate() {
            r.jobs = vec![(0.0, 1.0 + i as f64), (0.5, 2.0)];
        }
        let doc = case_document(&queue, &runs).unwrap();
        assert_eq!(doc["operations"][0]["op"], "run_queue");
        assert_eq!(doc["measured"]["jobs_timing"][0], json!({"job": 0, "start_s": 0.0, "end_s": 2.0}));
        assert!(doc["measured"]["timing"].get("fill_s").is_none(), "a queue has no one fill");
        let err = case_document(&head(), &[run(1.0, true)]).unwrap_err().to_string();
        assert!(err.contains("none of its 1 runs completed"), "{err}");
    }

    /// A written case is one `swapsim validate` reads and scores like a bundled one.
    #[test]
    fn validate_scores_a_written_case() {
        let dir = TestDir::new("case");
        std::fs::create_dir_all(dir.path().join("cases")).unwrap();
        std::fs::create_dir_all(dir.path().join("traces")).unwrap();
        let trace = "traces/wl-seq-16M-p3-w0.2-s205.trace.zst";
        std::fs::copy(repo().join("validation/linux-6.18").join(trace), dir.path().join(trace)).unwrap();
        let doc =
            case_document(&head(), &[run(9000.0, false), run(9300.0, false), run(9100.0, false)]).unwrap();
        let text = serde_json::to_string_pretty(&doc).unwrap();
        std::fs::write(dir.path().join("cases/P-seq16M-probe.json"), text).unwrap();
        let v = crate::validate::run(dir.path(), &[]).unwrap();
        let case = &v.cases[0];
        assert_eq!(case.id, "P-seq16M-probe");
        assert_eq!(
            crate::validate::lookup(&case.real, "vmstat.pswpin").and_then(Value::as_f64),
            Some(9100.0)
        );
        assert!(
            crate::validate::lookup(&case.sim, "vmstat.pswpin").is_some_and(|v| v.as_f64().unwrap() > 0.0)
        );
    }
}
