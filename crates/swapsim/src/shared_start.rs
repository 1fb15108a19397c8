//! Runs that share their beginning. Scenarios equal but for their swap-in knobs
//! (page-cluster, `vma_ra_enabled`, the readahead policy, swapoff's hit accounting) run
//! alike until the first page is swapped in; scenarios equal but for zswap (whether it
//! is on, its shrinker switch, its protection policy) run alike until the first store or
//! shrinker call, which comes with the first reclaim. That beginning is simulated once
//! and each scenario continues from a copy of it ([`swapsim_core::Simulation::fork`]),
//! giving the report a run of its own would give.

use anyhow::{anyhow, Result};
use std::sync::{Mutex, PoisonError};
use swapsim_core::config::SwapoffHits;
use swapsim_core::{SimReport, Simulation};
use swapsim_policies::ReadaheadConfig;

use crate::scenario::{Prepared, ScenarioFile};

/// A beginning several scenarios share, simulated once up to a timeline operation.
pub(crate) struct SharedStart {
    /// Forks are taken one at a time, so that the simulation need not be `Sync`. The lock
    /// is held only while [`Simulation::fork`] copies the simulation, which takes it by
    /// shared reference, so a fork that panics leaves it as it was.
    base: Mutex<Simulation>,
    /// What the variants may differ in.
    knobs: Knobs,
}

/// The knobs the scenarios sharing a beginning may differ in.
#[derive(Clone, Copy, Debug)]
enum Knobs {
    /// Swap-in: [`Simulation::retune_swapin`].
    Swapin,
    /// zswap: [`Simulation::retune_zswap`].
    Zswap,
}

impl SharedStart {
    /// Simulates `first` until its timeline operation `op` (from 0) is due. `None` when
    /// its run ends first, swaps a page in before then (the swap-in knobs were read), or
    /// runs an operation that sets one: scenarios that differ in them do not share that
    /// beginning.
    pub(crate) fn run(first: &Prepared, op: usize) -> Result<Option<SharedStart>> {
        let mut sim = Simulation::new(first.setup()?.0).map_err(|err| anyhow!("{err}"))?;
        let due = sim.run_until_op(op).map_err(|err| anyhow!("{err}"))?;
        Ok((due && sim.can_retune_swapin())
            .then(|| SharedStart { base: Mutex::new(sim), knobs: Knobs::Swapin }))
    }

    /// Simulates `first` until it comes within `margin` pages of reclaim
    /// ([`Simulation::run_until_near_reclaim`]), for variants that differ only in zswap.
    /// `None` when the run ends first, when something has read zswap already (an event
    /// charged more than `margin` pages and reclaimed), or when a task reads a stream that
    /// does not fork.
    pub(crate) fn before_reclaim(first: &Prepared, margin: u64) -> Result<Option<SharedStart>> {
        let mut sim = Simulation::new(first.setup()?.0).map_err(|err| anyhow!("{err}"))?;
        let near = sim.run_until_near_reclaim(margin).map_err(|err| anyhow!("{err}"))?;
        let shared = near && sim.can_retune_zswap() && sim.streams_fork();
        Ok(shared.then(|| SharedStart { base: Mutex::new(sim), knobs: Knobs::Zswap }))
    }

    /// The report of `variant`, continued from a copy of the shared beginning with its own
    /// knobs. Fails when `variant` differs from the first scenario in more than those
    /// knobs.
    ///
    /// A variant whose fork panicked (caught by the caller, and reported with that variant)
    /// does not stop the others: the lock it poisoned guards a simulation the fork only
    /// read, so the others take theirs from it as if nothing had happened.
    pub(crate) fn finish(&self, variant: &Prepared) -> Result<SimReport> {
        let base = self.base.lock().unwrap_or_else(PoisonError::into_inner);
        let mut sim = base.fork()?;
        drop(base);
        match self.knobs {
            Knobs::Swapin => sim.retune_swapin(variant.setup()?.0)?,
            Knobs::Zswap => sim.retune_zswap(variant.setup()?.0)?,
        }
        while sim.step()? {}
        Ok(sim.into_report())
    }
}

/// What scenario files that may share their beginning have in common: the file with its
/// swap-in knobs at fixed values, as text. Files with equal keys differ at most in those.
pub(crate) fn key(file: &ScenarioFile) -> Result<String> {
    let mut file = file.clone();
    file.swap.page_cluster = 0;
    file.swap.vma_ra_enabled = true;
    file.swap.readahead = ReadaheadConfig::Kernel.into();
    file.swap.swapoff_readahead_hits = SwapoffHits::Ignored;
    Ok(serde_json::to_string(&file)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    /// A 16 MiB region written once under an 8 MiB limit (`passes` more passes re-read it),
    /// then the limit lifted and the device swapped off.
    fn toml(page_cluster: u32, readahead: &str, passes: u32) -> String {
        format!(
            r#"
            [machine]
            memory = "64MiB"
            [memcg]
            limit = "8MiB"
            [swap]
            page_cluster = {page_cluster}
            readahead = "{readahead}"
            [[swap.devices]]
            name = "vda"
            size = "64MiB"
            model = {{ preset = "virtio" }}
            [workload.generator]
            pattern = "seq"
            region = "16MiB"
            passes = {passes}
            [[timeline]]
            at = "workload-end"
            op = "set-memcg-limit"
            limit = "64MiB"
            [[timeline]]
            op = "swapoff"
            device = "vda"
            "#
        )
    }

    fn prepared(text: &str) -> Prepared {
        Scenario::from_toml(text).and_then(|s| s.prepare()).expect("a valid scenario")
    }

    fn json(report: &SimReport) -> serde_json::Value {
        serde_json::to_value(report).expect("a report serialises")
    }

    #[test]
    fn scenarios_finished_from_a_shared_start_report_as_run_alone() {
        let variants = [toml(3, "cluster", 0), toml(0, "kernel", 0), toml(5, "vma", 0)];
        let prepared: Vec<Prepared> = variants.iter().map(|t| prepared(t)).collect();
        let start = SharedStart::run(&prepared[0], 0)
            .unwrap()
            .expect("nothing is swapped in before the limit is lifted");
        let mut alone = Vec::new();
        for p in &prepared {
            let report = p.run().unwrap();
            assert!(report.vmstat.pswpin > 0, "swapoff read pages back");
            assert_eq!(json(&start.finish(p).unwrap()), json(&report));
            alone.push(json(&report));
        }
        assert!(alone[0] != alone[1] && alone[1] != alone[2], "the variants differ");
    }

    /// A variant that panics while it holds the lock (as a fork that panics would) leaves
    /// the start usable: the next variant gets the report a run of its own gives, rather
    /// than a panic about the poisoned lock.
    #[test]
    fn a_variant_that_panicked_holding_the_lock_does_not_stop_the_others() {
        let variants = [toml(3, "cluster", 0), toml(5, "vma", 0)];
        let prepared: Vec<Prepared> = variants.iter().map(|t| prepared(t)).collect();
        let start = SharedStart::run(&prepared[0], 0).unwrap().expect("a shared start");
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _base = start.base.lock();
            panic!("a fork panicked");
        }));
        assert!(panicked.is_err() && start.base.is_poisoned());
        let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| start.finish(&prepared[1])))
            .expect("finishing after a panicked variant does not panic")
            .unwrap();
        assert_eq!(json(&report), json(&prepared[1].run().unwrap()));
    }

    #[test]
    fn a_start_that_swaps_in_is_not_shared() {
        assert!(SharedStart::run(&prepared(&toml(3, "cluster", 1)), 0).unwrap().is_none());
    }

    #[test]
    fn keys_ignore_only_the_swap_in_knobs() {
        let key_of = |text: &str| key(&toml::from_str::<ScenarioFile>(text).unwrap()).unwrap();
        assert_eq!(key_of(&toml(3, "cluster", 0)), key_of(&toml(0, "vma", 0)));
        assert_ne!(key_of(&toml(3, "cluster", 0)), key_of(&toml(3, "cluster", 1)));
    }
}
