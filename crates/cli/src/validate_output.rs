//! `swapsim validate` output: per case and figure, the kernel's median and range, the
//! simulated value and the ratio, then the error per counter across cases, as a table or
//! as the Markdown of docs/validation.md.
//!
//! The comparison itself is the library's (`swapsim::validate`); this module only lays
//! it out for reading.

use anyhow::Result;
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use swapsim::validate::{lookup, CaseResult, CounterSummary, Validation};

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

/// Per case and figure: the kernel's median and range, the simulated value and the ratio;
/// then the summary.
pub(crate) fn write_table(out: &mut impl Write, v: &Validation) -> Result<()> {
    for c in &v.cases {
        writeln!(out, "case {} ({})", c.id, c.kind)?;
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
        "  {:<40} {:>6} {:>13} {:>13}  {:<14} worst case",
        "figure", "cases", "median error", "worst error", "scored"
    )?;
    for s in &v.summary {
        writeln!(
            out,
            "  {:<40} {:>6} {:>12.1}% {:>12.1}%  {:<14} {}",
            s.counter,
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

/// `yes (<= 35%)`, `MISS (<= 35%)` or `no`.
fn scored_cell(s: &CounterSummary) -> String {
    match (s.target, s.within_target()) {
        (Some(t), Some(true)) => format!("yes (<= {:.0}%)", t * 100.0),
        (Some(t), _) => format!("MISS (<= {:.0}%)", t * 100.0),
        (None, _) => "no".to_string(),
    }
}

/// One line: how many scored figures are within their targets, and which are not.
fn verdict(v: &Validation) -> String {
    let scored: Vec<&CounterSummary> = v.summary.iter().filter(|s| s.scored).collect();
    let missed: Vec<String> = scored
        .iter()
        .filter(|s| s.within_target() == Some(false))
        .map(|s| format!("{} ({:.0}% in {})", s.counter, s.worst_abs_error * 100.0, s.worst_case))
        .collect();
    let unscored = v.summary.len() - scored.len();
    if missed.is_empty() {
        format!(
            "verdict: all {} scored figures within target on every case ({unscored} more figures listed, unscored)",
            scored.len()
        )
    } else {
        format!(
            "verdict: {} of {} scored figures within target; outside: {} ({unscored} more figures listed, unscored)",
            scored.len() - missed.len(),
            scored.len(),
            missed.join(", ")
        )
    }
}

/// The summary and the per-case key counters as Markdown, for docs/validation.md.
pub(crate) fn write_markdown(out: &mut impl Write, v: &Validation, dir: &Path) -> Result<()> {
    writeln!(out, "# How far to trust swapsim's counters\n")?;
    writeln!(
        out,
        "Generated by `swapsim validate {} --format markdown`; do not edit by hand.\n",
        dir.display()
    )?;
    writeln!(
        out,
        "Each case was measured on a real Linux 6.18 kernel on this project's validation machine \
         (virtio disk, swap file, cgroup v1 memory limit, one CPU); swapsim replays the same access \
         trace with the `this-vm` device and CPU profiles. Errors are |simulated / kernel median - 1|.\n"
    )?;
    writeln!(out, "## Summary\n")?;
    writeln!(out, "| figure | cases | median error | worst error | scored | worst case |")?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for s in &v.summary {
        writeln!(
            out,
            "| `{}` | {} | {:.1}% | {:.1}% | {} | {} |",
            s.counter,
            s.cases,
            s.median_abs_error * 100.0,
            s.worst_abs_error * 100.0,
            scored_cell(s),
            s.worst_case
        )?;
    }
    writeln!(out, "\n{}", verdict(v))?;
    writeln!(out, "\n## Cases\n")?;
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
    }
    Ok(())
}
