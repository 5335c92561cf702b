//! Where a writer starts: a new session ([`SessionWriter::create`],
//! [`SessionWriter::in_memory`]), an existing file ([`SessionWriter::open`],
//! [`SessionWriter::continue_recent`]), or a copy of another session
//! ([`SessionWriter::fork_from`]).

use super::build::{self, stringify_record};
use super::paths::{
    self, default_session_dir, is_valid_session_id, resolve_path, session_file_name,
};
use super::{
    Line, SessionWriter, Text, WriteError, WriteProfile, WriterConfig, line_of_record,
    not_a_session,
};
use crate::date;
use crate::json::JsValue;
use crate::session::Session;
use pi_session_fs::input::Input;
use pi_session_fs::{Appender, FileError};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
        let dir = match session_dir {
            Some(dir) => paths::absolute(dir),
            None => default_dir(cwd)?,
        };
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
                let cwd = current_dir();
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
        let snapshot = pi_session_fs::Snapshot::of(&meta);
        let file = Appender::open_existing(&path, config.fsync)?;
        if file.is_empty()? {
            let mut file = file;
            let cwd = current_dir();
            let id = config.session_id.take();
            let mut writer = Self::empty(Self::cwd_of(config.profile, &cwd), dir, config);
            writer.new_session(id, None)?;
            writer.path = Some(path);
            file.append(&writer.whole_file())?;
            writer.file = Some(file);
            writer.flushed = true;
            return Ok(writer);
        }
        let (input, (loaded, file)) = read_session(&path, config.profile, |session| {
            let file = if session.version.rewrite {
                // Migrated as `migrate --in-place` does: the replacement takes the lock itself.
                drop(file);
                let options = pi_session_fs::Options {
                    job: pi_session_fs::Job::MIGRATE,
                    ..Default::default()
                };
                let refused =
                    |e: pi_session_fs::ReplaceError| FileError::Refused(path.clone(), e.0);
                pi_session_fs::prepare(&path, snapshot, options)
                    .map_err(refused)?
                    .commit(|out| out.write_all(&session.to_jsonl()))
                    .map_err(refused)?;
                Appender::open_existing(&path, config.fsync)?
            } else {
                file
            };
            Ok((Loaded::of(session), file))
        })?;
        let mut writer = Self::from_loaded(loaded, input, &path, dir, config);
        writer.path = Some(path);
        writer.file = Some(file);
        writer.flushed = true;
        Ok(writer)
    }

    /// Reads the session file at `path` into a writer that holds it in memory only: nothing
    /// is written, locked or migrated on disk. For deriving sessions from a file without
    /// touching it ([`SessionWriter::create_branched_session_at`]); appends stay in memory.
    pub fn load(path: &Path, config: WriterConfig) -> Result<SessionWriter, WriteError> {
        let path = paths::absolute(path);
        let meta = std::fs::metadata(&path).map_err(|source| FileError::Io {
            path: path.clone(),
            doing: "open",
            source,
        })?;
        if !meta.is_file() {
            return Err(FileError::NotAFile(path).into());
        }
        let (input, loaded) =
            read_session(&path, config.profile, |session| Ok(Loaded::of(session)))?;
        let mut writer = Self::from_loaded(loaded, input, &path, None, config);
        writer.origin = Some(path);
        Ok(writer)
    }

    /// A writer holding a loaded session's lines, read from `input` (the file at `path`).
    /// The lines keep their places in the file's bytes, not copies (the file is mapped when
    /// it is large, its pages let go here), so that a session of gigabytes is not held in
    /// memory; a line's text is read when it is asked for.
    fn from_loaded(
        loaded: Loaded,
        input: Input,
        path: &Path,
        dir: Option<PathBuf>,
        config: WriterConfig,
    ) -> Self {
        let Loaded {
            mut lines,
            places,
            cwd,
            session_id,
        } = loaded;
        let input = Arc::new(input);
        input.release(0..input.bytes().len());
        for (line, place) in lines.iter_mut().zip(places) {
            if let Some(place) = place {
                line.json = Text::Read(Arc::clone(&input), place);
            }
        }
        let cwd = cwd.unwrap_or_else(current_dir);
        let mut writer = Self::empty(Self::cwd_of(config.profile, &cwd), dir, config);
        writer.reset_lines(lines);
        writer.session_id = session_id;
        writer.source = Some((input, path.to_owned()));
        writer
    }

    /// Opens the most recently modified session of `cwd` in `session_dir` (default: pi's
    /// directory for `cwd`), or creates one (pi's `SessionManager.continueRecent`).
    pub fn continue_recent(
        cwd: &str,
        session_dir: Option<&Path>,
        config: WriterConfig,
    ) -> Result<SessionWriter, WriteError> {
        let default = default_dir(cwd)?;
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
        let dir = match session_dir {
            Some(dir) => paths::absolute(dir),
            None => default_dir(&target_cwd)?,
        };
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
        let mut content = header.text().to_vec();
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

/// The process's directory, pi's `process.cwd()` (`/` when it cannot be read).
fn current_dir() -> String {
    std::env::current_dir()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".into())
}

/// The session at `path`, loaded with `profile`'s reading rules.
/// pi's directory for `cwd`'s sessions ([`default_session_dir`]), or why there is none.
fn default_dir(cwd: &str) -> Result<PathBuf, WriteError> {
    default_session_dir(cwd)
        .map_err(|e| WriteError::File(FileError::Refused(PathBuf::from(cwd), e.to_string())))
}

/// Reads the session file at `path` with `profile`'s reading rules and calls `with` on it:
/// read in small pieces copied from the file (mapped when it is large), as the CLI reads,
/// so that its pages are not brought into memory. Returns the input with `with`'s answer.
fn read_session<R>(
    path: &Path,
    profile: WriteProfile,
    with: impl FnOnce(&Session<'_>) -> Result<R, WriteError>,
) -> Result<(Input, R), WriteError> {
    let io = |source| {
        WriteError::from(FileError::Io {
            path: path.to_owned(),
            doing: "read",
            source,
        })
    };
    let input = Input::open(path).map_err(io)?;
    let answer = {
        let session = Session::loader(profile.reading())
            .reading(&input)
            .load(input.bytes())
            .map_err(|e| not_a_session(path, &e))?;
        // A file another program truncated while it was read: what was loaded is not it.
        input.verify().map_err(io)?;
        with(&session)?
    };
    Ok((input, answer))
}

/// What a writer takes from a loaded session: its lines (each with its place in the input
/// when its text is the input's bytes as they are), and its header's `cwd` and `id`.
struct Loaded {
    lines: Vec<Line>,
    places: Vec<Option<Range<usize>>>,
    cwd: Option<String>,
    session_id: String,
}

impl Loaded {
    fn of(session: &Session<'_>) -> Loaded {
        let header = session.header().value();
        let cwd = match header.get("cwd") {
            Some(JsValue::String(s)) => Some(s.to_string_lossy()),
            _ => None,
        };
        let session_id = match header.get("id") {
            Some(JsValue::String(s)) => s.to_string_lossy(),
            _ => String::new(),
        };
        let mut places = Vec::with_capacity(session.records.len());
        let lines = session
            .records
            .iter()
            .map(|record| {
                let place = record.place_in(session.source);
                // The place is filled in once the input is shared (`from_loaded`), for a line
                // that keeps the record's text (a migrated record's line is its new value's).
                let mut kept_text = false;
                let text = || {
                    kept_text = true;
                    match &place {
                        Some(_) => Text::default(),
                        None => Text::Owned(record.text().as_bytes().into()),
                    }
                };
                let line = line_of_record(record, text);
                places.push(place.filter(|_| kept_text));
                line
            })
            .collect();
        Loaded {
            lines,
            places,
            cwd,
            session_id,
        }
    }
}
