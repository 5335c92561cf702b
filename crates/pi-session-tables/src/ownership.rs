//! Which session owns each entry: history copied into forked and branched sessions counted
//! once, exactly as `pi-session stats` counts it. An entry is identified by its type, id and
//! timestamp ([`ledger::identity`]) and belongs to the first session that holds it, by
//! header creation time, then path ([`ledger::session_order`]).
//!
//! Built from the keys of every session ([`SessionKeys`], a first cheap pass), so that the
//! owner of an entry also knows which later sessions carry a copy.

use pi_session_format::Session;
use pi_session_format::json::LineScanner;
use pi_session_format::stats::ledger;
use rustc_hash::FxHashMap;

/// What the ownership needs to know of one session file.
#[derive(Debug, Clone)]
pub struct SessionKeys {
    /// The file's path (the tables' `file`).
    pub path: String,
    /// The header's `timestamp` (ms since the epoch; NaN when it is not a date).
    pub created_ms: f64,
    /// The header's `cwd` (`""` without one): writers given the sessions of one project
    /// after another keep few `--partition-by project` files open.
    pub cwd: String,
    /// The identity of each entry, in file order (`None` without an id).
    pub keys: Vec<Option<u64>>,
    /// The caller's tag for the session (where it came from), kept in [`Ownership::sources`].
    pub source: usize,
}

impl SessionKeys {
    /// The keys of `session`, read from `path`; `source` is the caller's tag for it.
    pub fn of(session: &Session<'_>, path: &str, source: usize) -> SessionKeys {
        let mut scanner = LineScanner::default();
        let keys = session
            .entry_records()
            .map(|record| ledger::record_identity(record, &mut scanner))
            .collect();
        SessionKeys {
            path: path.to_owned(),
            created_ms: pi_session_format::date::date_parse(
                session.header().value().get("timestamp"),
            ),
            cwd: session
                .header()
                .value()
                .get("cwd")
                .and_then(pi_session_format::json::JsValue::as_str)
                .unwrap_or_default()
                .to_owned(),
            keys,
            source,
        }
    }
}

/// A session's place in the order: its index in [`Ownership::files`].
pub type SessionIndex = u32;

/// The owner of every entry held by more than one session, and the sessions holding it.
#[derive(Debug, Default)]
pub struct Ownership {
    /// The files, in ownership order.
    files: Vec<String>,
    /// Their [`SessionKeys::source`] tags, in the same order.
    sources: Vec<usize>,
    /// Their [`SessionKeys::cwd`], in the same order.
    cwds: Vec<String>,
    /// Entries held by more than one session: every session holding each, in order (the
    /// first is the owner; a session that holds an entry twice is named twice).
    shared: FxHashMap<u64, Vec<SessionIndex>>,
}

impl Ownership {
    /// The ownership of the entries of `sessions` (in any order). Their keys are dropped as
    /// they are read.
    pub fn new(mut sessions: Vec<SessionKeys>) -> Ownership {
        sessions.sort_by(|a, b| {
            ledger::session_order((a.created_ms, &a.path), (b.created_ms, &b.path))
        });
        // First holder of every key; a second sighting moves the key to `shared`.
        let mut first: FxHashMap<u64, SessionIndex> = FxHashMap::default();
        let mut shared: FxHashMap<u64, Vec<SessionIndex>> = FxHashMap::default();
        let mut files = Vec::with_capacity(sessions.len());
        let mut sources = Vec::with_capacity(sessions.len());
        let mut cwds = Vec::with_capacity(sessions.len());
        for (i, session) in sessions.into_iter().enumerate() {
            let i = i as SessionIndex;
            for key in session.keys.into_iter().flatten() {
                match first.entry(key) {
                    std::collections::hash_map::Entry::Vacant(v) => {
                        v.insert(i);
                    }
                    std::collections::hash_map::Entry::Occupied(o) => {
                        shared.entry(key).or_insert_with(|| vec![*o.get()]).push(i);
                    }
                }
            }
            files.push(session.path);
            sources.push(session.source);
            cwds.push(session.cwd);
        }
        Ownership {
            files,
            sources,
            cwds,
            shared,
        }
    }

    /// The files in ownership order (by creation time, then path).
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The caller's tags of the sessions, in ownership order: session `i` is the one tagged
    /// `sources()[i]`.
    pub fn sources(&self) -> &[usize] {
        &self.sources
    }

    /// The `cwd` of session `i`.
    pub fn cwd(&self, i: SessionIndex) -> &str {
        &self.cwds[i as usize]
    }

    /// The file of session `i`.
    pub fn file(&self, i: SessionIndex) -> &str {
        &self.files[i as usize]
    }

    /// Where entry `key`, held by session `holder`, stands: the owner (the first session
    /// holding it, `holder` for an entry held once or without id) and the other sessions
    /// holding it.
    pub fn of(&self, key: Option<u64>, holder: SessionIndex) -> Place<'_> {
        match key.and_then(|k| self.shared.get(&k)) {
            None => Place {
                owner: holder,
                holders: &[],
            },
            Some(holders) => Place {
                owner: holders[0],
                holders,
            },
        }
    }
}

/// Where one entry stands ([`Ownership::of`]).
#[derive(Debug, Clone, Copy)]
pub struct Place<'o> {
    /// The session that owns the entry.
    pub owner: SessionIndex,
    /// Every session holding it, in order (empty when only one does).
    pub holders: &'o [SessionIndex],
}

impl Place<'_> {
    /// The files of the sessions other than `holder` that hold the entry.
    pub fn others<'o>(&self, ownership: &'o Ownership, holder: SessionIndex) -> Vec<&'o str> {
        let mut out: Vec<&'o str> = Vec::new();
        let mut last = None;
        for &h in self.holders {
            if h != holder && last != Some(h) {
                out.push(ownership.file(h));
            }
            last = Some(h);
        }
        out
    }
}
