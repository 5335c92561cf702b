//! `pi-session conformance writer` (judge a session writer over the writer corpus at the
//! exact, equivalent and loadable levels) and `pi-session conformance write` (our own
//! writer as such a command).

use pi_session_conformance::script;
use pi_session_conformance::writers::{self, Level, ScenarioResult};
use pi_session_format::write::WriteProfile;
use rayon::prelude::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// `--level`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LevelArg {
    /// Byte for byte what pi wrote.
    Exact,
    /// Exact up to ids and times: pi's bytes with the script's ids renamed consistently and
    /// its clock times free (for writers without id and clock hooks).
    Renamed,
    /// The same lines as JSON values (key order and number spelling aside).
    Equivalent,
    /// Strict-valid, pi-loadable, and the same context as pi's file.
    Loadable,
}

impl From<LevelArg> for Level {
    fn from(l: LevelArg) -> Level {
        match l {
            LevelArg::Exact => Level::Exact,
            LevelArg::Renamed => Level::Renamed,
            LevelArg::Equivalent => Level::Equivalent,
            LevelArg::Loadable => Level::Loadable,
        }
    }
}

/// What `conformance writer` was asked.
pub(super) struct WriterRun<'a> {
    pub implementation: &'a str,
    pub corpus: &'a Path,
    pub corpus_version: Option<String>,
    pub level: Level,
    pub scenarios: &'a [String],
    pub profiles: &'a [WriteProfile],
    pub javascript_only: bool,
    pub json: bool,
    pub timeout: Duration,
    pub allow_divergences: bool,
}

/// Whether a run is a deliberate divergence of pi-session's own writer to be judged as such
/// (`--allow-divergences`): strict-valid and pi-loadable, whatever the bytes and context.
fn divergent(r: &ScenarioResult, options: &WriterRun<'_>) -> bool {
    options.allow_divergences && r.divergence.is_some()
}

/// Whether a run failed at the level asked for (a run the writer said it cannot do is not
/// scored).
fn failed(r: &ScenarioResult, options: &WriterRun<'_>) -> bool {
    r.unsupported.is_none() && decided(r, options).is_err()
}

/// The verdict that decides a run.
fn decided<'r>(r: &'r ScenarioResult, options: &WriterRun<'_>) -> &'r Result<(), String> {
    if divergent(r, options) {
        &r.judgement.valid
    } else {
        r.judgement.at(options.level)
    }
}

fn selected(name: &str, only: &[String]) -> Result<bool, String> {
    if only.is_empty() {
        return Ok(true);
    }
    for pattern in only {
        let glob =
            globset::Glob::new(pattern).map_err(|e| format!("--scenario {pattern:?}: {e}"))?;
        if glob.compile_matcher().is_match(name) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Runs the writer over the corpus and reports; exit 1 on any failure at the level asked.
pub(super) fn run(options: &WriterRun<'_>) -> ExitCode {
    let scenarios = match writers::load_scenarios(options.corpus) {
        Ok(s) if s.is_empty() => {
            eprintln!(
                "pi-session: {}: no writer scenario here (a scenario is a directory with script.ndjson and case.json); give the corpus with --corpus",
                options.corpus.display()
            );
            return ExitCode::from(2);
        }
        Ok(s) => s,
        Err(e) => {
            eprintln!("pi-session: {e}");
            return ExitCode::from(2);
        }
    };
    let mut jobs = Vec::new();
    for scenario in &scenarios {
        if scenario.javascript_only.is_some() && !options.javascript_only {
            continue;
        }
        match selected(&scenario.name, options.scenarios) {
            Ok(true) => jobs.push(scenario),
            Ok(false) => {}
            Err(e) => {
                eprintln!("pi-session: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if jobs.is_empty() {
        eprintln!(
            "pi-session: --scenario selected no scenario among {}",
            scenarios
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return ExitCode::FAILURE;
    }
    // Scenarios in parallel, the versions of one in turn: a scenario may fix its session
    // directory (its paths are in the headers), which its runs share.
    let results: Vec<ScenarioResult> = jobs
        .par_iter()
        .flat_map_iter(|s| {
            s.profiles
                .iter()
                .filter(|p| options.profiles.is_empty() || options.profiles.contains(p))
                .map(|&p| writers::check(s, p, options.implementation, options.timeout))
                .collect::<Vec<_>>()
        })
        .collect();
    if results.is_empty() {
        eprintln!("pi-session: --profile selected no run of the scenarios selected");
        return ExitCode::FAILURE;
    }
    let failures = results.iter().filter(|r| failed(r, options)).count();
    let scored = results.iter().filter(|r| r.unsupported.is_none()).count();
    if options.json {
        println!("{}", json_report(&results, options));
    } else {
        print!("{}", human_report(&results, options));
    }
    // Partial credit: the runs the writer cannot do are not held against it, but a writer
    // that did none passes nothing.
    if failures == 0 && scored > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn human_report(results: &[ScenarioResult], options: &WriterRun<'_>) -> String {
    let meanings: Vec<String> = Level::ALL
        .iter()
        .map(|l| format!("{}: {}", l.name(), l.meaning()))
        .collect();
    let mut out = format!(
        "corpus {}{}\nlevels: {}\n",
        options
            .corpus_version
            .as_deref()
            .map_or_else(String::new, |v| format!("{v} at ")),
        options.corpus.display(),
        meanings.join("; ")
    );
    for r in results {
        if let Some(said) = &r.unsupported {
            out.push_str(&format!(
                "SKIP {} (pi {}): unsupported (exit status {}): {said}\n",
                r.scenario,
                r.profile,
                pi_session_conformance::protocol::UNSUPPORTED
            ));
            continue;
        }
        let marks: Vec<String> = Level::ALL
            .iter()
            .map(|&l| {
                let mark = if r.judgement.at(l).is_ok() {
                    "ok"
                } else {
                    "FAIL"
                };
                format!("{} {mark}", l.name())
            })
            .collect();
        let status = if decided(r, options).is_ok() {
            "PASS"
        } else {
            "FAIL"
        };
        out.push_str(&format!(
            "{status} {} (pi {}){}: {}\n",
            r.scenario,
            r.profile,
            if r.javascript_only.is_some() {
                " [JavaScript-only input]"
            } else {
                ""
            },
            marks.join(", ")
        ));
        if divergent(r, options)
            && let Some(why) = &r.divergence
        {
            out.push_str(&format!(
                "    deliberate divergence, judged strict-valid and pi-loadable only: {why}\n"
            ));
        }
        if let Err(why) = decided(r, options) {
            for line in why.lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
    }
    let scored = results.iter().filter(|r| r.unsupported.is_none()).count();
    let counts: Vec<String> = Level::ALL
        .iter()
        .map(|&l| {
            let passed = results.iter().filter(|r| r.judgement.at(l).is_ok()).count();
            format!("{} {passed}/{scored}", l.name())
        })
        .collect();
    let unsupported = results.len() - scored;
    out.push_str(&format!(
        "{} scenario runs: {}{} (level asked: {}; {})\n",
        results.len(),
        counts.join(", "),
        if unsupported > 0 {
            format!("; {unsupported} unsupported, not scored")
        } else {
            String::new()
        },
        options.level.name(),
        options.implementation
    ));
    out
}

fn json_report(results: &[ScenarioResult], options: &WriterRun<'_>) -> String {
    let verdict = |v: &Result<(), String>| match v {
        Ok(()) => serde_json::json!({"passed": true}),
        Err(why) => serde_json::json!({"passed": false, "detail": why}),
    };
    let runs: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            serde_json::json!({
                "scenario": r.scenario,
                "profile": r.profile.short_name(),
                "exact": verdict(&r.judgement.exact),
                "renamed": verdict(&r.judgement.renamed),
                "equivalent": verdict(&r.judgement.equivalent),
                "loadable": verdict(&r.judgement.loadable),
                "divergence": r.divergence,
                "javascriptOnly": r.javascript_only,
                "unsupported": r.unsupported,
                "passed": r.unsupported.is_none() && decided(r, options).is_ok(),
            })
        })
        .collect();
    let mut summary = serde_json::Map::new();
    let scored = results.iter().filter(|r| r.unsupported.is_none()).count();
    for l in Level::ALL {
        let passed = results.iter().filter(|r| r.judgement.at(l).is_ok()).count();
        summary.insert(
            l.name().into(),
            serde_json::json!({"passed": passed, "failed": scored - passed}),
        );
    }
    let failures = results.iter().filter(|r| failed(r, options)).count();
    summary.insert("failed".into(), serde_json::json!(failures));
    summary.insert(
        "unsupported".into(),
        serde_json::json!(results.len() - scored),
    );
    let levels: serde_json::Map<String, serde_json::Value> = Level::ALL
        .iter()
        .map(|l| (l.name().to_owned(), l.meaning().into()))
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "implementation": options.implementation,
        "corpus": options.corpus_version,
        "level": options.level.name(),
        "levels": levels,
        "runs": runs,
        "summary": summary,
    }))
    .unwrap_or_default()
}

/// `conformance write --pi P OUT`: runs the script on stdin through our writer and puts the
/// file it wrote at OUT (nothing when it wrote none).
pub(super) fn write(profile: WriteProfile, out: &PathBuf, hooks: script::Hooks) -> ExitCode {
    let mut script_text = String::new();
    if let Err(e) = std::io::stdin().lock().read_to_string(&mut script_text) {
        eprintln!("pi-session: cannot read the script on stdin: {e}");
        return ExitCode::FAILURE;
    }
    let scratch = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(script::scratch, Path::to_owned);
    match script::run_with(&script_text, profile, &scratch, hooks) {
        Ok(outcome) => {
            if let Some(file) = outcome.file
                && let Err(e) = std::fs::write(out, file)
            {
                eprintln!("pi-session: {}: {e}", out.display());
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("pi-session: {e}");
            ExitCode::FAILURE
        }
    }
}
