//! Helpers every module of this test binary uses: scratch directories and files.

use std::path::{Path, PathBuf};

/// An empty scratch directory for `test` of `area` (a module's name), unique to this process.
pub(crate) fn scratch(area: &str, test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pi-session-{area}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `bytes` to `dir/name` (creating the directories on the way) and returns the path.
pub(crate) fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, bytes).unwrap();
    path
}

/// [`write`], the path as a string (test paths are UTF-8).
pub(crate) fn write_str(dir: &Path, name: &str, text: &str) -> String {
    write(dir, name, text).to_str().unwrap().to_owned()
}
