//! The integration tests of `pi-session-format`, one test binary (each module is one
//! concern).

mod canonical_fast_path;
mod export;
mod front_door;
mod writer;

/// A fresh, empty directory for `test` under the system's temporary directory.
fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pi-session-format-it-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Cuts the file at `path` to `len` bytes, as another program truncating it would.
fn truncate(path: &std::path::Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}
