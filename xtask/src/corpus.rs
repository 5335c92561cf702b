//! `cargo xtask corpus [--check]`: the corpus shipped inside `pi-session-conformance`
//! (`crates/pi-session-conformance/corpus/`, read by its `embedded` module).
//!
//! - `cargo xtask corpus` packs `conformance/RULES.md`, `FORMAT.md`, `cases/` and `writers/`
//!   (every file but generators, `*.py`) into `corpus.tar.zst` with a `MANIFEST.json` (also
//!   written beside it): the corpus version, the pi releases, the cases per area and the writer
//!   runs per release;
//! - `cargo xtask corpus --check` writes nothing and fails when the committed archive's files
//!   or manifest differ from `conformance/`'s (compared decompressed, so another zstd build
//!   does not matter).
//!
//! The archive is deterministic: files in path order, owner 0, mode 0644, time 0.

use crate::root;
use pi_session_conformance::corpus;
use pi_session_conformance::embedded::{self, AreaCount, MANIFEST_FILE, Manifest, WriterCount};
use pi_session_conformance::writers;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    match args {
        [] => write(),
        ["--check"] => check(),
        _ => Err(format!("unknown corpus arguments\n{}", crate::USAGE)),
    }
}

fn out_dir() -> PathBuf {
    root().join("crates/pi-session-conformance/corpus")
}

/// The corpus's files: archive path → contents, in path order.
fn files() -> Result<BTreeMap<String, Vec<u8>>, String> {
    let conformance = root().join("conformance");
    let mut files = BTreeMap::new();
    for name in ["RULES.md", "FORMAT.md"] {
        let path = conformance.join(name);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        files.insert(name.to_owned(), bytes);
    }
    for dir in ["cases", "writers"] {
        collect(&conformance.join(dir), dir, &mut files)?;
    }
    Ok(files)
}

fn collect(dir: &Path, prefix: &str, files: &mut BTreeMap<String, Vec<u8>>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.ends_with(".py") || name == "__pycache__" {
            continue;
        }
        let path = entry.path();
        let archived = format!("{prefix}/{name}");
        if path.is_dir() {
            collect(&path, &archived, files)?;
        } else {
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            files.insert(archived, bytes);
        }
    }
    Ok(())
}

fn manifest(files: &BTreeMap<String, Vec<u8>>) -> Result<Manifest, String> {
    let conformance = root().join("conformance");
    let cases = corpus::load_cases(&conformance.join("cases")).map_err(|e| e.to_string())?;
    let mut readers: BTreeMap<String, AreaCount> = BTreeMap::new();
    let mut pi = BTreeSet::new();
    for case in &cases {
        let area = case.area().to_owned();
        let count = readers.entry(area.clone()).or_insert_with(|| AreaCount {
            cases: 0,
            operations: 0,
            tier: if area == "divergence" {
                "divergence"
            } else {
                "spec"
            }
            .into(),
        });
        count.cases += 1;
        count.operations += case.ops().len();
        let release: pi_session_format::PiVersion =
            case.pi().parse().map_err(|e| format!("{}: {e}", case.id))?;
        pi.insert(release.to_string());
    }
    let scenarios = writers::load_scenarios(&conformance.join("writers"))?;
    let mut runs = BTreeMap::new();
    for scenario in &scenarios {
        for profile in &scenario.profiles {
            pi.insert(profile.to_string());
            *runs.entry(profile.to_string()).or_insert(0) += 1;
        }
    }
    let fingerprint = embedded::fingerprint(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    let mut pi: Vec<String> = pi.into_iter().collect();
    pi.sort_by_key(|v| {
        v.split('.')
            .map(|n| n.parse::<u32>().unwrap_or(0))
            .collect::<Vec<_>>()
    });
    Ok(Manifest {
        corpus: "the pi session format's conformance corpus (pi-session-format)".into(),
        version: format!("{}+{fingerprint}", embedded::CRATE_VERSION),
        fingerprint,
        pi,
        readers,
        writers: WriterCount {
            scenarios: scenarios.len(),
            runs,
            javascript_only: scenarios
                .iter()
                .filter(|s| s.javascript_only.is_some())
                .count(),
        },
    })
}

/// The tar archive of `files` and the manifest (last).
fn tar(files: &BTreeMap<String, Vec<u8>>, manifest: &Manifest) -> Result<Vec<u8>, String> {
    let manifest = manifest.to_json();
    let mut builder = tar::Builder::new(Vec::new());
    let all = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .chain([(MANIFEST_FILE, manifest.as_bytes())]);
    for (path, bytes) in all {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, path, bytes)
            .map_err(|e| format!("{path}: {e}"))?;
    }
    builder.into_inner().map_err(|e| e.to_string())
}

fn build() -> Result<(Vec<u8>, Manifest), String> {
    let files = files()?;
    let manifest = manifest(&files)?;
    Ok((tar(&files, &manifest)?, manifest))
}

fn write() -> Result<(), String> {
    let (tar, manifest) = build()?;
    let compressed = zstd::bulk::compress(&tar, 19).map_err(|e| e.to_string())?;
    let dir = out_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join("corpus.tar.zst"), &compressed)
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::write(dir.join(MANIFEST_FILE), manifest.to_json())
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    eprintln!(
        "corpus {}: {} bytes packed into {} ({} compressed)",
        manifest.version,
        tar.len(),
        dir.join("corpus.tar.zst").display(),
        compressed.len()
    );
    Ok(())
}

fn check() -> Result<(), String> {
    let (tar, manifest) = build()?;
    let dir = out_dir();
    let committed = std::fs::read(dir.join("corpus.tar.zst"))
        .map_err(|e| format!("{}: {e}", dir.join("corpus.tar.zst").display()))?;
    let mut unpacked = Vec::new();
    zstd::stream::read::Decoder::new(committed.as_slice())
        .and_then(|mut d| d.read_to_end(&mut unpacked))
        .map_err(|e| format!("corpus.tar.zst: {e}"))?;
    let committed_manifest = std::fs::read_to_string(dir.join(MANIFEST_FILE)).unwrap_or_default();
    if unpacked != tar || committed_manifest != manifest.to_json() {
        return Err(format!(
            "{} is stale: conformance/ changed since it was packed (now {}, packed {}); run `cargo xtask corpus` and commit it",
            dir.display(),
            manifest.version,
            Manifest::of_dir(&dir).map_or_else(|| "unreadable".into(), |m| m.version)
        ));
    }
    eprintln!("corpus {} is up to date", manifest.version);
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `cargo xtask corpus --check` as a test: a change to `conformance/` that was not packed
    /// fails `cargo test` too, not only CI.
    #[test]
    fn the_embedded_corpus_is_up_to_date() {
        if let Err(e) = super::check() {
            panic!("{e}");
        }
    }
}
