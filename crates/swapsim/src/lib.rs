//! Run swap-subsystem simulations from scenarios: load, edit, run, sweep, validate.
//!
//! This is the crate a Rust program calls to do what the `swapsim` command does. It turns
//! a scenario (TOML text or a file) into a validated configuration, builds the readahead
//! policy, the device models and the tasks the scenario names, and runs
//! [`swapsim_core::run`]. The command-line tool is a thin layer over it that parses
//! arguments and prints.
//!
//! ```
//! let scenario = swapsim::Scenario::from_toml(
//!     r#"
//!     [memcg]
//!     limit = "4MiB"
//!     [[swap.devices]]
//!     name = "vda"
//!     size = "64MiB"
//!     [workload.generator]
//!     pattern = "zipf"
//!     region = "8MiB"
//!     "#,
//! )?;
//! let report = scenario.set("swap.page_cluster", "0")?.run()?;
//! assert!(report.vmstat.pswpout > 0);
//! // With page-cluster 0, every swap-in reads the faulting page alone.
//! assert_eq!(report.vmstat.swap_ra, 0);
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! The JSON document `swapsim run --format json` prints is a [`RunDocument`]:
//!
//! ```no_run
//! let prepared = swapsim::Scenario::load("scenarios/zipf-memcg.toml")?.prepare()?;
//! let report = prepared.run()?;
//! let json = serde_json::to_string_pretty(&swapsim::RunDocument::new(&prepared, &report))?;
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! `[report] sample_every` (or [`Scenario::with_sample_every`]) samples the run at fixed
//! intervals of simulated time; the report then carries the [`Series`], plain data that
//! serialises as the JSON document's `series`:
//!
//! ```
//! let scenario = swapsim::Scenario::from_toml(
//!     r#"
//!     [memcg]
//!     limit = "4MiB"
//!     [[swap.devices]]
//!     name = "vda"
//!     size = "64MiB"
//!     [workload.generator]
//!     pattern = "zipf"
//!     region = "8MiB"
//!     [report]
//!     sample_every = "1ms"
//!     "#,
//! )?;
//! let report = scenario.run()?;
//! let series = report.series.as_ref().expect("the run was sampled");
//! // Counters are per interval: over the whole series they add up to the totals.
//! assert_eq!(series.vmstat_total(), report.vmstat);
//! assert_eq!(series.samples[0].t_ns, 1_000_000);
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! A run can complete and still record a failure of the simulated system (an OOM kill, a
//! swapoff that ran out of memory); [`RunStatus::of`] reads those out of a report.
//!
//! Besides single runs: [`sweep()`] runs a scenario once per combination of settings (and
//! per seed, to tell a difference from noise),
//! [`experiment::run`] rebuilds a published kernel study, [`validate::run`] replays cases
//! measured on a real kernel and compares counter by counter, and [`profile::fit`] fits a
//! device profile to fio output.
//!
//! **Errors.** Functions return [`anyhow::Result`]: the messages name the file, the line or
//! the field (`scenario s.toml: swap.page_cluster: 40 is outside 0..=31`), and the layers
//! below (sim-core, policies, devices, trace-formats) already return typed errors that are
//! carried as the chain's source. Giving this crate an error enum of its own would mean
//! rewriting every message path of scenario loading, sweeps, experiments and validation for
//! no gain to a caller, who can only report them.
//!
//! **What it deliberately does not do.** It never prints, never reads the wall clock and
//! never writes files: progress, tables, plots and timings belong to the caller. It reads
//! only the scenario, trace and case files it is asked to load, and /proc/meminfo to check
//! that the swap devices a scenario names fit in the host's memory.

#![warn(missing_docs)]

mod document;
pub mod experiment;
pub mod mrc;
mod next_use;
mod overrides;
pub mod probe;
pub mod profile;
pub mod progress;
pub mod registry;
mod scenario;
mod shared_start;
mod status;
pub mod sweep;
mod timeline;
mod trace;
pub mod validate;

pub use document::{Host, RunDocument};
pub use registry::{PolicyContext, Registry, RegistryError};
pub use scenario::{
    parse_sample_every, Prepared, ResolvedDevice, ResolvedReport, ResolvedScenario, ResolvedSwap,
    ResolvedWorkload, Scenario, ThpSection, TraceFlags, ZswapSection,
};
pub use status::{Failure, RunStatus};
pub use swapsim_core::series::{Sample, Series, TaskPhase, TaskSample};
pub use swapsim_core::{SimDuration, SimReport};
pub use swapsim_trace_formats::Pace;
pub use sweep::run as sweep;
pub use timeline::{TimelineEntry, TimelineOp, When};
pub use trace::{parse_format, TaskCount, TraceReport, TraceSource, REPEAT_MAX};
