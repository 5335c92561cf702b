//! The entry tree: index, leaf, path walk, children, labels, session name and tree view
//! (rules L1–L4, C1–C3, sections 10 and 11 of the spec).
//!
//! Everything here works on the skeleton of each record (`type`, `id`, `parentId`); only
//! label and `session_info` entries are parsed. Walks are iterative and detect parent
//! cycles, where pi loops forever. `getTree()` is [`view`] (its V8 sort is `tree/sort.rs`).

mod sort;
pub mod text;
pub mod view;

pub use sort::v8_sort;
pub use text::TextOptions;
pub use view::{Form, PI_FORM_FACTOR, PI_FORM_SLACK, Tree, Why};

pub use crate::session::index::{CycleError, Index, Label, Leaf, session_name};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrate::SequentialIds;
    use crate::session::LoadOptions;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;

    fn with(lines: &[&str], f: impl FnOnce(&Session<'_>, &Index)) {
        let text = std::iter::once(HEADER)
            .chain(lines.iter().copied())
            .collect::<Vec<_>>()
            .join("\n");
        let s = Session::load_with(
            text.as_bytes(),
            LoadOptions {
                ids: &mut SequentialIds::default(),
                pi: crate::PiVersion::V0_73,
            },
        )
        .unwrap();
        let index = Index::build(&s);
        f(&s, &index);
    }

    fn ids(s: &Session<'_>, records: &[usize]) -> Vec<String> {
        records.iter().map(|&i| s.records[i].id.display()).collect()
    }

    #[test]
    fn l2_duplicate_ids_last_wins_and_leaf_is_last_entry() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"message","id":"b","parentId":"a"}"#,
                r#"{"type":"message","id":"a","parentId":null,"x":2}"#,
            ],
            |s, index| {
                assert_eq!(index.get(s, &Key::string("a")), Some(3));
                assert_eq!(index.leaf, Key::string("a"));
                let leaf = index.leaf_record(s, &Leaf::Current).unwrap();
                assert_eq!(leaf, 3);
            },
        );
    }

    #[test]
    fn c2_unknown_leaf_falls_back_to_last_entry_and_null_leaf_is_empty() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"message","id":null}"#,
            ],
            |s, index| {
                assert_eq!(index.leaf_record(s, &Leaf::Current), None);
                assert_eq!(index.leaf_record(s, &Leaf::Id("nope".into())), Some(2));
                assert_eq!(index.leaf_record(s, &Leaf::Id("a".into())), Some(1));
            },
        );
    }

    #[test]
    fn c3_path_stops_at_orphans_and_detects_cycles() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":"missing"}"#,
                r#"{"type":"message","id":"b","parentId":"a"}"#,
                r#"{"type":"message","id":"c","parentId":"d"}"#,
                r#"{"type":"message","id":"d","parentId":"c"}"#,
                r#"{"type":"message","id":"e","parentId":"e"}"#,
            ],
            |s, index| {
                assert_eq!(ids(s, &index.path(s, 2).unwrap()), ["\"a\"", "\"b\""]);
                let err = index.path(s, 4).unwrap_err();
                assert_eq!(err.cycle.len(), 2);
                assert!(index.path(s, 5).is_err());
            },
        );
    }

    #[test]
    fn l3_labels_are_global_and_falsy_clears() {
        with(
            &[
                r#"{"type":"message","id":"a","parentId":null}"#,
                r#"{"type":"label","id":"l1","parentId":"a","targetId":"a","label":"one"}"#,
                r#"{"type":"label","id":"l2","parentId":"l1","targetId":"a","label":"two"}"#,
                r#"{"type":"label","id":"l3","parentId":"l2","targetId":"x","label":42}"#,
                r#"{"type":"label","id":"l4","parentId":"l3","targetId":"x","label":""}"#,
            ],
            |s, index| {
                let labels = index.labels(s);
                assert_eq!(labels[&Key::string("a")].label.as_str(), Some("two"));
                assert!(!labels.contains_key(&Key::string("x")));
            },
        );
    }

    #[test]
    fn session_name_latest_wins_trimmed_and_empty_clears() {
        with(
            &[r#"{"type":"session_info","id":"a","parentId":null,"name":"  x  "}"#],
            |s, _| {
                assert_eq!(session_name(s).as_deref(), Some("x"));
            },
        );
        with(
            &[
                r#"{"type":"session_info","id":"a","parentId":null,"name":"x"}"#,
                r#"{"type":"session_info","id":"b","parentId":"a","name":" "}"#,
            ],
            |s, _| assert_eq!(session_name(s), None),
        );
    }
}
