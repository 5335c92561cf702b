//! `getTree()` (section 11 of the spec): one node per id, each entry linked under the node
//! its `parentId` names through `byId` (last wins), roots in file order, children sorted by
//! timestamp with V8's sort, written as `[{"id","type","label"?,"children":[…]}]`.
//!
//! Everything is flat and iterative: the child lists are one array indexed by record, the
//! JSON is written straight to the output with an explicit stack, so a chain of millions of
//! entries costs linear time and no recursion.
//!
//! pi's nodes are shared objects: duplicate ids link the same node under several parents (or
//! twice under one), and pi's output repeats the node's whole subtree at every place, which
//! doubles with every level of duplicates and never ends when the links form a cycle (pi's
//! sort loop then runs until memory is gone). We write pi's output exactly ([`Form::Pi`])
//! when it is finite and at most [`PI_FORM_FACTOR`] times the size of the tree with each
//! node once, plus [`PI_FORM_SLACK`] bytes; otherwise ([`Form::Once`]) every node reachable
//! from a root is written once, at its first place in depth-first order, and its later
//! places are left out. Either way the output is bounded by the size of the file.

use super::sort::v8_sort;
use super::{Index, Label};
use crate::date;
use crate::json::{self, write_number, write_string};
use crate::session::{Key, Kind, Session};
use rayon::prelude::*;
use std::collections::HashMap;

/// [`Form::Pi`] is chosen while pi's output is at most this many times the size of the tree
/// with each node once…
pub const PI_FORM_FACTOR: u64 = 8;
/// … plus this many bytes (so small files with duplicate ids are always exact).
pub const PI_FORM_SLACK: u64 = 64 << 10;

/// No parent: the entry is a root (or, as a stack frame, the list of roots).
const ROOT: usize = usize::MAX;

/// How the tree is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Exactly pi's output: every place of a shared node is written in full.
    Pi,
    /// Each node once, at its first place; pi's output would be too large or never ends.
    Once(Why),
}

/// Why a tree is written in [`Form::Once`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Duplicate ids link a node below itself: pi's `getTree()` never returns.
    Cycle,
    /// pi's JSON would have this many bytes (saturating; its output adds a newline), over
    /// the bound.
    Size(u64),
}

/// The `getTree()` of a session, ready to be written (see the module docs).
#[derive(Debug)]
pub struct Tree {
    /// The root nodes (record indices), in pi's order; a node may repeat.
    roots: Vec<usize>,
    /// `children[start[n]..start[n + 1]]` are the children of record `n`, sorted.
    start: Vec<usize>,
    children: Vec<usize>,
    form: Form,
    /// The first entry whose id a later entry reuses: `(line, id)`.
    first_duplicate: Option<(usize, Key)>,
}

impl Tree {
    /// Links and sorts the nodes of `session` as `getTree()` does, and chooses the [`Form`].
    pub fn build(session: &Session<'_>, index: &Index) -> Tree {
        let records = &session.records;
        // Without duplicate ids every entry is its own node.
        let unique_ids = index.by_id.len() == session.entries.len();
        // For each entry, in file order: its node (the entry of its id that `byId` keeps)
        // and the node it is pushed under. A truthy `parentId` was looked up already
        // (`Index::parents`); a falsy one other than `null` is a key like any other here.
        let links: Vec<(usize, usize)> = session
            .entries
            .par_iter()
            .with_min_len(4096)
            .map(|&i| {
                let r = &records[i];
                let node = if unique_ids {
                    i
                } else {
                    index.get(session, &r.id).unwrap_or(i)
                };
                let parent = if r.parent_id == Key::Null || r.parent_id == r.id {
                    ROOT
                } else if r.parent_id.is_truthy() {
                    match index.parents[i] {
                        crate::session::index::NO_PARENT => ROOT,
                        parent => parent,
                    }
                } else {
                    index.get(session, &r.parent_id).unwrap_or(ROOT)
                };
                (node, parent)
            })
            .collect();
        let first_duplicate = session
            .entries
            .iter()
            .zip(&links)
            .find(|&(&i, &(node, _))| node != i)
            .map(|(&i, _)| (records[i].line, records[i].id.clone()));
        // Child lists, in file order, as one array (a counting sort by parent).
        let mut start = vec![0usize; records.len() + 1];
        for &(_, parent) in &links {
            if parent != ROOT {
                start[parent + 1] += 1;
            }
        }
        for n in 0..records.len() {
            start[n + 1] += start[n];
        }
        let mut fill = start.clone();
        let mut children = vec![0usize; start[records.len()]];
        let mut roots = Vec::new();
        for &(node, parent) in &links {
            if parent == ROOT {
                roots.push(node);
            } else {
                children[fill[parent]] = node;
                fill[parent] += 1;
            }
        }
        drop(fill);
        drop(links);
        let mut tree = Tree {
            roots,
            start,
            children,
            form: Form::Pi,
            first_duplicate,
        };
        // Without duplicate ids every node has one place, so pi's output is the only form
        // and its sort runs once per node; otherwise count the places.
        let places = if tree.first_duplicate.is_some() {
            let (form, places) = tree.choose_form(session, index);
            tree.form = form;
            places
        } else {
            None
        };
        tree.sort_children(session, places.as_deref());
        tree
    }

    /// How [`Tree::write_json`] writes the tree.
    pub fn form(&self) -> Form {
        self.form
    }

    /// The first entry whose id a later entry reuses (`byId` keeps the later one), as
    /// `(line, id)`.
    pub fn first_duplicate(&self) -> Option<&(usize, Key)> {
        self.first_duplicate.as_ref()
    }

    /// A tree of given links, in their order: `roots` and each record's `children` (record
    /// indices; a node may repeat), as another program links them (omp's `getTree()`,
    /// [`crate::omp::tree::view`]), to be drawn ([`Tree::write_text`]).
    pub(crate) fn from_links(roots: Vec<usize>, children: Vec<Vec<usize>>) -> Tree {
        let mut start = Vec::with_capacity(children.len() + 1);
        start.push(0);
        let mut flat = Vec::new();
        for list in children {
            flat.extend(list);
            start.push(flat.len());
        }
        Tree {
            roots,
            start,
            children: flat,
            form: Form::Pi,
            first_duplicate: None,
        }
    }

    /// The root nodes (record indices) in pi's order.
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// The children of node `record`, in pi's order.
    pub fn children(&self, record: usize) -> &[usize] {
        match (self.start.get(record), self.start.get(record + 1)) {
            (Some(&from), Some(&to)) => &self.children[from..to],
            _ => &[],
        }
    }

    /// Writes the tree as `[{"id":…,"type":…,"label":…,"children":[…]}]` (`id`, `type`
    /// and `label` only when defined), in the [`Form`] chosen, without recursion.
    pub fn write_json(&self, session: &Session<'_>, index: &Index, out: &mut Vec<u8>) {
        let labels = Some(index.labels(session)).filter(|l| !l.is_empty());
        let once = matches!(self.form, Form::Once(_));
        let mut written = if once {
            vec![false; session.records.len()]
        } else {
            Vec::new()
        };
        // Frames: a node whose children are being written (ROOT: the roots), and the
        // position of the next child.
        let mut stack: Vec<(usize, usize)> = vec![(ROOT, 0)];
        out.push(b'[');
        while let Some(&mut (node, ref mut at)) = stack.last_mut() {
            let list = if node == ROOT {
                &self.roots[..]
            } else {
                self.children(node)
            };
            let Some(&child) = list.get(*at) else {
                stack.pop();
                out.push(b']');
                if node != ROOT {
                    out.push(b'}');
                }
                continue;
            };
            *at += 1;
            if once {
                if written[child] {
                    continue;
                }
                written[child] = true;
            }
            if out.last() != Some(&b'[') {
                out.push(b',');
            }
            write_head(out, session, labels, child);
            stack.push((child, 0));
        }
    }

    /// Decides the form: counts how many places pi gives each node reachable from a root
    /// (`None` with [`Form::Once`]: a cycle, or too many bytes).
    fn choose_form(&self, session: &Session<'_>, index: &Index) -> (Form, Option<Vec<u64>>) {
        let n = session.records.len();
        // Depth-first from the roots: a child still on the stack is a cycle; the finishing
        // order, reversed, is a topological order of what is reachable.
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; n];
        let mut finished = Vec::new();
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for &root in &self.roots {
            if state[root] != NEW {
                if state[root] == OPEN {
                    return (Form::Once(Why::Cycle), None);
                }
                continue;
            }
            state[root] = OPEN;
            stack.push((root, 0));
            while let Some(&mut (node, ref mut at)) = stack.last_mut() {
                let Some(&child) = self.children(node).get(*at) else {
                    state[node] = DONE;
                    finished.push(node);
                    stack.pop();
                    continue;
                };
                *at += 1;
                match state[child] {
                    NEW => {
                        state[child] = OPEN;
                        stack.push((child, 0));
                    }
                    OPEN => return (Form::Once(Why::Cycle), None),
                    _ => {}
                }
            }
        }
        drop(state);
        let mut places = vec![0u64; n];
        for &root in &self.roots {
            places[root] += 1;
        }
        for &node in finished.iter().rev() {
            let count = places[node];
            for &child in self.children(node) {
                places[child] = places[child].saturating_add(count);
            }
        }
        let labels = Some(index.labels(session)).filter(|l| !l.is_empty());
        // `[`, `]` and the commas between roots; for each place of a node, its head, `]}`
        // and the commas between its children.
        let mut pi = 2 + (self.roots.len() as u64).saturating_sub(1);
        let mut once = pi;
        let mut head = Vec::new();
        for &node in &finished {
            head.clear();
            write_head(&mut head, session, labels, node);
            let commas = (self.children(node).len() as u64).saturating_sub(1);
            let size = head.len() as u64 + 2 + commas;
            once = once.saturating_add(size + 1);
            pi = pi.saturating_add(places[node].saturating_mul(size));
        }
        if pi
            <= once
                .saturating_mul(PI_FORM_FACTOR)
                .saturating_add(PI_FORM_SLACK)
        {
            (Form::Pi, Some(places))
        } else {
            (Form::Once(Why::Size(pi)), None)
        }
    }

    /// Sorts every child list by timestamp as pi does: once per place of the node in pi's
    /// sort loop (`places`; once each when `None`), which matters only when the comparator
    /// is inconsistent (invalid timestamps), and stops as soon as a sort changes nothing.
    fn sort_children(&mut self, session: &Session<'_>, places: Option<&[u64]>) {
        let records = &session.records;
        let time = |i: usize| date::new_date_time(records[i].value().get("timestamp"));
        let mut keyed: Vec<(f64, usize)> = Vec::new();
        let mut before: Vec<usize> = Vec::new();
        for node in 0..records.len() {
            let (from, to) = (self.start[node], self.start[node + 1]);
            if to - from < 2 {
                continue;
            }
            let rounds = places.map_or(1, |p| p[node]);
            if rounds == 0 {
                // pi never reaches this node.
                continue;
            }
            let list = &mut self.children[from..to];
            keyed.clear();
            keyed.extend(list.iter().map(|&c| (time(c), c)));
            for round in 0..rounds {
                if round > 0 {
                    before.clear();
                    before.extend(keyed.iter().map(|&(_, c)| c));
                }
                v8_sort(&mut keyed, |a, b| a.0 - b.0);
                if round > 0 && keyed.iter().map(|&(_, c)| c).eq(before.iter().copied()) {
                    break;
                }
            }
            for (slot, &(_, c)) in list.iter_mut().zip(&keyed) {
                *slot = c;
            }
        }
    }
}

/// Writes `{"id":…,"type":…,"label":…,"children":[` for node `record`, members whose value
/// is `undefined` left out as `JSON.stringify` does.
fn write_head(
    out: &mut Vec<u8>,
    session: &Session<'_>,
    labels: Option<&HashMap<Key, Label>>,
    record: usize,
) {
    let r = &session.records[record];
    out.push(b'{');
    let member = |out: &mut Vec<u8>, name: &[u8]| {
        if out.last() != Some(&b'{') {
            out.push(b',');
        }
        out.extend_from_slice(name);
    };
    let known_type = match &r.kind {
        Kind::Entry { type_: Some(t) } => Some(&**t),
        Kind::Header => Some("session"),
        _ => None,
    };
    match known_type {
        // The skeleton has both: no need to parse the line.
        Some(type_) if !matches!(r.id, Key::Unique(_)) => {
            match &r.id {
                Key::Undefined => {}
                Key::Null => member(out, b"\"id\":null"),
                Key::Bool(b) => member(out, if *b { b"\"id\":true" } else { b"\"id\":false" }),
                Key::Number(bits) => {
                    member(out, b"\"id\":");
                    write_number(out, f64::from_bits(*bits));
                }
                Key::String(s) => {
                    member(out, b"\"id\":");
                    write_string(out, s);
                }
                Key::Unique(_) => {}
            }
            member(out, b"\"type\":");
            write_string(out, type_.as_bytes());
        }
        _ => {
            let value = r.value();
            if let Some(id) = value.get("id") {
                member(out, b"\"id\":");
                json::write_value(out, id);
            }
            if let Some(t) = value.get("type") {
                member(out, b"\"type\":");
                json::write_value(out, t);
            }
        }
    }
    if let Some(label) = labels.and_then(|l| l.get(&r.id)) {
        member(out, b"\"label\":");
        json::write_value(out, &label.label);
    }
    member(out, b"\"children\":[");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::SequentialIds;
    use crate::session::LoadOptions;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

    fn tree_of(text: &str) -> (String, Form) {
        let text = format!("{HEADER}\n{text}");
        let s = Session::load_with(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi: crate::PiVersion::V0_73,
                dialect: crate::Dialect::Pi,
            },
        )
        .unwrap();
        let index = Index::build(&s);
        let tree = Tree::build(&s, &index);
        let mut out = Vec::new();
        tree.write_json(&s, &index, &mut out);
        (String::from_utf8(out).unwrap(), tree.form())
    }

    /// Two entries per id on every level, each child under one of them: pi's output
    /// doubles with every level.
    fn dag(levels: usize) -> String {
        let mut text = String::new();
        for level in 0..levels {
            for copy in 0..2 {
                let parent = match level {
                    0 => "null".to_owned(),
                    _ => format!("\"n{}\"", level - 1),
                };
                text.push_str(&format!(
                    "{{\"type\":\"message\",\"id\":\"n{level}\",\"parentId\":{parent},\"copy\":{copy}}}\n"
                ));
            }
        }
        text
    }

    #[test]
    fn tree_roots_children_and_cycles() {
        let (text, form) = tree_of(concat!(
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00Z"}"#,
            "\n",
            r#"{"type":"message","id":"c","parentId":"a","timestamp":"2025-01-01T00:00:02Z"}"#,
            "\n",
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:01Z"}"#,
            "\n",
            r#"{"type":"message","id":"x","parentId":"y"}"#,
            "\n",
            r#"{"type":"message","id":"y","parentId":"x"}"#,
            "\n",
            r#"{"type":"message","id":"s","parentId":"s"}"#,
        ));
        assert_eq!(form, Form::Pi);
        assert_eq!(
            text,
            r#"[{"id":"a","type":"message","children":[{"id":"b","type":"message","children":[]},{"id":"c","type":"message","children":[]}]},{"id":"s","type":"message","children":[]}]"#
        );
    }

    #[test]
    fn odd_ids_and_types_are_written_as_pi_writes_them() {
        let (text, _) = tree_of(concat!(
            r#"{"type":"message","id":1e20,"parentId":null}"#,
            "\n",
            r#"{"type":7,"id":{"o":1},"parentId":null}"#,
            "\n",
            r#"{"type":"x\u0001\ud800","id":"q\"\\","parentId":null}"#,
            "\n",
            r#"{"type":"label","id":"l","parentId":null,"targetId":"q\"\\","label":{"b":[1]}}"#,
            "\n",
            "42\n",
        ));
        assert_eq!(
            text,
            r#"[{"id":100000000000000000000,"type":"message","children":[]},{"id":{"o":1},"type":7,"children":[]},{"id":"q\"\\","type":"x\u0001\ud800","label":{"b":[1]},"children":[]},{"id":"l","type":"label","children":[]},{"children":[]}]"#
        );
    }

    #[test]
    fn a_duplicated_node_is_repeated_as_pi_repeats_it_while_small() {
        let (text, form) = tree_of(&dag(3));
        assert_eq!(form, Form::Pi);
        let leaf = r#"{"id":"n2","type":"message","children":[]}"#;
        let mid = format!(r#"{{"id":"n1","type":"message","children":[{leaf},{leaf}]}}"#);
        let root = format!(r#"{{"id":"n0","type":"message","children":[{mid},{mid}]}}"#);
        assert_eq!(text, format!("[{root},{root}]"));
    }

    #[test]
    fn an_exponential_duplicate_id_dag_is_written_once_per_node() {
        let (text, form) = tree_of(&dag(24));
        assert!(
            matches!(form, Form::Once(Why::Size(n)) if n > 1 << 30),
            "{form:?}"
        );
        let mut expected = r#"{"id":"n23","type":"message","children":[]}"#.to_owned();
        for level in (0..23).rev() {
            expected = format!(r#"{{"id":"n{level}","type":"message","children":[{expected}]}}"#);
        }
        assert_eq!(text, format!("[{expected}]"));
    }

    #[test]
    fn a_cycle_through_duplicate_ids_is_cut_where_a_node_repeats() {
        let (text, form) = tree_of(concat!(
            r#"{"type":"custom","id":"a","parentId":null}"#,
            "\n",
            r#"{"type":"custom","id":"b","parentId":"a"}"#,
            "\n",
            r#"{"type":"custom","id":"a","parentId":"b"}"#,
        ));
        assert_eq!(form, Form::Once(Why::Cycle));
        assert_eq!(
            text,
            r#"[{"id":"a","type":"custom","children":[{"id":"b","type":"custom","children":[]}]}]"#
        );
    }

    #[test]
    fn a_deep_chain_is_written_without_recursion() {
        let mut text = String::from("{\"type\":\"message\",\"id\":\"e0\",\"parentId\":null}\n");
        for i in 1..200_000 {
            text.push_str(&format!(
                "{{\"type\":\"message\",\"id\":\"e{i}\",\"parentId\":\"e{}\"}}\n",
                i - 1
            ));
        }
        let (out, form) = tree_of(&text);
        assert_eq!(form, Form::Pi);
        assert!(out.starts_with(r#"[{"id":"e0","type":"message","children":[{"id":"e1""#));
        assert!(out.ends_with(&format!("{}]", "]}".repeat(200_000))));
    }
}
