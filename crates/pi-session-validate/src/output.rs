//! The machine-readable report of `pi-session validate --format json`: every file's
//! [`Report`] with its path, the verdict that was asked for, and a summary.
//!
//! The JSON Schema `schemas/validate-report.schema.json` is generated from these types
//! (`cargo xtask schema`). The format is versioned by [`FORMAT_VERSION`]: adding optional
//! members keeps the version; removing or changing the meaning of a member bumps it.

use super::report::{Report, Stats, Verdict};
use pi_session_format::{Dialect, PiVersion};
use pi_session_fs::discover::Target;
use serde::Serialize;

/// The version of the report format, `formatVersion` in the JSON.
pub const FORMAT_VERSION: u32 = 1;

/// Which verdict decides whether a file is valid (and the exit code of `pi-session validate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictMode {
    /// pi opens the file without dropping, rewriting, truncating or refusing anything, and
    /// without crashing or hanging on it (the default).
    PiLoadable,
    /// The file follows the format: no diagnostic of severity `error` (`--strict`).
    Strict,
    /// Only the JSON Schemas were checked: every line is JSON and matches the schema of its
    /// version (`--schema-only`).
    SchemaOnly,
}

impl VerdictMode {
    /// Whether a file with this report is valid under this verdict. For
    /// [`VerdictMode::SchemaOnly`] the report must come from a schema-only validation.
    pub fn accepts(self, report: &Report) -> bool {
        match self {
            VerdictMode::PiLoadable => report.verdict.pi_loadable,
            VerdictMode::Strict | VerdictMode::SchemaOnly => report.verdict.strict,
        }
    }
}

/// The report of `pi-session validate --format json`: one entry per file, in the order the
/// files were given (directories expanded in sorted order), and a summary.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(title = "ValidateReport")]
pub struct ValidateReport {
    /// The version of this report format, [`FORMAT_VERSION`] (1).
    pub format_version: u32,
    /// The program that wrote the report.
    pub tool: Tool,
    /// Whose behaviour the `pi` effects and the pi-loadable verdict describe: `"0.73.1"`,
    /// `"0.87.1"` or `"1.5.2"` (which reads files as 0.87.1 does).
    pub pi: String,
    /// The dialect the files were checked against (`--dialect`): `"omp"` when oh-my-pi's
    /// title slot, header members and entry types were known (every other check, and the
    /// `pi` effects, are pi's); absent for `"pi"`, the default (does pi read them?).
    #[serde(skip_serializing_if = "is_pi")]
    pub dialect: String,
    /// The verdict that decides `valid`.
    pub verdict: VerdictMode,
    /// Every file, in order.
    pub files: Vec<FileReport>,
    /// Totals over the files.
    pub summary: Summary,
}

impl ValidateReport {
    /// A report of `files`, with the summary computed from them.
    pub fn new(tool: Tool, pi: PiVersion, verdict: VerdictMode, files: Vec<FileReport>) -> Self {
        let summary = Summary::of(&files);
        ValidateReport {
            format_version: FORMAT_VERSION,
            tool,
            pi: pi.release().to_string(),
            dialect: Dialect::Pi.name().to_string(),
            verdict,
            files,
            summary,
        }
    }

    /// The report of files checked against `dialect` ([`crate::Options::dialect`]).
    pub fn with_dialect(self, dialect: Dialect) -> Self {
        ValidateReport {
            dialect: dialect.name().to_string(),
            ..self
        }
    }
}

/// Whether the dialect is pi's, which the report leaves unsaid.
fn is_pi(dialect: &str) -> bool {
    dialect == Dialect::Pi.name()
}

/// The name and version of the program that wrote a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Tool {
    /// `pi-session`.
    pub name: String,
    /// Its version (`0.1.0`).
    pub version: String,
}

/// The result for one file.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileReport {
    /// The path as given or found by walking a directory; `-` for standard input.
    pub path: String,
    /// Whether the file is valid under the report's `verdict` (`false` when it could not be
    /// read).
    pub valid: bool,
    /// Why the file could not be read; when present, `verdict` and `stats` are absent and
    /// `diagnostics` is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub read_error: Option<String>,
    /// Both verdicts on the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Verdict")]
    pub verdict: Option<Verdict>,
    /// Counts that describe the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Stats")]
    pub stats: Option<Stats>,
    /// Every problem, ordered by position (problems of the whole file first).
    pub diagnostics: Vec<super::Diagnostic>,
}

impl FileReport {
    /// The entry of a file that was validated.
    pub fn validated(path: impl Into<String>, report: Report, mode: VerdictMode) -> Self {
        FileReport {
            path: path.into(),
            valid: mode.accepts(&report),
            read_error: None,
            verdict: Some(report.verdict),
            stats: Some(report.stats),
            diagnostics: report.diagnostics,
        }
    }

    /// Reads `target` as the command line reads it and validates it with `pi`'s rules and
    /// `mode`'s verdict (pi's own text-size limit; the file's name and place checked where it
    /// is): the entry of a file that cannot be read, or that shrank while it was read, says
    /// so (`readError`) instead of reporting what a torn read gave.
    pub fn of_target(target: &Target, pi: PiVersion, mode: VerdictMode) -> Self {
        FileReport::of_target_in(target, pi, mode, Dialect::Pi, None)
    }

    /// [`FileReport::of_target`] by `dialect`'s rules: with [`Dialect::Omp`], omp's checks
    /// too, its image references looked up in `blobs` (`validate --dialect omp`).
    pub fn of_target_in(
        target: &Target,
        pi: PiVersion,
        mode: VerdictMode,
        dialect: Dialect,
        blobs: Option<&pi_session_format::omp::Blobs>,
    ) -> Self {
        let name = target.display();
        let absolute = target.absolute();
        let validated = target.open().and_then(|input| {
            let options = crate::Options {
                pi,
                path: absolute.as_deref(),
                schema_only: mode == VerdictMode::SchemaOnly,
                max_text_units: crate::PI_MAX_TEXT_UNITS,
                dialect,
                blobs,
                ..crate::Options::default()
            };
            crate::validate_input(&input, &options)
        });
        match validated {
            Ok(report) => FileReport::validated(name, report, mode),
            Err(e) => FileReport::unreadable(name, e.to_string()),
        }
    }

    /// The entry of a file that could not be read.
    pub fn unreadable(path: impl Into<String>, error: impl Into<String>) -> Self {
        FileReport {
            path: path.into(),
            valid: false,
            read_error: Some(error.into()),
            verdict: None,
            stats: None,
            diagnostics: Vec::new(),
        }
    }
}

/// Totals over the files of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Files checked (including those that could not be read).
    pub files: usize,
    /// Files valid under the report's verdict.
    pub valid: usize,
    /// Files not valid under the report's verdict (including those that could not be read).
    pub invalid: usize,
    /// Files that could not be read.
    pub unreadable: usize,
    /// Diagnostics of severity `error`, over all files.
    pub errors: usize,
    /// Diagnostics of severity `warning`, over all files.
    pub warnings: usize,
    /// Diagnostics of severity `info`, over all files.
    pub infos: usize,
}

impl Summary {
    /// The totals of `files`.
    pub fn of(files: &[FileReport]) -> Summary {
        let mut summary = Summary::default();
        for file in files {
            summary.add(file);
        }
        summary
    }

    /// Counts one more file (for reports written file by file).
    pub fn add(&mut self, file: &FileReport) {
        self.files += 1;
        if file.valid {
            self.valid += 1;
        } else {
            self.invalid += 1;
        }
        if file.read_error.is_some() {
            self.unreadable += 1;
        }
        if let Some(stats) = &file.stats {
            self.errors += stats.errors;
            self.warnings += stats.warnings;
            self.infos += stats.infos;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Options, validate};

    #[test]
    fn verdicts_and_summary() {
        let v2 = b"{\"type\":\"session\",\"version\":2,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";
        let report = validate(v2, &Options::default());
        assert!(report.verdict.strict && !report.verdict.pi_loadable);
        let files = vec![
            FileReport::validated("a.jsonl", report.clone(), VerdictMode::Strict),
            FileReport::validated("a.jsonl", report, VerdictMode::PiLoadable),
            FileReport::unreadable("b.jsonl", "not found"),
        ];
        let tool = Tool {
            name: "t".into(),
            version: "0".into(),
        };
        let out = ValidateReport::new(tool, PiVersion::V0_87, VerdictMode::Strict, files);
        assert_eq!(out.pi, "0.87.1");
        assert_eq!(out.dialect, "pi");
        assert_eq!(out.clone().with_dialect(Dialect::Omp).dialect, "omp");
        let omp = serde_json::to_value(out.clone().with_dialect(Dialect::Omp)).unwrap();
        assert_eq!(omp["dialect"], "omp");
        assert_eq!(
            (out.summary.files, out.summary.valid, out.summary.invalid),
            (3, 1, 2)
        );
        assert_eq!(out.summary.unreadable, 1);
        assert_eq!(out.summary.warnings, 2);
        let json = serde_json::to_value(&out).unwrap();
        assert_eq!(json["formatVersion"], 1);
        assert_eq!(json["verdict"], "strict");
        assert!(
            json.get("dialect").is_none(),
            "pi's, the default, is not said"
        );
        assert!(json["files"][2].get("verdict").is_none());
        assert_eq!(json["files"][0]["verdict"]["piLoadable"], false);
    }
}
