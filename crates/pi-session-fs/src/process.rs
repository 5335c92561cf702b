//! Processes, as the file layer needs them: whether one still runs (the clean-up of what a
//! killed process left, [`alive`]); a child's whole process group killed and waited for
//! ([`kill_group`], [`wait_for_exit`]: the conformance runner's bounded implementations); and
//! the stop signals turned into ordinary code ([`on_stop_signal`]: an export that removes what
//! it wrote before the process dies). The system calls are in `sys`, with the project's other
//! `unsafe` code.

use crate::sys;

/// Whether a process with this id exists (one we may not signal exists too). Unsure means
/// yes: what a process that may still run wrote is never removed.
pub fn alive(pid: u32) -> bool {
    sys::process_alive(pid)
}

/// Sends `SIGKILL` to the process group `pgid` (the group of a child started with
/// `process_group(0)`, whose leader has not been reaped yet). Ids that would name every
/// process or our own group (`0`, `1`, or larger than a `pid_t`) are ignored.
pub fn kill_group(pgid: u32) {
    sys::kill_group(pgid);
}

/// Blocks until process `pid`, a child of ours, has exited, without reaping it (so that its
/// group can still be killed by its id, and `Child::wait` still collects its status).
pub fn wait_for_exit(pid: u32) {
    sys::wait_for_exit(pid);
}

/// Ctrl-C, `SIGTERM` and `SIGHUP`, turned into ordinary code: blocks the three in the calling
/// thread (and so in every thread it starts from now on: call it before any other thread is
/// started) and starts a thread that waits for them (`sigwait`). On the first, that thread
/// calls `clean_up` with the signal's name (`"SIGTERM"`) and then ends the process by the same
/// signal, as if it had not been caught (so that a shell sees it). Nothing runs in a signal
/// handler. `false` when the signals could not be blocked (nothing changed then).
pub fn on_stop_signal(clean_up: impl FnOnce(&str) + Send + 'static) -> bool {
    let Some(set) = sys::StopSignals::block() else {
        return false;
    };
    let spawned = std::thread::Builder::new()
        .name("stop-signals".into())
        .spawn(move || {
            let Some((signal, name)) = set.wait() else {
                return;
            };
            clean_up(name);
            sys::die_of(signal);
        });
    spawned.is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_an_unused_id_is_not() {
        assert!(alive(std::process::id()));
        // Above the kernel's largest pid (4194304 at most on Linux).
        assert!(!alive(4_194_305));
    }

    #[test]
    fn a_killed_group_ends_and_its_leader_is_waited_for() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        kill_group(child.id());
        wait_for_exit(child.id());
        let status = child.wait().unwrap();
        assert!(!status.success());
    }
}
