//! Helpers every module of this test binary uses: scratch directories and files.

use std::path::{Path, PathBuf};

/// An empty scratch directory for `test` of `area` (a module's name), unique to this process,
/// removed with what it holds when the test is done with it (kept when the test fails, to be
/// looked at): the large sessions the long tests make (300 MB to 1 GB each) must not pile up
/// in the temporary directory.
pub(crate) fn scratch(area: &str, test: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("pi-session-{area}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// A scratch directory ([`scratch`]), used as the `Path` it is.
#[derive(Debug)]
pub(crate) struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
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
