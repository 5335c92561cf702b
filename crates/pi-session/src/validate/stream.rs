//! Checking files in parallel and writing each one's output as soon as it can be, in the
//! order of the targets: a run over thousands of files, or over one file of a million
//! broken lines, holds a few reports in memory, never all of them.
//!
//! - [`in_order`]: a few worker threads take the targets in order (at most a window ahead
//!   of what has been written) and the caller's thread writes the results in order;
//! - [`Writer`]: the `json` report and the SARIF log written piece by piece, byte for byte
//!   what serialising the whole document at once would give (`json`) or the same document
//!   (SARIF, members in another order);
//! - [`Stdout`]: buffered standard output where a closed pipe (`| head`) ends the output
//!   quietly.

use super::{Checked, sarif};
use pi_session_format::{Dialect, PiVersion};
use pi_session_validate::{Summary, Tool, ValidateReport, VerdictMode};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Condvar, Mutex, PoisonError, mpsc};

/// Stack of the worker threads: the validator's own recursion is bounded, but the JSON
/// Schema check of a line nested 120 levels deep wants more than the default 2 MiB.
const WORKER_STACK: usize = 16 << 20;

/// Runs `work` on every item on a few threads and gives the results to `emit` in the order
/// of `items`, each as soon as it and all before it are done. Workers never run more than a
/// window of a few items ahead of `emit`, so that at most that many results wait in memory.
pub(super) fn in_order<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    mut emit: impl FnMut(R),
) {
    if items.is_empty() {
        return;
    }
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    let window = workers * 2;
    // (next item to claim, items emitted)
    let state = Mutex::new((0usize, 0usize));
    let wake = Condvar::new();
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (state, wake, work) = (&state, &wake, &work);
            let worker = move || {
                loop {
                    let i = {
                        let mut s = state.lock().unwrap_or_else(PoisonError::into_inner);
                        while s.0 < items.len() && s.0 >= s.1 + window {
                            s = wake.wait(s).unwrap_or_else(PoisonError::into_inner);
                        }
                        if s.0 >= items.len() {
                            return;
                        }
                        s.0 += 1;
                        s.0 - 1
                    };
                    if tx.send((i, work(&items[i]))).is_err() {
                        return;
                    }
                }
            };
            let spawned = std::thread::Builder::new()
                .name("validate".into())
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, worker);
            if spawned.is_err() {
                // No thread to be had: the others (or none, then the loop below) do the work.
                continue;
            }
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut next = 0;
        let mut done = |r: R, next: &mut usize| {
            emit(r);
            *next += 1;
            state.lock().unwrap_or_else(PoisonError::into_inner).1 = *next;
            wake.notify_all();
        };
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&next) {
                done(r, &mut next);
            }
        }
        // Only when no worker thread could be started: do the work here.
        while next < items.len() {
            let r = work(&items[next]);
            done(r, &mut next);
        }
    });
}

/// Buffered standard output. A closed pipe ends the output without an error; another write
/// error is kept for [`Stdout::flush`] and ends the output too.
#[derive(Default)]
pub(super) struct Stdout {
    buf: Vec<u8>,
    closed: bool,
    error: Option<String>,
}

impl Stdout {
    /// Writes `bytes` (buffered).
    pub(super) fn write(&mut self, bytes: &[u8]) {
        if self.closed || self.error.is_some() {
            return;
        }
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= 1 << 16 {
            self.send();
        }
    }

    fn send(&mut self) {
        if self.closed || self.error.is_some() {
            self.buf.clear();
            return;
        }
        let mut out = std::io::stdout().lock();
        match out.write_all(&self.buf).and_then(|()| out.flush()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => self.closed = true,
            Err(e) => self.error = Some(e.to_string()),
        }
        self.buf.clear();
    }

    /// Writes out what is buffered; `Err` when a write failed (other than a closed pipe).
    pub(super) fn flush(&mut self) -> Result<(), String> {
        self.send();
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// The output of a format, written file by file.
pub(super) enum Writer {
    /// Human, quiet and github: each file's text as it is.
    Text,
    /// `--format json`: the report's text around `files`, and whether a file was written.
    Json {
        head: String,
        tool: Tool,
        pi: PiVersion,
        dialect: Dialect,
        mode: VerdictMode,
        any: bool,
    },
    /// `--format sarif`: whether the head (up to `results`) was written, and the
    /// notifications of the files that could not be read (written at the end).
    Sarif {
        version: String,
        any: bool,
        notifications: Vec<Value>,
    },
}

/// `value` pretty-printed, every line after the first indented by `indent` spaces (JSON
/// strings hold no raw newline, so this is exactly the nesting of a pretty printer).
fn pretty_at(value: &impl serde::Serialize, indent: usize) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    text.replace('\n', &format!("\n{}", " ".repeat(indent)))
}

/// The marker that splits the report with no files into its head and its tail.
const FILES: &str = "\"files\": [";

impl Writer {
    /// The writer of the `json` report.
    pub(super) fn json(tool: Tool, pi: PiVersion, dialect: Dialect, mode: VerdictMode) -> Writer {
        let empty = ValidateReport::new(tool.clone(), pi, mode, Vec::new()).with_dialect(dialect);
        let text = pretty_at(&empty, 0);
        let head = match text.find(FILES) {
            Some(at) => text[..at + FILES.len()].to_string(),
            None => String::new(),
        };
        Writer::Json {
            head,
            tool,
            pi,
            dialect,
            mode,
            any: false,
        }
    }

    /// The writer of the SARIF log.
    pub(super) fn sarif(version: &str) -> Writer {
        Writer::Sarif {
            version: version.to_string(),
            any: false,
            notifications: Vec::new(),
        }
    }

    /// Writes one file, and shows it at once.
    pub(super) fn file(&mut self, out: &mut Stdout, checked: &Checked) {
        self.file_into(out, checked);
        let _ = out.flush();
    }

    /// Writes one file into the buffer.
    fn file_into(&mut self, out: &mut Stdout, checked: &Checked) {
        match self {
            Writer::Text => out.write(checked.text.as_bytes()),
            Writer::Json { head, any, .. } => {
                if !*any {
                    out.write(head.as_bytes());
                }
                out.write(if *any { b",\n    " } else { b"\n    " });
                *any = true;
                out.write(pretty_at(&checked.report, 4).as_bytes());
            }
            Writer::Sarif {
                version,
                any,
                notifications,
            } => {
                let file = &checked.report;
                if let Some(error) = &file.read_error {
                    notifications.push(sarif::notification(&checked.uri, &file.path, error));
                }
                for (j, d) in file.diagnostics.iter().enumerate() {
                    if !*any {
                        out.write(sarif_head(version).as_bytes());
                    }
                    out.write(if *any { b",\n        " } else { b"\n        " });
                    *any = true;
                    let end = checked.end_columns.get(j).copied().flatten();
                    out.write(pretty_at(&sarif::result(&checked.uri, d, end), 8).as_bytes());
                }
            }
        }
    }

    /// Writes the end of the document (the summary, the notifications).
    pub(super) fn finish(&mut self, out: &mut Stdout, summary: &Summary) {
        match self {
            Writer::Text => {}
            Writer::Json {
                head,
                tool,
                pi,
                dialect,
                mode,
                any,
            } => {
                let mut whole = ValidateReport::new(tool.clone(), *pi, *mode, Vec::new())
                    .with_dialect(*dialect);
                whole.summary = summary.clone();
                let text = pretty_at(&whole, 0);
                let tail = text.find(FILES).map_or("", |at| &text[at + FILES.len()..]);
                if *any {
                    out.write(b"\n  ");
                } else {
                    out.write(head.as_bytes());
                }
                out.write(tail.as_bytes());
                out.write(b"\n");
            }
            Writer::Sarif {
                version,
                any,
                notifications,
            } => {
                if *any {
                    out.write(b"\n      ]");
                } else {
                    out.write(sarif_head(version).as_bytes());
                    out.write(b"]");
                }
                let invocations = sarif::invocations(std::mem::take(notifications));
                out.write(b",\n      \"invocations\": ");
                out.write(pretty_at(&invocations, 6).as_bytes());
                out.write(b"\n    }\n  ]\n}\n");
            }
        }
    }
}

/// The SARIF log up to the opening of the run's `results`.
fn sarif_head(version: &str) -> String {
    let schema = Value::from(sarif::SCHEMA);
    format!(
        "{{\n  \"$schema\": {},\n  \"version\": \"2.1.0\",\n  \"runs\": [\n    {{\n      \"tool\": {},\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": [",
        schema,
        pretty_at(&sarif::tool(version), 6)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_session_validate::{FileReport, Options, validate};

    fn checked(report: FileReport) -> Checked {
        let uri = report.path.clone();
        Checked {
            end_columns: vec![Some(3); report.diagnostics.len()],
            report,
            text: String::new(),
            error: None,
            uri,
        }
    }

    fn files() -> Vec<FileReport> {
        let good = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";
        let mut bad = good.to_vec();
        bad.extend_from_slice(b"{x\nnull\n");
        let v = |b: &[u8]| validate(b, &Options::default());
        vec![
            FileReport::validated("a.jsonl", v(good), VerdictMode::PiLoadable),
            FileReport::unreadable("b.jsonl", "not found"),
            FileReport::validated("c.jsonl", v(&bad), VerdictMode::PiLoadable),
        ]
    }

    /// What the writer wrote, through a capture instead of stdout.
    fn written(mut writer: Writer, files: &[FileReport], summary: &Summary) -> String {
        let mut out = Stdout {
            closed: false,
            ..Stdout::default()
        };
        // Keep everything in the buffer: a stdout the tests do not read.
        let mut all = Vec::new();
        for f in files {
            writer.file_into(&mut out, &checked(f.clone()));
            all.append(&mut out.buf);
        }
        writer.finish(&mut out, summary);
        all.append(&mut out.buf);
        String::from_utf8(all).unwrap()
    }

    #[test]
    fn the_streamed_json_report_is_the_report_serialised_at_once() {
        let tool = Tool {
            name: "pi-session".into(),
            version: "9".into(),
        };
        for (n, dialect) in [0, 1, 3].into_iter().zip(Dialect::ALL.into_iter().cycle()) {
            let files = files()[..n].to_vec();
            let whole = ValidateReport::new(
                tool.clone(),
                PiVersion::V0_73,
                VerdictMode::PiLoadable,
                files.clone(),
            )
            .with_dialect(dialect);
            let expected = serde_json::to_string_pretty(&whole).unwrap() + "\n";
            let writer = Writer::json(
                tool.clone(),
                PiVersion::V0_73,
                dialect,
                VerdictMode::PiLoadable,
            );
            assert_eq!(
                written(writer, &files, &whole.summary),
                expected,
                "{n} files"
            );
        }
    }

    #[test]
    fn the_streamed_sarif_log_is_the_log() {
        for n in [0, 1, 3] {
            let files = files()[..n].to_vec();
            let text = written(Writer::sarif("9"), &files, &Summary::default());
            let streamed: Value = serde_json::from_str(&text).unwrap();
            let ends: Vec<Vec<Option<usize>>> = files
                .iter()
                .map(|f| vec![Some(3); f.diagnostics.len()])
                .collect();
            let uris: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
            assert_eq!(streamed, sarif::log(&files, &uris, &ends, "9"), "{n} files");
        }
    }

    #[test]
    fn results_come_in_order_whatever_the_timing() {
        let items: Vec<u64> = (0..50).collect();
        let mut seen = Vec::new();
        in_order(
            &items,
            |&i| {
                std::thread::sleep(std::time::Duration::from_millis((i * 7) % 5));
                i
            },
            |i| seen.push(i),
        );
        assert_eq!(seen, items);
    }
}
