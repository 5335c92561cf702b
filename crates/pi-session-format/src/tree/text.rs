//! The tree as a terminal drawing ([`Tree::write_text`]): one line per entry — its id, what it
//! is and the start of its text — a chain drawn straight down, a branch point's children
//! drawn with `├─`/`└─`, labels in brackets, compactions with the entry they keep from and
//! the tokens they summarised, the current leaf marked, and long straight runs collapsed to
//! their ends (`… 40 entries …`; compactions, branch summaries, labelled entries and the
//! leaf are always drawn).
//!
//! Iterative (an explicit stack), each node drawn once (duplicate ids cannot loop it), every
//! text from the file with its control characters escaped and cut to a width.

use super::Index;
use super::view::Tree;
use crate::json::JsValue;
use crate::session::{Key, Session};
use std::fmt::Write;

/// How [`Tree::write_text`] draws.
#[derive(Debug, Clone, Copy)]
pub struct TextOptions {
    /// Straight runs longer than this are collapsed to their first and last two entries
    /// (`usize::MAX`: never).
    pub collapse: usize,
    /// The most characters of an entry's text shown.
    pub width: usize,
}

impl Default for TextOptions {
    fn default() -> TextOptions {
        TextOptions {
            collapse: 12,
            width: 80,
        }
    }
}

/// `text` on one line: control characters escaped, cut to `width` characters with `…`.
fn one_line(text: &str, width: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n >= width {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.trim_end().to_owned()
}

/// The text of a message's `content` (a string, or its text blocks joined).
fn content_text(content: Option<&JsValue>) -> String {
    match content {
        Some(JsValue::String(s)) => s.to_string_lossy(),
        Some(JsValue::Array(blocks)) => blocks
            .0
            .iter()
            .filter_map(|b| match b.get("type").and_then(JsValue::as_str) {
                Some("text") => b.get("text").and_then(JsValue::as_str).map(str::to_owned),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn string(value: &JsValue, key: &str) -> String {
    value
        .get(key)
        .and_then(JsValue::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// What an entry is and the start of its text: `user: Fix the build`.
fn describe(value: &JsValue, width: usize) -> String {
    let kind = value.get("type").and_then(JsValue::as_str).unwrap_or("?");
    let (what, text) = match kind {
        "message" => {
            let m = value.get("message").cloned().unwrap_or_default();
            let role = string(&m, "role");
            let text = match role.as_str() {
                "assistant" => {
                    let calls: Vec<String> = match m.get("content") {
                        Some(JsValue::Array(blocks)) => blocks
                            .0
                            .iter()
                            .filter(|b| b.get("type").and_then(JsValue::as_str) == Some("toolCall"))
                            .map(|b| string(b, "name"))
                            .collect(),
                        _ => Vec::new(),
                    };
                    let text = content_text(m.get("content"));
                    match (text.is_empty(), calls.is_empty()) {
                        (_, true) => text,
                        (true, false) => format!("→ {}", calls.join(", ")),
                        (false, false) => format!("{text} → {}", calls.join(", ")),
                    }
                }
                "toolResult" => {
                    let error = matches!(m.get("isError"), Some(JsValue::Bool(true)));
                    format!(
                        "{}{}: {}",
                        string(&m, "toolName"),
                        if error { " (error)" } else { "" },
                        content_text(m.get("content"))
                    )
                }
                "bashExecution" => format!("$ {}", string(&m, "command")),
                _ => content_text(m.get("content")),
            };
            (
                if role.is_empty() {
                    "message".into()
                } else {
                    role
                },
                text,
            )
        }
        "compaction" => {
            let tokens = match value.get("tokensBefore") {
                Some(JsValue::Number(n)) => format!(", {n} tokens summarised"),
                _ => String::new(),
            };
            (
                "compaction".into(),
                format!(
                    "keeps from {}{tokens}: {}",
                    value
                        .get("firstKeptEntryId")
                        .map_or("-".to_owned(), crate::json::to_string),
                    string(value, "summary")
                ),
            )
        }
        "branch_summary" => ("branch summary".into(), string(value, "summary")),
        "model_change" => (
            "model".into(),
            format!("{}/{}", string(value, "provider"), string(value, "modelId")),
        ),
        "thinking_level_change" => ("thinking".into(), string(value, "thinkingLevel")),
        "label" => (
            "label".into(),
            format!(
                "{} on {}",
                value
                    .get("label")
                    .and_then(JsValue::as_str)
                    .unwrap_or("(cleared)"),
                string(value, "targetId")
            ),
        ),
        "session_info" => ("name".into(), string(value, "name")),
        "custom" => ("custom".into(), string(value, "customType")),
        "custom_message" => (
            format!("custom message {}", string(value, "customType")),
            content_text(value.get("content")),
        ),
        other => (other.to_owned(), String::new()),
    };
    let text = one_line(&text, width);
    if text.is_empty() {
        what
    } else {
        format!("{what}: {text}")
    }
}

impl Tree {
    /// Draws the tree (see the [module](self) docs) into `out`, one line per entry.
    pub fn write_text(
        &self,
        session: &Session<'_>,
        index: &Index,
        options: TextOptions,
        out: &mut String,
    ) {
        let labels = index.labels(session);
        let leaf = index.leaf_record(session, &super::Leaf::Current);
        let mut drawn = vec![false; session.records.len()];
        let line = |out: &mut String, prefix: &str, branch: &str, record: usize| {
            let r = &session.records[record];
            let value = r.value();
            let id = match &r.id {
                Key::String(s) => String::from_utf8_lossy(s).into_owned(),
                Key::Undefined | Key::Unique(_) => "(no id)".to_owned(),
                other => other.display(),
            };
            let _ = write!(
                out,
                "{prefix}{branch}{} {}",
                one_line(&id, 16),
                describe(&value, options.width)
            );
            if let Some(label) = labels.get(&r.id).and_then(|l| l.label.as_str()) {
                let _ = write!(out, " [{}]", one_line(label, 40));
            }
            if Some(record) == leaf {
                out.push_str("  ◀ leaf");
            }
            out.push('\n');
        };
        // Frames: (node, prefix for its line, branch drawing for its line, prefix below it).
        let mut stack: Vec<(usize, String, &str, String)> = self
            .roots()
            .iter()
            .rev()
            .map(|&r| (r, String::new(), "", String::new()))
            .collect();
        while let Some((mut node, prefix, branch, below)) = stack.pop() {
            if std::mem::replace(&mut drawn[node], true) {
                continue;
            }
            line(out, &prefix, branch, node);
            // A straight run: one child after another, drawn below at the same place.
            let mut run = Vec::new();
            loop {
                let children = self.children(node);
                if children.len() != 1 || drawn[children[0]] {
                    break;
                }
                node = children[0];
                drawn[node] = true;
                run.push(node);
            }
            let keep = |i: usize| {
                run.len() <= options.collapse
                    || i < 2
                    || i + 2 >= run.len()
                    || Some(run[i]) == leaf
                    || labels.contains_key(&session.records[run[i]].id)
                    || matches!(
                        session.records[run[i]].entry_type(),
                        Some("compaction" | "branch_summary")
                    )
            };
            let mut hidden = 0;
            for (i, &r) in run.iter().enumerate() {
                if keep(i) {
                    if hidden > 0 {
                        let _ = writeln!(out, "{below}┆ … {hidden} entries …");
                        hidden = 0;
                    }
                    line(out, &below, "", r);
                } else {
                    hidden += 1;
                }
            }
            let children: Vec<usize> = self
                .children(node)
                .iter()
                .copied()
                .filter(|&c| !drawn[c])
                .collect();
            for (i, &child) in children.iter().enumerate().rev() {
                let last = i + 1 == children.len();
                let (branch, more) = if last {
                    ("└─ ", "   ")
                } else {
                    ("├─ ", "│  ")
                };
                stack.push((child, below.clone(), branch, format!("{below}{more}")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PiVersion, tree::Leaf};

    fn message(id: &str, parent: &str, role: &str, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:0{}.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}}}"#,
            id.len() % 10
        )
    }

    #[test]
    fn chains_branches_labels_and_the_leaf() {
        let mut lines = vec![
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_owned(),
            message("a1", "null", "user", "Fix the build\\nplease"),
            message("a2", r#""a1""#, "assistant", "On it"),
            message("b2", r#""a1""#, "assistant", "Another \\u001b[31m try"),
        ];
        lines.push(r#"{"type":"label","id":"l1","parentId":"b2","timestamp":"2026-01-01T00:00:09.000Z","targetId":"a2","label":"good"}"#.into());
        let text = lines.join("\n") + "\n";
        let s = Session::from_bytes(text.as_bytes(), PiVersion::V0_73).expect("loads");
        let index = s.index();
        let mut out = String::new();
        s.tree()
            .write_text(&s, index, TextOptions::default(), &mut out);
        assert_eq!(
            out,
            "a1 user: Fix the build please\n\
             ├─ a2 assistant: On it [good]\n\
             └─ b2 assistant: Another \\u{1b}[31m try\n   \
             l1 label: good on a2  ◀ leaf\n"
        );
        assert!(index.leaf_record(&s, &Leaf::Current).is_some());
    }

    #[test]
    fn long_runs_collapse() {
        let mut lines = vec![
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_owned(),
            message("m0", "null", "user", "start"),
        ];
        for i in 1..40 {
            lines.push(message(
                &format!("m{i}"),
                &format!(r#""m{}""#, i - 1),
                "user",
                "x",
            ));
        }
        let text = lines.join("\n") + "\n";
        let s = Session::from_bytes(text.as_bytes(), PiVersion::V0_73).expect("loads");
        let mut out = String::new();
        s.tree()
            .write_text(&s, s.index(), TextOptions::default(), &mut out);
        assert_eq!(out.lines().count(), 6, "{out}");
        assert!(out.contains("┆ … 35 entries …"), "{out}");
        assert!(out.ends_with("m39 user: x  ◀ leaf\n"), "{out}");
    }
}
