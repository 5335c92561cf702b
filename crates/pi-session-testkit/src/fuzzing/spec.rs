//! Structured inputs: JSON text, messages and whole sessions built from fuzzer bytes.
//!
//! [`SessionSpec`] makes sessions that pi could have written (a header, entries of every type
//! linked into real trees, v1/v2/v3 headers) and bends them the ways real files are bent:
//! duplicate ids, dangling and missing parents, parent cycles (self-parents and forward
//! references), compactions and labels and context edits pointing anywhere, `null`/non-object
//! lines, unparseable lines, CRLF, unknown fields, odd timestamps. [`LlmSpec`] is a list of
//! context messages of every role, hand-made and from the typed model's `Arbitrary`.
//!
//! Everything is generated as JSON *text*, because that is what the loader reads and because
//! it can hold what `JsValue`'s public constructors cannot (lone surrogates, `1e400`,
//! duplicate keys).

use arbitrary::{Arbitrary, Result, Unstructured};
use pi_session_format::types::AgentMessage;

pub use pi_session_format::types::arb::{
    KEYS, json, json_string, json_text, number_text, push_json_string, string_text,
};

/// An object under construction: members as `(key, JSON text)` in order.
#[derive(Debug, Default, Clone)]
pub struct Obj(pub Vec<(String, String)>);

impl Obj {
    /// Adds a member.
    pub fn set(&mut self, key: &str, json: impl Into<String>) {
        self.0.push((key.to_owned(), json.into()));
    }

    /// Adds a member unless `json` is `None` (an absent member).
    pub fn opt(&mut self, key: &str, json: Option<String>) {
        if let Some(json) = json {
            self.set(key, json);
        }
    }

    /// The object as JSON text.
    pub fn render(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(&mut out, k);
            out.push(':');
            out.push_str(v);
        }
        out.push('}');
        out
    }
}

/// A string member most of the time, otherwise absent or any JSON value.
fn mostly_string(u: &mut Unstructured<'_>, usual: &str) -> Result<Option<String>> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => None,
        1 => Some(json(u, 1)?),
        2 => {
            let mut s = String::new();
            string_text(u, &mut s)?;
            Some(s)
        }
        _ => Some(json_string(usual)),
    })
}

/// Adds zero to two unknown members (`x-…`), which every operation must keep.
fn unknown_fields(u: &mut Unstructured<'_>, o: &mut Obj) -> Result<()> {
    if u.ratio(1, 5)? {
        for _ in 0..u.int_in_range(1..=2)? {
            let key = format!("x-{}", u.int_in_range(0u8..=9)?);
            let value = json(u, 2)?;
            o.set(&key, value);
        }
    }
    Ok(())
}

/// Content of a user, custom or system message: a string, text/image blocks, or odd values.
pub fn content(u: &mut Unstructured<'_>) -> Result<Option<String>> {
    Ok(match u.int_in_range(0u8..=9)? {
        0 => None,
        1 => Some("null".into()),
        2 => Some(json(u, 2)?),
        3..=5 => {
            let mut s = String::new();
            string_text(u, &mut s)?;
            Some(s)
        }
        _ => {
            let mut out = String::from("[");
            for i in 0..u.int_in_range(0..=3)? {
                if i > 0 {
                    out.push(',');
                }
                let mut block = Obj::default();
                match u.int_in_range(0u8..=5)? {
                    0 => {
                        block.set("type", "\"image\"");
                        block.set("data", "\"AAAA\"");
                        block.set("mimeType", "\"image/png\"");
                    }
                    1 => {
                        block.set("type", "\"thinking\"");
                        block.set("thinking", json_string("hm"));
                    }
                    2 => {
                        block.set("type", "\"toolCall\"");
                        block.set("id", "\"call_1\"");
                        block.set("name", "\"read\"");
                        block.set("arguments", "{\"path\":\"/a\"}");
                    }
                    3 => out.push_str(&json(u, 1)?),
                    _ => {
                        block.set("type", "\"text\"");
                        let mut s = String::new();
                        string_text(u, &mut s)?;
                        block.set("text", s);
                    }
                }
                if !block.0.is_empty() {
                    out.push_str(&block.render());
                }
            }
            out.push(']');
            Some(out)
        }
    })
}

const ROLES: &[&str] = &[
    "user",
    "assistant",
    "toolResult",
    "system",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
    "hookMessage",
    "developer",
];

/// A context message (the `message` of a `message` entry, or an input of `convertToLlm`):
/// mostly hand-made objects of every role with odd field values, sometimes one from the
/// typed model's `Arbitrary`, sometimes not an object at all.
pub fn message(u: &mut Unstructured<'_>) -> Result<String> {
    match u.int_in_range(0u8..=19)? {
        0 => return json(u, 2),
        1..=4 => {
            let typed = AgentMessage::arbitrary(u)?;
            if let Ok(text) = serde_json::to_string(&typed) {
                return Ok(text);
            }
        }
        _ => {}
    }
    let mut o = Obj::default();
    match u.int_in_range(0u8..=15)? {
        0 => {}
        1 => o.set("role", json(u, 0)?),
        _ => o.set("role", json_string(u.choose(ROLES)?)),
    }
    let role = o.0.first().map(|(_, r)| r.trim_matches('"').to_owned());
    match role.as_deref() {
        Some("assistant") => {
            o.opt("content", content(u)?);
            o.opt("provider", mostly_string(u, "anthropic")?);
            o.opt("model", mostly_string(u, "claude")?);
        }
        Some("bashExecution") => {
            o.opt("command", mostly_string(u, "ls -la")?);
            o.opt(
                "output",
                Some(match u.int_in_range(0u8..=3)? {
                    0 => "\"\"".into(),
                    1 => json(u, 1)?,
                    _ => json_string("total 0\n"),
                }),
            );
            let exit = *u.choose(&["0", "1", "-1", "null", "\"0\"", "\"2\"", "false", "0.5"])?;
            if u.ratio(4, 5)? {
                o.set("exitCode", exit);
            }
            o.opt(
                "cancelled",
                Some((*u.choose(&["false", "true", "0", "1"])?).into()),
            );
            o.opt(
                "truncated",
                Some((*u.choose(&["false", "true", "\"\""])?).into()),
            );
            if u.ratio(1, 2)? {
                o.opt("fullOutputPath", mostly_string(u, "/tmp/out.txt")?);
            }
            if u.ratio(1, 4)? {
                o.set(
                    "excludeFromContext",
                    *u.choose(&["true", "false", "1", "null"])?,
                );
            }
        }
        Some("custom" | "hookMessage") => {
            o.opt("customType", mostly_string(u, "ext")?);
            o.opt("content", content(u)?);
            o.opt("display", Some((*u.choose(&["true", "false"])?).into()));
        }
        Some("branchSummary" | "compactionSummary") => {
            o.opt("summary", mostly_string(u, "earlier work")?);
        }
        _ => o.opt("content", content(u)?),
    }
    if u.ratio(4, 5)? {
        o.set("timestamp", number_or_odd(u)?);
    }
    unknown_fields(u, &mut o)?;
    Ok(o.render())
}

fn number_or_odd(u: &mut Unstructured<'_>) -> Result<String> {
    Ok(if u.ratio(4, 5)? {
        (1_735_689_600_000u64 + u64::from(u.arbitrary::<u16>()?)).to_string()
    } else {
        json(u, 0)?
    })
}

/// An entry `timestamp`: mostly an ISO date-time, otherwise a date, local time, garbage,
/// a number or `null`.
fn timestamp(u: &mut Unstructured<'_>, i: usize) -> Result<Option<String>> {
    let (m, s) = (i / 60 % 60, i % 60);
    Ok(match u.int_in_range(0u8..=19)? {
        0 => None,
        1 => Some("\"2025-01-01\"".into()),
        2 => Some(format!("\"2025-01-01T00:{m:02}:{s:02}\"")),
        3 => Some(json(u, 0)?),
        4 => Some("\"not a date\"".into()),
        _ => Some(format!("\"2025-01-01T00:{m:02}:{s:02}.000Z\"")),
    })
}

/// What a generated session line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Message,
    Compaction,
    BranchSummary,
    CustomMessage,
    ModelChange,
    ThinkingLevel,
    Label,
    SessionInfo,
    Custom,
    ContextEdit,
    Usage,
    Odd,
    Raw,
}

fn kind(u: &mut Unstructured<'_>) -> Result<Kind> {
    Ok(match u.int_in_range(0u8..=99)? {
        0..=41 => Kind::Message,
        42..=51 => Kind::Compaction,
        52..=57 => Kind::BranchSummary,
        58..=63 => Kind::CustomMessage,
        64..=68 => Kind::ModelChange,
        69..=73 => Kind::ThinkingLevel,
        74..=77 => Kind::Label,
        78..=80 => Kind::SessionInfo,
        81..=83 => Kind::Custom,
        84..=91 => Kind::ContextEdit,
        92..=93 => Kind::Usage,
        94..=96 => Kind::Odd,
        _ => Kind::Raw,
    })
}

/// A session file built from fuzzer bytes (see the module docs), plus the leaves to build
/// contexts for. `Debug` shows the file line by line, which is what `cargo fuzz fmt` prints.
#[derive(Clone)]
pub struct SessionSpec {
    /// The lines of the file, without line terminators.
    pub lines: Vec<String>,
    /// Whether lines end with CRLF instead of LF.
    pub crlf: bool,
    /// Whether the last line has a terminator.
    pub final_newline: bool,
    /// Explicit leaves to build the context from, besides the current leaf.
    pub leaves: Vec<String>,
}

impl std::fmt::Debug for SessionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "SessionSpec (crlf: {}, final newline: {}, leaves: {:?})",
            self.crlf, self.final_newline, self.leaves
        )?;
        for (i, line) in self.lines.iter().enumerate() {
            writeln!(f, "{:>4} {line}", i + 1)?;
        }
        Ok(())
    }
}

impl SessionSpec {
    /// The file.
    pub fn to_jsonl(&self) -> String {
        let newline = if self.crlf { "\r\n" } else { "\n" };
        let mut out = self.lines.join(newline);
        if self.final_newline && !self.lines.is_empty() {
            out.push_str(newline);
        }
        out
    }
}

impl<'a> Arbitrary<'a> for SessionSpec {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut lines = Vec::new();
        if u.ratio(1, 30)? {
            lines.push((*u.choose(&["garbage", "{\"type\":\"title\"}", "null"])?).to_owned());
        }
        // Header: mostly v3; v1 files (no or old version) migrate and get new ids.
        let version = match u.int_in_range(0u8..=49)? {
            0..=29 => Some("3"),
            30..=35 => Some("2"),
            36..=38 => Some("1"),
            39..=42 => None,
            43 => Some("\"3\""),
            44 => Some("\"2\""),
            45 => Some("null"),
            46 => Some("2.5"),
            47 => Some("\"abc\""),
            48 => Some("true"),
            _ => Some("4"),
        };
        let v1 = matches!(version, None | Some("1" | "null" | "true"));
        let mut header = Obj::default();
        header.set("type", "\"session\"");
        header.opt("version", version.map(str::to_owned));
        header.set(
            "id",
            if u.ratio(1, 50)? {
                "42".to_owned()
            } else {
                json_string("sess")
            },
        );
        header.set("timestamp", "\"2025-01-01T00:00:00.000Z\"");
        header.set("cwd", "\"/work\"");
        unknown_fields(u, &mut header)?;
        lines.push(header.render());

        let n = u.int_in_range(0..=40)?;
        let kinds = (0..n).map(|_| kind(u)).collect::<Result<Vec<_>>>()?;
        // Ids first, so that parents and targets can point forward.
        let mut ids: Vec<Option<String>> = Vec::with_capacity(n);
        for i in 0..n {
            let id = match u.int_in_range(0u8..=99)? {
                _ if v1 && u.ratio(3, 4)? => None,
                0..=85 => Some(json_string(&format!("e{i}"))),
                86..=89 if i > 0 => ids[u.choose_index(i)?].clone(),
                90..=91 => None,
                92 => Some("null".into()),
                93 => Some("\"\"".into()),
                94 => Some(u.int_in_range(0u8..=3)?.to_string()),
                95 => Some("{\"o\":1}".into()),
                _ => Some(json_string(&format!("e{}", u.int_in_range(0..=n)?))),
            };
            ids.push(id);
        }
        let any_id = |u: &mut Unstructured<'_>, i: usize| -> Result<Option<String>> {
            Ok(match u.int_in_range(0u8..=19)? {
                0 => None,
                1 => Some("null".into()),
                2 => Some("\"gone\"".into()),
                3 => Some(json(u, 0)?),
                4 => ids.get(i).cloned().flatten(),
                5 if i + 1 < n => ids[u.int_in_range(i + 1..=n - 1)?].clone(),
                _ if i > 0 => ids[u.choose_index(i)?].clone(),
                _ => None,
            })
        };
        for (i, &k) in kinds.iter().enumerate() {
            if u.ratio(1, 40)? {
                lines.push((*u.choose(&["", "  ", "\u{a0}", "\t\r"])?).to_owned());
            }
            if k == Kind::Raw {
                let raw = *u.choose(&[
                    "null",
                    "false",
                    "0",
                    "\"\"",
                    "42",
                    "\"text\"",
                    "[1,{\"type\":\"message\"}]",
                    "true",
                    "{\"type\":\"message\",\"id\":",
                    "not json",
                    "{} {}",
                    "\u{feff}{\"type\":\"custom\"}",
                ])?;
                lines.push(raw.to_owned());
                continue;
            }
            let mut o = Obj::default();
            let type_ = match k {
                Kind::Message => "message",
                Kind::Compaction => "compaction",
                Kind::BranchSummary => "branch_summary",
                Kind::CustomMessage => "custom_message",
                Kind::ModelChange => "model_change",
                Kind::ThinkingLevel => "thinking_level_change",
                Kind::Label => "label",
                Kind::SessionInfo => "session_info",
                Kind::Custom => "custom",
                Kind::ContextEdit => "context_edit",
                Kind::Usage => "usage",
                Kind::Odd | Kind::Raw => "",
            };
            if k == Kind::Odd {
                match u.int_in_range(0u8..=3)? {
                    0 => {}
                    1 => o.set("type", json(u, 0)?),
                    2 => o.set("type", "\"session\""),
                    _ => o.set("type", "\"future_entry\""),
                }
            } else {
                o.set("type", json_string(type_));
            }
            o.opt("id", ids[i].clone());
            let parent = match u.int_in_range(0u8..=99)? {
                _ if v1 && u.ratio(3, 4)? => None,
                _ if i == 0 => Some("null".into()),
                0..=6 => Some("null".into()),
                7..=71 => Some(ids[i - 1].clone().unwrap_or_else(|| "null".into())),
                72..=86 => Some(
                    ids[u.choose_index(i)?]
                        .clone()
                        .unwrap_or_else(|| "null".into()),
                ),
                87..=88 => ids[u.int_in_range(i..=n - 1)?].clone(),
                89 => ids[i].clone(),
                90..=94 => Some("\"gone\"".into()),
                95..=97 => None,
                _ => Some((*u.choose(&["\"\"", "0", "false", "{\"x\":1}", "[1]"])?).into()),
            };
            o.opt("parentId", parent);
            o.opt("timestamp", timestamp(u, i)?);
            match k {
                Kind::Message => match u.int_in_range(0u8..=24)? {
                    0 => {}
                    1 => o.set("message", "null"),
                    _ => o.set("message", message(u)?),
                },
                Kind::Compaction => {
                    o.opt("summary", mostly_string(u, "summary of earlier work")?);
                    if v1 && u.ratio(1, 2)? {
                        let index = match u.int_in_range(0u8..=5)? {
                            0 => "\"1\"".to_owned(),
                            1 => "1.5".to_owned(),
                            2 => "-1".to_owned(),
                            _ => u.int_in_range(0..=n + 2)?.to_string(),
                        };
                        o.set("firstKeptEntryIndex", index);
                    } else {
                        o.opt("firstKeptEntryId", any_id(u, i)?);
                    }
                    o.opt(
                        "tokensBefore",
                        Some(if u.ratio(9, 10)? {
                            u.arbitrary::<u16>()?.to_string()
                        } else {
                            json(u, 0)?
                        }),
                    );
                    match u.int_in_range(0u8..=9)? {
                        0 => o.set("systemMessage", "null"),
                        1 => o.set("systemMessage", "false"),
                        2 => o.set("systemMessage", message(u)?),
                        3 => {
                            let mut s = Obj::default();
                            s.set("role", "\"system\"");
                            s.opt("content", content(u)?);
                            s.set("timestamp", "1735689600000");
                            o.set("systemMessage", s.render());
                        }
                        _ => {}
                    }
                }
                Kind::BranchSummary => {
                    let summary = match u.int_in_range(0u8..=5)? {
                        0 => Some("\"\"".to_owned()),
                        1 => None,
                        _ => mostly_string(u, "branch work")?,
                    };
                    o.opt("summary", summary);
                    o.opt("fromId", any_id(u, i)?.or(Some("\"root\"".into())));
                }
                Kind::CustomMessage => {
                    o.opt("customType", mostly_string(u, "ext")?);
                    o.opt("content", content(u)?);
                    o.opt(
                        "display",
                        Some((*u.choose(&["true", "false", "null"])?).into()),
                    );
                    if u.ratio(1, 3)? {
                        o.set("details", json(u, 2)?);
                    }
                }
                Kind::ModelChange => {
                    o.opt("provider", mostly_string(u, "openai")?);
                    o.opt("modelId", mostly_string(u, "gpt")?);
                }
                Kind::ThinkingLevel => o.opt("thinkingLevel", mostly_string(u, "high")?),
                Kind::Label => {
                    o.opt("targetId", any_id(u, i)?);
                    let label = match u.int_in_range(0u8..=4)? {
                        0 => None,
                        1 => Some("\"\"".to_owned()),
                        2 => Some(json(u, 0)?),
                        _ => Some(json_string("bookmark")),
                    };
                    o.opt("label", label);
                }
                Kind::SessionInfo => o.opt("name", mostly_string(u, " my session ")?),
                Kind::Custom => {
                    o.opt("customType", mostly_string(u, "state")?);
                    o.set("data", json(u, 2)?);
                }
                Kind::ContextEdit => {
                    o.opt("targetId", any_id(u, i)?);
                    match u.int_in_range(0u8..=5)? {
                        0 => {}
                        1 => o.set("replacement", "null"),
                        2 => o.set("replacement", json(u, 1)?),
                        _ => {
                            let mut r = Obj::default();
                            r.opt("content", content(u)?);
                            o.set("replacement", r.render());
                        }
                    }
                }
                Kind::Usage => {
                    o.set("kind", "\"compaction\"");
                    o.opt("provider", mostly_string(u, "openai")?);
                    o.opt("model", mostly_string(u, "gpt")?);
                }
                Kind::Odd | Kind::Raw => {}
            }
            unknown_fields(u, &mut o)?;
            lines.push(o.render());
        }
        let mut leaves = Vec::new();
        for _ in 0..u.int_in_range(0..=2)? {
            leaves.push(match u.int_in_range(0u8..=5)? {
                0 => String::new(),
                1 => "nope".into(),
                _ if n > 0 => format!("e{}", u.choose_index(n)?),
                _ => "e0".into(),
            });
        }
        Ok(SessionSpec {
            lines,
            crlf: u.ratio(1, 12)?,
            final_newline: u.ratio(5, 6)?,
            leaves,
        })
    }
}

/// Context messages for `convertToLlm`, as JSON text, and whose rules to follow.
#[derive(Debug, Clone)]
pub struct LlmSpec {
    /// The messages.
    pub messages: Vec<String>,
    /// pi 0.87.1 rules instead of 0.73.1.
    pub pi_0_87: bool,
}

impl<'a> Arbitrary<'a> for LlmSpec {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let pi_0_87 = u.arbitrary()?;
        let mut messages = Vec::new();
        for _ in 0..u.int_in_range(0..=8)? {
            messages.push(message(u)?);
        }
        Ok(LlmSpec { messages, pi_0_87 })
    }
}
