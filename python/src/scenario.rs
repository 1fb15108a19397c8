//! `swapsim.Scenario` on the native side: loading, editing and running one scenario.
//!
//! A scenario object is immutable: `set` and `with_seed` return a new one, as the
//! library's builder methods do, so a notebook cell run twice never edits twice.

use pyo3::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

use crate::guard::{self, to_py};

/// A scenario as written, with any edits applied: not yet validated.
#[pyclass(frozen, name = "Scenario", module = "swapsim._native")]
pub(crate) struct PyScenario {
    pub(crate) inner: swapsim::Scenario,
}

#[pymethods]
impl PyScenario {
    /// The scenario with `key` set to `value`, the text after `=` of `swapsim run --set
    /// key=value` (read as a TOML value when it is one, else as a string).
    fn set(&self, key: &str, value: &str) -> PyResult<PyScenario> {
        let inner = guard::caught(|| self.inner.clone().set(key, value)).map_err(to_py)?;
        Ok(PyScenario { inner })
    }

    /// The scenario with its root seed replaced (`swapsim run --seed`).
    fn with_seed(&self, seed: u64) -> PyScenario {
        PyScenario { inner: self.inner.clone().with_seed(seed) }
    }

    /// How messages and reports name the scenario: its path as given, or `<inline>`.
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// Validates the scenario (and opens its trace) without running it.
    fn check(&self, py: Python<'_>) -> PyResult<()> {
        let scenario = self.inner.clone();
        guard::call(py, move || scenario.prepare().map(drop))
    }

    /// Runs the scenario once, at `seed` when given; the JSON document of `swapsim run
    /// --format json`, `host` (wall-clock figures) included.
    #[pyo3(signature = (seed=None))]
    fn run(&self, py: Python<'_>, seed: Option<u64>) -> PyResult<String> {
        let mut scenario = self.inner.clone();
        if let Some(seed) = seed {
            scenario = scenario.with_seed(seed);
        }
        guard::call(py, move || {
            let prepared = scenario.prepare()?;
            let started = Instant::now();
            let (report, trace) = prepared.run_traced()?;
            let host = swapsim::Host::measure(started.elapsed(), &report);
            let doc =
                swapsim::RunDocument::new(&prepared, &report).with_trace(trace.as_ref()).with_host(host);
            Ok(serde_json::to_string(&doc)?)
        })
    }

    fn __repr__(&self) -> String {
        format!("swapsim.Scenario({:?})", self.inner.name())
    }
}

/// Reads a scenario file; relative paths in it are relative to its directory.
#[pyfunction]
pub(crate) fn load(path: PathBuf) -> PyResult<PyScenario> {
    let inner = guard::caught(|| swapsim::Scenario::load(&path)).map_err(to_py)?;
    Ok(PyScenario { inner })
}

/// Parses a scenario from TOML text, named `name` in messages; relative paths in it
/// resolve against `base_dir` (the current directory by default).
#[pyfunction]
#[pyo3(signature = (text, name=None, base_dir=None))]
pub(crate) fn from_toml(text: &str, name: Option<String>, base_dir: Option<PathBuf>) -> PyResult<PyScenario> {
    let inner = guard::caught(|| match (name, base_dir) {
        (None, None) => swapsim::Scenario::from_toml(text),
        (name, base_dir) => swapsim::Scenario::from_toml_named(
            text,
            name.unwrap_or_else(|| "<inline>".to_string()),
            base_dir.unwrap_or_default(),
        ),
    })
    .map_err(to_py)?;
    Ok(PyScenario { inner })
}

/// A JSON value (a number, a boolean, a list, an object) as TOML text, the form an edit
/// takes: `{"preset": "nvme"}` becomes `{ preset = "nvme" }`.
#[pyfunction]
pub(crate) fn toml_value(json: &str) -> PyResult<String> {
    let value: serde_json::Value = serde_json::from_str(json)
        .map_err(|err| to_py(anyhow::anyhow!("{json} is not a JSON value: {err}")))?;
    if value.is_null() {
        return Err(to_py(anyhow::anyhow!("None is not a setting's value")));
    }
    let value = toml::Value::try_from(&value)
        .map_err(|err| to_py(anyhow::anyhow!("{json} has no TOML form: {err}")))?;
    Ok(value.to_string())
}
