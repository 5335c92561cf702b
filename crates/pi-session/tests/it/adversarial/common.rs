//! Helpers shared by the adversarial tests: running the binary with limits, scratch
//! directories, generated sessions.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi-session"));
    command
        .env("TZ", "UTC")
        .env("PI_SESSION_DETERMINISTIC_IDS", "1")
        .env("NO_COLOR", "1")
        // The listing cache of `ls` goes to the test build's own directory, not the home's.
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache"),
        )
        .env_remove("PI_CODING_AGENT_DIR");
    command
}

/// What a run with limits produced.
#[derive(Debug)]
pub(crate) struct Run {
    /// The exit code (`None`: killed by a signal, or by us on the timeout).
    pub code: Option<i32>,
    /// The signal that ended it (Unix).
    pub signal: Option<i32>,
    /// Whether it was killed on the timeout.
    pub timed_out: bool,
    /// Standard output (at most [`OUTPUT_CAP`] bytes kept; `stdout_len` counts all).
    pub stdout: Vec<u8>,
    /// How many bytes were written to standard output in all.
    pub stdout_len: u64,
    /// Standard error (at most [`OUTPUT_CAP`] bytes kept).
    pub stderr: String,
    /// Peak resident memory of the child in KiB, 0 when unknown: the highest `VmHWM` of
    /// `/proc/PID/status` seen while it ran (read every 2 ms). Not `wait4`'s `ru_maxrss`:
    /// a child spawned with `CLONE_VM` (as `posix_spawn` does) inherits in it the peak of
    /// the test process itself, which made memory bounds flaky; nor a `VmHWM` read before the
    /// child ran its program (see `high_water_kib`).
    pub max_rss_kib: u64,
    /// Wall time.
    pub elapsed: Duration,
}

/// How much of each output stream a [`Run`] keeps.
pub(crate) const OUTPUT_CAP: usize = 8 << 20;

impl Run {
    /// Standard output as text (lossy).
    pub(crate) fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Asserts the process exited by itself with `code`, explaining what it printed otherwise.
    #[track_caller]
    pub(crate) fn assert_code(&self, code: i32) {
        assert!(
            !self.timed_out && self.code == Some(code),
            "expected exit {code}, got {:?} (signal {:?}, timed out {}); stderr:\n{}",
            self.code,
            self.signal,
            self.timed_out,
            self.stderr
        );
    }
}

/// Runs `command` with `timeout`, optional `stdin` bytes, keeping at most [`OUTPUT_CAP`]
/// bytes of each output stream (the rest is counted and discarded), and measures the
/// child's peak memory.
// The child is reaped by `wait4` (for its peak memory), which clippy does not see.
#[allow(clippy::zombie_processes)]
pub(crate) fn run_limited(mut command: Command, stdin: Option<&[u8]>, timeout: Duration) -> Run {
    use std::io::{Read, Write};
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The name a child has until it runs its program: that of the thread that made it.
    let forked = std::fs::read_to_string("/proc/thread-self/comm").unwrap_or_default();
    let start = Instant::now();
    let mut child: Child = command.spawn().expect("pi-session starts");
    let pid = child.id() as libc::pid_t;
    let feeder = stdin.map(|bytes| {
        let bytes = bytes.to_vec();
        let mut pipe = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut total = 0u64;
            let mut buf = vec![0u8; 1 << 16];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        total += n as u64;
                        let room = OUTPUT_CAP.saturating_sub(kept.len());
                        kept.extend_from_slice(&buf[..n.min(room)]);
                    }
                }
            }
            (kept, total)
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    // Wait with wait4 (for the peak memory), polling so that the timeout can kill.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe_zeroed_rusage();
    let mut timed_out = false;
    let mut max_rss_kib = 0;
    loop {
        max_rss_kib = max_rss_kib.max(high_water_kib(pid, forked.trim()));
        // SAFETY-free: wait4 is called through the libc crate on our own child.
        let r = wait4(pid, &mut status, &mut usage);
        if r == pid {
            break;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            let _ = child.kill();
            let _ = wait4_blocking(pid, &mut status, &mut usage);
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let elapsed = start.elapsed();
    if let Some(feeder) = feeder {
        let _ = feeder.join();
    }
    let (stdout, stdout_len) = out.join().unwrap();
    let (stderr, _) = err.join().unwrap();
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Run {
        code,
        signal,
        timed_out,
        stdout,
        stdout_len,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        max_rss_kib,
        elapsed,
    }
}

/// The peak resident memory (`VmHWM`) of a running process in KiB, 0 when unknown or while it
/// still bears the name `forked` of the thread that made it: between `fork` and `exec` the
/// child is a copy of the test process, whose own peak (other tests run beside it in the same
/// process) would count.
fn high_water_kib(pid: libc::pid_t, forked: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let name = status.lines().find_map(|l| l.strip_prefix("Name:"))?;
            if name.trim() == forked {
                return None;
            }
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

#[allow(unsafe_code)]
fn unsafe_zeroed_rusage() -> libc::rusage {
    // SAFETY: rusage is plain old data; all zeroes is a valid value.
    unsafe { std::mem::zeroed() }
}

#[allow(unsafe_code)]
fn wait4(pid: libc::pid_t, status: &mut i32, usage: &mut libc::rusage) -> libc::pid_t {
    // SAFETY: valid pointers to our own locals; WNOHANG never blocks.
    unsafe { libc::wait4(pid, status, libc::WNOHANG, usage) }
}

#[allow(unsafe_code)]
fn wait4_blocking(pid: libc::pid_t, status: &mut i32, usage: &mut libc::rusage) -> libc::pid_t {
    // SAFETY: valid pointers to our own locals.
    unsafe { libc::wait4(pid, status, 0, usage) }
}

/// Runs the binary with `args` and a timeout.
pub(crate) fn run(args: &[&str], timeout: Duration) -> Run {
    let mut command = bin();
    command.args(args);
    run_limited(command, None, timeout)
}

/// A scratch directory unique to the test, emptied first.
/// The workspace's root directory (where `conformance/` and `docs/` are).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn scratch(test: &str) -> crate::support::Scratch {
    crate::support::scratch("adversarial", test)
}

pub(crate) use crate::support::write;

/// A v3 header line (with its newline).
pub(crate) const HEADER: &str = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n";

/// A generated session (`pi-session gen ARGS --out dir/name`), returned as its path.
pub(crate) fn generated(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut command = bin();
    command.arg("gen").args(args).arg("--out").arg(&path);
    let run = run_limited(command, None, Duration::from_secs(600));
    run.assert_code(0);
    path
}

/// Makes a FIFO (named pipe) at `path`.
pub(crate) fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// The path as a `&str` (test paths are UTF-8).
pub(crate) fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// An assistant message line whose content is `n` tiny text blocks (`{"type":"text","text":"a"}`;
/// block `broken`, when given, has no `text`): 800,000 make a 22 MB line whose value takes 40
/// times its bytes (issue 25, item 13).
pub(crate) fn tiny_blocks_line(n: usize, broken: Option<usize>) -> String {
    let mut content = String::with_capacity(n * 28);
    for i in 0..n {
        if i > 0 {
            content.push(',');
        }
        content.push_str(if Some(i) == broken {
            r#"{"type":"text"}"#
        } else {
            r#"{"type":"text","text":"a"}"#
        });
    }
    format!(
        r#"{{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"assistant","content":[{content}],"provider":"p","model":"m","api":"x","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":1}}}}"#
    )
}
