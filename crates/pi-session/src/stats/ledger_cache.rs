//! The ledger kept between runs of `pi-session stats`: where the report's additions stood
//! after the sessions that no longer change ([`ledger::Checkpoint`]), so that a later run
//! adds up only the sessions after them, in the same order, to the same bits.
//!
//! The stats cache (`cache.rs`) keeps what each file gave; a run still adds up every fact of
//! every file, in order (the costs are doubles: adding pre-summed parts would change their
//! last bits). The ledger is taken in [`ledger::session_order`] (creation time, then path),
//! and a session pi is still writing is nearly always the newest, so the sessions before it
//! can be added up once and kept. Kept after the longest run of sessions, in that order,
//! whose files are [`Stamp::settled`] (unchanged for ten minutes), with each file's key,
//! stamp and name as given; taken again only when every one of those files is there once,
//! unchanged and named the same, and every other session counted comes after them in the
//! order. Anything else (a kept file changed, gone or reached twice, a new session created
//! before them) and the run adds up everything, as without it.
//!
//! One file per stats cache file, grouping, dedupe and range-or-not, beside it
//! (`…-ledger-day-dedupe-all.bin`): the options it was taken with (a range must be the same
//! to the bit), the kept files, with [`GroupBy::Session`] their summaries (the JSON report's
//! `id`, `cwd`, `created` and pi's own numbers), the checkpoint, and the XXH3-128 of all of
//! it; a file that does not check out is ignored and replaced.

use super::cache::{Reader, put_f64, put_own, put_str, put_usage};
use crate::cache::{self, Stamp};
use pi_session_format::stats::ledger::{self, Checkpoint, GroupBy, Options, Tally};
use pi_session_format::stats::report::{Counted, Earlier, OwnStats, SessionSummary};
use rustc_hash::FxHashMap as HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use twox_hash::XxHash3_128;

/// The first bytes of the file.
const MAGIC: &[u8; 16] = b"pi-session ledgr";

/// The file's format; a file of another version is ignored (and replaced).
const VERSION: u32 = 1;

/// One file whose session is added up in the kept ledger.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KeptFile {
    /// Its path as the caches name it ([`cache::key`]).
    pub(super) key: String,
    /// Its stamp when it was added up.
    pub(super) stamp: Stamp,
    /// Its path as it was given (walked or named), whose display names the session.
    pub(super) given: Vec<u8>,
    /// The session's name in the report (its group by session; the order's tie-break).
    pub(super) shown: String,
    /// The header's creation time (ms; NaN when not a date).
    pub(super) created_ms: f64,
}

/// The ledger kept for one set of options, as read at the start of a run.
pub(super) struct LedgerCache {
    /// Where it is kept (none: not kept, `--no-cache`).
    file: Option<PathBuf>,
    options: Options,
    /// The files added up, in order.
    files: Vec<KeptFile>,
    /// Their places, by the hash of their keys.
    by_key: hashbrown::HashTable<usize>,
    earlier: Option<Earlier>,
}

impl LedgerCache {
    /// The ledger kept beside the stats cache file `stats_file` for `options` (none: no
    /// ledger kept).
    pub(super) fn open(stats_file: Option<&Path>, options: &Options) -> LedgerCache {
        let file = stats_file.and_then(|f| {
            let name = f.file_name()?.to_str()?.strip_suffix(".bin")?;
            Some(f.with_file_name(format!(
                "{name}-ledger-{}-{}-{}.bin",
                options.by.name(),
                if options.no_dedupe { "raw" } else { "dedupe" },
                if options.since_ms.is_some() || options.until_ms.is_some() {
                    "range"
                } else {
                    "all"
                }
            )))
        });
        let mut kept = LedgerCache {
            file,
            options: options.clone(),
            files: Vec::new(),
            by_key: hashbrown::HashTable::new(),
            earlier: None,
        };
        let read = kept.file.as_deref().and_then(cache::load).and_then(|data| {
            let read = decode(data.bytes(), options);
            data.verify().ok().and(read)
        });
        if let Some((files, earlier)) = read {
            let mut by_key: hashbrown::HashTable<usize> =
                hashbrown::HashTable::with_capacity(files.len());
            for (at, file) in files.iter().enumerate() {
                let hash = key_hash(&file.key);
                match by_key.entry(
                    hash,
                    |&i| files[i].key == file.key,
                    |&i| key_hash(&files[i].key),
                ) {
                    hashbrown::hash_table::Entry::Vacant(v) => {
                        v.insert(at);
                    }
                    // A key twice: not a file this module wrote.
                    hashbrown::hash_table::Entry::Occupied(_) => return kept,
                }
            }
            kept.by_key = by_key;
            kept.files = files;
            kept.earlier = Some(earlier);
        }
        kept
    }

    /// No ledger kept: every session is added up, nothing is kept.
    pub(super) fn none() -> LedgerCache {
        LedgerCache {
            file: None,
            options: Options::default(),
            files: Vec::new(),
            by_key: hashbrown::HashTable::new(),
            earlier: None,
        }
    }

    /// The place of the file `key`, given as `given`, among those added up in the kept
    /// ledger, when its stamp is still `stamp`.
    pub(super) fn holds(&self, key: &str, stamp: &Stamp, given: &Path) -> Option<usize> {
        let at = *self
            .by_key
            .find(key_hash(key), |&i| self.files[i].key == key)?;
        let file = &self.files[at];
        (file.stamp == *stamp && file.given == given.as_os_str().as_bytes()).then_some(at)
    }

    /// The kept ledger, when the run may go on from it: `found` are the places [`holds`]
    /// gave the files of this run, `counted` the sessions counted besides. Every kept file
    /// must have been found, once, and every session counted must come after the last of
    /// them in [`ledger::session_order`]. Taken (a second call gives `None`).
    ///
    /// [`holds`]: LedgerCache::holds
    pub(super) fn take(&mut self, found: &[usize], counted: &[&Counted]) -> Option<Earlier> {
        let earlier = self.earlier.take()?;
        let mut seen = vec![false; self.files.len()];
        for &at in found {
            if std::mem::replace(seen.get_mut(at)?, true) {
                return None;
            }
        }
        if !seen.iter().all(|&s| s) {
            return None;
        }
        let after_all = |c: &&Counted| {
            self.files.last().is_none_or(|last| {
                ledger::session_order(
                    (last.created_ms, &last.shown),
                    (c.facts.created_ms, &c.facts.path),
                )
                .is_lt()
            })
        };
        counted.iter().all(after_all).then_some(earlier)
    }

    /// Keeps the ledger after the sessions it was resumed from (`resumed`: the run went on
    /// from them) and those of `added` ([`StatsReport::after`]'s checkpoint and the paths of
    /// the sessions it adds, each of which has its file in `files`, by path), with the
    /// summaries of `sessions` (the report's). Without anything added, a kept ledger the run
    /// could not go on from is removed. Errors are ignored (a cache only saves time).
    ///
    /// [`StatsReport::after`]: pi_session_format::stats::report::StatsReport::after
    pub(super) fn save(
        self,
        resumed: bool,
        added: Option<(Checkpoint, Vec<String>)>,
        files: &HashMap<&str, KeptFile>,
        sessions: &std::collections::HashMap<String, SessionSummary>,
    ) {
        let Some(file) = self.file.as_deref() else {
            return;
        };
        let Some((checkpoint, paths)) = added else {
            if !resumed {
                let _ = std::fs::remove_file(file);
            }
            return;
        };
        let mut kept = if resumed { self.files } else { Vec::new() };
        for path in &paths {
            match files.get(path.as_str()) {
                Some(f) => kept.push(f.clone()),
                None => return,
            }
        }
        if kept.len() as u64 != checkpoint.sessions {
            return;
        }
        let summaries: Option<Vec<&SessionSummary>> = (self.options.by == GroupBy::Session)
            .then(|| kept.iter().map(|f| sessions.get(&f.shown)).collect())
            .flatten();
        if self.options.by == GroupBy::Session && summaries.is_none() {
            return;
        }
        if let Some(bytes) = encode(&self.options, &kept, summaries.as_deref(), &checkpoint) {
            cache::store(file, &bytes);
        }
    }
}

/// The file of a ledger taken with `options` after the sessions of `files` (with their
/// summaries, by session), `None` when a summary is not pi's own numbers (not kept).
fn encode(
    options: &Options,
    files: &[KeptFile],
    summaries: Option<&[&SessionSummary]>,
    checkpoint: &Checkpoint,
) -> Option<Vec<u8>> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    put_options(&mut out, options);
    out.extend_from_slice(&(files.len() as u64).to_le_bytes());
    for f in files {
        put_str(&mut out, &f.key);
        out.extend_from_slice(&f.stamp.to_bytes());
        put_bytes(&mut out, &f.given);
        put_str(&mut out, &f.shown);
        put_f64(&mut out, f.created_ms);
    }
    match summaries {
        None => out.push(0),
        Some(summaries) => {
            out.push(1);
            for s in summaries {
                let OwnStats::Pi(own) = &s.own else {
                    return None;
                };
                put_str(&mut out, &s.id);
                put_str(&mut out, &s.cwd);
                put_f64(&mut out, s.created_ms);
                put_own(&mut out, own);
            }
        }
    }
    out.extend_from_slice(&checkpoint.sessions.to_le_bytes());
    out.extend_from_slice(&(checkpoint.groups.len() as u64).to_le_bytes());
    for (name, tally) in &checkpoint.groups {
        put_str(&mut out, name);
        put_tally(&mut out, tally);
    }
    out.extend_from_slice(&(checkpoint.seen.len() as u64).to_le_bytes());
    for key in &checkpoint.seen {
        out.extend_from_slice(&key.to_le_bytes());
    }
    put_tally(&mut out, &checkpoint.copies);
    out.extend_from_slice(&checkpoint.forked_sessions.to_le_bytes());
    out.extend_from_slice(&checkpoint.counted_sessions.to_le_bytes());
    let sum = XxHash3_128::oneshot(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    Some(out)
}

/// A ledger file read back: its files and the ledger after them; `None` unless it checks out
/// (its hash, its version) and was taken with `options`.
fn decode(data: &[u8], options: &Options) -> Option<(Vec<KeptFile>, Earlier)> {
    let body = data.len().checked_sub(16)?;
    if XxHash3_128::oneshot(&data[..body]).to_le_bytes() != data[body..] {
        return None;
    }
    let mut r = Reader {
        data: &data[..body],
        at: 0,
    };
    if r.take(MAGIC.len())? != MAGIC || r.take(4)? != VERSION.to_le_bytes() {
        return None;
    }
    let mut wanted = Vec::new();
    put_options(&mut wanted, options);
    if r.take(wanted.len())? != wanted {
        return None;
    }
    // Every count is bounded by what is left to read: a count beyond it is not believed.
    let count = |r: &mut Reader<'_>, least: usize| {
        let n = usize::try_from(r.u64()?).ok()?;
        (n <= (r.data.len() - r.at) / least).then_some(n)
    };
    let n = count(&mut r, 8 + Stamp::LEN + 8 + 8 + 8)?;
    let mut files = Vec::with_capacity(n);
    for _ in 0..n {
        files.push(KeptFile {
            key: r.str()?.to_owned(),
            stamp: Stamp::from_bytes(r.take(Stamp::LEN)?)?,
            given: r.bytes()?.to_vec(),
            shown: r.str()?.to_owned(),
            created_ms: r.f64()?,
        });
    }
    let mut sessions = Vec::new();
    match r.u8()? {
        0 => {}
        1 => {
            sessions.reserve(n);
            for f in &files {
                let summary = SessionSummary {
                    id: r.str()?.to_owned(),
                    cwd: r.str()?.to_owned(),
                    created_ms: r.f64()?,
                    own: OwnStats::Pi(r.own()?),
                };
                sessions.push((f.shown.clone(), summary));
            }
        }
        _ => return None,
    }
    let kept_sessions = r.u64()?;
    let groups_len = count(&mut r, 8)?;
    let mut groups = Vec::with_capacity(groups_len);
    for _ in 0..groups_len {
        groups.push((r.str()?.to_owned(), tally(&mut r)?));
    }
    let seen_len = count(&mut r, 8)?;
    let seen: Vec<u64> = r
        .take(seen_len * 8)?
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    let checkpoint = Checkpoint {
        sessions: kept_sessions,
        groups,
        seen,
        copies: tally(&mut r)?,
        forked_sessions: r.u64()?,
        counted_sessions: r.u64()?,
    };
    let whole = r.at == r.data.len()
        && checkpoint.sessions == files.len() as u64
        && checkpoint.seen.is_sorted();
    whole.then_some((
        files,
        Earlier {
            checkpoint,
            sessions,
        },
    ))
}

fn key_hash(key: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(key.as_bytes())
}

fn put_options(out: &mut Vec<u8>, options: &Options) {
    put_str(out, options.by.name());
    out.push(u8::from(options.no_dedupe));
    for bound in [options.since_ms, options.until_ms] {
        match bound {
            Some(ms) => {
                out.push(1);
                put_f64(out, ms);
            }
            None => out.push(0),
        }
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_tally(out: &mut Vec<u8>, t: &Tally) {
    for n in [
        t.sessions,
        t.user_messages,
        t.assistant_messages,
        t.tool_calls,
        t.tool_results,
        t.messages,
        t.compactions,
        t.branch_summaries,
        t.usage_entries,
        t.unreadable,
    ] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    for u in [&t.message_usage, &t.summary_usage, &t.usage_entry_usage] {
        put_usage(out, u);
    }
}

fn tally(r: &mut Reader<'_>) -> Option<Tally> {
    Some(Tally {
        sessions: r.u64()?,
        user_messages: r.u64()?,
        assistant_messages: r.u64()?,
        tool_calls: r.u64()?,
        tool_results: r.u64()?,
        messages: r.u64()?,
        compactions: r.u64()?,
        branch_summaries: r.u64()?,
        usage_entries: r.u64()?,
        unreadable: r.u64()?,
        message_usage: r.usage()?,
        summary_usage: r.usage()?,
        usage_entry_usage: r.usage()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Options {
        Options {
            by: GroupBy::Day,
            since_ms: Some(1.5),
            until_ms: None,
            no_dedupe: false,
        }
    }

    fn kept() -> (Vec<KeptFile>, Checkpoint) {
        let stamp = Stamp::from_bytes(&[7; Stamp::LEN]).unwrap();
        let files = vec![KeptFile {
            key: "/s/a.jsonl".into(),
            stamp,
            given: b"s/a.jsonl".to_vec(),
            shown: "s/a.jsonl".into(),
            created_ms: 3.0,
        }];
        let tally = Tally {
            sessions: 1,
            messages: 2,
            ..Tally::default()
        };
        let checkpoint = Checkpoint {
            sessions: 1,
            groups: vec![("2026-01-01".into(), tally.clone())],
            seen: vec![1, 5, 9],
            copies: tally,
            forked_sessions: 0,
            counted_sessions: 1,
        };
        (files, checkpoint)
    }

    #[test]
    fn a_ledger_file_reads_back_only_as_it_was_written_and_for_its_options() {
        let (files, checkpoint) = kept();
        let bytes = encode(&options(), &files, None, &checkpoint).unwrap();
        let (read, earlier) = decode(&bytes, &options()).unwrap();
        assert_eq!(read, files);
        assert_eq!(earlier.checkpoint, checkpoint);
        // Other options (a range one bit off, another grouping): not taken.
        let other = Options {
            since_ms: Some(f64::from_bits(1.5f64.to_bits() + 1)),
            ..options()
        };
        assert!(decode(&bytes, &other).is_none());
        let by_month = Options {
            by: GroupBy::Month,
            ..options()
        };
        assert!(decode(&bytes, &by_month).is_none());
        // Any byte changed, or the file cut short: not taken.
        for at in [0, 20, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 1;
            assert!(decode(&bad, &options()).is_none(), "byte {at}");
        }
        assert!(decode(&bytes[..bytes.len() - 1], &options()).is_none());
        assert!(decode(&[], &options()).is_none());
    }
}
