//! `pi_session.tables(paths)`: the six tables of `pi-session export --format parquet`
//! (`pi_session_tables`) as `pyarrow.Table`s. `Export::batches` makes them in memory (the
//! export's two passes on every core, the same rows, columns and schemas as its Parquet files,
//! no file written), and their record batches are handed to pyarrow through the Arrow C data
//! interface (`arrow-pyarrow`): pyarrow takes the Rust buffers, nothing is copied.

use crate::error::Failure;
use crate::paths::{paths_of, pi_version, targets, warn};
use arrow_array::RecordBatch;
use arrow_pyarrow::IntoPyArrow;
use pi_session_fs::discover::Walk;
use pi_session_tables::{Export, Table};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What the tables of `paths` are: each table's batches, and what to warn of (files left by
/// the walk, files skipped).
type Tables = (Vec<(Table, Vec<RecordBatch>)>, Vec<String>);

/// `pi_session.tables`.
#[pyfunction]
#[pyo3(signature = (
    paths = None,
    dedupe = true,
    *,
    pi = "1.5",
    validate = false,
    follow = false,
    include_archived = false,
))]
pub(crate) fn tables<'py>(
    py: Python<'py>,
    paths: Option<&Bound<'py, PyAny>>,
    dedupe: bool,
    pi: &str,
    validate: bool,
    follow: bool,
    include_archived: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let pi = pi_version(pi)?;
    let paths = paths_of(paths)?;
    let walk = Walk {
        follow,
        include_archived,
    };
    let (tables, notes) = py.detach(|| -> Result<Tables, Failure> {
        let (targets, mut notes) = targets(paths, walk)?;
        // The directory is not used: the batches stay in memory.
        let mut export = Export::new("");
        export.pi = pi;
        export.validate = validate;
        export.options.no_dedupe = !dedupe;
        let batches = export.batches(&targets);
        notes.extend(
            batches
                .skipped
                .into_iter()
                .map(|(path, error)| format!("{path}: skipped: {error}")),
        );
        Ok((batches.tables, notes))
    })?;
    warn(py, &notes)?;
    let out = PyDict::new(py);
    for (table, batches) in tables {
        let table_py = arrow_pyarrow::Table::try_new(batches, table.schema())
            .map_err(|e| Failure::new("internal", e.to_string()))?
            .into_pyarrow(py)?;
        out.set_item(table.name(), table_py)?;
    }
    Ok(out)
}
