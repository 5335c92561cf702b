//! oh-my-pi (`omp`, `@oh-my-pi/pi-coding-agent` 18.3.4): what omp does with a session file
//! where it differs from pi, with omp's own code as the reference (`conformance/reference/omp`).
//!
//! - [`slot`]: the fixed-width title slot on a file's first line;
//! - [`context`]: omp's `buildSessionContext`, what it sends to the model on resume;
//! - [`tree`]: omp's `getTree()`;
//! - [`stats`]: omp's `getSessionStats()`, the numbers of `/session`;
//! - [`info`]: omp's listing entry (`scanSessionFile`), read from two windows of the file;
//! - [`list`]: the order of omp's session list, pinned sessions first;
//! - [`blobs`]: images kept in omp's blob store, put back as omp does on open;
//! - [`persist`]: what an entry becomes in a line omp writes (`prepareEntryForPersistence`);
//! - [`rewrite`]: whether omp rewrites a file when it opens it, why, and what it writes.
//!
//! A session is read in omp's dialect by loading it with [`crate::Dialect::Omp`]
//! ([`crate::session::Loader::dialect`]); [`crate::Session::omp_context`] then answers as omp.
//! `docs/dialects.md` lists every difference with the corpus case that pins it.

pub mod blobs;
pub mod context;
pub mod info;
pub mod list;
pub mod persist;
pub mod rewrite;
pub mod slot;
pub mod stats;
pub mod tree;

pub use blobs::Blobs;
pub use context::{OmpContext, OmpContextError};
pub use slot::{SlotFault, TitleSlot};
pub use stats::OmpStats;
pub use tree::OmpTreeError;
