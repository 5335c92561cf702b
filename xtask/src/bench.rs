//! `cargo xtask bench …`: the side-by-side comparison with the reference, and the check that
//! generated sessions read the same in pi and in `pi-session`.
//!
//! - `compare`: generates sessions with the release `pi-session gen`, then runs the pinned
//!   reference (`node conformance/reference/bench-ref.mjs COPY --pi V`: `SessionManager.open` +
//!   `buildSessionContext` + `JSON.stringify`) and `target/release/pi-session context FILE`,
//!   both with standard output to /dev/null, `--runs` times each (alternating) after one
//!   untimed warm-up run each (page cache; its outputs are compared byte for byte). Wall time
//!   is measured around each child process; peak RSS is `/usr/bin/time -f %M` when present,
//!   otherwise (or with `XTASK_BENCH_WAIT4=1`) `wait4`'s `ru_maxrss`. The floor any reader
//!   has, `wc -l FILE` (reading the file from the page cache, nothing else), is timed the
//!   same way in the same turns, and the table gives ours against it (issue 31: the 1 GB
//!   context within 2× of it), with the load average before and after the runs. Prints a
//!   Markdown table of medians.
//! - `search` (`bench_search.rs`): `pi-session search -l` against ripgrep over a session tree.
//! - `stats` (`bench_stats.rs`): `pi-session stats` (full read, cached, cached `--since today`)
//!   against `@ccusage/pi` over a session tree.
//! - `tables` (`bench_tables.rs`): `export --format parquet` (each codec) against DuckDB's
//!   `read_json` → Parquet of the same tree.
//! - `check-gen`: generates small sessions (1 MB, seeds 1–5, versions 1–3 by default) and
//!   compares `context` (and `context --llm`; for v1 also `migrate` with deterministic ids)
//!   between `node conformance/reference/pi-ref.mjs` and `pi-session`.

use std::fmt::Write as _;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

const USAGE: &str = "usage:
  cargo xtask bench compare [--sizes 1MB,10MB,100MB] [--runs 5] [--seed 1] [--version 3]
                            [--linear ENTRIES] [--pi 0.73|0.87|1.5] [--timeout 300] [--out FILE]
  cargo xtask bench check-gen [--size 1MB] [--seeds 1-5] [--versions 1,2,3] [--pi 0.73|0.87]
  cargo xtask bench writer [--messages 100000] [--size 100MB] [--runs 5] [--pi 1.5]
  cargo xtask bench search [--files 10000] [--size 1GB] [--seed 1] [--patterns P,P] [--runs 5]
  cargo xtask bench stats [--files 10000] [--size 1GB] [--seed 1] [--runs 5] [--out FILE]
  cargo xtask bench tables [--files 10000] [--size 1GB] [--seed 1] [--runs 3] [--out FILE]";

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    match args {
        ["compare", rest @ ..] => compare(rest),
        ["check-gen", rest @ ..] => check_gen(rest),
        ["writer", rest @ ..] => crate::bench_writer::main(rest),
        ["search", rest @ ..] => crate::bench_search::main(rest),
        ["stats", rest @ ..] => crate::bench_stats::main(rest),
        ["tables", rest @ ..] => crate::bench_tables::main(rest),
        _ => Err(format!("unknown bench command\n{USAGE}")),
    }
}

fn flag<'a>(rest: &mut std::slice::Iter<'a, &'a str>, name: &str) -> Result<&'a str, String> {
    rest.next()
        .copied()
        .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
}

pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| crate::root().join("target"), PathBuf::from)
}

/// Builds `pi-session` (`--release` or debug) and returns the binary's path.
pub(crate) fn build_pi_session(release: bool) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(crate::root())
        .args(["build", "-p", "pi-session"]);
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("cargo build -p pi-session failed".into());
    }
    let bin = target_dir()
        .join(if release { "release" } else { "debug" })
        .join("pi-session");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!("{} not found after the build", bin.display()))
    }
}

/// The session tree `pi-session gen --tree` writes for `files`, `size` and `seed` (pi's
/// layout; every tenth session a fork), generated once into `target/bench-data/` by `bin`.
pub(crate) fn session_tree(
    bin: &Path,
    files: &str,
    size: &str,
    seed: &str,
) -> Result<PathBuf, String> {
    let tree = target_dir()
        .join("bench-data")
        .join(format!("tree-{files}-{size}-s{seed}"));
    if !tree.is_dir() {
        eprintln!("bench: generating {}", tree.display());
        let status = Command::new(bin)
            .args(["gen", "--tree"])
            .arg(&tree)
            .args(["--files", files, "--size", size, "--seed", seed])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        if !status.success() {
            let _ = fs::remove_dir_all(&tree);
            return Err("pi-session gen --tree failed".into());
        }
    }
    Ok(tree)
}

/// The options of the benchmarks over a generated session tree (`search`, `stats`, `tables`):
/// `--files N --size SIZE --seed S` name the tree ([`session_tree`]), `--runs N` the timed
/// runs, `--out FILE` where the table is also written.
pub(crate) struct TreeOptions {
    pub(crate) files: String,
    pub(crate) size: String,
    pub(crate) seed: String,
    pub(crate) runs: usize,
    pub(crate) out: Option<PathBuf>,
}

impl TreeOptions {
    /// Reads `args` (10,000 files, 1GB, seed 1 and `runs` unless given); a flag of the
    /// benchmark's own goes to `extra` with its value (`false`: not one of its flags).
    pub(crate) fn parse<'a>(
        args: &[&'a str],
        runs: usize,
        usage: &str,
        mut extra: impl FnMut(&str, &'a str) -> bool,
    ) -> Result<TreeOptions, String> {
        let mut o = TreeOptions {
            files: "10000".to_owned(),
            size: "1GB".to_owned(),
            seed: "1".to_owned(),
            runs,
            out: None,
        };
        let mut it = args.iter();
        while let Some(&a) = it.next() {
            let value = it
                .next()
                .copied()
                .ok_or_else(|| format!("{a} needs a value\n{usage}"))?;
            match a {
                "--files" => o.files = value.to_owned(),
                "--size" => o.size = value.to_owned(),
                "--seed" => o.seed = value.to_owned(),
                "--runs" => {
                    o.runs = value
                        .parse()
                        .map_err(|_| "--runs needs a number".to_owned())?;
                }
                "--out" => o.out = Some(PathBuf::from(value)),
                _ if extra(a, value) => {}
                _ => return Err(format!("unknown argument {a}\n{usage}")),
            }
        }
        if o.runs == 0 {
            return Err("--runs must be at least 1".into());
        }
        Ok(o)
    }

    /// Writes `table` to `--out`, when given.
    pub(crate) fn write_out(&self, table: &str) -> Result<(), String> {
        match &self.out {
            Some(out) => fs::write(out, table).map_err(|e| format!("{}: {e}", out.display())),
            None => Ok(()),
        }
    }
}

/// The median time (s) and median peak RSS (MiB) of `runs`, or what a table's cell says
/// instead: `–` without runs, `fails: …` (escaped for a Markdown table) when one failed.
pub(crate) fn medians(runs: &Result<Vec<Run>, String>) -> Result<(f64, f64), String> {
    match runs {
        Ok(v) if !v.is_empty() => Ok((
            median(v.iter().map(|r| r.seconds).collect()),
            median(v.iter().map(|r| r.max_rss_kib as f64).collect()) / 1024.0,
        )),
        Ok(_) => Err("–".to_owned()),
        Err(e) => Err(format!("fails: {}", e.replace('|', "\\|"))),
    }
}

/// The bytes of the files under `dir`.
pub(crate) fn tree_bytes(dir: &Path) -> u64 {
    let mut stack = vec![dir.to_owned()];
    let mut total = 0;
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn reference_dir() -> Result<PathBuf, String> {
    let dir = crate::root().join("conformance/reference");
    if !dir.join("node_modules").is_dir() {
        return Err(format!(
            "the reference is not installed: run `npm ci` in {}",
            dir.display()
        ));
    }
    let node = Command::new("node").arg("--version").output();
    match node {
        Ok(o) if o.status.success() => Ok(dir),
        _ => Err("`node` (>= 20) is needed for the reference".into()),
    }
}

/// `pi-session gen ARGS --out FILE`.
fn generate(bin: &Path, args: &[String], out: &Path) -> Result<(), String> {
    let status = Command::new(bin)
        .arg("gen")
        .args(args)
        .arg("--out")
        .arg(out)
        .arg("--force")
        .status()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("pi-session gen {} failed", args.join(" ")))
    }
}

// ---------------------------------------------------------------------------------------------
// compare
// ---------------------------------------------------------------------------------------------

/// One timed run of a child process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub(crate) seconds: f64,
    /// Peak resident set size, KiB.
    pub(crate) max_rss_kib: u64,
}

/// A failed run: the exit status and the start of standard error.
pub(crate) struct Failed(pub(crate) String);

/// Runs `program args` with standard output to /dev/null (or to `stdout_to`) and measures it.
pub(crate) fn measure(
    program: &Path,
    args: &[&str],
    stdout_to: Option<&Path>,
    timeout: Duration,
) -> Result<Run, Failed> {
    let stdout = match stdout_to {
        Some(p) => Stdio::from(fs::File::create(p).map_err(|e| Failed(e.to_string()))?),
        None => Stdio::null(),
    };
    let stderr_file = tempfile_path("stderr");
    let stderr = Stdio::from(fs::File::create(&stderr_file).map_err(|e| Failed(e.to_string()))?);
    let time = Path::new("/usr/bin/time");
    // XTASK_BENCH_WAIT4=1 measures through wait4 even when /usr/bin/time exists.
    let use_time = time.is_file() && std::env::var_os("XTASK_BENCH_WAIT4").is_none();
    let result = if use_time {
        let rss_file = tempfile_path("time");
        let start = Instant::now();
        let status = Command::new(time)
            .args(["-f", "%M", "-o"])
            .arg(&rss_file)
            .arg(program)
            .args(args)
            .env("TZ", "UTC")
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .and_then(|mut child| {
                let watchdog = Watchdog::start(child.id(), timeout);
                let status = child.wait();
                watchdog.finish(status)
            });
        let seconds = start.elapsed().as_secs_f64();
        let rss = fs::read_to_string(&rss_file).unwrap_or_default();
        let _ = fs::remove_file(&rss_file);
        match status {
            Ok(s) if s.success() => {
                // GNU time writes "Command exited with non-zero status" lines before the
                // numbers on failure; on success the file is just the number.
                let max_rss_kib = rss
                    .lines()
                    .last()
                    .and_then(|l| l.trim().parse().ok())
                    .ok_or_else(|| Failed(format!("cannot read /usr/bin/time output {rss:?}")))?;
                Ok(Run {
                    seconds,
                    max_rss_kib,
                })
            }
            Ok(s) => Err(Failed(s.to_string())),
            Err(e) => Err(Failed(e.to_string())),
        }
    } else {
        wait4::run(program, args, stdout, stderr, timeout)
    };
    let err = fs::read_to_string(&stderr_file).unwrap_or_default();
    let _ = fs::remove_file(&stderr_file);
    result.map_err(|Failed(what)| {
        // The error line of a Node stack trace, else the first line.
        let first = err
            .lines()
            .find(|l| l.contains("Error"))
            .or_else(|| err.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("");
        if first.is_empty() {
            Failed(what)
        } else {
            Failed(format!(
                "{what}: {}",
                first.chars().take(160).collect::<String>()
            ))
        }
    })
}

/// Kills a child's process group (`/usr/bin/time` and the measured program) when it runs
/// longer than the timeout; [`Watchdog::finish`] reports the kill as a timeout.
struct Watchdog {
    done: mpsc::Sender<()>,
    fired: mpsc::Receiver<bool>,
    timeout: Duration,
}

impl Watchdog {
    fn start(pgid: u32, timeout: Duration) -> Watchdog {
        let (done, wait) = mpsc::channel::<()>();
        let (fire, fired) = mpsc::channel();
        std::thread::spawn(move || {
            let expired = matches!(wait.recv_timeout(timeout), Err(RecvTimeoutError::Timeout));
            if expired {
                kill_group(pgid);
            }
            let _ = fire.send(expired);
        });
        Watchdog {
            done,
            fired,
            timeout,
        }
    }

    fn finish<T>(self, result: std::io::Result<T>) -> std::io::Result<T> {
        let _ = self.done.send(());
        if self.fired.recv().unwrap_or(false) {
            return Err(std::io::Error::other(format!(
                "timed out after {} s",
                self.timeout.as_secs()
            )));
        }
        result
    }
}

#[allow(unsafe_code)]
fn kill_group(pgid: u32) {
    // SAFETY: kill(2) with a negative pid signals our own child's process group.
    unsafe {
        libc::kill(-(pgid as libc::pid_t), libc::SIGKILL);
    }
}

fn tempfile_path(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("xtask-bench-{}-{what}", std::process::id()))
}

/// Peak RSS without `/usr/bin/time`: `wait4(2)` returns the child's `rusage`.
mod wait4 {
    use super::{Failed, Run, Watchdog};
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    pub(super) fn run(
        program: &Path,
        args: &[&str],
        stdout: Stdio,
        stderr: Stdio,
        timeout: Duration,
    ) -> Result<Run, Failed> {
        let start = Instant::now();
        let child = Command::new(program)
            .args(args)
            .env("TZ", "UTC")
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0)
            .spawn()
            .map_err(|e| Failed(e.to_string()))?;
        let watchdog = Watchdog::start(child.id(), timeout);
        let (status, rusage) = wait(child.id());
        watchdog.finish(Ok(())).map_err(|e| Failed(e.to_string()))?;
        let seconds = start.elapsed().as_secs_f64();
        // Reaped by wait4 above: `child` must not be waited for again (dropping it does not).
        drop(child);
        let (status, rusage) = (status.map_err(Failed)?, rusage);
        if status != 0 {
            return Err(Failed(format!("wait status {status:#x}")));
        }
        Ok(Run {
            seconds,
            // Linux reports ru_maxrss in KiB.
            max_rss_kib: rusage.ru_maxrss as u64,
        })
    }

    #[allow(unsafe_code)]
    fn wait(pid: u32) -> (Result<i32, String>, libc::rusage) {
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is plain old data that wait4 fills in; zeroed is a valid value.
        let mut rusage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: valid pointers to locals; `pid` is our own unreaped child.
            let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut rusage) };
            if r == pid as libc::pid_t {
                return (Ok(status), rusage);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return (Err(format!("wait4: {e}")), rusage);
            }
        }
    }
}

struct Row {
    label: String,
    bytes: u64,
    reference: Result<Vec<Run>, String>,
    ours: Result<Vec<Run>, String>,
    /// `wc -l` of the same file: the time to read it from the page cache.
    floor: Result<Vec<Run>, String>,
    identical: Option<bool>,
}

/// The machine's load average (the one-minute figure of `/proc/loadavg`) before and after
/// the runs; `None` where it cannot be read. Every `bench` table ends with it.
pub(crate) struct Load {
    pub(crate) before: Option<f64>,
    pub(crate) after: Option<f64>,
}

impl Load {
    /// The load average now, as `before`; [`Load::finished`] adds `after`.
    pub(crate) fn starting() -> Load {
        Load {
            before: load_average(),
            after: None,
        }
    }

    /// The same load with `after` read now.
    pub(crate) fn finished(self) -> Load {
        Load {
            after: load_average(),
            ..self
        }
    }

    /// "Load average (1 min) B before the runs, A after." (`unknown` where it was not read.)
    pub(crate) fn sentence(&self) -> String {
        let figure =
            |l: Option<f64>| l.map_or_else(|| "unknown".to_string(), |l| format!("{l:.2}"));
        format!(
            "Load average (1 min) {} before the runs, {} after.",
            figure(self.before),
            figure(self.after)
        )
    }
}

/// The one-minute load average, from `/proc/loadavg`.
fn load_average() -> Option<f64> {
    fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

pub(crate) fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn compare(args: &[&str]) -> Result<(), String> {
    let mut sizes = "1MB,10MB,100MB".to_string();
    let mut runs = 5usize;
    let mut seed = "1".to_string();
    let mut version = "3".to_string();
    let mut linear: Option<String> = None;
    let mut pi = "0.73".to_string();
    let mut out: Option<PathBuf> = None;
    let mut timeout = Duration::from_secs(300);
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        match a {
            "--sizes" => sizes = flag(&mut it, a)?.into(),
            "--timeout" => {
                let secs: u64 = flag(&mut it, a)?
                    .parse()
                    .map_err(|_| "--timeout needs a number of seconds".to_string())?;
                timeout = Duration::from_secs(secs);
            }
            "--runs" => {
                runs = flag(&mut it, a)?
                    .parse()
                    .map_err(|_| "--runs needs a number".to_string())?;
            }
            "--seed" => seed = flag(&mut it, a)?.into(),
            "--version" => version = flag(&mut it, a)?.into(),
            "--linear" => linear = Some(flag(&mut it, a)?.into()),
            "--pi" => pi = flag(&mut it, a)?.into(),
            "--out" => out = Some(PathBuf::from(flag(&mut it, a)?)),
            _ => return Err(format!("unknown argument {a}\n{USAGE}")),
        }
    }
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let reference = reference_dir()?;
    let bench_ref = reference.join("bench-ref.mjs");
    let bin = build_pi_session(true)?;
    let data = target_dir().join("bench-data");
    fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;

    let mut inputs: Vec<(String, Vec<String>, PathBuf)> = sizes
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|size| {
            let file = data.join(format!("compare-v{version}-s{seed}-{size}.jsonl"));
            let args = vec![
                "--size".into(),
                size.into(),
                "--seed".into(),
                seed.clone(),
                "--version".into(),
                version.clone(),
            ];
            (size.to_string(), args, file)
        })
        .collect();
    if let Some(n) = &linear {
        let file = data.join(format!("compare-v{version}-linear-{n}.jsonl"));
        let args = vec![
            "--entries".into(),
            n.clone(),
            "--linear".into(),
            "--seed".into(),
            seed.clone(),
            "--version".into(),
            version.clone(),
        ];
        inputs.push((format!("linear, {n} entries"), args, file));
    }

    let node = PathBuf::from("node");
    let wc = PathBuf::from("wc");
    let load = Load::starting();
    let mut rows = Vec::new();
    for (label, gen_args, file) in inputs {
        eprintln!("bench: generating {label} → {}", file.display());
        generate(&bin, &gen_args, &file)?;
        let bytes = fs::metadata(&file).map_err(|e| e.to_string())?.len();
        let copy = data.join("ref-copy.jsonl");
        let file_s = file.to_string_lossy().into_owned();
        let copy_s = copy.to_string_lossy().into_owned();
        let bench_ref_s = bench_ref.to_string_lossy().into_owned();
        let ref_args = [bench_ref_s.as_str(), copy_s.as_str(), "--pi", pi.as_str()];
        let our_args = ["context", file_s.as_str(), "--pi", pi.as_str()];
        let floor_args = ["-l", file_s.as_str()];
        // pi may rewrite the file it opens: a fresh copy before every run, not timed.
        let fresh_copy = || fs::copy(&file, &copy).map(drop).map_err(|e| e.to_string());

        // Warm-up (page cache, lazy loading), and the outputs must agree.
        let ref_out = data.join("ref-out.json");
        let our_out = data.join("our-out.json");
        fresh_copy()?;
        let ref_warm = measure(&node, &ref_args, Some(&ref_out), timeout);
        let our_warm = measure(&bin, &our_args, Some(&our_out), timeout);
        let identical = match (&ref_warm, &our_warm) {
            (Ok(_), Ok(_)) => Some(fs::read(&ref_out).ok() == fs::read(&our_out).ok()),
            _ => None,
        };
        let _ = fs::remove_file(&ref_out);
        let _ = fs::remove_file(&our_out);
        let mut reference: Result<Vec<Run>, String> = match ref_warm {
            Ok(_) => Ok(Vec::new()),
            Err(Failed(e)) => Err(e),
        };
        let mut ours: Result<Vec<Run>, String> = match our_warm {
            Ok(_) => Ok(Vec::new()),
            Err(Failed(e)) => Err(e),
        };
        let mut floor: Result<Vec<Run>, String> = match measure(&wc, &floor_args, None, timeout) {
            Ok(_) => Ok(Vec::new()),
            Err(Failed(e)) => Err(e),
        };
        for i in 0..runs {
            if let Ok(v) = &mut reference {
                fresh_copy()?;
                match measure(&node, &ref_args, None, timeout) {
                    Ok(r) => v.push(r),
                    Err(Failed(e)) => reference = Err(e),
                }
            }
            if let Ok(v) = &mut ours {
                match measure(&bin, &our_args, None, timeout) {
                    Ok(r) => v.push(r),
                    Err(Failed(e)) => ours = Err(e),
                }
            }
            if let Ok(v) = &mut floor {
                match measure(&wc, &floor_args, None, timeout) {
                    Ok(r) => v.push(r),
                    Err(Failed(e)) => floor = Err(e),
                }
            }
            eprintln!(
                "bench: {label} run {}/{runs}: reference {}, ours {}, wc -l {}",
                i + 1,
                describe(&reference),
                describe(&ours),
                describe(&floor)
            );
        }
        let _ = fs::remove_file(&copy);
        rows.push(Row {
            label,
            bytes,
            reference,
            ours,
            floor,
            identical,
        });
    }
    let table = render(&rows, runs, &pi, &load.finished());
    print!("{table}");
    if let Some(out) = out {
        fs::write(&out, &table).map_err(|e| format!("{}: {e}", out.display()))?;
        eprintln!("bench: table written to {}", out.display());
    }
    if rows.iter().any(|r| r.identical == Some(false)) {
        return Err("outputs differ between the reference and pi-session (see the table)".into());
    }
    Ok(())
}

fn describe(r: &Result<Vec<Run>, String>) -> String {
    match r {
        Ok(v) => v.last().map_or_else(
            || "-".into(),
            |r| format!("{:.3} s {} MiB", r.seconds, r.max_rss_kib / 1024),
        ),
        Err(e) => format!("failed ({e})"),
    }
}

fn render(rows: &[Row], runs: usize, pi: &str, load: &Load) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| session | file MB | reference median s | ours median s | speedup (ref / ours) | ours MB/s | \
         `wc -l` median s | ours / `wc -l` | reference peak RSS MiB | ours peak RSS MiB | RSS ratio (ours / ref) | same output |"
    );
    let _ = writeln!(
        t,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|"
    );
    for row in rows {
        let mb = row.bytes as f64 / 1e6;
        let (ref_s, ref_rss) = match medians(&row.reference) {
            Ok((s, m)) => (format!("{s:.3}"), format!("{m:.0}")),
            Err(e) => (e, "–".into()),
        };
        let (our_s, our_rss, mbps) = match medians(&row.ours) {
            Ok((s, m)) => (
                format!("{s:.3}"),
                format!("{m:.0}"),
                format!("{:.0}", mb / s),
            ),
            Err(e) => (e, "–".into(), "–".into()),
        };
        let floor_s = match medians(&row.floor) {
            Ok((s, _)) => format!("{s:.3}"),
            Err(e) => e,
        };
        let (speedup, rss_ratio) = match (medians(&row.reference), medians(&row.ours)) {
            (Ok((rs, rm)), Ok((os, om))) => {
                (format!("{:.1}×", rs / os), format!("{:.2}×", om / rm))
            }
            _ => ("–".into(), "–".into()),
        };
        let over_floor = match (medians(&row.ours), medians(&row.floor)) {
            (Ok((os, _)), Ok((fs, _))) if fs > 0.0 => format!("{:.1}×", os / fs),
            _ => "–".into(),
        };
        let same = match row.identical {
            Some(true) => "yes",
            Some(false) => "**NO**",
            None => "–",
        };
        let _ = writeln!(
            t,
            "| {} | {mb:.1} | {ref_s} | {our_s} | {speedup} | {mbps} | {floor_s} | {over_floor} | {ref_rss} | {our_rss} | {rss_ratio} | {same} |",
            row.label
        );
    }
    let _ = writeln!(
        t,
        "\nMedians of {runs} runs each after one untimed warm-up run, the three taking turns; whole \
         processes; pi {pi} (`node conformance/reference/bench-ref.mjs`) vs \
         `target/release/pi-session context`; the floor is `wc -l` of the same file (reading it \
         from the page cache). {}",
        load.sentence()
    );
    t
}

// ---------------------------------------------------------------------------------------------
// check-gen
// ---------------------------------------------------------------------------------------------

fn parse_list(spec: &str) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bad = || format!("bad list {spec:?} (e.g. 1-5 or 1,2,3)");
        if let Some((a, b)) = part.split_once('-') {
            let (a, b): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
            out.extend(a..=b);
        } else {
            out.push(part.parse().map_err(|_| bad())?);
        }
    }
    Ok(out)
}

fn check_gen(args: &[&str]) -> Result<(), String> {
    let mut size = "1MB".to_string();
    let mut seeds = vec![1, 2, 3, 4, 5];
    let mut versions = vec![1, 2, 3];
    let mut pi = "0.73".to_string();
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        match a {
            "--size" => size = flag(&mut it, a)?.into(),
            "--seeds" => seeds = parse_list(flag(&mut it, a)?)?,
            "--versions" => versions = parse_list(flag(&mut it, a)?)?,
            "--pi" => pi = flag(&mut it, a)?.into(),
            _ => return Err(format!("unknown argument {a}\n{USAGE}")),
        }
    }
    let reference = reference_dir()?;
    let pi_ref = reference.join("pi-ref.mjs");
    let bin = build_pi_session(false)?;
    let dir = target_dir().join("bench-data/check-gen");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut failures = Vec::new();
    let mut checked = 0;
    for &version in &versions {
        for &seed in &seeds {
            let file = dir.join(format!("v{version}-s{seed}-{size}.jsonl"));
            let gen_args = [
                "--size".to_string(),
                size.clone(),
                "--seed".into(),
                seed.to_string(),
                "--version".into(),
                version.to_string(),
            ];
            generate(&bin, &gen_args, &file)?;
            let f = file.to_string_lossy().into_owned();
            let mut ops: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
                ("context", vec!["context", &f], vec!["context", &f]),
                (
                    "context --llm",
                    vec!["context", &f, "--llm"],
                    vec!["context", &f, "--llm"],
                ),
            ];
            if version < 3 {
                ops.push((
                    "migrate",
                    vec!["migrate", &f],
                    vec!["migrate", &f, "--stdout"],
                ));
            }
            for (name, ref_args, our_args) in ops {
                let theirs = Command::new("node")
                    .arg(&pi_ref)
                    .args(&ref_args)
                    .args(["--pi", &pi])
                    .env("TZ", "UTC")
                    .output()
                    .map_err(|e| format!("node: {e}"))?;
                let ours = Command::new(&bin)
                    .args(&our_args)
                    .args(["--pi", &pi])
                    .env("TZ", "UTC")
                    .env("PI_SESSION_DETERMINISTIC_IDS", "1")
                    .output()
                    .map_err(|e| format!("{}: {e}", bin.display()))?;
                checked += 1;
                let same = theirs.status.success()
                    && ours.status.success()
                    && theirs.stdout == ours.stdout;
                println!(
                    "{} v{version} seed {seed} {size} {name}: {} ({} bytes)",
                    if same { "ok  " } else { "FAIL" },
                    if same { "identical" } else { "differs" },
                    ours.stdout.len()
                );
                if !same {
                    failures.push(format!("{} {name}", file.display()));
                }
            }
        }
    }
    println!(
        "{} passed, {} failed",
        checked - failures.len(),
        failures.len()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "generated sessions read differently:\n  {}",
            failures.join("\n  ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(seconds: &[f64], rss_mib: u64) -> Result<Vec<Run>, String> {
        Ok(seconds
            .iter()
            .map(|&seconds| Run {
                seconds,
                max_rss_kib: rss_mib * 1024,
            })
            .collect())
    }

    #[test]
    fn the_table_sets_ours_beside_the_reference_and_the_floor() {
        let rows = [
            Row {
                label: "1GB".into(),
                bytes: 1_000_000_000,
                reference: Err("Cannot create a string longer than 0x1fffffe8 characters".into()),
                ours: runs(&[0.70, 0.60, 0.65], 116),
                floor: runs(&[0.15, 0.20, 0.13], 2),
                identical: None,
            },
            Row {
                label: "100MB".into(),
                bytes: 100_000_000,
                reference: runs(&[1.8, 1.6, 1.7], 774),
                ours: runs(&[0.05, 0.04, 0.06], 18),
                floor: Err("wc: not found".into()),
                identical: Some(true),
            },
        ];
        let load = Load {
            before: Some(1.57),
            after: None,
        };
        let table = render(&rows, 3, "0.73", &load);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[2],
            "| 1GB | 1000.0 | fails: Cannot create a string longer than 0x1fffffe8 characters | 0.650 | – | 1538 | 0.150 | 4.3× | – | 116 | – | – |"
        );
        assert_eq!(
            lines[3],
            "| 100MB | 100.0 | 1.700 | 0.050 | 34.0× | 2000 | fails: wc: not found | – | 774 | 18 | 0.02× | yes |"
        );
        assert!(
            table.contains("Load average (1 min) 1.57 before the runs, unknown after."),
            "{table}"
        );
    }
}
