//! `pi_session.redact(path, out=None, …)` and `pi_session.redact_bytes(data, …)`: a session's
//! secrets replaced by `[REDACTED:rule:h8]` (`pi_session_redact::Redactor`), the result still
//! a session pi loads and resumes; the report as `pi-session redact --format json` gives it
//! for a file (rules, places, counts: never a secret). `out` is written as the command's `-o`
//! writes it (atomically, never over a file unless `force`); without it nothing is written.

use crate::convert::from_json;
use crate::error::Failure;
use pi_session_fs::input::Input;
use pi_session_redact::{Key, Options, Redactor, Report};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;

/// The redactor of the arguments: named values (and those of `.env` files), the key.
fn redactor(
    secrets: Vec<String>,
    secrets_from: Vec<PathBuf>,
    key: Option<&[u8]>,
    aggressive: bool,
    strip_signatures: bool,
    strip_images: bool,
) -> PyResult<Redactor> {
    let mut options = Options {
        named: Vec::new(),
        aggressive,
        strip_signatures,
        strip_images,
    };
    for value in secrets {
        options
            .add_secret(value.as_bytes())
            .map_err(|e| PyValueError::new_err(format!("secrets: {e}")))?;
    }
    for path in secrets_from {
        let text = std::fs::read(&path).map_err(|e| {
            Failure::new(
                crate::error::io_code(&e),
                format!("secrets_from {}: {e}", path.display()),
            )
        })?;
        options.add_env_file(&text);
    }
    let key = match key {
        Some(bytes) => Key::from_bytes(bytes),
        None => Key::random(),
    }
    .map_err(|e| PyValueError::new_err(format!("key: {e}")))?;
    Ok(Redactor::new(options, key))
}

fn report_json(report: &Report) -> Result<Vec<u8>, Failure> {
    serde_json::to_vec(report).map_err(|e| Failure::new("internal", e.to_string()))
}

/// `pi_session.redact(path, out=None, *, force=False, secrets=(), secrets_from=(), key=None,
/// aggressive=False, strip_signatures=False, strip_images=False) -> dict`.
#[pyfunction]
#[pyo3(signature = (path, out=None, *, force=false, secrets=Vec::new(), secrets_from=Vec::new(), key=None, aggressive=false, strip_signatures=false, strip_images=false))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
pub(crate) fn redact<'py>(
    py: Python<'py>,
    path: PathBuf,
    out: Option<PathBuf>,
    force: bool,
    secrets: Vec<String>,
    secrets_from: Vec<PathBuf>,
    key: Option<Vec<u8>>,
    aggressive: bool,
    strip_signatures: bool,
    strip_images: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let redactor = redactor(
        secrets,
        secrets_from,
        key.as_deref(),
        aggressive,
        strip_signatures,
        strip_images,
    )?;
    let path = crate::paths::checked(&path)?;
    let json = py.detach(|| -> Result<Vec<u8>, Failure> {
        let input = Input::open(&path).map_err(|e| {
            Failure::new(
                crate::error::io_code(&e),
                format!("{}: {e}", path.display()),
            )
        })?;
        let release = |range| input.release(range);
        let report = match &out {
            None => redactor
                .redact_releasing(input.bytes(), &mut std::io::sink(), &release)
                .map_err(|e| Failure::new("io", e.to_string()))?,
            Some(out) => {
                let mut report = None;
                pi_session_fs::write_new_with(out, force, |w| {
                    report = Some(redactor.redact_releasing(input.bytes(), w, &release)?);
                    input.verify()
                })
                .map_err(|e| Failure::new("write", e))?;
                report.ok_or_else(|| Failure::new("internal", "nothing was redacted"))?
            }
        };
        input
            .verify()
            .map_err(|e| Failure::new("changed", format!("{}: {e}", path.display())))?;
        report_json(&report)
    })?;
    from_json(py, json)
}

/// `pi_session.redact_bytes(data, *, secrets=(), secrets_from=(), key=None, aggressive=False,
/// strip_signatures=False, strip_images=False) -> tuple[bytes, dict]`.
#[pyfunction]
#[pyo3(signature = (data, *, secrets=Vec::new(), secrets_from=Vec::new(), key=None, aggressive=false, strip_signatures=false, strip_images=false))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
pub(crate) fn redact_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    secrets: Vec<String>,
    secrets_from: Vec<PathBuf>,
    key: Option<Vec<u8>>,
    aggressive: bool,
    strip_signatures: bool,
    strip_images: bool,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyAny>)> {
    let redactor = redactor(
        secrets,
        secrets_from,
        key.as_deref(),
        aggressive,
        strip_signatures,
        strip_images,
    )?;
    let (redacted, json) = py.detach(|| -> Result<(Vec<u8>, Vec<u8>), Failure> {
        let mut redacted = Vec::with_capacity(data.len());
        let report = redactor
            .redact(data, &mut redacted)
            .map_err(|e| Failure::new("io", e.to_string()))?;
        Ok((redacted, report_json(&report)?))
    })?;
    Ok((PyBytes::new(py, &redacted), from_json(py, json)?))
}
