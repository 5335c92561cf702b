//! The conformance corpus of the pi session format and the runner that checks an
//! implementation against it, in the manner of toml-test.
//!
//! - [`corpus`]: reading the cases (`conformance/cases/<area>/<name>/`) and their rules;
//! - [`embedded`]: the corpus shipped inside the crate, its manifest and its extraction;
//! - [`protocol`]: running one operation of an implementation: the operation and its
//!   arguments on the command line, the session on stdin, the output on stdout;
//! - [`diff`]: showing where an output differs from the expected one, byte by byte;
//! - [`level`]: the levels a reader's output reaches (exact, equivalent, structural) and its
//!   differences as JSON paths;
//! - [`run`]: running a whole corpus and summarising;
//! - [`junit`]: a run as JUnit XML, for CI systems;
//! - [`script`]: writer scripts (`conformance/writers/`), run through our `SessionWriter`;
//! - [`writers`]: the writer scenarios and the exact / renamed / equivalent / loadable levels;
//! - [`renamed`]: the writer level "exact up to ids and times", for writers without hooks.
//!
//! The format of a case is documented in `conformance/FORMAT.md`, the protocol in
//! `conformance/README.md`.

pub mod corpus;
pub mod diff;
pub mod embedded;
pub mod junit;
pub mod level;
pub mod protocol;
pub mod renamed;
pub mod run;
pub mod script;
pub mod writers;
