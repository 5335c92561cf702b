//! The tables read back with the parquet crate's Arrow reader (no Python needed): a parent
//! session and its fork, forked history once (and every copy with `no_dedupe`), usage as the
//! ledger adds it, tool calls joined to their results, tree facts, partitions, the schema
//! version in the metadata, and no file ever overwritten; and a whole [`Export`] of files: the
//! files that are not sessions skipped and said, the output directory's refusals, the runs of
//! killed exports removed, an export that cannot start writing nothing.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use pi_session_format::stats::ledger::{self, SessionFacts};
use pi_session_format::{PiVersion, Session};
use pi_session_fs::discover::Target;
use pi_session_tables::{
    Codec, Compression, Export, Layout, Options, Ownership, PartitionBy, Refusal, SCHEMA_VERSION,
    SCHEMA_VERSION_KEY, SessionKeys, Sink, Stamp, Table,
};
use std::path::{Path, PathBuf};

const PARENT: &str = r#"{"type":"session","version":3,"id":"p","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"listing"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"p":"."}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":18,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"ls","content":[{"type":"text","text":"a.rs"}],"isError":false,"timestamp":3}}
{"type":"message","id":"a4","parentId":"zz","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"nope","toolName":"ls","content":[{"type":"text","text":"orphan"}],"isError":true,"timestamp":4}}
{"type":"compaction","id":"a5","parentId":"a3","timestamp":"2026-01-01T00:00:05.000Z","summary":"done","firstKeptEntryId":"a3","tokensBefore":900,"usage":{"input":3,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.125}}}
"#;

const FORK: &str = r#"{"type":"session","version":3,"id":"f","timestamp":"2026-02-01T00:00:00.000Z","cwd":"/w","parentSession":"/s/parent.jsonl"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"listing"},{"type":"toolCall","id":"c1","name":"ls","arguments":{"p":"."}}],"provider":"anthropic","model":"claude","usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":18,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"b3","parentId":"a2","timestamp":"2026-02-02T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"later"}],"provider":"openai","model":"gpt","responseModel":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.25}},"stopReason":"stop","timestamp":5}}
{"type":"usage","id":"b4","parentId":"b3","timestamp":"2026-02-02T00:00:04.000Z","kind":"warm","provider":"openai","model":"gpt","usage":{"input":7,"output":0,"cacheRead":0,"cacheWrite":0,"cost":{"total":0.0625}}}
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tables")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Exports the two sessions into `dir` on one writer; the files written.
fn export(dir: &Path, options: &Options) -> Vec<PathBuf> {
    export_compressed(dir, options, Compression::default())
}

/// [`export`] with `compression`.
fn export_compressed(dir: &Path, options: &Options, compression: Compression) -> Vec<PathBuf> {
    let files = [("/s/fork.jsonl", FORK), ("/s/parent.jsonl", PARENT)];
    let sessions: Vec<Session> = files
        .iter()
        .map(|(_, text)| Session::from_bytes(text.as_bytes(), PiVersion::V0_87).unwrap())
        .collect();
    let keys = files
        .iter()
        .zip(&sessions)
        .enumerate()
        .map(|(i, ((path, _), s))| SessionKeys::of(s, path, i))
        .collect();
    let ownership = Ownership::new(keys);
    let layout = Layout {
        dir: dir.to_owned(),
        run: "test".into(),
        stamp: Stamp {
            dedupe: !options.no_dedupe,
            since: None,
        },
        compression,
    };
    let mut sink = Sink::new(layout, 0);
    for (i, &source) in ownership.sources().iter().enumerate() {
        let path = ownership.file(i as u32).to_owned();
        pi_session_tables::write_session(
            &sessions[source],
            &pi_session_tables::Source {
                path: &path,
                holder: i as u32,
                verdicts: None,
            },
            &ownership,
            options,
            &mut sink,
            &|_| {},
        )
        .unwrap();
    }
    sink.finish().unwrap()
}

/// Every batch of `table` under `dir` (any partition).
fn read(dir: &Path, table: Table) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    let mut stack = vec![dir.join(table.name())];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                let file = std::fs::File::open(&p).unwrap();
                let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
                let kv = builder
                    .metadata()
                    .file_metadata()
                    .key_value_metadata()
                    .unwrap();
                assert!(kv.iter().any(|k| k.key == SCHEMA_VERSION_KEY
                    && k.value.as_deref() == Some(&SCHEMA_VERSION.to_string())));
                out.extend(builder.build().unwrap().map(Result::unwrap));
            }
        }
    }
    out
}

fn strings(batches: &[RecordBatch], column: &str) -> Vec<Option<String>> {
    batches
        .iter()
        .flat_map(|b| {
            let a = b.column_by_name(column).unwrap().as_string::<i32>().clone();
            (0..a.len())
                .map(move |i| a.is_valid(i).then(|| a.value(i).to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn floats(batches: &[RecordBatch], column: &str) -> f64 {
    batches
        .iter()
        .map(|b| {
            let a = b
                .column_by_name(column)
                .unwrap()
                .as_primitive::<Float64Type>();
            a.iter().flatten().sum::<f64>()
        })
        .sum()
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

#[test]
fn forked_history_is_written_once_and_adds_up_as_stats() {
    let dir = scratch("once");
    export(&dir, &Options::default());
    let entries = read(&dir, Table::Entries);
    // 5 parent entries, 4 in the fork of which 2 are copies.
    assert_eq!(rows(&entries), 7);
    let copied: Vec<usize> = entries
        .iter()
        .flat_map(|b| {
            let l = b
                .column_by_name("copied_in")
                .unwrap()
                .as_list::<i32>()
                .clone();
            (0..l.len())
                .map(move |i| l.value(i).len())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(copied.iter().filter(|&&n| n == 1).count(), 2);
    // The totals of `stats` (the ledger).
    let facts = [("/s/parent.jsonl", PARENT), ("/s/fork.jsonl", FORK)]
        .iter()
        .map(|(p, t)| {
            SessionFacts::of(
                &Session::from_bytes(t.as_bytes(), PiVersion::V0_87).unwrap(),
                p,
            )
        })
        .collect();
    let report = ledger::report(facts, &ledger::Options::default());
    let messages = read(&dir, Table::Messages);
    assert_eq!(rows(&messages) as u64, report.total.messages);
    assert_eq!(
        floats(&messages, "cost_total"),
        report.total.message_usage.cost
    );
    assert_eq!(floats(&messages, "input"), report.total.message_usage.input);
    let compactions = read(&dir, Table::Compactions);
    assert_eq!(
        floats(&compactions, "cost_total"),
        report.total.summary_usage.cost
    );
    let usage = read(&dir, Table::UsageEntries);
    assert_eq!(
        floats(&usage, "cost_total"),
        report.total.usage_entry_usage.cost
    );
    // The tool call and its result; the orphan result is flagged.
    let calls = read(&dir, Table::ToolCalls);
    assert_eq!(strings(&calls, "result_entry_id"), [Some("a3".to_owned())]);
    // Its text is the result's row in `messages` (schema 2: not repeated in `tool_calls`).
    assert!(calls[0].column_by_name("result_text").is_none());
    let result_texts: Vec<Option<String>> = strings(&messages, "entry_id")
        .into_iter()
        .zip(strings(&messages, "text"))
        .filter(|(id, _)| id.as_deref() == Some("a3"))
        .map(|(_, text)| text)
        .collect();
    assert_eq!(result_texts, [Some("a.rs".to_owned())]);
    let found: Vec<Option<bool>> = messages
        .iter()
        .flat_map(|b| {
            b.column_by_name("call_found")
                .unwrap()
                .as_boolean()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(found.iter().filter(|f| **f == Some(false)).count(), 1);
    // The dangling parent of a4 is flagged; depths follow the parents.
    let parent_found: Vec<Option<bool>> = entries
        .iter()
        .flat_map(|b| {
            b.column_by_name("parent_found")
                .unwrap()
                .as_boolean()
                .iter()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        parent_found.iter().filter(|f| **f == Some(false)).count(),
        1
    );
    let depth_max = entries
        .iter()
        .filter_map(|b| {
            arrow_array::cast::AsArray::as_primitive::<Int64Type>(
                b.column_by_name("depth").unwrap(),
            )
            .iter()
            .flatten()
            .max()
        })
        .max();
    assert_eq!(depth_max, Some(3));
    let sessions = read(&dir, Table::Sessions);
    assert_eq!(rows(&sessions), 2);
}

#[test]
fn no_dedupe_writes_every_copy_flagged() {
    let dir = scratch("every-copy");
    export(
        &dir,
        &Options {
            no_dedupe: true,
            ..Options::default()
        },
    );
    let entries = read(&dir, Table::Entries);
    assert_eq!(rows(&entries), 9);
    let copies = entries
        .iter()
        .map(|b| {
            b.column_by_name("is_copy")
                .unwrap()
                .as_boolean()
                .true_count()
        })
        .sum::<usize>();
    assert_eq!(copies, 2);
    assert_eq!(
        strings(&entries, "owner_file")
            .iter()
            .flatten()
            .collect::<Vec<_>>(),
        ["/s/parent.jsonl", "/s/parent.jsonl"]
    );
}

#[test]
fn month_partitions_and_since() {
    let dir = scratch("months");
    let files = export(
        &dir,
        &Options {
            partition_by: Some(PartitionBy::Month),
            since_ms: Some(pi_session_format::date::parse_date("2026-02-01")),
            ..Options::default()
        },
    );
    let names: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(&dir)
                .unwrap()
                .parent()
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert!(
        names.contains(&"messages/month=2026-02".to_owned()),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.contains("2026-01") && n.starts_with("messages"))
    );
    assert_eq!(rows(&read(&dir, Table::Messages)), 1);
}

#[test]
fn an_existing_file_is_never_overwritten() {
    let dir = scratch("never-overwrite");
    export(&dir, &Options::default());
    let before = std::fs::read(dir.join("entries/part-test-000-00001.parquet")).ok();
    // The same run name again: every part file exists already.
    let result = std::panic::catch_unwind(|| export(&dir, &Options::default()));
    assert!(
        result.is_err(),
        "a second export over the same names must fail"
    );
    assert_eq!(
        std::fs::read(dir.join("entries/part-test-000-00001.parquet")).ok(),
        before
    );
    let leftovers: Vec<_> = walk(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn every_column_is_documented() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tables.md"))
            .unwrap();
    assert!(doc.contains(&format!("Schema version: **{SCHEMA_VERSION}**")));
    for table in Table::ALL {
        let section = doc
            .split(&format!("### `{}`", table.name()))
            .nth(1)
            .unwrap_or_else(|| panic!("docs/tables.md has no section for {}", table.name()));
        let section = section.split("\n### ").next().unwrap();
        for c in table.columns() {
            let row = format!("| `{}` | {} |", c.name, c.doc_type);
            assert!(
                section.contains(&row),
                "docs/tables.md, {}: no row `{row}`",
                table.name()
            );
        }
    }
}

/// The rows pass finds a message's fact from the members its one read of the line found
/// (`text::line`) and the loader's scan: the same fact `stats` finds, on every message of
/// every session of the corpus (lines with repeated keys, escapes, odd values among them).
#[test]
fn facts_from_the_line_read_are_the_facts_stats_finds() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance");
    let mut scanner = pi_session_format::json::LineScanner::default();
    let mut compared = 0;
    for path in walk(&corpus) {
        if path.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        for pi in [PiVersion::V0_73, PiVersion::V0_87] {
            let Ok(session) = Session::from_bytes(&bytes, pi) else {
                continue;
            };
            for record in session.entry_records() {
                if record.entry_type() != Some("message") || record.is_rewritten() {
                    continue;
                }
                let line = pi_session_tables::text::line(record.text()).unwrap();
                let from_parts = ledger::fact_of_message_parts(
                    record.text(),
                    line.id_span,
                    line.timestamp_span,
                    record.message.as_ref(),
                    session.dialect,
                );
                let expected = ledger::fact_of_record(record, session.dialect, &mut scanner);
                if let Some(fact) = from_parts {
                    assert_eq!(
                        format!("{fact:?}"),
                        format!("{:?}", expected.unwrap()),
                        "{}: line {}",
                        path.display(),
                        record.line
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 5_000, "{compared} messages compared");
}

/// The two sessions and a file that is not one, in `dir`: their targets.
fn session_files(dir: &Path) -> Vec<Target> {
    std::fs::create_dir_all(dir).unwrap();
    let mut targets = Vec::new();
    for (name, text) in [
        ("parent.jsonl", PARENT.to_owned()),
        (
            "fork.jsonl",
            FORK.replace(
                "/s/parent.jsonl",
                &dir.join("parent.jsonl").to_string_lossy(),
            ),
        ),
        ("notes.jsonl", "not a session\n".to_owned()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        targets.push(Target::File(path));
    }
    targets
}

#[test]
fn an_export_writes_every_session_and_says_which_files_it_skipped() {
    let dir = scratch("export-whole");
    let targets = session_files(&dir.join("in"));
    let export = Export::new(dir.join("out"));
    export.check_output().unwrap();
    let exported = export.write(&targets).unwrap();
    assert_eq!(exported.sessions, 2);
    assert_eq!(exported.skipped.len(), 1, "{:?}", exported.skipped);
    assert!(
        exported.skipped[0].0.ends_with("notes.jsonl"),
        "{:?}",
        exported.skipped
    );
    assert!(exported.marker_left.is_none());
    // The fork's copy of a1 and a2 is its parent's: counted once.
    assert_eq!(exported.written.copies, 2);
    assert_eq!(exported.written.entries, 5 + 2);
    assert_eq!(rows(&read(&dir.join("out"), Table::Entries)), 7);
    for file in &exported.files {
        assert!(
            file.starts_with(dir.join("out")) && file.is_file(),
            "{}",
            file.display()
        );
    }
    // Nothing but the tables: no marker, no temporary.
    assert!(
        walk(&dir.join("out"))
            .iter()
            .all(|p| p.extension().is_some_and(|x| x == "parquet"))
    );

    // A second export into it is refused, unless it adds (`since`).
    let again = Export::new(dir.join("out"));
    let refusal = again.check_output().unwrap_err();
    assert!(matches!(refusal, Refusal::NotEmpty(..)), "{refusal}");
    assert!(
        refusal.to_string().contains("nothing is overwritten"),
        "{refusal}"
    );
    let adding = Export {
        since: Some("2026-02-01".into()),
        ..Export::new(dir.join("out"))
    };
    adding.check_output().unwrap();

    // An export of another schema version is not added to: its tables would not read as one.
    // The old part's name sorts after the export's own parts, so it is found only if every
    // part is read, not just the first one listed.
    let old_part = dir.join("out/tool_calls/~old.parquet");
    write_part_of_version(&old_part, "1");
    let refusal = adding.check_output().unwrap_err();
    assert!(matches!(refusal, Refusal::OtherSchema(..)), "{refusal}");
    assert!(
        refusal.to_string().contains("schema version 1, not 2"),
        "{refusal}"
    );
    std::fs::write(&old_part, b"not parquet").unwrap();
    let refusal = adding.check_output().unwrap_err();
    assert!(refusal.to_string().contains("(none read)"), "{refusal}");
}

/// A Parquet file of one column whose metadata says schema version `version`.
fn write_part_of_version(path: &Path, version: &str) {
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    let batch = RecordBatch::try_from_iter([(
        "n",
        std::sync::Arc::new(arrow_array::Int64Array::from(vec![1])) as arrow_array::ArrayRef,
    )])
    .unwrap();
    let properties = WriterProperties::builder()
        .set_key_value_metadata(Some(vec![KeyValue::new(
            pi_session_tables::SCHEMA_VERSION_KEY.to_owned(),
            version.to_owned(),
        )]))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer =
        parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

#[test]
fn a_running_export_is_waited_for_and_a_killed_one_removed() {
    let dir = scratch("export-runs");
    std::fs::create_dir_all(&dir).unwrap();
    // The marker of a run of this very process: it runs.
    let ours = dir.join(format!(
        ".pi-session-export-1-{}.unfinished",
        std::process::id()
    ));
    std::fs::write(&ours, "").unwrap();
    let export = Export::new(&dir);
    let refusal = export.check_output().unwrap_err();
    assert!(matches!(refusal, Refusal::Running(..)), "{refusal}");
    assert!(
        refusal.to_string().contains("another export is writing"),
        "{refusal}"
    );
    std::fs::remove_file(&ours).unwrap();
    // A run of a process that no longer runs (above the kernel's largest pid): its marker and
    // part file are removed, and the directory is empty again.
    std::fs::create_dir_all(dir.join("entries")).unwrap();
    std::fs::write(dir.join(".pi-session-export-1-4194305.unfinished"), "").unwrap();
    std::fs::write(dir.join("entries/part-1-4194305-0-0.parquet"), "").unwrap();
    let removed = export.remove_dead_runs().unwrap();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0].1.parts, 1);
    export.check_output().unwrap();
}

#[test]
fn an_export_that_cannot_start_writes_nothing() {
    let dir = scratch("export-blocked");
    let targets = session_files(&dir.join("in"));
    // The output "directory" is a file.
    std::fs::write(dir.join("out"), "a file").unwrap();
    let stopped = Export::new(dir.join("out")).write(&targets).unwrap_err();
    assert!(stopped.cleanup.is_none(), "nothing was written");
    assert_eq!(stopped.skipped.len(), 1);
    assert_eq!(std::fs::read(dir.join("out")).unwrap(), b"a file");
}

/// Every column chunk of every file is compressed as asked: zstd at level 1 by default, and each
/// codec of `--compression` as Parquet names it.
#[test]
fn column_chunks_are_compressed_as_asked() {
    use parquet::basic::Compression as P;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let cases = [
        (Compression::default(), "ZSTD"),
        (Compression::new(Codec::Zstd, Some(9)).unwrap(), "ZSTD"),
        (Compression::new(Codec::Lz4, None).unwrap(), "LZ4_RAW"),
        (Compression::new(Codec::Snappy, None).unwrap(), "SNAPPY"),
        (Compression::new(Codec::None, None).unwrap(), "UNCOMPRESSED"),
    ];
    let mut sizes = Vec::new();
    for (n, (compression, want)) in cases.into_iter().enumerate() {
        let dir = scratch(&format!("compression-{n}"));
        let files = export_compressed(&dir, &Options::default(), compression);
        assert!(!files.is_empty());
        let mut chunks = 0;
        let mut size = 0;
        for file in &files {
            let reader = SerializedFileReader::new(std::fs::File::open(file).unwrap()).unwrap();
            for group in reader.metadata().row_groups() {
                for column in group.columns() {
                    chunks += 1;
                    size += column.compressed_size();
                    let got = match column.compression() {
                        P::ZSTD(_) => "ZSTD",
                        P::LZ4_RAW => "LZ4_RAW",
                        P::SNAPPY => "SNAPPY",
                        P::UNCOMPRESSED => "UNCOMPRESSED",
                        other => panic!("{}: {other:?}", file.display()),
                    };
                    assert_eq!(got, want, "{}", file.display());
                }
            }
        }
        assert!(chunks > 0);
        sizes.push(size);
        // Read back as written, whatever the codec.
        assert_eq!(
            strings(&read(&dir, Table::ToolCalls), "call_id"),
            [Some("c1".to_owned())]
        );
    }
    // Each codec wrote other bytes than no compression (on rows this small, compression
    // adds more than it saves, so only the difference is checked).
    assert!(sizes[..4].iter().all(|&s| s != sizes[4]), "{sizes:?}");
}
