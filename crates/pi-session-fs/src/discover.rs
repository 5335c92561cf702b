//! Where pi's sessions are, and which files of a directory are sessions: the one place the
//! commands (and the writer, for a new session's directory) find them.
//!
//! pi's agent directory is `$PI_CODING_AGENT_DIR` (a leading `~` expanded) or `~/.pi/agent`,
//! where `~` is Node's `os.homedir()`: `$HOME` as it is set (even empty), else the home of the
//! user's passwd entry ([`home_dir`]). Its sessions are under `sessions/`.
//!
//! A directory is walked (with `walkdir`) for `*.jsonl` files, in sorted order, so that pi's
//! layout `sessions/--<cwd>--/<timestamp>_<uuid>.jsonl` comes out by project, then by date.
//! Targets are given in the order the paths were.
//!
//! What a walk takes, and what it leaves (with a note for the caller to show, never as an
//! invalid session):
//! - only entries named `*.jsonl` are considered; anything else (a `README.md`, dangling or
//!   not) is not looked at;
//! - a regular `*.jsonl` file is a target; so is a symbolic link named `*.jsonl` that leads
//!   to a regular file (pi's own listing reads such a link as a session), shown under the
//!   link's name;
//! - a `*.jsonl` that is not a regular file (a FIFO, a socket, a device, a dangling link) is
//!   skipped with a note: reading it could block forever. Named explicitly it is read as a
//!   stream instead;
//! - symbolic links to directories are not followed, unless [`Walk::follow`] asks for it;
//!   even then a link back to one of its own ancestors is not followed (a note says so);
//! - a directory that cannot be read is skipped with a warning;
//! - the archives real deployments keep beside sessions ([`archive_kind`]) are said to be
//!   what they are, and taken only when asked ([`Walk::include_archived`]) unless named
//!   `*.jsonl`.

use crate::display;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// One session to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Standard input (`-`): no path, so no layout checks.
    Stdin,
    /// A file, with the path as it is shown.
    File(PathBuf),
}

impl Target {
    /// How the target is named in reports (`-` for standard input), escaped losslessly.
    pub fn display(&self) -> String {
        match self {
            Target::Stdin => "-".to_string(),
            Target::File(path) => display::path(path),
        }
    }

    /// The path (none for standard input).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Target::Stdin => None,
            Target::File(path) => Some(path),
        }
    }

    /// Opens the target for reading (`Input::open`: standard input read once, a file read or
    /// mapped).
    pub fn open(&self) -> io::Result<crate::input::Input> {
        crate::input::Input::open(self.path().unwrap_or(Path::new("-")))
    }

    /// Opens the target and hands the input to `read` (its [`Input::bytes`], or pieces read
    /// with [`Input::read_at`] so that a large file's mapping stays out of memory); the answer
    /// is given only when the file did not shrink while it was read ([`Input::verify`]), so
    /// that nothing computed from a torn read is reported.
    ///
    /// [`Input::bytes`]: crate::input::Input::bytes
    /// [`Input::read_at`]: crate::input::Input::read_at
    /// [`Input::verify`]: crate::input::Input::verify
    pub fn read_with<T>(&self, read: impl FnOnce(&crate::input::Input) -> T) -> io::Result<T> {
        let input = self.open()?;
        let answer = read(&input);
        input.verify()?;
        Ok(answer)
    }

    /// The path made absolute, as the validator takes it (it checks the file's name and
    /// directory); none for standard input.
    pub fn absolute(&self) -> Option<PathBuf> {
        self.path().and_then(|path| std::path::absolute(path).ok())
    }
}

/// The environment variable that moves pi's agent directory.
pub const AGENT_DIR_VARIABLE: &str = "PI_CODING_AGENT_DIR";

/// Node's `os.homedir()`: `$HOME` as it is set (an empty `HOME` is an empty path, relative,
/// as in pi), else the home directory of the user's passwd entry; `None` when neither is
/// there.
pub fn home_dir() -> Option<PathBuf> {
    match std::env::var_os("HOME") {
        Some(home) => Some(PathBuf::from(home)),
        None => crate::sys::passwd_home(),
    }
}

/// Node's `path.resolve(path)`: `path` made absolute against the current directory and
/// normalised lexically (`.`, `..`, repeated and trailing separators); symlinks are not
/// followed. A relative `path` is returned as it is when there is no current directory (it
/// was removed).
pub fn resolve_lexically(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(dir) => dir.join(path),
            Err(_) => return path.to_path_buf(),
        }
    };
    let mut out = PathBuf::from("/");
    for part in absolute.components() {
        match part {
            std::path::Component::Normal(p) => out.push(p),
            std::path::Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// pi's agent directory (`getAgentDir()`): `$PI_CODING_AGENT_DIR` when set and not empty (a
/// leading `~` expanded), else `~/.pi/agent`. An error (which says what to set) when it
/// needs a home directory and there is none.
pub fn agent_dir() -> io::Result<PathBuf> {
    agent_dir_from(std::env::var_os(AGENT_DIR_VARIABLE), home_dir())
}

/// pi's directory of sessions, one subdirectory per working directory (`getSessionsDir()`):
/// the [`agent_dir`]'s `sessions/`.
pub fn sessions_dir() -> io::Result<PathBuf> {
    Ok(agent_dir()?.join("sessions"))
}

fn agent_dir_from(agent: Option<OsString>, home: Option<PathBuf>) -> io::Result<PathBuf> {
    match agent.filter(|dir| !dir.is_empty()) {
        Some(dir) => match dir.to_str() {
            Some(text) => expand_tilde(text, home),
            None => Ok(PathBuf::from(dir)),
        },
        None => match home {
            Some(home) => Ok(home.join(".pi").join("agent")),
            None => Err(no_home(format!(
                "neither {AGENT_DIR_VARIABLE} nor HOME is set, and the user has no home directory, to find pi's agent directory: set {AGENT_DIR_VARIABLE}"
            ))),
        },
    }
}

/// `~` and `~/…` are relative to `home`, as pi's `expandTildePath`; any other path is kept
/// as it is.
fn expand_tilde(dir: &str, home: Option<PathBuf>) -> io::Result<PathBuf> {
    let rest = match dir.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => &rest[1..],
        _ => return Ok(PathBuf::from(dir)),
    };
    match home {
        Some(home) if rest.is_empty() => Ok(home),
        Some(home) => Ok(home.join(rest)),
        None => Err(no_home(format!(
            "{AGENT_DIR_VARIABLE} is {dir:?} but there is no home directory to expand `~`: set HOME"
        ))),
    }
}

fn no_home(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, message)
}

/// What [`collect`] found.
#[derive(Debug, Default)]
pub struct Collected {
    /// The targets, in order.
    pub targets: Vec<Target>,
    /// Notes for the caller to show: what was skipped and why.
    pub notes: Vec<String>,
    /// Directories given (or pi's, by default) in which no session file was found.
    pub empty: Vec<PathBuf>,
}

/// How a directory is walked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walk {
    /// Follow symbolic links to directories.
    pub follow: bool,
    /// Also take the archives real deployments leave beside sessions ([`archive_kind`]).
    pub include_archived: bool,
}

/// The targets of `paths` in order (`-` is standard input; a directory is walked; anything
/// else is taken as it is, to be read or reported when it is read); with no paths, every
/// session of pi's [`sessions_dir`].
pub fn collect(paths: &[PathBuf], how: Walk) -> io::Result<Collected> {
    let mut out = Collected::default();
    if paths.is_empty() {
        let dir = sessions_dir()?;
        if !dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no path given and pi's session directory {} does not exist (set {AGENT_DIR_VARIABLE}, or pass files or directories)",
                    display::path(&dir)
                ),
            ));
        }
        walk(&dir, how, &mut out);
        return Ok(out);
    }
    for path in paths {
        if path.as_os_str() == "-" {
            out.targets.push(Target::Stdin);
        } else if path.is_dir() {
            walk(path, how, &mut out);
        } else {
            // Given explicitly: opened as it is (a missing or unreadable file is reported
            // when it is read; a FIFO or `<(…)` is read as a stream).
            out.targets.push(Target::File(path.clone()));
        }
    }
    Ok(out)
}

fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// What an archived session file is, from its name: the copies real deployments keep beside
/// their sessions — `S.jsonl.reset.<time>` (a session reset), `S.jsonl.deleted.<time>` (a
/// session deleted), `S.checkpoint.<uuid>.jsonl` (a checkpoint), `S.jsonl.bak-<n>-ms`
/// (a backup).
pub fn archive_kind(name: &str) -> Option<&'static str> {
    // Every archive's name has two dots at least; a session's (`<time>_<id>.jsonl`) has one,
    // and is told apart without a search for each marker (a walk of 10,000 sessions asks).
    name.bytes().filter(|&b| b == b'.').nth(1)?;
    let after = |marker: &str| name.split_once(marker);
    if let Some((stem, rest)) = after(".jsonl.reset.")
        && !stem.is_empty()
        && !rest.is_empty()
    {
        return Some("a session archived when it was reset");
    }
    if let Some((stem, rest)) = after(".jsonl.deleted.")
        && !stem.is_empty()
        && !rest.is_empty()
    {
        return Some("a session archived when it was deleted");
    }
    if let Some((stem, rest)) = after(".checkpoint.")
        && !stem.is_empty()
        && rest.len() > ".jsonl".len()
        && rest.ends_with(".jsonl")
    {
        return Some("a checkpoint copy of a session");
    }
    if let Some((stem, rest)) = after(".jsonl.bak-")
        && !stem.is_empty()
        && rest
            .strip_suffix("-ms")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some("a backup copy of a session");
    }
    None
}

/// Adds the session files under `dir` (sorted by name at every level) to `out` (see the
/// [module](self) docs).
pub fn walk(dir: &Path, how: Walk, out: &mut Collected) {
    let follow = how.follow;
    let before = out.targets.len();
    let shown = display::path;
    // By name: siblings' paths are their directory's path and their names, so comparing the
    // paths orders them as their names (`sort_by_file_name` parses each name out of its path
    // at every comparison: 4 % of a cached `stats` of 10,000 files).
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(follow)
        .sort_by(|a, b| a.path().as_os_str().cmp(b.path().as_os_str()))
    {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let path = e.path().unwrap_or(dir);
                if let Some(ancestor) = e.loop_ancestor() {
                    out.notes.push(format!(
                        "note: {}: not followed: it leads back to {}, which contains it",
                        shown(path),
                        shown(ancestor)
                    ));
                    continue;
                }
                let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
                if is_dir {
                    out.notes.push(format!(
                        "warning: cannot read the directory {}: {}; its sessions are not checked",
                        shown(path),
                        io_reason(&e)
                    ));
                } else if is_jsonl(path) {
                    out.notes
                        .push(format!("note: {}: skipped: {}", shown(path), io_reason(&e)));
                }
                // Anything else (a dangling `README.md`) is not a session: not looked at.
                continue;
            }
        };
        let path = entry.path();
        if entry.file_type().is_dir() {
            continue;
        }
        let archive = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(archive_kind);
        match archive {
            Some(_) if !how.include_archived => {
                if is_jsonl(path) {
                    // pi lists it with the sessions; it is checked, and said what it is.
                    out.notes.push(format!(
                        "note: {}: {}",
                        shown(path),
                        archive.unwrap_or_default()
                    ));
                } else {
                    continue;
                }
            }
            Some(kind) => out.notes.push(format!("note: {}: {kind}", shown(path))),
            None if !is_jsonl(path) => continue,
            None => {}
        }
        let file_type = if entry.path_is_symlink() && !follow {
            match std::fs::metadata(path) {
                Ok(m) => m.file_type(),
                Err(e) => {
                    out.notes.push(format!(
                        "note: {}: skipped: a symbolic link that leads nowhere ({e})",
                        shown(path)
                    ));
                    continue;
                }
            }
        } else {
            entry.file_type()
        };
        if file_type.is_file() {
            out.targets.push(Target::File(path.to_path_buf()));
        } else if !file_type.is_dir() {
            out.notes.push(format!(
                "note: {}: skipped: not a regular file (a FIFO, socket or device could block the walk; name it explicitly to read it as a stream)",
                shown(path)
            ));
        }
    }
    if out.targets.len() == before {
        out.empty.push(dir.to_path_buf());
    }
}

fn io_reason(e: &walkdir::Error) -> String {
    match e.io_error() {
        Some(io) => io.to_string(),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_names() {
        let kind = |n| archive_kind(n).map(|k| k.split(' ').nth(2).unwrap_or(""));
        assert_eq!(kind("s.jsonl.reset.2026-01-01T00-00-00"), Some("archived"));
        assert_eq!(kind("s.jsonl.deleted.1767225600000"), Some("archived"));
        assert_eq!(
            kind("s.checkpoint.0195f3a4-0000-7000-8000-000000000001.jsonl"),
            Some("copy")
        );
        assert_eq!(kind("s.jsonl.bak-3-ms"), Some("copy"));
        for plain in [
            "s.jsonl",
            "s.jsonl.reset.",
            ".jsonl.reset.x",
            "s.jsonl.bak-x-ms",
            "s.checkpoint..jsonl",
            "s.jsonl.bak",
        ] {
            assert_eq!(archive_kind(plain), None, "{plain}");
        }
    }

    #[test]
    fn tilde_expansion() {
        let home = Some(PathBuf::from("/home/me"));
        let expand = |d| expand_tilde(d, home.clone()).unwrap();
        assert_eq!(expand("~"), PathBuf::from("/home/me"));
        assert_eq!(expand("~/agent"), PathBuf::from("/home/me/agent"));
        assert_eq!(expand("~other/x"), PathBuf::from("~other/x"));
        assert_eq!(expand("/abs"), PathBuf::from("/abs"));
        assert!(expand_tilde("~/x", None).is_err());
        // An empty home (`HOME=`) is pi's too: `~/x` is `x`, relative.
        assert_eq!(
            expand_tilde("~/x", Some(PathBuf::new())).unwrap(),
            PathBuf::from("x")
        );
    }

    #[test]
    fn the_agent_directory_follows_the_environment_as_pi_does() {
        let dir = |agent: Option<&str>, home: Option<&str>| {
            agent_dir_from(agent.map(std::ffi::OsString::from), home.map(PathBuf::from))
        };
        assert_eq!(
            dir(None, Some("/h")).unwrap(),
            PathBuf::from("/h/.pi/agent")
        );
        assert_eq!(
            dir(Some(""), Some("/h")).unwrap(),
            PathBuf::from("/h/.pi/agent")
        );
        assert_eq!(dir(Some("~/a"), Some("/h")).unwrap(), PathBuf::from("/h/a"));
        assert_eq!(dir(Some("/x"), None).unwrap(), PathBuf::from("/x"));
        assert_eq!(dir(None, Some("")).unwrap(), PathBuf::from(".pi/agent"));
        let error = dir(None, None).unwrap_err().to_string();
        assert!(error.contains("PI_CODING_AGENT_DIR"), "{error}");
    }
}
