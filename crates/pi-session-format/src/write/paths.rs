//! Where pi puts session files: the default session directory of a working directory, the
//! file name of a new session, and pi's `resolvePath` (`path.resolve` after `~` expansion).

use std::path::{Path, PathBuf};

/// pi's `resolvePath(input)`: `~` and `~/…` expanded, then resolved against the current
/// directory and normalised lexically (`.`, `..`, repeated and trailing separators), as
/// Node's `path.resolve` does. Symlinks are not followed.
pub fn resolve_path(input: &str) -> String {
    let home = pi_session_fs::discover::home_dir()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expanded = if input == "~" {
        home
    } else if let Some(rest) = input.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else {
        input.to_owned()
    };
    pi_session_fs::discover::resolve_lexically(Path::new(&expanded))
        .to_string_lossy()
        .into_owned()
}

pub use pi_session_fs::discover::agent_dir;

/// The directory pi keeps a working directory's sessions in:
/// `<agent dir>/sessions/<session_dir_name(resolved cwd)>`.
/// An error when there is no agent directory to be had ([`agent_dir`] says why).
pub fn default_session_dir(cwd: &str) -> std::io::Result<PathBuf> {
    Ok(agent_dir()?
        .join("sessions")
        .join(session_dir_name(&resolve_path(cwd))))
}

/// pi's directory name for a working directory: one leading separator dropped, every `/`, `\`
/// and `:` replaced by `-`, wrapped in `--`.
pub fn session_dir_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// The file name pi gives a session: its header timestamp with `:` and `.` as `-`, `_`, its
/// id, `.jsonl`.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    let stamp: String = timestamp
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{stamp}_{session_id}.jsonl")
}

/// Whether `id` is a session id pi 0.87.1+ accepts from a caller
/// (`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`).
pub fn is_valid_session_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric() && last.is_ascii_alphanumeric() && bytes.iter().all(inner)
        }
        _ => false,
    }
}

/// `path` joined to the current directory when relative, then normalised lexically.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    pi_session_fs::discover::resolve_lexically(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_normalises_like_node() {
        assert_eq!(resolve_path("/a/./b//c/../d/"), "/a/b/d");
        assert_eq!(resolve_path("/.."), "/");
        assert_eq!(resolve_path("/"), "/");
    }

    #[test]
    fn file_names_and_ids() {
        assert_eq!(
            session_file_name("2026-04-01T08:00:00.000Z", "abc"),
            "2026-04-01T08-00-00-000Z_abc.jsonl"
        );
        assert!(is_valid_session_id("0195f3a4-0000-7000-8000-0000000000b0"));
        assert!(is_valid_session_id("a"));
        for bad in ["", "-a", "a-", "a/b", "a b", "ä"] {
            assert!(!is_valid_session_id(bad), "{bad}");
        }
    }
}
