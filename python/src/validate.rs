//! `swapsim.validate` on the native side: real-kernel cases replayed and compared.

use anyhow::bail;
use pyo3::prelude::*;
use std::path::PathBuf;
use swapsim_core::config::LruModel;

use crate::guard;

/// Replays the cases of `dir` (only those in `cases`, when given) under `lru` ("classic",
/// the validation, or "mglru") at seeds 1..=`seeds` (the library's default when `None`),
/// and returns the document of `swapsim validate --format json`.
#[pyfunction]
#[pyo3(signature = (dir, cases=Vec::new(), lru="classic", seeds=None))]
pub(crate) fn validate(
    py: Python<'_>,
    dir: PathBuf,
    cases: Vec<String>,
    lru: &str,
    seeds: Option<u64>,
) -> PyResult<String> {
    let lru = lru.to_string();
    guard::call(py, move || {
        let model = lru_model(&lru)?;
        let seeds = seeds.unwrap_or(swapsim::validate::SEEDS);
        let validation = swapsim::validate::run_lru(&dir, &cases, model, seeds, &())?;
        Ok(serde_json::to_string(&validation)?)
    })
}

/// The scenario (TOML text) that case `case` of `dir` is replayed with under `lru` at
/// `seed`, as `swapsim validate --case CASE --scenario-of-seed SEED` prints it.
#[pyfunction]
#[pyo3(signature = (dir, case, seed=1, lru="classic"))]
pub(crate) fn case_scenario(
    py: Python<'_>,
    dir: PathBuf,
    case: String,
    seed: u64,
    lru: &str,
) -> PyResult<String> {
    let lru = lru.to_string();
    guard::call(py, move || swapsim::validate::case_scenario(&dir, &case, lru_model(&lru)?, seed))
}

/// The LRU model named `lru`: the kernel's two, which validation replays with.
fn lru_model(lru: &str) -> anyhow::Result<LruModel> {
    Ok(match lru {
        "classic" => LruModel::Classic,
        "mglru" => LruModel::Mglru,
        other => bail!("lru={other:?}: validate replays with \"classic\" or \"mglru\""),
    })
}
