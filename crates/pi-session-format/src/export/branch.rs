//! [`Branch`]: a branch's transcript made a batch of entries at a time, so that writing the
//! conversation of a session of any size holds one batch of it, not the whole.

use super::transcript::{Item, Transcript, TranscriptError, item_of, resolve_blobs};
use crate::Session;
use crate::omp::Blobs;
use crate::session::Key;
use crate::tree::{Label, Leaf};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io;
use std::sync::Mutex;

/// A check run after each batch is made and before it is written (see [`Branch::checking`]).
pub type Check<'a> = &'a (dyn Fn() -> io::Result<()> + Sync);

/// The branch of a session from the root to a leaf, as pi's `getBranch` walks it, whose
/// [`Item`]s are made [`Branch::BATCH`] entries at a time ([`Branch::batches`]), each batch on
/// every core: what [`super::markdown::write`] and [`super::html::write`] write,
/// and what [`Transcript::of`] collects.
///
/// Loaded through a buffer ([`crate::session::Loader::reading`]), the session keeps no line's
/// text; each batch then reads its lines again and lets them go, so a page made from a session
/// of gigabytes holds its skeleton and two batches (one written while the next is made).
pub struct Branch<'a, 's> {
    session: &'a Session<'s>,
    /// The transcript's facts, without items.
    head: Transcript,
    /// The records shown, root first (the path without its `label` entries).
    path: Vec<usize>,
    labels: &'a HashMap<Key, Label>,
    blobs: Option<&'a Blobs>,
    /// The hashes of the blobs the store lacks, by their item's position on the path.
    missing_blobs: Mutex<Vec<(usize, String)>>,
    check: Option<Check<'a>>,
}

impl<'a, 's> Branch<'a, 's> {
    /// How many entries a batch holds.
    pub const BATCH: usize = 4096;

    /// The branch of `session` ending at `leaf`.
    pub fn of(session: &'a Session<'s>, leaf: &Leaf) -> Result<Branch<'a, 's>, TranscriptError> {
        let index = session.index();
        if let Leaf::Id(id) = leaf
            && index.get(session, &Key::string(id)).is_none()
        {
            return Err(TranscriptError::NoSuchEntry(id.clone()));
        }
        let path = match index.leaf_record(session, leaf) {
            Some(record) => index
                .path(session, record)
                .map_err(TranscriptError::Cycle)?,
            None => Vec::new(),
        };
        let head = Transcript::head(session, path.last().map(|&i| &session.records[i]));
        let path = path
            .into_iter()
            .filter(|&i| session.records[i].entry_type() != Some("label"))
            .collect();
        Ok(Branch {
            session,
            head,
            path,
            labels: index.labels(session),
            blobs: None,
            missing_blobs: Mutex::default(),
            check: None,
        })
    }

    /// Puts back the images of an oh-my-pi session that `blobs` holds, batch by batch, as
    /// [`Transcript::resolve_blobs`] does; [`Branch::missing_blobs`] names the ones it lacks.
    pub fn resolving_blobs(mut self, blobs: &'a Blobs) -> Self {
        self.blobs = Some(blobs);
        self
    }

    /// Runs `check` after each batch is made and before it is given out; its error ends the
    /// batches. A caller whose file may change meanwhile checks it did not (say, that it did
    /// not shrink: the lines are read again for each batch), so that nothing made from a file
    /// that changed is written.
    pub fn checking(mut self, check: Check<'a>) -> Self {
        self.check = Some(check);
        self
    }

    /// The transcript's facts (session id, working directory, start, name, leaf), with no
    /// items.
    pub fn head(&self) -> &Transcript {
        &self.head
    }

    /// How many entries the branch shows (its entries but labels).
    pub fn len(&self) -> usize {
        self.path.len()
    }

    /// Whether the branch shows no entry.
    pub fn is_empty(&self) -> bool {
        self.path.is_empty()
    }

    /// The items, root first, [`Branch::BATCH`] at a time; an error is the check's
    /// ([`Branch::checking`]), after which there are no more batches.
    pub fn batches(&self) -> impl Iterator<Item = io::Result<Vec<Item>>> + '_ {
        let mut failed = false;
        (0..self.path.len())
            .step_by(Self::BATCH)
            .map_while(move |start| {
                if failed {
                    return None;
                }
                let batch = self.batch_of(start, Ok);
                failed = batch.is_err();
                Some(batch)
            })
    }

    /// The batch of items from position `start`, each passed to `make` on every core; then
    /// the branch's check ([`Branch::checking`]). An error is `make`'s or the check's.
    pub(super) fn batch_of<T: Send>(
        &self,
        start: usize,
        make: impl Fn(Item) -> io::Result<T> + Sync,
    ) -> io::Result<Vec<T>> {
        let end = (start + Self::BATCH).min(self.path.len());
        let made = (start..end)
            .into_par_iter()
            .map(|n| make(self.item(n)))
            .collect::<io::Result<_>>()?;
        self.check()?;
        Ok(made)
    }

    /// The hashes of the blobs the store lacked in the batches made so far (see
    /// [`Branch::resolving_blobs`]).
    pub fn missing_blobs(&self) -> Vec<String> {
        let mut missing = self
            .missing_blobs
            .lock()
            .map(|missing| missing.clone())
            .unwrap_or_default();
        // Items are made on every core: put back in their order.
        missing.sort_by_key(|&(n, _)| n);
        missing.into_iter().map(|(_, hash)| hash).collect()
    }

    /// The whole transcript ([`Transcript::of`]; a branch made there has no check).
    pub(super) fn into_transcript(self) -> Transcript {
        let items = self.items_of(0..self.path.len());
        Transcript { items, ..self.head }
    }

    /// The items at `positions` on the path, made on every core.
    fn items_of(&self, positions: std::ops::Range<usize>) -> Vec<Item> {
        positions.into_par_iter().map(|n| self.item(n)).collect()
    }

    /// The `n`th item, root first, its images put back.
    pub(super) fn item(&self, n: usize) -> Item {
        let mut item = item_of(&self.session.records[self.path[n]], self.labels);
        if let Some(blobs) = self.blobs {
            let missing = resolve_blobs(std::slice::from_mut(&mut item), blobs);
            if !missing.is_empty()
                && let Ok(mut all) = self.missing_blobs.lock()
            {
                all.extend(missing.into_iter().map(|hash| (n, hash)));
            }
        }
        item
    }

    /// Runs the check, if there is one ([`Branch::checking`]).
    pub(super) fn check(&self) -> io::Result<()> {
        self.check.map_or(Ok(()), |check| check())
    }
}
