//! The implementation protocol: `IMPL OP [--leaf ID] [--pi VERSION] [--mtime MS]` with the
//! session on stdin; the output on stdout and exit status 0, or exit status 1 when the input
//! is rejected. Anything else (another status, a timeout) is a crash.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

/// What one run of an implementation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exit status 0 with this stdout.
    Output(Vec<u8>),
    /// Exit status 1 (the input was rejected), with this stderr.
    Rejected(String),
    /// Any other exit, a signal, or a failure to start.
    Crashed(String),
    /// No exit within the timeout.
    TimedOut,
}

/// Runs `implementation` (a shell command line) with `args`, `stdin` as its input.
pub fn run(implementation: &str, args: &[String], stdin: &[u8], timeout: Duration) -> Outcome {
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(format!("{implementation} \"$@\""))
        .arg("pi-session-conformance")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return Outcome::Crashed(format!("cannot start `{implementation}`: {e}")),
    };
    // Feed stdin and drain stdout/stderr on threads so no pipe can fill up and block.
    let mut input = child.stdin.take().expect("stdin is piped");
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut buf);
        buf
    });
    let status = match child.wait_timeout(timeout) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Outcome::TimedOut;
        }
        Err(e) => return Outcome::Crashed(e.to_string()),
    };
    let _ = writer.join();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    match status.code() {
        Some(0) => Outcome::Output(stdout),
        Some(1) => Outcome::Rejected(stderr),
        Some(code) => Outcome::Crashed(format!("exit status {code}: {stderr}")),
        None => Outcome::Crashed(format!("killed by a signal: {stderr}")),
    }
}
