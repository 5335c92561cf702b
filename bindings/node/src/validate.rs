//! `validate(path | paths, options)` (`dialect`, `blobs` as `--dialect`, `--blobs`): the report `pi-session validate --format json` prints,
//! the library's `ValidateReport` serialized by its own serde derive. Paths are taken as the
//! command line takes them (`pi_session_fs::discover`: a directory walked for `*.jsonl`, none
//! for pi's session directory); each file is read (`Input`), validated, and checked not to
//! have changed while it was read, as the command does.

use crate::error::{self, Result, guard_text};
use napi_derive::napi;
use pi_session_format::Dialect;
use pi_session_format::omp::Blobs;
use pi_session_fs::discover::{self, Walk};
use pi_session_fs::omp_store::OmpStore;
use pi_session_validate::{FileReport, Tool, ValidateReport, VerdictMode};
use std::path::PathBuf;

/// The name the reports give as the program that wrote them.
const TOOL: &str = "pi-session-node";

/// The report of `paths` as JSON text (`schemas/validate-report.schema.json`). The arguments
/// are `validate()`'s options, in index.js's order.
#[allow(clippy::too_many_arguments)]
#[napi(js_name = "validateJson")]
pub fn validate_json(
    paths: Vec<String>,
    pi: Option<String>,
    strict: Option<bool>,
    schema_only: Option<bool>,
    follow: Option<bool>,
    include_archived: Option<bool>,
    dialect: Option<String>,
    blobs: Option<String>,
) -> Result<String> {
    guard_text("the report", || {
        let pi = crate::pi_version(pi.as_deref())?;
        // pi's rules unless told (does pi read this file?), as `pi-session validate`.
        let dialect = crate::session::dialect(dialect.as_deref(), Some(Dialect::Pi))?
            .ok_or_else(|| {
                error::failure(
                    "ERR_INVALID_ARG_VALUE",
                    "options.dialect: validate checks by pi's rules or omp's: use \"pi\" or \"omp\"",
                )
            })?;
        let blobs = (dialect == Dialect::Omp)
            .then(|| blobs.map(Into::into).or_else(OmpStore::existing_blobs_dir))
            .flatten()
            .map(Blobs::new);
        let schema_only = schema_only.unwrap_or(false);
        let mode = if schema_only {
            VerdictMode::SchemaOnly
        } else if strict.unwrap_or(false) {
            VerdictMode::Strict
        } else {
            VerdictMode::PiLoadable
        };
        let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
        let walk = Walk {
            follow: follow.unwrap_or(false),
            include_archived: include_archived.unwrap_or(false),
        };
        let collected =
            discover::collect(&paths, walk).map_err(|e| error::io_error(&e, "validate"))?;
        let files = collected
            .targets
            .iter()
            .map(|target| FileReport::of_target_in(target, pi, mode, dialect, blobs.as_ref()))
            .collect();
        let tool = Tool {
            name: TOOL.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        };
        let report = ValidateReport::new(tool, pi, mode, files).with_dialect(dialect);
        serde_json::to_string(&report).map_err(|e| error::failure("ERR_PANIC", e.to_string()))
    })
}
