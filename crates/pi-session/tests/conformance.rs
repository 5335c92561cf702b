//! The conformance corpus as tests: one test per case (`cargo test --test conformance --
//! context/compaction-nearest-leaf-wins` runs one), each running `pi-session` through the
//! same stdin/stdout protocol third parties use, plus checks that the corpus is whole:
//! every rule has a case, every case names known rules, every area README lists its cases.

use libtest_mimic::{Arguments, Failed, Trial};
use pi_session_conformance::corpus::{self, Case};
use pi_session_conformance::level::Level;
use pi_session_conformance::run;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn implementation() -> String {
    format!("'{}' conformance impl", env!("CARGO_BIN_EXE_pi-session"))
}

const BLESS: &str = "cargo xtask bless cases --only";

fn case_trial(case: Case) -> Trial {
    Trial::test(case.id.clone(), move || {
        let problems = case.structure_problems();
        if !problems.is_empty() {
            return Err(format!(
                "{}: {}\n(regenerate with `{BLESS} {}`)",
                case.id,
                problems.join("; "),
                case.id
            )
            .into());
        }
        let mut failures = Vec::new();
        let options = run::RunOptions {
            implementation: implementation(),
            only: Vec::new(),
            skip: Vec::new(),
            timeout: Duration::from_secs(20),
            level: Level::Exact,
        };
        for op in case.ops() {
            let result = run::check(&case, op, &options);
            if !result.passed {
                failures.push(format!("[{op}] {}", run::explain(&result)));
            }
        }
        if failures.is_empty() {
            return Ok(());
        }
        let input = std::fs::read(case.session_path()).unwrap_or_default();
        let mut shown = String::from_utf8_lossy(&input).into_owned();
        if shown.len() > 2000 {
            let cut = (0..=2000)
                .rev()
                .find(|&i| shown.is_char_boundary(i))
                .unwrap_or(0);
            shown.truncate(cut);
            shown.push_str("\n…");
        }
        Err(Failed::from(format!(
            "{} — {}\nrules: {}\ninput (session.jsonl):\n{shown}\n{}\nIf the reference changed, regenerate with `{BLESS} {}` and review the diff.",
            case.id,
            case.meta.description,
            case.meta.rules.join(", "),
            failures.join("\n"),
            case.id
        )))
    })
}

fn coverage_trial(cases: Vec<Case>) -> Trial {
    Trial::test("corpus::every-rule-has-a-case", move || {
        let rules =
            corpus::load_rules(&conformance_dir().join("RULES.md")).map_err(|e| e.to_string())?;
        let problems = corpus::coverage_problems(&rules, &cases);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    })
}

fn readme_trial(cases: Vec<Case>) -> Trial {
    Trial::test("corpus::area-readmes-list-their-cases", move || {
        let mut problems = Vec::new();
        let mut areas: Vec<&str> = cases.iter().map(Case::area).collect();
        areas.dedup();
        for area in areas {
            let readme = conformance_dir().join("cases").join(area).join("README.md");
            let Ok(text) = std::fs::read_to_string(&readme) else {
                problems.push(format!("{area}/README.md is missing"));
                continue;
            };
            for case in cases.iter().filter(|c| c.area() == area) {
                let name = case.id.rsplit('/').next().unwrap_or_default();
                if !text.contains(&format!("`{name}`")) {
                    problems.push(format!("{area}/README.md does not list `{name}`"));
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{}\n(regenerate with `python3 conformance/cases/gen_readmes.py`)",
                problems.join("\n")
            )
            .into())
        }
    })
}

fn main() {
    let args = Arguments::from_args();
    let cases = match corpus::load_cases(&conformance_dir().join("cases")) {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("cannot read the corpus: {e}");
            std::process::exit(1);
        }
    };
    let mut trials = vec![coverage_trial(cases.clone()), readme_trial(cases.clone())];
    trials.extend(cases.into_iter().map(case_trial));
    libtest_mimic::run(&args, trials).exit();
}
