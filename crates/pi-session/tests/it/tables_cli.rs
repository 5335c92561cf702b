//! `pi-session export --format parquet`: the tables read back with the parquet crate (no
//! Python needed) against `stats --format json` on the conformance corpus and a generated tree
//! with forks, every entry once (every copy with `--no-dedupe`), and hostile input: a broken
//! file skipped with exit 1, odd names, symlinks, FIFOs, an output directory that is not empty,
//! `--since` adding files without touching the others.

use crate::adversarial::common::*;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

const T: Duration = Duration::from_secs(300);

/// Every file under `dir`, recursively.
pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Every batch of table `name` under `out`.
pub(crate) fn read(out: &Path, name: &str) -> Vec<RecordBatch> {
    files(&out.join(name))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .flat_map(|p| {
            let file = fs::File::open(&p).unwrap();
            ParquetRecordBatchReaderBuilder::try_new(file)
                .unwrap()
                .build()
                .unwrap()
                .map(Result::unwrap)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn rows(batches: &[RecordBatch]) -> u64 {
    batches.iter().map(|b| b.num_rows() as u64).sum()
}

/// The sum of a double column, in file order of the rows (as `stats` adds: close enough
/// for the comparison below, which allows for the order).
fn sum(batches: &[RecordBatch], column: &str) -> f64 {
    batches
        .iter()
        .map(|b| {
            b.column_by_name(column)
                .unwrap()
                .as_primitive::<Float64Type>()
                .iter()
                .flatten()
                .sum::<f64>()
        })
        .sum()
}

fn int_sum(batches: &[RecordBatch], column: &str) -> i64 {
    batches
        .iter()
        .map(|b| {
            b.column_by_name(column)
                .unwrap()
                .as_primitive::<Int64Type>()
                .iter()
                .flatten()
                .sum::<i64>()
        })
        .sum()
}

fn trues(batches: &[RecordBatch], column: &str) -> u64 {
    batches
        .iter()
        .map(|b| b.column_by_name(column).unwrap().as_boolean().true_count() as u64)
        .sum()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn stats(paths: &[&str], extra: &[&str]) -> Value {
    let mut args = vec!["stats", "--format", "json"];
    args.extend_from_slice(extra);
    args.extend_from_slice(paths);
    let r = run(&args, T);
    serde_json::from_slice(&r.stdout).unwrap()
}

/// Runs `export --format parquet -o OUT EXTRA… PATHS…`.
pub(crate) fn export(paths: &[&str], out: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["export", "--format", "parquet", "-o", s(out)];
    args.extend_from_slice(extra);
    args.extend_from_slice(paths);
    run(&args, T)
}

/// The tables add up to what `stats` says, message by message and usage by usage.
#[track_caller]
fn assert_totals_match(out: &Path, total: &Value) {
    let messages = read(out, "messages");
    let compactions = read(out, "compactions");
    let usage = read(out, "usage_entries");
    let calls = read(out, "tool_calls");
    assert_eq!(rows(&messages), total["messages"].as_u64().unwrap());
    assert_eq!(
        rows(&compactions),
        total["compactions"].as_u64().unwrap() + total["branchSummaries"].as_u64().unwrap()
    );
    assert_eq!(rows(&usage), total["usageEntries"].as_u64().unwrap());
    assert_eq!(
        int_sum(&messages, "tool_call_count") as u64,
        total["toolCalls"].as_u64().unwrap()
    );
    assert_eq!(rows(&calls), total["toolCalls"].as_u64().unwrap());
    for (table, batches, key) in [
        ("messages", &messages, "messageUsage"),
        ("compactions", &compactions, "summaryUsage"),
        ("usage_entries", &usage, "usageEntryUsage"),
    ] {
        for (column, field) in [
            ("input", "input"),
            ("output", "output"),
            ("cache_read", "cacheRead"),
            ("cache_write", "cacheWrite"),
            ("total_tokens", "totalTokens"),
            ("cost_total", "cost"),
        ] {
            let want = total[key][field].as_f64().unwrap();
            let got = sum(batches, column);
            assert!(
                close(got, want),
                "{table}.{column}: {got} != stats {key}.{field} {want}"
            );
        }
    }
}

#[test]
fn corpus_tables_add_up_to_stats() {
    let corpus = root().join("conformance/cases");
    let dir = scratch("tables-corpus");
    let out = dir.join("out");
    let r = export(&[s(&corpus)], &out, &[]);
    // The corpus holds files that are not sessions: reported, skipped, exit 1, as stats.
    r.assert_code(1);
    let report = stats(&[s(&corpus)], &[]);
    let skipped = report["errors"].as_array().unwrap().len();
    assert!(skipped > 0);
    assert_eq!(
        r.stderr.matches(": skipped: ").count(),
        skipped,
        "{}",
        r.stderr
    );
    assert_totals_match(&out, &report["total"]);
    let sessions = read(&out, "sessions");
    assert_eq!(
        rows(&sessions),
        report["total"]["sessions"].as_u64().unwrap()
    );
    // Every entry once: the entries of the files less the copies left out.
    let entries = read(&out, "entries");
    assert_eq!(
        rows(&entries) as i64,
        int_sum(&sessions, "entries") - int_sum(&sessions, "copied_entries")
    );
}

/// An oh-my-pi file is exported in its dialect: `sessions.dialect` says so, its name is its
/// title, its `model_usage` entries are rows of `usage_entries`, and the totals are `stats`'s.
#[test]
fn omp_sessions_are_exported_in_their_dialect() {
    // The cases' sessions (their `expected/` files are not sessions).
    let mut sessions: Vec<PathBuf> = fs::read_dir(root().join("conformance/cases/omp"))
        .unwrap()
        .map(|c| c.unwrap().path().join("session.jsonl"))
        .filter(|p| p.is_file())
        .collect();
    sessions.sort();
    let corpus: Vec<&str> = sessions.iter().map(|p| s(p)).collect();
    let area = scratch("tables-omp");
    let out = area.join("out");
    let r = export(&corpus, &out, &[]);
    // A case omp refuses for its header (O18), with nothing to tell it is omp's, is read as
    // pi's and skipped where pi refuses it too: said on stderr, exit 1, the rest exported.
    r.assert_code(1);
    let skipped: Vec<&str> = r.stderr.lines().collect();
    assert!(!skipped.is_empty());
    for line in skipped {
        let case = Path::new(line.split(": ").nth(1).unwrap())
            .parent()
            .unwrap();
        assert!(
            case.join("expected/context.error").is_file(),
            "{line}: omp resumes it"
        );
    }
    let report = stats(&corpus, &[]);
    assert_totals_match(&out, &report["total"]);
    let sessions = read(&out, "sessions");
    let mut by_dialect = std::collections::BTreeMap::new();
    let mut titled = 0;
    for b in &sessions {
        let dialects = b.column_by_name("dialect").unwrap().as_string::<i32>();
        let names = b.column_by_name("name").unwrap().as_string::<i32>();
        let files = b.column_by_name("file").unwrap().as_string::<i32>();
        for row in 0..b.num_rows() {
            *by_dialect
                .entry(dialects.value(row).to_owned())
                .or_insert(0) += 1;
            if files.value(row).contains("title-slot-is-not-an-entry") {
                assert!(!names.is_null(row), "an omp file's title is its name");
                titled += 1;
            }
        }
    }
    assert_eq!(titled, 1);
    assert!(by_dialect["omp"] > 20, "{by_dialect:?}");
    let usage = read(&out, "usage_entries");
    assert_eq!(
        rows(&usage),
        report["total"]["usageEntries"].as_u64().unwrap()
    );
    // The omp corpus's six `model_usage` entries, counted once (cases made alike share some).
    let copies = report["copies"]["usageEntries"].as_u64().unwrap();
    assert_eq!(
        rows(&usage) + copies,
        6,
        "omp's model_usage entries are rows"
    );
    // Their `purpose` is the row's `kind`.
    let mut kinds = std::collections::BTreeSet::new();
    for b in &usage {
        let column = b.column_by_name("kind").unwrap().as_string::<i32>();
        kinds.extend((0..b.num_rows()).map(|row| column.value(row).to_owned()));
    }
    assert!(kinds.contains("title") && !kinds.contains(""), "{kinds:?}");
}

/// `--validate` fills the verdict columns with what `validate --format json` says of each
/// file (the corpus of broken files, under both pi versions); without it they are null.
#[test]
fn validate_fills_the_verdict_columns_as_validate_says() {
    use arrow_array::cast::AsArray;
    let corpus = root().join("conformance/validate");
    let dir = scratch("tables-validate");
    for pi in ["0.73", "0.87"] {
        let out = dir.join(format!("out-{pi}"));
        export(&[s(&corpus)], &out, &["--validate", "--pi", pi]);
        let r = run(&["validate", "--format", "json", "--pi", pi, s(&corpus)], T);
        let report: Value = serde_json::from_slice(&r.stdout).unwrap();
        let by_path: std::collections::HashMap<&str, &Value> = report["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["path"].as_str().unwrap(), f))
            .collect();
        let sessions = read(&out, "sessions");
        let mut checked = 0;
        let mut not_strict = 0;
        for b in &sessions {
            let column = |name: &str| b.column_by_name(name).unwrap().clone();
            let (file, strict, loadable, resumes) = (
                column("file"),
                column("strict"),
                column("pi_loadable"),
                column("pi_resumes"),
            );
            let (errors, warnings, codes) = (
                column("validate_errors"),
                column("validate_warnings"),
                column("validate_codes"),
            );
            for row in 0..b.num_rows() {
                let path = file.as_string::<i32>().value(row);
                let f = by_path[path];
                let verdict = &f["verdict"];
                let flag = |c: &arrow_array::ArrayRef| c.as_boolean().value(row);
                assert_eq!(
                    flag(&strict),
                    verdict["strict"].as_bool().unwrap(),
                    "{path}"
                );
                assert_eq!(
                    flag(&loadable),
                    verdict["piLoadable"].as_bool().unwrap(),
                    "{path}"
                );
                assert_eq!(
                    flag(&resumes),
                    verdict["piResumes"].as_bool().unwrap(),
                    "{path}"
                );
                let count = |c: &arrow_array::ArrayRef| c.as_primitive::<Int64Type>().value(row);
                assert_eq!(
                    count(&errors),
                    f["stats"]["errors"].as_i64().unwrap(),
                    "{path}"
                );
                assert_eq!(
                    count(&warnings),
                    f["stats"]["warnings"].as_i64().unwrap(),
                    "{path}"
                );
                let listed = codes.as_list::<i32>().value(row);
                let listed: Vec<&str> = listed.as_string::<i32>().iter().flatten().collect();
                let mut expected: Vec<&str> = Vec::new();
                for d in f["diagnostics"].as_array().unwrap() {
                    let code = d["code"].as_str().unwrap();
                    if !expected.contains(&code) {
                        expected.push(code);
                    }
                }
                assert_eq!(listed, expected, "{path}");
                checked += 1;
                not_strict += usize::from(!flag(&strict));
            }
        }
        assert!(
            checked > 50 && not_strict > 20,
            "{checked} sessions, {not_strict} not strict"
        );
    }
    // Without --validate the columns are null.
    let out = dir.join("plain");
    export(&[s(&corpus)], &out, &[]);
    for b in read(&out, "sessions") {
        for name in [
            "strict",
            "pi_loadable",
            "pi_resumes",
            "validate_errors",
            "validate_codes",
        ] {
            let c = b.column_by_name(name).unwrap();
            assert_eq!(c.null_count(), c.len(), "{name}");
        }
    }
}

#[test]
fn generated_tree_every_entry_once_or_every_copy() {
    let dir = scratch("tables-tree");
    let tree = dir.join("tree");
    let mut generate = bin();
    generate.args([
        "gen",
        "--tree",
        s(&tree),
        "--files",
        "200",
        "--size",
        "20MB",
        "--seed",
        "1",
    ]);
    run_limited(generate, None, T).assert_code(0);
    // Independent of the export: every line of a generated file but the header is an entry.
    let lines: u64 = files(&tree)
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| {
            fs::read_to_string(p)
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count() as u64
                - 1
        })
        .sum();

    let once = dir.join("once");
    export(&[s(&tree)], &once, &[]).assert_code(0);
    let report = stats(&[s(&tree)], &[]);
    assert_totals_match(&once, &report["total"]);
    let sessions = read(&once, "sessions");
    assert_eq!(rows(&sessions), 200);
    assert_eq!(int_sum(&sessions, "entries") as u64, lines);
    let copies = int_sum(&sessions, "copied_entries") as u64;
    assert!(copies > 0, "the tree has forks");
    let entries = read(&once, "entries");
    assert_eq!(rows(&entries), lines - copies);
    assert_eq!(trues(&entries, "is_copy"), 0);

    let every = dir.join("every");
    export(&[s(&tree)], &every, &["--no-dedupe"]).assert_code(0);
    let raw = stats(&[s(&tree)], &["--no-dedupe"]);
    assert_totals_match(&every, &raw["total"]);
    let entries = read(&every, "entries");
    assert_eq!(rows(&entries), lines);
    assert_eq!(trues(&entries, "is_copy"), copies);
}

const SESSION: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Checkout flow","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.5}},"timestamp":2}}
"#;

fn session(id: &str) -> String {
    SESSION.replace("\"s1\"", &format!("\"{id}\""))
}

#[test]
fn hostile_inputs_are_skipped_or_read_and_nothing_hangs() {
    let dir = scratch("tables-hostile");
    let sessions = dir.join("sessions");
    fs::create_dir_all(&sessions).unwrap();
    fs::write(sessions.join("good.jsonl"), session("good")).unwrap();
    fs::write(sessions.join("broken.jsonl"), "this is not json\n").unwrap();
    fs::write(sessions.join("odd\nname 'x'.jsonl"), session("odd")).unwrap();
    // A FIFO inside a directory is not a regular file: not taken, and nothing waits on it.
    mkfifo(&sessions.join("stuck.jsonl"));
    let elsewhere = dir.join("elsewhere.jsonl");
    fs::write(&elsewhere, session("linked")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join("link.jsonl")).unwrap();
    // A FIFO given by name is read as a stream, once, and kept for the second pass.
    let fifo = dir.join("live.jsonl");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::write(&fifo, session("fifo")).unwrap())
    };
    let out = dir.join("out");
    // Validated too: the FIFO's bytes, kept from the first pass, are what is validated.
    let r = export(
        &[s(&sessions), s(&dir.join("link.jsonl")), s(&fifo)],
        &out,
        &["--validate"],
    );
    writer.join().unwrap();
    r.assert_code(1);
    assert!(r.stderr.contains("broken.jsonl: skipped:"), "{}", r.stderr);
    let ids: Vec<String> = read(&out, "sessions")
        .iter()
        .flat_map(|b| {
            let a = b
                .column_by_name("session_id")
                .unwrap()
                .as_string::<i32>()
                .clone();
            (0..a.len())
                .map(move |i| a.value(i).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    let mut ids = ids;
    ids.sort();
    assert_eq!(ids, ["fifo", "good", "linked", "odd"]);
    for b in read(&out, "sessions") {
        let pi_loadable = b
            .column_by_name("pi_loadable")
            .unwrap()
            .as_boolean()
            .clone();
        assert_eq!(pi_loadable.null_count(), 0);
        assert!(pi_loadable.iter().all(|v| v == Some(true)));
    }
    // The four sessions hold the same two entries (same ids and times): written once.
    assert_eq!(rows(&read(&out, "messages")), 2);
    assert!(
        files(&out)
            .iter()
            .all(|p| !p.to_string_lossy().ends_with(".tmp"))
    );
}

#[test]
fn an_output_directory_with_files_is_never_overwritten() {
    let dir = scratch("tables-existing");
    let input = dir.join("s.jsonl");
    fs::write(&input, session("a")).unwrap();
    let out = dir.join("out");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("notes.txt"), "mine").unwrap();
    let r = export(&[s(&input)], &out, &[]);
    r.assert_code(2);
    assert!(r.stderr.contains("not empty"), "{}", r.stderr);
    assert_eq!(files(&out), [out.join("notes.txt")]);
    // An output that is a file is refused too.
    let r = export(&[s(&input)], &out.join("notes.txt"), &[]);
    assert_ne!(r.code, Some(0));
    assert_eq!(fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    // No -o at all.
    run(&["export", "--format", "parquet", s(&input)], T).assert_code(2);
}

#[test]
fn compression_options_are_checked_before_anything_is_written() {
    let dir = scratch("tables-compression");
    let input = dir.join("s.jsonl");
    fs::write(&input, session("a")).unwrap();
    let out = dir.join("out");
    // Out of zstd's range, 0, a level for a codec without levels, an unknown codec: exit 2,
    // with what to give instead, and no directory made.
    for (extra, said) in [
        (&["--compression-level", "23"][..], "give a level from -7"),
        (&["--compression-level", "-8"][..], "give a level from -7"),
        (
            &["--compression", "zstd", "--compression-level", "0"][..],
            "level 0 is not taken",
        ),
        (
            &["--compression", "snappy", "--compression-level", "3"][..],
            "snappy has no compression levels",
        ),
        (
            &["--compression", "none", "--compression-level", "1"][..],
            "none has no compression levels",
        ),
        (&["--compression", "gzip"][..], "invalid value 'gzip'"),
    ] {
        let r = export(&[s(&input)], &out, extra);
        r.assert_code(2);
        assert!(r.stderr.contains(said), "{extra:?}: {}", r.stderr);
        assert!(!out.exists(), "{extra:?}");
    }
    // Only --format parquet takes them.
    for option in [
        &["--compression", "lz4"][..],
        &["--compression-level", "3"][..],
    ] {
        let mut args = vec!["export", "--format", "markdown", s(&input)];
        args.extend_from_slice(option);
        let r = run(&args, T);
        r.assert_code(2);
        assert!(
            r.stderr.contains("is an option of --format parquet"),
            "{}",
            r.stderr
        );
    }
    // A level in range: written, and read back as zstd.
    export(&[s(&input)], &out, &["--compression-level", "-3"]).assert_code(0);
    assert_eq!(rows(&read(&out, "entries")), 2);
}

#[test]
fn since_adds_a_partition_set_beside_the_old_files() {
    let dir = scratch("tables-since");
    let input = dir.join("s.jsonl");
    let later = r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-03-05T00:00:00.000Z","message":{"role":"user","content":"later","timestamp":3}}
"#;
    fs::write(&input, session("a") + later).unwrap();
    let out = dir.join("out");
    export(&[s(&input)], &out, &["--partition-by", "month"]).assert_code(0);
    let first: Vec<(PathBuf, Vec<u8>)> = files(&out)
        .into_iter()
        .map(|p| {
            let b = fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    assert!(
        first
            .iter()
            .any(|(p, _)| p.starts_with(out.join("messages/month=2026-01")))
    );
    assert!(
        first
            .iter()
            .any(|(p, _)| p.starts_with(out.join("messages/month=2026-03")))
    );
    // Again without --since: refused.
    export(&[s(&input)], &out, &["--partition-by", "month"]).assert_code(2);
    export(
        &[s(&input)],
        &out,
        &["--partition-by", "month", "--since", "2026-03-01"],
    )
    .assert_code(0);
    let now = files(&out);
    for (p, bytes) in &first {
        assert_eq!(
            &fs::read(p).unwrap(),
            bytes,
            "{} was rewritten",
            p.display()
        );
    }
    let added: Vec<&PathBuf> = now
        .iter()
        .filter(|p| !first.iter().any(|(q, _)| q == *p))
        .collect();
    assert!(!added.is_empty());
    assert!(
        added
            .iter()
            .all(|p| !p.starts_with(out.join("messages/month=2026-01"))),
        "{added:?}"
    );
    // The new messages: only the one at or after the date.
    let new_messages: u64 = added
        .iter()
        .filter(|p| p.starts_with(out.join("messages")))
        .map(|p| {
            ParquetRecordBatchReaderBuilder::try_new(fs::File::open(p).unwrap())
                .unwrap()
                .metadata()
                .file_metadata()
                .num_rows() as u64
        })
        .sum();
    assert_eq!(new_messages, 1);
    export(&[s(&input)], &out, &["--since", "someday"]).assert_code(2);
}

/// Standard input is read once, in the first pass, and kept for the second.
#[test]
fn standard_input_is_read_once() {
    let dir = scratch("tables-stdin");
    let out = dir.join("out");
    let mut command = bin();
    command.args(["export", "--format", "parquet", "-o", s(&out), "-"]);
    let r = run_limited(command, Some(session("stdin").as_bytes()), T);
    r.assert_code(0);
    let files: Vec<String> = read(&out, "sessions")
        .iter()
        .flat_map(|b| {
            let a = b.column_by_name("file").unwrap().as_string::<i32>().clone();
            (0..a.len())
                .map(move |i| a.value(i).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(files, ["-"]);
    assert_eq!(rows(&read(&out, "messages")), 2);
}

/// A write error stops the export (exit 1) and says so; no temporary file is left.
#[test]
fn a_write_error_stops_the_export() {
    let dir = scratch("tables-write-error");
    let input = dir.join("s.jsonl");
    fs::write(&input, session("a")).unwrap();
    let out = dir.join("out");
    fs::create_dir_all(&out).unwrap();
    // `entries` cannot be made a directory: a file is in the way.
    fs::write(out.join("entries"), "in the way").unwrap();
    let r = export(&[s(&input)], &out, &["--since", "2000-01-01"]);
    r.assert_code(1);
    assert!(r.stderr.contains("the export stopped"), "{}", r.stderr);
    assert_eq!(
        fs::read_to_string(out.join("entries")).unwrap(),
        "in the way"
    );
    assert!(
        files(&out)
            .iter()
            .all(|p| !p.to_string_lossy().ends_with(".tmp"))
    );
}

/// The benchmark of docs/PERFORMANCE.md as a guard: 10,000 sessions, 1 GB, exported with
/// peak memory under 512 MiB (the target) and within three times the measured 7.7 s in a
/// release build (the 3 s target is not met; see docs/PERFORMANCE.md), ten times in debug.
#[test]
#[ignore = "writes a 1 GB tree of 10,000 files; run with --ignored in a release build"]
fn export_of_10_000_sessions_of_1gb_stays_in_bounds() {
    let dir = scratch("tables-10k");
    let tree = dir.join("sessions");
    let mut generate = bin();
    generate.args([
        "gen",
        "--tree",
        s(&tree),
        "--files",
        "10000",
        "--size",
        "1GB",
        "--seed",
        "1",
    ]);
    run_limited(generate, None, Duration::from_secs(1200)).assert_code(0);
    let out = dir.join("out");
    let r = export(&[s(&tree)], &out, &[]);
    r.assert_code(0);
    eprintln!(
        "export of 10,000 sessions: {:?}, peak RSS {} MiB",
        r.elapsed,
        r.max_rss_kib / 1024
    );
    assert_eq!(rows(&read(&out, "sessions")), 10_000);
    assert!(r.max_rss_kib < 512 * 1024, "peak RSS {} KiB", r.max_rss_kib);
    let bound = if cfg!(debug_assertions) { 240.0 } else { 24.0 };
    assert!(r.elapsed.as_secs_f64() < bound, "{:?}", r.elapsed);
}

/// `--redact`: every string column of every table holds placeholders, never a secret.
#[test]
fn redact_puts_placeholders_in_the_tables() {
    use arrow_array::cast::AsArray;
    let dir = scratch("tables-redact");
    let (session, secrets) = crate::export_cli::session_with_secrets(&dir);
    let strings = |out: &Path| {
        let mut all = Vec::new();
        for table in ["sessions", "entries", "messages", "tool_calls"] {
            for b in read(out, table) {
                for column in b.columns() {
                    if let Some(text) = column.as_string_opt::<i32>() {
                        all.extend(text.iter().flatten().map(str::to_owned));
                    }
                }
            }
        }
        all
    };
    let plain = dir.join("plain");
    export(&[s(&session)], &plain, &[]);
    assert!(strings(&plain).iter().any(|t| t.contains(secrets[0])));
    let redacted = dir.join("redacted");
    export(
        &[s(&session)],
        &redacted,
        &["--redact", "--secret", secrets[2]],
    );
    let texts = strings(&redacted);
    assert!(texts.iter().any(|t| t.contains("[REDACTED:github-pat:")));
    for secret in secrets {
        assert!(
            !texts.iter().any(|t| t.contains(secret)),
            "{secret} in a table"
        );
    }
}
