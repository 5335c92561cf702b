//! What the caches of `ls` (`ls/cache.rs`) and `stats` (`stats/cache.rs`) share: the
//! [`Stamp`] that identifies a file's content (device, inode, size, modification and change
//! times to the nanosecond), the "racy" rule, where cache files live, and how they are read
//! and written.
//!
//! pi appends to live sessions, which changes their size and times; anything that rewrites a
//! file changes its change time, which no program can set. A file modified in the last two
//! seconds is not kept ([`Stamp::is_racy`]: its times could still be those of a later write,
//! the "racy" case of git's index). Caches live in `$XDG_CACHE_HOME/pi-session/` (default
//! `~/.cache/pi-session/`) and are replaced atomically, readable by their owner only
//! ([`pi_session_fs::publish_private`]: they hold paths, ids and costs). A cache can only
//! make a command faster: one that cannot be read is ignored ([`load`]), one that
//! cannot be written is not written ([`store`]).

use pi_session_format::info;
use pi_session_fs::input::Input;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// How recently modified a file may be and still be kept, in nanoseconds.
const RACY_NS: i128 = 2_000_000_000;

/// How long ago a file must have been modified to be [`Stamp::settled`]: ten minutes.
const SETTLED_NS: i128 = 600_000_000_000;

/// What identifies a file's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    /// The length of [`Stamp::to_bytes`].
    pub(crate) const LEN: usize = 56;

    /// The stamp of the file `path` points to, and its modification time in milliseconds as
    /// pi takes it (the listing's last fallback for `modified`).
    pub(crate) fn of(path: &Path) -> Option<(Stamp, f64)> {
        let m = std::fs::metadata(path).ok()?;
        Some((
            Stamp::of_metadata(&m),
            m.modified().map_or(0.0, info::mtime_ms),
        ))
    }

    /// [`Stamp::of`] of a regular file only (not a FIFO, a device or a directory, whose
    /// content a stamp does not tell).
    pub(crate) fn of_file(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        m.is_file().then(|| Stamp::of_metadata(&m))
    }

    fn of_metadata(m: &std::fs::Metadata) -> Stamp {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        }
    }

    /// The file's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Whether `other` is a stamp of the same file (device and inode), whatever its content.
    pub(crate) fn same_file(&self, other: &Stamp) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
    }

    /// Whether the file was modified (or its inode changed) too recently to be kept: a
    /// write in the same clock tick would leave the stamp as it is.
    pub(crate) fn is_racy(&self) -> bool {
        let now = now_ns();
        self.mtime_ns > now - RACY_NS || self.ctime_ns > now - RACY_NS
    }

    /// Whether the file was last modified at least ten minutes ago (and is not
    /// [`Stamp::is_racy`]): a session no longer being written, whose count a cache may keep
    /// added up with the others' (`stats`'s kept ledger). Only where a run starts from: a
    /// file kept is taken again only while its whole stamp is the same.
    pub(crate) fn settled(&self) -> bool {
        self.mtime_ns <= now_ns() - SETTLED_NS && !self.is_racy()
    }

    /// The stamp as [`Stamp::LEN`] bytes (little-endian), for binary caches.
    pub(crate) fn to_bytes(self) -> [u8; Stamp::LEN] {
        let mut out = [0; Stamp::LEN];
        out[..8].copy_from_slice(&self.dev.to_le_bytes());
        out[8..16].copy_from_slice(&self.ino.to_le_bytes());
        out[16..24].copy_from_slice(&self.size.to_le_bytes());
        out[24..40].copy_from_slice(&self.mtime_ns.to_le_bytes());
        out[40..].copy_from_slice(&self.ctime_ns.to_le_bytes());
        out
    }

    /// [`Stamp::to_bytes`] read back; `None` when `bytes` is too short.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<Stamp> {
        let bytes: &[u8; Stamp::LEN] = bytes.get(..Stamp::LEN)?.try_into().ok()?;
        let u64_at =
            |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        let i128_at =
            |at: usize| i128::from_le_bytes(bytes[at..at + 16].try_into().unwrap_or_default());
        Some(Stamp {
            dev: u64_at(0),
            ino: u64_at(8),
            size: u64_at(16),
            mtime_ns: i128_at(24),
            ctime_ns: i128_at(40),
        })
    }
}

/// The cache file `name` in `$XDG_CACHE_HOME/pi-session`, else `$HOME/.cache/pi-session`
/// (absolute paths only, as the XDG base directory specification asks).
pub(crate) fn file(name: &str) -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("pi-session").join(name))
}

/// A path as the caches name it: absolute as `std::path::absolute` makes it, UTF-8 (other
/// paths are not cached). A relative path is joined to the current directory asked once per
/// run (not once per file: a `getcwd` each, 20 % of the system time of a cached `stats` of
/// 10,000 files). A path that is already as `std::path::absolute` would make it (no `.`
/// component, no repeated or trailing `/`: what a walk gives) is taken as it is, without
/// being taken apart and put together again.
pub(crate) fn key(path: &Path) -> Option<String> {
    static CURRENT_DIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let joined = if path.is_absolute() {
        path.to_str()?.to_owned()
    } else {
        let dir = CURRENT_DIR.get_or_init(|| std::env::current_dir().ok());
        let dir = dir.as_ref()?.to_str()?;
        let path = path.to_str()?;
        let mut joined = String::with_capacity(dir.len() + 1 + path.len());
        joined.push_str(dir);
        if !dir.ends_with('/') {
            joined.push('/');
        }
        joined.push_str(path);
        joined
    };
    if is_normal(&joined) {
        return Some(joined);
    }
    std::path::absolute(&joined)
        .ok()?
        .into_os_string()
        .into_string()
        .ok()
}

/// Whether an absolute path is as `std::path::absolute` leaves it: not `//` at its start (a
/// root POSIX leaves to the system), and no empty or `.` component, nor a `/` at its end.
fn is_normal(path: &str) -> bool {
    path == "/"
        || (path.starts_with('/')
            && !path.ends_with('/')
            && path[1..].split('/').all(|c| !c.is_empty() && c != "."))
}

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// The largest cache file read: a cache of a million sessions is far smaller.
const MAX_CACHE_BYTES: u64 = 1 << 30;

/// The content of the cache file `file` ([`Input::of_file`]: a large one is mapped, its
/// pages read only where the cache is read); `None` when it is missing, not a regular file (a
/// FIFO would block, a device never end), larger than [`MAX_CACHE_BYTES`], or cannot be read
/// (the caller then starts from an empty cache). Another program truncating a mapped cache
/// file meanwhile makes what is read past its new end zeros: a caller checks
/// [`Input::verify`] before trusting what it took from it.
pub(crate) fn load(file: &Path) -> Option<Input> {
    // Before opening: a device or a FIFO is not opened at all (opening some devices acts).
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() || meta.len() > MAX_CACHE_BYTES {
        return None;
    }
    // Opened without waiting on a FIFO swapped in since, and checked again: what was opened
    // is what counts.
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(file)
        .ok()?;
    let opened_meta = opened.metadata().ok()?;
    if !opened_meta.is_file() || opened_meta.len() > MAX_CACHE_BYTES {
        return None;
    }
    // A regular file: read no further than its size when opened, or mapped.
    Input::of_file(opened).ok()
}

/// Replaces the cache file `file` with `content`, atomically (a symlink there is replaced,
/// never written through), readable by its owner only (it holds the paths, ids and costs of
/// the sessions); errors are ignored (a cache only saves time).
pub(crate) fn store(file: &Path, content: &[u8]) {
    if let Some(parent) = file.parent()
        && std::fs::create_dir_all(parent).is_ok()
    {
        let _ = pi_session_fs::publish_private(file, content);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of a relative path is what `std::path::absolute` gives it, with the current
    /// directory asked once.
    #[test]
    fn a_relative_path_is_keyed_as_std_makes_it_absolute() {
        for path in [
            "a.jsonl",
            "./d/../a.jsonl",
            "d//./e/",
            ".",
            "/x/./y//z",
            "/",
            "d/e.jsonl",
            "d/../e.jsonl",
            "../e.jsonl",
            "d/.",
            "d/./e",
            "d/",
            ".d/..e/e.",
            "/x/y.jsonl",
            "/x/../y",
            "//x/y",
            "///x/y",
            "/x/y/",
            "/x/y/.",
            "/./x",
            "//",
            "///",
        ] {
            let path = Path::new(path);
            let std = std::path::absolute(path).unwrap();
            assert_eq!(key(path).as_deref(), std.to_str(), "{path:?}");
        }
    }
}
