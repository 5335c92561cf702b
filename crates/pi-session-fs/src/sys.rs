//! The few system calls that `std` does not offer, each in a small function: linking an
//! unnamed (`O_TMPFILE`) file into a directory, renaming without replacing, asking whether a
//! process is alive and whether we may write a file, extended attributes, holding the stop
//! signals while a write must complete, waiting for them in a thread of their own and dying of
//! one, and killing a process group.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL byte"))
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Gives the open file `file` the new name `to` (`linkat` of `/proc/self/fd/N`, following
/// that magic link to the file itself). Fails with `AlreadyExists` when `to` exists: nothing
/// is ever replaced, and a symlink at `to` is not followed.
#[allow(unsafe_code)]
pub(crate) fn link_open_file(file: &File, to: &Path) -> io::Result<()> {
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|_| io::Error::other("unreachable: a number has no NUL"))?;
    let to = c_path(to)?;
    // SAFETY: both paths are NUL-terminated C strings that outlive the call; `linkat` only
    // reads them.
    check(unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    })
}

/// Renames `from` to `to` unless `to` exists (`renameat2(RENAME_NOREPLACE)`): for file
/// systems without hard links.
#[allow(unsafe_code)]
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    let from = c_path(from)?;
    let to = c_path(to)?;
    // SAFETY: both paths are NUL-terminated C strings that outlive the call.
    check(unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    })
}

/// Whether a process with this id exists (a process we may not signal exists too).
#[allow(unsafe_code)]
pub(crate) fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 sends nothing; it only checks that the process exists.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Whether this process may write `path` (`faccessat(W_OK, AT_EACCESS)`: with the
/// effective ids; root may write anything on a writable file system).
#[allow(unsafe_code)]
pub(crate) fn may_write(path: &Path) -> bool {
    let Ok(path) = c_path(path) else {
        return false;
    };
    // SAFETY: a NUL-terminated path that outlives the call.
    unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

/// The effective user id of this process.
#[allow(unsafe_code)]
pub(crate) fn euid() -> u32 {
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The home directory of the passwd entry of this process's real user (`getpwuid_r`), as
/// Node's `os.homedir()` takes it when `HOME` is not set; `None` when there is none.
#[allow(unsafe_code)]
pub(crate) fn passwd_home() -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let mut buffer = vec![0 as libc::c_char; 16 << 10];
    // SAFETY: `passwd` is plain data that `getpwuid_r` fills; `result` is set to it or null.
    let mut passwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result = std::ptr::null_mut();
    loop {
        // SAFETY: every pointer is valid for the call and `buffer.len()` is its size; the
        // strings `passwd` points to live in `buffer`, which outlives their use below.
        let code = unsafe {
            libc::getpwuid_r(
                libc::getuid(),
                &mut passwd,
                buffer.as_mut_ptr(),
                buffer.len(),
                &mut result,
            )
        };
        if code == libc::ERANGE && buffer.len() < 1 << 20 {
            buffer.resize(buffer.len() * 4, 0);
            continue;
        }
        if code != 0 || result.is_null() || passwd.pw_dir.is_null() {
            return None;
        }
        break;
    }
    // SAFETY: `pw_dir` is a NUL-terminated string inside `buffer`.
    let dir = unsafe { CStr::from_ptr(passwd.pw_dir) };
    let dir = dir.to_bytes();
    (!dir.is_empty()).then(|| std::ffi::OsString::from_vec(dir.to_vec()).into())
}

/// Whether an error means the file system has no extended attributes.
pub(crate) fn xattrs_unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP | libc::ENOSYS))
}

/// The names of the extended attributes of `file`, each NUL-terminated, concatenated.
#[allow(unsafe_code)]
pub(crate) fn xattr_names(file: &File) -> io::Result<Vec<u8>> {
    let fd = file.as_raw_fd();
    loop {
        // SAFETY: a null buffer of size 0 asks for the size only.
        let size = unsafe { libc::flistxattr(fd, std::ptr::null_mut(), 0) };
        if size < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut names = vec![0u8; size as usize];
        if names.is_empty() {
            return Ok(names);
        }
        // SAFETY: the buffer is valid for writes of `names.len()` bytes.
        let got = unsafe { libc::flistxattr(fd, names.as_mut_ptr().cast(), names.len()) };
        if got >= 0 {
            names.truncate(got as usize);
            return Ok(names);
        }
        let e = io::Error::last_os_error();
        // ERANGE: the list grew between the two calls; ask again.
        if e.raw_os_error() != Some(libc::ERANGE) {
            return Err(e);
        }
    }
}

/// The value of the extended attribute `name` of `file`, `None` when it has none.
#[allow(unsafe_code)]
pub(crate) fn xattr_get(file: &File, name: &CStr) -> io::Result<Option<Vec<u8>>> {
    let fd = file.as_raw_fd();
    loop {
        // SAFETY: `name` is NUL-terminated; a null buffer of size 0 asks for the size.
        let size = unsafe { libc::fgetxattr(fd, name.as_ptr(), std::ptr::null_mut(), 0) };
        if size < 0 {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(libc::ENODATA) {
                Ok(None)
            } else {
                Err(e)
            };
        }
        let mut value = vec![0u8; size as usize];
        // SAFETY: the buffer is valid for writes of `value.len()` bytes (a dangling but
        // aligned pointer for 0 bytes, which the kernel does not touch).
        let got =
            unsafe { libc::fgetxattr(fd, name.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
        if got >= 0 {
            value.truncate(got as usize);
            return Ok(Some(value));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ERANGE) {
            return Err(e);
        }
    }
}

/// Sets the extended attribute `name` of `file` to `value`.
#[allow(unsafe_code)]
pub(crate) fn xattr_set(file: &File, name: &CStr, value: &[u8]) -> io::Result<()> {
    // SAFETY: `name` is NUL-terminated and `value` is valid for reads of its length.
    check(unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    })
}

/// Starts writing the dirty pages of `len` bytes at `offset` of `file` to disk, without
/// waiting (`sync_file_range(SYNC_FILE_RANGE_WRITE)`): the final `fsync` then has little
/// left to do. A hint; errors are ignored.
#[allow(unsafe_code)]
pub(crate) fn start_writeback(file: &File, offset: u64, len: u64) {
    let (Ok(offset), Ok(len)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(len),
    ) else {
        return;
    };
    // SAFETY: no memory is passed; an invalid descriptor or range is only an error.
    let _ = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

/// The process's file mode creation mask (from `/proc/self/status`, which reads it without
/// changing it as `umask(2)` would; `0o022`, the usual one, where that is not available).
pub(crate) fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
        })
        .unwrap_or(0o022)
}

/// While held, the signals that ask a process to stop (`SIGINT`, `SIGTERM`, `SIGHUP`,
/// `SIGQUIT`) wait: they are delivered when it is dropped, once the write it guards is
/// complete. (`SIGKILL` cannot wait; the append journal covers it.)
pub(crate) struct SignalsHeld {
    old: libc::sigset_t,
    held: bool,
}

/// Holds the stop signals for the calling thread until the guard is dropped.
#[allow(unsafe_code)]
pub(crate) fn hold_stop_signals() -> SignalsHeld {
    // SAFETY: the sets are plain data initialised by sigemptyset before use; pthread_sigmask
    // only reads `set` and writes `old`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::sigaddset(&mut set, signal);
        }
        let held = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) == 0;
        SignalsHeld { old, held }
    }
}

impl Drop for SignalsHeld {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        if self.held {
            // SAFETY: `old` is the mask pthread_sigmask returned; restoring it delivers what
            // waited.
            unsafe {
                libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
            }
        }
    }
}

/// Whether file descriptor `fd` was open when the program started. Rust's `std` opens
/// `/dev/null` read-write on a standard descriptor that was closed (`>&-`), so that writes
/// there succeed silently; a descriptor that is `/dev/null` opened read-write is taken for one
/// that was closed (a shell's `>/dev/null` opens it write-only).
#[allow(unsafe_code)]
pub(crate) fn fd_is_open(fd: i32) -> bool {
    // SAFETY: F_GETFL only asks for the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags == -1 {
        return false;
    }
    if flags & libc::O_ACCMODE != libc::O_RDWR {
        return true;
    }
    let is_null = |m: &std::fs::Metadata| {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        m.file_type().is_char_device() && m.rdev() == libc::makedev(1, 3)
    };
    !std::fs::metadata(format!("/proc/self/fd/{fd}")).is_ok_and(|m| is_null(&m))
}

/// The stop signals an export waits for ([`crate::process::on_stop_signal`]), blocked.
pub(crate) struct StopSignals {
    set: libc::sigset_t,
}

impl StopSignals {
    const SIGNALS: [(libc::c_int, &'static str); 3] = [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
    ];

    /// Blocks the signals in this thread (and the threads it starts from now on).
    #[allow(unsafe_code)]
    pub(crate) fn block() -> Option<StopSignals> {
        // SAFETY: `sigset_t` is plain data, initialised by `sigemptyset` before any other use;
        // the calls get valid pointers to our local; the old mask is not asked for.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            if libc::sigemptyset(&mut set) != 0 {
                return None;
            }
            for (signal, _) in Self::SIGNALS {
                if libc::sigaddset(&mut set, signal) != 0 {
                    return None;
                }
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return None;
            }
            Some(StopSignals { set })
        }
    }

    /// Waits for one of the signals: it and its name; `None` if waiting failed.
    #[allow(unsafe_code)]
    pub(crate) fn wait(&self) -> Option<(libc::c_int, &'static str)> {
        let mut signal: libc::c_int = 0;
        loop {
            // SAFETY: a valid set and a valid pointer to our local.
            match unsafe { libc::sigwait(&self.set, &mut signal) } {
                0 => break,
                libc::EINTR => {}
                _ => return None,
            }
        }
        Self::SIGNALS.into_iter().find(|(s, _)| *s == signal)
    }
}

/// Ends the process by `signal` with its default action (so that a shell sees the signal),
/// or with exit status 128 + `signal` should it survive that.
#[allow(unsafe_code)]
pub(crate) fn die_of(signal: libc::c_int) -> ! {
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

/// Blocks until process `pid` (our child) has exited, without reaping it.
#[allow(unsafe_code)]
pub(crate) fn wait_for_exit(pid: u32) {
    let id: libc::id_t = pid;
    loop {
        // SAFETY: `siginfo_t` is plain old data, for which all zeroes is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid, writable `siginfo_t` owned by this frame; `waitid` only
        // writes to it. `WNOWAIT` leaves the child to be reaped by `Child::wait`.
        let r = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Sends SIGKILL to the process group `pgid`; never to -1 or 0 (every process, our own group).
#[allow(unsafe_code)]
pub(crate) fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid > 1 {
        // SAFETY: `kill` takes plain integers and touches no memory of ours.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}
