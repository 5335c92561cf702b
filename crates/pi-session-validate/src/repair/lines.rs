//! The lines being repaired ([`Line`]: the input's bytes until a repair edits one), and
//! letting go of the input behind a walk over them ([`Behind`]).

use pi_session_fs::input::ReleaseBehind;
use std::borrow::Cow;
use std::ops::Range;

/// One line of the file being repaired: the input's bytes until a repair edits it.
#[derive(Debug, Clone)]
pub(super) struct Line<'a> {
    /// The line without its newline.
    pub(super) text: Cow<'a, [u8]>,
    /// Its line in the input (1-based; 0 for an added line).
    pub(super) origin: usize,
    /// The text before the first repair that edited it (`None` while unedited): what goes to
    /// the rejects when a later repair takes the line out.
    unedited: Option<Cow<'a, [u8]>>,
}

impl<'a> Line<'a> {
    pub(super) fn new(text: impl Into<Cow<'a, [u8]>>, origin: usize) -> Line<'a> {
        Line {
            text: text.into(),
            origin,
            unedited: None,
        }
    }

    /// Replaces the text, keeping the first text it had.
    pub(super) fn edit(&mut self, text: Vec<u8>) {
        let before = std::mem::replace(&mut self.text, Cow::Owned(text));
        self.unedited.get_or_insert(before);
    }

    /// The text as it was before any repair edited it.
    pub(super) fn original(&self) -> &[u8] {
        self.unedited.as_deref().unwrap_or(&self.text)
    }

    /// The text as it was before any repair edited it.
    pub(super) fn into_unedited(self) -> Vec<u8> {
        self.unedited.unwrap_or(self.text).into_owned()
    }
}

/// Lets go of the input's pages behind a walk over the whole file's lines (those the lines
/// still borrow are read again if a later repair asks), through the file layer's
/// [`ReleaseBehind`], so that a repair of a mapped file of gigabytes does not hold it.
pub(super) struct Behind<'r> {
    input: &'r [u8],
    release: Option<ReleaseBehind<&'r (dyn Fn(Range<usize>) + Sync)>>,
}

impl<'r> Behind<'r> {
    /// A walk over the lines of `input` that lets go of it behind with `release`.
    pub(super) fn new(input: &'r [u8], release: Option<crate::Release<'r>>) -> Behind<'r> {
        Behind {
            input,
            release: release.map(|crate::Release(release)| ReleaseBehind::new(release)),
        }
    }

    /// Notes that `text` was read (nothing for a text that is not the input's).
    pub(super) fn passed(&mut self, text: &[u8]) {
        let Some(release) = &mut self.release else {
            return;
        };
        let start = (text.as_ptr() as usize).wrapping_sub(self.input.as_ptr() as usize);
        if start >= self.input.len() || text.len() > self.input.len() - start {
            return;
        }
        release.passed(start..start + text.len());
    }
}
