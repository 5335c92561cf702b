//! What `pi-session validate` checks: the files and directories on the command line, or pi's
//! own session directory when there are none.
//!
//! A directory is walked (with `walkdir`) for `*.jsonl` files, in sorted order, so that pi's
//! layout `sessions/--<cwd>--/<timestamp>_<uuid>.jsonl` comes out by project, then by date.
//! Files are reported in the order the arguments were given.

use std::path::{Path, PathBuf};

/// One thing to validate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Standard input (`-`): no path, so no layout checks.
    Stdin,
    /// A file, with the path as it is shown.
    File(PathBuf),
    /// Something that could not be listed (a directory walk error): shown as unreadable.
    Broken(PathBuf, String),
}

impl Target {
    /// How the target is named in reports (`-` for standard input).
    pub fn display(&self) -> String {
        match self {
            Target::Stdin => "-".to_string(),
            Target::File(path) | Target::Broken(path, _) => path.display().to_string(),
        }
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

/// The targets of `paths` in order; with no paths, every session of pi's directory.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<Target>, NoSessions> {
    if paths.is_empty() {
        let dir = default_sessions_dir()?;
        if !dir.is_dir() {
            return Err(NoSessions(format!(
                "no path given and pi's session directory {} does not exist (set PI_CODING_AGENT_DIR, or pass files or directories)",
                dir.display()
            )));
        }
        return Ok(walk(&dir));
    }
    let mut targets = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            targets.push(Target::Stdin);
        } else if path.is_dir() {
            let found = walk(path);
            if found.is_empty() {
                eprintln!("pi-session: {}: no *.jsonl files", path.display());
            }
            targets.extend(found);
        } else {
            // A missing or unreadable file is reported as such when it is read.
            targets.push(Target::File(path.clone()));
        }
    }
    Ok(targets)
}

/// The `*.jsonl` files under `dir`, sorted by name at every level.
pub fn walk(dir: &Path) -> Vec<Target> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
    {
        match entry {
            Ok(entry) => {
                let path = entry.path();
                let jsonl = path.extension().is_some_and(|e| e == "jsonl");
                if jsonl && !entry.file_type().is_dir() {
                    out.push(Target::File(path.to_path_buf()));
                }
            }
            Err(e) => {
                let path = e.path().unwrap_or(dir).to_path_buf();
                out.push(Target::Broken(path, e.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
