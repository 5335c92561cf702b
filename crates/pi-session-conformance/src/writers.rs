//! The writer half of the suite (`conformance/writers/`): scenarios, the files pi wrote for
//! them, and the three levels a writer's file is judged at.
//!
//! A writer under test is a command: it gets a scenario's script on stdin and `--pi PROFILE
//! OUT` as its last arguments, and writes the session file to `OUT` (or nothing, when pi would
//! have written nothing: no conversation yet). Its file is then judged at three levels,
//! reported separately:
//! - **exact**: byte for byte the file pi wrote;
//! - **equivalent**: the same lines as JSON values (key order and number spelling aside);
//! - **loadable**: strict-valid, loadable by pi, and the same context as pi's file up to ids
//!   and times.

use crate::diff::describe;
use crate::protocol::{self, Outcome};
use crate::renamed::{self, ScriptValues};
use pi_session_format::write::WriteProfile;
use pi_session_format::{Leaf, Session};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One scenario: a script and the profiles it is written with.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The directory's name.
    pub name: String,
    /// The directory.
    pub dir: PathBuf,
    /// What the scenario shows.
    pub description: String,
    /// The profiles (pi versions) it has expected files for.
    pub profiles: Vec<WriteProfile>,
    /// The operations (NDJSON).
    pub script: String,
    /// Where pi-session's own writer differs from pi on purpose (`case.json`'s
    /// `divergences`: profile → why): those runs of our writer are judged loadable only.
    pub divergences: Vec<(WriteProfile, String)>,
    /// Why the script holds input only JavaScript strings can hold (`case.json`'s
    /// `javascriptOnly`: a lone surrogate), which a driver whose JSON parser needs valid
    /// Unicode cannot read; such inputs are kept in scenarios of their own.
    pub javascript_only: Option<String>,
}

impl Scenario {
    /// Why pi-session's writer differs from pi for `profile`, if it does on purpose.
    pub fn divergence(&self, profile: WriteProfile) -> Option<&str> {
        self.divergences
            .iter()
            .find(|(p, _)| *p == profile)
            .map(|(_, why)| why.as_str())
    }
}

/// What pi wrote for a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// This file.
    File(Vec<u8>),
    /// No file (no conversation yet).
    Nothing,
}

/// The levels a written file is judged at, weakest last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// Byte for byte.
    Exact,
    /// Byte for byte up to ids and times ([`crate::renamed`]).
    Renamed,
    /// The same JSON values, line by line.
    Equivalent,
    /// Strict-valid, pi-loadable, the same context.
    Loadable,
}

impl Level {
    /// Every level, strictest first.
    pub const ALL: [Level; 4] = [
        Level::Exact,
        Level::Renamed,
        Level::Equivalent,
        Level::Loadable,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::Renamed => "renamed",
            Level::Equivalent => "equivalent",
            Level::Loadable => "loadable",
        }
    }

    /// What it means, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            Level::Exact => "byte for byte pi's file",
            Level::Renamed => "exact up to ids and times",
            Level::Equivalent => "the same lines as JSON values",
            Level::Loadable => "strict-valid, pi-loadable, the same context up to ids and times",
        }
    }
}

/// The verdict of one level: `Err` says why it failed.
pub type LevelVerdict = Result<(), String>;

/// A file judged at every level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// Byte for byte.
    pub exact: LevelVerdict,
    /// Byte for byte up to ids and times.
    pub renamed: LevelVerdict,
    /// The same JSON values.
    pub equivalent: LevelVerdict,
    /// Strict-valid, loadable, the same context.
    pub loadable: LevelVerdict,
    /// Strict-valid and loadable, whatever the context (how a deliberate divergence of
    /// pi-session's own writer is judged: where pi loses entries, the contexts differ).
    pub valid: LevelVerdict,
}

impl Judgement {
    /// The verdict at `level`.
    pub fn at(&self, level: Level) -> &LevelVerdict {
        match level {
            Level::Exact => &self.exact,
            Level::Renamed => &self.renamed,
            Level::Equivalent => &self.equivalent,
            Level::Loadable => &self.loadable,
        }
    }

    fn all(why: String) -> Judgement {
        Judgement {
            exact: Err(why.clone()),
            renamed: Err(why.clone()),
            equivalent: Err(why.clone()),
            loadable: Err(why.clone()),
            valid: Err(why),
        }
    }
}

/// Reads every scenario under `dir` (directories holding `script.ndjson`), sorted by name.
pub fn load_scenarios(dir: &Path) -> Result<Vec<Scenario>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(script) = std::fs::read_to_string(path.join("script.ndjson")) else {
            continue;
        };
        let case_path = path.join("case.json");
        let text = std::fs::read_to_string(&case_path)
            .map_err(|e| format!("{}: {e}", case_path.display()))?;
        let meta: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", case_path.display()))?;
        let description = meta["description"].as_str().unwrap_or_default().to_owned();
        let profiles: Result<Vec<WriteProfile>, String> = meta["profiles"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        p.as_str()
                            .unwrap_or_default()
                            .parse::<WriteProfile>()
                            .map_err(|e| e.to_string())
                    })
                    .collect()
            })
            .unwrap_or_else(|| Ok(Vec::new()));
        let profiles = profiles.map_err(|e| format!("{}: {e}", case_path.display()))?;
        if description.is_empty() || profiles.is_empty() {
            return Err(format!(
                "{}: needs a description and a non-empty list of profiles",
                case_path.display()
            ));
        }
        let mut divergences = Vec::new();
        if let Some(map) = meta["divergences"].as_object() {
            for (profile, why) in map {
                let profile = profile
                    .parse::<WriteProfile>()
                    .map_err(|e| format!("{}: divergences: {e}", case_path.display()))?;
                divergences.push((profile, why.as_str().unwrap_or_default().to_owned()));
            }
        }
        let javascript_only = meta["javascriptOnly"].as_str().map(str::to_owned);
        out.push(Scenario {
            name: entry.file_name().to_string_lossy().into_owned(),
            dir: path,
            description,
            profiles,
            script,
            divergences,
            javascript_only,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

impl Scenario {
    /// The expected file of `profile` (`expected/pi-P.jsonl`, or `expected/pi-P.none`).
    pub fn expected_path(&self, profile: WriteProfile, written: bool) -> PathBuf {
        let ext = if written { "jsonl" } else { "none" };
        self.dir
            .join(format!("expected/pi-{}.{ext}", profile.short_name()))
    }

    /// What pi wrote with `profile`.
    pub fn expected(&self, profile: WriteProfile) -> Result<Expected, String> {
        let file = self.expected_path(profile, true);
        if file.is_file() {
            return std::fs::read(&file)
                .map(Expected::File)
                .map_err(|e| format!("{}: {e}", file.display()));
        }
        if self.expected_path(profile, false).is_file() {
            return Ok(Expected::Nothing);
        }
        Err(format!(
            "{}: no expected file for pi {profile} (run `cargo xtask bless writers`)",
            self.dir.display()
        ))
    }
}

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// The same lines as JSON values, as the reader's equivalent level judges them
/// ([`crate::level`]: key order, number spelling and escapes aside), every line a value.
fn equivalent(expected: &[u8], actual: &[u8]) -> LevelVerdict {
    if !actual.ends_with(b"\n") {
        return Err("the file does not end with a newline".into());
    }
    if let Some(n) = lines(actual)
        .iter()
        .position(|l| l.iter().all(u8::is_ascii_whitespace))
    {
        return Err(format!("line {} is blank; pi writes none", n + 1));
    }
    let judgement = crate::level::judge(expected, actual, true, false);
    if judgement.level.is_some() {
        return Ok(());
    }
    if let Some(why) = judgement.not_json {
        return Err(why);
    }
    let differences: Vec<String> = judgement
        .differences
        .iter()
        .map(ToString::to_string)
        .collect();
    Err(format!("differs as JSON:\n  {}", differences.join("\n  ")))
}

fn context_json(bytes: &[u8], profile: WriteProfile) -> Result<Vec<u8>, String> {
    let session = Session::from_bytes(bytes, profile.reading()).map_err(|e| e.to_string())?;
    let context = session.context(Leaf::Current).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    context.write_json(&mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// Strict-valid, pi-loadable, and the same context as pi's file up to ids and times (a
/// writer without hooks builds the same context with other ids and times).
fn loadable(
    expected: &Expected,
    actual: &[u8],
    profile: WriteProfile,
    values: &ScriptValues,
) -> LevelVerdict {
    valid(actual, profile)?;
    if let Expected::File(want) = expected {
        let (want, got) = (context_json(want, profile)?, context_json(actual, profile)?);
        if let Err(diff) = renamed::judge(&want, &got, values) {
            return Err(format!("the context differs from pi's file's:\n{diff}"));
        }
    }
    Ok(())
}

fn valid(actual: &[u8], profile: WriteProfile) -> LevelVerdict {
    let report = pi_session_validate::validate(
        actual,
        &pi_session_validate::Options {
            pi: profile.reading(),
            ..pi_session_validate::Options::default()
        },
    );
    if !(report.verdict.strict && report.verdict.pi_loadable) {
        let first: Vec<String> = report
            .diagnostics
            .iter()
            .take(3)
            .map(|d| match &d.location {
                Some(at) => format!("  line {}:{}: {} {}", at.line, at.column, d.code, d.message),
                None => format!("  {} {}", d.code, d.message),
            })
            .collect();
        return Err(format!(
            "not strict-valid for pi {profile}:\n{}",
            first.join("\n")
        ));
    }
    Ok(())
}

/// Judges `actual` (the file written, `None` for none) against what pi wrote for `script`.
pub fn judge(
    expected: &Expected,
    actual: Option<&[u8]>,
    profile: WriteProfile,
    script: &str,
) -> Judgement {
    match (expected, actual) {
        (Expected::Nothing, None) => Judgement {
            exact: Ok(()),
            renamed: Ok(()),
            equivalent: Ok(()),
            loadable: Ok(()),
            valid: Ok(()),
        },
        (Expected::File(_), None) => Judgement::all("no file written; pi wrote one".into()),
        (Expected::Nothing, Some(actual)) => {
            let why = "a file was written; pi writes none until the conversation starts";
            Judgement {
                exact: Err(why.into()),
                renamed: Err(why.into()),
                equivalent: Err(why.into()),
                loadable: loadable(expected, actual, profile, &ScriptValues::of(script)),
                valid: valid(actual, profile),
            }
        }
        (Expected::File(want), Some(actual)) => {
            let values = ScriptValues::of(script);
            let exact = match describe(want, actual) {
                None => Ok(()),
                Some(diff) => Err(diff),
            };
            let renamed = match &exact {
                Ok(()) => Ok(()),
                Err(_) => renamed::judge(want, actual, &values).map(|_| ()),
            };
            Judgement {
                exact,
                renamed,
                equivalent: equivalent(want, actual),
                loadable: loadable(expected, actual, profile, &values),
                valid: valid(actual, profile),
            }
        }
    }
}

/// The result of one scenario with one profile.
#[derive(Debug, Clone)]
pub struct ScenarioResult {
    /// The scenario's name.
    pub scenario: String,
    /// The profile.
    pub profile: WriteProfile,
    /// The judgement (every level failed when the writer did not run properly).
    pub judgement: Judgement,
    /// The scenario's deliberate divergence of pi-session's writer for this profile, if any.
    pub divergence: Option<String>,
    /// The writer does not do an operation of the script (exit status
    /// [`protocol::UNSUPPORTED`]), with what it said on stderr: the run is neither passed
    /// nor failed.
    pub unsupported: Option<String>,
    /// The scenario's JavaScript-only input, if it has some ([`Scenario::javascript_only`]).
    pub javascript_only: Option<String>,
}

/// Runs `implementation` on `scenario` with `profile` and judges its file.
pub fn check(
    scenario: &Scenario,
    profile: WriteProfile,
    implementation: &str,
    timeout: Duration,
) -> ScenarioResult {
    let result = |judgement| ScenarioResult {
        scenario: scenario.name.clone(),
        profile,
        judgement,
        divergence: scenario.divergence(profile).map(str::to_owned),
        unsupported: None,
        javascript_only: scenario.javascript_only.clone(),
    };
    let expected = match scenario.expected(profile) {
        Ok(e) => e,
        Err(e) => return result(Judgement::all(e)),
    };
    let out = scratch_file(&scenario.name, profile);
    let _ = std::fs::remove_file(&out);
    let args = vec![
        "--pi".to_owned(),
        profile.short_name().to_owned(),
        out.to_string_lossy().into_owned(),
    ];
    let outcome = protocol::run(implementation, &args, scenario.script.as_bytes(), timeout);
    let judgement = match outcome {
        Outcome::Output(_) => {
            let written = std::fs::read(&out).ok();
            judge(&expected, written.as_deref(), profile, &scenario.script)
        }
        Outcome::Rejected(stderr) => {
            Judgement::all(format!("the writer failed (exit 1): {stderr}"))
        }
        Outcome::Unsupported(stderr) => {
            let _ = std::fs::remove_file(&out);
            let why = format!("unsupported: {}", stderr.trim());
            return ScenarioResult {
                unsupported: Some(stderr.trim().to_owned()),
                ..result(Judgement::all(why))
            };
        }
        Outcome::Crashed(why) => Judgement::all(format!("the writer crashed: {why}")),
        Outcome::TimedOut => Judgement::all(format!("no exit within {timeout:?}")),
        Outcome::TooLarge { stream, limit } => {
            Judgement::all(format!("more than {limit} bytes on {stream}"))
        }
    };
    let _ = std::fs::remove_file(&out);
    result(judgement)
}

fn scratch_file(scenario: &str, profile: WriteProfile) -> PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "pi-session-writer-{}-{n}-{scenario}-{}.jsonl",
        std::process::id(),
        profile.short_name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equivalent_ignores_key_order_and_number_spelling_only() {
        let want = b"{\"a\":1,\"b\":[1e21]}\n";
        assert!(equivalent(want, b"{\"b\":[1000000000000000000000.0],\"a\":1.0}\n").is_ok());
        assert!(equivalent(want, b"{\"a\":1,\"b\":[1e21]}").is_err());
        assert!(equivalent(want, b"{\"a\":2,\"b\":[1e21]}\n").is_err());
        assert!(equivalent(want, b"{\"a\":1,\"b\":[1e21]}\n{}\n").is_err());
    }
}
