//! `cargo xtask bench tables`: `pi-session export --format parquet` against DuckDB's own JSON
//! to Parquet conversion of the same session tree, in the same run (issue 31, target 6: at
//! least 10× DuckDB, peak memory under 512 MiB). DuckDB is the pinned one of the tests'
//! Python (`scripts/setup-test-python.sh`, or `PI_SESSION_TEST_PYTHON`), run as
//! `COPY (SELECT * FROM read_json('TREE/*/*.jsonl', union_by_name=true)) TO 'OUT.parquet'`
//! with `SET threads=2`: one flat table of every line as it is (no tree, no usage columns,
//! forked history counted again), where ours writes the six tables of `docs/tables.md`.
//!
//! Ours with each codec (`--compression zstd`, the default, `lz4`, `none`) and DuckDB take
//! turns, `--runs` turns after one untimed warm-up of each; the table gives medians, peak RSS,
//! the output's size and DuckDB's time over ours, with the load average before and after.

use crate::bench::{
    Failed, Load, Run, TreeOptions, build_pi_session, measure, medians, session_tree, target_dir,
    tree_bytes,
};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const USAGE: &str = "usage: cargo xtask bench tables [--files 10000] [--size 1GB] [--seed 1] [--runs 3] [--out FILE]";

/// The codecs of ours timed, the default first.
const CODECS: [&str; 3] = ["zstd", "lz4", "none"];

/// One row: a command's runs and the size of what it wrote.
struct Row {
    what: String,
    runs: Result<Vec<Run>, String>,
    output_bytes: u64,
}

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    let options = TreeOptions::parse(args, 3, USAGE, |_, _| false)?;
    let runs = options.runs;
    let bin = build_pi_session(true)?;
    let tree = session_tree(&bin, &options.files, &options.size, &options.seed)?;
    let python = test_python()?;
    let work = target_dir().join("bench-data").join("bench-tables");
    let _ = fs::remove_dir_all(&work);
    fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;

    // Each command writes where nothing is: what the last run wrote is removed first.
    let ours_out = work.join("ours");
    let duck_out = work.join("duckdb.parquet");
    let tree_glob = tree.join("*").join("*.jsonl");
    let duck_script = format!(
        "import duckdb, sys\ncon = duckdb.connect()\ncon.execute('SET threads=2')\n\
         con.execute(\"COPY (SELECT * FROM read_json('{}', union_by_name=true)) TO '{}'\")\n",
        tree_glob.display(),
        duck_out.display()
    );
    let tree_s = tree.to_string_lossy().into_owned();
    let ours_s = ours_out.to_string_lossy().into_owned();
    let commands: Vec<(String, PathBuf, Vec<String>, PathBuf)> = CODECS
        .iter()
        .map(|codec| {
            let args = [
                "export",
                "--format",
                "parquet",
                "--compression",
                codec,
                &tree_s,
                "-o",
                &ours_s,
            ];
            (
                format!("`export --format parquet --compression {codec}`"),
                bin.clone(),
                args.iter().map(|s| (*s).to_owned()).collect(),
                ours_out.clone(),
            )
        })
        .chain(std::iter::once((
            "DuckDB `read_json` → Parquet, 2 threads".to_owned(),
            python.clone(),
            vec!["-c".to_owned(), duck_script],
            duck_out.clone(),
        )))
        .collect();
    let timeout = Duration::from_secs(1800);
    let run_one = |(_, program, args, output): &(String, PathBuf, Vec<String>, PathBuf)| {
        let _ = fs::remove_dir_all(output);
        let _ = fs::remove_file(output);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        measure(program, &args, None, timeout).map_err(|Failed(e)| e)
    };
    eprintln!("bench: tables warm-up (DuckDB takes a while on a large tree)");
    let mut rows: Vec<Row> = commands
        .iter()
        .map(|command| {
            let warm = run_one(command);
            Row {
                what: command.0.clone(),
                output_bytes: size_of(&command.3),
                runs: warm.map(|_| Vec::new()),
            }
        })
        .collect();
    let load = Load::starting();
    for turn in 0..runs {
        for (row, command) in rows.iter_mut().zip(&commands) {
            if let Ok(v) = &mut row.runs {
                match run_one(command) {
                    Ok(r) => v.push(r),
                    Err(e) => row.runs = Err(e),
                }
            }
        }
        eprintln!("bench: tables turn {}/{runs}", turn + 1);
    }
    let _ = fs::remove_dir_all(&work);
    let table = render(&rows, runs, tree_bytes(&tree), &load.finished());
    print!("{table}");
    options.write_out(&table)
}

/// The tests' Python with DuckDB: `PI_SESSION_TEST_PYTHON`, else the one
/// `scripts/setup-test-python.sh` makes (and prints).
fn test_python() -> Result<PathBuf, String> {
    if let Some(python) = std::env::var_os("PI_SESSION_TEST_PYTHON") {
        return Ok(PathBuf::from(python));
    }
    let out = Command::new("bash")
        .arg(crate::root().join("scripts/setup-test-python.sh"))
        .output()
        .map_err(|e| format!("scripts/setup-test-python.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "scripts/setup-test-python.sh failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The bytes of a file, or of the files under a directory (0 when there is none).
fn size_of(path: &Path) -> u64 {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => tree_bytes(path),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

fn render(rows: &[Row], runs: usize, bytes: u64, load: &Load) -> String {
    let row_medians: Vec<_> = rows.iter().map(|r| medians(&r.runs)).collect();
    // The peer is the last row.
    let peer = row_medians
        .last()
        .and_then(|m| m.as_ref().ok())
        .map(|(s, _)| *s);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| command | median s | peak RSS MiB | output MB | DuckDB / this |"
    );
    let _ = writeln!(t, "|---|---:|---:|---:|---:|");
    for (row, m) in rows.iter().zip(&row_medians) {
        let (secs, rss, ratio) = match m {
            Ok((s, rss)) => (
                format!("{s:.2}"),
                format!("{rss:.0}"),
                peer.map_or_else(|| "–".to_owned(), |p| format!("{:.1}×", p / s)),
            ),
            Err(e) => (e.clone(), "–".to_owned(), "–".to_owned()),
        };
        let _ = writeln!(
            t,
            "| {} | {secs} | {rss} | {:.0} | {ratio} |",
            row.what,
            row.output_bytes as f64 / 1e6
        );
    }
    let _ = writeln!(
        t,
        "\nIssue 31, target 6: the default export at least 10× DuckDB, under 512 MiB. Medians of \
         {runs} runs each after one untimed warm-up run; whole processes over a tree of {:.2} GB, \
         warm page cache. {}",
        bytes as f64 / 1e9,
        load.sentence()
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_each_codec_against_duckdb() {
        let run = |seconds: f64| Run {
            seconds,
            max_rss_kib: 204_800,
        };
        let rows = vec![
            Row {
                what: "zstd".to_owned(),
                runs: Ok(vec![run(5.0), run(4.0), run(6.0)]),
                output_bytes: 197_000_000,
            },
            Row {
                what: "lz4".to_owned(),
                runs: Err("exit status: 2".to_owned()),
                output_bytes: 0,
            },
            Row {
                what: "duckdb".to_owned(),
                runs: Ok(vec![run(50.0), run(45.0), run(40.0)]),
                output_bytes: 455_000_000,
            },
        ];
        let load = Load {
            before: Some(2.0),
            after: None,
        };
        let table = render(&rows, 3, 1_080_000_000, &load);
        for row in [
            "| zstd | 5.00 | 200 | 197 | 9.0× |",
            "| lz4 | fails: exit status: 2 | – | 0 | – |",
            "| duckdb | 45.00 | 200 | 455 | 1.0× |",
        ] {
            assert!(table.contains(row), "{row}\n{table}");
        }
        assert!(
            table.contains("tree of 1.08 GB")
                && table.contains("Load average (1 min) 2.00 before the runs, unknown after."),
            "{table}"
        );
    }
}
