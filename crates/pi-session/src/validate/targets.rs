//! What `pi-session validate` checks: the files and directories on the command line, or pi's
//! own session directory when there are none.
//!
//! A directory is walked (with `walkdir`) for `*.jsonl` files, in sorted order, so that pi's
//! layout `sessions/--<cwd>--/<timestamp>_<uuid>.jsonl` comes out by project, then by date.
//! Files are reported in the order the arguments were given.
//!
//! What a walk takes, and what it leaves (with a note on stderr, never as an invalid session):
//! - only entries named `*.jsonl` are considered; anything else (a `README.md`, dangling or
//!   not) is not looked at;
//! - a regular `*.jsonl` file is a target; so is a symbolic link named `*.jsonl` that leads
//!   to a regular file (pi's own listing reads such a link as a session), shown under the
//!   link's name;
//! - a `*.jsonl` that is not a regular file (a FIFO, a socket, a device, a dangling link) is
//!   skipped with a note: reading it could block forever. Named explicitly on the command
//!   line it is read as a stream instead;
//! - symbolic links to directories are not followed, unless `--follow` asks for it; even
//!   then a link back to one of its own ancestors is not followed (a note says so);
//! - a directory that cannot be read is skipped with a warning.

use crate::display;
use std::path::{Path, PathBuf};

/// One thing to validate.
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

    /// The path made absolute, as the validator takes it (it checks the file's name and
    /// directory); none for standard input.
    pub fn absolute(&self) -> Option<PathBuf> {
        self.path().and_then(|path| std::path::absolute(path).ok())
    }
}

/// Why there is nothing to validate.
#[derive(Debug)]
pub struct NoSessions(pub String);

/// pi's session directory: `$PI_CODING_AGENT_DIR` (a leading `~` expanded) or `~/.pi/agent`,
/// then `sessions/`.
pub fn default_sessions_dir() -> Result<PathBuf, NoSessions> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    let agent = match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(dir) if !dir.is_empty() => expand_tilde(&dir, home.as_deref().map(Path::new))?,
        _ => match &home {
            Some(home) => Path::new(home).join(".pi").join("agent"),
            None => {
                return Err(NoSessions(
                    "no path given, and neither PI_CODING_AGENT_DIR nor HOME is set to find pi's sessions".into(),
                ));
            }
        },
    };
    Ok(agent.join("sessions"))
}

/// `~` and `~/…` are relative to `home`; any other path is kept as it is.
fn expand_tilde(dir: &str, home: Option<&Path>) -> Result<PathBuf, NoSessions> {
    let rest = match dir.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => &rest[1..],
        _ => return Ok(PathBuf::from(dir)),
    };
    match home {
        Some(home) => Ok(home.join(rest)),
        None => Err(NoSessions(format!(
            "PI_CODING_AGENT_DIR is {dir:?} but HOME is not set to expand `~`"
        ))),
    }
}

/// What was found to validate.
#[derive(Debug, Default)]
pub struct Collected {
    /// The targets, in order.
    pub targets: Vec<Target>,
    /// Notes for stderr: what was skipped and why.
    pub notes: Vec<String>,
    /// Directories given (or pi's, by default) in which no session file was found.
    pub empty: Vec<PathBuf>,
}

/// Why the command line cannot be run: a usage error (exit code 2).
#[derive(Debug)]
pub struct Usage(pub String);

/// Checks the paths before anything is read: standard input can be read only once.
pub fn check_usage(paths: &[PathBuf]) -> Result<(), Usage> {
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(Usage(
            "`-` (standard input) can be given only once: it can be read only once".into(),
        ));
    }
    Ok(())
}

/// How a directory is walked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walk {
    /// Follow symbolic links to directories.
    pub follow: bool,
    /// Also take the archives real deployments leave beside sessions ([`archive_kind`]).
    pub include_archived: bool,
}

/// The targets of `paths` in order; with no paths, every session of pi's directory.
pub fn collect(paths: &[PathBuf], how: Walk) -> Result<Collected, NoSessions> {
    let mut out = Collected::default();
    if paths.is_empty() {
        let dir = default_sessions_dir()?;
        if !dir.is_dir() {
            return Err(NoSessions(format!(
                "no path given and pi's session directory {} does not exist (set PI_CODING_AGENT_DIR, or pass files or directories)",
                display::path(&dir)
            )));
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

/// [`collect`] for a command: each note, and each directory without session files, said on
/// stderr; the exit code (2) when there is nothing to read at all.
pub fn collect_said(paths: &[PathBuf], how: Walk) -> Result<Collected, std::process::ExitCode> {
    let collected = collect(paths, how).map_err(|NoSessions(message)| {
        eprintln!("pi-session: {message}");
        std::process::ExitCode::from(2)
    })?;
    for note in &collected.notes {
        eprintln!("pi-session: {note}");
    }
    for dir in &collected.empty {
        eprintln!(
            "pi-session: error: {}: no session files (*.jsonl) in this directory",
            display::path(dir)
        );
    }
    Ok(collected)
}

fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// What an archived session file is, from its name: the copies real deployments keep beside
/// their sessions — `S.jsonl.reset.<time>` (a session reset), `S.jsonl.deleted.<time>` (a
/// session deleted), `S.checkpoint.<uuid>.jsonl` (a checkpoint), `S.jsonl.bak-<n>-ms`
/// (a backup).
pub fn archive_kind(name: &str) -> Option<&'static str> {
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

/// Adds the session files under `dir` (sorted by name at every level) to `out`.
pub fn walk(dir: &Path, how: Walk, out: &mut Collected) {
    let follow = how.follow;
    let before = out.targets.len();
    let shown = display::path;
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(follow)
        .sort_by_file_name()
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
        let home = Some(Path::new("/home/me"));
        let expand = |d| expand_tilde(d, home).unwrap();
        assert_eq!(expand("~"), PathBuf::from("/home/me/"));
        assert_eq!(expand("~/agent"), PathBuf::from("/home/me/agent"));
        assert_eq!(expand("~other/x"), PathBuf::from("~other/x"));
        assert_eq!(expand("/abs"), PathBuf::from("/abs"));
        assert!(expand_tilde("~/x", None).is_err());
    }
}
