//! Where a writer's ids and times come from: [`IdSource`] (entry ids from
//! `crypto.randomUUID()`, session ids as UUID v7) and [`Clock`] (`Date.now()`), with the
//! random and system implementations pi uses and deterministic ones for tests
//! ([`SequentialIds`], [`ManualClock`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The ids a writer draws.
///
/// Entry ids are drawn the way pi's `generateId` draws them: the first 8 characters of
/// [`IdSource::random_uuid`], again (up to 100 times) while the id is taken, then the whole
/// UUID. Session ids are [`IdSource::session_id`].
pub trait IdSource: Send {
    /// A random UUID as `crypto.randomUUID()` returns it (lowercase `8-4-4-4-12`).
    fn random_uuid(&mut self) -> String;

    /// A new session id for a session created at `now_ms` (pi: a UUID v7).
    fn session_id(&mut self, now_ms: i64) -> String;
}

/// The time a writer stamps entries with.
pub trait Clock: Send {
    /// Milliseconds since the Unix epoch (`Date.now()`).
    fn now_ms(&mut self) -> i64;
}

/// Random ids, as pi draws them: UUID v4 entry ids, and UUID v7 session ids whose time never
/// goes backwards within one source and whose counter (random at first) grows by one per id.
/// Randomness is drawn from the system 4 KiB at a time, as Node's `randomUUID` caches it.
#[derive(Debug)]
pub struct RandomIds {
    last_ms: i64,
    counter: Option<u64>,
    pool: Box<[u8; POOL]>,
    used: usize,
}

const POOL: usize = 4096;

impl Default for RandomIds {
    fn default() -> Self {
        RandomIds {
            last_ms: 0,
            counter: None,
            pool: Box::new([0; POOL]),
            used: POOL,
        }
    }
}

impl RandomIds {
    /// A new source.
    pub fn new() -> Self {
        Self::default()
    }

    fn next_bytes(&mut self) -> [u8; 16] {
        if self.used + 16 > POOL {
            if getrandom::fill(&mut self.pool[..]).is_err() {
                return random_bytes();
            }
            self.used = 0;
        }
        let mut out = [0u8; 16];
        out.copy_from_slice(&self.pool[self.used..self.used + 16]);
        self.used += 16;
        out
    }
}

fn random_bytes() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness (never seen on the platforms we build for): fall back on the
        // clock and an address, so that ids still differ between calls and processes.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let salt = (&raw const bytes) as usize as u128;
        bytes = (nanos ^ salt.rotate_left(64)).to_le_bytes();
    }
    bytes
}

fn hyphenated(bytes: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

impl IdSource for RandomIds {
    fn random_uuid(&mut self) -> String {
        let mut bytes = self.next_bytes();
        bytes[6] = 0x40 | (bytes[6] & 0x0f);
        bytes[8] = 0x80 | (bytes[8] & 0x3f);
        hyphenated(&bytes)
    }

    fn session_id(&mut self, now_ms: i64) -> String {
        let mut bytes = self.next_bytes();
        let ms = now_ms.clamp(0, 0xffff_ffff_ffff).max(self.last_ms);
        self.last_ms = ms;
        // pi-ai's uuidv7: a 41-bit counter, random at first, one more per id.
        let counter = match self.counter {
            None => u64::from_be_bytes([0, 0, 0, bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]]),
            Some(c) => (c + 1) & ((1 << 41) - 1),
        };
        self.counter = Some(counter);
        let ms = ms as u64;
        bytes[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
        // The shifts and masks below are the layout itself: each byte takes its bits.
        bytes[6] = 0x70 | ((counter >> 37) & 0x0f) as u8;
        bytes[7] = ((counter >> 29) & 0xff) as u8;
        bytes[8] = 0x80 | ((counter >> 23) & 0x3f) as u8;
        bytes[9] = ((counter >> 15) & 0xff) as u8;
        bytes[10] = ((counter >> 7) & 0xff) as u8;
        bytes[11] = (((counter & 0x7f) << 1) as u8) | (bytes[11] & 1);
        hyphenated(&bytes)
    }
}

/// Deterministic ids for tests: entry ids `00000001`, `00000002`, … (as the first 8
/// characters of `00000001-0000-4000-8000-000000000000`, …) and session ids
/// `00000000-0000-7000-8000-00000000000N`.
#[derive(Debug, Default, Clone)]
pub struct SequentialIds {
    entries: u32,
    sessions: u64,
}

impl SequentialIds {
    /// A source whose first entry id is `00000001`.
    pub fn new() -> Self {
        Self::default()
    }
}

impl IdSource for SequentialIds {
    fn random_uuid(&mut self) -> String {
        self.entries = self.entries.wrapping_add(1);
        format!("{:08x}-0000-4000-8000-000000000000", self.entries)
    }

    fn session_id(&mut self, _now_ms: i64) -> String {
        self.sessions += 1;
        format!("00000000-0000-7000-8000-{:012x}", self.sessions)
    }
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&mut self) -> i64 {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
        }
    }
}

/// A clock that reads the time it was last set to; clones share the time, so a test (or a
/// conformance driver) keeps one and moves it while a writer holds another.
#[derive(Debug, Default, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock that reads `ms`.
    pub fn at(ms: i64) -> Self {
        ManualClock(Arc::new(AtomicI64::new(ms)))
    }

    /// Sets the time every clone reads.
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::Relaxed);
    }

    /// Moves the time by `ms`.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_ms(&mut self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// pi's `generateId(byId)`: 8 characters of a random UUID, drawn again while `taken`, and
/// after 100 collisions a whole UUID.
pub(crate) fn entry_id(ids: &mut dyn IdSource, taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let uuid = ids.random_uuid();
        let short: String = uuid.chars().take(8).collect();
        if !taken(&short) {
            return short;
        }
    }
    ids.random_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_uuid(s: &str, version: char) -> bool {
        let parts: Vec<&str> = s.split('-').collect();
        parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
            && s.chars()
                .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c))
            && parts[2].starts_with(version)
            && matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b')
    }

    #[test]
    fn random_ids_are_uuids_of_their_versions() {
        let mut ids = RandomIds::new();
        for _ in 0..100 {
            assert!(is_uuid(&ids.random_uuid(), '4'));
        }
        let first = ids.session_id(1_775_030_400_000);
        assert!(is_uuid(&first, '7'), "{first}");
        assert!(first.starts_with("019d480e-7400-7"), "{first}");
    }

    #[test]
    fn session_ids_grow_even_when_the_clock_goes_back() {
        let mut ids = RandomIds::new();
        let a = ids.session_id(2_000);
        let b = ids.session_id(1_000);
        let c = ids.session_id(2_000);
        assert!(a < b && b < c, "{a} {b} {c}");
    }

    #[test]
    fn entry_ids_are_drawn_again_on_collision_then_whole() {
        let mut ids = SequentialIds::new();
        assert_eq!(entry_id(&mut ids, |id| id == "00000001"), "00000002");
        let whole = entry_id(&mut ids, |_| true);
        assert_eq!(whole.len(), 36);
    }

    #[test]
    fn manual_clocks_share_their_time() {
        let clock = ManualClock::at(5);
        let mut other = clock.clone();
        clock.advance(10);
        assert_eq!(other.now_ms(), 15);
    }
}
