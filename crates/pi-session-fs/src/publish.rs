//! Writing a new file atomically: [`publish`] (complete and synced before it gets its name,
//! never half there; [`publish_with`] streams it; [`publish_private`] for its owner only) and
//! [`write_new`], the same with the message a command prints.

use crate::replace::sync_dir;
use crate::sys;
use crate::temp::Temp;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Writes `content` as the file `path`, atomically: into a temporary file in its directory
/// (unnamed where the system allows, so that a killed process leaves nothing), synced, then
/// given the name, replacing what is there only when `replace` (`AlreadyExists` otherwise;
/// a symlink at `path` is then not followed). A new file gets the mode `0o666` less the
/// umask, a replaced one keeps its mode.
pub fn publish(path: &Path, content: &[u8], replace: bool) -> io::Result<()> {
    publish_with(path, replace, |out| out.write_all(content))
}

/// [`publish`], replacing what is there, of a file only its owner may read or write (mode
/// `0o600`, whatever the umask or the mode of the file replaced): for what holds other files'
/// paths and contents, such as a cache.
pub fn publish_private(path: &Path, content: &[u8]) -> io::Result<()> {
    publish_as(path, true, Some(0o600), |out| out.write_all(content))
}

/// [`publish`] of what `write` writes, streamed into the temporary file (buffered), for
/// content too large to hold (a generated session of a gigabyte).
pub fn publish_with(
    path: &Path,
    replace: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    publish_as(path, replace, None, write)
}

/// [`publish_with`], the file given `mode` when `Some`.
fn publish_as(
    path: &Path,
    replace: bool,
    mode: Option<u32>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !replace && fs::symlink_metadata(path).is_ok() {
        // Said before the content is made: it could take minutes.
        return Err(io::ErrorKind::AlreadyExists.into());
    }
    let mut temp = Temp::create(dir)?;
    {
        let mut out = io::BufWriter::with_capacity(1 << 20, temp.file());
        write(&mut out)?;
        out.flush()?;
    }
    // The mode a new file gets (`0o666` less the umask), or the mode of the file replaced:
    // the temporary file's own `0o600` is only for while it is being written.
    let mode = match (mode, fs::metadata(path)) {
        (Some(mode), _) => mode,
        (None, Ok(meta)) if replace => meta.mode() & 0o7777,
        (None, _) => 0o666 & !sys::umask(),
    };
    temp.get()
        .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode))?;
    temp.get().sync_all()?;
    if replace {
        temp.persist_over(path)?;
    } else {
        temp.persist_new(path)?;
    }
    let _ = sync_dir(dir);
    Ok(())
}

/// Writes `content` to the file `path`: a new file, or (with `force`) in place of one; atomic.
pub fn write_new(path: &Path, content: &[u8], force: bool) -> Result<(), String> {
    write_new_with(path, force, |out| out.write_all(content))
}

/// [`write_new`] of what `write` writes, streamed ([`publish_with`]).
pub fn write_new_with(
    path: &Path,
    force: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), String> {
    publish_with(path, force, write).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            format!(
                "{} exists: pass --force to replace it; nothing was written",
                crate::display::path(path)
            )
        } else {
            format!(
                "cannot write {}: {e}; nothing was written",
                crate::display::path(path)
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A private file is `0o600` whether it is new or replaces a readable one; a published one
    /// keeps the mode of what it replaces.
    #[test]
    fn modes_of_published_files() {
        let dir =
            std::env::temp_dir().join(format!("pi-session-fs-publish-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a directory");
        let mode = |p: &Path| fs::metadata(p).expect("written").mode() & 0o777;
        let private = dir.join("cache");
        publish_private(&private, b"one").expect("written");
        assert_eq!(mode(&private), 0o600);
        fs::set_permissions(
            &private,
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .expect("chmod");
        publish_private(&private, b"two").expect("written");
        assert_eq!(mode(&private), 0o600);
        assert_eq!(fs::read(&private).expect("read"), b"two");
        let shared = dir.join("shared");
        publish(&shared, b"a", false).expect("written");
        fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o640))
            .expect("chmod");
        publish(&shared, b"b", true).expect("written");
        assert_eq!(mode(&shared), 0o640);
        let _ = fs::remove_dir_all(&dir);
    }
}
