//! The `tree` fuzz target's check: on any input, `getTree()` ([`pi_session_format::tree::Tree`])
//! terminates without a panic, writes valid JSON bounded by the size of the input, and is
//! exactly pi's output whenever it says so ([`Form::Pi`]), compared with a literal model of
//! pi's `getTree()` and of the reference's serialiser (shared node objects, the sort loop run
//! once per place of a node, every place written in full), run under a step limit.

use super::{PIS, load};
use pi_session_format::PiVersion;
use pi_session_format::date;
use pi_session_format::json::{self, JsValue};
use pi_session_format::session::{Key, Session};
use pi_session_format::tree::v8_sort;
use pi_session_format::tree::{Form, Index, PI_FORM_SLACK, Tree, Why};
use std::collections::HashMap;

/// The model gives up after this many output bytes (pi's output is then too large to
/// compare, or endless): more than the library's bound allows for the fuzzers' inputs.
const MODEL_LIMIT: usize = 2 << 20;
/// … or this many node visits in the sort loop (a node costs at least 15 bytes of output).
const MODEL_STEPS: usize = MODEL_LIMIT / 4;

/// Loads `data` with both pi versions' rules and checks the tree of what loads.
pub fn tree(data: &[u8]) {
    for pi in PIS {
        check(data, pi);
    }
}

fn check(data: &[u8], pi: PiVersion) {
    let Ok(session) = load(data, pi) else {
        return;
    };
    let index = Index::build(&session);
    let tree = Tree::build(&session, &index);
    let mut out = Vec::new();
    tree.write_json(&session, &index, &mut out);
    let bound = 64 * data.len() as u64 + PI_FORM_SLACK + 64;
    assert!(
        out.len() as u64 <= bound,
        "{pi:?}: {} bytes of tree for {} bytes of input ({:?})",
        out.len(),
        data.len(),
        tree.form()
    );
    let text = std::str::from_utf8(&out).expect("the tree is UTF-8");
    let value = json::parse(text).expect("the tree is JSON");
    let written = count_nodes(&value);
    let model = Model::build(&session, &index);
    match model.write(&session, &index) {
        Some(expected) => match tree.form() {
            Form::Pi => assert!(
                out == expected,
                "{pi:?}: the tree differs from pi's\n ours: {text}\n   pi: {}",
                String::from_utf8_lossy(&expected)
            ),
            Form::Once(Why::Size(bytes)) => {
                assert_eq!(bytes, expected.len() as u64, "{pi:?}: pi's size");
                assert!(
                    bytes > PI_FORM_SLACK,
                    "{pi:?}: pi's output of {bytes} bytes is small, yet not written"
                );
            }
            Form::Once(Why::Cycle) => panic!("{pi:?}: a cycle, yet pi's getTree returns"),
        },
        None => assert!(
            tree.form() != Form::Pi || out.len() > MODEL_LIMIT,
            "{pi:?}: pi's getTree does not return, yet the tree claims to be pi's"
        ),
    }
    if matches!(tree.form(), Form::Once(_)) {
        assert_eq!(
            written,
            model.reachable(),
            "{pi:?}: each node reachable from a root is written once"
        );
    }
}

/// The nodes of a tree written as `[{…,"children":[…]}]`, counted without recursion.
fn count_nodes(value: &JsValue) -> usize {
    let mut count = 0;
    let mut lists = vec![value];
    while let Some(list) = lists.pop() {
        let JsValue::Array(items) = list else {
            panic!("a child list is not an array: {}", json::to_string(list));
        };
        for item in &items.0 {
            let children = item.get("children").expect("every node has children");
            count += 1;
            lists.push(children);
        }
    }
    count
}

/// pi's `getTree()` as written: a node object per entry, the last per id kept in `nodeMap`.
struct Model {
    /// `(entry record, children)` per node object.
    nodes: Vec<(usize, Vec<usize>)>,
    roots: Vec<usize>,
    /// Whether the sort loop finished within the limit.
    sorted: bool,
}

impl Model {
    fn build(session: &Session<'_>, _index: &Index) -> Model {
        let records = &session.records;
        let mut nodes: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut node_map: HashMap<&Key, usize> = HashMap::new();
        for &i in &session.entries {
            node_map.insert(&records[i].id, nodes.len());
            nodes.push((i, Vec::new()));
        }
        let mut roots = Vec::new();
        for &i in &session.entries {
            let r = &records[i];
            let node = node_map[&r.id];
            if r.parent_id == Key::Null || r.parent_id == r.id {
                roots.push(node);
            } else if let Some(&parent) = node_map.get(&r.parent_id) {
                nodes[parent].1.push(node);
            } else {
                roots.push(node);
            }
        }
        // `const stack = [...roots]; while (…) { node.children.sort(…); stack.push(…) }`
        let times: Vec<f64> = nodes
            .iter()
            .map(|&(i, _)| date::new_date_time(records[i].value().get("timestamp")))
            .collect();
        let mut stack = roots.clone();
        let mut steps = 0;
        let mut sorted = true;
        while let Some(node) = stack.pop() {
            steps += 1 + nodes[node].1.len();
            if steps > MODEL_STEPS {
                sorted = false;
                break;
            }
            let children = &mut nodes[node].1;
            v8_sort(children, |&a, &b| times[a] - times[b]);
            stack.extend(children.iter().copied());
        }
        Model {
            nodes,
            roots,
            sorted,
        }
    }

    /// The reference's serialisation of the roots, or `None` past the limit.
    fn write(&self, session: &Session<'_>, index: &Index) -> Option<Vec<u8>> {
        if !self.sorted {
            return None;
        }
        let labels = index.labels(session);
        enum Item {
            Text(&'static [u8]),
            Node(usize),
        }
        let mut out = Vec::new();
        let mut heads: Vec<Option<Vec<u8>>> = vec![None; self.nodes.len()];
        let mut stack = Vec::new();
        let push_list = |stack: &mut Vec<Item>, list: &[usize]| {
            stack.push(Item::Text(b"]"));
            for (k, &node) in list.iter().enumerate().rev() {
                stack.push(Item::Node(node));
                if k > 0 {
                    stack.push(Item::Text(b","));
                }
            }
            stack.push(Item::Text(b"["));
        };
        push_list(&mut stack, &self.roots);
        while let Some(item) = stack.pop() {
            if out.len() > MODEL_LIMIT {
                return None;
            }
            let node = match item {
                Item::Text(t) => {
                    out.extend_from_slice(t);
                    continue;
                }
                Item::Node(node) => node,
            };
            let (entry, children) = &self.nodes[node];
            // A node's members, parsed from its line once.
            let head = heads[node].get_or_insert_with(|| {
                let record = &session.records[*entry];
                let value = record.value();
                let mut members: Vec<(&str, JsValue)> = Vec::new();
                if let Some(id) = value.get("id") {
                    members.push(("id", id.clone()));
                }
                if let Some(t) = value.get("type") {
                    members.push(("type", t.clone()));
                }
                if let Some(label) = labels.get(&record.id) {
                    members.push(("label", label.label.clone()));
                }
                let mut head = b"{".to_vec();
                for (name, v) in members {
                    head.extend_from_slice(format!("\"{name}\":").as_bytes());
                    json::write_value(&mut head, &v);
                    head.push(b',');
                }
                head.extend_from_slice(b"\"children\":");
                head
            });
            out.extend_from_slice(head);
            stack.push(Item::Text(b"}"));
            push_list(&mut stack, children);
        }
        Some(out)
    }

    /// How many distinct node objects are reachable from the roots.
    fn reachable(&self) -> usize {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = self.roots.clone();
        let mut count = 0;
        while let Some(node) = stack.pop() {
            if std::mem::replace(&mut seen[node], true) {
                continue;
            }
            count += 1;
            stack.extend(self.nodes[node].1.iter().copied());
        }
        count
    }
}
