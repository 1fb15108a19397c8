//! The engine (under construction).
use crate::config::ValidatedConfig;
use crate::device::BlockDevice;
use crate::error::SimError;
use crate::readahead::Readahead;
use crate::report::SimReport;
use crate::workload::TaskSpec;

/// Everything a run needs.
#[derive(Debug)]
pub struct Setup {
    /// Checked core configuration.
    pub config: ValidatedConfig,
    /// Root seed.
    pub seed: u64,
    /// One latency model per configured swap device, in the same order.
    pub devices: Vec<Box<dyn BlockDevice>>,
    /// The swap-in readahead policy.
    pub readahead: Box<dyn Readahead>,
    /// Tasks to run.
    pub tasks: Vec<TaskSpec>,
}

/// Runs a simulation to completion.
pub fn run(_setup: Setup) -> Result<SimReport, SimError> {
    Err(SimError::Setup("engine not built yet".into()))
}
