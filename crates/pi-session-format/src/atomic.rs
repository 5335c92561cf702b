//! Crash-safe file replacement: write a temporary file in the same directory, flush it to
//! disk, then rename it over the target. A reader sees the old file or the new one, never a
//! half-written one (pi rewrites sessions in place, non-atomically).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Replaces `path` with `contents` atomically, keeping its permissions. With `backup`, the
/// previous file is first copied to `<path>.bak`.
pub fn replace_file(path: &Path, contents: &[u8], backup: bool) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path has no file name"))?;
    let permissions = fs::metadata(path).ok().map(|m| m.permissions());
    if backup {
        let mut bak = name.to_os_string();
        bak.push(".bak");
        let bak = dir.join(bak);
        copy_synced(path, &bak)?;
    }
    let (tmp_path, mut tmp) = create_temp(dir, name)?;
    let result = (|| {
        tmp.write_all(contents)?;
        if let Some(permissions) = permissions {
            tmp.set_permissions(permissions)?;
        }
        tmp.sync_all()?;
        drop(tmp);
        fs::rename(&tmp_path, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    result
}

fn create_temp(dir: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    for attempt in 0u32..1000 {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{pid}.{attempt}.tmp"));
        let tmp_path = dir.join(tmp_name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp_path)
        {
            Ok(file) => return Ok((tmp_path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not create a temporary file",
    ))
}

fn copy_synced(from: &Path, to: &Path) -> io::Result<()> {
    fs::copy(from, to)?;
    File::open(to)?.sync_all()
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    // Directories can be opened and synced on Unix; elsewhere the rename is what we have.
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_keeps_backup() {
        let dir = std::env::temp_dir().join(format!("pi-session-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("s.jsonl");
        fs::write(&file, b"old\n").unwrap();
        replace_file(&file, b"new\n", true).unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"new\n");
        assert_eq!(fs::read(dir.join("s.jsonl.bak")).unwrap(), b"old\n");
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }
}
