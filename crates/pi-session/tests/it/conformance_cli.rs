//! `pi-session conformance run` as an outside implementer meets it: levels (an implementation
//! that prints pi's values with another serializer is equivalent, not wrong), failures that say
//! where and how to run them again, the divergence tier off by default, JUnit XML, and a run
//! from another directory.

use crate::support::{scratch, write};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases")
}

fn ours() -> String {
    format!("'{}' conformance impl", env!("CARGO_BIN_EXE_pi-session"))
}

/// An implementation that is pi-session with every JSON value written again by Python's
/// `json` module, keys sorted: the same values, other bytes.
fn resorted(dir: &Path) -> String {
    let script = write(
        dir,
        "resort.py",
        r#"import json, subprocess, sys
out = subprocess.run(sys.argv[1:], stdin=sys.stdin, capture_output=True)
sys.stderr.buffer.write(out.stderr)
if out.returncode != 0:
    sys.exit(out.returncode)
for line in out.stdout.decode("utf-8", "surrogatepass").splitlines():
    sys.stdout.write(json.dumps(json.loads(line), sort_keys=True, separators=(",", ":")) + "\n")
"#,
    );
    format!(
        "python3 '{}' '{}' conformance impl",
        script.display(),
        env!("CARGO_BIN_EXE_pi-session")
    )
}

fn conformance(args: &[&str], cwd: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi-session"));
    command.arg("conformance").arg("run").args(args);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    command.output().unwrap()
}

fn json_report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn another_serializer_reaches_equivalent_and_is_told_what_differs() {
    let dir = scratch("conformance-cli", "resorted");
    let implementation = resorted(&dir);
    let corpus = corpus();
    let args = [
        "--impl",
        &implementation,
        "--corpus",
        corpus.to_str().unwrap(),
        "--only",
        "context/*",
        "--format",
        "json",
    ];
    // At exact, the reordered keys fail; each failure says it reached equivalent and why.
    let exact = conformance(&args, None);
    assert_eq!(exact.status.code(), Some(1));
    let report = json_report(&exact);
    let results = report["results"].as_array().unwrap();
    let failed: Vec<&Value> = results.iter().filter(|r| r["passed"] == false).collect();
    assert!(!failed.is_empty());
    for r in &failed {
        assert_eq!(r["level"], "equivalent", "{r}");
        let differed = r["differed"].as_array().unwrap();
        assert!(!differed.is_empty(), "{r}");
        assert!(
            differed
                .iter()
                .all(|d| ["key order", "number spelling", "string escapes"]
                    .contains(&d.as_str().unwrap())),
            "{r}"
        );
        assert!(r["differences"].as_array().is_none_or(Vec::is_empty), "{r}");
    }
    assert!(failed.iter().any(|r| {
        r["differed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d == "key order")
    }));
    let counts = &report["areas"]["context"]["context"];
    assert_eq!(
        counts["equivalent"].as_u64().unwrap() + counts["exact"].as_u64().unwrap(),
        counts["ops"].as_u64().unwrap(),
        "{counts}"
    );
    // At equivalent, every operation passes.
    let mut equivalent = args.to_vec();
    equivalent.extend(["--level", "equivalent"]);
    let out = conformance(&equivalent, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_failure_names_the_path_the_files_and_a_rerun_that_reproduces_it() {
    let dir = scratch("conformance-cli", "wrong");
    // pi-session, but every "text" value of a context changed.
    let script = write(
        &dir,
        "wrong.sh",
        format!(
            "'{}' conformance impl \"$@\" | sed 's/\"text\":\"/\"text\":\"WRONG /g'\n",
            env!("CARGO_BIN_EXE_pi-session")
        ),
    );
    let implementation = format!("sh '{}'", script.display());
    let corpus = corpus();
    let case = "context/compaction-nearest-leaf-wins";
    let out = conformance(
        &[
            "--impl",
            &implementation,
            "--corpus",
            corpus.to_str().unwrap(),
            "--only",
            case,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("FAIL {case} [context]: reached no level")),
        "{text}"
    );
    assert!(text.contains("line 1: $.messages["), "{text}");
    assert!(text.contains("actual:   \"WRONG "), "{text}");
    assert!(
        text.contains(&format!(
            "expected: {}",
            corpus.join(case).join("expected/context.json").display()
        )),
        "{text}"
    );
    assert!(text.contains("rules:    "), "{text}");
    assert!(text.contains("area/op"), "the summary table: {text}");
    // The rerun line, run by a shell, gives what the runner saw.
    let rerun = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("rerun:    "))
        .unwrap()
        .to_owned();
    assert!(rerun.contains("context --pi 0.73 < "), "{rerun}");
    let again = Command::new("sh").arg("-c").arg(&rerun).output().unwrap();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("\"text\":\"WRONG "));
}

#[test]
fn the_divergence_tier_runs_only_when_asked_for() {
    let corpus = corpus();
    let ours = ours();
    let divergence_ops = |extra: &[&str]| -> usize {
        let mut args = vec![
            "--impl",
            &ours,
            "--corpus",
            corpus.to_str().unwrap(),
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let report = json_report(&conformance(&args, None));
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["case"].as_str().unwrap().starts_with("divergence/"))
            .count()
    };
    assert_eq!(divergence_ops(&["--only", "header/*"]), 0);
    assert!(divergence_ops(&["--only", "divergence/*", "--divergences"]) > 0);
}

#[test]
fn junit_output_is_xml_with_a_test_per_operation() {
    let corpus = corpus();
    let out = conformance(
        &[
            "--impl",
            "true",
            "--corpus",
            corpus.to_str().unwrap(),
            "--only",
            "tree/*",
            "--format",
            "junit",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let xml = String::from_utf8(out.stdout).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert!(!cases.is_empty());
    assert!(
        cases
            .iter()
            .all(|c| c.attribute("classname") == Some("tree"))
    );
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert_eq!(failures, cases.len(), "`true` answers nothing");
    let suites = doc.root_element();
    assert_eq!(
        suites.attribute("tests"),
        Some(cases.len().to_string().as_str())
    );
}

#[test]
fn a_run_from_another_directory_uses_the_built_in_corpus() {
    let dir = scratch("conformance-cli", "elsewhere");
    let cache = dir.join("cache");
    let built_in = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_pi-session"))
            .arg("conformance")
            .args(args)
            .current_dir(&dir)
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap()
    };
    // No checkout: the corpus built into the binary, extracted once into the cache.
    let manifest: Value =
        serde_json::from_slice(&built_in(&["corpus", "--format", "json"]).stdout).unwrap();
    let version = manifest["version"].as_str().unwrap().to_owned();
    for _ in 0..2 {
        let out = built_in(&[
            "run",
            "--impl",
            &ours(),
            "--only",
            "header/*",
            "--format",
            "json",
        ]);
        let report = json_report(&out);
        assert_eq!(out.status.code(), Some(0), "{report}");
        assert_eq!(report["corpus"], version.as_str());
        assert_eq!(report["tiers"], serde_json::json!(["spec"]));
        assert_eq!(report["cases"], manifest["readers"]["header"]["cases"]);
    }
    let extracted = std::fs::read_dir(cache.join("pi-session")).unwrap().count();
    assert_eq!(extracted, 1, "one copy per corpus version");
    // The paths a failure names are in that copy, and stay there.
    let out = built_in(&["run", "--impl", "false", "--only", "header/*"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "corpus {version} at {}",
            cache.join("pi-session").display()
        )),
        "{text}"
    );
    // A --corpus that is not there names where it was looked for.
    let out = built_in(&["run", "--impl", &ours(), "--corpus", "conformance/cases"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no such directory"), "{stderr}");
    assert!(
        stderr.contains(&format!("looked for from {}", dir.display())),
        "{stderr}"
    );
    assert!(stderr.contains("conformance corpus --extract"), "{stderr}");
    // The corpus, extracted, runs as --corpus (the directory or its cases/), as does the
    // checkout's.
    let out = built_in(&["corpus", "--extract", "copy"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for corpus in ["copy", "copy/cases", corpus().to_str().unwrap()] {
        let out = built_in(&[
            "run",
            "--impl",
            &ours(),
            "--corpus",
            corpus,
            "--only",
            "header/*",
            "--format",
            "json",
        ]);
        let report = json_report(&out);
        assert_eq!(out.status.code(), Some(0), "{report}");
        if corpus.starts_with("copy") {
            assert_eq!(report["corpus"], version.as_str(), "{corpus}");
        }
    }
    // The writer judge too, from the copy.
    let out = built_in(&[
        "writer",
        "--impl",
        &format!("{} conformance write", env!("CARGO_BIN_EXE_pi-session")),
        "--corpus",
        "copy",
        "--scenario",
        "first-write-rule",
        "--format",
        "json",
    ]);
    let report = json_report(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["corpus"], version.as_str());
    // Extracting never writes over anything.
    let out = built_in(&["corpus", "--extract", "copy"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was written"));
}

#[test]
fn an_implementation_that_answers_unsupported_is_scored_on_the_rest() {
    let dir = scratch("conformance-cli", "partial");
    // A reader of contexts only: every other operation is unsupported (exit status 3).
    let script = write(
        &dir,
        "context-only.sh",
        format!(
            "case \"$1\" in context) exec '{}' conformance impl \"$@\";; *) echo \"no $1 here\" >&2; exit 3;; esac\n",
            env!("CARGO_BIN_EXE_pi-session")
        ),
    );
    let implementation = format!("sh '{}'", script.display());
    let corpus = corpus();
    let args = |format: &'static str| {
        vec![
            "--impl".to_owned(),
            implementation.clone(),
            "--corpus".to_owned(),
            corpus.to_string_lossy().into_owned(),
            "--only".to_owned(),
            "context/*".to_owned(),
            "--format".to_owned(),
            format.to_owned(),
        ]
    };
    let json_args = args("json");
    let out = conformance(
        &json_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report = json_report(&out);
    assert_eq!(report["failed"], 0);
    assert!(report["passed"].as_u64().unwrap() > 0);
    assert!(report["unsupported"].as_u64().unwrap() > 0);
    for r in report["results"].as_array().unwrap() {
        assert_eq!(r["unsupported"] == true, r["op"] != "context", "{r}");
    }
    assert_eq!(
        report["areas"]["context"]["migrate"]["unsupported"],
        report["areas"]["context"]["migrate"]["ops"]
    );
    let human_args = args("human");
    let out = conformance(
        &human_args.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("unsupported (exit status 3), not scored:"),
        "{text}"
    );
    assert!(!text.contains("FAIL "), "{text}");

    // An implementation that does nothing passes nothing.
    let out = conformance(
        &[
            "--impl",
            "sh -c 'exit 3' --",
            "--corpus",
            corpus.to_str().unwrap(),
            "--only",
            "context/*",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
}
