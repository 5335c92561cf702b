//! The implementation protocol: `IMPL OP [--leaf ID] --pi VERSION [--mtime MS]` with the
//! session on stdin (`--pi` is always given, so an implementation's own default never counts); the output on stdout and exit status 0, or exit status 1 when the input
//! is rejected. Anything else (another status, a timeout, too much output) is a failure.
//!
//! An implementation is untrusted: it may never answer, leave children behind that hold its
//! output open, or write without end. So each run is its own process group, which is killed
//! as a whole on the timeout, when an output stream exceeds its limit, and after a normal exit
//! (nothing the implementation started outlives its operation); the pipes are read by threads
//! against the deadline, never waited on past it; and what is read of each stream is capped.
//! A process that leaves the group (`setsid`) cannot be killed from here, but it can no longer
//! make the run wait: its pipes are abandoned at the deadline.

use pi_session_fs::process;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// What one run of an implementation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exit status 0 with this stdout.
    Output(Vec<u8>),
    /// Exit status 1 (the input was rejected), with this stderr (an excerpt: see
    /// [`excerpt`]).
    Rejected(String),
    /// Exit status [`UNSUPPORTED`]: the implementation does not do this operation, with this
    /// stderr (an excerpt); scored neither passed nor failed.
    Unsupported(String),
    /// Any other exit, a signal, or a failure to start.
    Crashed(String),
    /// No exit within the timeout.
    TimedOut,
    /// An output stream went past its limit; the implementation was stopped.
    TooLarge {
        /// `"stdout"` or `"stderr"`.
        stream: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
}

/// The exit status by which an implementation says it does not do an operation (a reader's
/// `OP`, or an operation of a writer's script), so that it is scored on the rest: the
/// operation is reported as unsupported, not failed. Its stderr should name what it does not
/// do.
pub const UNSUPPORTED: i32 = 3;

/// The bounds of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time until the whole process group is killed.
    pub timeout: Duration,
    /// Bytes of stdout read at most; more is [`Outcome::TooLarge`].
    pub max_stdout: usize,
    /// Bytes of stderr read at most; more is [`Outcome::TooLarge`].
    pub max_stderr: usize,
}

/// The default limit of each output stream: 64 MiB.
pub const DEFAULT_MAX_OUTPUT: usize = 64 << 20;

/// The longest stderr excerpt kept in an [`Outcome`], in bytes.
pub const STDERR_EXCERPT: usize = 4096;

/// How long the pipes may stay open after the implementation exited and its group was
/// killed, at least (a process outside the group may hold them).
const GRACE_AFTER_EXIT: Duration = Duration::from_secs(2);

impl Limits {
    /// `timeout`, and [`DEFAULT_MAX_OUTPUT`] for both streams.
    pub fn new(timeout: Duration) -> Limits {
        Limits {
            timeout,
            max_stdout: DEFAULT_MAX_OUTPUT,
            max_stderr: DEFAULT_MAX_OUTPUT,
        }
    }
}

/// Runs `implementation` (a shell command line) with `args`, `stdin` as its input, within
/// `timeout` and the default output limits.
pub fn run(implementation: &str, args: &[String], stdin: &[u8], timeout: Duration) -> Outcome {
    run_limited(implementation, args, stdin, &Limits::new(timeout))
}

/// What a reader thread or the exit watcher reports.
enum Event {
    /// The process group's leader exited (not reaped yet).
    Exited,
    /// A stream reached its end (`Ok`) or its limit (`Err`).
    Stream(usize, Result<Vec<u8>, ()>),
}

const STREAMS: [&str; 2] = ["stdout", "stderr"];

/// Runs `implementation` (a shell command line) with `args`, `stdin` as its input, within
/// `limits`. Returns by the deadline (plus a short grace after a normal exit) whatever the
/// implementation does, and leaves none of its process group running.
pub fn run_limited(
    implementation: &str,
    args: &[String],
    stdin: &[u8],
    limits: &Limits,
) -> Outcome {
    let start = Instant::now();
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(format!("{implementation} \"$@\""))
        .arg("pi-session-conformance")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return Outcome::Crashed(format!("cannot start `{implementation}`: {e}")),
    };
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    // The threads feeding stdin and reading the outputs are never joined: a process that left
    // the group may hold a pipe for ever, and then the thread ends only with that process.
    // They only ever touch their pipe and the channel.
    let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(mut input), Some(stdout), Some(stderr)) = pipes else {
        return stop(
            &mut child,
            None,
            Outcome::Crashed("no pipes to the process".into()),
        );
    };
    let session = stdin.to_vec();
    let started = spawn(move || {
        let _ = input.write_all(&session);
    })
    .and_then(|_| reader(0, stdout, limits.max_stdout, tx.clone()))
    .and_then(|_| reader(1, stderr, limits.max_stderr, tx.clone()));
    if let Err(e) = started {
        return stop(&mut child, None, Outcome::Crashed(e));
    }
    let watcher = {
        let tx = tx.clone();
        match std::thread::Builder::new().spawn(move || {
            process::wait_for_exit(pid);
            let _ = tx.send(Event::Exited);
        }) {
            Ok(watcher) => watcher,
            Err(e) => {
                let failure = Outcome::Crashed(format!("cannot start a thread: {e}"));
                return stop(&mut child, None, failure);
            }
        }
    };
    drop(tx);
    let mut deadline = start.checked_add(limits.timeout);
    let mut exited = false;
    let mut outputs: [Option<Vec<u8>>; 2] = [None, None];
    loop {
        if exited && outputs.iter().all(Option::is_some) {
            break;
        }
        let event = match deadline {
            Some(deadline) => rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .map_err(|e| e == mpsc::RecvTimeoutError::Timeout),
            None => rx.recv().map_err(|_| false),
        };
        match event {
            Ok(Event::Exited) => {
                exited = true;
                // Whatever the implementation left running in its group goes with it.
                process::kill_group(pid);
                if let (Some(d), Some(grace)) =
                    (deadline, Instant::now().checked_add(GRACE_AFTER_EXIT))
                {
                    deadline = Some(d.max(grace));
                }
            }
            Ok(Event::Stream(i, Ok(bytes))) => outputs[i] = Some(bytes),
            Ok(Event::Stream(i, Err(()))) => {
                let limit = [limits.max_stdout, limits.max_stderr][i];
                let stream = STREAMS[i];
                return stop(
                    &mut child,
                    Some(watcher),
                    Outcome::TooLarge { stream, limit },
                );
            }
            Err(true) if exited => {
                let open: Vec<&str> = (0..2)
                    .filter(|&i| outputs[i].is_none())
                    .map(|i| STREAMS[i])
                    .collect();
                let failure = Outcome::Crashed(format!(
                    "exited, but its {} stayed open: a process it started outside its \
                     process group holds it",
                    open.join(" and ")
                ));
                return stop(&mut child, Some(watcher), failure);
            }
            Err(true) => return stop(&mut child, Some(watcher), Outcome::TimedOut),
            Err(false) => {
                let failure = Outcome::Crashed("lost track of the process".into());
                return stop(&mut child, Some(watcher), failure);
            }
        }
    }
    let status = match reap(&mut child, Some(watcher)) {
        Ok(status) => status,
        Err(e) => return Outcome::Crashed(e),
    };
    let [Some(stdout), Some(stderr)] = outputs else {
        return Outcome::Crashed("lost an output stream".into());
    };
    let stderr = excerpt(&stderr);
    match (status.code(), status.signal()) {
        (Some(0), _) => Outcome::Output(stdout),
        (Some(1), _) => Outcome::Rejected(stderr),
        (Some(UNSUPPORTED), _) => Outcome::Unsupported(stderr),
        (Some(code), _) => Outcome::Crashed(format!("exit status {code}: {stderr}")),
        (None, Some(signal)) => Outcome::Crashed(format!("killed by signal {signal}: {stderr}")),
        (None, None) => Outcome::Crashed(format!("ended without a status: {stderr}")),
    }
}

/// Spawns a detached thread.
fn spawn(f: impl FnOnce() + Send + 'static) -> Result<(), String> {
    std::thread::Builder::new()
        .spawn(f)
        .map(drop)
        .map_err(|e| format!("cannot start a thread: {e}"))
}

/// Reads `pipe` to its end or to `limit` bytes on a detached thread, and reports.
fn reader(
    index: usize,
    mut pipe: impl Read + Send + 'static,
    limit: usize,
    tx: mpsc::Sender<Event>,
) -> Result<(), String> {
    spawn(move || {
        let mut kept = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        let result = loop {
            match pipe.read(&mut buf) {
                Ok(0) => break Ok(kept),
                Ok(n) if kept.len() + n > limit => break Err(()),
                Ok(n) => kept.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break Ok(kept),
            }
        };
        // Closing the pipe before reporting: a writer past the limit gets EPIPE at once.
        drop(pipe);
        let _ = tx.send(Event::Stream(index, result));
    })
}

/// Kills the process group, reaps its leader and returns `outcome` (or why reaping failed).
fn stop(
    child: &mut Child,
    watcher: Option<std::thread::JoinHandle<()>>,
    outcome: Outcome,
) -> Outcome {
    process::kill_group(child.id());
    match reap(child, watcher) {
        Ok(_) => outcome,
        Err(e) => Outcome::Crashed(e),
    }
}

/// Kills whatever is left of the group, then reaps the leader. The leader stays a zombie
/// until here, so its process group id cannot be reused by an unrelated process while it is
/// being killed.
fn reap(
    child: &mut Child,
    watcher: Option<std::thread::JoinHandle<()>>,
) -> Result<ExitStatus, String> {
    process::kill_group(child.id());
    if let Some(watcher) = watcher {
        // The leader has exited or was just killed: the watcher returns.
        let _ = watcher.join();
    }
    child
        .wait()
        .map_err(|e| format!("cannot wait for the process: {e}"))
}

/// Untrusted text made fit for a report: lossy UTF-8, control characters other than newline
/// and tab escaped, at most [`STDERR_EXCERPT`] bytes of input shown and the rest counted.
pub fn excerpt(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(STDERR_EXCERPT)];
    let mut text = String::new();
    for c in String::from_utf8_lossy(shown).chars() {
        match c {
            '\n' | '\t' => text.push(c),
            c if c.is_control() => text.extend(c.escape_default()),
            c => text.push(c),
        }
    }
    if bytes.len() > shown.len() {
        text.push_str(&format!("… ({} more bytes)", bytes.len() - shown.len()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(timeout_ms: u64, max: usize) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            max_stdout: max,
            max_stderr: max,
        }
    }

    #[test]
    fn output_and_rejection_follow_the_exit_status() {
        let ok = run_limited("cat", &[], b"abc", &limits(10_000, 1 << 20));
        assert_eq!(ok, Outcome::Output(b"abc".to_vec()));
        let rejected = run_limited("echo no >&2; exit 1", &[], b"", &limits(10_000, 1 << 20));
        assert_eq!(rejected, Outcome::Rejected("no\n".into()));
        let unsupported = run_limited(
            "echo no tree here >&2; exit 3",
            &[],
            b"",
            &limits(10_000, 1 << 20),
        );
        assert_eq!(unsupported, Outcome::Unsupported("no tree here\n".into()));
        let crashed = run_limited("exit 4", &[], b"", &limits(10_000, 1 << 20));
        assert!(matches!(crashed, Outcome::Crashed(m) if m.starts_with("exit status 4")));
    }

    #[test]
    fn a_background_child_holding_stdout_does_not_make_the_run_wait() {
        let start = Instant::now();
        let outcome = run_limited("sleep 1000 & echo hi", &[], b"", &limits(20_000, 1 << 20));
        assert_eq!(outcome, Outcome::Output(b"hi\n".to_vec()));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_hanging_implementation_times_out_on_time() {
        let start = Instant::now();
        let outcome = run_limited("sleep 1000 & sleep 1000", &[], b"", &limits(300, 1 << 20));
        assert_eq!(outcome, Outcome::TimedOut);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn endless_output_is_stopped_at_the_limit() {
        let outcome = run_limited("yes", &[], b"", &limits(20_000, 1 << 20));
        let expected = Outcome::TooLarge {
            stream: "stdout",
            limit: 1 << 20,
        };
        assert_eq!(outcome, expected);
        let outcome = run_limited("yes >&2", &[], b"", &limits(20_000, 1 << 20));
        assert!(matches!(
            outcome,
            Outcome::TooLarge {
                stream: "stderr",
                ..
            }
        ));
    }

    #[test]
    fn an_enormous_timeout_does_not_overflow() {
        let outcome = run_limited("true", &[], b"", &limits(u64::MAX, 1));
        assert_eq!(outcome, Outcome::Output(Vec::new()));
    }

    #[test]
    fn excerpts_escape_control_characters_and_count_the_rest() {
        assert_eq!(excerpt(b"a\x1b[31m\nb\t"), "a\\u{1b}[31m\nb\t");
        let long = vec![b'x'; STDERR_EXCERPT + 5];
        assert!(excerpt(&long).ends_with("… (5 more bytes)"));
    }
}
