//! `migrate --in-place [--backup]` never loses data (issue 12, items 6–12, 17 and 20): a
//! file written while it is migrated, symlinks, hard links, read-only files, owner, group and
//! extended attributes, backups that exist, are symlinks or do not fit on the disk, a killed
//! migration, long file names, usage errors.

use super::common::*;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(60);

/// A small v1 session (no ids: migration rewrites it).
const V1: &str = concat!(
    "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n",
    "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
);

/// The first line of [`V1`] once migrated.
const V3_HEADER: &str = "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\",\"version\":3}\n";

fn migrated(path: &Path) -> bool {
    fs::read_to_string(path).unwrap().starts_with(V3_HEADER)
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn in_place(file: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["migrate", s(file), "--in-place"];
    args.extend_from_slice(extra);
    run(&args, T)
}

#[test]
fn migrate_in_place_while_another_process_appends_300_lines_loses_none() {
    use std::io::Write;
    let dir = scratch("migrate-live-append");
    let file = generated(
        &dir,
        "s.jsonl",
        &["--size", "4MB", "--seed", "3", "--version", "1"],
    );
    let original = fs::read(&file).unwrap();
    let mut child = bin()
        .args(["migrate", s(&file), "--in-place"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // pi appends with appendFileSync: open with O_APPEND, write one line, close.
    let append = |n: usize| {
        let mut f = fs::OpenOptions::new().append(true).open(&file).unwrap();
        let line = format!(
            "{{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"appended-{n}-end\"}}}}\n"
        );
        f.write_all(line.as_bytes()).unwrap();
    };
    let mut n = 0;
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < T, "migrate did not finish");
        if n < 300 {
            append(n);
            n += 1;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(n > 0, "the migration ended before a line was appended");
    let after = fs::read(&file).unwrap();
    let text = String::from_utf8_lossy(&after);
    // One pass over the file (a search per line is slow in a debug build).
    let found: std::collections::HashSet<usize> = text
        .split("appended-")
        .skip(1)
        .filter_map(|rest| rest.split_once("-end").and_then(|(n, _)| n.parse().ok()))
        .collect();
    let lost: Vec<usize> = (0..n).filter(|i| !found.contains(i)).collect();
    assert!(
        lost.is_empty(),
        "{} of {n} appended lines lost (rc {:?}); stderr:\n{stderr}",
        lost.len(),
        status.code()
    );
    if status.code() == Some(1) {
        assert!(
            stderr.contains("changed while it was being migrated"),
            "{stderr}"
        );
        assert!(
            after.starts_with(&original),
            "refused, yet the file was rewritten"
        );
    } else {
        assert_eq!(status.code(), Some(0), "{stderr}");
    }
    assert_eq!(names(&dir), ["s.jsonl"], "nothing else is left");
}

#[test]
fn migrate_in_place_of_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = scratch("migrate-symlink");
    fs::create_dir(dir.join("real")).unwrap();
    let target = write(&dir.join("real"), "s.jsonl", V1);
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink("real/s.jsonl", &link).unwrap();
    let r = in_place(&link, &["--backup"]);
    r.assert_code(0);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_link(&link).unwrap(), Path::new("real/s.jsonl"));
    assert!(migrated(&target), "the target is migrated");
    assert_eq!(
        fs::read_to_string(dir.join("real/s.jsonl.bak")).unwrap(),
        V1
    );
    assert_eq!(names(&dir), ["link.jsonl", "real"]);
}

#[test]
fn migrate_in_place_of_a_hard_linked_file_is_refused_unless_forced() {
    let dir = scratch("migrate-hardlink");
    let file = write(&dir, "s.jsonl", V1);
    let other = dir.join("other.jsonl");
    fs::hard_link(&file, &other).unwrap();
    let r = in_place(&file, &[]);
    r.assert_code(1);
    assert!(r.stderr.contains("2 names (hard links)"), "{}", r.stderr);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    assert_eq!(fs::metadata(&file).unwrap().nlink(), 2);
    let r = in_place(&file, &["--force"]);
    r.assert_code(0);
    assert!(migrated(&file));
    assert_eq!(
        fs::read_to_string(&other).unwrap(),
        V1,
        "the other name keeps its file"
    );
}

#[test]
fn migrate_in_place_of_a_read_only_0444_file_is_refused_unless_forced() {
    let dir = scratch("migrate-readonly");
    let file = write(&dir, "s.jsonl", V1);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
    let r = in_place(&file, &[]);
    r.assert_code(1);
    assert!(r.stderr.contains("read-only (mode 444)"), "{}", r.stderr);
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    let r = in_place(&file, &["--force"]);
    r.assert_code(0);
    assert!(migrated(&file));
    assert_eq!(fs::metadata(&file).unwrap().mode() & 0o7777, 0o444);
}

#[test]
fn migrate_in_place_keeps_mode_and_extended_attributes() {
    let dir = scratch("migrate-xattr");
    let file = write(&dir, "s.jsonl", V1);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    if let Err(e) = xattr::set(&file, "user.pi.test", b"kept\0value") {
        eprintln!("skipped: this file system has no user extended attributes ({e})");
        return;
    }
    let r = in_place(&file, &["--backup"]);
    r.assert_code(0);
    assert!(migrated(&file));
    assert_eq!(fs::metadata(&file).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(
        xattr::get(&file, "user.pi.test").as_deref(),
        Some(&b"kept\0value"[..])
    );
    let bak = dir.join("s.jsonl.bak");
    assert_eq!(fs::metadata(&bak).unwrap().mode() & 0o7777, 0o640);
    assert_eq!(
        xattr::get(&bak, "user.pi.test").as_deref(),
        Some(&b"kept\0value"[..])
    );
}

#[test]
#[ignore = "root only: changes owners and runs as another user"]
fn migrate_in_place_keeps_owner_and_group_and_refuses_when_it_cannot() {
    use std::os::unix::process::CommandExt;
    if unsafe_free_euid() != 0 {
        eprintln!("skipped: needs root");
        return;
    }
    let dir = scratch("migrate-owner");
    let file = write(&dir, "s.jsonl", V1);
    std::os::unix::fs::chown(&file, Some(4242), Some(4343)).unwrap();
    in_place(&file, &["--backup"]).assert_code(0);
    assert!(migrated(&file));
    let m = fs::metadata(&file).unwrap();
    assert_eq!((m.uid(), m.gid()), (4242, 4343));
    let m = fs::metadata(dir.join("s.jsonl.bak")).unwrap();
    assert_eq!((m.uid(), m.gid()), (4242, 4343));
    // Another user who may write the file and its directory, but cannot give the new file
    // root's ownership: refused, unless forced.
    let file = write(&dir, "t.jsonl", V1);
    fs::set_permissions(&file, fs::Permissions::from_mode(0o666)).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let as_nobody = |extra: &[&str]| {
        let mut command = bin();
        command
            .args(["migrate", s(&file), "--in-place"])
            .args(extra)
            .uid(65534)
            .gid(65534);
        run_limited(command, None, T)
    };
    let r = as_nobody(&[]);
    r.assert_code(1);
    assert!(r.stderr.contains("owner and group"), "{}", r.stderr);
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    let r = as_nobody(&["--force"]);
    r.assert_code(0);
    assert!(r.stderr.contains("warning"), "{}", r.stderr);
    assert!(migrated(&file));
}

fn unsafe_free_euid() -> u32 {
    fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

#[test]
fn migrate_in_place_backup_never_overwrites_an_existing_bak() {
    let dir = scratch("migrate-bak-exists");
    let file = write(&dir, "s.jsonl", V1);
    let bak = write(&dir, "s.jsonl.bak", "precious old backup\n");
    let r = in_place(&file, &["--backup"]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("s.jsonl.bak already exists"),
        "{}",
        r.stderr
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    assert_eq!(fs::read_to_string(&bak).unwrap(), "precious old backup\n");
    let r = in_place(&file, &["--backup", "--force"]);
    r.assert_code(0);
    assert!(r.stderr.contains("s.jsonl.bak.1"), "{}", r.stderr);
    assert!(migrated(&file));
    assert_eq!(fs::read_to_string(&bak).unwrap(), "precious old backup\n");
    assert_eq!(fs::read_to_string(dir.join("s.jsonl.bak.1")).unwrap(), V1);
}

#[test]
fn migrate_in_place_backup_never_follows_a_bak_symlink() {
    let dir = scratch("migrate-bak-symlink");
    let file = write(&dir, "s.jsonl", V1);
    let victim = write(&dir, "victim.txt", "not yours\n");
    std::os::unix::fs::symlink("victim.txt", dir.join("s.jsonl.bak")).unwrap();
    in_place(&file, &["--backup"]).assert_code(1);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "not yours\n");
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    in_place(&file, &["--backup", "--force"]).assert_code(0);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "not yours\n");
    assert!(
        fs::symlink_metadata(dir.join("s.jsonl.bak"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(dir.join("s.jsonl.bak.1")).unwrap(), V1);
}

#[test]
fn migrate_in_place_backup_on_a_full_disk_keeps_the_old_backup_and_the_file() {
    // A full disk, without root: a file size limit (RLIMIT_FSIZE, `ulimit -f`) with SIGXFSZ
    // ignored makes writes past 1 MB fail with EFBIG, as ENOSPC would.
    let dir = scratch("migrate-full-disk");
    let file = generated(
        &dir,
        "s.jsonl",
        &["--size", "2MB", "--seed", "4", "--version", "1"],
    );
    let original = fs::read(&file).unwrap();
    let bak = write(&dir, "s.jsonl.bak", "the good old backup\n");
    let limited = |extra: &str| {
        let mut command = std::process::Command::new("bash");
        command.arg("-c").arg(format!(
            "trap '' XFSZ; ulimit -f 1024; exec \"$0\" migrate \"$1\" --in-place {extra}"
        ));
        command.arg(env!("CARGO_BIN_EXE_pi-session")).arg(&file);
        let r = run_limited(command, None, T);
        r.assert_code(1);
        assert!(
            r.stderr.contains("cannot write the temporary file")
                && r.stderr.contains("File too large")
                && r.stderr.contains("unchanged"),
            "{extra}: {}",
            r.stderr
        );
        assert_eq!(fs::read(&file).unwrap(), original, "{extra}");
    };
    for extra in ["--backup --force", ""] {
        limited(extra);
        assert_eq!(fs::read_to_string(&bak).unwrap(), "the good old backup\n");
        assert_eq!(names(&dir), ["s.jsonl", "s.jsonl.bak"], "{extra}");
    }
    fs::remove_file(&bak).unwrap();
    limited("--backup");
    assert_eq!(names(&dir), ["s.jsonl"], "no truncated backup");
}

#[test]
fn migrate_in_place_killed_with_sigkill_while_writing_leaves_no_temporary_file() {
    let dir = scratch("migrate-sigkill");
    let file = generated(
        &dir,
        "s.jsonl",
        &["--size", "10MB", "--seed", "5", "--version", "1"],
    );
    let original = fs::read(&file).unwrap();
    let mut child = bin()
        .args(["migrate", s(&file), "--in-place", "--backup"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once it holds a file open in the directory besides the session (the
    // temporary file, named or not) with some of the migration written.
    let fds = PathBuf::from(format!("/proc/{}/fd", child.id()));
    let start = Instant::now();
    let mut seen = None;
    while seen.is_none() && child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < T, "no temporary file seen");
        for fd in fs::read_dir(&fds).into_iter().flatten().flatten() {
            let Ok(target) = fs::read_link(fd.path()) else {
                continue;
            };
            let written = fs::metadata(fd.path()).map_or(0, |m| m.len());
            if target.starts_with(&dir) && target != file && written > 0 {
                seen = Some(target);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let seen = seen.expect("killed while writing a temporary file");
    assert_eq!(
        names(&dir),
        ["s.jsonl"],
        "killed while writing {}",
        seen.display()
    );
    assert_eq!(fs::read(&file).unwrap(), original);
}

#[test]
fn migrate_in_place_removes_temporaries_left_by_dead_processes_only() {
    let dir = scratch("migrate-stale");
    let file = write(&dir, "s.jsonl", V1);
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let stale = write(
        &dir,
        &format!(".pi-session-{dead_pid}-0.tmp"),
        "half a migration",
    );
    let live = write(
        &dir,
        &format!(".pi-session-{}-0.tmp", std::process::id()),
        "a migration in progress",
    );
    let unrelated = write(&dir, ".pi-session-notes.tmp", "not ours");
    let r = in_place(&file, &[]);
    r.assert_code(0);
    assert!(!stale.exists(), "{}", r.stderr);
    assert!(
        r.stderr.contains("left by a killed pi-session"),
        "{}",
        r.stderr
    );
    assert!(live.exists());
    assert!(unrelated.exists());
}

#[test]
fn migrate_in_place_of_a_250_byte_file_name_works_with_a_backup() {
    let dir = scratch("migrate-long-name");
    let name = format!("{}.jsonl", "n".repeat(244));
    assert_eq!(name.len(), 250);
    let file = write(&dir, &name, V1);
    in_place(&file, &["--backup"]).assert_code(0);
    assert!(migrated(&file));
    assert_eq!(
        fs::read_to_string(dir.join(format!("{name}.bak"))).unwrap(),
        V1
    );
}

#[test]
fn migrate_errors_name_the_backup_and_standard_output_not_the_file() {
    let dir = scratch("migrate-error-names");
    // 253 bytes: the file fits in NAME_MAX (255), its backup name does not.
    let name = format!("{}.jsonl", "n".repeat(247));
    let file = write(&dir, &name, V1);
    let r = in_place(&file, &["--backup"]);
    r.assert_code(1);
    assert!(
        r.stderr.contains(&format!("backup {}.bak", s(&file))),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("File name too long"), "{}", r.stderr);
    assert_eq!(fs::read_to_string(&file).unwrap(), V1);
    assert_eq!(names(&dir), [name]);
    // Standard output that cannot be written (a full device).
    let mut command = bin();
    command
        .args(["migrate", s(&file), "--stdout"])
        .stdout(fs::File::create("/dev/full").unwrap());
    let out = command.stderr(Stdio::piped()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("standard output"), "{stderr}");
}

#[test]
fn migrate_in_place_of_a_fifo_is_refused_without_reading_it() {
    let dir = scratch("migrate-fifo");
    let fifo = dir.join("s.jsonl");
    mkfifo(&fifo);
    let r = run(
        &["migrate", s(&fifo), "--in-place"],
        Duration::from_secs(20),
    );
    r.assert_code(1);
    assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
}

#[test]
fn migrate_stdout_with_backup_and_in_place_of_stdin_are_usage_errors_before_reading() {
    let dir = scratch("migrate-usage");
    // A FIFO nobody writes: reading it would hang.
    let fifo = dir.join("s.jsonl");
    mkfifo(&fifo);
    for args in [
        &["migrate", s(&fifo), "--stdout", "--backup"][..],
        &["migrate", s(&fifo), "--stdout", "--force"][..],
    ] {
        let r = run(args, Duration::from_secs(20));
        r.assert_code(2);
    }
    // Standard input that never ends: reading it would hang.
    let mut child = bin()
        .args(["migrate", "-", "--in-place"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _stdin = child.stdin.take();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("`migrate - --in-place` read standard input");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--in-place needs a file"), "{stderr}");
}

/// Extended attributes through libc (tests may not add dependencies).
mod xattr {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    fn c(path: &Path) -> CString {
        CString::new(path.as_os_str().as_bytes()).unwrap()
    }

    #[allow(unsafe_code)]
    pub(super) fn set(path: &Path, name: &str, value: &[u8]) -> std::io::Result<()> {
        let (path, name) = (c(path), CString::new(name).unwrap());
        // SAFETY: NUL-terminated strings and a value buffer valid for its length.
        let r = unsafe {
            libc::setxattr(
                path.as_ptr(),
                name.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    #[allow(unsafe_code)]
    pub(super) fn get(path: &Path, name: &str) -> Option<Vec<u8>> {
        let (path, name) = (c(path), CString::new(name).unwrap());
        let mut buf = vec![0u8; 4096];
        // SAFETY: NUL-terminated strings and a buffer valid for writes of its length.
        let n = unsafe {
            libc::getxattr(
                path.as_ptr(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        (n >= 0).then(|| {
            buf.truncate(n as usize);
            buf
        })
    }
}
