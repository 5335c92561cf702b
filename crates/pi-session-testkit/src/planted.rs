//! Planted secrets: one sample secret for every rule of `pi-session-redact`, generated from
//! the rule's own regex (`rand_regex`, seeded), and sessions that hold them in every place a
//! session keeps text, raw, escaped, split by an escape and inside JSON held in a string.
//! The redaction tests and the `redact` fuzz target check that none survives.

use pi_session_json::JsonWriter;
use pi_session_redact::rules::{Rule, RuleSet};
use rand::SeedableRng;
use rand::distr::Distribution;
use regex_syntax::hir::{Capture, Hir, HirKind, Repetition};

/// A secret made for one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planted {
    /// The rule it was made for.
    pub rule: String,
    /// The text planted: the rule's whole match (a name, an operator, the secret).
    pub text: String,
    /// The part the rule redacts, which must not survive.
    pub secret: String,
}

/// Samples tried per rule before it is given up.
const TRIES: usize = 400;

/// One planted secret per rule that a sample could be made for, in rule order, and the ids
/// of the rules none could be made for.
pub fn secrets(seed: u64) -> (Vec<Planted>, Vec<String>) {
    let set = RuleSet::builtin();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut planted = Vec::new();
    let mut missed = Vec::new();
    for rule in &set.rules {
        match sample(set, rule, &mut rng) {
            Some(p) => planted.push(p),
            None => missed.push(rule.id.clone()),
        }
    }
    (planted, missed)
}

fn sample(set: &RuleSet, rule: &Rule, rng: &mut rand::rngs::SmallRng) -> Option<Planted> {
    let pattern = rule.regex().ok()?.as_str().to_owned();
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(&pattern)
        .ok()?;
    let generator = rand_regex::Regex::with_hir(strip_looks(&hir), 24).ok()?;
    for _ in 0..TRIES {
        let bytes: Vec<u8> = generator.sample(rng);
        // Printable ASCII (and newlines): bytes a class would allow beyond that made letters.
        let text: String = bytes
            .iter()
            .map(|&b| match b {
                b'\n' | 0x20..=0x7e => b as char,
                _ => (b'a' + b % 26) as char,
            })
            .collect();
        let mut text = text
            .trim_matches(|c: char| c.is_ascii_whitespace())
            .to_owned();
        // A rule runs only on text holding one of its keywords, which its regex need not
        // spell (`airtable`; `.` for a dot in a host name): say it before the secret.
        if !rule
            .keywords
            .iter()
            .any(|k| text.to_ascii_lowercase().contains(k.as_str()))
        {
            text = format!("{} {text}", rule.keywords.first()?);
        }
        let context = format!("see {text} \n");
        let spans = set.secrets(rule, context.as_bytes());
        let Some(span) = spans.first() else { continue };
        let secret = context[span.clone()].to_owned();
        // A secret so short it is an ordinary word is no test of anything.
        if secret.len() < 8 || "see \n".contains(secret.as_str()) {
            continue;
        }
        return Some(Planted {
            rule: rule.id.clone(),
            text,
            secret,
        });
    }
    None
}

/// `hir` without its assertions (`\b`, `^`, `$`), which `rand_regex` cannot generate; the
/// samples are checked against the real regex afterwards.
fn strip_looks(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(strip_looks(&r.sub)),
        }),
        HirKind::Capture(c) => Hir::capture(Capture {
            index: c.index,
            name: c.name.clone(),
            sub: Box::new(strip_looks(&c.sub)),
        }),
        HirKind::Concat(v) => Hir::concat(v.iter().map(strip_looks).collect()),
        HirKind::Alternation(v) => Hir::alternation(v.iter().map(strip_looks).collect()),
        _ => hir.clone(),
    }
}

/// How a planted text is spelled in its JSON string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// As `JSON.stringify` writes it.
    Plain,
    /// Its first character as a `\u` escape.
    EscapedFirst,
    /// A character in the middle of the secret as a `\u` escape (the secret split by it).
    Split,
}

/// Where in a session a planted text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A user message's string content.
    UserText,
    /// A user message's text block.
    UserBlock,
    /// An assistant's text block.
    AssistantText,
    /// An assistant's thinking.
    Thinking,
    /// A tool call's argument.
    ToolArgument,
    /// JSON held in a tool call's string argument.
    NestedArgument,
    /// A tool result's text.
    ToolResult,
    /// A shell command run by the user, and its output.
    BashExecution,
    /// A compaction's summary.
    CompactionSummary,
    /// A branch summary.
    BranchSummary,
    /// A custom entry's data.
    CustomData,
    /// A custom message's content.
    CustomMessage,
    /// A label.
    Label,
    /// The session's name.
    SessionName,
}

impl Place {
    /// Every place.
    pub const ALL: [Place; 14] = [
        Place::UserText,
        Place::UserBlock,
        Place::AssistantText,
        Place::Thinking,
        Place::ToolArgument,
        Place::NestedArgument,
        Place::ToolResult,
        Place::BashExecution,
        Place::CompactionSummary,
        Place::BranchSummary,
        Place::CustomData,
        Place::CustomMessage,
        Place::Label,
        Place::SessionName,
    ];
}

/// The marker a line is built with where the planted text goes.
const MARK: &str = "\u{1}MARK\u{1}";
/// The marker as the line spells it (`JSON.stringify` escapes the control characters).
const MARK_IN_LINE: &str = "\\u0001MARK\\u0001";

/// A session (version 3, pi's key order) with each planted text in `place`, spelled as
/// `spelling`: one text per entry, entries chained, the ids `e0000001`, … The header's cwd
/// holds `cwd`.
pub fn session(planted: &[Planted], place: Place, spelling: Spelling, cwd: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = JsonWriter::new();
    w.begin_object()
        .key("type")
        .string("session")
        .key("version")
        .uint(3)
        .key("id")
        .string("0f8fad5b-d9cb-469f-a165-70867728950e")
        .key("timestamp")
        .string("2026-01-01T00:00:00.000Z")
        .key("cwd")
        .string(cwd)
        .end_object();
    out.extend_from_slice(w.as_bytes());
    out.push(b'\n');
    let mut parent: Option<String> = None;
    let mut n = 0;
    let mut next_id = || {
        n += 1;
        format!("e{n:07}")
    };
    for p in planted {
        // A label or a summary needs an entry before it.
        if matches!(place, Place::Label) && parent.is_none() {
            let id = next_id();
            out.extend_from_slice(&user_line(&id, None, "hello"));
            out.push(b'\n');
            parent = Some(id);
        }
        let id = next_id();
        let line = entry_line(&id, parent.as_deref(), place);
        let encoded = spell(&p.text, &p.secret, spelling, place == Place::NestedArgument);
        let line = String::from_utf8(line).expect("the writer writes UTF-8");
        out.extend_from_slice(line.replace(MARK_IN_LINE, &encoded).as_bytes());
        out.push(b'\n');
        if place != Place::Label {
            parent = Some(id);
        }
    }
    out
}

/// `text` as the inside of a JSON string, spelled; `nested`: as the inside of a JSON string
/// that holds a JSON string holding it.
fn spell(text: &str, secret: &str, spelling: Spelling, nested: bool) -> String {
    let escape = |s: &str| {
        let mut quoted = Vec::new();
        pi_session_json::write_string(&mut quoted, s.as_bytes());
        let quoted = String::from_utf8(quoted).expect("UTF-8 in, UTF-8 out");
        quoted[1..quoted.len() - 1].to_owned()
    };
    let unicode = |c: char| format!("\\u{:04x}", c as u32);
    let at = text.find(secret).unwrap_or(0);
    let inner = match spelling {
        Spelling::Plain => escape(text),
        Spelling::EscapedFirst => {
            let first = text[at..].chars().next().unwrap_or(' ');
            format!(
                "{}{}{}",
                escape(&text[..at]),
                unicode(first),
                escape(&text[at + first.len_utf8()..])
            )
        }
        Spelling::Split => {
            let mid = (at + secret.len() / 2..)
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(at);
            let c = text[mid..].chars().next().unwrap_or(' ');
            format!(
                "{}{}{}",
                escape(&text[..mid]),
                unicode(c),
                escape(&text[mid + c.len_utf8()..])
            )
        }
    };
    if nested { escape(&inner) } else { inner }
}

fn user_line(id: &str, parent: Option<&str>, text: &str) -> Vec<u8> {
    let mut w = JsonWriter::new();
    head(&mut w, "message", id, parent);
    w.key("message")
        .begin_object()
        .key("role")
        .string("user")
        .key("content")
        .string(text)
        .key("timestamp")
        .uint(1_767_225_600_000)
        .end_object()
        .end_object();
    w.into_bytes()
}

fn head(w: &mut JsonWriter, kind: &str, id: &str, parent: Option<&str>) {
    w.begin_object()
        .key("type")
        .string(kind)
        .key("id")
        .string(id)
        .key("parentId");
    match parent {
        Some(p) => w.string(p),
        None => w.null(),
    };
    w.key("timestamp").string("2026-01-01T00:00:01.000Z");
}

fn usage(w: &mut JsonWriter) {
    w.key("usage").begin_object();
    for k in ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] {
        w.key(k).uint(1);
    }
    w.key("cost").begin_object();
    for k in ["input", "output", "cacheRead", "cacheWrite", "total"] {
        w.key(k).uint(0);
    }
    w.end_object().end_object();
}

fn assistant(w: &mut JsonWriter, blocks: impl FnOnce(&mut JsonWriter), stop: &str) {
    w.key("message")
        .begin_object()
        .key("role")
        .string("assistant")
        .key("content")
        .begin_array();
    blocks(w);
    w.end_array()
        .key("api")
        .string("anthropic-messages")
        .key("provider")
        .string("anthropic")
        .key("model")
        .string("claude-sonnet-4-5");
    usage(w);
    w.key("stopReason")
        .string(stop)
        .key("timestamp")
        .uint(1_767_225_600_000)
        .end_object();
}

/// One entry holding the mark at `place`.
fn entry_line(id: &str, parent: Option<&str>, place: Place) -> Vec<u8> {
    let mut w = JsonWriter::new();
    match place {
        Place::UserText => return user_line(id, parent, MARK),
        Place::UserBlock => {
            head(&mut w, "message", id, parent);
            w.key("message")
                .begin_object()
                .key("role")
                .string("user")
                .key("content")
                .begin_array()
                .begin_object()
                .key("type")
                .string("text")
                .key("text")
                .string(MARK)
                .end_object()
                .end_array()
                .key("timestamp")
                .uint(1_767_225_600_000)
                .end_object();
        }
        Place::AssistantText | Place::Thinking => {
            head(&mut w, "message", id, parent);
            let thinking = place == Place::Thinking;
            assistant(
                &mut w,
                |w| {
                    if thinking {
                        w.begin_object()
                            .key("type")
                            .string("thinking")
                            .key("thinking")
                            .string(MARK)
                            .key("thinkingSignature")
                            .string("EqQBCkgIARABGAIiQHn0c2lnbmF0dXJl")
                            .end_object();
                    } else {
                        w.begin_object()
                            .key("type")
                            .string("text")
                            .key("text")
                            .string(MARK)
                            .end_object();
                    }
                },
                "stop",
            );
        }
        Place::ToolArgument | Place::NestedArgument => {
            head(&mut w, "message", id, parent);
            let nested = place == Place::NestedArgument;
            assistant(
                &mut w,
                |w| {
                    w.begin_object()
                        .key("type")
                        .string("toolCall")
                        .key("id")
                        .string("toolu_01A")
                        .key("name")
                        .string("bash")
                        .key("arguments")
                        .begin_object();
                    if nested {
                        w.key("payload").string("{\"token\":\"\u{1}MARK\u{1}\"}");
                    } else {
                        w.key("command").string(MARK);
                    }
                    w.end_object().end_object();
                },
                "toolUse",
            );
        }
        Place::ToolResult => {
            head(&mut w, "message", id, parent);
            w.key("message")
                .begin_object()
                .key("role")
                .string("toolResult")
                .key("toolCallId")
                .string("toolu_01A")
                .key("toolName")
                .string("bash")
                .key("content")
                .begin_array()
                .begin_object()
                .key("type")
                .string("text")
                .key("text")
                .string(MARK)
                .end_object()
                .end_array()
                .key("isError")
                .bool(false)
                .key("timestamp")
                .uint(1_767_225_600_000)
                .end_object();
        }
        Place::BashExecution => {
            head(&mut w, "message", id, parent);
            w.key("message")
                .begin_object()
                .key("role")
                .string("bashExecution")
                .key("command")
                .string("env")
                .key("output")
                .string(MARK)
                .key("exitCode")
                .uint(0)
                .key("cancelled")
                .bool(false)
                .key("truncated")
                .bool(false)
                .key("timestamp")
                .uint(1_767_225_600_000)
                .end_object();
        }
        Place::CompactionSummary => {
            head(&mut w, "compaction", id, parent);
            w.key("summary").string(MARK).key("firstKeptEntryId");
            match parent {
                Some(p) => w.string(p),
                None => w.string(id),
            };
            w.key("tokensBefore").uint(1000);
        }
        Place::BranchSummary => {
            head(&mut w, "branch_summary", id, parent);
            w.key("fromId")
                .string(parent.unwrap_or("root"))
                .key("summary")
                .string(MARK);
        }
        Place::CustomData => {
            head(&mut w, "custom", id, parent);
            w.key("customType")
                .string("notes")
                .key("data")
                .begin_object()
                .key("note")
                .string(MARK)
                .end_object();
        }
        Place::CustomMessage => {
            head(&mut w, "custom_message", id, parent);
            w.key("customType")
                .string("notes")
                .key("content")
                .string(MARK)
                .key("display")
                .bool(true);
        }
        Place::Label => {
            head(&mut w, "label", id, parent);
            w.key("targetId")
                .string(parent.unwrap_or(id))
                .key("label")
                .string(MARK);
        }
        Place::SessionName => {
            head(&mut w, "session_info", id, parent);
            w.key("name").string(MARK);
        }
    }
    if !matches!(place, Place::UserText) {
        w.end_object();
    }
    w.into_bytes()
}
