//! Repairs of what pi resumes and sends, found with `validate`'s own checks on the lines the
//! earlier repairs left:
//!
//! - lines without an id after the file's last entry (a `{"type":"leaf",…}` marker, a bare
//!   value) make them pi's leaf, and pi resumes an empty conversation (PS0226): they move to
//!   the rejects, and pi resumes at the last entry again;
//! - opt-in ([`super::RepairOptions::tool_results`]): a tool result whose call is on no
//!   assistant message before it on its path (model APIs refuse every request that carries
//!   it, pi#4189; pi sends it as it is) moves to the rejects, and its children hang from its
//!   parent (PS0219). A tool *call* without a result needs nothing: every pinned pi adds a
//!   "No result provided" error result for it when it sends the context.

use super::ids::{entries_of, with_member};
use super::{Fix, FixAction, Line, Reject, Repairs, join};
use crate::{Code, Options, validate};
use pi_session_format::PiVersion;
use pi_session_format::json::JsValue;
use rustc_hash::FxHashMap;

/// Where `validate` reports `code` on the current file: the 1-based line of each report
/// (`None` for one about the whole file).
fn reported(lines: &[Line<'_>], pi: PiVersion, code: Code) -> Vec<Option<usize>> {
    let report = validate(
        &join(lines),
        &Options {
            pi,
            ..Options::default()
        },
    );
    report
        .diagnostics
        .iter()
        .filter(|d| d.code == code)
        .map(|d| d.location.map(|l| l.line))
        .collect()
}

/// What a line at the end of the file is to pi.
enum Tail {
    /// Not JSON: pi skips it.
    Skipped,
    /// The header or an entry with an id: pi's leaf when it is last.
    Anchor,
    /// A JSON value pi takes for an entry, without an id.
    WithoutId,
}

fn tail_kind(text: &[u8]) -> Tail {
    // `JSON.parse` skips the blanks around the value (a CR left by CRLF line ends among them).
    let Some(shape) = super::shape_of(text) else {
        return Tail::Skipped;
    };
    let is_header = shape.is_header();
    let has_id = shape.id.as_ref().is_some_and(|id| {
        matches!(
            id,
            JsValue::String(_) | JsValue::Number(_) | JsValue::Bool(_)
        )
    });
    if is_header || has_id {
        Tail::Anchor
    } else {
        Tail::WithoutId
    }
}

/// Moves the lines without an id that follow the file's last entry to the rejects, when pi
/// does not resume the conversation because of them (PS0226).
pub(super) fn trailing_without_id<'a>(
    mut lines: Vec<Line<'a>>,
    pi: PiVersion,
    out: &mut Repairs,
) -> Vec<Line<'a>> {
    let code = Code::ConversationNotResumed;
    if !out.wants(code) {
        return lines;
    }
    let mut trailing = Vec::new();
    for (i, line) in lines.iter().enumerate().rev() {
        match tail_kind(&line.text) {
            Tail::Skipped => {}
            Tail::Anchor => break,
            Tail::WithoutId => trailing.push(i),
        }
    }
    if trailing.is_empty() || reported(&lines, pi, code).is_empty() {
        return lines;
    }
    trailing.sort_unstable();
    let moved: Vec<Line> = trailing.iter().rev().map(|&i| lines.remove(i)).collect();
    for line in moved.into_iter().rev() {
        out.fix(Fix::new(
            code,
            line.origin,
            FixAction::Rejected,
            "a line without an id after the last entry (pi takes it for its leaf and resumes an empty conversation): moved to the rejects",
        ));
        out.reject(Reject {
            line: line.origin,
            reason: "a line without an id after the last entry: pi resumed an empty conversation"
                .to_owned(),
            text: line.into_unedited(),
        });
    }
    lines
}

/// Moves tool results without a call before them on their path to the rejects, their
/// children reattached to their parent (opt-in: it changes the tree and the context).
pub(super) fn orphan_results<'a>(
    mut lines: Vec<Line<'a>>,
    pi: PiVersion,
    out: &mut Repairs,
) -> Vec<Line<'a>> {
    let code = Code::OrphanToolResult;
    if !out.wants(code) {
        return lines;
    }
    let orphans: Vec<usize> = reported(&lines, pi, code).into_iter().flatten().collect();
    if orphans.is_empty() {
        return lines;
    }
    let entries = entries_of(&lines, out.behind());
    let mut count: FxHashMap<&str, usize> = FxHashMap::default();
    // Who names an id other than as its parent (labels, compactions, branch summaries).
    let mut named_by: FxHashMap<&str, (usize, &'static str)> = FxHashMap::default();
    for (i, e) in entries.iter().enumerate() {
        let Some(e) = e else { continue };
        if let Some(id) = e.id.as_deref() {
            *count.entry(id).or_default() += 1;
        }
        for (key, target) in &e.references {
            if *key != "parentId" {
                named_by.entry(target.as_str()).or_insert((i, key));
            }
        }
    }
    // Parents as they will be (JSON text), updated as results are taken out.
    let mut parent: Vec<Option<String>> = entries
        .iter()
        .map(|e| e.as_ref()?.reference("parentId").map(str::to_owned))
        .collect();
    let mut removed = vec![false; lines.len()];
    let mut relinked = vec![false; lines.len()];
    for &n in &orphans {
        let i = n - 1;
        let Some(id) = entries.get(i).and_then(|e| e.as_ref()?.id.as_deref()) else {
            continue;
        };
        let origin = lines[i].origin;
        if count.get(id) != Some(&1) {
            out.unrepaired(
                code,
                origin,
                "the tool result's id is shared with another entry: left as it is",
            );
            continue;
        }
        if let Some(&(by, key)) = named_by.get(id) {
            out.unrepaired(
                code,
                origin,
                &format!(
                    "the tool result is named by the {key} of line {}: left as it is",
                    lines[by].origin
                ),
            );
            continue;
        }
        removed[i] = true;
        let to = parent[i].clone().unwrap_or_else(|| "null".to_owned());
        for j in 0..lines.len() {
            if !removed[j] && parent[j].as_deref() == Some(id) {
                parent[j] = Some(to.clone());
                relinked[j] = true;
            }
        }
    }
    let mut kept = Vec::with_capacity(lines.len());
    for (i, mut line) in lines.drain(..).enumerate() {
        if removed[i] {
            out.fix(Fix::new(
                code,
                line.origin,
                FixAction::Rejected,
                "a tool result whose call is on no assistant message before it (model APIs refuse every request that carries it, pi#4189): moved to the rejects",
            ));
            out.reject(Reject {
                line: line.origin,
                reason: "a tool result without its tool call: model APIs refuse the request"
                    .to_owned(),
                text: line.into_unedited(),
            });
            continue;
        }
        if relinked[i] {
            let to = parent[i].as_deref().unwrap_or("null");
            line.edit(with_member(&line.text, "parentId", to));
            out.fix(Fix::new(
                code,
                line.origin,
                FixAction::Relinked,
                format!("its parent, a tool result without a call, moved to the rejects: now hangs from {to}"),
            ));
        }
        kept.push(line);
    }
    kept
}
