//! Report output: one JSON document, or a readable table.
//!
//! The JSON document is the library's [`RunDocument`], the report of record: crate
//! version, seed, the resolved scenario, every [`SimReport`] field, and last a `host`
//! object with the wall-clock figures. Only `host` depends on the machine the simulator
//! ran on, so two runs of the same scenario and seed produce documents that are
//! byte-identical once `host` is removed.
//!
//! The table is for people: a one-line configuration summary, how the run ended (never
//! "completed" when the simulated system failed), a job queue's starts, exits and wall
//! time, the timeline's operations, the vmstat counters, a blkparse-style block per device
//! and the fault latency percentiles.

use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use swapsim::{
    ResolvedScenario, ResolvedWorkload, RunDocument, RunStatus, TimelineEntry, TimelineOp, TraceReport,
};
use swapsim_core::report::{JobsReport, LruGenReport, Outcome};
use swapsim_core::stats::{BlockStats, DirStats, LatencySummary, Vmstat};
use swapsim_core::SimReport;
use swapsim_core::{OpReport, OpResult};

/// Prints `value` as pretty JSON followed by a newline.
pub(crate) fn write_json(out: &mut impl Write, value: &impl Serialize) -> Result<()> {
    // Serialised first and written in one go, so that a closed pipe surfaces as the
    // `io::Error` that `main` recognises rather than wrapped in a serde error.
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    out.write_all(&bytes)?;
    Ok(())
}

/// The one-line configuration summary printed at the top of a table, e.g.
/// `seed 1 · 24GiB RAM · memcg 256MiB · swap vda 2GiB virtio · page-cluster 3 · readahead cluster (kernel)`.
pub(crate) fn summary_line(seed: u64, scenario: &ResolvedScenario) -> String {
    let memcg = match scenario.memcg.limit {
        Some(limit) => format!("memcg {limit}"),
        None => "memcg unlimited".to_string(),
    };
    let swap = if scenario.swap.devices.is_empty() {
        "no swap".to_string()
    } else {
        let devices: Vec<String> = scenario
            .swap
            .devices
            .iter()
            .map(|d| {
                let priority = d.priority.map(|p| format!(" prio {p}")).unwrap_or_default();
                format!("{} {} {}{priority}", d.name, d.size, d.model.name)
            })
            .collect();
        format!("swap {}", devices.join(", "))
    };
    let readahead = if scenario.swap.readahead == scenario.swap.readahead_resolved {
        scenario.swap.readahead.name().to_string()
    } else {
        format!("{} ({})", scenario.swap.readahead_resolved.name(), scenario.swap.readahead.name())
    };
    format!(
        "seed {seed} · {} RAM · {memcg} · {swap} · page-cluster {} · readahead {readahead}",
        scenario.machine.memory, scenario.swap.page_cluster
    )
}

/// `run --format csv`: the document's figures, the resolved scenario and `host` left out,
/// as one header line of dotted paths and one row.
pub(crate) fn write_csv_row(out: &mut impl Write, doc: &impl Serialize) -> Result<()> {
    fn flatten(prefix: &str, value: &serde_json::Value, cells: &mut Vec<(String, String)>) {
        let key = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    flatten(&key(k), v, cells);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    flatten(&key(&i.to_string()), v, cells);
                }
            }
            serde_json::Value::Null => cells.push((prefix.to_string(), String::new())),
            serde_json::Value::String(s) => cells.push((prefix.to_string(), s.clone())),
            other => cells.push((prefix.to_string(), other.to_string())),
        }
    }
    let mut value = serde_json::to_value(doc)?;
    if let Some(map) = value.as_object_mut() {
        map.remove("scenario");
        map.remove("host");
        // A sampled run's series has rows of its own: `--series-out`.
        map.remove("series");
    }
    let mut cells = Vec::new();
    flatten("", &value, &mut cells);
    let header: Vec<String> = cells.iter().map(|(k, _)| csv_field(k)).collect();
    let row: Vec<String> = cells.iter().map(|(_, v)| csv_field(v)).collect();
    let text = format!("{}\n{}\n", header.join(","), row.join(","));
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// Which LRU, zswap setting and large-folio sizes ran.
pub(crate) fn policy_line(scenario: &ResolvedScenario) -> String {
    let z = &scenario.zswap;
    let zswap = if z.enabled {
        let pct = |p: Option<u32>| p.map(|p| format!("{p}%")).unwrap_or_else(|| "default".into());
        format!(
            "zswap {}, pool {}, accept {}, shrinker {}, {}, writeback {}",
            z.compressor.name(),
            pct(z.max_pool_percent),
            pct(z.accept_threshold_percent),
            if z.shrinker_enabled { "on" } else { "off" },
            z.protection.name(),
            z.writeback.name()
        )
    } else if z.ever_enabled {
        "zswap off (enabled earlier in the boot)".to_string()
    } else {
        "zswap off".to_string()
    };
    let sizes: Vec<&str> = scenario
        .thp
        .hugepages
        .iter()
        .filter(|(_, e)| **e == swapsim_core::thp::ThpSizeEnabled::Always)
        .map(|(size, _)| size.as_str())
        .collect();
    let thp = if sizes.is_empty() {
        "no mTHP size always".to_string()
    } else {
        format!("mTHP {} always, swap-in {}", sizes.join(" "), scenario.thp.swapin.name())
    };
    format!("lru {} · {zswap} · {thp}", swapsim::validate::lru_name(scenario.lru))
}

/// A short description of the workload.
pub(crate) fn workload_line(workload: &ResolvedWorkload) -> String {
    if let Some(jobs) = &workload.jobs {
        return format!(
            "workload: {} jobs, -j {}, sizes median {} (links {}, {:.0} %)",
            jobs.jobs,
            jobs.concurrency,
            jobs.size_median,
            jobs.link_size_median,
            jobs.link_fraction * 100.0
        );
    }
    if let Some(queue) = &workload.queue {
        let traces = if queue.jobs.len() == 1 { "trace" } else { "traces" };
        return format!("workload: queue of {} {traces}, -j {}", queue.jobs.len(), queue.concurrency);
    }
    match (&workload.trace, &workload.generator) {
        (Some(path), _) => {
            let mut line = format!("workload: trace {path}");
            if let Some(format) = workload.trace_format {
                line.push_str(&format!(" ({format})"));
            }
            if let Some(repeat) = workload.repeat {
                line.push_str(&format!(" × {repeat}"));
            }
            line
        }
        (None, Some(g)) => {
            let fill = if g.fill { "fill + " } else { "" };
            let tasks = if g.tasks > 1 { format!(" × {} tasks", g.tasks) } else { String::new() };
            format!("workload: {} over {}, {fill}{} passes{tasks}", g.pattern, g.region, g.passes)
        }
        (None, None) => "workload: none".to_string(),
    }
}

/// One line for the table report, e.g. `trace: perf, 1200 records, 2 tasks, skipped 3 (bad line 3)`.
pub(crate) fn trace_line(trace: &TraceReport) -> String {
    let n_tasks = trace.tasks.len();
    let tasks = if n_tasks == 1 { "task" } else { "tasks" };
    let mut line = format!("trace: {}, {} records, {n_tasks} {tasks}", trace.format, trace.records);
    if trace.repeat > 1 {
        line.push_str(&format!(", replayed {} times", trace.repeat));
    }
    line.push_str(&format!(", {}", skipped_text(&trace.skipped)));
    line
}

/// `skipped 0`, or `skipped 4 (bad line 3, other event 1)`.
pub(crate) fn skipped_text(skipped: &BTreeMap<String, u64>) -> String {
    let total: u64 = skipped.values().sum();
    if total == 0 {
        return "skipped 0".to_string();
    }
    let parts: Vec<String> = skipped.iter().map(|(reason, n)| format!("{reason} {n}")).collect();
    format!("skipped {total} ({})", parts.join(", "))
}

/// The job queue in one line: `200 of 200 started, 200 exited, wall 3.141593 s`, with the
/// OOM kills when there were any.
pub(crate) fn jobs_text(jobs: &JobsReport) -> String {
    let mut text = format!("{} of {} started, {} exited", jobs.started, jobs.jobs, jobs.exited);
    if jobs.oom_killed > 0 {
        text.push_str(&format!(", {} OOM-killed", jobs.oom_killed));
    }
    text.push_str(&format!(", wall {:.6} s, makespan {:.6} s", jobs.wall_s, jobs.makespan_s));
    text
}

/// Most jobs the table report lists one by one; a longer queue's jobs are in the JSON
/// report.
const JOBS_LISTED_MAX: usize = 50;

/// Each job's start, end, faults and swap-ins, one line per job.
fn write_jobs(t: &mut String, jobs: &JobsReport) -> Result<()> {
    if jobs.per_job.len() > JOBS_LISTED_MAX {
        writeln!(t, "per job: {} jobs, listed in the JSON report (--format json)", jobs.per_job.len())?;
        return Ok(());
    }
    let width = jobs.per_job.iter().map(|j| j.name.len()).max().unwrap_or(0).clamp(3, 48);
    writeln!(
        t,
        "{:<width$}  {:>10} {:>10} {:>9} {:>9} {:>9}  outcome",
        "job", "start s", "end s", "faults", "majflt", "swapins"
    )?;
    let time = |s: Option<f64>| s.map_or_else(|| "-".to_string(), |s| format!("{s:.4}"));
    for job in &jobs.per_job {
        let outcome = match (job.oom_killed, job.start_s, job.end_s) {
            (true, _, _) => "OOM-killed",
            (false, None, _) => "not started",
            (false, Some(_), None) => "running",
            (false, Some(_), Some(_)) => "exited",
        };
        writeln!(
            t,
            "{:<width$}  {:>10} {:>10} {:>9} {:>9} {:>9}  {outcome}",
            job.name,
            time(job.start_s),
            time(job.end_s),
            job.faults,
            job.major_faults,
            job.swapins
        )?;
    }
    Ok(())
}

/// Describes how a run ended.
pub(crate) fn outcome_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Completed => "completed".to_string(),
        Outcome::OomKilled { task, at_s } => format!("oom-killed task {task} at {at_s:.6} s"),
        Outcome::EventLimit => "stopped at the event limit".to_string(),
        Outcome::TimeLimit => "stopped at the simulated-time limit".to_string(),
        Outcome::Unfinished { tasks, reason } => {
            format!("unfinished: {tasks} tasks could not go on ({reason})")
        }
    }
}

/// How the run ended, failures first: "completed" only when nothing failed, e.g.
/// `failed: timeline[1] swapoff vda: out of memory (the workload ran to its end)`.
pub(crate) fn status_text(report: &SimReport, status: &RunStatus) -> String {
    if !status.failed() {
        return outcome_text(&report.outcome);
    }
    let failures: Vec<String> = status.failures().iter().map(ToString::to_string).collect();
    let mut text = format!("failed: {}", failures.join("; "));
    match &report.outcome {
        Outcome::Completed => text.push_str(" (the workload ran to its end)"),
        // The kill and an unfinished run are already among the failures.
        Outcome::OomKilled { .. } | Outcome::Unfinished { .. } => {}
        limit => text.push_str(&format!("; {}", outcome_text(limit))),
    }
    if report.vmstat.oom_kill > 1 {
        text.push_str(&format!("; {} OOM kills in all", report.vmstat.oom_kill));
    }
    text
}

/// Prints the readable report of one run.
pub(crate) fn write_table(
    out: &mut impl Write,
    scenario_name: &str,
    doc: &RunDocument<'_>,
    status: &RunStatus,
) -> Result<()> {
    let report = doc.report;
    let mut text = String::new();
    let t = &mut text;
    writeln!(t, "swapsim {} · {scenario_name}", doc.swapsim_version)?;
    writeln!(t, "{}", summary_line(doc.seed, doc.scenario))?;
    writeln!(t, "{}", policy_line(doc.scenario))?;
    writeln!(t, "{}", workload_line(&doc.scenario.workload))?;
    if let Some(trace) = doc.trace {
        writeln!(t, "{}", trace_line(trace))?;
    }
    writeln!(t)?;
    writeln!(t, "outcome          {}", status_text(report, status))?;
    writeln!(t, "simulated time   {:.6} s", report.sim_time_s)?;
    writeln!(t, "accesses         {}", report.accesses)?;
    writeln!(t, "events           {}", report.events)?;
    writeln!(t, "readahead ran    {}", report.readahead)?;
    let v = &report.vmstat;
    if v.pgscan_anon == 0 && v.pgscan_kswapd == 0 && v.pgscan_direct == 0 {
        writeln!(
            t,
            "note             nothing was ever reclaimed: the workload fit in memory, so every swap figure \
             is 0 (a lower memcg.limit makes it swap)"
        )?;
    }
    if let Some(jobs) = &report.jobs {
        writeln!(t, "jobs             {}", jobs_text(jobs))?;
    }
    if let (Some(series), Some(every)) = (&report.series, &doc.scenario.report) {
        let cut = if series.truncated { ", cut short: sample less often" } else { "" };
        writeln!(
            t,
            "series           {} samples every {}{cut} (in --format json, --series-out, --series-svg)",
            series.samples.len(),
            every.sample_every
        )?;
    }
    writeln!(t)?;
    if let Some(jobs) = report.jobs.as_ref().filter(|jobs| !jobs.per_job.is_empty()) {
        write_jobs(t, jobs)?;
        writeln!(t)?;
    }
    if !doc.scenario.timeline.is_empty() || !report.operations.is_empty() {
        write_timeline(t, &doc.scenario.timeline, &report.operations)?;
        writeln!(t)?;
    }
    write_vmstat(t, &report.vmstat)?;
    if let Some(z) = &report.zswap {
        writeln!(t)?;
        write_zswap(t, z)?;
    }
    write_mthp(t, report)?;
    if let Some(gens) = &report.lru_gen {
        writeln!(t)?;
        write_lru_gen(t, gens)?;
    }
    for device in &report.block {
        writeln!(t)?;
        write_block(t, device)?;
    }
    writeln!(t)?;
    write_fault_latency(t, report)?;
    if let Some(host) = doc.host {
        writeln!(t)?;
        writeln!(
            t,
            "host: {:.3} s wall, {:.0} accesses/s, {:.0} events/s",
            host.wall_s, host.accesses_per_s, host.events_per_s
        )?;
    }
    out.write_all(text.as_bytes())?;
    Ok(())
}

/// What a timeline entry does, in words: `swapoff vda`, `set-memcg-limit 4GiB`.
fn operation_text(entry: &TimelineEntry) -> String {
    match &entry.op {
        TimelineOp::Swapoff { device } => format!("swapoff {device}"),
        TimelineOp::Swapon { device } => format!("swapon {device}"),
        TimelineOp::SetPageCluster { page_cluster } => format!("set-page-cluster {page_cluster}"),
        TimelineOp::SetReadahead { readahead } => format!("set-readahead {}", readahead.name()),
        TimelineOp::SetVmaRa { vma_ra_enabled } => format!("set-vma-ra {vma_ra_enabled}"),
        TimelineOp::SetMemcgLimit { limit } => format!("set-memcg-limit {limit}"),
        TimelineOp::PauseTasks {} => "pause-tasks".to_string(),
        TimelineOp::ResumeTasks {} => "resume-tasks".to_string(),
        TimelineOp::SwapOutAll {} => "swap-out-all".to_string(),
        TimelineOp::Hibernate { image_size, compress, device } => {
            let mut text = "hibernate".to_string();
            if let Some(size) = image_size {
                text += &format!(" image_size={size}");
            }
            if *compress == Some(false) {
                text += " nocompress";
            }
            if let Some(device) = device {
                text += &format!(" {device}");
            }
            text
        }
        TimelineOp::Resume { boot } => match boot {
            Some(boot) => format!("resume boot={boot}"),
            None => "resume".to_string(),
        },
        TimelineOp::MmReclaimRun { pages, timeout } => match timeout {
            Some(timeout) => format!("mm-reclaim-run {pages} timeout={timeout}"),
            None => format!("mm-reclaim-run {pages}"),
        },
        TimelineOp::MmReclaimRelease { pages } => format!("mm-reclaim-release {pages}"),
        TimelineOp::Mark { label } => format!("mark \"{label}\""),
    }
}

/// How an operation ended: `ok`, `failed: why`, or that the run ended before it did.
fn operation_outcome(op: &OpReport) -> String {
    let mut outcome = match &op.result {
        OpResult::Completed => "ok".to_string(),
        OpResult::Running => "still running when the run ended".to_string(),
        OpResult::Failed(failed) if failed.starts_with("failed: ") => failed.to_string(),
        OpResult::Failed(why) => format!("failed: {why}"),
    };
    // What an mm-reclaim operation moved, and why it stopped.
    if let Some(pages) = op.reclaimed_pages {
        outcome += &format!(", {pages} pages reclaimed");
    }
    if let Some(pages) = op.released_pages {
        outcome += &format!(", {pages} pages released");
    }
    if let Some(why) = &op.stopped_by {
        outcome += &format!(" (stopped by {why})");
    }
    outcome
}

/// One row per timeline entry, in order: what it does, when it started (simulated
/// seconds), how long it took, the pages it swapped in and out, the read and write
/// requests completed meanwhile (on every device), and how it ended (with the pages an
/// mm-reclaim operation reclaimed or released). An entry the run never reached says so.
fn write_timeline(t: &mut String, entries: &[TimelineEntry], ops: &[OpReport]) -> Result<()> {
    writeln!(t, "timeline")?;
    let n_rows = entries.len().max(ops.len());
    let mut rows: Vec<[String; 8]> = Vec::with_capacity(n_rows);
    for idx in 0..n_rows {
        let what = match (entries.get(idx), ops.get(idx)) {
            (Some(entry), _) => operation_text(entry),
            (None, Some(op)) => [Some(op.op.as_str()), op.device.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" "),
            (None, None) => unreachable!("a row per entry or report"),
        };
        let row = match ops.get(idx) {
            Some(op) => [
                what,
                format!("{:.6}", op.start_s),
                op.duration_s.map(|d| format!("{d:.6}")).unwrap_or_else(|| "-".to_string()),
                op.pswpin.to_string(),
                op.pswpout.to_string(),
                op.read_requests.to_string(),
                op.write_requests.to_string(),
                operation_outcome(op),
            ],
            None => {
                let dash = || "-".to_string();
                [
                    what,
                    dash(),
                    dash(),
                    dash(),
                    dash(),
                    dash(),
                    dash(),
                    "not started: the run ended first".to_string(),
                ]
            }
        };
        rows.push(row);
    }
    let width = rows.iter().map(|row| row[0].chars().count()).chain(["operation".len()]).max().unwrap_or(0);
    writeln!(
        t,
        "  {:>3}  {:<width$}  {:>12}  {:>12}  {:>10}  {:>11}  {:>9}  {:>10}  outcome",
        "#", "operation", "start s", "duration s", "swapped in", "swapped out", "read reqs", "write reqs"
    )?;
    for (idx, row) in rows.iter().enumerate() {
        let [what, start, duration, pswpin, pswpout, reads, writes, outcome] = row;
        writeln!(
            t,
            "  {idx:>3}  {what:<width$}  {start:>12}  {duration:>12}  {pswpin:>10}  {pswpout:>11}  {reads:>9}  {writes:>10}  {outcome}"
        )?;
        // A hibernate or resume that got as far as the image: its figures, which are
        // block I/O but not swap I/O.
        if let Some(h) = ops.get(idx).and_then(|op| op.hibernation.as_ref()).filter(|h| h.image_slots > 0) {
            if ops[idx].op == "hibernate" {
                writeln!(
                    t,
                    "       shrink to {} pages: {} reclaimed in {:.3} s",
                    h.target_pages, h.reclaimed_pages, h.shrink_s
                )?;
            }
            let io = if ops[idx].op == "resume" { "boot and I/O" } else { "I/O" };
            writeln!(
                t,
                "       image of {} pages: {} bytes in {} slots on {}, {:.3} s of {io} ({:.3} s of CPU)",
                h.image_pages, h.image_bytes, h.image_slots, h.device, h.image_io_s, h.cpu_s
            )?;
        }
    }
    Ok(())
}

/// Counters always shown, in this order; any other nonzero counter follows them.
const MAIN_COUNTERS: &[&str] = &[
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "swap_ra",
    "swap_ra_hit",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_anon",
    "pgsteal_anon",
    "workingset_refault_anon",
    "workingset_activate_anon",
    "workingset_restore_anon",
];

/// The vmstat counters as (name, value) pairs in report order, read through serde so
/// that a counter added to the core shows up here without a change.
pub(crate) fn vmstat_pairs(vmstat: &Vmstat) -> Vec<(String, u64)> {
    let value = serde_json::to_value(vmstat).expect("vmstat serialises to a JSON object");
    let serde_json::Value::Object(map) = value else { unreachable!("vmstat is a struct") };
    let mut pairs: Vec<(String, u64)> =
        map.into_iter().map(|(name, v)| (name, v.as_u64().expect("vmstat counters are u64"))).collect();
    let rank = |name: &str| MAIN_COUNTERS.iter().position(|&m| m == name).unwrap_or(MAIN_COUNTERS.len());
    pairs.sort_by_key(|(name, _)| rank(name));
    pairs
}

/// zswap's pool at the end and its events, as its debugfs names them.
fn write_zswap(t: &mut String, z: &swapsim_core::zswap::ZswapReport) -> Result<()> {
    writeln!(t, "zswap ({} protection)", z.protection)?;
    for (name, value) in [
        ("pool_total_size", z.pool_total_size),
        ("stored_pages", z.stored_pages),
        ("stored_incompressible_pages", z.stored_incompressible_pages),
        ("written_back_pages", z.written_back_pages),
        ("pool_limit_hit", z.pool_limit_hit),
        ("reject_reclaim_fail", z.reject_reclaim_fail),
        ("reject_compress_poor", z.reject_compress_poor),
        ("reject_memcg_limit", z.reject_memcg_limit),
        ("memcg zswap bytes", z.memcg_zswap_bytes),
        ("shrink_worker_runs", z.shrink_worker_runs),
        ("shrinker_scanned", z.shrinker_scanned),
    ] {
        writeln!(t, "  {name:<28} {value:>12}")?;
    }
    Ok(())
}

fn write_vmstat(t: &mut String, vmstat: &Vmstat) -> Result<()> {
    writeln!(t, "vmstat")?;
    for (name, value) in vmstat_pairs(vmstat) {
        if MAIN_COUNTERS.contains(&name.as_str()) || value != 0 {
            writeln!(t, "  {name:<28} {value:>12}")?;
        }
    }
    Ok(())
}

/// Per mTHP size, its non-zero counters as `hugepages-<size>kB/stats` names them.
fn write_mthp(t: &mut String, report: &SimReport) -> Result<()> {
    for (size, stats) in &report.mthp {
        writeln!(t)?;
        writeln!(t, "mthp {size}")?;
        for (name, value) in stats.named() {
            if value != 0 {
                writeln!(t, "  {name:<28} {value:>12}")?;
            }
        }
    }
    Ok(())
}

/// MGLRU's generations and tiers, laid out like `/sys/kernel/debug/lru_gen_full`.
fn write_lru_gen(t: &mut String, g: &LruGenReport) -> Result<()> {
    writeln!(t, "lru_gen (anon; as /sys/kernel/debug/lru_gen_full)")?;
    writeln!(t, "  {:>10} {:>10} {:>12} {:>12}", "seq", "age_ms", "anon", "file")?;
    for gen in &g.generations {
        writeln!(t, "  {:>10} {:>10} {:>12} {:>12}", gen.seq, gen.age_ms, gen.anon_pages, gen.file_pages)?;
    }
    writeln!(
        t,
        "  {:>10} {:>12} {:>12} {:>12} {:>14} {:>12}",
        "tier", "refaulted", "evicted", "protected", "avg_refaulted", "avg_total"
    )?;
    for tier in &g.tiers {
        writeln!(
            t,
            "  {:>10} {:>12} {:>12} {:>12} {:>14} {:>12}",
            tier.tier, tier.refaulted, tier.evicted, tier.protected, tier.avg_refaulted, tier.avg_total
        )?;
    }
    let protected = match g.protected_tier_above as usize {
        n if n + 1 >= g.tiers.len() => "none".to_string(),
        n => format!("tiers above {n}"),
    };
    writeln!(t, "  protected now: {protected}")?;
    let a = &g.aging;
    writeln!(
        t,
        "  aging: {} generations opened, {} PTEs walked, {} young, {} folios promoted; {} look-arounds, {} folios activated",
        a.runs, a.ptes_walked, a.young_ptes, a.promoted, a.look_arounds, a.activated
    )?;
    Ok(())
}

fn write_block(t: &mut String, device: &BlockStats) -> Result<()> {
    let (r, w) = (&device.reads, &device.writes);
    writeln!(t, "block device {} ({})", device.device, device.model)?;
    let kib = |n: u64, kib: u64| format!("{n:>9}, {kib:>9}KiB");
    let plain = |n: u64| format!("{n:>9}");
    let row = |t: &mut String, left: &str, lval: String, right: &str, rval: String| {
        writeln!(t, "  {left:<17}{lval:<24}  {right:<18}{rval}")
    };
    row(t, "Reads Queued:", kib(r.queued, r.queued_kib), "Writes Queued:", kib(w.queued, w.queued_kib))?;
    row(t, "Read Dispatches:", plain(r.dispatches), "Write Dispatches:", plain(w.dispatches))?;
    row(t, "Read Merges:", plain(r.merges), "Write Merges:", plain(w.merges))?;
    row(
        t,
        "Reads Completed:",
        kib(r.completed, r.completed_kib),
        "Writes Completed:",
        kib(w.completed, w.completed_kib),
    )?;
    row(t, "IO unplugs:", plain(device.io_unplugs), "Timer unplugs:", plain(device.timer_unplugs))?;
    writeln!(t, "  reads per dispatch {}   writes per dispatch {}", per_dispatch(r), per_dispatch(w))?;
    let sizes: Vec<String> =
        device.request_kib_histogram.iter().map(|(kib, n)| format!("≤{kib}KiB {n}")).collect();
    writeln!(t, "  request sizes: {}", if sizes.is_empty() { "none".to_string() } else { sizes.join("  ") })?;
    let (rs, ws) = (&device.read_service, &device.write_service);
    writeln!(
        t,
        "  service time µs: read p50 {:.1} p99 {:.1}   write p50 {:.1} p99 {:.1}",
        rs.p50_us, rs.p99_us, ws.p50_us, ws.p99_us
    )?;
    Ok(())
}

/// Bios per dispatched request (the merge factor), or "-" when nothing was dispatched.
pub(crate) fn per_dispatch(dir: &DirStats) -> String {
    if dir.dispatches == 0 {
        "-".to_string()
    } else {
        format!("{:.2}", dir.queued as f64 / dir.dispatches as f64)
    }
}

fn write_fault_latency(t: &mut String, report: &SimReport) -> Result<()> {
    writeln!(t, "fault latency (µs)")?;
    writeln!(
        t,
        "  {:<12}{:>10}{:>11}{:>11}{:>11}{:>11}{:>11}{:>11}",
        "kind", "count", "mean", "p50", "p90", "p99", "p99.9", "max"
    )?;
    let lat = &report.fault_latency;
    let rows: [(&str, &LatencySummary); 3] =
        [("major", &lat.major), ("minor swap", &lat.minor_swap), ("anon", &lat.anon)];
    for (kind, s) in rows {
        writeln!(
            t,
            "  {kind:<12}{:>10}{:>11.1}{:>11.1}{:>11.1}{:>11.1}{:>11.1}{:>11.1}",
            s.count, s.mean_us, s.p50_us, s.p90_us, s.p99_us, s.p999_us, s.max_us
        )?;
    }
    Ok(())
}

/// Quotes a CSV field when it holds a separator, a quote or a line break (RFC 4180).
pub(crate) fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("cluster"), "cluster");
        assert_eq!(csv_field("{\"a\":1,\"b\":2}"), "\"{\"\"a\"\":1,\"\"b\"\":2}\"");
    }
}
