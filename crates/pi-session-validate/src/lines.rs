//! The line pass: every line pi reads, in parallel — JSON, encoding, line endings, blank
//! lines, the line's schema and its entry checks — each line leaving its [`Facts`].
//! A long line's content blocks are checked a piece at a time (`lines/chunks.rs`).

mod chunks;

use super::aggregate::Sink;
use super::catalogue::{Code, PiEffect, Severity};
use super::entry::{self, EntryContext, Facts, Finding, LineKind};
use super::header::Header;
use super::locate::locate;
use super::parsed::{MAX_DEPTH, line_len, location, parse, truthy};
use super::report::{Diagnostic, Location};
use super::schema::{self, LineSchema};
use super::{Options, PiVersion};
use chunks::Pieces;
use pi_session_format::Dialect;
use pi_session_format::json::ParseError;
use pi_session_format::migrate::lossy::{self, LossyKind};
use pi_session_format::omp::blobs::{Blobs, Resolved};
use pi_session_format::read::{self, Line};
use pi_session_format::session::Session;
use rayon::prelude::*;
use serde_json::Value;
use std::ops::Range;

/// What the line pass found.
pub(crate) struct Scanned {
    /// The facts of every line that holds a JSON value, in file order.
    pub facts: Vec<Facts>,
    /// Diagnostics of single lines (bounded: see [`Sink`]).
    pub diagnostics: Sink,
}

struct Context<'b, 'h, 'o> {
    bytes: &'b [u8],
    header: &'h Header,
    header_line: Option<usize>,
    options: &'o Options<'o>,
    schema: LineSchema,
}

/// What one piece of the file left: its facts, its diagnostics, and its first and last
/// line (number, offset) for the blank lines between pieces.
#[derive(Default)]
struct Piece {
    facts: Vec<Facts>,
    sink: Sink,
    first: Option<(usize, usize)>,
    last: Option<(usize, usize)>,
}

/// Runs the line pass.
pub(crate) fn scan(bytes: &[u8], header: &Header, options: &Options<'_>) -> Scanned {
    let edges = read::Edges::of(options.pi, options.dialect);
    let cx = Context {
        bytes,
        header,
        header_line: header.line(),
        options,
        schema: header.schema(),
    };
    // Lines are read as each piece is checked (a file that shrinks meanwhile reads as it is
    // then, never as two versions at once).
    type Units<'a> = Box<dyn Iterator<Item = Unit<'a>> + Send + 'a>;
    let pieces: Vec<Units<'_>> = match omp_units(bytes, options) {
        Some(units) => {
            let mut units = units.into_iter().peekable();
            let mut pieces = Vec::new();
            while units.peek().is_some() {
                let piece: Vec<Unit<'_>> = units.by_ref().take(256).collect();
                pieces.push(Box::new(piece.into_iter()) as Units<'_>);
            }
            pieces
        }
        None => {
            read::split_lines_releasing(bytes, edges, rayon::current_num_threads() * 8, &|range| {
                options.let_go(range)
            })
            .into_iter()
            .map(|lines| Box::new(lines.map(Unit::Line)) as Units<'_>)
            .collect()
        }
    };
    let blanks = !options.schema_only;
    let results: Vec<Piece> = pieces
        .into_par_iter()
        .map(|units| {
            let mut piece = Piece::default();
            // Where the piece's last line ends: once checked, the piece's bytes are let go.
            let mut end = 0;
            for unit in units {
                let line = match unit {
                    Unit::Line(line) => line,
                    Unit::OmpSkipped(tail) => {
                        piece.sink.push(text_after_value(bytes, &tail));
                        continue;
                    }
                };
                // The line a unit ends on: a value omp reads over lines ends on a later one.
                let at = match line.text.rfind('\n') {
                    Some(i) => {
                        piece.sink.push(value_over_lines(bytes, &line));
                        (
                            line.number + line.text.matches('\n').count(),
                            line.offset + i + 1,
                        )
                    }
                    None => (line.number, line.offset),
                };
                if blanks && let Some(previous) = piece.last {
                    piece.sink.extend(blank_lines(bytes, previous, line.number));
                }
                piece.first.get_or_insert((line.number, line.offset));
                piece.last = Some(at);
                end = end.max(line.offset + line.len);
                let (facts, diagnostics) = check_line(&cx, line);
                piece.facts.extend(facts);
                piece.sink.extend(diagnostics);
            }
            if let Some((_, start)) = piece.first {
                options.let_go(start..end.min(bytes.len()));
            }
            piece
        })
        .collect();
    let mut facts = Vec::new();
    let mut diagnostics = Sink::default();
    let mut previous: Option<(usize, usize)> = None;
    for piece in results {
        if blanks && let (Some(previous), Some((first, _))) = (previous, piece.first) {
            diagnostics.extend(blank_lines(bytes, previous, first));
        }
        previous = piece.last.or(previous);
        facts.extend(piece.facts);
        diagnostics.absorb(piece.sink);
    }
    if !options.schema_only && bytes.starts_with(b"\xEF\xBB\xBF") {
        diagnostics.push(bom(options.pi));
    }
    Scanned { facts, diagnostics }
}

/// What the line pass checks: a line, or, in a file read as oh-my-pi's, what omp's JSONL
/// parser reads differently from `JSON.parse` line by line (O17).
#[derive(Clone)]
enum Unit<'a> {
    /// A line, or a value omp reads over several lines (the `Line` then spans them).
    Line(Line<'a>),
    /// Text after a value on its line, which omp skips (the `Line` is that text).
    OmpSkipped(Line<'a>),
}

/// The units of a file read as oh-my-pi's when omp reads some of its lines differently
/// from `JSON.parse` (a value over several lines, a value followed by more text on its
/// line): its lines, with each such value one unit and the text after it another. `None`
/// when there is none (or the file does not load as omp's: its lines are checked as they
/// are, and the header's checks say why).
fn omp_units<'a>(bytes: &'a [u8], options: &Options<'_>) -> Option<Vec<Unit<'a>>> {
    if options.dialect != Dialect::Omp {
        return None;
    }
    let mut loader = Session::loader(options.pi).dialect(Dialect::Omp);
    if let Some(crate::Release(release)) = options.release {
        loader = loader.releasing(release);
    }
    let session = loader.load(bytes).ok()?;
    // The values omp reads where a line does not parse: where each starts and ends.
    let mut recovered: Vec<Range<usize>> = session
        .records
        .iter()
        .filter(|r| !r.lossy)
        .filter_map(|r| {
            let text = r.text();
            let end = r.offset + text.len();
            let line_end = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |i| end + i);
            let rest = bytes.get(end..line_end)?;
            (text.contains('\n') || rest.iter().any(|b| !matches!(b, b' ' | b'\t' | b'\r')))
                .then_some(r.offset..end)
        })
        .collect();
    if recovered.is_empty() {
        return None;
    }
    recovered.sort_by_key(|r| r.start);
    let mut recovered = recovered.into_iter().peekable();
    let mut units = Vec::new();
    let mut lines = read::lines_with(bytes, read::Edges::Bom);
    while let Some(line) = lines.next() {
        let line_end = line.offset + line.len;
        let Some(value) = recovered.next_if(|v| (line.offset..=line_end).contains(&v.start)) else {
            units.push(Unit::Line(line));
            continue;
        };
        let text = std::str::from_utf8(&bytes[value.clone()]).ok()?;
        units.push(Unit::Line(Line {
            number: line.number,
            offset: value.start,
            text: text.into(),
            len: value.len(),
            lossy: false,
        }));
        // The lines the value goes on over, and what follows it on its last one.
        let mut last = line;
        while last.offset + last.len < value.end {
            last = lines.next()?;
        }
        let rest = &bytes[value.end..last.offset + last.len];
        if rest.iter().any(|b| !matches!(b, b' ' | b'\t' | b'\r')) {
            units.push(Unit::OmpSkipped(Line {
                number: last.number,
                offset: value.end,
                text: String::from_utf8_lossy(rest),
                len: rest.len(),
                lossy: std::str::from_utf8(rest).is_err(),
            }));
        }
    }
    Some(units)
}

/// A value omp reads over several lines (O17).
fn value_over_lines(bytes: &[u8], value: &Line<'_>) -> Diagnostic {
    let text: &str = &value.text;
    let first = text.find('\n').unwrap_or(text.len());
    let last = value.number + text.matches('\n').count();
    Diagnostic::new(
        Code::OmpValueOverLines,
        Some(location(bytes, value.number, value.offset, text, 0..first)),
        format!(
            "a JSON value over lines {}–{last}: oh-my-pi reads it as one entry, but writes one \
             value per line, and pi drops each of these lines",
            value.number
        ),
    )
}

/// The text after a value on its line, which omp's JSONL parser skips: gone when omp
/// rewrites the file on open (which such text makes it do).
fn text_after_value(bytes: &[u8], tail: &Line<'_>) -> Diagnostic {
    let text: &str = &tail.text;
    let start = text.len() - text.trim_start_matches([' ', '\t']).len();
    let line_start = memchr::memrchr(b'\n', &bytes[..tail.offset]).map_or(0, |i| i + 1);
    let location = Location {
        line: tail.number,
        column: String::from_utf8_lossy(&bytes[line_start..tail.offset + start])
            .chars()
            .count()
            + 1,
        offset: tail.offset + start,
        length: tail.len - start,
    };
    Diagnostic::new(
        Code::OmpTextAfterValue,
        Some(location),
        "text after the JSON value on this line: oh-my-pi keeps the value and skips the rest \
         of the line, and rewrites the file when it opens it, deleting this text",
    )
}

fn bom(pi: PiVersion) -> Diagnostic {
    let location = Location {
        line: 1,
        column: 1,
        offset: 0,
        length: 3,
    };
    let d = Diagnostic::new(
        Code::ByteOrderMark,
        Some(location),
        "the file starts with a UTF-8 byte order mark: pi 0.73.1 strips it, but `pi -c` does not recognise the header",
    );
    if !pi.reads_like_0_87() {
        return d;
    }
    Diagnostic {
        message:
            "the file starts with a UTF-8 byte order mark: pi 0.87.1 cannot parse the header line"
                .into(),
        ..d
    }
    .with_severity(Severity::Error)
    .with_pi(PiEffect::Dropped)
}

/// The blank lines between the line `previous` (number, offset) and line `next`, if any.
fn blank_lines(bytes: &[u8], previous: (usize, usize), next: usize) -> Option<Diagnostic> {
    let (number, offset) = previous;
    if next <= number + 1 {
        return None;
    }
    let first = number + 1;
    let count = next - first;
    // Physical line `first` starts after the LF that ends line `previous`.
    let offset = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |i| offset + i + 1);
    let message = if count == 1 {
        "blank line between records: pi skips it".to_string()
    } else {
        format!("{count} blank lines between records: pi skips them")
    };
    let location = Location {
        line: first,
        column: 1,
        offset,
        length: line_len(bytes, offset),
    };
    Some(Diagnostic::new(Code::BlankLine, Some(location), message))
}

fn check_line(cx: &Context<'_, '_, '_>, line: Line<'_>) -> (Option<Facts>, Vec<Diagnostic>) {
    // oh-my-pi's title slot, read as oh-my-pi's: neither the header nor an entry.
    if cx.header.slot == Some(line.number) {
        return (None, Vec::new());
    }
    let mut out = Vec::new();
    let raw = &cx.bytes[line.offset..line.offset + line.len];
    let text: &str = &line.text;
    let at = |range: Range<usize>| location(cx.bytes, line.number, line.offset, text, range);
    if !cx.options.schema_only {
        if line.lossy {
            let valid = std::str::from_utf8(raw)
                .err()
                .map_or(0, |e| e.valid_up_to());
            let column = String::from_utf8_lossy(&raw[..valid]).chars().count() + 1;
            let location = Location {
                line: line.number,
                column,
                offset: line.offset + valid,
                length: 1,
            };
            out.push(Diagnostic::new(
                Code::InvalidUtf8,
                Some(location),
                format!(
                    "byte 0x{:02X} is not valid UTF-8: pi reads U+FFFD (�) in its place",
                    raw[valid]
                ),
            ));
        }
        if raw.ends_with(b"\r") {
            out.push(Diagnostic::new(
                Code::CrlfLineEnding,
                Some(at(text.len() - 1..text.len())),
                "line ends with CR LF: pi reads it, but writes LF when it rewrites the file",
            ));
        }
    }
    // A long line's content blocks are checked a piece at a time (`chunks`): the value
    // built is the first piece's, the others are checked next.
    let mut pieces = Pieces::of(text);
    let first = match &pieces {
        Some(p) => parse(&p.line(0)).ok(),
        None => None,
    };
    if first.is_none() {
        // Not expected (the pieces are cut from a valid line); checked whole then.
        pieces = None;
    }
    let parsed = match first.map_or_else(|| parse(text), Ok) {
        Ok(parsed) => parsed,
        Err(error) => {
            out.push(not_json(cx, &line, &error));
            return (None, out);
        }
    };
    let rest = pieces
        .as_ref()
        .map(|pieces| other_pieces(cx.schema, pieces));
    let deep = parsed.deep || rest.as_ref().is_some_and(|r| r.deep);
    if !cx.options.schema_only && !lossy::is_canonical(text) {
        out.extend(lossy_values(text, &at));
    }
    let is_header = cx.header_line == Some(line.number);
    let first = cx
        .header
        .first
        .as_ref()
        .is_some_and(|f| f.line == line.number);
    let value = parsed.value;
    let Value::Object(object) = &value else {
        let skipped = if cx.options.pi.reads_like_0_87() {
            !truthy(&value)
        } else {
            value.is_null()
        };
        let facts = Facts::new(
            line.number,
            line.offset,
            line.len,
            LineKind::NonObject { skipped },
        );
        // The first value is the header's business.
        if !first {
            out.push(non_object(cx, &value, at(0..text.len())));
        }
        return (Some(facts), out);
    };
    if deep {
        out.push(Diagnostic::new(
            Code::DeepNesting,
            Some(at(0..text.len())),
            format!("the line nests values more than {MAX_DEPTH} levels deep: its structure is checked only down to that depth, so the line cannot be vouched for"),
        ));
    }
    let is_session = object.get("type").and_then(Value::as_str) == Some("session");
    let mut facts = Facts::new(
        line.number,
        line.offset,
        line.len,
        if is_session {
            LineKind::Header
        } else {
            LineKind::Entry
        },
    );
    let entry_id = object.get("id").and_then(Value::as_str);
    let diagnose = |f: Finding| {
        let range = locate(text, &f.pointer).unwrap_or(0..text.len());
        let mut d = Diagnostic::new(f.code, Some(at(range)), f.message).for_entry(entry_id);
        if !f.pointer.is_empty() {
            d = d.at_pointer(f.pointer);
        }
        if let Some(pi) = f.pi {
            d = d.with_pi(pi);
        }
        d
    };
    // An invalid header is the header check's business: pi discards the file, so neither the
    // line's own shape nor further header lines matter.
    if first && !is_header && !cx.options.schema_only {
        return (Some(facts), out);
    }
    if is_session && !is_header && !cx.options.schema_only {
        if let Some(header_line) = cx.header_line {
            out.push(Diagnostic::new(
                Code::DuplicateHeader,
                Some(at(0..text.len())),
                format!(
                    "a second header line (the header is line {header_line}): pi keeps it but skips it"
                ),
            ));
        }
        return (Some(facts), out);
    }
    // A value deeper than MAX_DEPTH was cut there (its containers emptied): what lies
    // above the cut is checked, violations at or below it are not real.
    let mut violations: Vec<_> = schema::check(cx.schema, &value)
        .into_iter()
        .filter(|v| !parsed.deep || v.pointer.matches('/').count() < MAX_DEPTH)
        .collect();
    if let Some(rest) = &rest {
        violations.extend(rest.violations.iter().cloned());
        violations.sort_by(|a, b| a.pointer.cmp(&b.pointer).then(a.code.cmp(&b.code)));
        violations
            .dedup_by(|a, b| a.pointer == b.pointer && a.code == b.code && a.message == b.message);
    }
    if cx.options.schema_only {
        out.extend(violations.into_iter().map(|v| {
            diagnose(Finding {
                code: v.code,
                pointer: v.pointer,
                message: v.message,
                pi: None,
            })
        }));
        return (Some(facts), out);
    }
    let findings = if is_session {
        // Header fields: `id` and `version` have codes of their own (see `header`).
        let mut findings: Vec<Finding> = violations
            .into_iter()
            .filter(|v| !(v.pointer == "/version" || v.pointer == "/id"))
            .map(|v| Finding {
                code: Code::HeaderField,
                pointer: v.pointer,
                message: v.message,
                pi: None,
            })
            .collect();
        findings.extend(entry::check_header(object, cx.schema));
        findings
    } else {
        let cx_entry = EntryContext {
            schema: cx.schema,
            pi: cx.options.pi,
            dialect: cx.options.dialect,
        };
        let mut own = entry::check_entry(object, cx_entry, &mut facts);
        if cx.options.dialect == Dialect::Omp {
            entry::omp_usage(object, &mut own);
        }
        if let Some(rest) = rest
            && entry::is_assistant_message(object)
        {
            facts.tool_calls.extend(rest.tool_calls);
        }
        let message_missing = own.iter().any(|f| f.code == Code::MessageMissing);
        // Under oh-my-pi's rules, its own checks stand for the schema's: a `model_change` is
        // `{model, role}`, and a usage without `cost` makes it throw.
        let omp = cx.options.dialect == Dialect::Omp;
        let omp_model_change =
            omp && object.get("type").and_then(Value::as_str) == Some("model_change");
        let costless: Vec<String> = own
            .iter()
            .filter(|f| f.code == Code::OmpUsageWithoutCost)
            .map(|f| format!("{}/cost", f.pointer))
            .collect();
        let mut findings: Vec<Finding> = violations
            .into_iter()
            .filter(|v| {
                // `id`, `parentId` and a null `message` have codes of their own.
                !(v.pointer == "/id"
                    || v.pointer == "/parentId"
                    || (message_missing && v.pointer == "/message")
                    || v.pointer == "/message/role"
                    || (omp_model_change && v.pointer != "/timestamp")
                    || costless.contains(&v.pointer))
            })
            .map(|v| Finding {
                code: v.code,
                pointer: v.pointer,
                message: v.message,
                pi: None,
            })
            .collect();
        findings.extend(own);
        if let Some(blobs) = cx
            .options
            .blobs
            .filter(|_| cx.options.dialect == Dialect::Omp)
        {
            out.extend(missing_blobs(text, blobs, &at, entry_id));
        }
        findings
    };
    out.extend(findings.into_iter().map(diagnose));
    (Some(facts), out)
}

/// [`Code::OmpBlobMissing`]: the `blob:sha256:` image references of an entry line (`text`)
/// that `blobs` does not hold, each at its place in the line.
fn missing_blobs(
    text: &str,
    blobs: &Blobs,
    at: &dyn Fn(Range<usize>) -> Location,
    entry_id: Option<&str>,
) -> Vec<Diagnostic> {
    const PREFIX: &str = "blob:sha256:";
    if memchr::memmem::find(text.as_bytes(), PREFIX.as_bytes()).is_none() {
        return Vec::new();
    }
    let Ok(mut value) = pi_session_format::json::parse(text) else {
        return Vec::new();
    };
    let mut resolved = Resolved::default();
    blobs.resolve(&mut value, &mut resolved);
    resolved
        .missing
        .iter()
        .map(|hash| {
            let reference = format!("{PREFIX}{hash}");
            let range = text
                .find(&reference)
                .map_or(0..text.len(), |start| start..start + reference.len());
            Diagnostic::new(
                Code::OmpBlobMissing,
                Some(at(range)),
                format!(
                    "image blob {hash} is not in the blob store: oh-my-pi leaves the reference in place of the image's data"
                ),
            )
            .for_entry(entry_id)
        })
        .collect()
}

/// What the pieces of a long line after the first say (see `chunks`).
struct OtherPieces {
    /// Their schema violations, pointers into the content renumbered for the whole line.
    violations: Vec<schema::Violation>,
    /// The ids of their tool calls, in order.
    tool_calls: Vec<Box<str>>,
    /// Whether one was cut at [`MAX_DEPTH`].
    deep: bool,
}

/// Checks the pieces of a long line after the first against the line's schema, one at a
/// time (each value dropped before the next is built).
fn other_pieces(schema: LineSchema, pieces: &Pieces<'_>) -> OtherPieces {
    let mut rest = OtherPieces {
        violations: Vec::new(),
        tool_calls: Vec::new(),
        deep: false,
    };
    for i in 1..pieces.len() {
        let Ok(piece) = parse(&pieces.line(i)) else {
            continue;
        };
        rest.deep |= piece.deep;
        let by = pieces.first_element(i);
        for mut v in schema::check(schema, &piece.value) {
            if piece.deep && v.pointer.matches('/').count() >= MAX_DEPTH {
                continue;
            }
            chunks::shift(&mut v.pointer, &mut v.message, by);
            rest.violations.push(v);
        }
        if let Some(Value::Array(blocks)) = piece.value.pointer("/message/content") {
            rest.tool_calls.extend(entry::tool_call_ids(blocks));
        }
    }
    rest
}

/// PS0011 and PS0012: what `JSON.parse` loses of the line (nothing, when the line is in
/// `JSON.stringify` form), at most [`LOSSY_SHOWN`] of each per line.
fn lossy_values(text: &str, at: &dyn Fn(Range<usize>) -> Location) -> Vec<Diagnostic> {
    let short = |s: &str| match s.char_indices().nth(40) {
        None => s.to_owned(),
        Some((cut, _)) => format!("{}…(+{} bytes)", &s[..cut], s.len() - cut),
    };
    let (found, _) = lossy::find(text, LOSSY_SHOWN);
    found
        .into_iter()
        .map(|l| {
            let token = text.get(l.offset..l.offset + l.len).unwrap_or_default();
            let (code, message) = match &l.kind {
                LossyKind::NumberNotExact { becomes } => {
                    let reads = match becomes.as_str() {
                        "null" if token.starts_with('-') => {
                            "-Infinity (written back as null)".into()
                        }
                        "null" => "Infinity (written back as null)".into(),
                        other => short(other),
                    };
                    (
                        Code::NumberNotExact,
                        format!(
                            "the number {} is not exact as a double: pi reads {reads}",
                            short(token)
                        ),
                    )
                }
                LossyKind::DuplicateKey { key } => (
                    Code::DuplicateKey,
                    format!(
                        "the key {} occurs again in this object: pi keeps only the last value",
                        pi_session_format::session::quoted(key)
                    ),
                ),
            };
            Diagnostic::new(code, Some(at(l.offset..l.offset + l.len)), message)
        })
        .collect()
}

/// PS0011/PS0012 diagnostics of one line at most, per code.
const LOSSY_SHOWN: usize = 100;

fn non_object(cx: &Context<'_, '_, '_>, value: &Value, location: Location) -> Diagnostic {
    let what = schema::json_type(value);
    match (value, cx.options.pi.reads_like_0_87()) {
        (Value::Null, false) => Diagnostic::new(
            Code::NullLine,
            Some(location),
            "the line is `null`: pi 0.73.1 throws a TypeError when it opens the file",
        ),
        (v, true) if !truthy(v) => Diagnostic::new(
            if v.is_null() { Code::NullLine } else { Code::NonObjectLine },
            Some(location),
            if v.is_null() {
                "the line is `null`: pi 0.87.1 skips it".to_string()
            } else {
                format!("the line is {what} with a falsy value: pi 0.87.1 skips it")
            },
        )
        .with_pi(PiEffect::Dropped),
        _ if cx.schema == LineSchema::V1 => Diagnostic::new(
            Code::NonObjectLine,
            Some(location),
            format!("the line is {what}, not an object: pi's version-1 migration throws a TypeError on it"),
        )
        .with_pi(PiEffect::Crash),
        _ => Diagnostic::new(
            Code::NonObjectLine,
            Some(location),
            format!("the line is {what}, not an object: pi keeps it as an entry without an id"),
        ),
    }
}

/// The diagnostic of a line that is not JSON: torn, split by a lone CR, or just invalid.
fn not_json(cx: &Context<'_, '_, '_>, line: &Line<'_>, error: &ParseError) -> Diagnostic {
    let text: &str = &line.text;
    let at = |range: Range<usize>| location(cx.bytes, line.number, line.offset, text, range);
    let last = !cx.bytes[line.offset + line.len..].contains(&b'\n');
    let inner_cr = text.trim_end_matches('\r').find('\r');
    let error_at = error.offset.min(text.len());
    if let Some(cr) = inner_cr.filter(|&cr| error_at >= cr) {
        let records = text
            .trim_end_matches('\r')
            .split('\r')
            .filter(|p| !p.trim().is_empty())
            .count();
        return Diagnostic::new(
            Code::LoneCarriageReturn,
            Some(at(cr..cr + 1)),
            format!(
                "a carriage return (CR) without LF separates records here; pi splits lines only at LF, so it reads these {records} records as one line that is not JSON and drops it"
            ),
        );
    }
    if last {
        return Diagnostic::new(
            Code::TornLastLine,
            Some(at(error_at..text.len())),
            format!(
                "the last line is cut off ({}) and the file does not end with a newline: an interrupted write; pi drops the line, and its next append is glued onto it",
                error.message()
            ),
        );
    }
    let bom = text.starts_with('\u{FEFF}');
    let mut message = format!("not valid JSON: {}; pi drops this line", error.message());
    if cx.options.dialect == Dialect::Omp {
        message = format!(
            "not valid JSON: {}; oh-my-pi skips this line, and rewrites the file when it \
             opens it, deleting the line",
            error.message()
        );
    }
    if bom {
        message = "the line starts with a byte order mark (U+FEFF), which JSON does not allow; pi drops this line".into();
    }
    Diagnostic::new(
        Code::InvalidJson,
        Some(at(error_at..(error_at + 1).min(text.len()))),
        message,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line long enough to be checked in pieces says what it says checked whole: the same
    /// violations (pointers and messages into later pieces renumbered), every tool call.
    #[test]
    fn a_long_line_checked_in_pieces_says_what_it_says_whole() {
        let n = 60_000;
        let blocks: Vec<String> = (0..n)
            .map(|i| match i {
                7 | 30_000 | 59_999 => r#"{"type":"text"}"#.to_owned(),
                45_000 => r#"{"type":"text","text":5}"#.to_owned(),
                10 | 40_000 | 59_998 => {
                    format!(r#"{{"type":"toolCall","id":"t{i}","name":"x","arguments":{{}}}}"#)
                }
                _ => r#"{"type":"text","text":"a"}"#.to_owned(),
            })
            .collect();
        let text = format!(
            r#"{{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"assistant","content":[{}],"provider":"p","model":"m","api":"x","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":1}}}}"#,
            blocks.join(",")
        );
        let whole_value: Value = serde_json::from_str(&text).unwrap();
        let whole = schema::check(LineSchema::V3, &whole_value);
        assert!(whole.len() >= 4, "{whole:?}");
        let pieces = Pieces::of(&text).expect("long enough");
        assert!(pieces.len() > 2);
        let first = parse(&pieces.line(0)).unwrap();
        let rest = other_pieces(LineSchema::V3, &pieces);
        let mut merged = schema::check(LineSchema::V3, &first.value);
        merged.extend(rest.violations);
        merged.sort_by(|a, b| a.pointer.cmp(&b.pointer).then(a.code.cmp(&b.code)));
        merged
            .dedup_by(|a, b| a.pointer == b.pointer && a.code == b.code && a.message == b.message);
        assert_eq!(merged, whole);
        let Value::Array(first_blocks) = &first.value["message"]["content"] else {
            panic!("an array");
        };
        let mut calls: Vec<Box<str>> = entry::tool_call_ids(first_blocks).collect();
        calls.extend(rest.tool_calls);
        let expected: Vec<Box<str>> = vec!["t10".into(), "t40000".into(), "t59998".into()];
        assert_eq!(calls, expected);
    }

    #[test]
    fn locations_on_a_line_with_invalid_utf8_point_at_the_raw_bytes() {
        // Decoded: `{"a":"�","b":1}` — the replacement character is 3 bytes for 1 raw byte.
        let raw = b"{\"a\":\"\xff\",\"b\":1}\n";
        let text = String::from_utf8_lossy(raw[..raw.len() - 1].as_ref()).into_owned();
        let b = text.find("1}").unwrap();
        let l = location(raw, 1, 0, &text, b..b + 1);
        assert_eq!(l.offset, raw.iter().position(|&c| c == b'1').unwrap());
        assert_eq!((l.length, l.column), (1, 14));
        // A span over the replacement character covers the byte it replaced.
        let r = text.find('\u{FFFD}').unwrap();
        let l = location(raw, 1, 0, &text, r..r + 3);
        assert_eq!((l.offset, l.length, l.column), (6, 1, 7));
    }

    #[test]
    fn deep_lines_are_checked_above_the_limit_and_flagged_as_errors() {
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";
        for depth in [100, 200, 5000] {
            let line = format!(
                "{{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"timestamp\":1,\"content\":[{{\"type\":\"text\",\"text\":5,\"x\":{}0{}}}]}}}}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let file = format!("{header}{line}");
            let report = crate::validate(file.as_bytes(), &Options::default());
            let codes: Vec<(Code, Option<&str>)> = report
                .diagnostics
                .iter()
                .map(|d| (d.code, d.pointer.as_deref()))
                .collect();
            assert!(!report.verdict.strict, "{depth}: {codes:?}");
            // The wrong `text` is found (the schema names the content it makes invalid).
            assert!(
                codes
                    .iter()
                    .any(|(_, p)| p.is_some_and(|p| p.starts_with("/message/content"))),
                "{depth}: {codes:?}"
            );
            let deep = codes.iter().any(|(c, _)| *c == Code::DeepNesting);
            // serde_json reads up to 128 levels itself: those lines are checked whole.
            assert_eq!(deep, depth > 100, "{depth}: {codes:?}");
        }
    }
}
