//! The stats cache of `pi-session stats`: what counting each file gave (its header's id,
//! cwd, creation time and parent, pi's own numbers, the facts of its entries with the keys
//! the dedupe of forks needs) kept with the file's [`Stamp`], so that a later run reads only
//! the files that changed, and of a file that only grew, counts only the lines appended.
//!
//! A file counts as unchanged when its stamp is the one kept (`crate::cache`'s rules, shared
//! with `ls`: device, inode, size, modification and change times, not kept while racy). A
//! file *only grew* when it is the same file (device and inode), larger, and its first bytes,
//! as many as were counted, hash to what was kept (XXH3-128 of all of them: reading them
//! again is cheap, parsing them is what costs). Then the header line kept and the new lines
//! are loaded as one session and their facts added to the kept ones. This is taken only where
//! it gives what a full read gives: pi's rules of 0.87.1 and later (every entry counts, each
//! on its own), pi's dialect (no omp entry type in the new lines when the dialect is told
//! from the file), a v3 header (nothing migrated) and counted bytes that ended with a newline
//! (a torn last line is read again with the rest). Anything else, an oh-my-pi file, and any
//! doubt, is a full read.
//!
//! One binary file per pi version's rules and `--dialect`, in `$XDG_CACHE_HOME/pi-session/`,
//! ending with the XXH3-128 of everything before it: a file that does not check out (another
//! version, truncated, corrupt) is ignored whole, and replaced. It is written only when
//! something changed.

use crate::cache::{self, Stamp};
use pi_session_format::dialect::omp_entry_type;
use pi_session_format::stats::ledger::{Fact, Kind, Role, SessionFacts};
use pi_session_format::stats::report::{Counted, OwnStats, Skipped};
use pi_session_format::stats::{SessionStats, Usage};
use pi_session_format::{Dialect, PiVersion, Session};
use pi_session_fs::discover::Target;
use pi_session_fs::input::Input;
use rustc_hash::FxHashMap as HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use twox_hash::XxHash3_128;

/// The cache's format; a file of another version is ignored (and replaced).
const VERSION: u32 = 1;

/// The first bytes of the cache file.
const MAGIC: &[u8; 16] = b"pi-session stats";

/// One kept file in the loaded cache: its stamp and where its entry is.
struct Slot {
    stamp: Stamp,
    entry: Range<usize>,
}

/// The cache, as read at the start of a run.
pub(super) struct StatsCache {
    file: Option<PathBuf>,
    /// The cache file as read (mapped when large: a run reads the pages of the entries it
    /// takes, and of its index); `None` when there is none that checks out.
    data: Option<Input>,
    slots: HashMap<String, Slot>,
    /// The paths counted (absolute): a kept file under one of them that was not counted is gone.
    roots: Vec<PathBuf>,
}

/// What to keep of one counted file.
pub(super) enum Keep {
    /// Nothing (not a file, not counted, changed while read, oh-my-pi).
    Nothing,
    /// The entry already kept, as it is (the file is unchanged, or changed within the racy
    /// window: the kept entry is still what its stamp says).
    Old(String),
    /// A new entry.
    New(String, Stamp, Vec<u8>),
}

/// One file counted, and what to keep of it.
pub(super) struct Read {
    pub(super) result: Result<Counted, Skipped>,
    pub(super) keep: Keep,
}

impl StatsCache {
    /// The cache for `pi`'s rules and `dialect` (`None` when `enabled` is not: `--no-cache`);
    /// `roots` are the paths counted.
    pub(super) fn open(
        pi: PiVersion,
        dialect: Option<Dialect>,
        enabled: bool,
        roots: &[PathBuf],
    ) -> StatsCache {
        let dialect = dialect.map_or("auto", Dialect::name);
        let file = enabled
            .then(|| cache::file(&format!("stats-v{VERSION}-{pi}-{dialect}.bin")))
            .flatten();
        StatsCache::at(file, roots)
    }

    /// The cache kept in `file` (none: no cache).
    fn at(file: Option<PathBuf>, roots: &[PathBuf]) -> StatsCache {
        let data = file
            .as_deref()
            .and_then(cache::load)
            .filter(|d| checks_out(d.bytes()));
        let slots = data
            .as_ref()
            .and_then(|d| index(d.bytes()))
            .unwrap_or_default();
        StatsCache {
            file,
            data,
            slots,
            roots: roots
                .iter()
                .filter_map(|r| std::path::absolute(r).ok())
                .collect(),
        }
    }

    /// The cache file's bytes (none when there is none).
    fn bytes(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], Input::bytes)
    }

    /// Whether what was read from the cache file is what it held: `false` when another
    /// program truncated it while it was read (what was read past its new end is zeros);
    /// then nothing taken from it is to be trusted, or kept.
    pub(super) fn intact(&self) -> bool {
        self.data.as_ref().is_none_or(|d| d.verify().is_ok())
    }

    /// Counts `target` with `pi`'s rules in `dialect` as [`Counted::read_target`] does, from
    /// the cache where the file is unchanged, reading only its new lines where it only grew.
    /// A kept file none of whose entries is in `range` (the `--since` and `--until` bounds,
    /// ms) is taken without its facts: the report would leave every one of them out.
    pub(super) fn read(
        &self,
        target: &Target,
        pi: PiVersion,
        dialect: Option<Dialect>,
        range: Range<Option<f64>>,
    ) -> Read {
        let enabled = self.file.is_some();
        let key_stamp = target
            .path()
            .filter(|_| enabled)
            .and_then(|p| Some((cache::key(p)?, Stamp::of_file(p)?)));
        let Some((key, stamp)) = key_stamp else {
            return Read {
                result: Counted::read_target(target, pi, dialect),
                keep: Keep::Nothing,
            };
        };
        let shown = target.display();
        let slot = self.slots.get(&key);
        if let Some(slot) = slot
            && let Some(entry) = self.bytes().get(slot.entry.clone())
        {
            if slot.stamp == stamp {
                if let Some((_, counted)) = decode(entry, &shown, &range) {
                    return Read {
                        result: Ok(counted),
                        keep: Keep::Old(key),
                    };
                }
            } else if slot.stamp.same_file(&stamp)
                && stamp.size() > slot.stamp.size()
                && let Some((Some(grow), counted)) = decode(entry, &shown, &(None..None))
                && let Some(read) = self.grown(target, &key, stamp, slot, grow, counted, pi)
            {
                return read;
            }
        }
        let old = slot.map(|_| Keep::Old(key.clone()));
        let read = target.read_with(|input| {
            let loader = Session::loader(pi).with_dialect(dialect);
            let session = match loader.load_input(input) {
                Ok(session) => session,
                Err(e) => return (Err(Skipped::new(&shown, e)), None),
            };
            let counted = match Counted::of(&session, &shown) {
                Ok(counted) => counted,
                Err(e) => return (Err(Skipped::new(&shown, e)), None),
            };
            let entry = (!stamp.is_racy() && input.bytes().len() as u64 == stamp.size())
                .then(|| encode(&counted, grow_of(&session, input).as_ref()))
                .flatten();
            (Ok(counted), entry)
        });
        match read {
            Ok((result, entry)) => {
                let keep = match entry {
                    Some(entry) if Stamp::of_file(Path::new(&key)) == Some(stamp) => {
                        Keep::New(key, stamp, entry)
                    }
                    _ => old.unwrap_or(Keep::Nothing),
                };
                Read { result, keep }
            }
            Err(e) => Read {
                result: Err(Skipped::new(&shown, e)),
                keep: Keep::Nothing,
            },
        }
    }

    /// The file of `slot` grew to `stamp`: when its first bytes are those counted, only the
    /// new lines are counted, added to `counted`. `None`: read it whole.
    #[allow(clippy::too_many_arguments)]
    fn grown(
        &self,
        target: &Target,
        key: &str,
        stamp: Stamp,
        slot: &Slot,
        grow: Grow<'_>,
        mut counted: Counted,
        pi: PiVersion,
    ) -> Option<Read> {
        if !pi.reads_like_0_87() {
            return None;
        }
        let counted_len = usize::try_from(slot.stamp.size()).ok()?;
        let detect = self.dialect_detected();
        let shown = target.display();
        let read = target.read_with(|input| {
            let bytes = input.bytes();
            if bytes.len() < counted_len {
                return None;
            }
            // The hash of the bytes counted, then (the same hasher going on) of the whole file.
            let mut hasher = XxHash3_128::new();
            input.for_each_piece(0..counted_len, |piece| hasher.write(piece));
            if hasher.finish_128() != grow.hash {
                return None;
            }
            let tail = &bytes[counted_len..];
            let mut joined = Vec::with_capacity(grow.header.len() + 1 + tail.len());
            joined.extend_from_slice(grow.header.as_bytes());
            joined.push(b'\n');
            joined.extend_from_slice(tail);
            let session = Session::loader(pi)
                .with_dialect(Some(Dialect::Pi))
                .load(&joined)
                .ok()?;
            if session.version.migrated_v1
                || session.version.migrated_v2
                || (detect && omp_entry_type(session.entry_records()).is_some())
            {
                return None;
            }
            let new = SessionFacts::of(&session, &shown).facts;
            counted.facts.facts.extend(new);
            counted.own = OwnStats::Pi(counted.facts.pi_stats());
            let whole = bytes.len() as u64 == stamp.size() && !stamp.is_racy();
            let next = bytes.ends_with(b"\n").then(|| {
                input.for_each_piece(counted_len..bytes.len(), |piece| hasher.write(piece));
                Grow {
                    hash: hasher.finish_128(),
                    header: grow.header,
                }
            });
            let entry = whole.then(|| encode(&counted, next.as_ref())).flatten();
            Some((counted, entry))
        });
        let (counted, entry) = read.ok()??;
        let keep = match entry {
            Some(entry) if Stamp::of_file(Path::new(key)) == Some(stamp) => {
                Keep::New(key.to_owned(), stamp, entry)
            }
            _ => Keep::Old(key.to_owned()),
        };
        Some(Read {
            result: Ok(counted),
            keep,
        })
    }

    /// Whether the dialect is told from each file (no `--dialect`): the file name says.
    fn dialect_detected(&self) -> bool {
        self.file
            .as_deref()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("-auto.bin"))
    }

    /// Writes the cache when something changed: what this run kept, and the entries of files
    /// it did not count that are outside the paths it counted and still there. Errors are
    /// ignored (a cache only saves time).
    pub(super) fn save(self, kept: Vec<Keep>) {
        let Some(file) = self.file.as_deref().filter(|_| self.intact()) else {
            return;
        };
        let mut changed = false;
        let mut used: HashMap<&str, ()> =
            HashMap::with_capacity_and_hasher(kept.len(), Default::default());
        // What to write (found before anything is built: most runs write nothing).
        let mut entries: Vec<(&str, Stamp, &[u8])> = Vec::with_capacity(kept.len());
        for keep in &kept {
            match keep {
                Keep::Nothing => {}
                Keep::Old(key) => {
                    if let Some(slot) = self.slots.get(key)
                        && let Some(entry) = self.bytes().get(slot.entry.clone())
                        && used.insert(key, ()).is_none()
                    {
                        entries.push((key, slot.stamp, entry));
                    }
                }
                Keep::New(key, stamp, entry) => {
                    if used.insert(key, ()).is_none() {
                        entries.push((key, *stamp, entry));
                        changed = true;
                    }
                }
            }
        }
        for (key, slot) in &self.slots {
            if used.contains_key(key.as_str()) {
                continue;
            }
            let path = Path::new(key);
            let gone =
                self.roots.iter().any(|r| path.starts_with(r)) || Stamp::of_file(path).is_none();
            if gone {
                changed = true;
            } else if let Some(entry) = self.bytes().get(slot.entry.clone()) {
                entries.push((key, slot.stamp, entry));
            }
        }
        if !changed && entries.len() == self.slots.len() {
            return;
        }
        let size: usize = entries
            .iter()
            .map(|(k, _, e)| 16 + k.len() + Stamp::LEN + e.len())
            .sum();
        let mut out = header_bytes();
        out.reserve(size + 16);
        for (key, stamp, entry) in entries {
            put_entry(&mut out, key, stamp, entry);
        }
        let sum = XxHash3_128::oneshot(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        cache::store(file, &out);
    }
}

/// What a kept entry needs to count only the lines appended to its file.
struct Grow<'a> {
    /// XXH3-128 of the bytes counted.
    hash: u128,
    /// The header line.
    header: &'a str,
}

/// [`Grow`] of a session read whole from `input`, where counting only appended lines gives
/// what a full read gives (see the module's documentation); `None` elsewhere.
fn grow_of<'s>(session: &'s Session<'_>, input: &Input) -> Option<Grow<'s>> {
    let bytes = input.bytes();
    let whole = session.pi.reads_like_0_87()
        && session.dialect == Dialect::Pi
        && !session.version.migrated_v1
        && !session.version.migrated_v2
        && bytes.ends_with(b"\n");
    whole.then(|| Grow {
        hash: {
            let mut hasher = XxHash3_128::new();
            input.for_each_piece(0..bytes.len(), |piece| hasher.write(piece));
            hasher.finish_128()
        },
        header: session.header().text(),
    })
}

fn header_bytes() -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    out
}

/// Whether `data` is a whole cache file of this version: the magic, the version, and the
/// XXH3-128 of the rest at its end.
fn checks_out(data: &[u8]) -> bool {
    let header = header_bytes();
    let Some(body_len) = data.len().checked_sub(16) else {
        return false;
    };
    data.starts_with(&header)
        && body_len >= header.len()
        && data[body_len..] == XxHash3_128::oneshot(&data[..body_len]).to_le_bytes()
}

fn put_entry(out: &mut Vec<u8>, key: &str, stamp: Stamp, entry: &[u8]) {
    put_str(out, key);
    out.extend_from_slice(&stamp.to_bytes());
    out.extend_from_slice(&(entry.len() as u64).to_le_bytes());
    out.extend_from_slice(entry);
}

/// The entries of a cache file that [`checks_out`].
fn index(data: &[u8]) -> Option<HashMap<String, Slot>> {
    let mut r = Reader {
        data: data.get(..data.len().checked_sub(16)?)?,
        at: header_bytes().len(),
    };
    let mut slots = HashMap::default();
    while r.at < r.data.len() {
        let key = r.str()?.to_owned();
        let stamp = Stamp::from_bytes(r.take(Stamp::LEN)?)?;
        let len = usize::try_from(r.u64()?).ok()?;
        let start = r.at;
        r.take(len)?;
        slots.insert(
            key,
            Slot {
                stamp,
                entry: start..start + len,
            },
        );
    }
    Some(slots)
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_f64(out: &mut Vec<u8>, n: f64) {
    out.extend_from_slice(&n.to_bits().to_le_bytes());
}

fn put_usage(out: &mut Vec<u8>, u: &Usage) {
    for n in [u.input, u.output, u.cache_read, u.cache_write, u.cost] {
        put_f64(out, n);
    }
}

/// The entry of a counted file (`grow` when only its new lines may be counted next time);
/// `None` for an oh-my-pi file (its own numbers are not kept).
fn encode(counted: &Counted, grow: Option<&Grow<'_>>) -> Option<Vec<u8>> {
    let OwnStats::Pi(own) = &counted.own else {
        return None;
    };
    let f = &counted.facts;
    let mut out = Vec::with_capacity(64 + f.facts.len() * 40);
    match grow {
        Some(g) => {
            out.push(1);
            out.extend_from_slice(&g.hash.to_le_bytes());
            put_str(&mut out, g.header);
        }
        None => out.push(0),
    }
    put_str(&mut out, &f.id);
    put_str(&mut out, &f.cwd);
    put_f64(&mut out, f.created_ms);
    match &f.parent_session {
        Some(p) => {
            out.push(1);
            put_str(&mut out, p);
        }
        None => out.push(0),
    }
    for n in [
        own.user_messages,
        own.assistant_messages,
        own.tool_calls,
        own.tool_results,
        own.total_messages,
        own.unreadable,
    ] {
        out.extend_from_slice(&n.to_le_bytes());
    }
    put_usage(&mut out, &own.usage);
    // The oldest and newest times of the entries (NaN, never in a range, left out).
    let times = f.facts.iter().map(|f| f.time_ms).filter(|t| !t.is_nan());
    put_f64(&mut out, times.clone().fold(f64::INFINITY, f64::min));
    put_f64(&mut out, times.fold(f64::NEG_INFINITY, f64::max));
    out.extend_from_slice(&(f.facts.len() as u64).to_le_bytes());
    for fact in &f.facts {
        let kind: u8 = match fact.kind {
            Kind::Message(Role::User) => 0,
            Kind::Message(Role::Assistant) => 1,
            Kind::Message(Role::ToolResult) => 2,
            Kind::Message(Role::Other) => 3,
            Kind::Compaction => 4,
            Kind::BranchSummary => 5,
            Kind::UsageEntry => 6,
        };
        let flag = |on: bool, bit: u8| if on { 1 << bit } else { 0 };
        out.push(
            kind | flag(fact.key.is_some(), 3)
                | flag(fact.usage.is_some(), 4)
                | flag(fact.unreadable, 5)
                | flag(fact.provider.is_some(), 6)
                | flag(fact.model.is_some(), 7),
        );
        if let Some(key) = fact.key {
            out.extend_from_slice(&key.to_le_bytes());
        }
        out.extend_from_slice(&fact.tool_calls.to_le_bytes());
        put_f64(&mut out, fact.time_ms);
        if let Some(u) = &fact.usage {
            put_usage(&mut out, u);
        }
        for s in [&fact.provider, &fact.model].into_iter().flatten() {
            put_str(&mut out, s);
        }
    }
    Some(out)
}

/// An entry read back, its facts named `path` (none when none is in `range`, the report's
/// `--since`/`--until`); `None` when it does not read.
fn decode<'d>(
    entry: &'d [u8],
    path: &str,
    range: &Range<Option<f64>>,
) -> Option<(Option<Grow<'d>>, Counted)> {
    let mut r = Reader { data: entry, at: 0 };
    let grow = match r.u8()? {
        0 => None,
        1 => Some(Grow {
            hash: u128::from_le_bytes(r.take(16)?.try_into().ok()?),
            header: r.str()?,
        }),
        _ => return None,
    };
    let id = r.str()?.to_owned();
    let cwd = r.str()?.to_owned();
    let created_ms = r.f64()?;
    let parent_session = match r.u8()? {
        0 => None,
        1 => Some(r.str()?.to_owned()),
        _ => return None,
    };
    let own = SessionStats {
        user_messages: r.u64()?,
        assistant_messages: r.u64()?,
        tool_calls: r.u64()?,
        tool_results: r.u64()?,
        total_messages: r.u64()?,
        unreadable: r.u64()?,
        usage: r.usage()?,
    };
    let (oldest, newest) = (r.f64()?, r.f64()?);
    let n = usize::try_from(r.u64()?).ok()?;
    // The report takes an entry written at or after `since`, before `until`.
    // (`newest` and `oldest` are never NaN; a bound that is NaN skips nothing here.)
    let none_in_range = range.start.is_some_and(|since| newest < since)
        || range.end.is_some_and(|until| oldest >= until);
    let n = if none_in_range { 0 } else { n };
    // Each fact takes at least 13 bytes: a count beyond what is left is not believed.
    let mut facts = Vec::with_capacity(n.min(entry.len() / 13));
    for _ in 0..n {
        let tag = r.u8()?;
        let bit = |b: u8| tag & (1 << b) != 0;
        let kind = match tag & 7 {
            0 => Kind::Message(Role::User),
            1 => Kind::Message(Role::Assistant),
            2 => Kind::Message(Role::ToolResult),
            3 => Kind::Message(Role::Other),
            4 => Kind::Compaction,
            5 => Kind::BranchSummary,
            6 => Kind::UsageEntry,
            _ => return None,
        };
        let key = if bit(3) { Some(r.u64()?) } else { None };
        let tool_calls = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
        let time_ms = r.f64()?;
        // A time JavaScript's `Date` can hold, or NaN: anything else is not what was kept.
        if !(time_ms.is_nan() || time_ms.abs() <= 8.64e15) {
            return None;
        }
        let usage = if bit(4) { Some(r.usage()?) } else { None };
        let provider = if bit(6) {
            Some(Box::from(r.str()?))
        } else {
            None
        };
        let model = if bit(7) {
            Some(Box::from(r.str()?))
        } else {
            None
        };
        facts.push(Fact {
            key,
            kind,
            tool_calls,
            usage,
            unreadable: bit(5),
            provider,
            model,
            time_ms,
        });
    }
    if !none_in_range && r.at != entry.len() {
        return None;
    }
    let facts = SessionFacts {
        path: path.to_owned(),
        id,
        cwd,
        created_ms,
        parent_session,
        facts,
    };
    Some((
        grow,
        Counted {
            facts,
            own: OwnStats::Pi(own),
        },
    ))
}

/// Reads the cache's binary values, never past the end.
struct Reader<'d> {
    data: &'d [u8],
    at: usize,
}

impl<'d> Reader<'d> {
    fn take(&mut self, n: usize) -> Option<&'d [u8]> {
        let end = self.at.checked_add(n)?;
        let bytes = self.data.get(self.at..end)?;
        self.at = end;
        Some(bytes)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }

    fn usage(&mut self) -> Option<Usage> {
        Some(Usage {
            input: self.f64()?,
            output: self.f64()?,
            cache_read: self.f64()?,
            cache_write: self.f64()?,
            cost: self.f64()?,
        })
    }

    fn str(&mut self) -> Option<&'d str> {
        let len = usize::try_from(self.u64()?).ok()?;
        std::str::from_utf8(self.take(len)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache file truncated by another program while a run reads it through its mapping:
    /// the run finds it out (`intact`), and writes nothing made from what it read.
    #[test]
    fn a_cache_file_truncated_while_mapped_is_not_trusted_or_rewritten() {
        let dir =
            std::env::temp_dir().join(format!("pi-session-stats-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("stats.bin");
        let session = dir.join("s.jsonl");
        std::fs::write(&session, "{}\n").unwrap();
        let stamp = Stamp::of_file(&session).unwrap();
        let key = session.to_str().unwrap().to_owned();
        // An entry larger than what `Input` reads into memory, so that the file is mapped.
        let big = vec![7u8; (pi_session_fs::input::READ_LIMIT as usize) + (1 << 20)];
        StatsCache::at(Some(file.clone()), &[]).save(vec![Keep::New(key.clone(), stamp, big)]);
        let cache = StatsCache::at(Some(file.clone()), &[]);
        assert!(cache.data.as_ref().is_some_and(Input::is_mapped), "mapped");
        assert_eq!(cache.slots.len(), 1, "the entry checks out");
        assert!(cache.intact());

        let len = std::fs::metadata(&file).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        let entry = cache.slots[&key].entry.clone();
        // Read past the new end: zeros, not the 7s that were there, and no fault.
        assert_eq!(cache.bytes()[entry.end - 1], 0);
        assert!(!cache.intact());
        // Something new to keep, so that a save that trusted the file would write one.
        let other = format!("{key}.new");
        cache.save(vec![Keep::Old(key), Keep::New(other, stamp, vec![1])]);
        assert_eq!(
            std::fs::metadata(&file).unwrap().len(),
            len / 2,
            "not rewritten"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
