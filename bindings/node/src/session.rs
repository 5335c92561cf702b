//! `open(pathOrBuffer, { pi, dialect, blobs })` and the answers of the loaded session: each
//! method is one call of the front door (`pi_session_format::Session`:
//! `write_resumed_context`, `to_llm`, `write_tree_json`, `write_info`, `entries`), its answer
//! written as the library writes it (`JSON.stringify`'s text) and handed over as one string.
//! A session is read in pi's dialect, or oh-my-pi's (`dialect: "omp"`), or its own
//! (`"auto"`); an omp session answers as omp does (docs/dialects.md).

use crate::error::{self, Result, guard, guard_text};
use napi::bindgen_prelude::Buffer;
use napi::{Env, Unknown};
use napi_derive::napi;
use pi_session_format::json::{self, JsValue};
use pi_session_format::migrate::SequentialIds;
use pi_session_format::omp::Blobs;
use pi_session_format::session::Loader;
use pi_session_format::session::Record;
use pi_session_format::{Dialect, Leaf, OwnedSession, PiVersion, Session, context, info};
use pi_session_fs::input::Input;
use pi_session_fs::omp_store::OmpStore;
use std::path::Path;

/// A loaded session (the JavaScript `Session` wraps it).
#[napi(js_name = "NativeSession")]
pub struct NativeSession {
    inner: OwnedSession,
    /// omp's blob store, for an omp session's images.
    blobs: Option<Blobs>,
}

impl NativeSession {
    /// Wraps a loaded session.
    pub(crate) fn new(inner: OwnedSession) -> NativeSession {
        NativeSession { inner, blobs: None }
    }

    /// Wraps a loaded session; an omp session's images come from `blobs` (a directory),
    /// else from omp's own store when there is one.
    fn with_blobs(inner: OwnedSession, blobs: Option<String>) -> NativeSession {
        let blobs = (inner.session().dialect == Dialect::Omp)
            .then(|| blobs.map(Into::into).or_else(OmpStore::existing_blobs_dir))
            .flatten()
            .map(Blobs::new);
        NativeSession { inner, blobs }
    }

    fn session(&self) -> &Session<'_> {
        self.inner.session()
    }
}

/// Appends a record's value as JSON text: the line's own text when the value is the text's
/// (so that `JSON.parse` reads exactly what pi's did), the value written by the library when a
/// migration changed it.
fn push_record(out: &mut String, record: &Record<'_>) {
    if record.is_rewritten() {
        out.push_str(&json::to_string(&record.value()));
    } else {
        out.push_str(record.text());
    }
}

/// `Leaf::Id(id)` for an id, the leaf pi has after opening the file otherwise.
fn leaf_of(leaf: Option<String>) -> Leaf {
    leaf.map_or(Leaf::Current, Leaf::Id)
}

/// Bytes the library wrote as JSON text (always UTF-8: strings are escaped as
/// `JSON.stringify` escapes them).
pub(crate) fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Where a v1 file's entries get their ids: `"random"` (as pi, the default) or
/// `"sequential"` (`00000001`, `00000002`, …: the same output every time).
fn sequential(ids: Option<&str>) -> Result<bool> {
    match ids {
        None | Some("random") => Ok(false),
        Some("sequential") => Ok(true),
        Some(other) => Err(error::failure(
            "ERR_INVALID_ARG_VALUE",
            format!("unknown ids {other:?}: use \"random\" or \"sequential\""),
        )),
    }
}

/// `options.dialect`: `"pi"` or `"omp"`, or `"auto"` for the file's own (`None`); absent,
/// `default`.
pub(crate) fn dialect(name: Option<&str>, default: Option<Dialect>) -> Result<Option<Dialect>> {
    match name {
        None => Ok(default),
        Some(name) => Dialect::choice(name).map_err(|_| {
            error::failure(
                "ERR_INVALID_ARG_VALUE",
                format!(
                    "unknown dialect {name:?}: use \"pi\", \"omp\" or \"auto\" (the file's own)"
                ),
            )
        }),
    }
}

/// The loader of `open`'s options.
fn loader<'a>(pi: Option<String>, dialect_name: Option<String>) -> Result<Loader<'a, 'a>> {
    let pi: PiVersion = crate::pi_version(pi.as_deref())?;
    Ok(Session::loader(pi).with_dialect(dialect(dialect_name.as_deref(), Some(Dialect::Pi))?))
}

/// Opens the session file at `path` with `pi`'s rules (`Session::open`) in `dialect` (pi's
/// when absent, the file's own for `"auto"`): mapped when large, a FIFO or pipe read as a stream to its end, a
/// directory refused. `blobs`: omp's blob store for an omp session's images.
#[napi(js_name = "openPath")]
pub fn open_path(
    path: String,
    pi: Option<String>,
    ids: Option<String>,
    dialect: Option<String>,
    blobs: Option<String>,
) -> Result<NativeSession> {
    guard(|| {
        let loader = loader(pi, dialect)?;
        let mut sequential_ids = SequentialIds::default();
        let opened = if sequential(ids.as_deref())? {
            loader.ids(&mut sequential_ids).open(&path)
        } else {
            loader.open(&path)
        };
        opened
            .map(|s| NativeSession::with_blobs(s, blobs))
            .map_err(|e| error::open_error(&e))
    })
}

/// Loads a session from bytes (copied) as [`open_path`] does (`Loader::load_owned`).
#[napi(js_name = "openBuffer")]
pub fn open_buffer(
    bytes: Buffer,
    pi: Option<String>,
    ids: Option<String>,
    dialect: Option<String>,
    blobs: Option<String>,
) -> Result<NativeSession> {
    guard(|| {
        let loader = loader(pi, dialect)?;
        let mut sequential_ids = SequentialIds::default();
        let loaded = if sequential(ids.as_deref())? {
            loader.ids(&mut sequential_ids).load_owned(bytes.to_vec())
        } else {
            loader.load_owned(bytes.to_vec())
        };
        loaded
            .map(|s| NativeSession::with_blobs(s, blobs))
            .map_err(|e| error::load_error(&e))
    })
}

/// The listing entry of the file at `path` (`pi-session info`), as JSON text: read as it is,
/// also when pi cannot open it (`null` then, or when pi leaves it out of lists), in `dialect`
/// (pi's when absent, the file's own for `"auto"`). `mtime_ms` replaces the file's modification time.
#[napi(js_name = "infoPath")]
pub fn info_path(
    path: String,
    pi: Option<String>,
    mtime_ms: Option<f64>,
    dialect: Option<String>,
) -> Result<String> {
    guard_text("the listing entry", || {
        let pi = crate::pi_version(pi.as_deref())?;
        let dialect = self::dialect(dialect.as_deref(), Some(Dialect::Pi))?;
        let input = Input::open(Path::new(&path)).map_err(|e| error::io_error(&e, &path))?;
        let mtime = mtime_ms.unwrap_or_else(|| input.modified_ms());
        let mut out = Vec::new();
        info::write_entry(input.bytes(), None, mtime, pi, dialect, &mut out)
            .map_err(|e| error::io_error(&e, &path))?;
        input.verify().map_err(|e| error::io_error(&e, &path))?;
        Ok(text(out))
    })
}

/// [`info_path`] of bytes (the modification time is `mtime_ms`, else the Unix epoch).
#[napi(js_name = "infoBuffer")]
pub fn info_buffer(
    bytes: Buffer,
    pi: Option<String>,
    mtime_ms: Option<f64>,
    dialect: Option<String>,
) -> Result<String> {
    guard_text("the listing entry", || {
        let pi = crate::pi_version(pi.as_deref())?;
        let dialect = self::dialect(dialect.as_deref(), Some(Dialect::Pi))?;
        let mut out = Vec::new();
        info::write_entry(&bytes, None, mtime_ms.unwrap_or(0.0), pi, dialect, &mut out)
            .map_err(|e| error::io_error(&e, "info"))?;
        Ok(text(out))
    })
}

#[napi]
impl NativeSession {
    /// `buildSessionContext` for `leaf` (the current leaf when absent) and what building it
    /// skipped or left in place, as JSON text `{"context":…,"warnings":["LINE: warning: …"]}`:
    /// pi's `{"messages":[…],"thinkingLevel":…,"model":…}`, or omp's for an omp session; the
    /// warnings are those `pi-session context` prints (`ContextNotes::warnings`).
    #[napi(js_name = "contextJson")]
    pub fn context_json(&self, leaf: Option<String>) -> Result<String> {
        guard_text("the context", || {
            let mut out = b"{\"context\":".to_vec();
            let notes = self
                .session()
                .write_resumed_context(leaf_of(leaf), self.blobs.as_ref(), &mut out)
                .map_err(|e| error::failure(e.code(), e.to_string()))?;
            out.extend_from_slice(b",\"warnings\":");
            let warnings: Vec<JsValue> = notes
                .warnings(self.blobs.as_ref())
                .into_iter()
                .map(|w| JsValue::string(w.as_str()))
                .collect();
            json::write_value(&mut out, &JsValue::Array(json::JsArray(warnings)));
            out.push(b'}');
            Ok(text(out))
        })
    }

    /// `"pi"` or `"omp"`: the dialect the session was read in.
    #[napi(getter)]
    pub fn dialect(&self) -> String {
        self.session().dialect.name().to_owned()
    }

    /// [`NativeSession::context_json`] built as JavaScript values through N-API rather than
    /// as JSON text, for the measurement of README.md. Not part of the API.
    #[napi(js_name = "__contextObjectsForBench")]
    pub fn context_objects<'env>(
        &self,
        env: &'env Env,
        leaf: Option<String>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let context = self
                .session()
                .context(leaf_of(leaf))
                .map_err(|e| error::cycle_error(&e))?;
            crate::objects::build(env, &context.to_json())
        })
    }

    /// [`NativeSession::entries_json`] built as JavaScript values through N-API, for the
    /// measurement of README.md. Not part of the API.
    #[napi(js_name = "__entriesObjectsForBench")]
    pub fn entries_objects<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| crate::objects::build_each(env, self.session().entry_records().map(|r| r.value())))
    }

    /// `convertToLlm` of the context's messages, as a JSON array.
    #[napi(js_name = "llmJson")]
    pub fn llm_json(&self, leaf: Option<String>) -> Result<String> {
        guard_text("the messages", || {
            if self.session().dialect == Dialect::Omp {
                return Err(error::failure(
                    "omp-unsupported",
                    "llm(): omp's convertToLlm is not reproduced yet; context() gives omp's context",
                ));
            }
            let messages = self
                .session()
                .to_llm(leaf_of(leaf))
                .map_err(|e| error::cycle_error(&e))?;
            let mut out = Vec::new();
            context::write_messages(&messages, &mut out)
                .map_err(|e| error::io_error(&e, "messages"))?;
            Ok(text(out))
        })
    }

    /// `getTree()` as JSON text: `[{"id","type","label"?,"children":[…]}]`.
    #[napi(js_name = "treeJson")]
    pub fn tree_json(&self) -> Result<String> {
        guard_text("the tree", || {
            let mut out = Vec::new();
            self.session()
                .write_tree_json(&mut out)
                .map_err(|e| error::failure(e.code(), e.to_string()))?;
            Ok(text(out))
        })
    }

    /// The listing entry (`buildSessionInfo`) as JSON text, `null` when pi leaves the file out
    /// of lists; `mtime_ms`, when given, is the file's modification time (pi's last fallback
    /// for `modified`) instead of the one read with the file.
    #[napi(js_name = "infoJson")]
    pub fn info_json(&self, mtime_ms: Option<f64>) -> Result<String> {
        guard_text("the listing entry", || {
            let session = self.session();
            let mut out = Vec::new();
            let written = match mtime_ms {
                None => session.write_info(&mut out),
                Some(mtime) => session.write_info_at(mtime, &mut out),
            };
            written.map_err(|e| error::io_error(&e, "info"))?;
            Ok(text(out))
        })
    }

    /// The entries in file order as pi holds them after opening the file (its `getEntries()`),
    /// as a JSON array: the file's text of each entry, or the value a migration made of it.
    #[napi(js_name = "entriesJson")]
    pub fn entries_json(&self) -> Result<String> {
        guard_text("the entries", || {
            let mut out = String::from("[");
            for (i, record) in self.session().entry_records().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_record(&mut out, record);
            }
            out.push(']');
            Ok(out)
        })
    }

    /// The entries in file order as the format's typed model reads them
    /// (`Session::entries`), as a JSON array; an entry that does not fit the model is an
    /// `ERR_ENTRY_SHAPE` error.
    #[napi(js_name = "typedEntriesJson")]
    pub fn typed_entries_json(&self) -> Result<String> {
        guard_text("the entries", || {
            let mut out = Vec::from(*b"[");
            for (i, entry) in self.session().entries().enumerate() {
                let entry = entry.map_err(|e| error::entry_error(&e))?;
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut out, &entry.entry)
                    .map_err(|e| error::failure("entry-not-typed", e.to_string()))?;
            }
            out.push(b']');
            Ok(text(out))
        })
    }

    /// The header's value as JSON text (as loaded: migrated for a v1/v2 file).
    #[napi(js_name = "headerJson")]
    pub fn header_json(&self) -> Result<String> {
        guard_text("the header", || {
            let mut out = String::new();
            push_record(&mut out, self.session().header());
            Ok(out)
        })
    }

    /// The leaf id pi has after opening the file, as JSON text (`null` without entries);
    /// `undefined` when the last entry has no `id`, or one JSON text cannot name.
    #[napi(js_name = "leafIdJson")]
    pub fn leaf_id_json(&self) -> Result<Option<String>> {
        guard(|| Ok(self.session().index().leaf.to_json()))
    }

    /// The release of the pi whose rules the session was loaded with (`"1.5.2"`).
    #[napi(getter)]
    pub fn pi(&self) -> String {
        self.session().pi.release().to_owned()
    }

    /// The file's `version` as pi reads it, and whether pi migrates it (JSON text:
    /// `{"version":…,"migrated":…}`; `version` is `null` when it is not a number).
    #[napi(js_name = "versionJson")]
    pub fn version_json(&self) -> Result<String> {
        guard(|| {
            let v = &self.session().version;
            let mut object = json::JsObject::new();
            object.set("version", JsValue::Number(v.effective));
            object.set("migrated", JsValue::Bool(v.rewrite));
            Ok(json::to_string(&JsValue::Object(object)))
        })
    }

    /// The lines that are not JSON (pi drops them without a word), as a JSON array of
    /// `{"line","column","error"}`.
    #[napi(js_name = "droppedJson")]
    pub fn dropped_json(&self) -> Result<String> {
        guard(|| {
            let dropped = self
                .session()
                .dropped
                .iter()
                .map(|d| {
                    let mut object = json::JsObject::new();
                    object.set("line", JsValue::Number(d.line as f64));
                    object.set("column", JsValue::Number(d.column as f64));
                    object.set("error", JsValue::string(d.error.to_string()));
                    JsValue::Object(object)
                })
                .collect();
            Ok(json::to_string(&JsValue::Array(json::JsArray(dropped))))
        })
    }
}
