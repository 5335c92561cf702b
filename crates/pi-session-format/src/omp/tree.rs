//! omp's `getTree()` (`SessionEntryIndex.tree` in `session-manager.ts`), written as the
//! corpus's tree output: `[{"id","type","label"?,"children":[…]}]`.
//!
//! Where it differs from pi's ([`crate::tree`]):
//!
//! - a node is a root when its `parentId` is `null` or its own id, or names no entry; an
//!   entry whose `parentId` is missing (not `null`) hangs under the entry without an id, if
//!   there is one (a `Map` lookup of `undefined`);
//! - entries that share an id share one node, the last one's: it is attached once per entry,
//!   so it can appear at several places (with its whole subtree);
//! - children are sorted by `new Date(timestamp).getTime()` (V8's sort here: omp runs on Bun,
//!   whose sort agrees whenever the timestamps are valid).
//!
//! omp loops forever when shared ids close a cycle among the nodes reachable from a root, and
//! its output doubles with every level of shared ids: [`OmpTreeError`] refuses both instead.

use crate::date;
use crate::json;
use crate::session::{Key, Session};
use crate::tree::sort::v8_sort;
use rustc_hash::FxHashMap;
use std::fmt;
use std::io::{self, Write};

/// Why omp's tree of a session is not written.
#[derive(Debug)]
#[non_exhaustive]
pub enum OmpTreeError {
    /// Shared ids close a cycle among the nodes reachable from a root: omp's `getTree()`
    /// never returns.
    Cycle {
        /// The line of an entry on the cycle.
        line: usize,
    },
    /// Shared ids place nodes at so many places that the output would be larger than the
    /// bound (omp writes it all).
    TooLarge {
        /// How many nodes omp's output would hold (saturating).
        nodes: u64,
    },
    /// Writing failed.
    Io(io::Error),
}

impl OmpTreeError {
    /// A stable name for the error, the same in every binding.
    pub fn code(&self) -> &'static str {
        match self {
            OmpTreeError::Cycle { .. } => "omp-tree-cycle",
            OmpTreeError::TooLarge { .. } => "omp-tree-too-large",
            OmpTreeError::Io(_) => "io",
        }
    }
}

impl fmt::Display for OmpTreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OmpTreeError::Cycle { line } => write!(
                f,
                "line {line}: entries that share an id form a parent cycle reachable from a root: omp's getTree() would loop forever here"
            ),
            OmpTreeError::TooLarge { nodes } => write!(
                f,
                "entries that share ids would repeat subtrees {nodes} times over in omp's tree; not written"
            ),
            OmpTreeError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for OmpTreeError {}

impl From<io::Error> for OmpTreeError {
    fn from(e: io::Error) -> Self {
        OmpTreeError::Io(e)
    }
}

/// omp's tree of `session` as JSON (followed by nothing), written to `out`.
pub fn write_json(session: &Session<'_>, out: &mut dyn Write) -> Result<(), OmpTreeError> {
    let links = links(session)?;
    let labels = session.index().labels(session);
    write_nodes(session, &links.roots, &links.children, labels, out)
}

/// omp's tree of `session` as the view the terminal drawing takes
/// ([`crate::tree::Tree::write_text`]): omp's roots and children, in its order, as record
/// indices (a node shared by entries of one id at each of their places).
pub fn view(session: &Session<'_>) -> Result<crate::tree::Tree, OmpTreeError> {
    let links = links(session)?;
    let entries = &session.entries;
    let roots = links.roots.iter().map(|&n| entries[n]).collect();
    let mut children = vec![Vec::new(); session.records.len()];
    for (n, list) in links.children.into_iter().enumerate() {
        children[entries[n]] = list.into_iter().map(|c| entries[c]).collect();
    }
    Ok(crate::tree::Tree::from_links(roots, children))
}

/// omp's roots and each node's children, sorted, as indices into `session.entries`.
struct Links {
    roots: Vec<usize>,
    children: Vec<Vec<usize>>,
}

/// Links and sorts the nodes as omp's `getTree()` does, refusing what omp never finishes.
fn links(session: &Session<'_>) -> Result<Links, OmpTreeError> {
    let records = &session.records;
    let entries = &session.entries;
    // `nodes`: id → the node of the last entry with that id (objects and arrays are their
    // own keys, never found again).
    let mut node_of: FxHashMap<&Key, usize> = FxHashMap::default();
    for (n, &r) in entries.iter().enumerate() {
        if !matches!(records[r].id, Key::Unique(_)) {
            node_of.insert(&records[r].id, n);
        }
    }
    let node = |n: usize| node_of.get(&records[entries[n]].id).copied().unwrap_or(n);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); entries.len()];
    let mut roots = Vec::new();
    for n in 0..entries.len() {
        let record = &records[entries[n]];
        let this = node(n);
        let parent = &record.parent_id;
        let own = !matches!(parent, Key::Unique(_)) && *parent == record.id;
        if *parent == Key::Null || own {
            roots.push(this);
            continue;
        }
        match node_of.get(parent) {
            Some(&p) if !matches!(parent, Key::Unique(_)) => children[p].push(this),
            _ => roots.push(this),
        }
    }
    check_bounded(session, &roots, &children)?;
    // Timestamps of the nodes that have siblings (only those are compared).
    let mut time = vec![f64::NAN; entries.len()];
    for list in children.iter().filter(|l| l.len() > 1) {
        for &n in list {
            time[n] = date::new_date_time(records[entries[n]].value().get("timestamp"));
        }
    }
    for list in &mut children {
        v8_sort(list, |a, b| time[*a] - time[*b]);
    }
    Ok(Links { roots, children })
}

/// Refuses a cycle reachable from a root, and an output of more than 8 times the entries
/// plus 65,536 nodes.
fn check_bounded(
    session: &Session<'_>,
    roots: &[usize],
    children: &[Vec<usize>],
) -> Result<(), OmpTreeError> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Done,
    }
    let n = children.len();
    let mut state = vec![State::New; n];
    // Nodes each node's subtree writes, itself included (saturating).
    let mut size = vec![0u64; n];
    for &root in roots {
        if state[root] != State::New {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = State::Open;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&child) = children[node].get(*next) {
                *next += 1;
                match state[child] {
                    State::Open => {
                        let line = session.records[session.entries[child]].line;
                        return Err(OmpTreeError::Cycle { line });
                    }
                    State::New => {
                        state[child] = State::Open;
                        stack.push((child, 0));
                    }
                    State::Done => {}
                }
            } else {
                size[node] = children[node]
                    .iter()
                    .fold(1u64, |total, &c| total.saturating_add(size[c]));
                state[node] = State::Done;
                stack.pop();
            }
        }
    }
    let nodes = roots
        .iter()
        .fold(0u64, |total, &r| total.saturating_add(size[r]));
    let bound = 8 * n as u64 + 65_536;
    if nodes > bound {
        return Err(OmpTreeError::TooLarge { nodes });
    }
    Ok(())
}

/// Writes `"key":value,` (`value` already JSON).
fn member(buf: &mut Vec<u8>, key: &str, value: &[u8]) {
    json::write_string(buf, key.as_bytes());
    buf.push(b':');
    buf.extend_from_slice(value);
    buf.push(b',');
}

/// One item of the writing stack.
enum Item {
    Node(usize),
    Text(&'static [u8]),
}

/// `treeJson(roots)`: each node `{"id","type","label"?,"children":[…]}`, members that are
/// `undefined` left out, iteratively.
fn write_nodes(
    session: &Session<'_>,
    roots: &[usize],
    children: &[Vec<usize>],
    labels: &std::collections::HashMap<Key, crate::session::index::Label>,
    out: &mut dyn Write,
) -> Result<(), OmpTreeError> {
    let records = &session.records;
    let mut buf = Vec::with_capacity(1 << 16);
    let mut stack = Vec::new();
    let push_list = |stack: &mut Vec<Item>, list: &[usize]| {
        stack.push(Item::Text(b"]"));
        for (i, &n) in list.iter().enumerate().rev() {
            stack.push(Item::Node(n));
            if i > 0 {
                stack.push(Item::Text(b","));
            }
        }
        stack.push(Item::Text(b"["));
    };
    push_list(&mut stack, roots);
    while let Some(item) = stack.pop() {
        let n = match item {
            Item::Text(text) => {
                buf.extend_from_slice(text);
                continue;
            }
            Item::Node(n) => n,
        };
        let record = &records[session.entries[n]];
        buf.push(b'{');
        // `id` and `type` from the skeleton; the entry is parsed only for an object or array
        // id, or a `type` that is not a string.
        let parsed = || record.value();
        match record.id.to_json() {
            Some(id) => member(&mut buf, "id", id.as_bytes()),
            None if matches!(record.id, Key::Unique(_)) => {
                if let Some(id) = parsed().get("id") {
                    member(&mut buf, "id", &json::to_string(id).into_bytes());
                }
            }
            None => {}
        }
        match record.entry_type() {
            Some(t) => {
                let mut quoted = Vec::new();
                json::write_string(&mut quoted, t.as_bytes());
                member(&mut buf, "type", &quoted);
            }
            None => {
                if let Some(t) = parsed().get("type") {
                    member(&mut buf, "type", &json::to_string(t).into_bytes());
                }
            }
        }
        if !matches!(record.id, Key::Unique(_))
            && let Some(label) = labels.get(&record.id)
        {
            member(
                &mut buf,
                "label",
                &json::to_string(&label.label).into_bytes(),
            );
        }
        buf.extend_from_slice(b"\"children\":");
        stack.push(Item::Text(b"}"));
        push_list(&mut stack, &children[n]);
        if buf.len() > 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    Ok(())
}
