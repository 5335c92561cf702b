//! oh-my-pi's files, read as pi's: one diagnostic says the file is omp's and how it was
//! recognised (PS0111 with a title slot, PS0112 otherwise), never one `unknown-entry-type`
//! per omp entry; read as omp's (`Options::dialect`), neither. Hand-made files first, then
//! the omp cases of `conformance/cases/omp/` (written as omp writes them).

use pi_session_format::Dialect;
use pi_session_format::dialect::OMP_ENTRY_TYPES;
use pi_session_validate::{Code, Options, Report, validate};
use std::path::{Path, PathBuf};

/// The session files of the omp corpus that omp resumes (not those it refuses for their
/// header, rule O18: their expected context is omp's error).
fn omp_cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases/omp");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("conformance/cases/omp exists")
        .map(|e| e.unwrap().path())
        .filter(|case| !case.join("expected/context.error").is_file())
        .map(|case| case.join("session.jsonl"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn check(bytes: impl AsRef<[u8]>, dialect: Dialect) -> Report {
    let options = Options {
        dialect,
        ..Options::default()
    };
    validate(bytes.as_ref(), &options)
}

fn count(report: &Report, code: Code) -> usize {
    report.diagnostics.iter().filter(|d| d.code == code).count()
}

/// Whether a PS0201 is about one of omp's entry types.
fn about_omp_type(report: &Report) -> bool {
    report.diagnostics.iter().any(|d| {
        d.code == Code::UnknownEntryType
            && OMP_ENTRY_TYPES
                .iter()
                .any(|t| d.message.contains(&format!("`{t}`")))
    })
}

#[test]
fn an_omp_file_read_as_pi_s_gets_one_omp_diagnostic_and_no_flood() {
    let files = omp_cases();
    assert!(files.len() > 20, "{} omp cases", files.len());
    let mut recognised = 0;
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let report = check(&bytes, Dialect::Pi);
        let omp = count(&report, Code::OhMyPiTitle) + count(&report, Code::OhMyPiDialect);
        let detected = Dialect::detect(&bytes).dialect == Dialect::Omp;
        assert!(omp <= 1, "{}: {report:#?}", file.display());
        assert!(!about_omp_type(&report), "{}: {report:#?}", file.display());
        if detected {
            assert_eq!(omp, 1, "{}: {report:#?}", file.display());
        }
        recognised += omp;
    }
    assert!(recognised > 20);
}

#[test]
fn an_omp_file_read_as_omp_s_has_no_omp_diagnostic() {
    for file in omp_cases() {
        let bytes = std::fs::read(&file).unwrap();
        let report = check(&bytes, Dialect::Omp);
        for code in [
            Code::OhMyPiTitle,
            Code::OhMyPiDialect,
            Code::HeaderNotFirst,
            Code::InvalidHeader,
        ] {
            assert_eq!(count(&report, code), 0, "{}: {report:#?}", file.display());
        }
        assert!(!about_omp_type(&report), "{}: {report:#?}", file.display());
    }
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"019a0000-0000-7000-8000-000000000001","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/home/u/proj"}"#;
const USER: &str = r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T10:00:01.000Z","message":{"role":"user","content":"Hi","timestamp":1767261601000}}"#;

fn entry(type_: &str, id: &str, parent: &str) -> String {
    format!(
        r#"{{"type":"{type_}","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T10:00:02.000Z"}}"#
    )
}

fn slot() -> String {
    let line =
        r#"{"type":"title","v":1,"title":"Fix","updatedAt":"2026-01-01T10:00:00.000Z","pad":""#;
    format!("{line}{}\"}}", " ".repeat(255 - line.len() - 2))
}

/// Header, a user message, two `mode_change`, a `reset_boundary` and a `bookmark` (not
/// oh-my-pi's either).
fn omp_entries(first: &[&str]) -> String {
    let mut lines: Vec<String> = first.iter().map(|l| l.to_string()).collect();
    lines.extend([
        USER.to_string(),
        entry("mode_change", "b0000001", "a1b2c3d4"),
        entry("mode_change", "b0000002", "b0000001"),
        entry("reset_boundary", "b0000003", "b0000002"),
        entry("bookmark", "b0000004", "b0000003"),
    ]);
    lines.join("\n") + "\n"
}

fn codes(report: &Report) -> Vec<Code> {
    report.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn omp_entry_types_get_one_diagnostic_that_counts_them_not_one_each() {
    let report = check(omp_entries(&[HEADER]), Dialect::Pi);
    assert_eq!(
        codes(&report),
        [Code::OhMyPiDialect, Code::UnknownEntryType],
        "{report:#?}"
    );
    let d = &report.diagnostics[0];
    assert_eq!(
        d.message,
        "this is an oh-my-pi (omp) session file, not pi's: it has 3 entries of types only oh-my-pi writes (2 `mode_change`, 1 `reset_boundary`; the first on line 3), which pi keeps in the tree and ignores"
    );
    assert_eq!(d.location.map(|l| (l.line, l.column)), Some((3, 9)));
    assert_eq!(
        (d.pointer.as_deref(), d.entry_id.as_deref()),
        (Some("/type"), Some("b0000001"))
    );
    assert!(d.help.contains("--dialect omp"));
    // The bookmark is nobody's: still PS0201.
    assert!(report.diagnostics[1].message.contains("`bookmark`"));
    // pi keeps the entries and ignores them: the verdicts are those of PS0201.
    let v = report.verdict;
    assert!(v.strict && v.pi_loadable && v.pi_resumes);
}

#[test]
fn an_omp_header_member_says_how_the_file_was_recognised() {
    let header = HEADER.replace('}', r#","title":"Fix","titleSource":"user"}"#);
    let report = check(format!("{header}\n{USER}\n"), Dialect::Pi);
    assert_eq!(codes(&report), [Code::OhMyPiDialect]);
    let d = &report.diagnostics[0];
    assert!(
        d.message
            .starts_with("this is an oh-my-pi (omp) session file, not pi's (the header has omp's `titleSource` member): pi reads it"),
        "{}",
        d.message
    );
    assert_eq!(d.pointer.as_deref(), Some("/titleSource"));
    // With entries too, the sign is the header's and the entries are counted.
    let report = check(omp_entries(&[&header]), Dialect::Pi);
    assert_eq!(
        codes(&report),
        [Code::OhMyPiDialect, Code::UnknownEntryType]
    );
    assert!(
        report.diagnostics[0]
            .message
            .contains("(the header has omp's `titleSource` member): it has 3 entries")
    );
}

#[test]
fn a_title_slot_s_ps0111_counts_the_omp_entries_and_nothing_else_is_said() {
    let report = check(omp_entries(&[&slot(), HEADER]), Dialect::Pi);
    assert_eq!(
        codes(&report),
        [Code::OhMyPiTitle, Code::UnknownEntryType],
        "{report:#?}"
    );
    assert!(report.diagnostics[0].message.ends_with(
        "; it has 3 entries of types only oh-my-pi writes (2 `mode_change`, 1 `reset_boundary`; the first on line 4), which pi keeps in the tree and ignores"
    ));
    // pi still refuses or overwrites the file.
    assert!(!report.verdict.pi_loadable && !report.verdict.strict);
}

#[test]
fn read_as_omp_s_the_slot_header_members_and_entry_types_are_known() {
    let header = HEADER.replace('}', r#","title":"Fix"}"#);
    let report = check(omp_entries(&[&slot(), &header]), Dialect::Omp);
    assert_eq!(codes(&report), [Code::UnknownEntryType], "{report:#?}");
    assert!(report.diagnostics[0].message.contains("`bookmark`"));
    assert_eq!(report.stats.version, Some(3.0));
    assert_eq!(report.stats.entries, 5, "the slot is not an entry");
    let v = report.verdict;
    assert!(v.strict && v.pi_loadable && v.pi_resumes);
    // The header must still follow the slot at once, and a slot is only on line 1.
    let late = format!("{}\n\n{HEADER}\n{USER}\n", slot());
    let report = check(&late, Dialect::Omp);
    assert!(codes(&report).contains(&Code::HeaderNotFirst));
    let second = format!("{HEADER}\n{}\n{USER}\n", slot());
    let report = check(&second, Dialect::Omp);
    assert!(codes(&report).contains(&Code::IdMissing), "{report:#?}");
}

#[test]
fn a_pi_file_is_the_same_in_both_dialects() {
    let file = format!(
        "{HEADER}\n{USER}\n{}\n",
        entry("bookmark", "b0000001", "a1b2c3d4")
    );
    let pi = check(&file, Dialect::Pi);
    assert_eq!(codes(&pi), [Code::UnknownEntryType]);
    assert_eq!(pi, check(&file, Dialect::Omp));
}

/// Read as omp's, a value over lines is one entry (PS0014, nothing dropped, its children not
/// orphans), a problem on its second line is located there, and text after a value on its
/// line is PS0013 at that text; read as pi's, the same lines are not JSON (PS0001).
#[test]
fn omp_reads_values_over_lines_and_the_first_value_of_a_line() {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let first = "{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\n\"timestamp\":5,\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}";
    let second = r#"{"type":"message","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"x","timestamp":2}}  {"x":1}"#;
    let text = format!("{header}\n{first}\n{second}\n");
    let report = check(&text, Dialect::Omp);
    let codes: Vec<_> = report.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(count(&report, Code::OmpValueOverLines), 1, "{codes:?}");
    assert_eq!(count(&report, Code::InvalidJson), 0, "{codes:?}");
    assert_eq!(count(&report, Code::DanglingParent), 0, "{codes:?}");
    let at = |code: Code| {
        let d = report.diagnostics.iter().find(|d| d.code == code).unwrap();
        let l = d.location.unwrap();
        (l.line, l.column)
    };
    assert_eq!(at(Code::OmpValueOverLines), (2, 1));
    // `"timestamp":5` is on line 3, column 13.
    let timestamp = report
        .diagnostics
        .iter()
        .find(|d| d.message.contains("timestamp"))
        .unwrap_or_else(|| panic!("{codes:?}"));
    let l = timestamp.location.unwrap();
    assert_eq!((l.line, l.column), (3, 13), "{timestamp:?}");
    assert_eq!(
        at(Code::OmpTextAfterValue),
        (4, second.find(" {\"x\"").unwrap() + 2)
    );
    assert!(!report.verdict.pi_loadable);
    let as_pi = check(&text, Dialect::Pi);
    assert_eq!(count(&as_pi, Code::InvalidJson), 3);
}
