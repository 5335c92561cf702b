//! Where a writer starts: a new session ([`SessionWriter::create`],
//! [`SessionWriter::in_memory`]), an existing file ([`SessionWriter::open`],
//! [`SessionWriter::continue_recent`]), or a copy of another session
//! ([`SessionWriter::fork_from`]).

use super::build::{self, stringify_record};
use super::file::{self, Appender, FileError};
use super::paths::{
    self, default_session_dir, is_valid_session_id, resolve_path, session_file_name,
};
use super::{Line, SessionWriter, WriteError, WriterConfig, line_of_record, not_a_session};
use crate::date;
use crate::json::JsValue;
use crate::session::{OpenError, Session};
use std::path::{Path, PathBuf};

impl SessionWriter {
    /// A new session for `cwd` whose file goes to `session_dir` (pi's
    /// `SessionManager.create`); `None` for pi's default directory of `cwd`
    /// ([`default_session_dir`]). The directory is created; the file is written at the first
    /// message that starts a conversation (see [`super::WriteProfile`]).
    pub fn create(
        cwd: &str,
        session_dir: Option<&Path>,
        mut config: WriterConfig,
    ) -> Result<SessionWriter, WriteError> {
        let dir = session_dir.map_or_else(|| default_session_dir(cwd), Path::to_owned);
        std::fs::create_dir_all(&dir).map_err(|source| FileError::Io {
            path: dir.clone(),
            doing: "create the directory of",
            source,
        })?;
        let id = config.session_id.take();
        let mut writer = Self::empty(Self::cwd_of(config.profile, cwd), Some(dir), config);
        writer.new_session(id, None)?;
        Ok(writer)
    }

    /// A session that is never written to disk (pi's `SessionManager.inMemory`).
    pub fn in_memory(cwd: &str, mut config: WriterConfig) -> Result<SessionWriter, WriteError> {
        let id = config.session_id.take();
        let mut writer = Self::empty(Self::cwd_of(config.profile, cwd), None, config);
        writer.new_session(id, None)?;
        Ok(writer)
    }

    /// Opens a session file to append to (pi's `SessionManager.open`), taking its lock.
    ///
    /// A file that does not exist yet becomes a new session written there at its first
    /// conversation; an empty file is given a header. A v1 or v2 file is migrated and
    /// rewritten, atomically. A file whose first line is not a session header is refused.
    pub fn open(path: &Path, mut config: WriterConfig) -> Result<SessionWriter, WriteError> {
        let path = paths::absolute(path);
        let dir = path.parent().map(Path::to_owned);
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let cwd = std::env::current_dir()
                    .map(|d| d.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "/".into());
                let id = config.session_id.take();
                let mut writer = Self::empty(Self::cwd_of(config.profile, &cwd), dir, config);
                writer.new_session(id, None)?;
                writer.path = Some(path);
                return Ok(writer);
            }
            Err(source) => {
                return Err(FileError::Io {
                    path,
                    doing: "open",
                    source,
                }
                .into());
            }
        };
        if !meta.is_file() {
            return Err(FileError::NotAFile(path).into());
        }
        let mut file = Appender::open_existing(&path, config.fsync)?;
        if meta.len() == 0 {
            let cwd = std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "/".into());
            let id = config.session_id.take();
            let mut writer = Self::empty(Self::cwd_of(config.profile, &cwd), dir, config);
            writer.new_session(id, None)?;
            writer.path = Some(path);
            file.append(&writer.whole_file())?;
            writer.file = Some(file);
            writer.flushed = true;
            return Ok(writer);
        }
        let loaded = Session::open(&path, config.profile.reading()).map_err(|e| match e {
            OpenError::Load { source, .. } => not_a_session(&path, &source),
            OpenError::Io { source, .. } => FileError::Io {
                path: path.clone(),
                doing: "read",
                source,
            }
            .into(),
        })?;
        let session = loaded.session();
        let header = session.header();
        let cwd = match header.value().get("cwd") {
            Some(JsValue::String(s)) => s.to_string_lossy(),
            _ => std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_else(|_| "/".into()),
        };
        let session_id = match header.value().get("id") {
            Some(JsValue::String(s)) => s.to_string_lossy(),
            _ => String::new(),
        };
        let lines: Vec<Line> = session.records.iter().map(line_of_record).collect();
        if session.version.rewrite {
            drop(file);
            file::replace(&path, &session.to_jsonl())?;
            file = Appender::open_existing(&path, config.fsync)?;
        }
        let mut writer = Self::empty(Self::cwd_of(config.profile, &cwd), dir, config);
        writer.reset_lines(lines);
        writer.session_id = session_id;
        writer.path = Some(path);
        writer.file = Some(file);
        writer.flushed = true;
        Ok(writer)
    }

    /// Opens the most recently modified session of `cwd` in `session_dir` (default: pi's
    /// directory for `cwd`), or creates one (pi's `SessionManager.continueRecent`).
    pub fn continue_recent(
        cwd: &str,
        session_dir: Option<&Path>,
        config: WriterConfig,
    ) -> Result<SessionWriter, WriteError> {
        let default = default_session_dir(cwd);
        let dir = session_dir.map_or_else(|| default.clone(), Path::to_owned);
        let filter_cwd = session_dir.is_some() && dir != default;
        let wanted = resolve_path(cwd);
        let mut candidates: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        for (_, path) in candidates {
            let Ok(session) = Session::open(&path, config.profile.reading()) else {
                continue;
            };
            let header_cwd = session.session().header().value().get("cwd").cloned();
            let matches = match header_cwd {
                Some(JsValue::String(s)) => resolve_path(&s.to_string_lossy()) == wanted,
                _ => false,
            };
            if !filter_cwd || matches {
                return Self::open(&path, config);
            }
        }
        Self::create(cwd, Some(&dir), config)
    }

    /// Copies the session at `source` into a new session of `target_cwd` in `session_dir`
    /// (default: pi's directory for `target_cwd`), whose header names `source` as its parent,
    /// and opens it (pi's `SessionManager.forkFrom`). The entries are copied as pi parsed
    /// them; a v1 or v2 source is migrated first (pi copies its entries unmigrated under a
    /// version-3 header, which leaves them without ids).
    pub fn fork_from(
        source: &Path,
        target_cwd: &str,
        session_dir: Option<&Path>,
        mut config: WriterConfig,
    ) -> Result<SessionWriter, WriteError> {
        let profile = config.profile;
        let (source_text, target_cwd) = if profile.resolves_paths() {
            (
                resolve_path(&source.to_string_lossy()),
                resolve_path(target_cwd),
            )
        } else {
            (source.to_string_lossy().into_owned(), target_cwd.to_owned())
        };
        let loaded = Session::open(Path::new(&source_text), profile.reading()).map_err(|e| {
            WriteError::NotASession {
                path: PathBuf::from(&source_text),
                reason: format!("Cannot fork: {e}"),
            }
        })?;
        let session = loaded.session();
        let dir = session_dir.map_or_else(|| default_session_dir(&target_cwd), Path::to_owned);
        std::fs::create_dir_all(&dir).map_err(|source| FileError::Io {
            path: dir.clone(),
            doing: "create the directory of",
            source,
        })?;
        if let Some(id) = &config.session_id
            && profile.resolves_paths()
            && !is_valid_session_id(id)
        {
            return Err(WriteError::InvalidSessionId(id.clone()));
        }
        let now = config.clock.now_ms();
        let session_id = match config.session_id.take() {
            Some(id) => id,
            None => config.ids.session_id(now),
        };
        let timestamp = date::to_iso_string(now as f64);
        let header = build::header(&session_id, &timestamp, &target_cwd, Some(&source_text));
        let mut content = header.json.to_vec();
        content.push(b'\n');
        for record in session.records.iter().filter(|r| !r.is_header()) {
            content.extend_from_slice(&stringify_record(record));
            content.push(b'\n');
        }
        let path = dir.join(session_file_name(&timestamp, &session_id));
        drop(Appender::create_new(&path, &content, config.fsync)?);
        Self::open(&path, config)
    }
}
