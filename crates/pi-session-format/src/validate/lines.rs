//! The line pass: every line pi reads, in parallel — JSON, encoding, line endings, blank
//! lines, the line's schema and its entry checks — each line leaving its [`Facts`].

use super::catalogue::{Code, PiEffect, Severity};
use super::entry::{self, EntryContext, Facts, Finding, LineKind};
use super::header::Header;
use super::locate::locate;
use super::report::{Diagnostic, Location};
use super::schema::{self, LineSchema};
use super::{Options, PiVersion};
use crate::json::{self, JsValue, ParseError};
use crate::read::{self, Line};
use rayon::prelude::*;
use serde_json::{Map, Number, Value};
use std::ops::Range;

/// Nesting depth beyond which a line is not checked against its schema (`serde_json`'s own
/// limit is 128; the validator's walkers stay well within any stack).
const MAX_DEPTH: usize = 120;

/// A parsed line.
#[derive(Debug)]
pub struct Parsed {
    /// The value (nested parts beyond [`MAX_DEPTH`] emptied).
    pub value: Value,
    /// Whether the value was deeper than [`MAX_DEPTH`].
    pub deep: bool,
}

/// Parses a line like `JSON.parse`: `serde_json` for speed, the crate's own parser for what
/// `serde_json` refuses but JavaScript accepts (lone surrogates, `1e400`, deep nesting).
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(Parsed { value, deep: false });
    }
    let js = json::parse(text)?;
    let mut deep = false;
    let value = convert(&js, &mut deep);
    Ok(Parsed { value, deep })
}

/// Converts a [`JsValue`] (iteratively bounded: containers below [`MAX_DEPTH`] are emptied).
fn convert(js: &JsValue, deep: &mut bool) -> Value {
    fn go(js: &JsValue, depth: usize, deep: &mut bool) -> Value {
        match js {
            JsValue::Null => Value::Null,
            JsValue::Bool(b) => Value::Bool(*b),
            // `1e400` is Infinity in JavaScript; the closest number keeps its type.
            JsValue::Number(n) => Value::Number(
                Number::from_f64(*n)
                    .or_else(|| Number::from_f64(f64::MAX.copysign(*n)))
                    .unwrap_or_else(|| Number::from(0)),
            ),
            JsValue::String(s) => Value::String(s.to_string_lossy()),
            JsValue::Array(_) | JsValue::Object(_) if depth >= MAX_DEPTH => {
                *deep = true;
                match js {
                    JsValue::Array(_) => Value::Array(Vec::new()),
                    _ => Value::Object(Map::new()),
                }
            }
            JsValue::Array(a) => Value::Array(a.0.iter().map(|v| go(v, depth + 1, deep)).collect()),
            JsValue::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.to_string_lossy(), go(v, depth + 1, deep)))
                    .collect(),
            ),
        }
    }
    go(js, 0, deep)
}

/// The location of `range` (byte range in the decoded `text` of a line).
pub fn location(
    bytes: &[u8],
    line: usize,
    offset: usize,
    text: &str,
    range: Range<usize>,
) -> Location {
    let mut start = floor_char(text, range.start.min(text.len()));
    // An error at the very end ("unexpected end of input") points at the last character.
    if start == text.len() && start > 0 {
        start = floor_char(text, start - 1);
    }
    let end = floor_char(text, range.end.min(text.len())).max(start);
    let raw_len = line_len(bytes, offset);
    // Offsets in the decoded text equal raw offsets unless the line had invalid UTF-8.
    let exact = text.len() == raw_len;
    Location {
        line,
        column: text[..start].chars().count() + 1,
        offset: offset + if exact { start } else { 0 },
        length: if exact {
            (end - start).max(usize::from(raw_len > 0))
        } else {
            raw_len
        },
    }
}

fn line_len(bytes: &[u8], offset: usize) -> usize {
    memchr::memchr(b'\n', &bytes[offset..]).unwrap_or(bytes.len() - offset)
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// What the line pass found.
pub struct Scanned {
    /// The facts of every line that holds a JSON value, in file order.
    pub facts: Vec<Facts>,
    /// Diagnostics of single lines.
    pub diagnostics: Vec<Diagnostic>,
}

struct Context<'b, 'h, 'o> {
    bytes: &'b [u8],
    header: &'h Header,
    header_line: Option<usize>,
    options: &'o Options<'o>,
    schema: LineSchema,
}

/// Runs the line pass.
pub fn scan(bytes: &[u8], header: &Header, options: &Options<'_>) -> Scanned {
    let trim = options.pi == PiVersion::V0_73;
    let cx = Context {
        bytes,
        header,
        header_line: header.line(),
        options,
        schema: header.schema(),
    };
    let pieces = read::split_lines(bytes, trim, rayon::current_num_threads() * 8);
    let results: Vec<Vec<LineResult>> = pieces
        .into_par_iter()
        .map(|lines| lines.map(|line| scan_line(&cx, line)).collect())
        .collect();
    let mut facts = Vec::new();
    let mut diagnostics = Vec::new();
    let mut previous: Option<usize> = None;
    for LineResult {
        number,
        facts: f,
        diagnostics: d,
    } in results.into_iter().flatten()
    {
        if !options.schema_only
            && let Some(previous) = previous
            && number > previous + 1
        {
            diagnostics.push(blank_lines(bytes, previous + 1, number - previous - 1));
        }
        previous = Some(number);
        facts.extend(f);
        diagnostics.extend(d);
    }
    if !options.schema_only && bytes.starts_with(b"\xEF\xBB\xBF") {
        diagnostics.push(bom(options.pi));
    }
    Scanned { facts, diagnostics }
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
    match pi {
        PiVersion::V0_73 => d,
        PiVersion::V0_87 => Diagnostic {
            message: "the file starts with a UTF-8 byte order mark: pi 0.87.1 cannot parse the header line".into(),
            ..d
        }
        .with_severity(Severity::Error)
        .with_pi(PiEffect::Dropped),
    }
}

fn blank_lines(bytes: &[u8], first: usize, count: usize) -> Diagnostic {
    // Find the offset of physical line `first`.
    let offset = memchr::memchr_iter(b'\n', bytes)
        .nth(first - 2)
        .map_or(0, |i| i + 1);
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
    Diagnostic::new(Code::BlankLine, Some(location), message)
}

/// What one line leaves.
struct LineResult {
    number: usize,
    facts: Option<Facts>,
    diagnostics: Vec<Diagnostic>,
}

fn scan_line(cx: &Context<'_, '_, '_>, line: Line<'_>) -> LineResult {
    let number = line.number;
    let (facts, diagnostics) = check_line(cx, line);
    LineResult {
        number,
        facts,
        diagnostics,
    }
}

fn check_line(cx: &Context<'_, '_, '_>, line: Line<'_>) -> (Option<Facts>, Vec<Diagnostic>) {
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
    let parsed = match parse(text) {
        Ok(parsed) => parsed,
        Err(error) => {
            out.push(not_json(cx, &line, &error));
            return (None, out);
        }
    };
    let is_header = cx.header_line == Some(line.number);
    let first = cx
        .header
        .first
        .as_ref()
        .is_some_and(|f| f.line == line.number);
    let value = parsed.value;
    let Value::Object(object) = &value else {
        let skipped = match (&value, cx.options.pi) {
            (Value::Null, PiVersion::V0_73) => true,
            (v, PiVersion::V0_87) => !truthy(v),
            _ => false,
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
    if parsed.deep && !cx.options.schema_only {
        out.push(Diagnostic::new(
            Code::DeepNesting,
            Some(at(0..text.len())),
            format!("the line nests values more than {MAX_DEPTH} levels deep; its structure is checked only down to that depth"),
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
    if cx.options.schema_only {
        if !parsed.deep {
            out.extend(schema::check(cx.schema, &value).into_iter().map(|v| {
                diagnose(Finding {
                    code: v.code,
                    pointer: v.pointer,
                    message: v.message,
                    pi: None,
                })
            }));
        }
        return (Some(facts), out);
    }
    let violations = if parsed.deep {
        Vec::new()
    } else {
        schema::check(cx.schema, &value)
    };
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
        };
        let own = entry::check_entry(object, cx_entry, &mut facts);
        let message_missing = own.iter().any(|f| f.code == Code::MessageMissing);
        let mut findings: Vec<Finding> = violations
            .into_iter()
            .filter(|v| {
                // `id`, `parentId` and a null `message` have codes of their own.
                !(v.pointer == "/id"
                    || v.pointer == "/parentId"
                    || (message_missing && v.pointer == "/message")
                    || v.pointer == "/message/role")
            })
            .map(|v| Finding {
                code: v.code,
                pointer: v.pointer,
                message: v.message,
                pi: None,
            })
            .collect();
        findings.extend(own);
        findings
    };
    out.extend(findings.into_iter().map(diagnose));
    (Some(facts), out)
}

/// JavaScript truthiness of a JSON value (pi 0.87.1 keeps only truthy lines).
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

fn non_object(cx: &Context<'_, '_, '_>, value: &Value, location: Location) -> Diagnostic {
    let what = schema::json_type(value);
    match (value, cx.options.pi) {
        (Value::Null, PiVersion::V0_73) => Diagnostic::new(
            Code::NullLine,
            Some(location),
            "the line is `null`: pi 0.73.1 throws a TypeError when it opens the file",
        ),
        (v, PiVersion::V0_87) if !truthy(v) => Diagnostic::new(
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
                error.message
            ),
        );
    }
    let bom = text.starts_with('\u{FEFF}');
    let mut message = format!("not valid JSON: {}; pi drops this line", error.message);
    if bom {
        message = "the line starts with a byte order mark (U+FEFF), which JSON does not allow; pi drops this line".into();
    }
    Diagnostic::new(
        Code::InvalidJson,
        Some(at(error_at..(error_at + 1).min(text.len()))),
        message,
    )
}

/// Codes reported once per file, with a count, rather than on every line.
const AGGREGATED: &[Code] = &[Code::CrlfLineEnding, Code::IdFormat, Code::TimestampNotIso];

/// Folds repeated diagnostics of the [`AGGREGATED`] codes into their first occurrence.
pub fn aggregate(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut firsts: Vec<(Code, usize, Vec<usize>)> = Vec::new();
    let mut out: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        if AGGREGATED.contains(&d.code) {
            let line = d.location.map_or(0, |l| l.line);
            if let Some((_, _, more)) = firsts.iter_mut().find(|(c, _, _)| *c == d.code) {
                more.push(line);
                continue;
            }
            firsts.push((d.code, out.len(), Vec::new()));
        }
        out.push(d);
    }
    for (_, index, more) in firsts {
        if more.is_empty() {
            continue;
        }
        let shown: Vec<String> = more.iter().take(5).map(usize::to_string).collect();
        let etc = if more.len() > 5 { ", …" } else { "" };
        out[index].message.push_str(&format!(
            " (and {} more: line{} {}{etc})",
            more.len(),
            if more.len() > 1 { "s" } else { "" },
            shown.join(", ")
        ));
    }
    out
}
