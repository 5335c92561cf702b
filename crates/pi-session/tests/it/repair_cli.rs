//! `pi-session repair`: the plan and the diff of a dry run, `-o OUT`, `--in-place` with
//! `--backup`, the rejects file, `--only`, `--reattach`, a rebuilt header, a migration, the JSON
//! report, exit codes, and that a repaired file repairs to itself and pi-session reads it.

use crate::adversarial::common::*;
use std::fs;
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(60);

const SESSION: &str = "0195f3a4-0000-7000-8000-000000000001";

fn header() -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{SESSION}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}}"#
    )
}

fn entry(id: &str, parent: Option<&str>, text: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("{p:?}"));
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn lines(lines: &[String]) -> String {
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A torn append (pi#8345) swallowed the next entry, and the file ends in another torn line.
fn torn() -> (String, String) {
    let lost = &entry("aaaaaaa2", Some("aaaaaaa1"), "lost")[..50];
    let text = format!(
        "{}{lost}{}\n{}",
        lines(&[header(), entry("aaaaaaa1", None, "a")]),
        entry("aaaaaaa3", Some("aaaaaaa1"), "b"),
        &entry("aaaaaaa4", Some("aaaaaaa3"), "c")[..30]
    );
    (text, lost.to_owned())
}

#[test]
fn a_dry_run_prints_the_plan_and_a_diff_and_writes_nothing() {
    let dir = scratch("repair-dry-run");
    let (text, _) = torn();
    let file = write(&dir, "s.jsonl", text.as_bytes());
    let r = run(&["repair", s(&file)], T);
    r.assert_code(0);
    let out = r.stdout_text();
    assert!(out.contains("2 fixes (dry run: nothing written"), "{out}");
    assert!(out.contains("line 3: PS0001 split: glued entries"), "{out}");
    assert!(out.contains("line 4: PS0002 terminated"), "{out}");
    assert!(out.contains("line 3: 50 bytes to the rejects"), "{out}");
    assert!(
        out.contains("--- ") && out.contains("(repaired)") && out.contains("\n-{"),
        "a unified diff: {out}"
    );
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        text,
        "a dry run writes nothing"
    );
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        1,
        "and creates nothing"
    );
}

#[test]
fn in_place_with_backup_keeps_the_old_file_and_the_rejected_bytes() {
    let dir = scratch("repair-in-place");
    let (text, lost) = torn();
    let file = write(&dir, "s.jsonl", text.as_bytes());
    run(&["repair", s(&file), "--in-place", "--backup"], T).assert_code(0);
    assert_eq!(fs::read_to_string(dir.join("s.jsonl.bak")).unwrap(), text);
    let repaired = fs::read_to_string(&file).unwrap();
    assert_eq!(
        repaired,
        format!(
            "{}{}\n",
            lines(&[
                header(),
                entry("aaaaaaa1", None, "a"),
                entry("aaaaaaa3", Some("aaaaaaa1"), "b")
            ]),
            &entry("aaaaaaa4", Some("aaaaaaa3"), "c")[..30]
        )
    );
    let rejects = fs::read_to_string(dir.join("s.jsonl.repair-rejects.jsonl")).unwrap();
    let reject: serde_json::Value = serde_json::from_str(rejects.trim()).unwrap();
    assert_eq!(reject["line"], 3);
    assert_eq!(
        reject["text"],
        lost.as_str(),
        "the torn fragment is kept, byte for byte"
    );
    // Lossless: every input byte is in the output, the rejects, or is a newline added.
    let mut all = repaired.clone();
    all.push_str(&lost);
    assert_eq!(all.len(), text.len() + 1);
    // Idempotent, and pi-session reads the result: the context holds the entry the torn
    // line had swallowed.
    let again = run(&["repair", s(&file)], T);
    again.assert_code(0);
    assert!(again.stdout_text().contains("nothing to repair"));
    // -o writes a copy even then, and says so.
    let copy = dir.join("copy.jsonl");
    let copied = run(&["repair", s(&file), "-o", s(&copy)], T);
    copied.assert_code(0);
    assert!(
        copied.stdout_text().contains(&format!(
            "nothing to repair; copied unchanged to {}",
            s(&copy)
        )),
        "{}",
        copied.stdout_text()
    );
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&file).unwrap());
    let context = run(&["context", s(&file)], T);
    context.assert_code(0);
    assert!(context.stdout_text().contains(r#""content":"b""#));
    // A second repair never overwrites the backup or the rejects.
    fs::write(&file, &text).unwrap();
    let refused = run(&["repair", s(&file), "--in-place", "--backup"], T);
    refused.assert_code(1);
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert!(
        !refused.stdout_text().contains("--force"),
        "errors go to stderr"
    );
    run(
        &["repair", s(&file), "--in-place", "--backup", "--force"],
        T,
    )
    .assert_code(0);
    assert!(dir.join("s.jsonl.bak.1").exists());
    assert!(dir.join("s.jsonl.repair-rejects.1.jsonl").exists());
    assert_eq!(fs::read_to_string(dir.join("s.jsonl.bak")).unwrap(), text);
}

#[test]
fn out_writes_a_new_file_and_refuses_to_replace_one() {
    let dir = scratch("repair-out");
    let text = lines(&[
        header(),
        entry("aaaaaaa1", None, "a"),
        header(),
        entry("aaaaaaa1", None, "a"),
    ]);
    let file = write(&dir, "s.jsonl", text.as_bytes());
    let out = dir.join("fixed.jsonl");
    run(&["repair", s(&file), "-o", s(&out)], T).assert_code(0);
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        lines(&[header(), entry("aaaaaaa1", None, "a")])
    );
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        text,
        "the input is left alone"
    );
    assert!(
        !dir.join("fixed.jsonl.repair-rejects.jsonl").exists(),
        "repeats are not rejects"
    );
    let again = run(&["repair", s(&file), "-o", s(&out)], T);
    again.assert_code(1);
    assert!(
        again.stderr.contains("exists: pass --force"),
        "{}",
        again.stderr
    );
    run(&["repair", s(&file), "-o", s(&out), "--force"], T).assert_code(0);
}

#[test]
fn json_report_lists_fixes_verdicts_and_the_diff() {
    let dir = scratch("repair-json");
    let text = lines(&[
        header(),
        entry("aaaaaaa1", None, "a"),
        entry("aaaaaaa2", Some("aaaaaaa1"), "b"),
        entry("aaaaaaa2", Some("aaaaaaa2"), "c"),
        entry("aaaaaaa3", Some("aaaaaaa2"), "d"),
    ]);
    let file = write(&dir, "s.jsonl", text.as_bytes());
    let r = run(&["repair", s(&file), "--format", "json"], T);
    r.assert_code(0);
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let f = &report["files"][0];
    assert_eq!(report["formatVersion"], 1);
    assert_eq!(f["changed"], true);
    let fixes: Vec<(&str, &str)> = f["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["code"].as_str().unwrap(), x["action"].as_str().unwrap()))
        .collect();
    assert_eq!(fixes, [("PS0210", "new-id"), ("PS0210", "relinked")]);
    assert_eq!(
        f["before"]["piLoadable"], false,
        "a shared id hides an entry from pi"
    );
    assert_eq!(f["after"]["strict"], true);
    assert!(f["diff"].as_str().unwrap().contains("+{"));
    assert_eq!(f["written"], serde_json::Value::Null);
}

#[test]
fn only_and_reattach_choose_the_repairs() {
    let dir = scratch("repair-only");
    let text = lines(&[
        header(),
        entry("aaaaaaa1", None, "a"),
        entry("aaaaaaa2", Some("aaaaaaa2"), "self"),
        header(),
    ]);
    let file = write(&dir, "s.jsonl", text.as_bytes());
    // Without --reattach the self-parent (pi hangs) is left: exit 1, saying what to do.
    let r = run(&["repair", s(&file)], T);
    r.assert_code(1);
    assert!(
        r.stdout_text().contains("PS0214 not repaired"),
        "{}",
        r.stdout_text()
    );
    assert!(r.stdout_text().contains("--reattach"));
    // --only PS0104: the repeated header goes, nothing else.
    let r = run(
        &["repair", s(&file), "--only", "PS0104", "--format", "json"],
        T,
    );
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["files"][0]["fixes"].as_array().unwrap().len(), 1);
    // --reattach mends the rest.
    run(&["repair", s(&file), "--reattach", "--in-place"], T).assert_code(0);
    assert_eq!(
        fs::read_to_string(&file).unwrap(),
        lines(&[
            header(),
            entry("aaaaaaa1", None, "a"),
            entry("aaaaaaa2", Some("aaaaaaa1"), "self")
        ])
    );
    let bad = run(&["repair", s(&file), "--only", "PS9999"], T);
    bad.assert_code(2);
    assert!(bad.stderr.contains("not a diagnostic code"));
}

#[test]
fn a_lost_header_is_rebuilt_from_the_path_and_a_v1_file_is_migrated() {
    let dir = scratch("repair-header");
    let project = dir.join("--home-u-project--");
    fs::create_dir_all(&project).unwrap();
    let name = format!("2026-01-01T04-30-13-644Z_{SESSION}.jsonl");
    let text = lines(&[
        entry("aaaaaaa1", None, "a"),
        entry("aaaaaaa2", Some("aaaaaaa1"), "b"),
    ]);
    let file = write(&project, &name, text.as_bytes());
    run(&["repair", s(&file), "--in-place"], T).assert_code(0);
    let repaired = fs::read_to_string(&file).unwrap();
    assert_eq!(
        repaired.lines().next().unwrap(),
        format!(
            r#"{{"type":"session","version":3,"id":"{SESSION}","timestamp":"2026-01-01T04:30:13.644Z","cwd":"/home/u/project"}}"#
        )
    );
    let validated = run(&["validate", "--strict", s(&file)], T);
    validated.assert_code(0);
    // --cwd sets the directory the name cannot tell.
    let other = write(&dir, &name, text.as_bytes());
    let r = run(
        &[
            "repair",
            s(&other),
            "--cwd",
            "/srv/app",
            "-o",
            s(&dir.join("o.jsonl")),
        ],
        T,
    );
    r.assert_code(0);
    assert!(
        fs::read_to_string(dir.join("o.jsonl"))
            .unwrap()
            .contains(r#""cwd":"/srv/app""#)
    );
    // Without a pi name there is nothing to rebuild from: said, and exit 1.
    let plain = write(&dir, "plain.jsonl", text.as_bytes());
    let r = run(&["repair", s(&plain)], T);
    r.assert_code(1);
    assert!(
        r.stdout_text().contains("PS0101 not repaired"),
        "{}",
        r.stdout_text()
    );

    let v1 = concat!(
        "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n",
        "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    let file = write(&dir, "v1.jsonl", v1.as_bytes());
    let r = run(&["repair", s(&file), "--in-place"], T);
    r.assert_code(0);
    assert!(
        r.stdout_text().contains("PS0108 migrated"),
        "{}",
        r.stdout_text()
    );
    assert!(fs::read_to_string(&file).unwrap().contains("\"version\":3"));
    run(&["repair", s(&file)], T).assert_code(0);
}

#[test]
fn directories_are_walked_and_standard_input_is_planned_only() {
    let dir = scratch("repair-dir");
    let (text, _) = torn();
    write(&dir, "a.jsonl", text.as_bytes());
    write(
        &dir,
        "b.jsonl",
        lines(&[header(), entry("aaaaaaa1", None, "a")]).as_bytes(),
    );
    let r = run(&["repair", s(&dir)], T);
    r.assert_code(0);
    let out = r.stdout_text();
    assert!(
        out.contains("a.jsonl: 2 fixes") && out.contains("b.jsonl: nothing to repair"),
        "{out}"
    );
    let mut command = bin();
    command.args(["repair", "-"]);
    let r = run_limited(command, Some(text.as_bytes()), T);
    r.assert_code(0);
    assert!(r.stdout_text().starts_with("-: 2 fixes"));
    let r = run(&["repair", "-", "--in-place"], T);
    r.assert_code(2);
    let two = run(&["repair", s(&dir), "-o", s(&dir.join("x.jsonl"))], T);
    two.assert_code(2);
    assert!(two.stderr.contains("exactly one input file"));
}

/// `conformance/repair/`: `pi-session repair` gives each case's expected file and plan, and
/// `pi-session context` reads the repaired file as every pinned pi did (`context-pi-*.json`,
/// recorded by `cargo xtask bless repair`, rechecked by `cargo xtask conformance check-repair`).
#[test]
fn the_repair_corpus_is_repaired_as_expected_and_read_as_pi_reads_it() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/repair");
    let mut cases: Vec<_> = fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("input.jsonl").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "the corpus is there");
    let dir = scratch("repair-corpus");
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let meta: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(case.join("case.json")).unwrap()).unwrap();
        let placed = dir
            .join(&name)
            .join(meta["path"].as_str().unwrap_or("input.jsonl"));
        fs::create_dir_all(placed.parent().unwrap()).unwrap();
        fs::copy(case.join("input.jsonl"), &placed).unwrap();
        let out = dir.join(format!("{name}.out.jsonl"));
        // The corpus was made with 0.73.1's reading rules (see xtask's repair_corpus.rs).
        let mut args = vec![
            "repair",
            s(&placed),
            "-o",
            s(&out),
            "--format",
            "json",
            "--pi",
            "0.73",
        ];
        for (option, flag) in [
            ("reattach", "--reattach"),
            ("toolCalls", "--tool-calls"),
            ("toolResults", "--tool-results"),
        ] {
            if meta["options"][option] == true {
                args.push(flag);
            }
        }
        let r = run(&args, T);
        r.assert_code(0);
        let expected = fs::read(case.join("expected.jsonl")).unwrap();
        let got = fs::read(&out).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "{name}: the repaired file"
        );
        let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        let file = &report["files"][0];
        let plan: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(case.join("plan.json")).unwrap()).unwrap();
        let fixes: Vec<serde_json::Value> = file["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| serde_json::json!({"code": f["code"], "line": f["line"], "action": f["action"]}))
            .collect();
        assert_eq!(
            serde_json::Value::from(fixes),
            plan["fixes"],
            "{name}: the fixes"
        );
        assert_eq!(
            file["rejects"].as_array().unwrap().len(),
            plan["rejects"].as_array().unwrap().len(),
            "{name}: the rejects"
        );
        for pi in ["0.73", "0.87", "1.5"] {
            let context = run(&["context", s(&out), "--pi", pi], T);
            context.assert_code(0);
            assert_eq!(
                context.stdout_text(),
                fs::read_to_string(case.join(format!("context-pi-{pi}.json"))).unwrap(),
                "{name}: pi {pi}'s context of the repaired file"
            );
        }
    }
}

#[test]
fn include_archived_takes_the_archives_real_deployments_leave() {
    let dir = scratch("repair-archived");
    let (text, _) = torn();
    for name in [
        "s.jsonl",
        "s.jsonl.reset.2026-03-06T10-00-00-000Z",
        "s.jsonl.deleted.1772791200000",
        "s.jsonl.bak-3-ms",
        "s.checkpoint.019cc2a0-5f00-7000-8000-000000000001.jsonl",
        "notes.txt",
        "s.jsonl.bak",
    ] {
        write(&dir, name, text.as_bytes());
    }
    // By default: the sessions pi lists (a checkpoint is a .jsonl: taken, and said what it is).
    let r = run(&["validate", s(&dir), "--quiet"], T);
    assert!(r.stderr.contains("2 files"), "{}", r.stderr);
    assert!(
        r.stderr.contains("a checkpoint copy of a session"),
        "{}",
        r.stderr
    );
    // With --include-archived: the reset, deleted and backup copies too, each said.
    let r = run(&["validate", s(&dir), "--quiet", "--include-archived"], T);
    assert!(r.stderr.contains("5 files"), "{}", r.stderr);
    for kind in [
        "archived when it was reset",
        "archived when it was deleted",
        "a backup copy",
    ] {
        assert!(r.stderr.contains(kind), "{kind}: {}", r.stderr);
    }
    let r = run(&["repair", s(&dir), "--include-archived"], T);
    r.assert_code(0);
    assert_eq!(
        r.stdout_text().matches(": 2 fixes").count(),
        5,
        "{}",
        r.stdout_text()
    );
}

#[test]
fn tool_calls_gives_null_arguments_an_object_on_request() {
    let dir = scratch("repair-tool-calls");
    let call = entry("aaaaaaa2", Some("aaaaaaa1"), "x").replace(
        r#"{"role":"user","content":"x","timestamp":1}"#,
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":null}],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}"#,
    );
    let text = lines(&[header(), entry("aaaaaaa1", None, "a"), call.clone()]);
    let file = write(&dir, "s.jsonl", text.as_bytes());
    let r = run(&["repair", s(&file)], T);
    r.assert_code(0);
    assert!(
        r.stdout_text().contains("nothing to repair"),
        "opt-in: {}",
        r.stdout_text()
    );
    let r = run(&["repair", s(&file), "--tool-calls", "--in-place"], T);
    r.assert_code(0);
    assert!(
        r.stdout_text().contains("PS0204 normalized"),
        "{}",
        r.stdout_text()
    );
    assert!(
        fs::read_to_string(&file)
            .unwrap()
            .contains(r#""arguments":{}"#)
    );
    run(&["validate", "--strict", s(&file)], T).assert_code(0);
}

/// A file that cannot be read is an error, said on stderr; stdout holds the plans (and, with
/// `--format json`, the report, which names the error too).
#[test]
fn a_file_that_cannot_be_read_is_said_on_stderr() {
    let dir = scratch("repair-unreadable");
    let (text, _) = torn();
    let file = write(&dir, "s.jsonl", text.as_bytes());
    let missing = dir.join("missing.jsonl");
    let r = run(&["repair", s(&file), s(&missing)], T);
    r.assert_code(1);
    assert!(
        r.stderr.contains("missing.jsonl") && r.stderr.contains("cannot read"),
        "{}",
        r.stderr
    );
    let out = r.stdout_text();
    assert!(out.contains("2 fixes"), "the other file's plan: {out}");
    assert!(!out.contains("missing.jsonl"), "{out}");
    let r = run(&["repair", "--format", "json", s(&missing)], T);
    r.assert_code(1);
    assert!(r.stderr.contains("cannot read"), "{}", r.stderr);
    let report: serde_json::Value = serde_json::from_str(&r.stdout_text()).unwrap();
    assert!(report["files"][0]["error"].is_string(), "{report}");
}

/// A short torn fragment (`{"ty`) glued before a complete entry: the entry is kept, its child
/// keeps its parent, and only the fragment goes to the rejects.
#[test]
fn a_short_torn_fragment_takes_nothing_else_with_it() {
    let dir = scratch("repair-short-fragment");
    let text = lines(&[
        header(),
        entry("aaaaaaa1", None, "a"),
        format!("{{\"ty{}", entry("aaaaaaa2", Some("aaaaaaa1"), "b")),
        entry("aaaaaaa3", Some("aaaaaaa2"), "c"),
    ]);
    let file = write(&dir, "s.jsonl", text.as_bytes());
    let out = dir.join("out.jsonl");
    run(&["repair", s(&file), "-o", s(&out)], T).assert_code(0);
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        lines(&[
            header(),
            entry("aaaaaaa1", None, "a"),
            entry("aaaaaaa2", Some("aaaaaaa1"), "b"),
            entry("aaaaaaa3", Some("aaaaaaa2"), "c"),
        ])
    );
    let rejects = fs::read_to_string(dir.join("out.jsonl.repair-rejects.jsonl")).unwrap();
    assert_eq!(rejects.lines().count(), 1, "{rejects}");
    assert!(rejects.contains(r#""text":"{\"ty""#), "{rejects}");
    run(&["validate", "--strict", s(&out)], T).assert_code(0);
}
