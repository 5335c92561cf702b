//! The records of a session in file order, kept in the chunks the loader's threads made.

use super::record::Record;

/// The records of a session in file order, indexed like a slice. They are stored as the
/// loader's pieces came back from the worker threads: joining them into one vector would
/// copy every record again, into memory the kernel has to supply page by page.
#[derive(Debug, Default)]
pub struct Records<'a> {
    pub(super) chunks: Vec<Vec<Record<'a>>>,
    /// The index of the first record of each chunk (strictly ascending: no chunk is empty).
    starts: Vec<usize>,
    len: usize,
}

impl<'a> Records<'a> {
    pub(super) fn from_chunks(chunks: Vec<Vec<Record<'a>>>) -> Records<'a> {
        let chunks: Vec<Vec<Record<'a>>> = chunks.into_iter().filter(|c| !c.is_empty()).collect();
        let mut starts = Vec::with_capacity(chunks.len());
        let mut len = 0;
        for chunk in &chunks {
            starts.push(len);
            len += chunk.len();
        }
        Records {
            chunks,
            starts,
            len,
        }
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The record at `index`, if there is one.
    pub fn get(&self, index: usize) -> Option<&Record<'a>> {
        if index >= self.len {
            return None;
        }
        // Pieces cover equal byte ranges, so records spread about evenly over the chunks:
        // try the proportional chunk first, then search.
        let guess = index
            .checked_mul(self.starts.len())
            .map_or(0, |scaled| scaled / self.len);
        let fits = |c: usize| {
            self.starts[c] <= index && self.starts.get(c + 1).is_none_or(|&next| index < next)
        };
        let chunk = if fits(guess) {
            guess
        } else {
            self.starts.partition_point(|&start| start <= index) - 1
        };
        self.chunks[chunk].get(index - self.starts[chunk])
    }

    /// The first record (the header, in a loaded session).
    pub fn first(&self) -> Option<&Record<'a>> {
        self.get(0)
    }

    /// The records in file order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Record<'a>> {
        self.chunks.iter().flatten()
    }

    /// The records in file order, mutably.
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Record<'a>> {
        self.chunks.iter_mut().flatten()
    }
}

impl<'a> std::ops::Index<usize> for Records<'a> {
    type Output = Record<'a>;

    /// The record at `index`; panics when out of bounds, like a slice.
    fn index(&self, index: usize) -> &Record<'a> {
        match self.get(index) {
            Some(record) => record,
            None => panic!("record index {index} out of bounds ({} records)", self.len),
        }
    }
}

impl<'r, 'a> IntoIterator for &'r Records<'a> {
    type Item = &'r Record<'a>;
    type IntoIter = std::iter::Flatten<std::slice::Iter<'r, Vec<Record<'a>>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.chunks.iter().flatten()
    }
}
