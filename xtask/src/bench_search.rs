//! `cargo xtask bench search`: `pi-session search -l PATTERN TREE` against ripgrep's
//! `rg -l PATTERN TREE` over the same session tree, in the same run. The tree is
//! `pi-session gen --tree` (10,000 sessions, 1 GB, seed 1 by default), generated once into
//! `target/bench-data/`. For each pattern, one untimed warm-up run of each side (the page
//! cache; their lists of files are compared, sorted), then `--runs` timed runs alternating;
//! the table gives medians, the ratio and peak RSS, and the load average before and after
//! the runs.
//! ripgrep reads the raw JSON, escapes and all, so for a pattern found in some files its
//! list can differ from ours (the `same files` column); for a rare or absent one they agree.

use crate::bench::{
    Failed, Load, Run, TreeOptions, build_pi_session, measure, medians, session_tree, target_dir,
    tree_bytes,
};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const USAGE: &str = "usage: cargo xtask bench search [--files 10000] [--size 1GB] [--seed 1]
                                 [--patterns 'zz9qq,(?i)weather'] [--runs 5] [--out FILE]";

/// One pattern's row.
struct Row {
    pattern: String,
    ripgrep: Result<Vec<Run>, String>,
    ours: Result<Vec<Run>, String>,
    same_files: Option<bool>,
}

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    let mut patterns = "zz9qq,(?i)weather".to_owned();
    let options = TreeOptions::parse(args, 5, USAGE, |flag, value| {
        let ours = flag == "--patterns";
        if ours {
            patterns = value.to_owned();
        }
        ours
    })?;
    let runs = options.runs;
    let rg = PathBuf::from("rg");
    let version = Command::new(&rg)
        .arg("--version")
        .output()
        .map_err(|e| format!("ripgrep (`rg`) is needed as the peer: {e}"))?;
    let rg_version = String::from_utf8_lossy(&version.stdout)
        .lines()
        .next()
        .unwrap_or("rg")
        .to_owned();
    let bin = build_pi_session(true)?;
    let tree = session_tree(&bin, &options.files, &options.size, &options.seed)?;
    let tree_s = tree.to_string_lossy().into_owned();
    let bytes = tree_bytes(&tree);
    let load = Load::starting();
    let timeout = Duration::from_secs(300);
    let mut rows = Vec::new();
    for pattern in patterns.split(',').filter(|p| !p.is_empty()) {
        let rg_args = ["-l", pattern, tree_s.as_str()];
        let our_args = ["search", "-l", pattern, tree_s.as_str()];
        let dir = target_dir().join("bench-data");
        let (rg_out, our_out) = (dir.join("rg-files.txt"), dir.join("our-files.txt"));
        // Both exit 1 when nothing matched: a run is timed all the same.
        let rg_warm = measure_listing(&rg, &rg_args, &rg_out, timeout);
        let our_warm = measure_listing(&bin, &our_args, &our_out, timeout);
        let same_files = match (&rg_warm, &our_warm) {
            (Ok(_), Ok(_)) => Some(sorted_lines(&rg_out) == sorted_lines(&our_out)),
            _ => None,
        };
        let _ = fs::remove_file(&rg_out);
        let _ = fs::remove_file(&our_out);
        let mut ripgrep = rg_warm.map(|_| Vec::new());
        let mut ours = our_warm.map(|_| Vec::new());
        for i in 0..runs {
            for (side, program, args) in [
                (&mut ripgrep, &rg, &rg_args[..]),
                (&mut ours, &bin, &our_args[..]),
            ] {
                if let Ok(v) = side {
                    match measure_listing(program, args, Path::new("/dev/null"), timeout) {
                        Ok(r) => v.push(r),
                        Err(e) => *side = Err(e),
                    }
                }
            }
            eprintln!("bench: search {pattern:?} run {}/{runs}", i + 1);
        }
        rows.push(Row {
            pattern: pattern.to_owned(),
            ripgrep,
            ours,
            same_files,
        });
    }
    let table = render(&rows, runs, bytes, &rg_version, &load.finished());
    print!("{table}");
    options.write_out(&table)
}

/// [`measure`] of a grep-like program, which exits 1 when it found nothing: that exit is a
/// run like any other (a shell runs the program and maps exits 0 and 1 to success; its own
/// start, about a millisecond, is in both sides' times).
fn measure_listing(
    program: &Path,
    args: &[&str],
    stdout_to: &Path,
    timeout: Duration,
) -> Result<Run, String> {
    let wrapped = [&[
        "-c",
        r#"p="$1"; shift; "$p" "$@"; s=$?; [ $s -le 1 ]"#,
        "sh",
    ][..]]
    .concat()
    .into_iter()
    .chain(std::iter::once(program.to_str().unwrap_or_default()))
    .chain(args.iter().copied())
    .collect::<Vec<_>>();
    measure(Path::new("/bin/sh"), &wrapped, Some(stdout_to), timeout).map_err(|Failed(e)| e)
}

/// The lines of a file, sorted.
fn sorted_lines(path: &Path) -> Vec<String> {
    let mut lines: Vec<String> = fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort_unstable();
    lines
}

fn render(rows: &[Row], runs: usize, bytes: u64, rg: &str, load: &Load) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| pattern | ripgrep median s | ours median s | ratio (ours / ripgrep) | ripgrep peak RSS MiB | ours peak RSS MiB | same files |"
    );
    let _ = writeln!(t, "|---|---:|---:|---:|---:|---:|:---:|");
    for row in rows {
        let cell = |s: &Result<(f64, f64), String>| match s {
            Ok((secs, rss)) => (format!("{secs:.3}"), format!("{rss:.0}")),
            Err(e) => (e.clone(), "–".to_owned()),
        };
        let (rg, ours) = (medians(&row.ripgrep), medians(&row.ours));
        let ratio = match (&rg, &ours) {
            (Ok((r, _)), Ok((o, _))) => format!("{:.2}×", o / r),
            _ => "–".to_owned(),
        };
        let ((rg_s, rg_rss), (our_s, our_rss)) = (cell(&rg), cell(&ours));
        let same = match row.same_files {
            Some(true) => "yes",
            Some(false) => "no",
            None => "–",
        };
        let _ = writeln!(
            t,
            "| `{}` | {rg_s} | {our_s} | {ratio} | {rg_rss} | {our_rss} | {same} |",
            row.pattern.replace('|', "\\|")
        );
    }
    let _ = writeln!(
        t,
        "\nMedians of {runs} runs each after one untimed warm-up run; whole processes over a tree \
         of {:.2} GB; `pi-session search -l` vs `rg -l` ({rg}). {}",
        bytes as f64 / 1e9,
        load.sentence()
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_the_ratio_and_the_load_before_and_after() {
        let run = |seconds: f64, max_rss_kib: u64| Run {
            seconds,
            max_rss_kib,
        };
        let rows = vec![Row {
            pattern: "a|b".to_owned(),
            ripgrep: Ok(vec![run(0.2, 10240), run(0.4, 10240), run(0.3, 10240)]),
            ours: Ok(vec![run(0.6, 20480), run(0.5, 20480), run(0.7, 20480)]),
            same_files: Some(true),
        }];
        let load = Load {
            before: Some(1.5),
            after: Some(2.25),
        };
        let table = render(&rows, 3, 1_080_000_000, "ripgrep 13.0.0", &load);
        assert!(
            table.contains("| `a\\|b` | 0.300 | 0.600 | 2.00× | 10 | 20 | yes |"),
            "{table}"
        );
        assert!(
            table.contains("tree of 1.08 GB")
                && table.contains("Load average (1 min) 1.50 before the runs, 2.25 after."),
            "{table}"
        );
    }
}
