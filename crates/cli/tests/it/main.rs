//! Integration tests of the `swapsim` binary: one test binary, one module per behaviour.
//!
//! Every test runs the real executable through [`support::swapsim`], with inputs from this
//! repository only (`scenarios/`, `traces/`, `crates/cli/tests/data/`).

mod demo;
mod determinism;
mod errors;
mod exit;
mod experiments;
mod golden;
mod hostile;
mod inputs;
mod libcachesim;
mod outputs;
mod overrides;
#[cfg(target_os = "linux")]
mod probe;
mod progress;
mod queue;
mod readme;
mod scenarios;
mod series;
mod support;
mod sweep;
mod traces;
mod validation;
