//! The pi session toolkit from Python: the extension module `pi_session` (PyO3, abi3 from
//! CPython 3.9, built by maturin: `pip install ./bindings/python`).
//!
//! A thin layer over the library crates' public API, with no format logic of its own:
//! - [`session`]: `open(path, pi="1.5")` → `Session` (`context`, `llm`, `tree`, `info`,
//!   `entries`), `pi_session_format::Session`; `info(path)`, the listing entry;
//! - [`validate`](mod@validate): `validate(paths)`, the report of `pi-session validate --format json`;
//! - [`stats`](mod@stats): `stats(paths, by=…)`, the report of `pi-session stats --format json`;
//! - [`tables`](mod@tables): `tables(paths)`, the six tables of `export --format parquet` as
//!   `pyarrow.Table`s;
//! - [`redact`](mod@redact): `redact(path, out=None)` and `redact_bytes(data)`, a session's
//!   secrets replaced (`pi_session_redact::Redactor`), the report of `redact --format json`;
//! - [`writer`]: `SessionWriter`, `pi_session_format::SessionWriter`;
//! - [`error`]: `PiSessionError` and its `code`; [`convert`]: JSON as Python objects;
//!   [`paths`]: the arguments every function shares.
//!
//! The work runs without the GIL; a panic in it reaches Python as PyO3's `PanicException`
//! (it never unwinds into the interpreter).

mod convert;
mod error;
mod paths;
mod redact;
mod session;
mod stats;
mod tables;
mod validate;
mod writer;

use pyo3::prelude::*;

/// Test-only: panics, so that the tests can check that a panic reaches Python as an
/// exception.
#[pyfunction]
fn _panic_for_tests() {
    panic!("a panic raised on purpose by pi_session._panic_for_tests");
}

/// Benchmark-only (`bench/convert.py`): how answers become Python objects: `"direct"` (what
/// the module does), `"loads"` (`json.loads` of the JSON text), or `"text"` (the JSON text as
/// `bytes`).
#[pyfunction]
fn _set_conversion(how: &str) -> PyResult<()> {
    let mode = match how {
        "direct" => convert::DIRECT,
        "loads" => convert::LOADS,
        "text" => convert::TEXT,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "expected \"direct\", \"loads\" or \"text\"",
            ));
        }
    };
    convert::MODE.store(mode, std::sync::atomic::Ordering::Relaxed);
    Ok(())
}

/// The module.
#[pymodule]
fn pi_session(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PiSessionError", py.get_type::<error::PiSessionError>())?;
    m.add("PiSessionWarning", py.get_type::<error::PiSessionWarning>())?;
    m.add_class::<session::Session>()?;
    m.add_class::<writer::SessionWriter>()?;
    m.add_function(wrap_pyfunction!(session::open, m)?)?;
    m.add_function(wrap_pyfunction!(session::loads, m)?)?;
    m.add_function(wrap_pyfunction!(session::info, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate, m)?)?;
    m.add_function(wrap_pyfunction!(stats::stats, m)?)?;
    m.add_function(wrap_pyfunction!(tables::tables, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact, m)?)?;
    m.add_function(wrap_pyfunction!(redact::redact_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_set_conversion, m)?)?;
    Ok(())
}
