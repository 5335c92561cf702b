//! The listing cache of `pi-session ls`: each file's listing entry kept with what identifies
//! the content it was read from (device, inode, size, modification and change times to the
//! nanosecond), so that a later listing reads only the files that changed. pi appends to live
//! sessions, which changes their size and times; anything that rewrites a file changes its
//! change time, which no program can set.
//!
//! It lives in `$XDG_CACHE_HOME/pi-session/` (default `~/.cache/pi-session/`), one file per
//! pi version's rules, replaced atomically after a listing. A file modified in the last two
//! seconds is not kept (its times could still be those of a later write, the "racy" case of
//! git's index). The cache can only make a listing faster: a cache that cannot be read is
//! ignored, one that cannot be written is not written, and `--no-cache` does neither.

use pi_session_format::info;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::BufRead;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The cache's format; a file of another version is ignored (and replaced).
const VERSION: u32 = 1;

/// How recently modified a file may be and still be kept, in nanoseconds.
const RACY_NS: i128 = 2_000_000_000;

/// What identifies a file's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    /// The stamp of the file `path` points to, and its modification time in milliseconds as
    /// pi takes it (the listing's last fallback for `modified`).
    pub(super) fn of(path: &Path) -> Option<(Stamp, f64)> {
        let m = std::fs::metadata(path).ok()?;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        let stamp = Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        };
        Some((stamp, m.modified().map_or(0.0, info::mtime_ms)))
    }

    /// The file's size in bytes.
    pub(super) fn size(&self) -> u64 {
        self.size
    }
}

/// One line of the cache file.
#[derive(Serialize, Deserialize)]
struct Line {
    path: String,
    stamp: Stamp,
    /// The listing entry as JSON text, or `None` for a file pi leaves out of its list.
    info: Option<String>,
}

/// The first line of the cache file.
#[derive(Serialize, Deserialize, PartialEq)]
struct Header {
    version: u32,
    pi: String,
}

/// The cache, as read at the start of a listing, and what the listing found.
pub(super) struct Cache {
    file: Option<PathBuf>,
    pi: String,
    kept: HashMap<String, (Stamp, Option<String>)>,
    found: Vec<Line>,
    /// The directories listed: their cached files that are gone are dropped on save.
    listed: Vec<String>,
}

impl Cache {
    /// The cache for pi `pi`'s rules (`None`: no cache, `--no-cache`).
    pub(super) fn open(pi: &str, enabled: bool) -> Cache {
        let file = enabled.then(|| dir().map(|d| d.join(format!("ls-v{VERSION}-{pi}.jsonl"))));
        let file = file.flatten();
        let kept = file.as_deref().map(|f| read(f, pi)).unwrap_or_default();
        Cache {
            file,
            pi: pi.to_owned(),
            kept,
            found: Vec::new(),
            listed: Vec::new(),
        }
    }

    /// The listing entry kept for `path` when the file is unchanged: `Some(None)` for a file
    /// pi leaves out of its list.
    pub(super) fn get(&self, path: &Path, stamp: &Stamp) -> Option<Option<&str>> {
        let (kept, info) = self.kept.get(key(path)?.as_str())?;
        (kept == stamp).then_some(info.as_deref())
    }

    /// Notes the directories being listed.
    pub(super) fn listing(&mut self, dirs: impl IntoIterator<Item = PathBuf>) {
        self.listed.extend(dirs.into_iter().filter_map(|d| key(&d)));
    }

    /// Keeps what was found for `path`, read now or taken from the cache (unless the file
    /// was modified within the racy window).
    pub(super) fn found(&mut self, path: &Path, stamp: Stamp, info: Option<String>) {
        if stamp.mtime_ns > now_ns() - RACY_NS || stamp.ctime_ns > now_ns() - RACY_NS {
            return;
        }
        if let Some(path) = key(path) {
            self.found.push(Line { path, stamp, info });
        }
    }

    /// Writes the cache: what this listing found, and what was kept for files outside the
    /// directories it listed (files of those that are gone are dropped). Errors are ignored (a cache only saves time).
    pub(super) fn save(mut self) {
        let Some(file) = self.file.take() else {
            return;
        };
        let mut text = serde_json::to_string(&Header {
            version: VERSION,
            pi: self.pi.clone(),
        })
        .unwrap_or_default();
        text.push('\n');
        let fresh: std::collections::HashSet<&str> =
            self.found.iter().map(|l| l.path.as_str()).collect();
        let in_listed = |path: &str| {
            self.listed
                .iter()
                .any(|d| Path::new(path).parent() == Some(Path::new(d.as_str())))
        };
        let mut lines: Vec<Line> = self
            .kept
            .drain()
            .filter(|(path, _)| !fresh.contains(path.as_str()) && !in_listed(path))
            .map(|(path, (stamp, info))| Line { path, stamp, info })
            .collect();
        lines.append(&mut self.found);
        lines.sort_by(|a, b| a.path.cmp(&b.path));
        for line in &lines {
            if let Ok(json) = serde_json::to_string(line) {
                text.push_str(&json);
                text.push('\n');
            }
        }
        if let Some(parent) = file.parent()
            && std::fs::create_dir_all(parent).is_ok()
        {
            let _ = pi_session_fs::publish(&file, text.as_bytes(), true);
        }
    }
}

/// `$XDG_CACHE_HOME/pi-session`, else `$HOME/.cache/pi-session` (absolute paths only, as
/// the XDG base directory specification asks).
fn dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("pi-session"))
}

/// A path as the cache names it: absolute, UTF-8 (other paths are not cached).
fn key(path: &Path) -> Option<String> {
    std::path::absolute(path).ok()?.to_str().map(str::to_owned)
}

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

/// The cache file's entries, or none when it is missing, unreadable or of another version.
fn read(file: &Path, pi: &str) -> HashMap<String, (Stamp, Option<String>)> {
    let Ok(f) = std::fs::File::open(file) else {
        return HashMap::new();
    };
    let mut lines = std::io::BufReader::new(f).lines();
    let header: Option<Header> = lines
        .next()
        .and_then(Result::ok)
        .and_then(|l| serde_json::from_str(&l).ok());
    if header
        != Some(Header {
            version: VERSION,
            pi: pi.to_owned(),
        })
    {
        return HashMap::new();
    }
    lines
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Line>(&l).ok())
        .map(|l| (l.path, (l.stamp, l.info)))
        .collect()
}
