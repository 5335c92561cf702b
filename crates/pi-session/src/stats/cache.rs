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
//! One binary file per pi version's rules and `--dialect`, in `$XDG_CACHE_HOME/pi-session/`:
//! an index (each file's key, stamp, the oldest and newest time of its entries, the length
//! and XXH3-128 of its entry) with the XXH3-128 of the index, then the entries. A cache whose
//! index does not check out (another version, truncated, corrupt) is ignored whole, and
//! replaced; an entry is checked by its own hash when it is read, so that a run reads only
//! the entries it takes: a `--since today` of a store where most files are older takes its
//! answer from the index and the files' stamps alone (a status line's run). An entry that
//! does not check out is not taken (its file is read) nor kept. The cache is written only
//! when something changed; an entry kept as it was keeps the hash it was written with.

use super::ledger_cache::LedgerCache;
use crate::cache::{self, Stamp};
use pi_session_format::dialect::omp_entry_type;
use pi_session_format::stats::ledger::{Fact, Kind, Names, Role, SessionFacts};
use pi_session_format::stats::report::{Counted, OwnStats, Skipped};
use pi_session_format::stats::{SessionStats, Usage};
use pi_session_format::{Dialect, PiVersion, Session};
use pi_session_fs::discover::Target;
use pi_session_fs::input::Input;
use rustc_hash::{FxBuildHasher, FxHashMap as HashMap};
use std::hash::BuildHasher;
use std::ops::Range;
use std::path::{Path, PathBuf};
use twox_hash::XxHash3_128;

/// The cache's format; a file of another version is ignored (and replaced).
const VERSION: u32 = 2;

/// The first bytes of the cache file.
const MAGIC: &[u8; 16] = b"pi-session stats";

/// One kept file in the loaded cache: where its key is, its stamp, the times of its entries,
/// where its entry is and the hash it was written with.
struct Slot {
    key: Range<usize>,
    stamp: Stamp,
    times: Times,
    entry: Range<usize>,
    sum: u128,
}

/// The kept files, found by their keys.
#[derive(Default)]
struct Slots {
    list: Vec<Slot>,
    /// Places in `list`, by the hash of their keys.
    by_key: hashbrown::HashTable<usize>,
}

impl Slots {
    /// The place and slot of the file `key` (the cache file's bytes are `data`).
    fn find<'s>(&'s self, data: &[u8], key: &str) -> Option<(usize, &'s Slot)> {
        let hash = FxBuildHasher.hash_one(key.as_bytes());
        let at = *self.by_key.find(hash, |&at| {
            data.get(self.list[at].key.clone()) == Some(key.as_bytes())
        })?;
        Some((at, &self.list[at]))
    }

    /// Adds `slot`; `None` when its key is there already (not in a cache this module wrote).
    fn insert(&mut self, data: &[u8], slot: Slot) -> Option<()> {
        let key = data.get(slot.key.clone())?;
        let hash = |slot: &Slot| FxBuildHasher.hash_one(&data[slot.key.clone()]);
        match self.by_key.entry(
            FxBuildHasher.hash_one(key),
            |&at| data.get(self.list[at].key.clone()) == Some(key),
            |&at| hash(&self.list[at]),
        ) {
            hashbrown::hash_table::Entry::Occupied(_) => None,
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                vacant.insert(self.list.len());
                self.list.push(slot);
                Some(())
            }
        }
    }

    fn len(&self) -> usize {
        self.list.len()
    }
}

/// The oldest and newest times (ms) of a file's entries, NaN left out (never in a range):
/// `+∞` and `−∞` for a file without any.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Times {
    oldest: f64,
    newest: f64,
}

impl Times {
    /// The times of `facts`.
    fn of(facts: &[Fact]) -> Times {
        let times = facts.iter().map(|f| f.time_ms).filter(|t| !t.is_nan());
        Times {
            oldest: times.clone().fold(f64::INFINITY, f64::min),
            newest: times.fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// Whether no entry is in `range` (the report takes an entry written at or after
    /// `--since`, before `--until`); a bound that is NaN rules nothing out here.
    fn none_in(self, range: &Range<Option<f64>>) -> bool {
        range.start.is_some_and(|since| self.newest < since)
            || range.end.is_some_and(|until| self.oldest >= until)
    }
}

/// A counted file's entry, to be kept: its bytes ([`encode`]) and its [`Times`].
pub(super) struct Entry {
    bytes: Vec<u8>,
    times: Times,
}

/// The cache, as read at the start of a run.
pub(super) struct StatsCache {
    file: Option<PathBuf>,
    /// The cache file as read (mapped when large: a run reads the pages of the entries it
    /// takes, and of its index); `None` when there is none that checks out.
    data: Option<Input>,
    slots: Slots,
    /// The paths counted (absolute): a kept file under one of them that was not counted is gone.
    roots: Vec<PathBuf>,
}

/// What to keep of one counted file.
pub(super) enum Keep {
    /// Nothing (not a file, not counted, changed while read, oh-my-pi).
    Nothing,
    /// The entry already kept (the slot's number), as it is (the file is unchanged, or
    /// changed within the racy window: the kept entry is still what its stamp says).
    Old(usize),
    /// A new entry.
    New(String, Stamp, Entry),
}

/// One file counted, and what to keep of it.
pub(super) struct Read {
    /// The file's count; `None` for a kept file with no entry in the range counted (the
    /// report would leave it out: no row, not in the totals).
    pub(super) result: Option<Result<Counted, Skipped>>,
    pub(super) keep: Keep,
    /// The file's key and stamp, when the cache could take them and the file is counted
    /// (boxed: a run of 10,000 files holds 10,000 of these, most without).
    pub(super) file: Option<Box<(String, Stamp)>>,
    /// Its place among the files added up in the kept ledger ([`LedgerCache::holds`]): then
    /// it is not counted ([`Read::result`] `None`), the ledger has it.
    pub(super) in_ledger: Option<usize>,
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

    /// No cache: every file is read, nothing is kept.
    pub(super) fn none() -> StatsCache {
        StatsCache::at(None, &[])
    }

    /// The cache kept in `file` (none: no cache).
    fn at(file: Option<PathBuf>, roots: &[PathBuf]) -> StatsCache {
        let (data, slots) = file
            .as_deref()
            .and_then(cache::load)
            .and_then(|data| Some((index(data.bytes())?, data)))
            .map_or_else(Default::default, |(slots, data)| (Some(data), slots));
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

    /// Where the cache is kept (none: `--no-cache`, or no cache directory).
    pub(super) fn file(&self) -> Option<&Path> {
        self.file.as_deref()
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

    /// The entry of `slot` when it checks out (its bytes hash to what was kept).
    fn entry(&self, slot: &Slot) -> Option<&[u8]> {
        self.bytes()
            .get(slot.entry.clone())
            .filter(|entry| XxHash3_128::oneshot(entry) == slot.sum)
    }

    /// Counts `target` with `pi`'s rules in `dialect` as [`Counted::read_target`] does, from
    /// the cache where the file is unchanged, reading only its new lines where it only grew.
    /// An unchanged file none of whose entries is in `range` (the `--since` and `--until`
    /// bounds, ms) is not counted at all ([`Read::result`] `None`): the report would leave it
    /// out, and the index says so without its entry being read.
    ///
    /// A file the kept `ledger` has added up, unchanged, is not counted either
    /// ([`Read::in_ledger`]).
    pub(super) fn read(
        &self,
        target: &Target,
        pi: PiVersion,
        dialect: Option<Dialect>,
        range: Range<Option<f64>>,
        ledger: &LedgerCache,
    ) -> Read {
        let enabled = self.file.is_some();
        let key_stamp = target
            .path()
            .filter(|_| enabled)
            .and_then(|p| Some((cache::key(p)?, Stamp::of_file(p)?, p)));
        let Some((key, stamp, given)) = key_stamp else {
            return Read {
                result: Some(Counted::read_target(target, pi, dialect)),
                keep: Keep::Nothing,
                file: None,
                in_ledger: None,
            };
        };
        let found = self.slots.find(self.bytes(), &key);
        let unchanged = found.filter(|(_, slot)| slot.stamp == stamp);
        let in_ledger = ledger.holds(&key, &stamp, given);
        if in_ledger.is_some() || unchanged.is_some_and(|(_, slot)| slot.times.none_in(&range)) {
            return Read {
                result: None,
                keep: unchanged.map_or(Keep::Nothing, |(at, _)| Keep::Old(at)),
                file: None,
                in_ledger,
            };
        }
        let file = Some(Box::new((key.clone(), stamp)));
        let shown = target.display();
        // A kept entry that does not check out is neither taken nor kept.
        let found = found.and_then(|(at, slot)| Some((at, slot, self.entry(slot)?)));
        if let Some((at, slot, entry)) = found {
            if slot.stamp == stamp {
                if let Some((_, counted)) = decode(entry, &shown) {
                    return Read {
                        result: Some(Ok(counted)),
                        keep: Keep::Old(at),
                        file,
                        in_ledger: None,
                    };
                }
            } else if slot.stamp.same_file(&stamp)
                && stamp.size() > slot.stamp.size()
                && let Some((Some(grow), counted)) = decode(entry, &shown)
                && let Some(read) =
                    self.grown(target, (at, slot), key.clone(), stamp, grow, counted, pi)
            {
                return read;
            }
        }
        let old = found.map(|(at, ..)| Keep::Old(at));
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
                Read {
                    result: Some(result),
                    keep,
                    file,
                    in_ledger: None,
                }
            }
            Err(e) => Read {
                result: Some(Err(Skipped::new(&shown, e))),
                keep: Keep::Nothing,
                file,
                in_ledger: None,
            },
        }
    }

    /// The file of `slot` grew to `stamp`: when its first bytes are those counted, only the
    /// new lines are counted, added to `counted`. `None`: read it whole.
    #[allow(clippy::too_many_arguments)]
    fn grown(
        &self,
        target: &Target,
        (at, slot): (usize, &Slot),
        key: String,
        stamp: Stamp,
        grow: Grow<'_>,
        mut counted: Counted,
        pi: PiVersion,
    ) -> Option<Read> {
        if !pi.reads_like_0_87() {
            return None;
        }
        let counted_len = usize::try_from(slot.stamp.size()).ok()?;
        let detect = self.dialect_detected();
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
            // Named as the kept facts are (the target as shown).
            let new = SessionFacts::of(&session, &counted.facts.path).facts;
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
        let slot_key = key.clone();
        let keep = match entry {
            Some(entry) if Stamp::of_file(Path::new(&key)) == Some(stamp) => {
                Keep::New(key, stamp, entry)
            }
            _ => Keep::Old(at),
        };
        Some(Read {
            result: Some(Ok(counted)),
            keep,
            file: Some(Box::new((slot_key, stamp))),
            in_ledger: None,
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
        let bytes = self.bytes();
        // Each kept file once (a file reached twice is counted once, kept once).
        let mut used = vec![false; self.slots.len()];
        let mut new: HashMap<&str, ()> = HashMap::default();
        // What to write (found before anything is built: most runs write nothing). An entry
        // kept as it was keeps its hash: one that went bad is found out where it is read.
        let mut entries: Vec<Kept<'_>> = Vec::with_capacity(kept.len());
        let old = |slot: &Slot| {
            Some(Kept {
                key: std::str::from_utf8(bytes.get(slot.key.clone())?).ok()?,
                stamp: slot.stamp,
                times: slot.times,
                sum: slot.sum,
                bytes: bytes.get(slot.entry.clone())?,
            })
        };
        for keep in &kept {
            match keep {
                Keep::Nothing => {}
                Keep::Old(at) => {
                    if let Some(slot) = self.slots.list.get(*at)
                        && !std::mem::replace(&mut used[*at], true)
                        && let Some(kept) = old(slot)
                    {
                        entries.push(kept);
                    }
                }
                Keep::New(key, stamp, entry) => {
                    let at = self.slots.find(bytes, key).map(|(at, _)| at);
                    let first = match at {
                        Some(at) => !std::mem::replace(&mut used[at], true),
                        None => new.insert(key, ()).is_none(),
                    };
                    if first {
                        entries.push(Kept {
                            key,
                            stamp: *stamp,
                            times: entry.times,
                            sum: XxHash3_128::oneshot(&entry.bytes),
                            bytes: &entry.bytes,
                        });
                        changed = true;
                    }
                }
            }
        }
        for (slot, _) in self.slots.list.iter().zip(used).filter(|(_, used)| !used) {
            let Some(kept) = old(slot) else {
                changed = true;
                continue;
            };
            let path = Path::new(kept.key);
            let gone =
                self.roots.iter().any(|r| path.starts_with(r)) || Stamp::of_file(path).is_none();
            if gone {
                changed = true;
            } else {
                entries.push(kept);
            }
        }
        if !changed && entries.len() == self.slots.len() {
            return;
        }
        cache::store(file, &write(&entries));
        // The cache of the format before this one is of no use any more, and was as large.
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let earlier = name.replacen(
            &format!("stats-v{VERSION}-"),
            &format!("stats-v{}-", VERSION - 1),
            1,
        );
        if earlier != name {
            let _ = std::fs::remove_file(file.with_file_name(earlier));
        }
    }
}

/// One entry to write.
struct Kept<'a> {
    key: &'a str,
    stamp: Stamp,
    times: Times,
    sum: u128,
    bytes: &'a [u8],
}

/// The length of an index record but its key's bytes: the key's length, the stamp, the
/// times, the entry's length and hash.
const RECORD_LEN: usize = 8 + Stamp::LEN + 16 + 8 + 16;

/// The cache file of `entries`: the header and the index's length, the index (a record per
/// entry, in their order), its XXH3-128 (of everything before it), then the entries.
fn write(entries: &[Kept<'_>]) -> Vec<u8> {
    let index_len: usize = entries.iter().map(|e| RECORD_LEN + e.key.len()).sum();
    let entries_len: usize = entries.iter().map(|e| e.bytes.len()).sum();
    let mut out = header_bytes();
    out.reserve(8 + index_len + 16 + entries_len);
    out.extend_from_slice(&(index_len as u64).to_le_bytes());
    for e in entries {
        put_str(&mut out, e.key);
        out.extend_from_slice(&e.stamp.to_bytes());
        put_f64(&mut out, e.times.oldest);
        put_f64(&mut out, e.times.newest);
        out.extend_from_slice(&(e.bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&e.sum.to_le_bytes());
    }
    let sum = XxHash3_128::oneshot(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    for e in entries {
        out.extend_from_slice(e.bytes);
    }
    out
}

/// The index of a cache file: `None` unless it is one of this version whose index checks out
/// (its hash) and whose entries are all there (the file ends where the last one does).
fn index(data: &[u8]) -> Option<Slots> {
    let header = header_bytes();
    let mut r = Reader {
        data,
        at: header.len(),
    };
    if !data.starts_with(&header) {
        return None;
    }
    let index_len = usize::try_from(r.u64()?).ok()?;
    let index_end = r.at.checked_add(index_len)?;
    let sum = data.get(index_end..index_end.checked_add(16)?)?;
    if XxHash3_128::oneshot(&data[..index_end]).to_le_bytes() != sum {
        return None;
    }
    let mut at = index_end + 16;
    let mut slots = Slots::default();
    while r.at < index_end {
        let key_len = usize::try_from(r.u64()?).ok()?;
        let key = r.at..r.at.checked_add(key_len)?;
        std::str::from_utf8(r.take(key_len)?).ok()?;
        let stamp = Stamp::from_bytes(r.take(Stamp::LEN)?)?;
        let times = Times {
            oldest: r.f64()?,
            newest: r.f64()?,
        };
        let len = usize::try_from(r.u64()?).ok()?;
        let sum = u128::from_le_bytes(r.take(16)?.try_into().ok()?);
        let end = at.checked_add(len)?;
        slots.insert(
            data,
            Slot {
                key,
                stamp,
                times,
                entry: at..end,
                sum,
            },
        )?;
        at = end;
    }
    (r.at == index_end && at == data.len()).then_some(slots)
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

pub(super) fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

pub(super) fn put_f64(out: &mut Vec<u8>, n: f64) {
    out.extend_from_slice(&n.to_bits().to_le_bytes());
}

pub(super) fn put_usage(out: &mut Vec<u8>, u: &Usage) {
    for n in [u.input, u.output, u.cache_read, u.cache_write, u.cost] {
        put_f64(out, n);
    }
}

/// pi's own numbers for a session ([`Reader::own`] reads them back).
pub(super) fn put_own(out: &mut Vec<u8>, own: &SessionStats) {
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
    put_usage(out, &own.usage);
}

/// The entry of a counted file (`grow` when only its new lines may be counted next time);
/// `None` for an oh-my-pi file (its own numbers are not kept).
fn encode(counted: &Counted, grow: Option<&Grow<'_>>) -> Option<Entry> {
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
    put_own(&mut out, own);
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
    Some(Entry {
        bytes: out,
        times: Times::of(&f.facts),
    })
}

/// An entry read back, its facts named `path`; `None` when it does not read.
fn decode<'d>(entry: &'d [u8], path: &str) -> Option<(Option<Grow<'d>>, Counted)> {
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
    let own = r.own()?;
    let n = usize::try_from(r.u64()?).ok()?;
    // Each fact takes at least 13 bytes: a count beyond what is left is not believed.
    let mut facts = Vec::with_capacity(n.min(entry.len() / 13));
    let mut names = Names::default();
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
            Some(names.of_bytes(r.bytes()?)?)
        } else {
            None
        };
        let model = if bit(7) {
            Some(names.of_bytes(r.bytes()?)?)
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
    if r.at != entry.len() {
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
pub(super) struct Reader<'d> {
    pub(super) data: &'d [u8],
    pub(super) at: usize,
}

impl<'d> Reader<'d> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'d [u8]> {
        let end = self.at.checked_add(n)?;
        let bytes = self.data.get(self.at..end)?;
        self.at = end;
        Some(bytes)
    }

    pub(super) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    pub(super) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    pub(super) fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }

    pub(super) fn usage(&mut self) -> Option<Usage> {
        Some(Usage {
            input: self.f64()?,
            output: self.f64()?,
            cache_read: self.f64()?,
            cache_write: self.f64()?,
            cost: self.f64()?,
        })
    }

    /// [`put_own`]'s numbers.
    pub(super) fn own(&mut self) -> Option<SessionStats> {
        Some(SessionStats {
            user_messages: self.u64()?,
            assistant_messages: self.u64()?,
            tool_calls: self.u64()?,
            tool_results: self.u64()?,
            total_messages: self.u64()?,
            unreadable: self.u64()?,
            usage: self.usage()?,
        })
    }

    pub(super) fn str(&mut self) -> Option<&'d str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    /// A string's bytes, not yet checked to be UTF-8.
    pub(super) fn bytes(&mut self) -> Option<&'d [u8]> {
        let len = usize::try_from(self.u64()?).ok()?;
        self.take(len)
    }
}

#[cfg(test)]
mod tests;
