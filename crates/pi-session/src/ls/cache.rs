//! The listing cache of `pi-session ls`: each file's listing entry kept with what identifies
//! the content it was read from (device, inode, size, modification and change times to the
//! nanosecond), so that a later listing reads only the files that changed. pi appends to live
//! sessions, which changes their size and times; anything that rewrites a file changes its
//! change time, which no program can set.
//!
//! It lives in `$XDG_CACHE_HOME/pi-session/` (default `~/.cache/pi-session/`), one file per
//! pi version's rules, replaced atomically after a listing; the stamp, the racy rule and the
//! reading and writing are `crate::cache`'s, which `stats` shares. The cache can only make a
//! listing faster: a cache that cannot be read is ignored, one that cannot be written is not
//! written, and `--no-cache` does neither.

pub(super) use crate::cache::Stamp;
use crate::cache::{self, key};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The cache's format; a file of another version is ignored (and replaced).
const VERSION: u32 = 1;

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
        let file = enabled
            .then(|| cache::file(&format!("ls-v{VERSION}-{pi}.jsonl")))
            .flatten();
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
        if stamp.is_racy() {
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
        cache::store(&file, text.as_bytes());
    }
}

/// The cache file's entries, or none when it is missing, unreadable or of another version.
fn read(file: &Path, pi: &str) -> HashMap<String, (Stamp, Option<String>)> {
    let Some(input) = cache::load(file) else {
        return HashMap::new();
    };
    let mut lines = input
        .bytes()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty());
    let header: Option<Header> = lines.next().and_then(|l| serde_json::from_slice(l).ok());
    if header
        != Some(Header {
            version: VERSION,
            pi: pi.to_owned(),
        })
    {
        return HashMap::new();
    }
    let entries = lines
        .filter_map(|l| serde_json::from_slice::<Line>(l).ok())
        .map(|l| (l.path, (l.stamp, l.info)))
        .collect();
    // Truncated by another program while it was read: what was read past its end is zeros.
    match input.verify() {
        Ok(()) => entries,
        Err(_) => HashMap::new(),
    }
}
