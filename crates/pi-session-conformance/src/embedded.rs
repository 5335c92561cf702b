//! The corpus shipped inside the crate, so that no checkout is needed to run it: the reader
//! cases (`cases/`), the writer scenarios (`writers/`), `RULES.md`, `FORMAT.md` and a
//! [`Manifest`], as one tar archive compressed with zstd (`corpus/corpus.tar.zst`, made by
//! `cargo xtask corpus` from `conformance/`, and checked against it by `cargo xtask corpus
//! --check`).
//!
//! [`extract`] writes it into a directory; [`cached`] extracts it once per corpus version into
//! the user's cache directory, where the runner reads it and where the paths it prints (the
//! expected files, the command lines that reproduce a failure) stay valid after the run.
//!
//! tar and zstd come from the `tar` and `zstd` crates; the fingerprint is FNV-1a (64 bits)
//! written here: it tells corpus versions apart, it is not a security measure.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The compressed archive.
const ARCHIVE: &[u8] = include_bytes!("../corpus/corpus.tar.zst");

/// The manifest, as committed beside the archive (the archive holds the same bytes as
/// `MANIFEST.json`).
const MANIFEST: &str = include_str!("../corpus/MANIFEST.json");

/// The version of this crate, the first part of a corpus version.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The name of the manifest in an extracted corpus.
pub const MANIFEST_FILE: &str = "MANIFEST.json";

/// What a corpus holds and which version it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// What this is.
    pub corpus: String,
    /// The corpus version: the crate version it shipped with and the fingerprint
    /// (`0.1.0+4f1c…`).
    pub version: String,
    /// The [`fingerprint`] of the archive's files but the manifest.
    pub fingerprint: String,
    /// The pi releases whose behaviour the corpus pins (every expected output was computed by
    /// running them).
    pub pi: Vec<String>,
    /// Reader cases per area (`cases/<area>/`).
    pub readers: BTreeMap<String, AreaCount>,
    /// The writer scenarios (`writers/`).
    pub writers: WriterCount,
}

/// The cases of one reader area.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AreaCount {
    /// Cases.
    pub cases: usize,
    /// Operations checked (a case checks one to five).
    pub operations: usize,
    /// `spec` (pi's behaviour) or `divergence` (pi-session's documented choices where pi
    /// hangs, crashes or loses data; not run unless asked).
    pub tier: String,
}

/// The writer scenarios.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WriterCount {
    /// Scenarios.
    pub scenarios: usize,
    /// Runs per pi release (a scenario lists the releases it has pi's files for).
    pub runs: BTreeMap<String, usize>,
    /// Scenarios whose script holds input only JavaScript strings can hold.
    pub javascript_only: usize,
}

impl Manifest {
    /// The embedded corpus's manifest.
    pub fn embedded() -> Manifest {
        // The build would not have passed `cargo xtask corpus --check` (and the crate's tests)
        // with a manifest that does not read.
        serde_json::from_str(MANIFEST).unwrap_or_else(|e| Manifest {
            corpus: format!("unreadable manifest: {e}"),
            version: "unknown".into(),
            fingerprint: String::new(),
            pi: Vec::new(),
            readers: BTreeMap::new(),
            writers: WriterCount {
                scenarios: 0,
                runs: BTreeMap::new(),
                javascript_only: 0,
            },
        })
    }

    /// The manifest of an extracted corpus (`DIR/MANIFEST.json`), if it has one.
    pub fn of_dir(dir: &Path) -> Option<Manifest> {
        let text = std::fs::read_to_string(dir.join(MANIFEST_FILE)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The manifest as pretty JSON, ending in a newline (how `MANIFEST.json` is written).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

/// The fingerprint of a corpus's files (archive path, contents), in archive order: FNV-1a, 64
/// bits, over each path, a NUL, its length and its bytes, as 16 hex digits.
pub fn fingerprint<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (path, bytes) in files {
        feed(path.as_bytes());
        feed(&[0]);
        feed(&(bytes.len() as u64).to_le_bytes());
        feed(bytes);
    }
    format!("{hash:016x}")
}

/// The embedded archive, decompressed (a tar archive).
pub fn archive() -> Result<Vec<u8>, String> {
    let mut tar = Vec::new();
    zstd::stream::read::Decoder::new(ARCHIVE)
        .and_then(|mut d| d.read_to_end(&mut tar))
        .map_err(|e| format!("the embedded corpus does not decompress: {e}"))?;
    Ok(tar)
}

/// Writes the embedded corpus into `dir` (created if missing; it must be empty: nothing of the
/// user's is overwritten).
pub fn extract(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(format!(
                    "{shown}: not empty; give a new or empty directory (nothing was written)"
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{shown}: {e}"))?;
        }
        Err(e) => return Err(format!("{shown}: {e}")),
    }
    unpack(dir)
}

fn unpack(dir: &Path) -> Result<(), String> {
    let tar = archive()?;
    let mut archive = tar::Archive::new(tar.as_slice());
    let entries = archive
        .entries()
        .map_err(|e| format!("the embedded corpus: {e}"))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| format!("the embedded corpus: {e}"))?;
        // `unpack_in` refuses paths that leave `dir`.
        entry
            .unpack_in(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(())
}

/// The embedded corpus extracted into the user's cache directory
/// (`$XDG_CACHE_HOME/pi-session/corpus-VERSION`, else `~/.cache/…`, else the temporary
/// directory), once per version: later calls find it there.
pub fn cached() -> Result<PathBuf, String> {
    let manifest = Manifest::embedded();
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("pi-session");
    let dir = base.join(format!("corpus-{}", manifest.version.replace('+', "-")));
    if Manifest::of_dir(&dir).is_some_and(|m| m == manifest) {
        return Ok(dir);
    }
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    // Into a directory of our own, then renamed into place: a run that stops half-way, or
    // two runs at once, never leave a partial corpus where the next run looks.
    let partial = base.join(format!(
        ".corpus-{}-{}.partial",
        manifest.version.replace('+', "-"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
    let unpacked = unpack(&partial);
    if let Err(e) = unpacked {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(e);
    }
    if std::fs::rename(&partial, &dir).is_err() {
        // Another run put it there first (or a broken copy is in the way: replace it).
        let _ = std::fs::remove_dir_all(&partial);
        if Manifest::of_dir(&dir).is_some_and(|m| m == manifest) {
            return Ok(dir);
        }
        return Err(format!(
            "{}: holds something that is not this corpus; remove it and run again",
            dir.display()
        ));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_holds_the_manifest_and_the_corpus() {
        let tar = archive().unwrap();
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut names = Vec::new();
        let mut manifest = String::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            if name == MANIFEST_FILE {
                entry.read_to_string(&mut manifest).unwrap();
            }
            names.push(name);
        }
        assert_eq!(manifest, MANIFEST);
        let embedded = Manifest::embedded();
        assert!(embedded.version.ends_with(&embedded.fingerprint));
        assert!(names.iter().any(|n| n == "RULES.md"));
        assert!(names.iter().any(|n| n.starts_with("cases/context/")));
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("writers/basic-conversation/"))
        );
        let cases = names.iter().filter(|n| n.ends_with("/case.json")).count();
        let counted: usize = embedded.readers.values().map(|a| a.cases).sum();
        assert_eq!(cases, counted + embedded.writers.scenarios);
    }

    #[test]
    fn extract_refuses_a_directory_that_is_not_empty() {
        let dir = std::env::temp_dir().join(format!("pi-session-extract-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mine"), "keep").unwrap();
        let err = extract(&dir).unwrap_err();
        assert!(
            err.contains("not empty") && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(dir.join("mine")).unwrap(), "keep");
        std::fs::remove_dir_all(&dir).unwrap();
        extract(&dir).unwrap();
        assert_eq!(Manifest::of_dir(&dir), Some(Manifest::embedded()));
        assert!(dir.join("cases/context").is_dir());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
