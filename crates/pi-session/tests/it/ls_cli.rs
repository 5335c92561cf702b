//! `pi-session ls`: the real corpus sessions in one directory, listed as each pinned pi lists
//! them (`conformance/list/pi.json`, recorded with `cargo xtask bless list`): the same entries,
//! in the same order; and the table, `--all`, files pi leaves out, bad directories.

use crate::adversarial::common::*;
use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(120);

/// The directory `xtask/src/list_corpus.rs` lists with pi: every real corpus session as
/// `<case>.jsonl`.
fn real_sessions(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    for case in fs::read_dir(root().join("conformance/cases/real")).unwrap() {
        let case = case.unwrap().path();
        if case.join("session.jsonl").is_file() {
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            fs::copy(
                case.join("session.jsonl"),
                dir.join(format!("{name}.jsonl")),
            )
            .unwrap();
        }
    }
}

#[test]
fn the_list_is_pi_s() {
    let recorded: Value =
        serde_json::from_str(&fs::read_to_string(root().join("conformance/list/pi.json")).unwrap())
            .unwrap();
    let dir = scratch("ls-real").join("--Users-someone-project--");
    real_sessions(&dir);
    for pi in ["0.73", "0.87", "1.5"] {
        let r = run(&["ls", s(&dir), "--format", "json", "--pi", pi], T);
        r.assert_code(0);
        let mut ours: Value = serde_json::from_slice(&r.stdout).unwrap();
        for row in ours.as_array_mut().unwrap() {
            let row = row.as_object_mut().unwrap();
            assert!(row.remove("size").is_some_and(|s| s.is_u64()));
            let path = row["path"].as_str().unwrap();
            let name = Path::new(path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            row.insert("path".into(), Value::String(name));
        }
        assert_eq!(ours, recorded[pi], "pi {pi}: our list differs from pi's");
    }
    assert_ne!(
        recorded["0.73"], recorded["0.87"],
        "the versions order ties differently"
    );
}

#[test]
fn table_all_and_files_pi_leaves_out() {
    let area = scratch("ls-all");
    let sessions = area.join("sessions");
    let project = sessions.join("--Users-someone-project--");
    real_sessions(&project);
    write(&project, "notes.jsonl", "not a session\n");
    fs::create_dir_all(project.join("dir.jsonl")).unwrap();
    let other = sessions.join("--Users-someone-other--");
    fs::create_dir_all(&other).unwrap();
    fs::copy(
        root().join("conformance/cases/real/recorded-tool-use/session.jsonl"),
        other.join("one.jsonl"),
    )
    .unwrap();
    let r = run(&["ls", s(&project)], T);
    r.assert_code(0);
    let out = r.stdout_text();
    let sessions_line = out.lines().last().unwrap();
    assert!(
        sessions_line.starts_with("29 sessions; 1 *.jsonl file pi leaves out"),
        "{out}"
    );
    let all = run(&["ls", "--all", s(&sessions), "--format", "json"], T);
    all.assert_code(0);
    let rows: Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 30);
    // --cwd finds the project's directory under pi's sessions root.
    let by_cwd = bin()
        .args(["ls", "--cwd", "/Users/someone/other", "--format", "json"])
        .env("PI_CODING_AGENT_DIR", sessions.parent().unwrap())
        .output()
        .unwrap();
    assert!(by_cwd.status.success());
    let rows: Value = serde_json::from_slice(&by_cwd.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    let missing = run(&["ls", s(&sessions.join("nope"))], T);
    missing.assert_code(1);
    assert!(
        missing.stderr.contains("not a directory"),
        "{}",
        missing.stderr
    );
}

/// The listing cache: a second listing reads only what changed and prints exactly what a
/// listing without the cache prints; an entry is taken from the cache only while the file's
/// stamp is unchanged (shown by editing a kept entry: the edit shows until the file changes).
#[test]
fn the_cache_lists_what_a_full_read_lists() {
    let area = scratch("ls-cache");
    let dir = area.join("--Users-someone-project--");
    real_sessions(&dir);
    let cache_home = area.join("cache");
    let ls = |extra: &[&str]| {
        let out = bin()
            .args(["ls", s(&dir), "--format", "json"])
            .args(extra)
            .env("XDG_CACHE_HOME", &cache_home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // The cache of the default `--pi`, current pi.
    let cache_file = cache_home.join("pi-session/ls-v1-1.5.2.jsonl");
    // Files modified in the last two seconds are not kept.
    let fresh = ls(&[]);
    let kept = |f: &Path| fs::read_to_string(f).map_or(0, |t| t.lines().count().saturating_sub(1));
    assert_eq!(kept(&cache_file), 0, "recently modified files were cached");
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(ls(&[]), fresh);
    assert_eq!(kept(&cache_file), 29, "every file is kept now");
    // It holds paths and ids: its owner's only.
    assert_eq!(
        fs::metadata(&cache_file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(ls(&[]), fresh, "the cached listing differs");
    assert_eq!(ls(&["--no-cache"]), fresh);

    // An entry kept for an unchanged file is used as it is.
    let text = fs::read_to_string(&cache_file).unwrap();
    let tampered = text.replacen(
        "\\\"firstMessage\\\":\\\"",
        "\\\"firstMessage\\\":\\\"CACHED ",
        1,
    );
    assert_ne!(tampered, text);
    fs::write(&cache_file, &tampered).unwrap();
    assert!(ls(&[]).contains("CACHED "), "the kept entry was not used");
    assert!(!ls(&["--no-cache"]).contains("CACHED "));
    // Any change to a file (here: its modification time) and it is read again.
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let file = fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }
    let after = ls(&[]);
    assert!(
        !after.contains("CACHED "),
        "a changed file was not read again"
    );
    assert_eq!(after, ls(&["--no-cache"]));

    // A removed file is gone from the listing and from the cache; a cache of another format
    // or garbage is ignored.
    let first = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    fs::remove_file(&first).unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    let listed = ls(&[]);
    assert_eq!(listed, ls(&["--no-cache"]));
    assert_eq!(kept(&cache_file), 28);
    fs::write(&cache_file, "garbage\n{\"path\":1}\n").unwrap();
    assert_eq!(ls(&[]), listed);
    // A symlink where the cache file goes is replaced by the new cache, never written through.
    let elsewhere = area.join("elsewhere.txt");
    fs::write(&elsewhere, "not the cache").unwrap();
    fs::remove_file(&cache_file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &cache_file).unwrap();
    assert_eq!(ls(&[]), listed);
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "not the cache");
    assert!(
        !fs::symlink_metadata(&cache_file)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(kept(&cache_file), 28);
    // A cache directory that cannot be written is no error.
    let blocked = area.join("blocked");
    fs::write(&blocked, "a file where the cache directory would be").unwrap();
    let out = bin()
        .args(["ls", s(&dir), "--format", "json"])
        .env("XDG_CACHE_HOME", &blocked)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), listed);
}

/// A `*.jsonl` that cannot be read (a link that loops, a link to nothing, a file without
/// read permission) was counted among the files pi leaves out, and `ls` exited 0: it is named
/// on standard error with the reason, the rest is listed, and the exit status is 1, as
/// `stats` does for a file it cannot read.
#[test]
fn unreadable_files_are_said() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
    let dir = scratch("ls-unreadable");
    fs::copy(
        root().join("conformance/cases/real/recorded-tool-use/session.jsonl"),
        dir.join("one.jsonl"),
    )
    .unwrap();
    symlink("loop.jsonl", dir.join("loop.jsonl")).unwrap();
    symlink("nowhere", dir.join("dangling.jsonl")).unwrap();
    let r = run(&["ls", s(&dir), "--no-cache"], T);
    r.assert_code(1);
    assert!(
        r.stdout_text().ends_with("\n1 session\n"),
        "{}",
        r.stdout_text()
    );
    for (name, reason) in [
        ("loop.jsonl", "symbolic links"),
        ("dangling.jsonl", "a symbolic link to nothing"),
    ] {
        let line = r
            .stderr
            .lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}: {}", r.stderr));
        assert!(line.contains(reason) && line.contains("skipped"), "{line}");
    }
    // Without read permission: root reads any file, so only a user can see this.
    let locked = dir.join("locked.jsonl");
    fs::copy(dir.join("one.jsonl"), &locked).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let root_user = fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if root_user {
        eprintln!("unreadable_files_are_said: running as root, the permission case is skipped");
    } else {
        for cache in [&["--no-cache"][..], &[]] {
            let mut args = vec!["ls", s(&dir)];
            args.extend_from_slice(cache);
            let r = run(&args, T);
            r.assert_code(1);
            assert!(
                r.stderr
                    .contains("locked.jsonl: skipped: Permission denied"),
                "{}",
                r.stderr
            );
        }
    }
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o644)).unwrap();
}

/// Issue 26: one rule finds pi's sessions, Node's `os.homedir()`: without `HOME`, the home
/// of the user's passwd entry (the CLI used to give up, the writer used `./.pi/agent`);
/// `PI_CODING_AGENT_DIR` (a leading `~` expanded) moves the agent directory; an empty one is
/// ignored, as pi ignores it.
#[test]
fn without_home_pi_s_sessions_are_found_in_the_passwd_home() {
    let passwd_home = std::process::Command::new("sh")
        .args(["-c", "getent passwd $(id -u) | cut -d: -f6"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    if passwd_home.is_empty() {
        eprintln!("no passwd home to test with");
        return;
    }
    let run = |envs: &[(&str, &str)], remove_home: bool| {
        let mut command = bin();
        command.arg("validate").env_remove("PI_CODING_AGENT_DIR");
        if remove_home {
            command.env_remove("HOME");
        }
        command.envs(envs.iter().copied());
        run_limited(command, None, Duration::from_secs(60))
    };
    // The passwd home has no sessions here (or has some: then they are read).
    let r = run(&[], true);
    let expected = format!("{passwd_home}/.pi/agent/sessions");
    assert!(
        r.stderr.contains(&expected) || r.code == Some(0) || r.code == Some(1),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("HOME is not set"), "{}", r.stderr);

    let dir = scratch("ls-home-rule");
    let sessions = dir.join("agent").join("sessions").join("--w--");
    fs::create_dir_all(&sessions).unwrap();
    write(
        &sessions,
        "2026-01-01T00-00-00-000Z_0195f3a4-0000-7000-8000-000000000001.jsonl",
        HEADER,
    );
    let home = dir.to_str().unwrap();
    // `~/agent` is expanded with HOME; an empty PI_CODING_AGENT_DIR is not a directory.
    let r = run(&[("HOME", home), ("PI_CODING_AGENT_DIR", "~/agent")], false);
    r.assert_code(0);
    assert!(r.stdout_text().contains("1 file"), "{}", r.stdout_text());
    fs::create_dir_all(dir.join(".pi")).unwrap();
    std::os::unix::fs::symlink(dir.join("agent"), dir.join(".pi").join("agent")).unwrap();
    let r = run(&[("HOME", home), ("PI_CODING_AGENT_DIR", "")], false);
    r.assert_code(0);
    assert!(r.stdout_text().contains("1 file"), "{}", r.stdout_text());
}

/// The directories `xtask/src/list_corpus.rs` (`build_omp`) lists with omp: the omp corpus
/// sessions, alternately in `-proj-a` and `-proj-b`, with fixed file times.
fn omp_sessions(sessions: &Path) {
    let mut cases: Vec<_> = fs::read_dir(root().join("conformance/cases/omp"))
        .unwrap()
        .map(|c| c.unwrap().path())
        .filter(|c| c.join("session.jsonl").is_file())
        .collect();
    cases.sort();
    for (i, case) in cases.iter().enumerate() {
        let dir = sessions.join(if i % 2 == 0 { "-proj-a" } else { "-proj-b" });
        fs::create_dir_all(&dir).unwrap();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let to = dir.join(format!("{name}.jsonl"));
        fs::copy(case.join("session.jsonl"), &to).unwrap();
        let mtime = std::time::SystemTime::UNIX_EPOCH
            + Duration::from_secs(946_684_800 + (i as u64 % 3) * 60);
        fs::File::options()
            .write(true)
            .open(&to)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    }
}

/// `ls --dialect omp` output with each `path` made relative to `base`.
fn omp_rows(stdout: &[u8], base: &Path) -> Value {
    let mut rows: Value = serde_json::from_slice(stdout).unwrap();
    for row in rows.as_array_mut().unwrap() {
        let path = Path::new(row["path"].as_str().unwrap())
            .strip_prefix(base)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        row["path"] = Value::String(path);
    }
    rows
}

/// `pi-session ls --dialect omp --format json ARGS` with omp's agent directory and home, which
/// must succeed: its standard output.
fn ls_omp(args: &[&str], agent: &Path, home: &Path) -> Vec<u8> {
    let mut command = bin();
    command
        .args(["ls", "--dialect", "omp", "--format", "json", "--no-cache"])
        .args(args)
        .env("PI_CODING_AGENT_DIR", agent)
        .env("HOME", home);
    let r = run_limited(command, None, T);
    r.assert_code(0);
    assert_eq!(r.stderr, "", "nothing to say");
    r.stdout
}

#[test]
fn the_omp_list_is_omp_s() {
    let recorded: Value = serde_json::from_str(
        &fs::read_to_string(root().join("conformance/list/omp.json")).unwrap(),
    )
    .unwrap();
    let base = scratch("ls-omp");
    let sessions = base.join("agent/sessions");
    omp_sessions(&sessions);
    fs::write(
        base.join("agent/session-pins.json"),
        serde_json::to_string(&recorded["pins"]).unwrap(),
    )
    .unwrap();
    let ls = |args: &[&str]| ls_omp(args, &base.join("agent"), &base.join("home"));
    let project = sessions.join("-proj-a");
    assert_eq!(
        omp_rows(&ls(&[s(&project)]), &project),
        recorded["project"],
        "one project's list differs from omp's"
    );
    assert_eq!(
        omp_rows(&ls(&["--all", s(&sessions)]), &sessions),
        recorded["all"],
        "the list of every project differs from omp's"
    );
    // Without a directory: omp's sessions root, and the project of --cwd by omp's naming
    // (under home: `-` and the path below home).
    assert_eq!(omp_rows(&ls(&["--all"]), &sessions), recorded["all"]);
    let cwd = base.join("home/proj/a");
    fs::create_dir_all(&cwd).unwrap();
    assert_eq!(
        omp_rows(&ls(&["--cwd", s(&cwd)]), &project),
        recorded["project"]
    );
}

#[test]
fn omp_lists_regular_files_only_and_old_project_directories_where_they_are() {
    let base = scratch("ls-omp-files");
    let home = base.join("home");
    let cwd = home.join("app");
    fs::create_dir_all(&cwd).unwrap();
    let sessions = base.join("agent/sessions");
    let dir = sessions.join("-app");
    let legacy = sessions.join(format!(
        "--{}--",
        fs::canonicalize(&cwd)
            .unwrap()
            .to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "-")
    ));
    fs::create_dir_all(&dir).unwrap();
    fs::create_dir_all(&legacy).unwrap();
    let session =
        fs::read(root().join("conformance/cases/omp/v1-file-migrated/session.jsonl")).unwrap();
    fs::write(dir.join("a.jsonl"), &session).unwrap();
    // Not listed by omp's glob: a hidden name, a link, a directory, a FIFO (never opened:
    // the list does not wait for a writer).
    fs::write(dir.join(".hidden.jsonl"), &session).unwrap();
    std::os::unix::fs::symlink(dir.join("a.jsonl"), dir.join("link.jsonl")).unwrap();
    fs::create_dir_all(dir.join("d.jsonl")).unwrap();
    mkfifo(&dir.join("fifo.jsonl"));
    // The old directory: `a.jsonl` stays behind when omp merges (the new one has it), `b`
    // moves; we list `b` where it is and move nothing.
    fs::write(legacy.join("a.jsonl"), &session).unwrap();
    fs::write(legacy.join("b.jsonl"), &session).unwrap();
    let out = ls_omp(&["--cwd", s(&cwd)], &base.join("agent"), &home);
    let rows: Value = serde_json::from_slice(&out).unwrap();
    let mut paths: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    paths.sort();
    let expected = [dir.join("a.jsonl"), legacy.join("b.jsonl")];
    let mut expected: Vec<&str> = expected.iter().map(|p| s(p)).collect();
    expected.sort();
    assert_eq!(paths, expected);
    assert!(legacy.join("b.jsonl").is_file(), "nothing is moved");
    // The same directory read by pi's rules takes the link too.
    let pi = run(&["ls", s(&dir), "--format", "json", "--no-cache"], T);
    pi.assert_code(0);
    let rows: Value = serde_json::from_slice(&pi.stdout).unwrap();
    assert_eq!(
        rows.as_array().unwrap().len(),
        3,
        "pi reads .hidden and the link"
    );
}
