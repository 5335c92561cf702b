//! Where the file is: pi names a session file `<timestamp>_<session id>.jsonl` and keeps it in
//! `<agent dir>/sessions/--<encoded cwd>--/` (reference notes §1). Other places work when the
//! path is given explicitly, so these are only [`Code::FileNameLayout`] and
//! [`Code::DirectoryLayout`] infos.

use super::catalogue::Code;
use super::header::Header;
use super::report::Diagnostic;
use serde_json::Value;
use std::path::Path;

/// The file name pi would give a session with this header timestamp and id.
pub(crate) fn expected_file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{id}.jsonl", timestamp.replace([':', '.'], "-"))
}

/// pi's directory name for a working directory: one leading separator dropped, every `/`,
/// `\` and `:` replaced by `-`, wrapped in `--`.
pub(crate) fn encode_cwd(cwd: &str) -> String {
    pi_session_format::write::session_dir_name(cwd)
}

/// Whether `path` is in pi's session tree: below a `sessions` directory, or in a `--…--`
/// project directory. Files elsewhere were put there on purpose (pi opens any path it is
/// given), so their names are not checked.
fn in_session_tree(path: &Path) -> bool {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let project = path.parent().and_then(name);
    project.is_some_and(|d| d.len() >= 4 && d.starts_with("--") && d.ends_with("--"))
        || path
            .ancestors()
            .skip(1)
            .any(|a| name(a).as_deref() == Some("sessions"))
}

/// The layout diagnostics of a file at `path` inside pi's session tree.
pub(crate) fn check(path: &Path, header: &Header) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if !in_session_tree(path) {
        return out;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let string = |key| header.get(key).and_then(Value::as_str);
    if !name.ends_with(".jsonl") {
        out.push(Diagnostic::new(
            Code::FileNameLayout,
            None,
            format!("{name:?} does not end in .jsonl: pi's session lists skip it"),
        ));
    } else if let (Some(timestamp), Some(id)) = (string("timestamp"), string("id")) {
        let expected = expected_file_name(timestamp, id);
        if name != expected {
            out.push(Diagnostic::new(
                Code::FileNameLayout,
                None,
                format!("pi would name this session {expected:?} (header timestamp and id), not {name:?}"),
            ));
        }
    }
    let dir = path
        .parent()
        .and_then(Path::file_name)
        .map(|d| d.to_string_lossy().into_owned());
    if let (Some(dir), Some(cwd)) = (dir, string("cwd")) {
        let expected = encode_cwd(cwd);
        if dir != expected {
            out.push(Diagnostic::new(
                Code::DirectoryLayout,
                None,
                format!("pi keeps the sessions of {cwd:?} in a directory named {expected:?}, not {dir:?}: `pi -r` in that project will not list it"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_directories_follow_pi() {
        assert_eq!(
            expected_file_name("2025-12-09T00:53:29.825Z", "ffae836b"),
            "2025-12-09T00-53-29-825Z_ffae836b.jsonl"
        );
        assert_eq!(encode_cwd("/Users/a/b"), "--Users-a-b--");
        assert_eq!(encode_cwd("C:\\Users\\x"), "--C--Users-x--");
        assert_eq!(encode_cwd("/"), "----");
        assert_eq!(encode_cwd("//srv/x"), "---srv-x--");
        assert_eq!(encode_cwd("/a/b/"), "--a-b---");
    }

    #[test]
    fn only_files_in_the_session_tree_are_checked() {
        assert!(in_session_tree(Path::new(
            "/h/.pi/agent/sessions/--h-p--/x.jsonl"
        )));
        assert!(in_session_tree(Path::new("sessions/x.jsonl")));
        assert!(in_session_tree(Path::new("--h-p--/x.jsonl")));
        assert!(!in_session_tree(Path::new("/tmp/export/x.jsonl")));
        assert!(!in_session_tree(Path::new("x.jsonl")));
    }
}
