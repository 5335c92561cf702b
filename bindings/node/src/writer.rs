//! `SessionWriter`: `pi_session_format::SessionWriter` (pi's `SessionManager` for Rust: the
//! lines pi writes, appended safely) for JavaScript. Entries and messages arrive as the JSON
//! text `JSON.stringify` made of them in `index.js`, read back with the library's
//! `JSON.parse`, so that they are written with the members in the order JavaScript gave them.

use crate::error::{self, Result, failure, guard, guard_text};
use crate::session::NativeSession;
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use pi_session_format::json::{self, JsArray, JsValue};
use pi_session_format::{SessionWriter, WriterConfig};
use std::path::{Path, PathBuf};

/// A session being written (the JavaScript `SessionWriter` wraps it).
#[napi(js_name = "NativeWriter")]
pub struct NativeWriter {
    inner: SessionWriter,
}

/// The writer's setup: `pi`'s writing rules, random ids, the system clock.
fn config(pi: Option<&str>, id: Option<String>, fsync: Option<bool>) -> Result<WriterConfig> {
    let pi = crate::pi_version(pi)?;
    let config = WriterConfig::default()
        .profile(pi.write_profile())
        .fsync(fsync.unwrap_or(false));
    Ok(match id {
        Some(id) => config.session_id(id),
        None => config,
    })
}

/// A JSON value from the text `JSON.stringify` wrote.
fn value(json_text: &str, what: &str) -> Result<JsValue> {
    json::parse(json_text).map_err(|e| {
        failure(
            "ERR_INVALID_ARG_VALUE",
            format!("{what} is not a JSON value: {e}"),
        )
    })
}

fn wrap(
    writer: std::result::Result<SessionWriter, pi_session_format::WriteError>,
) -> Result<NativeWriter> {
    writer
        .map(|inner| NativeWriter { inner })
        .map_err(|e| error::write_error(&e))
}

/// pi's `SessionManager.create(cwd, sessionDir)`: a new session in `session_dir` (pi's
/// directory for `cwd` by default), written at its first conversation.
#[napi(js_name = "writerCreate")]
pub fn writer_create(
    cwd: String,
    session_dir: Option<String>,
    pi: Option<String>,
    id: Option<String>,
    fsync: Option<bool>,
) -> Result<NativeWriter> {
    guard(|| {
        let config = config(pi.as_deref(), id, fsync)?;
        wrap(SessionWriter::create(
            &cwd,
            session_dir.as_deref().map(Path::new),
            config,
        ))
    })
}

/// pi's `SessionManager.open(path)`: appends to the session at `path` (a new one there when
/// it does not exist; a v1/v2 file migrated atomically first).
#[napi(js_name = "writerOpen")]
pub fn writer_open(path: String, pi: Option<String>, fsync: Option<bool>) -> Result<NativeWriter> {
    guard(|| {
        let config = config(pi.as_deref(), None, fsync)?;
        wrap(SessionWriter::open(Path::new(&path), config))
    })
}

/// pi's `SessionManager.inMemory(cwd)`: a session that is never written.
#[napi(js_name = "writerInMemory")]
pub fn writer_in_memory(
    cwd: String,
    pi: Option<String>,
    id: Option<String>,
) -> Result<NativeWriter> {
    guard(|| {
        let config = config(pi.as_deref(), id, None)?;
        wrap(SessionWriter::in_memory(&cwd, config))
    })
}

/// pi's `SessionManager.forkFrom(source, cwd, sessionDir)`: a copy of the session at `source`
/// as a new session of `cwd`, written now.
#[napi(js_name = "writerForkFrom")]
pub fn writer_fork_from(
    source: String,
    cwd: String,
    session_dir: Option<String>,
    pi: Option<String>,
    id: Option<String>,
    fsync: Option<bool>,
) -> Result<NativeWriter> {
    guard(|| {
        let config = config(pi.as_deref(), id, fsync)?;
        wrap(SessionWriter::fork_from(
            Path::new(&source),
            &cwd,
            session_dir.as_deref().map(Path::new),
            config,
        ))
    })
}

#[napi]
impl NativeWriter {
    /// Appends a whole entry (the JSON text of an object); returns its id.
    #[napi(js_name = "appendJson")]
    pub fn append_json(&mut self, entry: String) -> Result<String> {
        guard(|| {
            let entry = value(&entry, "the entry")?;
            self.inner
                .append_entry(entry)
                .map_err(|e| error::write_error(&e))
        })
    }

    /// Appends a message (the JSON text of an object); returns its entry's id.
    #[napi(js_name = "appendMessageJson")]
    pub fn append_message_json(&mut self, message: String) -> Result<String> {
        guard(|| {
            let message = value(&message, "the message")?;
            self.inner
                .append_message_value(&message)
                .map_err(|e| error::write_error(&e))
        })
    }

    /// pi's `createBranchedSession(leafId)`: the path to `leaf_id` as a new session, in `out`
    /// (which must not exist) or under pi's name beside this one; the writer continues in
    /// it. Returns its path (`null` in memory, or when it is written later).
    #[napi]
    pub fn fork(&mut self, leaf_id: String, out: Option<String>) -> Result<Option<String>> {
        guard(|| {
            let path: Option<PathBuf> = match out {
                Some(out) => Some(
                    self.inner
                        .create_branched_session_at(&leaf_id, Path::new(&out))
                        .map_err(|e| error::write_error(&e))?,
                ),
                None => self
                    .inner
                    .create_branched_session(&leaf_id)
                    .map_err(|e| error::write_error(&e))?,
            };
            Ok(path.map(|p| p.to_string_lossy().into_owned()))
        })
    }

    /// Makes `id` the leaf: the next entry is its child (pi's `branch`).
    #[napi]
    pub fn branch(&mut self, id: String) -> Result<()> {
        guard(|| self.inner.branch(&id).map_err(|e| error::write_error(&e)))
    }

    /// Clears the leaf: the next entry is a new root (pi's `resetLeaf`).
    #[napi(js_name = "resetLeaf")]
    pub fn reset_leaf(&mut self) -> Result<()> {
        guard(|| {
            self.inner.reset_leaf();
            Ok(())
        })
    }

    /// Writes the file now, before the first conversation (pi waits for it).
    #[napi(js_name = "writeNow")]
    pub fn write_now(&mut self) -> Result<()> {
        guard(|| self.inner.write_now().map_err(|e| error::write_error(&e)))
    }

    /// Every line the writer holds, as the file holds them.
    #[napi(js_name = "toJsonl")]
    pub fn to_jsonl(&self) -> Result<Buffer> {
        guard(|| Ok(self.inner.to_jsonl().into()))
    }

    /// The context pi would send for the current leaf: its messages as a JSON array.
    #[napi(js_name = "contextJson")]
    pub fn context_json(&self) -> Result<String> {
        guard_text("the context", || {
            let messages = self
                .inner
                .build_context()
                .map_err(|e| error::write_error(&e))?;
            Ok(json::to_string(&JsValue::Array(JsArray(messages))))
        })
    }

    /// The session read back with the reader of the same pi.
    #[napi]
    pub fn read(&self) -> Result<NativeSession> {
        guard(|| {
            self.inner
                .read()
                .map(NativeSession::new)
                .map_err(|e| error::load_error(&e))
        })
    }

    /// The session id (the header's `id`).
    #[napi(getter, js_name = "sessionId")]
    pub fn session_id(&self) -> String {
        self.inner.session_id().to_owned()
    }

    /// The session's working directory.
    #[napi(getter)]
    pub fn cwd(&self) -> String {
        self.inner.cwd().to_owned()
    }

    /// The session file (`null` in memory).
    #[napi(getter)]
    pub fn path(&self) -> Option<String> {
        self.inner.path().map(|p| p.to_string_lossy().into_owned())
    }

    /// The current leaf's id (`null` before the first entry or after `resetLeaf`).
    #[napi(getter, js_name = "leafId")]
    pub fn leaf_id(&self) -> Option<String> {
        self.inner.leaf_id()
    }

    /// Whether the file holds every line (before the first conversation a new session lives
    /// in memory only).
    #[napi(getter, js_name = "isWritten")]
    pub fn is_written(&self) -> bool {
        self.inner.is_written()
    }

    /// The number of entries (lines other than the header).
    #[napi(getter, js_name = "entryCount")]
    pub fn entry_count(&self) -> u32 {
        u32::try_from(self.inner.entry_count()).unwrap_or(u32::MAX)
    }

    /// The release of the pi whose writing rules the writer follows (`"1.5.2"`).
    #[napi(getter)]
    pub fn pi(&self) -> String {
        self.inner.profile().release().to_owned()
    }
}
