//! The JSON document of one run: the report of record.
//!
//! It holds the crate version, the seed, the resolved scenario, every [`SimReport`] field,
//! what the trace held (for a trace run), and last a `host` object with wall-clock
//! figures. Only `host` depends on the machine the simulator ran on, so two runs of the
//! same scenario and seed produce documents that are byte-identical once `host` is
//! removed. This module never reads the clock: the caller measures and passes the time.

use serde::Serialize;
use std::time::Duration;
use swapsim_core::SimReport;

use crate::scenario::{Prepared, ResolvedScenario};
use crate::trace::TraceReport;

/// Figures that depend on the host, kept apart from the reproducible report.
#[derive(Clone, Copy, Debug, Serialize)]
#[non_exhaustive]
pub struct Host {
    /// Wall-clock time of the simulation, in seconds.
    pub wall_s: f64,
    /// Accesses replayed per wall-clock second.
    pub accesses_per_s: f64,
    /// Events processed per wall-clock second.
    pub events_per_s: f64,
}

impl Host {
    /// Rates of `report` over `elapsed`.
    pub fn measure(elapsed: Duration, report: &SimReport) -> Host {
        Host::over(elapsed, report.accesses, report.events)
    }

    /// Rates of `n_accesses` and `n_events` over `elapsed`.
    pub fn over(elapsed: Duration, n_accesses: u64, n_events: u64) -> Host {
        let wall_s = elapsed.as_secs_f64();
        let rate = |n: u64| if wall_s > 0.0 { (n as f64 / wall_s).round() } else { 0.0 };
        Host {
            wall_s: (wall_s * 1e6).round() / 1e6,
            accesses_per_s: rate(n_accesses),
            events_per_s: rate(n_events),
        }
    }
}

/// The JSON document of one run, as `swapsim run --format json` prints it.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct RunDocument<'a> {
    /// The version of this crate.
    pub swapsim_version: &'static str,
    /// The root seed.
    pub seed: u64,
    /// The effective scenario.
    pub scenario: &'a ResolvedScenario,
    /// The report; its fields sit at the top level of the document.
    #[serde(flatten)]
    pub report: &'a SimReport,
    /// What the trace held, when the workload is a trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<&'a TraceReport>,
    /// Wall-clock figures, when measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<Host>,
}

impl<'a> RunDocument<'a> {
    /// The document of `report`, a run of `prepared`, without `trace` and `host`.
    pub fn new(prepared: &'a Prepared, report: &'a SimReport) -> RunDocument<'a> {
        RunDocument {
            swapsim_version: env!("CARGO_PKG_VERSION"),
            seed: prepared.seed(),
            scenario: prepared.resolved(),
            report,
            trace: None,
            host: None,
        }
    }

    /// The same document with the `trace` object of the run.
    pub fn with_trace(self, trace: Option<&'a TraceReport>) -> RunDocument<'a> {
        RunDocument { trace, ..self }
    }

    /// The same document with wall-clock figures.
    pub fn with_host(self, host: Host) -> RunDocument<'a> {
        RunDocument { host: Some(host), ..self }
    }
}
