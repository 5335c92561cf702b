//! The tables in memory ([`Export::batches`]) against the Parquet export read back with the
//! parquet crate's Arrow reader ([`Export::write`]): the same schema, and row for row the same
//! values, on a parent session, its fork and a fork of the fork (dedupe on and off), a file
//! that is not a session, and the conformance corpus's cases (forks, odd lines, version 2,
//! real sessions; not version 1, whose ids are new at every load), validated so that the verdict columns are filled too. On one thread the
//! two give the rows in the same order; on several, the same rows in another order. The
//! batches are not partitioned and have no partition column, whatever `partition_by` says.

use arrow_array::{Array, ArrayRef, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use pi_session_format::{PiVersion, Session, json};
use pi_session_fs::discover::Target;
use pi_session_tables::{Batches, Export, Options, PartitionBy, Table};
use std::path::{Path, PathBuf};

const PARENT: &str = r#"{"type":"session","version":3,"id":"p","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"listing"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"p":"."}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":18,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"text","text":"a.rs"}],"isError":false,"timestamp":3}}
{"type":"message","id":"a4","parentId":"zz","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"nope","toolName":"ls","content":[{"type":"text","text":"orphan"}],"isError":true,"timestamp":4}}
{"type":"compaction","id":"a5","parentId":"a3","timestamp":"2026-01-01T00:00:05.000Z","summary":"done","firstKeptEntryId":"a3","tokensBefore":900,"usage":{"input":3,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.125}}}
"#;

const FORK: &str = r#"{"type":"session","version":3,"id":"f","timestamp":"2026-02-01T00:00:00.000Z","cwd":"/w","parentSession":"PARENT"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"listing"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"p":"."}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":18,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"b3","parentId":"a2","timestamp":"2026-02-02T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"later"}],"provider":"openai","model":"gpt","responseModel":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}},"stopReason":"stop","timestamp":5}}
{"type":"usage","id":"b4","parentId":"b3","timestamp":"2026-02-02T00:00:04.000Z","kind":"warm","provider":"openai","model":"gpt","usage":{"input":7,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.0625}}}
"#;

/// A fork of the fork: the parent's history and the fork's, and a branch summary.
const FORK2: &str = r#"{"type":"session","version":3,"id":"g","timestamp":"2026-03-01T00:00:00.000Z","cwd":"/v","parentSession":"FORK"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"listing"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"p":"."}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":18,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"b3","parentId":"a2","timestamp":"2026-02-02T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"later"}],"provider":"openai","model":"gpt","responseModel":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}},"stopReason":"stop","timestamp":5}}
{"type":"branch_summary","id":"c4","parentId":"b3","timestamp":"2026-03-02T00:00:04.000Z","fromId":"a2","summary":"tried ls"}
{"type":"message","id":"c5","parentId":"c4","timestamp":"2026-03-02T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"text","text":"b.rs"}],"isError":false,"timestamp":6}}
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("batches")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Whether loading the file twice gives other entries: a version 1 session, whose entries
/// get random ids at every load (pi's migration).
fn loads_differently(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap();
    let entries = || -> Option<Vec<String>> {
        let session = Session::from_bytes(&bytes, PiVersion::default()).ok()?;
        Some(
            session
                .entries
                .iter()
                .map(|&i| json::to_string(&session.records[i].value()))
                .collect(),
        )
    };
    entries() != entries()
}

/// The three sessions and a file that is not one, in `dir`, and, with `corpus`, every
/// session file of `conformance/cases/`: their targets.
fn targets(dir: &Path, corpus: bool) -> Vec<Target> {
    std::fs::create_dir_all(dir).unwrap();
    let parent = dir.join("parent.jsonl");
    let fork = dir.join("fork.jsonl");
    let mut out = Vec::new();
    for (path, text) in [
        (parent.clone(), PARENT.to_owned()),
        (
            fork.clone(),
            FORK.replace("PARENT", &parent.to_string_lossy()),
        ),
        (
            dir.join("fork2.jsonl"),
            FORK2.replace("FORK", &fork.to_string_lossy()),
        ),
        (dir.join("notes.jsonl"), "not a session\n".to_owned()),
    ] {
        std::fs::write(&path, text).unwrap();
        out.push(Target::File(path));
    }
    if corpus {
        let mut files = Vec::new();
        files_under(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases"),
            &mut files,
        );
        // Not the version 1 sessions: their entries get random ids at every load.
        out.extend(
            files
                .into_iter()
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && !loads_differently(p))
                .map(Target::File),
        );
    }
    out
}

/// Every batch of `table` in the export at `dir`, part files in the order of their names
/// (one writer's parts in the order it made them).
fn read_back(dir: &Path, table: Table) -> Vec<RecordBatch> {
    let mut files = Vec::new();
    files_under(&dir.join(table.name()), &mut files);
    let mut out = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("part-") && name.ends_with(".parquet"),
            "{}",
            path.display()
        );
        let file = std::fs::File::open(&path).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap();
        out.extend(reader.map(Result::unwrap));
    }
    out
}

/// The rows of `batches`, each as its columns' one-row slices.
fn rows(batches: &[RecordBatch]) -> Vec<Vec<ArrayRef>> {
    batches
        .iter()
        .flat_map(|b| {
            (0..b.num_rows()).map(move |i| {
                b.columns()
                    .iter()
                    .map(|c| c.slice(i, 1))
                    .collect::<Vec<_>>()
            })
        })
        .collect()
}

/// The rows of `batches` as text, sorted (for tables whose rows come in another order).
fn sorted_rows(batches: &[RecordBatch]) -> Vec<String> {
    let mut out: Vec<String> = rows(batches).iter().map(|row| format!("{row:?}")).collect();
    out.sort();
    out
}

/// An export of `targets` with `options`, to Parquet under `dir` and in memory: the two
/// checked to be the same (in the same row order when `same_order`); the batches.
fn compare(dir: &Path, targets: &[Target], options: &Options, same_order: bool) -> Batches {
    let export = Export {
        options: options.clone(),
        validate: true,
        ..Export::new(dir)
    };
    let exported = export.write(targets).unwrap();
    // The export is not partitioned: the batches of a partitioned one are the same.
    let batches = Export {
        options: Options {
            partition_by: Some(PartitionBy::Month),
            ..options.clone()
        },
        ..export.clone()
    }
    .batches(targets);
    assert_eq!(batches.sessions, exported.sessions);
    assert_eq!(batches.written, exported.written);
    assert_eq!(batches.skipped, exported.skipped);
    assert_eq!(
        batches.tables.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        Table::ALL
    );
    for table in Table::ALL {
        let ours = batches.table(table);
        let theirs = read_back(dir, table);
        // Every batch has the table's schema, the fields of the files' (which add their
        // key-value metadata).
        let schema = table.schema();
        assert!(schema.metadata().is_empty());
        for batch in ours {
            assert_eq!(batch.schema(), schema, "{}", table.name());
            assert!(batch.num_rows() > 0, "{}: an empty batch", table.name());
        }
        for batch in &theirs {
            assert_eq!(batch.schema().fields(), schema.fields(), "{}", table.name());
        }
        let (ours_rows, theirs_rows) = (rows(ours), rows(&theirs));
        assert_eq!(ours_rows.len(), theirs_rows.len(), "{}: rows", table.name());
        if same_order {
            for (n, (a, b)) in ours_rows.iter().zip(&theirs_rows).enumerate() {
                for ((x, y), field) in a.iter().zip(b).zip(schema.fields()) {
                    assert!(
                        x.as_ref() == y.as_ref(),
                        "{}, row {n}, {}: {x:?} in memory, {y:?} in the file",
                        table.name(),
                        field.name()
                    );
                }
            }
        } else {
            assert!(
                sorted_rows(ours) == sorted_rows(&theirs),
                "{}: other rows",
                table.name()
            );
        }
    }
    batches
}

/// On one thread (one writer, one collector): the same rows in the same order.
fn on_one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn the_batches_of_forks_are_the_export_read_back_row_for_row() {
    let dir = scratch("forks");
    let targets = targets(&dir.join("in"), false);
    for no_dedupe in [false, true] {
        let options = Options {
            no_dedupe,
            ..Options::default()
        };
        let out = dir.join(format!("out-{no_dedupe}"));
        let batches = on_one_thread(|| compare(&out, &targets, &options, true));
        assert_eq!(batches.sessions, 3);
        assert_eq!(batches.skipped.len(), 1, "{:?}", batches.skipped);
        assert!(batches.skipped[0].0.ends_with("notes.jsonl"));
        // 5 entries of the parent, 4 of the fork (2 copied), 5 of the fork's fork (3
        // copied): every copy with `no_dedupe`, flagged.
        let copies = if no_dedupe { 0 } else { 5 };
        assert_eq!(batches.written.copies, copies);
        assert_eq!(batches.rows(Table::Entries), 14 - copies as usize);
        assert_eq!(batches.rows(Table::Sessions), 3);
        assert_eq!(batches.rows(Table::Compactions), 2);
        assert_eq!(batches.rows(Table::UsageEntries), 1);
        assert_eq!(
            batches.rows(Table::ToolCalls),
            if no_dedupe { 3 } else { 1 }
        );
    }
}

#[test]
fn the_batches_of_the_corpus_are_the_export_read_back() {
    let dir = scratch("corpus");
    let targets = targets(&dir.join("in"), true);
    assert!(targets.len() > 500, "{} files", targets.len());
    for no_dedupe in [false, true] {
        let options = Options {
            no_dedupe,
            ..Options::default()
        };
        // One thread, rows in order.
        let out = dir.join(format!("one-{no_dedupe}"));
        let batches = on_one_thread(|| compare(&out, &targets, &options, true));
        assert!(batches.sessions > 400, "{}", batches.sessions);
        assert!(!batches.skipped.is_empty());
        assert!(
            batches.rows(Table::Messages) > 4_000,
            "{} messages",
            batches.rows(Table::Messages)
        );
        assert_eq!(batches.written.copies > 0, !no_dedupe);
        if no_dedupe {
            continue;
        }
        // Four threads (even on one core), each with its collector: the same rows, the same
        // copies left out.
        let out = dir.join("four");
        let four = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap()
            .install(|| compare(&out, &targets, &options, false));
        assert_eq!(four.written, batches.written);
    }
}

#[test]
fn since_keeps_the_same_rows_in_memory() {
    let dir = scratch("since");
    let targets = targets(&dir.join("in"), false);
    let options = Options {
        since_ms: Some(pi_session_format::date::parse_date("2026-02-01")),
        ..Options::default()
    };
    let batches = on_one_thread(|| compare(&dir.join("out"), &targets, &options, true));
    // The fork's two entries of February and the fork's fork's two of March (its copy of
    // the fork's February entry is the fork's).
    assert_eq!(batches.rows(Table::Entries), 2 + 2);
}

#[test]
fn no_target_gives_every_table_without_a_batch() {
    let batches = Export::new("").batches(&[]);
    assert_eq!(batches.sessions, 0);
    for (table, list) in &batches.tables {
        assert!(list.is_empty(), "{}", table.name());
    }
    assert_eq!(batches.rows(Table::Messages), 0);
}
