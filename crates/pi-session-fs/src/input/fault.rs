//! Surviving a mapped file that shrinks while it is read.
//!
//! A memory map covers the file as long as it was when mapped. When another program
//! truncates the file, reading a page past its new end raises `SIGBUS`, which kills the
//! process by default: one truncated file would end a whole `validate DIR` run. This module
//! installs a `SIGBUS` handler that, for a fault inside a mapping registered here, puts a
//! page of zeros at the faulting address (an anonymous `MAP_FIXED` mapping over the file
//! page) and notes the fault on that mapping's [`Guard`]. The read that faulted then sees
//! zeros and carries on; the caller asks [`Guard::faulted`] when it is done and reports the
//! file as changed while read, discarding what it computed from it.
//!
//! A fault anywhere else (a real bug) restores the previous handler and returns, so the
//! instruction faults again and the process dies as it would have without us.
//!
//! At most [`SLOTS`] mappings are guarded at a time; [`Guard::register`] returns `None` when
//! all are taken, and the caller then reads the file into memory instead of mapping it.

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many mappings can be guarded at once (more than the threads that map files).
pub(super) const SLOTS: usize = 64;

/// One registered mapping: its address range and whether a fault was caught in it.
struct Slot {
    /// 0 when the slot is free; set last when registering, cleared first when releasing.
    start: AtomicUsize,
    len: AtomicUsize,
    faulted: AtomicBool,
    taken: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
    taken: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The handler that was in place before ours (restored for faults that are not ours).
static mut PREVIOUS: std::mem::MaybeUninit<libc::sigaction> = std::mem::MaybeUninit::uninit();

/// A mapping registered with the handler; unregistered on drop. Drop it before unmapping.
pub(super) struct Guard {
    slot: usize,
}

impl Guard {
    /// Registers the mapping `start..start + len`, installing the handler on first use.
    /// `None` when the handler could not be installed or every slot is taken.
    pub(super) fn register(start: *const u8, len: usize) -> Option<Guard> {
        INSTALL.call_once(install);
        if !INSTALLED.load(Ordering::Acquire) || len == 0 {
            return None;
        }
        for (i, slot) in TABLE.iter().enumerate() {
            if slot
                .taken
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                slot.faulted.store(false, Ordering::Relaxed);
                slot.len.store(len, Ordering::Relaxed);
                slot.start.store(start as usize, Ordering::Release);
                return Some(Guard { slot: i });
            }
        }
        None
    }

    /// Whether a read of the mapping faulted (the file shrank under it).
    pub(super) fn faulted(&self) -> bool {
        TABLE[self.slot].faulted.load(Ordering::Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let slot = &TABLE[self.slot];
        slot.start.store(0, Ordering::Release);
        slot.len.store(0, Ordering::Relaxed);
        slot.taken.store(false, Ordering::Release);
    }
}

#[allow(unsafe_code)]
fn install() {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        PAGE.store(page as usize, Ordering::Relaxed);
    }
    // SAFETY: a zeroed sigaction is a valid value; we fill in the handler, flags and an
    // empty mask, and keep the previous action in PREVIOUS, written only here, once, before
    // the handler can run (it is installed by this very call).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
        libc::sigemptyset(&mut action.sa_mask);
        let previous = &raw mut PREVIOUS;
        if libc::sigaction(libc::SIGBUS, &action, (*previous).as_mut_ptr()) == 0 {
            INSTALLED.store(true, Ordering::Release);
        }
    }
}

/// The `SIGBUS` handler. Async-signal-safe: atomics, `mmap` and `sigaction` only.
#[allow(unsafe_code)]
extern "C" fn handler(
    _signal: libc::c_int,
    info: *mut libc::siginfo_t,
    _context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler; `si_addr` is the
    // faulting address for SIGBUS.
    let address = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &TABLE {
        let start = slot.start.load(Ordering::Acquire);
        let len = slot.len.load(Ordering::Relaxed);
        if start == 0 || address < start || address >= start + len {
            continue;
        }
        let at = address & !(page - 1);
        // SAFETY: `at` is a page inside a live read-only mapping registered by its owner
        // (the guard is dropped before the map is unmapped). Replacing that page with a
        // private page of zeros changes what later reads of it see (zeros instead of a fault)
        // and nothing else; the owner learns of it through `faulted` and discards the result.
        let zeros = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if zeros != libc::MAP_FAILED {
            slot.faulted.store(true, Ordering::Release);
            return;
        }
        break;
    }
    // Not ours (or the page could not be replaced): let the fault happen as it would have.
    // SAFETY: PREVIOUS was filled by `install` before this handler was installed.
    unsafe {
        let previous = &raw const PREVIOUS;
        libc::sigaction(libc::SIGBUS, (*previous).as_ptr(), std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A mapped file truncated under the map: reading past the new end gives zeros and a
    /// fault is recorded, instead of killing the process.
    #[test]
    #[allow(unsafe_code)]
    fn truncated_mapping_reads_zeros_and_reports_the_fault() {
        let path = std::env::temp_dir().join(format!("pi-session-fault-{}", std::process::id()));
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(&vec![b'x'; 3 * 65536]).unwrap();
        drop(file);
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: test-only map of our own file.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        let guard = Guard::register(map.as_ptr(), map.len()).expect("registered");
        assert!(!guard.faulted());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(100)
            .unwrap();
        let sum: u64 = map.iter().map(|&b| u64::from(b)).sum();
        assert!(guard.faulted());
        assert!(sum < 3 * 65536 * u64::from(b'x'));
        assert_eq!(map[0], b'x');
        drop(guard);
        drop(map);
        let _ = std::fs::remove_file(&path);
    }
}
