//! `stats(paths, { by, since, until, dedupe, dialect })`: the report `pi-session stats --format json`
//! prints, the library's `StatsReport` (`pi_session_format::stats::report`). Paths are taken
//! as the command line takes them (`pi_session_fs::discover`); each file is read, counted
//! and checked not to have shrunk while it was read, on every core; a file that is not a
//! session is in the report's `errors`, the others still counted.

use crate::error::{self, Result, guard_text};
use napi_derive::napi;
use pi_session_format::stats::ledger::{GroupBy, Options};
use pi_session_format::stats::report::{StatsReport, TimeRange};
use pi_session_fs::discover::{self, Walk};
use std::path::PathBuf;

/// The report of `paths` as JSON text.
#[allow(clippy::too_many_arguments)]
#[napi(js_name = "statsJson")]
pub fn stats_json(
    paths: Vec<String>,
    pi: Option<String>,
    by: Option<String>,
    since: Option<String>,
    until: Option<String>,
    dedupe: Option<bool>,
    follow: Option<bool>,
    include_archived: Option<bool>,
    dialect: Option<String>,
) -> Result<String> {
    guard_text("the report", || {
        let pi = crate::pi_version(pi.as_deref())?;
        // Each file's own unless told, as `pi-session stats`.
        let dialect = crate::session::dialect(dialect.as_deref(), None)?;
        let by = match by.as_deref() {
            None => GroupBy::default(),
            Some(name) => name
                .parse::<GroupBy>()
                .map_err(|e| error::failure("ERR_INVALID_ARG_VALUE", format!("options.by: {e}")))?,
        };
        let range = TimeRange::parse(since.as_deref(), until.as_deref()).map_err(|e| {
            error::failure(
                "ERR_INVALID_ARG_VALUE",
                format!("options.{}: {e}", e.edge().name()),
            )
        })?;
        let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
        let walk = Walk {
            follow: follow.unwrap_or(false),
            include_archived: include_archived.unwrap_or(false),
        };
        let collected =
            discover::collect(&paths, walk).map_err(|e| error::io_error(&e, "stats"))?;
        let options = Options {
            by,
            since_ms: range.since_ms,
            until_ms: range.until_ms,
            no_dedupe: !dedupe.unwrap_or(true),
        };
        Ok(StatsReport::of_targets(&collected.targets, pi, dialect, options).to_json())
    })
}
