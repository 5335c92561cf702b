//! Reading the corpus: cases, their metadata and expected outputs, and the rules they cover.

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// One operation a case can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// `buildSessionContext()` as JSON.
    Context,
    /// `convertToLlm(context.messages)` as JSON.
    Llm,
    /// The file as pi leaves it after opening it.
    Migrate,
    /// `getTree()` as `[{id, type, label?, children}]`.
    Tree,
    /// The listing entry (`buildSessionInfo`).
    Info,
}

impl Op {
    /// Every operation, in protocol order.
    pub const ALL: [Op; 5] = [Op::Context, Op::Llm, Op::Migrate, Op::Tree, Op::Info];

    /// The operation's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Op::Context => "context",
            Op::Llm => "llm",
            Op::Migrate => "migrate",
            Op::Tree => "tree",
            Op::Info => "info",
        }
    }

    /// The name of the expected-output file for a successful run.
    pub fn expected_file(self) -> &'static str {
        match self {
            Op::Context => "context.json",
            Op::Llm => "llm.json",
            Op::Migrate => "migrate.jsonl",
            Op::Tree => "tree.json",
            Op::Info => "info.json",
        }
    }

    /// The name of the file that says the operation must fail.
    pub fn error_file(self) -> String {
        format!("{}.error", self.name())
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `case.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseMeta {
    /// The behaviour the case pins down.
    pub description: String,
    /// Rule ids from `RULES.md`.
    pub rules: Vec<String>,
    /// Leaf id for `context` and `llm`.
    #[serde(default)]
    pub leaf: Option<String>,
    /// `"0.73"` (default: the documented format's pi, 0.73.1) or `"0.87"`; [`Case::args`]
    /// always passes it.
    #[serde(default)]
    pub pi: Option<String>,
    /// The operations checked (default: all).
    #[serde(default)]
    pub ops: Option<Vec<Op>>,
    /// Why the expectation is ours, not pi's (divergence cases only).
    #[serde(default)]
    pub divergence: Option<String>,
    /// The session's dialect: `"pi"` (default) or `"omp"` (oh-my-pi, the cases of `omp/`,
    /// whose expectations omp computed); [`Case::args`] passes `--dialect` when it is not pi.
    #[serde(default)]
    pub dialect: Option<String>,
}

/// What an operation must produce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// Exactly these bytes on stdout, exit status 0.
    Output(Vec<u8>),
    /// Exit status 1 (the reason is for humans).
    Error(String),
}

/// One case of the corpus.
#[derive(Debug, Clone)]
pub struct Case {
    /// `area/name`, the case's id.
    pub id: String,
    /// The case directory.
    pub dir: PathBuf,
    /// `case.json`.
    pub meta: CaseMeta,
}

/// The fixed file modification time given to `info` (2000-01-01T00:00:00.000Z).
pub const INFO_MTIME_MS: i64 = 946_684_800_000;

impl Case {
    /// The area (first path component of the id).
    pub fn area(&self) -> &str {
        self.id.split('/').next().unwrap_or_default()
    }

    /// The operations the case checks.
    pub fn ops(&self) -> Vec<Op> {
        self.meta.ops.clone().unwrap_or_else(|| Op::ALL.to_vec())
    }

    /// The session file.
    pub fn session_path(&self) -> PathBuf {
        self.dir.join("session.jsonl")
    }

    /// The pi whose rules the case follows (`"0.73"` unless `case.json` says otherwise).
    pub fn pi(&self) -> &str {
        self.meta.pi.as_deref().unwrap_or("0.73")
    }

    /// The case's blob store (omp cases whose images are kept as `blob:sha256:` references):
    /// its `blobs/` directory, absolute, when it has one.
    pub fn blobs_dir(&self) -> Option<PathBuf> {
        let dir = self.dir.join("blobs");
        dir.is_dir()
            .then(|| std::path::absolute(&dir).unwrap_or(dir))
    }

    /// The session's dialect (`"pi"` unless `case.json` says otherwise).
    pub fn dialect(&self) -> &str {
        self.meta.dialect.as_deref().unwrap_or("pi")
    }

    /// The command-line arguments of `op` after the operation name. `--pi` is always given:
    /// an implementation's own default need not be the corpus's.
    pub fn args(&self, op: Op) -> Vec<String> {
        let mut args = Vec::new();
        if let (Op::Context | Op::Llm, Some(leaf)) = (op, &self.meta.leaf) {
            args.extend(["--leaf".to_string(), leaf.clone()]);
        }
        args.extend(["--pi".to_string(), self.pi().to_owned()]);
        if self.dialect() != "pi" {
            args.extend(["--dialect".to_string(), self.dialect().to_owned()]);
        }
        if let (Op::Context | Op::Llm, Some(blobs)) = (op, self.blobs_dir()) {
            args.extend(["--blobs".to_string(), blobs.display().to_string()]);
        }
        if op == Op::Info {
            args.extend(["--mtime".to_string(), INFO_MTIME_MS.to_string()]);
        }
        args
    }

    /// The expected result of `op`, if the case has one.
    pub fn expected(&self, op: Op) -> std::io::Result<Option<Expected>> {
        let dir = self.dir.join("expected");
        match std::fs::read(dir.join(op.expected_file())) {
            Ok(bytes) => return Ok(Some(Expected::Output(bytes))),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            Err(_) => {}
        }
        match std::fs::read_to_string(dir.join(op.error_file())) {
            Ok(reason) => Ok(Some(Expected::Error(reason.trim().to_string()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Problems with the case's files: a checked operation without an expected file, or an
    /// expected file for an operation the case does not check (or with no operation at all).
    pub fn structure_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !self.session_path().is_file() {
            problems.push("session.jsonl is missing".to_string());
        }
        if self.meta.rules.is_empty() {
            problems.push("case.json names no rule".to_string());
        }
        let ops = self.ops();
        for op in &ops {
            match self.expected(*op) {
                Ok(Some(_)) => {}
                Ok(None) => problems.push(format!(
                    "no expected/{} or expected/{}",
                    op.expected_file(),
                    op.error_file()
                )),
                Err(e) => problems.push(format!("expected/{}: {e}", op.expected_file())),
            }
        }
        if let Ok(entries) = std::fs::read_dir(self.dir.join("expected")) {
            for entry in entries.filter_map(Result::ok) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let known = Op::ALL
                    .iter()
                    .find(|op| op.expected_file() == name || op.error_file() == name);
                match known {
                    Some(op) if ops.contains(op) => {}
                    Some(op) => problems.push(format!(
                        "expected/{name} exists but the case does not check `{op}`"
                    )),
                    None => problems.push(format!("expected/{name} belongs to no operation")),
                }
            }
        }
        problems
    }
}

/// A problem reading the corpus.
#[derive(Debug)]
pub struct CorpusError(pub String);

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CorpusError {}

/// Reads every case under `cases_dir` (`<area>/<name>/case.json`), sorted by id.
pub fn load_cases(cases_dir: &Path) -> Result<Vec<Case>, CorpusError> {
    let read_dir = |dir: &Path| {
        std::fs::read_dir(dir).map_err(|e| CorpusError(format!("{}: {e}", dir.display())))
    };
    let areas = std::fs::read_dir(cases_dir).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound && cases_dir.is_relative() {
            let cwd = std::env::current_dir()
                .map(|d| format!(" (looked for it in {})", d.display()))
                .unwrap_or_default();
            format!(
                "{cwd}: a relative --corpus is read from the current directory; run from the \
                 checkout of pi-session-format, or give the path of its conformance/cases"
            )
        } else {
            String::new()
        };
        CorpusError(format!("{}: {e}{hint}", cases_dir.display()))
    })?;
    let mut cases = Vec::new();
    for area in areas.filter_map(Result::ok) {
        if !area.path().is_dir() {
            continue;
        }
        for case in read_dir(&area.path())?.filter_map(Result::ok) {
            let dir = case.path();
            if !dir.is_dir() {
                continue;
            }
            let meta_path = dir.join("case.json");
            let text = std::fs::read_to_string(&meta_path).map_err(|e| {
                let hint = if e.kind() == std::io::ErrorKind::NotFound {
                    format!(
                        " (every directory AREA/CASE of a corpus is a case: is {} the \
                         corpus's cases directory?)",
                        cases_dir.display()
                    )
                } else {
                    String::new()
                };
                CorpusError(format!("{}: {e}{hint}", meta_path.display()))
            })?;
            let meta: CaseMeta = serde_json::from_str(&text)
                .map_err(|e| CorpusError(format!("{}: {e}", meta_path.display())))?;
            let id = format!(
                "{}/{}",
                area.file_name().to_string_lossy(),
                case.file_name().to_string_lossy()
            );
            cases.push(Case { id, dir, meta });
        }
    }
    cases.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(cases)
}

/// Rule ids defined in `RULES.md`: every `**ID**` at the start of a list item.
pub fn load_rules(rules_md: &Path) -> Result<BTreeMap<String, String>, CorpusError> {
    let text = std::fs::read_to_string(rules_md)
        .map_err(|e| CorpusError(format!("{}: {e}", rules_md.display())))?;
    let mut rules = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("- **") else {
            continue;
        };
        let Some((id, tail)) = rest.split_once("**") else {
            continue;
        };
        rules.insert(
            id.to_string(),
            tail.trim_start_matches([' ', '—', '-', ':'])
                .trim()
                .to_string(),
        );
    }
    Ok(rules)
}

/// What a rule's text says when another corpus pins it (a whole directory's list, say), so
/// that no case has to name it.
pub const PINNED_ELSEWHERE: &str = "Pinned by `conformance/";

/// Coverage problems: rules without a case (but those [`PINNED_ELSEWHERE`]), and cases
/// naming unknown rules.
pub fn coverage_problems(rules: &BTreeMap<String, String>, cases: &[Case]) -> Vec<String> {
    let mut used = BTreeSet::new();
    let mut problems = Vec::new();
    for case in cases {
        for rule in &case.meta.rules {
            if rules.contains_key(rule) {
                used.insert(rule.as_str());
            } else {
                problems.push(format!(
                    "{}: names rule {rule}, which RULES.md does not define",
                    case.id
                ));
            }
        }
    }
    for (rule, text) in rules {
        if !used.contains(rule.as_str()) && !text.contains(PINNED_ELSEWHERE) {
            problems.push(format!("rule {rule} has no case"));
        }
    }
    problems
}
