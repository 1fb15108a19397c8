//! `swapsim validate` output: the cases with the kernel's OOM kills next to how the
//! simulated run ended, per case and figure the kernel's median and range, the simulated
//! value and the ratio, then the error per counter across cases, as a table or as the
//! Markdown of docs/validation.md. The Markdown also lays the classic LRU's replay of each
//! case next to MGLRU's; a replay under MGLRU is never presented as a validation.
//!
//! The comparison itself is the library's (`swapsim::validate`); this module only lays
//! it out for reading.

use anyhow::Result;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use swapsim::validate::{
    lookup, lru_name, CaseResult, CounterSummary, LruComparison, Validation, JOBS_END_S, SESSIONS,
    SWAP_IN_RATIO, ZRAM_BLOCK_FIGURES,
};
use swapsim_core::Outcome;

/// Flattens the compared figures of a case into (path, real, min, max, sim, ratio) rows.
fn rows(c: &CaseResult) -> Vec<(String, f64, Value, Value, f64, Value)> {
    fn walk(
        prefix: &str,
        real: &Value,
        c: &CaseResult,
        out: &mut Vec<(String, f64, Value, Value, f64, Value)>,
    ) {
        if let Value::Object(m) = real {
            for (k, v) in m {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                if let Some(x) = v.as_f64() {
                    let get = |tree: &Value| lookup(tree, &path).cloned().unwrap_or(Value::Null);
                    let sim = get(&c.sim).as_f64().unwrap_or(f64::NAN);
                    out.push((path.clone(), x, get(&c.real_min), get(&c.real_max), sim, get(&c.ratio)));
                } else {
                    walk(&path, v, c, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk("", &c.real, c, &mut out);
    out
}

fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.3}")
    }
}

/// The kernel's OOM kills of a case: "0 of 3 runs", or "not recorded".
fn kernel_oom_cell(c: &CaseResult) -> String {
    match &c.kernel_oom_kills {
        Some(k) => format!("{} of {} runs", k.runs_oom_killed, k.runs_started),
        None => "not recorded".to_string(),
    }
}

/// How the simulated run ended: "completed", "OOM-killed at 2.310 s", or why it was skipped.
fn sim_outcome_cell(c: &CaseResult) -> String {
    if let Some(why) = &c.skipped {
        return format!("skipped: {why}");
    }
    if let Some(seeds) = &c.seeds {
        return match seeds.runs_oom_killed {
            0 => format!("completed in {} of {} seeds", seeds.runs, seeds.runs),
            killed if c.kind == "jobs" => format!("a job OOM-killed in {killed} of {} seeds", seeds.runs),
            killed => format!("OOM-killed in {killed} of {} seeds", seeds.runs),
        };
    }
    outcome_cell(c.outcome.as_ref())
}

/// A queue case's jobs: the kernel's median start and end against the model's, and the
/// median end-time error the verdict scores; as a table or as Markdown.
fn write_jobs_timing(out: &mut impl Write, c: &CaseResult, markdown: bool) -> Result<()> {
    let Some(timing) = &c.jobs_timing else { return Ok(()) };
    let header = ["job", "kernel start s", "kernel end s", "sim start s", "sim end s", "end error"];
    if markdown {
        writeln!(out, "| {} |", header.join(" | "))?;
        writeln!(out, "|---|---|---|---|---|---|")?;
    } else {
        writeln!(
            out,
            "  {:<6} {:>14} {:>14} {:>14} {:>14} {:>10}",
            "job", header[1], header[2], header[3], header[4], header[5]
        )?;
    }
    for j in &timing.jobs {
        let cells = [
            format!("{:.3}", j.kernel_start_s),
            format!("{:.3}", j.kernel_end_s),
            cell(j.sim_start_s, 3),
            cell(j.sim_end_s, 3),
            format!("{:.1}%", j.end_error * 100.0),
        ];
        if markdown {
            writeln!(out, "| {} | {} |", j.job, cells.join(" | "))?;
        } else {
            writeln!(
                out,
                "  {:<6} {:>14} {:>14} {:>14} {:>14} {:>10}",
                j.job, cells[0], cells[1], cells[2], cells[3], cells[4]
            )?;
        }
    }
    let line = format!(
        "median job end-time error {:.1}% (`{JOBS_END_S}`, over the seeds in which no job was killed)",
        timing.end_error_median * 100.0
    );
    if markdown {
        writeln!(out, "\n{line}\n")?;
    } else {
        writeln!(out, "  {}\n", line.replace('`', ""))?;
    }
    Ok(())
}

/// How a simulated run ended: "completed", "OOM-killed at 2.310 s", or "-" when it did not run.
fn outcome_cell(outcome: Option<&Outcome>) -> String {
    match outcome {
        Some(Outcome::Completed) => "completed".to_string(),
        Some(Outcome::OomKilled { at_s, .. }) => format!("OOM-killed at {at_s:.3} s"),
        Some(Outcome::EventLimit) => "stopped at the event limit".to_string(),
        Some(Outcome::TimeLimit) => "stopped at the time limit".to_string(),
        Some(Outcome::Unfinished { tasks, .. }) => format!("unfinished ({tasks} tasks)"),
        None => "-".to_string(),
    }
}

/// "MISMATCH" when the simulated run contradicts the kernel's OOM kills.
fn oom_match_cell(c: &CaseResult) -> &'static str {
    if c.oom_mismatch {
        "MISMATCH"
    } else {
        ""
    }
}

/// One row per case: its group, the kernel's OOM kills and how the simulated run ended.
fn write_case_list(out: &mut impl Write, v: &Validation) -> Result<()> {
    writeln!(out, "{:<34} {:<8} {:<16} {:<18} simulated run", "case", "kind", "group", "kernel OOM kills")?;
    for c in &v.cases {
        let line = format!(
            "{:<34} {:<8} {:<16} {:<18} {} {}",
            c.id,
            c.kind,
            c.group.name(),
            kernel_oom_cell(c),
            sim_outcome_cell(c),
            oom_match_cell(c)
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    writeln!(out)?;
    Ok(())
}

/// The case list, then per case and figure: the kernel's median and range, the simulated
/// value and the ratio; then the summary.
pub(crate) fn write_table(out: &mut impl Write, v: &Validation) -> Result<()> {
    if let Some(why) = &v.not_validated {
        writeln!(out, "NOT A VALIDATION: {why}\n")?;
    }
    if let Some(disk) = &v.disk {
        writeln!(out, "{disk}\n")?;
    }
    write_case_list(out, v)?;
    for c in &v.cases {
        writeln!(out, "case {} ({}, {})", c.id, c.kind, c.group.name())?;
        if let Some(why) = &c.skipped {
            writeln!(out, "  skipped: {why}\n")?;
            continue;
        }
        writeln!(
            out,
            "  {:<40} {:>14} {:>27} {:>14} {:>8}",
            "figure", "kernel median", "kernel range", "simulated", "sim/real"
        )?;
        for (path, real, lo, hi, sim, ratio) in rows(c) {
            let range = format!(
                "{} .. {}",
                fmt_num(lo.as_f64().unwrap_or(f64::NAN)),
                fmt_num(hi.as_f64().unwrap_or(f64::NAN))
            );
            let ratio = ratio.as_f64().map(|r| format!("{r:.3}")).unwrap_or_else(|| "-".into());
            writeln!(out, "  {path:<40} {:>14} {range:>27} {:>14} {ratio:>8}", fmt_num(real), fmt_num(sim))?;
        }
        writeln!(out)?;
        write_jobs_timing(out, c, false)?;
    }
    write_summary(out, v)
}

fn write_summary(out: &mut impl Write, v: &Validation) -> Result<()> {
    writeln!(
        out,
        "summary: every figure both the kernel and the simulation have; error = 0 inside the \
         kernel's run-to-run range, else |sim - median| / median (counts: median floored at 0.1% \
         of the case's swap-ins)"
    )?;
    writeln!(
        out,
        "  {:<40} {:>6} {:>13} {:>13}  {:<30} worst case",
        "figure", "cases", "median error", "worst error", "scored"
    )?;
    for s in &v.summary {
        writeln!(
            out,
            "  {:<40} {:>6} {:>12.1}% {:>12.1}%  {:<30} {}",
            s.label(),
            s.cases,
            s.median_abs_error * 100.0,
            s.worst_abs_error * 100.0,
            scored_cell(s),
            s.worst_case
        )?;
    }
    writeln!(out, "{}", verdict(v))?;
    Ok(())
}

/// `yes (<= 35%)`, `MISS (<= 35%, median <= 15%)` or `no`.
fn scored_cell(s: &CounterSummary) -> String {
    let Some(t) = s.target else { return "no".to_string() };
    let mark = if s.within_target() == Some(true) { "yes" } else { "MISS" };
    if s.range {
        return format!("{mark} (median in seeds' range, <= {:.0}% off)", t * 100.0);
    }
    match s.median_target {
        Some(m) => format!("{mark} (<= {:.0}%, median <= {:.0}%)", t * 100.0, m * 100.0),
        None => format!("{mark} (<= {:.0}%)", t * 100.0),
    }
}

/// Why a scored figure misses: its worst case, and its median when that misses too.
fn miss_text(s: &CounterSummary) -> String {
    let mut parts = Vec::new();
    if s.target.is_some_and(|t| s.worst_abs_error > t) {
        parts.push(format!("{:.0}% in {}", s.worst_abs_error * 100.0, s.worst_case));
    }
    if !s.median_within_target() {
        let cases = if s.cases == 1 { "case" } else { "cases" };
        parts.push(format!("median {:.0}% over {} {cases}", s.median_abs_error * 100.0, s.cases));
    }
    format!("{} ({})", s.label(), parts.join(", "))
}

/// One line: how many scored figures are within their targets, which are not, and the
/// cases whose simulated OOM kills contradict the kernel's.
fn verdict(v: &Validation) -> String {
    let scored: Vec<&CounterSummary> = v.summary.iter().filter(|s| s.scored).collect();
    let missed: Vec<String> =
        scored.iter().filter(|s| s.within_target() == Some(false)).map(|s| miss_text(s)).collect();
    let unscored = v.summary.len() - scored.len();
    let prefix = if v.is_validation() { "" } else { "not validated, " };
    let mut line = if missed.is_empty() {
        format!(
            "verdict: {prefix}all {} scored figures within target on every case ({unscored} more figures listed, unscored)",
            scored.len()
        )
    } else {
        format!(
            "verdict: {prefix}{} of {} scored figures within target; outside: {} ({unscored} more figures listed, unscored)",
            scored.len() - missed.len(),
            scored.len(),
            missed.join(", ")
        )
    };
    let oom: Vec<String> = v
        .oom_mismatches()
        .map(|c| format!("{} (kernel {}, simulated {})", c.id, kernel_oom_cell(c), sim_outcome_cell(c)))
        .collect();
    if !oom.is_empty() {
        line.push_str(&format!("; OOM kills contradict the kernel's in: {}", oom.join(", ")));
    }
    line
}

/// The summary and the per-case key counters as Markdown, for docs/validation.md.
pub(crate) fn write_markdown(
    out: &mut impl Write,
    v: &Validation,
    cmp: &LruComparison,
    dir: &Path,
) -> Result<()> {
    writeln!(out, "# How far to trust swapsim's counters\n")?;
    let lru_flag = if v.is_validation() { String::new() } else { format!(" --lru {}", lru_name(v.lru)) };
    writeln!(
        out,
        "Generated by `swapsim validate {} --format markdown{lru_flag}`; do not edit by hand.\n",
        dir.display()
    )?;
    if let Some(why) = &v.not_validated {
        writeln!(
            out,
            "**Not a validation.** Every figure and score below was {why}. They only say how far \
             MGLRU's replay lies from what the kernel measured under the classic LRU.\n"
        )?;
    }
    if let Some(disk) = &v.disk {
        writeln!(out, "The {disk}.\n")?;
    }
    writeln!(
        out,
        "Each case was measured on a real Linux 6.18 kernel on this project's validation machine \
         (virtio disk, swap file unless the case says zram, cgroup v1 memory limit, one CPU); swapsim \
         replays the same access trace with the `this-vm` CPU profile and the `this-vm` device (or \
         `this-vm-zram` for zram). Errors are |simulated / kernel median - 1|, zero inside the \
         kernel's run-to-run range.\n"
    )?;
    writeln!(out, "## Summary\n")?;
    writeln!(
        out,
        "A figure scored for one group of cases only is listed with the group: `swapfile-order0` \
         (a swap file, no large folios) or `mthp-or-zram` (mTHP sizes on, or zram).\n"
    )?;
    writeln!(out, "| figure | cases | median error | worst error | scored | worst case |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for s in &v.summary {
        writeln!(
            out,
            "| `{}` | {} | {:.1}% | {:.1}% | {} | {} |",
            s.label(),
            s.cases,
            s.median_abs_error * 100.0,
            s.worst_abs_error * 100.0,
            scored_cell(s),
            s.worst_case
        )?;
    }
    writeln!(out, "\n{}", verdict(v))?;
    write_markdown_notes(out, v)?;
    write_lru_comparison(out, cmp)?;
    writeln!(out, "\n## Cases\n")?;
    writeln!(out, "| case | kind | group | kernel OOM kills | simulated run | OOM kills agree |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for c in &v.cases {
        let agree = match (&c.kernel_oom_kills, &c.outcome) {
            _ if c.oom_mismatch => "MISMATCH",
            (Some(_), Some(_)) => "yes",
            _ => "-",
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {agree} |",
            c.id,
            c.kind,
            c.group.name(),
            kernel_oom_cell(c),
            sim_outcome_cell(c),
        )?;
    }
    writeln!(out)?;
    for c in &v.cases {
        writeln!(out, "### {} ({})\n", c.id, c.kind)?;
        if let Some(why) = &c.skipped {
            writeln!(out, "Skipped: {why}.\n")?;
            continue;
        }
        writeln!(out, "| figure | kernel median | kernel range | simulated | sim/real |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        for (path, real, lo, hi, sim, ratio) in rows(c) {
            let ratio = ratio.as_f64().map(|r| format!("{r:.3}")).unwrap_or_else(|| "-".into());
            writeln!(
                out,
                "| `{path}` | {} | {} .. {} | {} | {ratio} |",
                fmt_num(real),
                fmt_num(lo.as_f64().unwrap_or(f64::NAN)),
                fmt_num(hi.as_f64().unwrap_or(f64::NAN)),
                fmt_num(sim)
            )?;
        }
        writeln!(out)?;
        write_jobs_timing(out, c, true)?;
    }
    Ok(())
}

/// What the mTHP and zram cases compare, and what the OOM-kill column says.
fn write_markdown_notes(out: &mut impl Write, v: &Validation) -> Result<()> {
    writeln!(out, "\n## mTHP cases\n")?;
    writeln!(
        out,
        "Cases with mTHP sizes set to \"always\" (`D-mthp…`, `D2-mthp…`, `D2k-mthp…`) compare, per size, \
         the kernel's `hugepages-<size>kB/stats` counters they measured as `mthp.<size>.<counter>`: \
         faults that allocated a large folio or fell back (`anon_fault_alloc`, `anon_fault_fallback`), \
         large folios swapped out whole or split first (`swpout`, `swpout_fallback`), and swapped in \
         whole or at order 0 (`swpin`, `swpin_fallback`). A size the simulation's report does not list \
         counts as zero. These counters, with `vmstat.thp_swpout` and `vmstat.thp_swpout_fallback`, are \
         held to 35% on every case and 15% on the median case; the run time of these cases, and of the \
         zram cases, to 25%. Whether a large folio may be swapped in whole depends on \
         `setup.zswap.ever_enabled` (the `D2-` cases ran in a boot where zswap's parameter had never \
         been written, the `D2k-` cases in one where it had), which the scenario's `[zswap] \
         ever_enabled` carries."
    )?;
    writeln!(out, "\n## zram cases\n")?;
    writeln!(
        out,
        "zram cases replay on the `this-vm-zram` device, fitted to `D2-nothp-seq-zram`'s fill and pass \
         times on top of the `this-vm` CPU profile (the preset's documentation derives it). zram is a \
         bio-based device: it compresses or decompresses each bio in the task that submits it and \
         builds no block requests. Of the block figures, only `{}` are compared. \
         `requests_issued_all`, `read_requests`, `write_requests` and the sector counts are zero on the \
         kernel's side and would only repeat the bio count on the simulation's, which counts each \
         synchronous bio as a one-page request; there are no service times; and the few \
         `plugs_all`/`unplugs_all` events the kernel recorded cannot come from zram, which has no \
         requests to plug.",
        ZRAM_BLOCK_FIGURES.join("`, `")
    )?;
    writeln!(out, "\n## Queue cases\n")?;
    writeln!(
        out,
        "Cases of kind `jobs` (`J-`) run a queue of processes `make -jN` style in one memory cgroup. \
         They replay as a `[workload.queue]` of the jobs' traces: each job a process of its own, at most \
         `concurrency` at once, each started by `exec` (`cpu.exec_ns`, `cpu.exec_faults`) after the \
         launcher's delay, fitted to the visible cases' start times (19.5 ms for the first job, 7.5 ms \
         more for each further first job, 18.5 ms after a running job's exit frees a slot), each seed \
         drawing every launch delay within 3 ms of its fitted value. The makespan is `timing.total_s`; \
         `{JOBS_END_S}` is the median over a case's jobs of each job's end-time error, the jobs' times \
         being medians over the seeds compared. Queue cases are summarised apart from the \
         single-process cases, under the group `queue`, with the same targets."
    )?;
    writeln!(out, "\n## Seeds\n")?;
    writeln!(
        out,
        "Every case is replayed with {} seeds. A seed draws the device's service-time jitter, the \
         phase of the memory cgroup statistics flusher against the run (its 2 s grid is unrelated to \
         when the workload starts, and the classic LRU's aging reads the statistics as last flushed) \
         and a queue's launch delays. A figure is the median over the seeds in which the OOM killer \
         took nothing, as the kernel's figures are medians over its runs that completed, and the \
         model's range over those seeds is kept. The aging counters that swing between runs \
         (`vmstat.pgdeactivate`, `vmstat.workingset_activate_anon`, `vmstat.workingset_restore_anon`) are held to the range: the kernel's \
         median must lie within the model's range over the seeds, to within 15% of the median (six \
         seeds sample a spread, and a median a little beyond the largest of six is no other mode).",
        v.seeds
    )?;
    writeln!(out, "\n## Measurement sessions\n")?;
    writeln!(
        out,
        "Each case names the kernel build it ran (`kernel`), one boot of the validation machine. The \
         CPU costs and device presets were fitted to the v595 and v769 sessions. A session measured \
         slower is replayed on a slower machine, calibrated only from figures of its own cases that \
         the comparison does not otherwise need (`crates/swapsim/src/validate/sessions.rs`); those \
         figures are therefore no validation."
    )?;
    for session in SESSIONS {
        writeln!(
            out,
            "\n- `{}`: CPU {:.2}x, disk reads {:.2}x. {}",
            session.kernel, session.cpu, session.disk_read, session.evidence
        )?;
    }
    writeln!(out, "\n## OOM kills\n")?;
    writeln!(
        out,
        "Some cases record in how many of their runs the kernel's memory cgroup OOM killer ended the \
         workload (`measured.oom_kills`; their figures come from the runs that completed). The case \
         list below puts that record next to how many of the simulated seeds the OOM killer cut \
         short. Where the kernel never killed, any simulated kill is marked MISMATCH and named in the \
         verdict; where it killed in at least a third of its runs, so is a model that kills in fewer \
         than a third of its seeds."
    )?;
    Ok(())
}

/// Fixed-point with `decimals`, or "-" when absent.
fn cell(x: Option<f64>, decimals: usize) -> String {
    x.map(|x| format!("{x:.decimals$}")).unwrap_or_else(|| "-".into())
}

/// The classic LRU's and MGLRU's replays of each case side by side, with the kernel's
/// medians, and whether MGLRU's result is sane.
fn write_lru_comparison(out: &mut impl Write, cmp: &LruComparison) -> Result<()> {
    let (lo, hi) = SWAP_IN_RATIO;
    writeln!(out, "\n## Classic (validated) vs MGLRU (not validated here)\n")?;
    writeln!(
        out,
        "The validation machine's kernel is built without `CONFIG_LRU_GEN`, so every case above was \
         measured under the classic active/inactive LRU, and only the classic replay is scored against \
         it. The same traces replayed with `lru = \"mglru\"` therefore have no kernel measurement to be \
         held to: their figures are listed for comparison, not validated. What is checked is that \
         MGLRU gives a sane result: the run is not OOM-killed, and its swap-ins (`pswpin`, plus \
         `zswpin` on the zswap case, over every phase of the case) stay within {lo}x..{hi}x of the classic replay's, the same order of \
         magnitude. Differences inside that range are the two policies choosing different victims, \
         not errors. `swapsim validate DIR --lru mglru` prints MGLRU's full comparison with the \
         kernel.\n"
    )?;
    let insane: Vec<String> = cmp.insane().map(|(c, why)| format!("{} ({})", c.id, why.join("; "))).collect();
    if insane.is_empty() {
        writeln!(out, "MGLRU is sane on all {} cases.\n", cmp.cases.len())?;
    } else {
        writeln!(out, "MGLRU is NOT sane on: {}.\n", insane.join(", "))?;
    }
    writeln!(
        out,
        "| case | kernel OOM kills | classic run | MGLRU run | classic swap-ins | MGLRU swap-ins | MGLRU/classic | sane |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|")?;
    for c in &cmp.cases {
        let kernel = match &c.kernel_oom_kills {
            Some(k) => format!("{} of {} runs", k.runs_oom_killed, k.runs_started),
            None => "not recorded".to_string(),
        };
        let (classic, mglru) = c.swap_ins();
        let sane = if c.insane().is_empty() { "yes" } else { "NO" };
        writeln!(
            out,
            "| {} | {kernel} | {} | {} | {} | {} | {} | {sane} |",
            c.id,
            outcome_cell(c.classic.as_ref()),
            outcome_cell(c.mglru.as_ref()),
            cell(classic, 0),
            cell(mglru, 0),
            cell(c.swap_in_ratio(), 2),
        )?;
    }
    writeln!(
        out,
        "\nPer case, the reclaim counters and the run time (s): the kernel's median (classic LRU), the \
         classic replay and the MGLRU replay. A swapoff case's counters are split into its fill and its \
         swapoff; \"-\" is a figure the kernel did not measure.\n"
    )?;
    writeln!(out, "| case | figure | kernel median | classic | MGLRU | MGLRU/classic |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for c in &cmp.cases {
        for f in &c.figures {
            let decimals = if f.figure.starts_with("timing.") { 3 } else { 0 };
            let ratio = match (f.classic, f.mglru) {
                (Some(a), Some(b)) if a != 0.0 => Some(b / a),
                _ => None,
            };
            writeln!(
                out,
                "| {} | `{}` | {} | {} | {} | {} |",
                c.id,
                f.figure,
                cell(f.kernel, decimals),
                cell(f.classic, decimals),
                cell(f.mglru, decimals),
                cell(ratio, 2),
            )?;
        }
    }
    Ok(())
}
