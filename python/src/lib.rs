//! The Python extension module `swapsim._native`: the swapsim library called from Python.
//!
//! Everything crosses the boundary as text: scenarios go in as TOML text or a path, edits
//! as the `key=value` text of `swapsim run --set`, and results come back as the JSON
//! documents `swapsim ... --format json` prints, which the pure-Python package (`swapsim/`)
//! turns into plain dicts with `json.loads`. The documents therefore cannot drift from the
//! command's: both serialise the same library types with serde.
//!
//! Errors: a library error becomes `swapsim.SwapsimError` with the whole context chain as
//! its message (`scenario <inline>: --set swap.page_clustr=3: unknown field ...`), as the
//! command prints it. A panic is a broken invariant in the simulator, never bad input; it
//! is caught before it reaches Python and raised as a `SwapsimError` saying so, so that a
//! notebook's kernel survives it. Runs, sweeps and validation release the GIL.

use pyo3::prelude::*;

mod guard;
mod scenario;
mod sweep;
mod validate;

pyo3::create_exception!(
    swapsim,
    SwapsimError,
    pyo3::exceptions::PyException,
    "An error from the swapsim library: bad input (its message names the file, line or field) or a failed run."
);

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("SwapsimError", module.py().get_type::<SwapsimError>())?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<scenario::PyScenario>()?;
    module.add_function(wrap_pyfunction!(scenario::load, module)?)?;
    module.add_function(wrap_pyfunction!(scenario::from_toml, module)?)?;
    module.add_function(wrap_pyfunction!(scenario::toml_value, module)?)?;
    module.add_function(wrap_pyfunction!(sweep::sweep, module)?)?;
    module.add_function(wrap_pyfunction!(validate::validate, module)?)?;
    module.add_function(wrap_pyfunction!(validate::case_scenario, module)?)?;
    Ok(())
}
