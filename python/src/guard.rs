//! The one way library calls are made: the GIL released, panics caught, errors turned into
//! `SwapsimError`.

use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::SwapsimError;

/// `error` as a `SwapsimError` carrying its whole context chain.
pub(crate) fn to_py(error: anyhow::Error) -> PyErr {
    SwapsimError::new_err(format!("{error:#}"))
}

/// Runs `work` without the GIL, so that other Python threads run meanwhile, and turns its
/// error or its panic into a `SwapsimError`.
pub(crate) fn call<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    F: FnOnce() -> anyhow::Result<T> + Send,
    T: Send,
{
    py.detach(|| caught(work)).map_err(to_py)
}

/// `work`'s result, with a panic turned into an error saying it is a bug.
pub(crate) fn caught<T>(work: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|text| text.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_string());
            Err(anyhow::anyhow!(
                "internal error (a bug in swapsim, not bad input; please report it with the scenario and seed): \
                 {message}"
            ))
        }
    }
}
