//! A tree of sessions as pi keeps them, for the many-file benchmarks (`stats`, listing):
//! `DIR/--<encoded cwd>--/<timestamp>_<id>.jsonl`, sizes spread between a fifth and nine
//! fifths of the mean, and every tenth session a fork of an earlier one, written as pi's
//! `forkFrom` writes it (a new header an hour after the parent's, naming it in
//! `parentSession`, then the parent's entries as they are).

use super::rng::Rng;
use super::{FileVersion, Limit, Options, generate_to_vec};
use pi_session_format::date;
pub use pi_session_format::write::session_dir_name;
use std::io;
use std::path::{Path, PathBuf};

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct TreeOptions {
    /// How many session files.
    pub files: u64,
    /// About how many bytes in all.
    pub bytes: u64,
    /// The PRNG seed: the same options give the same tree.
    pub seed: u64,
}

/// What was generated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeStats {
    /// Files written.
    pub files: u64,
    /// Of which forks.
    pub forks: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// The header's member `key` as a string (the generator writes them plainly).
fn header_string<'t>(header: &'t str, key: &str) -> &'t str {
    let needle = format!("\"{key}\":\"");
    header
        .find(&needle)
        .map(|at| {
            let rest = &header[at + needle.len()..];
            &rest[..rest.find('"').unwrap_or(rest.len())]
        })
        .unwrap_or_default()
}

fn file_for(dir: &Path, cwd: &str, timestamp: &str, id: &str) -> PathBuf {
    dir.join(session_dir_name(cwd))
        .join(format!("{}_{id}.jsonl", timestamp.replace([':', '.'], "-")))
}

/// Writes the tree under `dir`.
pub fn generate_tree(dir: &Path, options: &TreeOptions) -> io::Result<TreeStats> {
    let mut rng = Rng::new(options.seed ^ 0x7472_6565);
    let mean = (options.bytes / options.files.max(1)).max(2048);
    let mut stats = TreeStats::default();
    let mut written: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for i in 0..options.files {
        let fork_of = (i % 10 == 9 && !written.is_empty()).then(|| rng.urange(0, written.len()));
        let (path, bytes) = if let Some(j) = fork_of {
            let (parent_path, parent) = &written[j];
            let text = String::from_utf8_lossy(parent);
            let (header, rest) = text.split_once('\n').unwrap_or((&text, ""));
            let cwd = header_string(header, "cwd");
            let created = date::parse_date(header_string(header, "timestamp")) + 3_600_000.0;
            let timestamp = date::to_iso_string(created);
            let id = format!(
                "{:08x}-{:04x}-7{:03x}-8{:03x}-{:012x}",
                rng.next_u64() as u32,
                rng.below(1 << 16),
                rng.below(1 << 12),
                rng.below(1 << 12),
                rng.next_u64() >> 16
            );
            let parent_abs = std::path::absolute(parent_path)?;
            let mut fork = format!(
                r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{timestamp}","cwd":"{cwd}","parentSession":"{}"}}"#,
                parent_abs.display()
            )
            .into_bytes();
            fork.push(b'\n');
            fork.extend_from_slice(rest.as_bytes());
            stats.forks += 1;
            (file_for(dir, cwd, &timestamp, &id), fork)
        } else {
            let size = mean / 5 + rng.below(mean * 8 / 5);
            let (bytes, _) = generate_to_vec(&Options {
                seed: options.seed.wrapping_mul(1_000_003).wrapping_add(i),
                version: FileVersion::V3,
                limit: Limit::Bytes(size),
                linear: false,
            });
            let text = String::from_utf8_lossy(&bytes);
            let header = text.split_once('\n').map_or(&*text, |(h, _)| h);
            let path = file_for(
                dir,
                header_string(header, "cwd"),
                header_string(header, "timestamp"),
                header_string(header, "id"),
            );
            (path, bytes)
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, &bytes)?;
        stats.files += 1;
        stats.bytes += bytes.len() as u64;
        if fork_of.is_none() {
            written.push((path, bytes));
            // Keep only the last few hundred sessions as fork parents, so memory stays flat.
            if written.len() > 256 {
                written.remove(0);
            }
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_has_pi_s_layout_and_forks() {
        let dir = std::env::temp_dir().join(format!("testkit-tree-{}", std::process::id()));
        let stats = generate_tree(
            &dir,
            &TreeOptions {
                files: 20,
                bytes: 400_000,
                seed: 1,
            },
        )
        .expect("writes");
        assert_eq!((stats.files, stats.forks), (20, 2));
        let mut files = Vec::new();
        for project in std::fs::read_dir(&dir).expect("dir") {
            let project = project.expect("entry").path();
            let name = project
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            assert!(name.starts_with("--") && name.ends_with("--"), "{name}");
            for f in std::fs::read_dir(&project).expect("dir") {
                files.push(f.expect("entry").path());
            }
        }
        assert_eq!(files.len(), 20);
        let forks = files
            .iter()
            .filter(|f| {
                std::fs::read_to_string(f)
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .is_some_and(|h| h.contains("\"parentSession\""))
            })
            .count();
        assert_eq!(forks, 2);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn directory_names_follow_pi() {
        assert_eq!(
            session_dir_name("/Users/sam/webapp"),
            "--Users-sam-webapp--"
        );
        assert_eq!(session_dir_name("C:\\work"), "--C--work--");
    }
}
