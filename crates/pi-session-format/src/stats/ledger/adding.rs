//! Adding the facts of many sessions up ([`report`]): the groups, the copies of forked
//! history left out, and a [`Ledger`] that adds one session at a time and can stop and go on
//! ([`Checkpoint`]).

use super::{Fact, GroupBy, SessionFacts, Tally, session_order};
use crate::date;
use rustc_hash::{FxHashMap, FxHashSet};

/// What [`report`] adds up.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The grouping.
    pub by: GroupBy,
    /// Only entries written at or after this time (ms since the epoch).
    pub since_ms: Option<f64>,
    /// Only entries written before this time (ms since the epoch).
    pub until_ms: Option<f64>,
    /// Count every copy of an entry (raw sums), instead of the first session's only.
    pub no_dedupe: bool,
}

/// The totals.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The groups, sorted by name (sessions by creation time, then path). By session, every
    /// session read has its group; with a time range ([`Options::since_ms`],
    /// [`Options::until_ms`]) only those with an entry in the range, as `@ccusage/pi` lists
    /// them.
    pub groups: Vec<(String, Tally)>,
    /// All groups together.
    pub total: Tally,
    /// The copies left out: entries a session holds that an earlier one already did (empty
    /// with [`Options::no_dedupe`]).
    pub copies: Tally,
    /// Sessions whose header names a parent session (forked or branched ones), of those in
    /// the report (with a time range, those with an entry in it).
    pub forked_sessions: u64,
}

/// The group an entry of `session` falls in.
fn group_of(by: GroupBy, session: &SessionFacts, fact: &Fact) -> String {
    let day = |len: usize| {
        if fact.time_ms.is_finite() {
            date::to_iso_string(fact.time_ms)[..len].to_owned()
        } else {
            "-".to_owned()
        }
    };
    match by {
        GroupBy::Session => session.path.clone(),
        GroupBy::Project => session.cwd.clone(),
        GroupBy::Model => match (&fact.provider, &fact.model) {
            (Some(p), Some(m)) => format!("{p}/{m}"),
            (None, Some(m)) => m.to_string(),
            (Some(p), None) => format!("{p}/-"),
            (None, None) => "-".to_owned(),
        },
        GroupBy::Provider => fact.provider.as_deref().unwrap_or("-").to_owned(),
        GroupBy::Day => day(10),
        GroupBy::Month => day(7),
    }
}

/// The groups of a report as they fill: each group's name and tally, in the order they were
/// first met, found by name or, without building the name, by a cheaper key of the entry.
#[derive(Default)]
struct Groups<'s> {
    names: Vec<String>,
    tallies: Vec<Tally>,
    by_name: FxHashMap<String, usize>,
    /// `provider`/`model` of [`GroupBy::Model`] and [`GroupBy::Provider`] (different pairs
    /// may make one name: `a/b` + none and `a` + `b/-`).
    by_names: FxHashMap<(Option<&'s str>, Option<&'s str>), usize>,
    /// The day (days since the epoch, as [`date::to_iso_string`] counts them) of
    /// [`GroupBy::Day`] and [`GroupBy::Month`]: the name is the same for every time of a day.
    by_day: FxHashMap<i64, usize>,
    /// The last session (its place + 1) that added to each group.
    last: Vec<usize>,
}

impl<'s> Groups<'s> {
    fn named(&mut self, name: &str) -> usize {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(name.to_owned());
        self.tallies.push(Tally::default());
        self.last.push(0);
        self.by_name.insert(name.to_owned(), i);
        i
    }

    /// The group of `fact` of `session`: what [`group_of`] names.
    fn of(&mut self, by: GroupBy, session: &'s SessionFacts, fact: &'s Fact) -> usize {
        match by {
            GroupBy::Model | GroupBy::Provider => {
                let key = (
                    fact.provider.as_deref(),
                    fact.model.as_deref().filter(|_| by == GroupBy::Model),
                );
                if let Some(&i) = self.by_names.get(&key) {
                    return i;
                }
                let i = self.named(&group_of(by, session, fact));
                self.by_names.insert(key, i);
                i
            }
            GroupBy::Day | GroupBy::Month if fact.time_ms.is_finite() => {
                let day = (fact.time_ms as i64).div_euclid(86_400_000);
                if let Some(&i) = self.by_day.get(&day) {
                    return i;
                }
                let i = self.named(&group_of(by, session, fact));
                self.by_day.insert(day, i);
                i
            }
            _ => self.named(&group_of(by, session, fact)),
        }
    }
}

/// Adds up `sessions` (in any order: they are taken by creation time, then path).
pub fn report(mut sessions: Vec<SessionFacts>, options: &Options) -> Report {
    sessions.sort_by(|a, b| session_order((a.created_ms, &a.path), (b.created_ms, &b.path)));
    let facts: usize = sessions.iter().map(|s| s.facts.len()).sum();
    let mut ledger = Ledger::new(options, facts);
    for session in &sessions {
        ledger.add(session);
    }
    ledger.finish()
}

/// A [`report`] added up one session at a time, in [`session_order`], that can say where it
/// stands after any session ([`Ledger::checkpoint`]) and go on from there later
/// ([`Ledger::resume`]): the sessions after a checkpoint, added to the ledger resumed from it,
/// give the report of all of them to the last bit (the same additions in the same order). A
/// cache keeps the checkpoint of the sessions that no longer change, so that a later run adds
/// up only the others.
pub struct Ledger<'s> {
    options: Options,
    ranged: bool,
    seen: Seen,
    groups: Groups<'s>,
    copies: Tally,
    forked_sessions: u64,
    counted_sessions: u64,
    /// The sessions added so far (those of the checkpoint resumed from included).
    sessions: u64,
}

/// Where a [`Ledger`] stood after its first sessions: all it needs to go on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checkpoint {
    /// The sessions added.
    pub sessions: u64,
    /// The groups, in the order they were first met, with their tallies so far.
    pub groups: Vec<(String, Tally)>,
    /// The identities of the entries counted so far, sorted (none without the dedupe).
    pub seen: Vec<u64>,
    /// [`Report::copies`] so far.
    pub copies: Tally,
    /// [`Report::forked_sessions`] so far.
    pub forked_sessions: u64,
    /// The sessions in the report so far (with a range, those with an entry in it).
    pub counted_sessions: u64,
}

/// The identities of the entries counted: those of a checkpoint resumed from (sorted, looked
/// up where they are) and those met since.
#[derive(Default)]
struct Seen {
    earlier: Vec<u64>,
    since: FxHashSet<u64>,
}

impl Seen {
    /// Adds `key`; `false` when it was there.
    fn insert(&mut self, key: u64) -> bool {
        self.earlier.binary_search(&key).is_err() && self.since.insert(key)
    }

    fn sorted(&self) -> Vec<u64> {
        let mut all = Vec::with_capacity(self.earlier.len() + self.since.len());
        all.extend_from_slice(&self.earlier);
        all.extend(self.since.iter().copied());
        all.sort_unstable();
        all
    }
}

impl<'s> Ledger<'s> {
    /// An empty ledger; `facts` is about how many facts will be added (room made for them).
    pub fn new(options: &Options, facts: usize) -> Ledger<'s> {
        Ledger::resume(options, Checkpoint::default(), facts)
    }

    /// The ledger as it stood at `checkpoint`, taken with the same `options`; `facts` is
    /// about how many facts will be added to it.
    pub fn resume(options: &Options, checkpoint: Checkpoint, facts: usize) -> Ledger<'s> {
        let mut earlier = checkpoint.seen;
        if !earlier.is_sorted() {
            earlier.sort_unstable();
        }
        let mut groups = Groups::default();
        for (name, tally) in checkpoint.groups {
            let i = groups.named(&name);
            groups.tallies[i] = tally;
        }
        Ledger {
            options: options.clone(),
            ranged: options.since_ms.is_some() || options.until_ms.is_some(),
            seen: Seen {
                earlier,
                since: FxHashSet::with_capacity_and_hasher(facts, Default::default()),
            },
            groups,
            copies: checkpoint.copies,
            forked_sessions: checkpoint.forked_sessions,
            counted_sessions: checkpoint.counted_sessions,
            sessions: checkpoint.sessions,
        }
    }

    /// The sessions added so far (those of the checkpoint resumed from included).
    pub fn sessions(&self) -> u64 {
        self.sessions
    }

    /// Where the ledger stands now.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            sessions: self.sessions,
            groups: (self.groups.names.iter().cloned())
                .zip(self.groups.tallies.iter().cloned())
                .collect(),
            seen: self.seen.sorted(),
            copies: self.copies.clone(),
            forked_sessions: self.forked_sessions,
            counted_sessions: self.counted_sessions,
        }
    }

    /// Adds `session`, which comes after every session added before in [`session_order`].
    pub fn add(&mut self, session: &'s SessionFacts) {
        let (by, options) = (self.options.by, &self.options);
        self.sessions += 1;
        let place = self.sessions as usize;
        let groups = &mut self.groups;
        let mut touched: Vec<usize> = Vec::new();
        let mut touch = |groups: &mut Groups<'_>, i: usize| {
            if groups.last[i] != place {
                groups.last[i] = place;
                touched.push(i);
            }
        };
        // The session's own group (by session, every session has one, or with a range every
        // session with something in it; by project, the header's cwd, found once).
        let mut own = None;
        if by == GroupBy::Session && !self.ranged {
            let i = groups.named(&session.path);
            touch(groups, i);
            own = Some(i);
        }
        let mut copies_here = false;
        let mut in_range_here = !self.ranged;
        for fact in &session.facts {
            let in_range = options.since_ms.is_none_or(|t| fact.time_ms >= t)
                && options.until_ms.is_none_or(|t| fact.time_ms < t);
            if !in_range {
                continue;
            }
            if !in_range_here {
                in_range_here = true;
                if by == GroupBy::Session {
                    let i = groups.named(&session.path);
                    touch(groups, i);
                    own = Some(i);
                }
            }
            if !options.no_dedupe
                && let Some(key) = fact.key
                && !self.seen.insert(key)
            {
                self.copies.add(fact);
                copies_here = true;
                continue;
            }
            let i = match (by, own) {
                (GroupBy::Session | GroupBy::Project, Some(i)) => i,
                (GroupBy::Project, None) => *own.insert(groups.named(&session.cwd)),
                _ => groups.of(by, session, fact),
            };
            groups.tallies[i].add(fact);
            touch(groups, i);
        }
        if in_range_here {
            self.counted_sessions += 1;
            self.forked_sessions += u64::from(session.parent_session.is_some());
        }
        self.copies.sessions += u64::from(copies_here);
        for i in touched {
            groups.tallies[i].sessions += 1;
        }
    }

    /// The report of the sessions added.
    pub fn finish(self) -> Report {
        let groups = self.groups;
        let mut out = Report {
            copies: self.copies,
            forked_sessions: self.forked_sessions,
            ..Report::default()
        };
        // Totals and (but by session, in their order) the groups by name, as a sorted map
        // keeps them.
        let mut order: Vec<usize> = (0..groups.names.len()).collect();
        order.sort_by(|&a, &b| groups.names[a].cmp(&groups.names[b]));
        let mut total = Tally::default();
        for &i in &order {
            total.merge(&groups.tallies[i]);
        }
        total.sessions = self.counted_sessions;
        out.total = total;
        if self.options.by != GroupBy::Session {
            let mut taken: Vec<Option<(String, Tally)>> = groups
                .names
                .into_iter()
                .zip(groups.tallies)
                .map(Some)
                .collect();
            out.groups = order.iter().filter_map(|&i| taken[i].take()).collect();
        } else {
            out.groups = groups.names.into_iter().zip(groups.tallies).collect();
        }
        out
    }
}
