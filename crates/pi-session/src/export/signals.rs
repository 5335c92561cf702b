//! Ctrl-C, `SIGTERM` and `SIGHUP` during `export --format parquet`: the signals are blocked
//! in every thread and waited for by one thread of their own (`sigwait`), which runs the
//! clean-up (remove what the export wrote) as ordinary code — nothing runs in a signal
//! handler — and then ends the process by the same signal, as if it had not been caught.
//! Whether a process still runs (`kill(pid, 0)`), for the clean-up of killed exports.

/// The signals that stop an export.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Blocks [`SIGNALS`] in this thread (and so in every thread it starts from now on: call it
/// before any other thread is started) and starts a thread that, on the first of them, calls
/// `clean_up` with the signal's name and then dies of the signal. `false` when the signals
/// could not be blocked (nothing changed then).
pub(super) fn on_signal(clean_up: impl FnOnce(&str) + Send + 'static) -> bool {
    let Some(set) = signal_set() else {
        return false;
    };
    if !mask(libc::SIG_BLOCK, &set) {
        return false;
    }
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let Some(signal) = wait(&set) else {
                return;
            };
            let name = match signal {
                libc::SIGINT => "SIGINT",
                libc::SIGTERM => "SIGTERM",
                _ => "SIGHUP",
            };
            clean_up(name);
            die_of(signal);
        });
    if spawned.is_err() {
        mask(libc::SIG_UNBLOCK, &set);
        return false;
    }
    true
}

/// The set of [`SIGNALS`].
#[allow(unsafe_code)]
fn signal_set() -> Option<libc::sigset_t> {
    // SAFETY: `sigset_t` is plain data, initialised by `sigemptyset` before any other use;
    // the calls get a valid pointer to our local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        if libc::sigemptyset(&mut set) != 0 {
            return None;
        }
        for signal in SIGNALS {
            if libc::sigaddset(&mut set, signal) != 0 {
                return None;
            }
        }
        Some(set)
    }
}

/// Changes this thread's signal mask (`how`: block or unblock `set`).
#[allow(unsafe_code)]
fn mask(how: libc::c_int, set: &libc::sigset_t) -> bool {
    // SAFETY: a valid set; the old mask is not asked for.
    unsafe { libc::pthread_sigmask(how, set, std::ptr::null_mut()) == 0 }
}

/// Waits for one of `set` (blocked); `None` if waiting failed.
#[allow(unsafe_code)]
fn wait(set: &libc::sigset_t) -> Option<libc::c_int> {
    let mut signal: libc::c_int = 0;
    loop {
        // SAFETY: a valid set and a valid pointer to our local.
        let r = unsafe { libc::sigwait(set, &mut signal) };
        match r {
            0 => return Some(signal),
            libc::EINTR => {}
            _ => return None,
        }
    }
}

/// Ends the process by `signal` with its default action (so that a shell sees the signal),
/// or with exit status 128 + `signal` should it survive that.
#[allow(unsafe_code)]
fn die_of(signal: libc::c_int) -> ! {
    // SAFETY: resetting a disposition to the default, unblocking it in this thread and
    // sending it to this thread: plain system calls with valid arguments.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    std::process::exit(128 + signal)
}

/// Whether process `pid` still runs (it exists, whoever owns it).
#[allow(unsafe_code)]
pub(super) fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
