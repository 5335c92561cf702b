//! Reading a session file: memory-mapped when it is a large regular file (so large sessions
//! are never copied into memory as a whole), read into memory when it is a small one (up to
//! [`READ_LIMIT`]: a copy from the page cache costs less than mapping, faulting in and
//! unmapping, which on a machine with several cores interrupts them all), and read fully
//! when it is a stream: standard input (`-`), a pipe, a FIFO, `/dev/stdin` or a process
//! substitution (`<(…)`).
//!
//! A stream is held in memory as a whole, so it is read up to a cap ([`stream_cap`]: 4 GiB,
//! or `PI_SESSION_MAX_INPUT_SIZE`), past which it is refused with a message saying so, instead
//! of reading `/dev/zero` or an endless pipe until memory runs out. Regular files have no cap:
//! they are mapped, not copied.
//!
//! A mapped file that another program truncates while we read it does not crash us
//! (its `fault` guard): the pages past the new end read as zeros, and [`Input::verify`] reports the
//! file as changed so that the caller discards what it computed; a small file read shorter
//! than it was when opened is reported the same way.

mod fault;

use crate::size::{self, parse_size};
use fault::Guard;
use memmap2::{Mmap, UncheckedAdvice};
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Seek};
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The last block of a mapped file a thread read for a small read (see [`Input::read_at`]):
/// whose it is ([`Mapped::id`]), where it starts and its bytes. One per thread, so that
/// threads reading apart in one file neither wait for each other nor take each other's block.
#[derive(Default)]
struct Block {
    input: u64,
    start: usize,
    bytes: Vec<u8>,
}

thread_local! {
    static BLOCK: RefCell<Block> = RefCell::default();
}

/// The id of the next mapped file (0 is no file's: the empty block's).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Reads smaller than this are served from a block of [`BLOCK_SIZE`] bytes, so that reading the
/// texts of many neighbouring records one by one (a long chain's context) costs one system
/// call per block, not per record.
const SMALL: usize = 16 << 10;
const BLOCK_SIZE: usize = 256 << 10;

/// Regular files up to this size are read into memory instead of mapped.
pub const READ_LIMIT: u64 = 4 << 20;

/// The most bytes read from a stream when `PI_SESSION_MAX_INPUT_SIZE` is not set: 4 GiB, four
/// times the largest real sessions seen (1 GB), held in memory as a whole.
pub const STREAM_CAP: u64 = 4 << 30;

/// The environment variable that sets the cap on a stream's size ([`stream_cap`]).
pub const STREAM_CAP_VARIABLE: &str = "PI_SESSION_MAX_INPUT_SIZE";

/// The bytes of one input.
pub enum Input {
    /// A memory-mapped regular file.
    Mapped(Mapped),
    /// Bytes read into memory: a stream (`None`), or a file that is empty, cannot be
    /// mapped or guarded (its mtime).
    Owned(Vec<u8>, Option<f64>),
    /// A small regular file read into memory (up to [`READ_LIMIT`]).
    Read(ReadFile),
}

/// A small regular file read into memory.
pub struct ReadFile {
    /// The bytes read: at most the file's size when it was opened.
    bytes: Vec<u8>,
    /// The file's size when it was opened.
    len: u64,
    /// Modification time in ms since 1970.
    mtime: f64,
}

/// A memory-mapped file.
pub struct Mapped {
    /// Declared before `map`: unregistered before the map is unmapped.
    guard: Guard,
    map: Mmap,
    /// The file, for positioned reads and the check that it did not shrink.
    file: File,
    /// Modification time in ms since 1970.
    mtime: f64,
    /// This mapping's id among the process's, naming its blocks (never reused).
    id: u64,
}

impl Input {
    /// Opens `path`, or standard input for `-`. A directory is refused ("is a directory");
    /// anything that is not a regular file (a pipe, FIFO, character device, socket) is read
    /// as a stream, to its end.
    pub fn open(path: &Path) -> io::Result<Input> {
        if path.as_os_str() == "-" {
            return read_stream(io::stdin().lock(), stream_cap()?);
        }
        let metadata = std::fs::metadata(path)?;
        if metadata.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory, not a session file",
            ));
        }
        // A FIFO's open waits for a writer, as reading it should.
        let file = File::open(path)?;
        if !file.metadata()?.is_file() {
            return read_stream(file, stream_cap()?);
        }
        Input::of_file(file)
    }

    /// Reads the regular file `file` as [`Input::open`] reads one (mapped when large), from
    /// its start whatever its position: for a file the caller has open already, say a
    /// temporary one it wrote.
    pub fn of_file(mut file: File) -> io::Result<Input> {
        file.seek(io::SeekFrom::Start(0))?;
        let metadata = file.metadata()?;
        let mtime = metadata.modified().map_or(0.0, crate::mtime_ms);
        if metadata.len() == 0 {
            // Empty, or a file whose size the kernel does not know (procfs): read it as the
            // stream it may be.
            let bytes = read_capped(&file, stream_cap()?)?;
            return Ok(Input::Owned(bytes, Some(mtime)));
        }
        if metadata.len() <= READ_LIMIT {
            // What was there when it was opened: an append made meanwhile is not read, a
            // truncation makes the read short (and `verify` says so).
            let mut bytes = Vec::with_capacity(metadata.len() as usize);
            (&file).take(metadata.len()).read_to_end(&mut bytes)?;
            return Ok(Input::Read(ReadFile {
                bytes,
                len: metadata.len(),
                mtime,
            }));
        }
        // SAFETY: the map is read-only and lives as long as `Input`. Another process
        // truncating the file while we read it makes reads past the new end fault; the
        // guard registered next turns that fault into zeros and a flag (see `fault`), and
        // `verify` reports it.
        #[allow(unsafe_code)]
        let map = unsafe { Mmap::map(&file)? };
        let Some(guard) = Guard::register(map.as_ptr(), map.len()) else {
            // No guard to be had: read the file into memory rather than risk the fault.
            drop(map);
            let mut bytes = Vec::with_capacity(metadata.len() as usize);
            (&file).read_to_end(&mut bytes)?;
            return Ok(Input::Owned(bytes, Some(mtime)));
        };
        // No huge (2 MiB) mappings of the page cache: a freshly written file is often held in
        // large folios, and a range mapped as one huge page is not given back by `release`
        // unless all of it is (measured: 1 GB session, 157 MiB of the file resident at the
        // peak instead of 35). A hint only.
        let _ = map.advise(memmap2::Advice::NoHugePage);
        Ok(Input::Mapped(Mapped {
            guard,
            map,
            file,
            mtime,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }))
    }

    /// Checks that the file did not change under us while it was read: `Err` when it
    /// shrank (a read past its new end was caught, or it is now shorter than what was
    /// mapped). Call it after computing from [`Input::bytes`] and before trusting the result.
    /// A file that grew is fine: what was read is the file as it was when opened.
    pub fn verify(&self) -> io::Result<()> {
        let shrank = |was: u64, now: u64| {
            io::Error::other(format!(
                "the file shrank while it was read ({was} bytes when opened, {now} now): another \
                 program truncated or rewrote it, so nothing computed from it is shown; run \
                 again once nothing is writing it"
            ))
        };
        match self {
            Input::Mapped(mapped) => {
                let now = mapped.file.metadata()?.len();
                let was = mapped.map.len() as u64;
                if mapped.guard.faulted() || now < was {
                    return Err(shrank(was, now));
                }
                Ok(())
            }
            Input::Read(read) if (read.bytes.len() as u64) < read.len => {
                Err(shrank(read.len, read.bytes.len() as u64))
            }
            Input::Read(_) | Input::Owned(..) => Ok(()),
        }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Input::Mapped(mapped) => &mapped.map,
            Input::Owned(bytes, _) | Input::Read(ReadFile { bytes, .. }) => bytes,
        }
    }

    /// Tells the kernel that the pages of `range` (rounded out to 2 MiB) are not
    /// needed for now, so that they stop counting in the process's memory; a later read of
    /// those bytes maps them again from the page cache. A no-op for bytes in memory.
    ///
    /// The loader calls this for each piece of the file it has scanned
    /// (`Loader::releasing` of pi-session-format): without it, every page of
    /// the file stays mapped and a 1 GB session would take over 1 GB of resident memory.
    pub fn release(&self, range: Range<usize>) {
        let Input::Mapped(Mapped { map, .. }) = self else {
            return;
        };
        if range.is_empty() || range.end > map.len() {
            return;
        }
        // Rounded out to 2 MiB: large folios mapped around a piece's ends are let go too
        // (a neighbour piece still being read just maps those pages again).
        const HUGE: usize = 2 << 20;
        let start = range.start & !(HUGE - 1);
        let end = range.end.next_multiple_of(HUGE).min(map.len());
        let range = start..end;
        // SAFETY: `MADV_DONTNEED` on this read-only, shared file mapping only drops page
        // table entries: the next read of any of these bytes faults the same file page back
        // in, so no byte that is borrowed (records keep borrowing the text) ever changes
        // value. It rests on the same assumption as the mapping itself (the file is not
        // modified while we read it). The advice is only a hint: an error changes nothing.
        #[allow(unsafe_code)]
        let _ = unsafe {
            map.unchecked_advise_range(UncheckedAdvice::DontNeed, range.start, range.len())
        };
    }

    /// Fills `buf` with the bytes at `at` by a positioned read of the file, for
    /// `Loader::reading` of pi-session-format: the loader then scans copies
    /// in small buffers instead of bringing the mapping's pages into memory. `false` when
    /// the input is not a file or the read failed (the loader then copies from the bytes).
    pub fn read_at(&self, buf: &mut [u8], at: usize) -> bool {
        #[cfg(unix)]
        if let Input::Mapped(Mapped { map, file, id, .. }) = self {
            use std::os::unix::fs::FileExt;
            if buf.len() >= SMALL {
                return file.read_exact_at(buf, at as u64).is_ok();
            }
            return BLOCK.with_borrow_mut(|block| {
                let end = at + buf.len();
                if block.input != *id
                    || !(block.start <= at && end <= block.start + block.bytes.len())
                {
                    // A read before the block is taken for a walk towards the start of the
                    // file (from a leaf to its root): the next block ends where this read ends.
                    let start = if block.input == *id && at < block.start {
                        end.saturating_sub(BLOCK_SIZE)
                    } else {
                        at
                    };
                    let len = BLOCK_SIZE
                        .min(map.len().saturating_sub(start))
                        .max(end - start);
                    block.bytes.resize(len, 0);
                    if file.read_exact_at(&mut block.bytes, start as u64).is_err() {
                        *block = Block::default();
                        return false;
                    }
                    (block.input, block.start) = (*id, start);
                }
                let from = at - block.start;
                buf.copy_from_slice(&block.bytes[from..from + buf.len()]);
                true
            });
        }
        let _ = (buf, at);
        false
    }

    /// Hands the bytes of `range` to `f` in file order, in pieces of at most 1 MiB: read into
    /// one buffer ([`Input::read_at`]) from a mapped file, so that a pass over a large file
    /// (say to hash it) does not bring the mapping's pages into memory; slices of the bytes
    /// otherwise, or where a read fails. `range` must lie within [`Input::bytes`].
    pub fn for_each_piece(&self, range: Range<usize>, mut f: impl FnMut(&[u8])) {
        const PIECE: usize = 1 << 20;
        let bytes = &self.bytes()[range.clone()];
        let mut buf = Vec::new();
        for (n, piece) in bytes.chunks(PIECE).enumerate() {
            if self.is_mapped() {
                buf.resize(piece.len(), 0);
                if self.read_at(&mut buf, range.start + n * PIECE) {
                    f(&buf);
                    continue;
                }
            }
            f(piece);
        }
    }

    /// Whether the input is a mapped file (a large one): [`Input::read_at`] reads it, and
    /// reading its [`Input::bytes`] brings the mapping's pages into memory.
    pub fn is_mapped(&self) -> bool {
        matches!(self, Input::Mapped(_))
    }

    /// Whether the input is standard input or another stream (a pipe, FIFO or device):
    /// there is no file to replace.
    pub fn is_stdin(&self) -> bool {
        matches!(self, Input::Owned(_, None))
    }

    /// The file's modification time in ms since 1970 (0 for standard input).
    pub fn modified_ms(&self) -> f64 {
        match self {
            Input::Mapped(Mapped { mtime, .. })
            | Input::Read(ReadFile { mtime, .. })
            | Input::Owned(_, Some(mtime)) => *mtime,
            Input::Owned(_, None) => 0.0,
        }
    }
}

/// Lets go of the parts of a file read once each, in (roughly) file order, behind a walk over
/// its lines: the ranges read are gathered into one span, passed to `release` (say
/// [`Input::release`]) each time it reaches [`ReleaseBehind::BATCH`] bytes and when the walk
/// ends (on drop), so that a walk over a mapped session of gigabytes does not leave it resident.
/// A call (and the faults it causes) per line would cost more than the walk; a span spans
/// the lines read since the last release, so a line read again later is simply faulted back.
pub struct ReleaseBehind<F: FnMut(Range<usize>)> {
    release: F,
    span: Option<Range<usize>>,
}

impl<F: FnMut(Range<usize>)> ReleaseBehind<F> {
    /// The bytes gathered before they are let go.
    pub const BATCH: usize = 16 << 20;

    /// A walk whose ranges are let go with `release`.
    pub fn new(release: F) -> ReleaseBehind<F> {
        ReleaseBehind {
            release,
            span: None,
        }
    }

    /// Notes that `range` was read; `true` when that let a span go.
    pub fn passed(&mut self, range: Range<usize>) -> bool {
        let span = match self.span.take() {
            Some(span) => span.start.min(range.start)..span.end.max(range.end),
            None => range,
        };
        if span.len() >= Self::BATCH {
            (self.release)(span);
            return true;
        }
        self.span = Some(span);
        false
    }
}

impl<F: FnMut(Range<usize>)> Drop for ReleaseBehind<F> {
    fn drop(&mut self) {
        if let Some(span) = self.span.take() {
            (self.release)(span);
        }
    }
}

/// Reads a stream to its end, refusing it past `cap` bytes.
fn read_stream(stream: impl Read, cap: u64) -> io::Result<Input> {
    Ok(Input::Owned(read_capped(stream, cap)?, None))
}

/// Reads to the end, but no more than `cap` bytes: a longer input is an error that says what
/// the cap is and how to raise it.
fn read_capped(stream: impl Read, cap: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    stream.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "read as a stream, it is larger than {}, the most read from a stream (which is \
                 held in memory as a whole): set {STREAM_CAP_VARIABLE} to a larger size (e.g. \
                 {STREAM_CAP_VARIABLE}=16GiB) to read it, or save it to a regular file first \
                 (files are not capped)",
                size::describe(cap)
            ),
        ));
    }
    Ok(bytes)
}

/// The most bytes read from a stream: `PI_SESSION_MAX_INPUT_SIZE` (`500MB`, `8GiB`, bytes;
/// see [`parse_size`]) or [`STREAM_CAP`]. An unreadable value is an error
/// rather than silently the default.
pub fn stream_cap() -> io::Result<u64> {
    let Some(value) = std::env::var_os(STREAM_CAP_VARIABLE) else {
        return Ok(STREAM_CAP);
    };
    value
        .to_str()
        .ok_or_else(|| format!("{value:?} is not a size"))
        .and_then(|text| parse_size(text).map_err(|e| e.to_string()))
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{STREAM_CAP_VARIABLE}: {e}: give the most bytes to read from a stream as \
                     e.g. 500MB, 8GiB or a number of bytes"
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_behind_lets_go_in_batches_and_at_the_end() {
        let released = RefCell::new(Vec::new());
        {
            let mut behind = ReleaseBehind::new(|range| released.borrow_mut().push(range));
            const MB: usize = 1 << 20;
            assert!(!behind.passed(0..10 * MB));
            assert!(!behind.passed(12 * MB..15 * MB));
            assert!(behind.passed(15 * MB..17 * MB));
            assert!(!behind.passed(17 * MB..18 * MB));
            assert_eq!(*released.borrow(), std::slice::from_ref(&(0..17 * MB)));
        }
        assert_eq!(*released.borrow(), [0..17 << 20, 17 << 20..18 << 20]);
    }

    #[test]
    fn small_files_are_read_and_large_ones_mapped() {
        let dir = std::env::temp_dir().join(format!("pi-session-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = dir.join("small.jsonl");
        std::fs::write(&small, b"{}\n").unwrap();
        let input = Input::open(&small).unwrap();
        assert!(matches!(input, Input::Read(_)));
        assert_eq!(input.bytes(), b"{}\n");
        assert!(input.verify().is_ok() && !input.is_stdin() && input.modified_ms() > 0.0);
        let large = dir.join("large.jsonl");
        std::fs::write(&large, vec![b' '; READ_LIMIT as usize + 1]).unwrap();
        assert!(matches!(Input::open(&large).unwrap(), Input::Mapped(_)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn small_reads_forwards_and_backwards_get_the_bytes_asked_for() {
        let dir = std::env::temp_dir().join(format!("pi-session-read-at-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("large.jsonl");
        let bytes: Vec<u8> = (0..READ_LIMIT as usize + 3 * BLOCK_SIZE)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        std::fs::write(&path, &bytes).unwrap();
        let input = Input::open(&path).unwrap();
        assert!(matches!(input, Input::Mapped(_)));
        // Pieces of 1000 bytes from the end to the start (a leaf-to-root walk), then from the
        // start to the end, then either side of a block's edges.
        let pieces: Vec<usize> = (0..bytes.len() / 1000).collect();
        let backwards = pieces.iter().rev().map(|&n| n * 1000);
        let forwards = pieces.iter().map(|&n| n * 1000);
        let edges = [
            BLOCK_SIZE - 1,
            BLOCK_SIZE + 1,
            1,
            2 * BLOCK_SIZE - 500,
            10,
            bytes.len() - 1000,
        ];
        for at in backwards.chain(forwards).chain(edges) {
            let mut buf = [0u8; 1000];
            assert!(input.read_at(&mut buf, at));
            assert_eq!(&buf[..], &bytes[at..at + 1000], "at {at}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A pass in pieces over a mapped file gives every byte of the range, in order, and
    /// leaves the mapping's pages out of the process's memory (its `Rss` in
    /// `/proc/self/smaps`; reading the pieces from the mapping would make it 16 MiB).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pass_in_pieces_gives_every_byte_and_leaves_the_mapping_unread() {
        let dir = std::env::temp_dir().join(format!("pi-session-pieces-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("large.jsonl");
        let bytes: Vec<u8> = (0..16usize << 20).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let input = Input::open(&path).unwrap();
        assert!(matches!(input, Input::Mapped(_)));
        for range in [
            0..bytes.len(),
            5..bytes.len() - 7,
            100..100,
            (3 << 20)..(3 << 20) + 1,
        ] {
            let mut seen = Vec::new();
            input.for_each_piece(range.clone(), |piece| {
                assert!(!piece.is_empty() && piece.len() <= 1 << 20);
                seen.extend_from_slice(piece);
            });
            assert!(seen == bytes[range.clone()], "{range:?}");
        }
        let start = format!("{:x}-", input.bytes().as_ptr() as usize);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let rss_kib: u64 = smaps
            .lines()
            .skip_while(|l| !l.starts_with(&start))
            .find_map(|l| l.strip_prefix("Rss:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("the mapping in /proc/self/smaps");
        assert!(rss_kib < 1024, "the mapping holds {rss_kib} KiB");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_stream_is_read_up_to_its_cap() {
        let bytes = read_capped(io::repeat(b'x').take(1000), 1000).unwrap();
        assert_eq!(bytes.len(), 1000);
        let error = read_capped(io::repeat(b'x'), 1 << 20).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::FileTooLarge);
        let error = error.to_string();
        assert!(
            error.contains("larger than 1 MiB (1048576 bytes)")
                && error.contains("PI_SESSION_MAX_INPUT_SIZE=16GiB"),
            "{error}"
        );
        assert_eq!(size::describe(STREAM_CAP), "4 GiB (4294967296 bytes)");
    }

    /// A small file that shrank between its size being taken and its bytes being read is
    /// read short: reported, as a mapped file that shrank is.
    #[test]
    fn a_small_file_read_short_is_reported_as_shrunk() {
        let read = |n: usize| {
            Input::Read(ReadFile {
                bytes: vec![b'x'; n],
                len: 20,
                mtime: 1.0,
            })
        };
        let error = read(10).verify().unwrap_err().to_string();
        assert!(
            error.contains("shrank while it was read (20 bytes when opened, 10 now)"),
            "{error}"
        );
        assert!(read(20).verify().is_ok());
    }
}
