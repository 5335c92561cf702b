//! The tree checks: what only the whole file can tell — duplicate ids, dangling parents,
//! cycles, extra roots, compaction windows, label targets, branch summaries, and tool results
//! without their call on the path.
//!
//! Parents resolve like pi's index (`byId`, the last entry of an id wins). The walk over the
//! tree is iterative and keeps, for the current path, the ids and tool call ids of the
//! ancestors, so every check on "the path before this entry" is linear in the file.

use super::Options;
use super::aggregate::Sink;
use super::catalogue::{Code, PiEffect};
use super::entry::{Facts, LineKind};
use super::header::Header;
use super::report::{Diagnostic, Location};
use super::schema::LineSchema;
use pi_session_format::PiVersion;
use pi_session_format::session::Key;
use rustc_hash::{FxHashMap, FxHashSet};

/// Runs the tree checks (version-2 and -3 files: version-1 entries have no ids).
pub(crate) fn check(
    bytes: &[u8],
    facts: &[Facts],
    header: &Header,
    options: &Options<'_>,
    out: &mut Sink,
) {
    let entries: Vec<&Facts> = facts.iter().filter(|f| f.is_entry()).collect();
    if header.schema() == LineSchema::V1 {
        return;
    }
    Tree::new(bytes, &entries, options.pi).check(out);
}

fn whole_line(f: &Facts) -> Location {
    Location {
        line: f.line,
        column: 1,
        offset: f.offset,
        length: f.len.max(1),
    }
}

fn diagnostic(f: &Facts, code: Code, message: String) -> Diagnostic {
    Diagnostic::new(code, Some(whole_line(f)), message).for_entry(f.id_str())
}

struct Tree<'f> {
    /// The file.
    bytes: &'f [u8],
    entries: &'f [&'f Facts],
    /// `byId`: the last entry of each id.
    by_id: FxHashMap<&'f Key, usize>,
    /// The resolved parent of each entry (`None`: a root for pi's path walk).
    parent: Vec<Option<usize>>,
    /// Whose writer the branch summaries' `fromId` is checked against.
    pi: PiVersion,
}

impl<'f> Tree<'f> {
    fn new(bytes: &'f [u8], entries: &'f [&'f Facts], pi: PiVersion) -> Tree<'f> {
        let mut by_id = FxHashMap::default();
        for (i, e) in entries.iter().enumerate() {
            by_id.insert(&e.id, i);
        }
        let parent = entries
            .iter()
            .map(|e| {
                if e.parent.is_truthy() {
                    by_id.get(&e.parent).copied()
                } else {
                    None
                }
            })
            .collect();
        Tree {
            bytes,
            entries,
            by_id,
            parent,
            pi,
        }
    }

    fn check(&self, out: &mut Sink) {
        self.duplicates(out);
        self.parents(out);
        let visited = self.walk(out);
        self.cycles(&visited, out);
        self.references(out);
    }

    fn name(&self, key: &Key) -> String {
        key.display()
    }

    /// The bytes of an entry's line.
    fn text(&self, i: usize) -> &[u8] {
        let e = self.entries[i];
        &self.bytes[e.offset..e.offset + e.len]
    }

    /// [`Code::DuplicateId`], on each later entry of a shared id. pi's tree holds only the
    /// last entry of an id, so the earlier one is hidden (from `/tree` and every context)
    /// unless the last is a byte-identical copy of it (pi compares what it shows, not where
    /// it came from).
    fn duplicates(&self, out: &mut Sink) {
        let mut previous: FxHashMap<&Key, usize> = FxHashMap::default();
        for (i, e) in self.entries.iter().enumerate() {
            if !matches!(e.id, Key::String(_)) {
                continue;
            }
            let Some(j) = previous.insert(&e.id, i) else {
                continue;
            };
            let last = self.by_id[&e.id];
            let earlier = self.entries[j].line;
            let d = if self.text(j) == self.text(last) {
                diagnostic(
                    e,
                    Code::DuplicateId,
                    format!(
                        "id {} is also the id of line {}, a byte-identical copy: pi keeps only the last entry of an id, so children of the earlier one hang under the last",
                        self.name(&e.id),
                        earlier
                    ),
                )
                .with_pi(PiEffect::Altered)
            } else {
                diagnostic(
                    e,
                    Code::DuplicateId,
                    format!(
                        "id {} is also the id of line {}: pi keeps only the last entry of an id, so it never shows line {} (not in /tree, not in any context) and children of it hang under the last",
                        self.name(&e.id),
                        earlier,
                        earlier
                    ),
                )
            };
            out.push(d);
        }
    }

    /// [`Code::DanglingParent`], [`Code::SelfParent`], [`Code::ExtraRoot`].
    fn parents(&self, out: &mut Sink) {
        let mut roots = 0usize;
        for (i, e) in self.entries.iter().enumerate() {
            if matches!(e.kind, LineKind::NonObject { .. }) {
                continue;
            }
            if !e.parent.is_truthy() {
                if matches!(e.parent, Key::Null) {
                    roots += 1;
                    if roots > 1 {
                        out.push(diagnostic(
                            e,
                            Code::ExtraRoot,
                            "another root entry (parentId null): normal after branching at the first message".to_string(),
                        ));
                    }
                }
                continue;
            }
            match self.parent[i] {
                None if matches!(e.parent, Key::String(_)) => out.push(diagnostic(
                    e,
                    Code::DanglingParent,
                    format!(
                        "parentId {} is the id of no entry: pi treats this entry as a root, and a context built through it starts here",
                        self.name(&e.parent)
                    ),
                )),
                Some(p) if p == i => out.push(diagnostic(
                    e,
                    Code::SelfParent,
                    format!(
                        "the entry is its own parent ({}): pi loops forever when it builds a context through it",
                        self.name(&e.parent)
                    ),
                )),
                _ => {}
            }
        }
    }

    /// Depth-first walk from every root; checks that need the path before an entry.
    /// Returns which entries were reached.
    fn walk(&self, out: &mut Sink) -> Vec<bool> {
        let n = self.entries.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for i in 0..n {
            match self.parent[i] {
                Some(p) if p != i => children[p].push(i),
                _ => roots.push(i),
            }
        }
        let mut visited = vec![false; n];
        // Ids and tool call ids on the current path, with multiplicity.
        let mut path_ids: FxHashMap<&Key, u32> = FxHashMap::default();
        let mut calls: FxHashMap<&str, u32> = FxHashMap::default();
        // (entry, entered): the second visit leaves the entry.
        let mut stack: Vec<(usize, bool)> = roots.into_iter().rev().map(|r| (r, false)).collect();
        while let Some((i, entered)) = stack.pop() {
            let e = self.entries[i];
            if entered {
                decrement(&mut path_ids, &&e.id);
                for c in &e.tool_calls {
                    decrement(&mut calls, &&**c);
                }
                continue;
            }
            visited[i] = true;
            self.on_path(e, &path_ids, &calls, out);
            *path_ids.entry(&e.id).or_default() += 1;
            for c in &e.tool_calls {
                *calls.entry(c).or_default() += 1;
            }
            stack.push((i, true));
            stack.extend(children[i].iter().rev().map(|&c| (c, false)));
        }
        visited
    }

    /// [`Code::FirstKeptNotOnPath`] and [`Code::OrphanToolResult`] for one entry.
    fn on_path(
        &self,
        e: &Facts,
        ids: &FxHashMap<&Key, u32>,
        calls: &FxHashMap<&str, u32>,
        out: &mut Sink,
    ) {
        // pi 0.87.1 and later write the compaction's own id when it keeps nothing
        // (`firstKeptEntryId ?? id`): what a compaction that names itself means, by design.
        let keeps_nothing_by_design =
            |first_kept: &Key| self.pi.reads_like_0_87() && *first_kept == e.id;
        if let Some(first_kept) = &e.first_kept
            && e.type_.as_deref() == Some("compaction")
            && matches!(first_kept, Key::String(_))
            && !ids.contains_key(first_kept)
            && !keeps_nothing_by_design(first_kept)
        {
            let where_ = if self.by_id.contains_key(first_kept) {
                "names an entry that is not an ancestor of the compaction"
            } else {
                "names no entry"
            };
            out.push(diagnostic(
                e,
                Code::FirstKeptNotOnPath,
                format!(
                    "firstKeptEntryId {} {where_}: pi keeps no message from before the compaction, the context is its summary and what follows",
                    self.name(first_kept)
                ),
            ));
        }
        if let Some(call) = &e.tool_result
            && !calls.contains_key(&**call)
        {
            out.push(diagnostic(
                e,
                Code::OrphanToolResult,
                format!("tool result for call {call:?}, but no assistant message before it on its path made that call"),
            ));
        }
    }

    /// [`Code::ParentCycle`]: entries the walk from the roots never reached hang in or under a
    /// cycle. Each cycle is reported once, on its first line.
    fn cycles(&self, visited: &[bool], out: &mut Sink) {
        // 0 = not yet, 1 = on the current chain, 2 = done.
        let mut state: Vec<u8> = visited.iter().map(|&v| if v { 2 } else { 0 }).collect();
        for start in 0..self.entries.len() {
            if state[start] != 0 {
                continue;
            }
            let mut chain = Vec::new();
            let mut at = Some(start);
            while let Some(i) = at {
                match state[i] {
                    0 => {
                        state[i] = 1;
                        chain.push(i);
                        at = self.parent[i];
                    }
                    1 => {
                        let cycle = &chain[chain.iter().position(|&c| c == i).unwrap_or(0)..];
                        // A self-parent is reported on its own.
                        if cycle.len() > 1 {
                            out.push(self.cycle(cycle));
                        }
                        break;
                    }
                    _ => break,
                }
            }
            for i in chain {
                state[i] = 2;
            }
        }
    }

    fn cycle(&self, members: &[usize]) -> Diagnostic {
        let mut lines: Vec<usize> = members.iter().map(|&m| self.entries[m].line).collect();
        lines.sort_unstable();
        let first = members
            .iter()
            .copied()
            .min_by_key(|&m| self.entries[m].line)
            .unwrap_or(members[0]);
        let shown: Vec<String> = lines.iter().take(8).map(usize::to_string).collect();
        let etc = if lines.len() > 8 { ", …" } else { "" };
        diagnostic(
            self.entries[first],
            Code::ParentCycle,
            format!(
                "{} entries form a parent cycle (lines {}{etc}): pi loops forever when it builds a context through them, and /tree does not show them",
                members.len(),
                shown.join(", ")
            ),
        )
    }

    /// [`Code::LabelTargetMissing`] and [`Code::BranchSummaryFromId`].
    fn references(&self, out: &mut Sink) {
        // The ids of the entries before the current one: from 0.87.1 on, a branch summary's
        // `fromId` is the leaf the branch was made from, written before it.
        let mut before: FxHashSet<&Key> = FxHashSet::default();
        for e in self.entries {
            match e.type_.as_deref() {
                Some("label") => {
                    if let Some(target @ Key::String(_)) = &e.target_id
                        && !self.by_id.contains_key(target)
                    {
                        out.push(diagnostic(
                            e,
                            Code::LabelTargetMissing,
                            format!("label target {} is the id of no entry", self.name(target)),
                        ));
                    }
                }
                Some("branch_summary") => {
                    if let Some(message) = self.branch_summary_from_id_problem(e, &before) {
                        out.push(diagnostic(e, Code::BranchSummaryFromId, message));
                    }
                }
                _ => {}
            }
            before.insert(&e.id);
        }
    }

    /// What is wrong with branch summary `e`'s `fromId` for the writer of [`Tree::pi`]
    /// (`before`: the ids of the entries before it), if anything. pi 0.73.1 writes the
    /// summary's `parentId` (the entry branched to), or `"root"` without one; pi 0.87.1 and
    /// later write the leaf the branch was made from (`leafId ?? "root"`), an entry before it.
    fn branch_summary_from_id_problem(
        &self,
        e: &Facts,
        before: &FxHashSet<&Key>,
    ) -> Option<String> {
        let Some(from @ Key::String(from_id)) = &e.from_id else {
            return None;
        };
        if &**from_id == b"root" {
            return None;
        }
        if self.pi.reads_like_0_87() {
            return (!before.contains(from)).then(|| {
                format!(
                    "fromId is {}, which is the id of no entry before it, but pi {} writes the leaf the branch was made from (or \"root\")",
                    self.name(from),
                    self.pi.release()
                )
            });
        }
        let expected = match &e.parent {
            Key::Null => "\"root\"".to_string(),
            parent if parent == from => return None,
            parent => self.name(parent),
        };
        Some(format!(
            "fromId is {} but pi {} writes {expected} (its parentId, or \"root\" without a parent)",
            self.name(from),
            self.pi.release()
        ))
    }
}

fn decrement<K: std::hash::Hash + Eq + Copy>(map: &mut FxHashMap<K, u32>, key: &K) {
    if let Some(n) = map.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            map.remove(key);
        }
    }
}
