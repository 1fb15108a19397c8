//! Named experiments: published kernel studies that motivated swapsim's models, rebuilt
//! as scenarios and compared with their published numbers.
//!
//! Each experiment builds its scenarios as typed values and runs them through the same
//! validation path as a scenario file, so every figure it reports can be reproduced by
//! hand with `swapsim run`. Variants run in parallel; results are collected in variant
//! order, so the result does not depend on the number of threads. `scale` shrinks memory
//! and swap sizes for quick runs (tests use it); the published comparison is meaningful
//! at scale 1.
//!
//! Every experiment is one file below `experiment/` and one entry of `EXPERIMENTS`, the
//! only list of them: [`list`] and [`run`] both read it. A file holds the experiment's
//! [`Info`], its scenarios, its row type (one variant of [`Row`]), the layout of its
//! [`Table`] and its verdict: which published figures it checks, through the one
//! mechanism of `experiment/verdict.rs`, which says whether the simulation moves the way
//! the publication did, then checks each published figure it can within a stated
//! tolerance and calls only a figure within it reproduced. `experiment/support.rs` holds
//! what the experiments share: running a scenario with a simulator panic caught and
//! named, scaled sizes, the run counter.

use anyhow::{bail, Result};
use serde::Serialize;

use crate::progress::Progress;

mod hibernate_alloc_fastpath;
mod hibernate_reclaim;
mod mthp_swap_allocator;
mod mthp_swapin;
mod plug_merge;
mod support;
mod swapoff_readahead;
mod table;
mod trace_queue;
mod verdict;
mod zswap_large_swapin;
mod zswap_readahead_bypass;
mod zswap_second_chance;
mod zswap_shrink_start;

pub use hibernate_alloc_fastpath::HibernateAllocRow;
pub use hibernate_reclaim::HibernateRow;
pub use mthp_swap_allocator::AllocatorRow;
pub use mthp_swapin::MthpRow;
pub use plug_merge::PlugRow;
pub use swapoff_readahead::SwapoffRow;
pub use table::{Column, Table};
pub use verdict::{Check, Verdict};
pub use zswap_large_swapin::ZswapLargeRow;
pub use zswap_readahead_bypass::{BypassBuild, BypassFigures, BypassRow};
pub use zswap_second_chance::{ZswapBuild, ZswapFigures, ZswapRow};
pub use zswap_shrink_start::{ShrinkFigures, ShrinkRow, ShrinkRun};

/// Every experiment, in the order `swapsim experiment list` prints them. Adding one is a
/// file below `experiment/` that defines its `EXPERIMENT`, and its entry here.
const EXPERIMENTS: &[Experiment] = &[
    swapoff_readahead::EXPERIMENT,
    plug_merge::EXPERIMENT,
    mthp_swapin::EXPERIMENT,
    zswap_second_chance::EXPERIMENT,
    hibernate_reclaim::EXPERIMENT,
    zswap_large_swapin::EXPERIMENT,
    zswap_readahead_bypass::EXPERIMENT,
    zswap_shrink_start::EXPERIMENT,
    mthp_swap_allocator::EXPERIMENT,
    hibernate_alloc_fastpath::EXPERIMENT,
];

/// An experiment of [`EXPERIMENTS`]: what it is, and how it runs.
struct Experiment {
    info: Info,
    /// Builds and runs the experiment's scenarios at a scale (0 < scale <= 1), telling the
    /// progress how many runs have finished, and compares them with the publication.
    run: fn(f64, &dyn Progress) -> Result<Findings>,
}

/// What an experiment's run finds: the parts of its [`Outcome`] that its [`Info`] and
/// scale do not already give.
struct Findings {
    setup: String,
    rows: Vec<Row>,
    table: Table,
    verdict: Verdict,
}

/// An experiment's name, title and what was published.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Info {
    /// The name `run` takes, e.g. "swapoff-readahead".
    pub name: &'static str,
    /// What the experiment compares, and whose study it is.
    pub title: &'static str,
    /// The published setup and figures.
    pub published: &'static str,
}

/// Every experiment, in the order `swapsim experiment list` prints them.
pub fn list() -> impl ExactSizeIterator<Item = &'static Info> {
    EXPERIMENTS.iter().map(|experiment| &experiment.info)
}

/// One row of an experiment's table.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Row {
    /// A row of `swapoff-readahead`.
    Swapoff(SwapoffRow),
    /// A row of `plug-merge`.
    Plug(PlugRow),
    /// A row of `mthp-swapin`.
    Mthp(MthpRow),
    /// A row of `zswap-second-chance`.
    Zswap(ZswapRow),
    /// A row of `hibernate-reclaim`.
    Hibernate(HibernateRow),
    /// A row of `zswap-large-swapin`.
    ZswapLarge(ZswapLargeRow),
    /// A row of `zswap-readahead-bypass`.
    Bypass(BypassRow),
    /// A row of `zswap-shrink-start`.
    Shrink(ShrinkRow),
    /// A row of `mthp-swap-allocator`.
    Allocator(AllocatorRow),
    /// A row of `hibernate-alloc-fastpath`.
    HibernateAlloc(HibernateAllocRow),
}

/// A finished experiment.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The experiment's name.
    pub experiment: &'static str,
    /// Its title.
    pub title: &'static str,
    /// The simulated setup, in words.
    pub setup: String,
    /// The published setup and figures.
    pub published: &'static str,
    /// The scale it ran at.
    pub scale: f64,
    /// The table's rows, one per variant, with every figure.
    pub rows: Vec<Row>,
    /// The comparison with the publication.
    pub verdict: Verdict,
    /// The rows laid out like the publication's table, for reading (not in the JSON).
    #[serde(skip)]
    pub table: Table,
}

/// Runs experiment `name` at `scale` (0 < scale <= 1; 1 is as published).
pub fn run(name: &str, scale: f64) -> Result<Outcome> {
    run_with_progress(name, scale, &())
}

/// [`run`], telling `progress` how many of the experiment's runs have finished.
pub fn run_with_progress(name: &str, scale: f64, progress: &dyn Progress) -> Result<Outcome> {
    if !(scale > 0.0 && scale <= 1.0) {
        bail!("--scale: {scale} is outside (0, 1]");
    }
    let Some(experiment) = EXPERIMENTS.iter().find(|experiment| experiment.info.name == name) else {
        let names: Vec<&str> = list().map(|info| info.name).collect();
        bail!("unknown experiment \"{name}\" (expected one of {})", names.join(", "))
    };
    let Findings { setup, rows, table, verdict } = (experiment.run)(scale, progress)?;
    let Info { name, title, published } = experiment.info;
    Ok(Outcome { experiment: name, title, setup, published, scale, rows, verdict, table })
}
