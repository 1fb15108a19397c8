//! `swapsim demo`: one bundled workload under four readahead policies, side by side.
//!
//! The scenario (`scenarios/demo.toml`) and its trace (`traces/demo-zipf.trace.zst`) are
//! built into the binary, so the demo runs from any directory. Each variant goes through
//! exactly the path `swapsim run` takes, with `--set swap.readahead=<policy>` applied, so
//! the demo shows nothing a user could not reproduce with `run`.

use anyhow::{Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write;
use std::time::Duration;
use swapsim::{Host, Prepared, RunDocument, Scenario, TraceSource};
use swapsim_core::SimReport;

use crate::output;

/// The bundled scenario, as in the repository.
pub(crate) const SCENARIO_TEXT: &str = include_str!("../../../scenarios/demo.toml");
/// The bundled trace, as in the repository.
pub(crate) const TRACE_BYTES: &[u8] = include_bytes!("../../../traces/demo-zipf.trace.zst");
/// How reports name the bundled trace.
const TRACE_NAME: &str = "traces/demo-zipf.trace.zst";

/// The readahead policies compared, in column order.
pub(crate) const VARIANTS: [&str; 4] = ["cluster", "fixed", "vma", "none"];

/// One finished variant.
#[derive(Debug)]
pub(crate) struct VariantRun {
    pub(crate) readahead: &'static str,
    pub(crate) prepared: Prepared,
    pub(crate) report: SimReport,
}

/// Loads the bundled scenario with the readahead policy set to `readahead`.
pub(crate) fn prepare(readahead: &str) -> Result<Prepared> {
    Scenario::from_toml_named(SCENARIO_TEXT, "scenarios/demo.toml (built in)", "")?
        .set("swap.readahead", readahead)?
        .with_trace(TraceSource::Embedded { name: TRACE_NAME, bytes: TRACE_BYTES })
        .prepare()
}

/// Runs every variant.
pub(crate) fn run_all() -> Result<Vec<VariantRun>> {
    VARIANTS
        .iter()
        .map(|&readahead| {
            let prepared = prepare(readahead)?;
            let report = prepared.run().with_context(|| format!("demo variant {readahead}"))?;
            Ok(VariantRun { readahead, prepared, report })
        })
        .collect()
}

#[derive(Serialize)]
struct DemoDocument<'a> {
    variants: Vec<VariantDocument<'a>>,
    host: Host,
}

#[derive(Serialize)]
struct VariantDocument<'a> {
    readahead: &'static str,
    report: RunDocument<'a>,
}

fn total_host(runs: &[VariantRun], elapsed: Duration) -> Host {
    let n_accesses = runs.iter().map(|r| r.report.accesses).sum();
    let n_events = runs.iter().map(|r| r.report.events).sum();
    Host::over(elapsed, n_accesses, n_events)
}

/// Prints one JSON document holding every variant's full report.
pub(crate) fn write_json(out: &mut impl Write, runs: &[VariantRun], elapsed: Duration) -> Result<()> {
    let doc = DemoDocument {
        variants: runs
            .iter()
            .map(|r| VariantDocument {
                readahead: r.readahead,
                report: RunDocument::new(&r.prepared, &r.report),
            })
            .collect(),
        host: total_host(runs, elapsed),
    };
    output::write_json(out, &doc)
}

/// Prints the side-by-side comparison.
pub(crate) fn write_table(out: &mut impl Write, runs: &[VariantRun], elapsed: Duration) -> Result<()> {
    let mut text = String::new();
    let t = &mut text;
    let first = runs.first().context("the demo has variants")?;
    let scenario = first.prepared.resolved();
    writeln!(t, "swapsim {} demo: one workload, four swap-in readahead policies", env!("CARGO_PKG_VERSION"))?;
    // The summary line names the first variant's policy; the columns below vary it.
    let summary = output::summary_line(first.prepared.seed(), scenario);
    let summary = summary.split(" · readahead").next().unwrap_or(&summary).to_string();
    writeln!(t, "{summary}")?;
    writeln!(t, "{}", output::workload_line(&scenario.workload))?;
    writeln!(t)?;

    type Cell = fn(&SimReport) -> String;
    let rows: [(&str, Cell); 12] = [
        ("pgmajfault", |r| r.vmstat.pgmajfault.to_string()),
        ("pswpin", |r| r.vmstat.pswpin.to_string()),
        ("pswpout", |r| r.vmstat.pswpout.to_string()),
        ("swap_ra", |r| r.vmstat.swap_ra.to_string()),
        ("swap_ra_hit", |r| r.vmstat.swap_ra_hit.to_string()),
        ("read dispatches", |r| r.block.iter().map(|b| b.reads.dispatches).sum::<u64>().to_string()),
        ("reads per dispatch", |r| {
            let queued: u64 = r.block.iter().map(|b| b.reads.queued).sum();
            let dispatched: u64 = r.block.iter().map(|b| b.reads.dispatches).sum();
            if dispatched == 0 {
                "-".to_string()
            } else {
                format!("{:.2}", queued as f64 / dispatched as f64)
            }
        }),
        ("major fault p50 µs", |r| format!("{:.1}", r.fault_latency.major.p50_us)),
        ("major fault p99 µs", |r| format!("{:.1}", r.fault_latency.major.p99_us)),
        ("minor swap faults", |r| r.fault_latency.minor_swap.count.to_string()),
        ("io wait s", |r| format!("{:.3}", r.tasks.iter().map(|task| task.io_wait_s).sum::<f64>())),
        ("simulated time s", |r| format!("{:.3}", r.sim_time_s)),
    ];
    write!(t, "{:<22}", "readahead")?;
    for run in runs {
        write!(t, "{:>14}", run.readahead)?;
    }
    writeln!(t)?;
    write!(t, "{:<22}", "  (policy that ran)")?;
    for run in runs {
        write!(t, "{:>14}", run.report.readahead)?;
    }
    writeln!(t)?;
    for (name, cell) in rows {
        write!(t, "{name:<22}")?;
        for run in runs {
            write!(t, "{:>14}", cell(&run.report))?;
        }
        writeln!(t)?;
    }
    let host = total_host(runs, elapsed);
    writeln!(t)?;
    writeln!(
        t,
        "host: {:.3} s wall for {} runs, {:.0} accesses/s",
        host.wall_s,
        runs.len(),
        host.accesses_per_s
    )?;
    writeln!(t, "reproduce one column: swapsim run scenarios/demo.toml --set swap.readahead=<policy>")?;
    out.write_all(text.as_bytes())?;
    Ok(())
}
