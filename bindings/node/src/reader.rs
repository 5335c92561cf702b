//! The drop-in for pi's reader: `loadEntriesFromFile(path)` and `buildSessionContext(entries,
//! leafId)` of `session-manager.js`, with the pi version as an option.
//!
//! - `loadEntriesFromFile`: the values pi's loop keeps (every value that parses, header
//!   first; 0.87.1 and later only the truthy ones) are the records of the library's loader,
//!   read without migrating them (`Loader::load_for_rewrite`: pi's function does not
//!   migrate). Their texts, joined into one JSON array, are handed to `JSON.parse`, so each
//!   value is what pi's own `JSON.parse(line)` makes of the line (`-0`, duplicate keys, lone
//!   surrogates and all). When the library refuses the file (no value, or a first value that
//!   is not a session header) pi returns `[]`, except for a `null` first value, on which pi
//!   0.73.1 throws a `TypeError` (`ERR_PI_TYPE_ERROR`, a `TypeError` in `index.js`).
//! - `buildSessionContext`: the library answers for a file, not for an array of values, so
//!   `index.js` writes the entries as JSONL after a version 3 header (`JSON.stringify`: the
//!   same values), and the session loaded from it answers `context` for the leaf: pi's
//!   `getEntries()` of that file are the entries given, and its leaf rules (C2) are those of
//!   `buildSessionContext`: an id found, else the last entry; `null` an empty context.

use crate::error::{self, Result, failure, guard_text};
use crate::session::text;
use napi_derive::napi;
use pi_session_format::json;
use pi_session_format::session::{HeaderProblem, Key};
use pi_session_format::{Leaf, LoadError, Session};
use pi_session_fs::input::Input;
use std::io::ErrorKind;
use std::path::Path;

/// pi's `loadEntriesFromFile(path)` as the JSON text of an array (`[]` for a missing file, an
/// empty one, or one without a session header, as pi).
#[napi(js_name = "loadEntriesJson")]
pub fn load_entries_json(path: String, pi: Option<String>) -> Result<String> {
    guard_text("the entries", || {
        let pi = crate::pi_version(pi.as_deref())?;
        let input = match Input::open(Path::new(&path)) {
            Ok(input) => input,
            // pi: `if (!existsSync(filePath)) return [];`
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok("[]".to_owned()),
            Err(e) => return Err(error::io_error(&e, &path)),
        };
        let migration = match Session::loader(pi).load_for_rewrite(input.bytes()) {
            Ok(migration) => migration,
            Err(LoadError::InvalidHeader {
                reason: HeaderProblem::Null,
                ..
            }) => {
                return Err(failure(
                    "type-error",
                    "Cannot read properties of null (reading 'type')",
                ));
            }
            Err(_) => return Ok("[]".to_owned()),
        };
        let session = migration.session();
        let size: usize = session.records.iter().map(|r| r.text().len() + 1).sum();
        let mut out = String::with_capacity(size + 2);
        out.push('[');
        for (i, record) in session.records.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(record.text());
        }
        out.push(']');
        input.verify().map_err(|e| error::io_error(&e, &path))?;
        Ok(out)
    })
}

/// `buildSessionContext(entries, leafId)` over `jsonl`, a version 3 header followed by the
/// entries (`index.js` writes it): `leaf` is the leaf id as JSON text (`Leaf::Key`: `null` an
/// empty context, a falsy value the last entry, another looked up), `None` for `undefined`.
#[napi(js_name = "buildContextJson")]
pub fn build_context_json(
    jsonl: String,
    leaf: Option<String>,
    pi: Option<String>,
) -> Result<String> {
    guard_text("the context", || {
        let pi = crate::pi_version(pi.as_deref())?;
        let key = match leaf {
            None => Key::Undefined,
            Some(text) => {
                let value = json::parse(&text)
                    .map_err(|e| error::failure("ERR_INVALID_ARG_VALUE", format!("leafId: {e}")))?;
                Key::of(Some(&value), 0)
            }
        };
        let session =
            Session::from_bytes(jsonl.as_bytes(), pi).map_err(|e| error::load_error(&e))?;
        let context = session
            .context(Leaf::Key(key))
            .map_err(|e| error::cycle_error(&e))?;
        let mut out = Vec::new();
        context
            .write_json(&mut out)
            .map_err(|e| error::io_error(&e, "context"))?;
        Ok(text(out))
    })
}
