//! The entry tree: index, leaf, path walk, children, labels, session name and tree view
//! (rules L1–L4, C1–C3, sections 10 and 11 of the spec).
//!
//! Everything here works on the skeleton of each record (`type`, `id`, `parentId`); only
//! label and `session_info` entries are parsed. Walks are iterative and detect parent
//! cycles, where pi loops forever. `getTree()` is [`view`] (its V8 sort is `tree/sort.rs`).

pub(crate) mod sort;
pub mod text;
pub mod view;

pub use sort::v8_sort;
pub use text::TextOptions;
pub use view::{Form, PI_FORM_FACTOR, PI_FORM_SLACK, Tree, Why};

pub use crate::session::index::{CycleError, Index, Label, Leaf, session_name};
