//! `cargo xtask implementations [--check]`: `conformance/IMPLEMENTATIONS.md`, the compatibility
//! table of every implementation of the format that can be built or run here, measured by the
//! conformance runner itself.
//!
//! The implementations: pi 0.73.1, 0.87.1 and 1.5.2 (each forced to its own rules on every case
//! and scenario, through `conformance/adapters/pi/`), `pi-session` (`conformance impl`,
//! `conformance write`, and the writer without its id and clock hooks), and the public crates
//! oino-session and yapi-types through their adapters in `conformance/adapters/<crate>/`:
//! standalone Cargo projects outside the workspace (an empty `[workspace]` table each), built
//! here with `cargo build --release --locked --manifest-path … --target-dir target/adapters` and
//! never a dependency of the project (`conformance/adapters/README.md` says what each maps).
//!
//! Each reader runs `pi-session conformance run --format json` over `conformance/cases`, each
//! writer `pi-session conformance writer --format json` over `conformance/writers`. The tables
//! are built from those reports generically: the areas, the levels (the report's `levels`
//! when it has one, else the level counts of `areas`, in the order the report writes them,
//! strictest first) and the scenarios are whatever the reports hold, so a new level or area
//! shows up without a change here. A reader's operation passes at a level when it reached that
//! level or a stricter one (what `--level` counts); a writer's run is judged at every level on
//! its own.
//!
//! The runner is started with `RUST_MIN_STACK` at 64 MiB: judging a deep `tree` output below
//! the exact level recurses once per node, and the debug build's worker threads overflow their
//! default 2 MiB on the real sessions of the corpus (which aborts the whole run).
//!
//! `--check` regenerates the file in memory and fails when the committed one differs (the
//! line with the date aside). A whole run takes several minutes: pi runs as one Node process
//! per operation.

use crate::root;
use pi_session_format::json::{self, JsValue};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const REGENERATE: &str = "cargo xtask implementations";

/// The line of the file that holds the date (left out of `--check`).
const DATE_LINE: &str = "Generated on ";

/// A standalone Cargo project under `conformance/adapters/`.
struct Adapter {
    /// Its directory under `conformance/adapters/`.
    dir: &'static str,
    /// The crates whose versions the table names (from the adapter's `Cargo.lock`).
    crates: &'static [&'static str],
    /// Extra `cargo build` arguments, and why.
    extra: &'static [&'static str],
}

const ADAPTERS: [Adapter; 2] = [
    Adapter {
        dir: "oino-session",
        crates: &["oino-session", "oino-ai"],
        // oino-session 1.0.0 and oino-ai 1.0.1 declare `rust-version = "1.99"`, a Rust that
        // is not released; they build with 1.95.
        extra: &["--ignore-rust-version"],
    },
    Adapter {
        dir: "yapi-types",
        crates: &["yapi-types"],
        extra: &[],
    },
];

/// One implementation: its name in the table and its commands (run from the repository's root).
struct Implementation {
    name: String,
    reader: Option<String>,
    writer: Option<String>,
    note: &'static str,
}

/// Runs the command.
pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    let check = match args {
        [] => false,
        ["--check"] => true,
        _ => return Err("usage: cargo xtask implementations [--check]".into()),
    };
    let started = Instant::now();
    let text = render()?;
    let path = root().join("conformance/IMPLEMENTATIONS.md");
    eprintln!(
        "xtask implementations: {:.0} s",
        started.elapsed().as_secs_f64()
    );
    if !check {
        return std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()));
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let without_date = |t: &str| -> String {
        t.lines()
            .filter(|l| !l.starts_with(DATE_LINE))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if without_date(&current) == without_date(&text) {
        Ok(())
    } else {
        Err(format!(
            "{} is stale: regenerate it with `{REGENERATE}`",
            path.display()
        ))
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Runs `command` to completion; its stdout, or what it said on failure.
fn output(command: &mut Command, what: &str) -> Result<String, String> {
    let out = command.output().map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("{what}: {e}"))
}

/// Builds `pi-session` (debug) and the adapters.
fn build(root: &Path) -> Result<(), String> {
    output(
        Command::new(cargo())
            .args(["build", "--quiet", "-p", "pi-session"])
            .current_dir(root),
        "cargo build -p pi-session",
    )?;
    for adapter in &ADAPTERS {
        let manifest = format!("conformance/adapters/{}/Cargo.toml", adapter.dir);
        output(
            Command::new(cargo())
                .args([
                    "build",
                    "--quiet",
                    "--release",
                    "--locked",
                    "--manifest-path",
                ])
                .arg(&manifest)
                .args(["--target-dir", "target/adapters"])
                .args(adapter.extra)
                .current_dir(root),
            &format!("cargo build --manifest-path {manifest}"),
        )?;
    }
    Ok(())
}

/// The `version` of a `package.json` under `conformance/reference/`.
fn npm_version(root: &Path, path: &str) -> Result<String, String> {
    let file = root.join("conformance/reference").join(path);
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    value["version"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{}: no version", file.display()))
}

/// The version of `name` in an adapter's `Cargo.lock`.
fn locked_version(root: &Path, adapter: &str, name: &str) -> Result<String, String> {
    let file = root
        .join("conformance/adapters")
        .join(adapter)
        .join("Cargo.lock");
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"")
            && let Some(version) = lines
                .next()
                .and_then(|l| l.strip_prefix("version = \""))
                .and_then(|v| v.strip_suffix('"'))
        {
            return Ok(version.to_owned());
        }
    }
    Err(format!("{}: no {name}", file.display()))
}

fn implementations(root: &Path) -> Result<Vec<Implementation>, String> {
    let mut out = Vec::new();
    for (short, package) in [
        (
            "0.73",
            "node_modules/@mariozechner/pi-coding-agent/package.json",
        ),
        (
            "0.87",
            "node_modules/@earendil-works/pi-coding-agent/package.json",
        ),
        ("1.5", "vendor/pi-coding-agent-1.5.2/package/package.json"),
    ] {
        out.push(Implementation {
            name: format!("pi {}", npm_version(root, package)?),
            reader: Some(format!("sh conformance/adapters/pi/reader.sh {short}")),
            writer: Some(format!("sh conformance/adapters/pi/writer.sh {short}")),
            note: "pi's own `SessionManager` (conformance/reference/), its version forced on every case and scenario",
        });
    }
    let version = output(
        Command::new(root.join("target/debug/pi-session"))
            .arg("--version")
            .current_dir(root),
        "pi-session --version",
    )?;
    let version = version.split_whitespace().last().unwrap_or_default();
    out.push(Implementation {
        name: format!("pi-session {version}"),
        reader: Some("target/debug/pi-session conformance impl".into()),
        writer: Some("target/debug/pi-session conformance write".into()),
        note: "this repository; each case's and scenario's pi",
    });
    out.push(Implementation {
        name: format!("pi-session {version}, no hooks"),
        reader: None,
        writer: Some("target/debug/pi-session conformance write --no-hooks".into()),
        note: "its writer drawing its own ids and reading the clock, as a writer without hooks does",
    });
    let oino: Vec<String> = ADAPTERS[0]
        .crates
        .iter()
        .map(|c| locked_version(root, ADAPTERS[0].dir, c).map(|v| format!("{c} {v}")))
        .collect::<Result<_, _>>()?;
    out.push(Implementation {
        name: oino[0].clone(),
        reader: Some("target/adapters/release/oino-session-reader".into()),
        writer: Some("target/adapters/release/oino-session-writer".into()),
        note: "crates.io, with oino-ai; its `SessionManager`, migrations and context projection (conformance/adapters/oino-session/)",
    });
    let yapi = locked_version(root, ADAPTERS[1].dir, ADAPTERS[1].crates[0])?;
    out.push(Implementation {
        name: format!("yapi-types {yapi}, typed"),
        reader: Some("target/adapters/release/yapi-types-reader".into()),
        writer: None,
        note: "crates.io; serde types only: each line through its `FileEntry` and back (conformance/adapters/yapi-types/)",
    });
    out.push(Implementation {
        name: format!("yapi-types {yapi}, documents"),
        reader: Some("target/adapters/release/yapi-types-reader --documents".into()),
        writer: None,
        note: "each line as an order-preserving document and back, as the crate says it handles pi's files",
    });
    Ok(out)
}

/// Runs `pi-session conformance ARGS… --format json` and parses its report (order kept).
fn report(root: &Path, args: &[&str]) -> Result<JsValue, String> {
    let out = Command::new(root.join("target/debug/pi-session"))
        .arg("conformance")
        .args(args)
        .args(["--format", "json"])
        .env("RUST_MIN_STACK", (64usize << 20).to_string())
        .current_dir(root)
        .output()
        .map_err(|e| format!("pi-session conformance {}: {e}", args.join(" ")))?;
    // Exit status 1 is a failed case: the report is what we want. Anything else is not.
    if !matches!(out.status.code(), Some(0 | 1)) {
        return Err(format!(
            "pi-session conformance {}: {}\n{}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    json::parse(&text).map_err(|e| format!("pi-session conformance {}: {e}", args.join(" ")))
}

fn members(value: Option<&JsValue>) -> Vec<(String, &JsValue)> {
    value
        .and_then(JsValue::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.to_string_lossy(), v)).collect())
        .unwrap_or_default()
}

fn number(value: Option<&JsValue>) -> usize {
    match value {
        Some(JsValue::Number(n)) if *n >= 0.0 => *n as usize,
        _ => 0,
    }
}

fn text(value: Option<&JsValue>) -> Option<String> {
    value.and_then(JsValue::as_str).map(str::to_owned)
}

/// The report's `levels`, strictest first: an array of names (or of `{name, …}`), or an
/// object keyed by name; `None` when it has none.
fn declared_levels(report: &JsValue) -> Option<Vec<(String, Option<String>)>> {
    match report.get("levels")? {
        JsValue::Array(items) => Some(
            items
                .0
                .iter()
                .filter_map(|item| match item {
                    JsValue::String(_) => Some((text(Some(item))?, None)),
                    _ => Some((
                        text(item.get("name"))?,
                        text(item.get("meaning")).or_else(|| text(item.get("description"))),
                    )),
                })
                .collect(),
        ),
        levels @ JsValue::Object(_) => Some(
            members(Some(levels))
                .into_iter()
                .map(|(name, meaning)| (name, text(Some(meaning))))
                .collect(),
        ),
        _ => None,
    }
}

/// What a reader did in one area: operations scored and unsupported, and how many reached
/// each level as their strictest.
#[derive(Default)]
struct Area {
    scored: usize,
    unsupported: usize,
    reached: Vec<usize>,
}

struct ReaderTable {
    levels: Vec<String>,
    cases: usize,
    areas: Vec<(String, Area)>,
}

/// The counts of `areas` that are not levels.
const NOT_LEVELS: [&str; 3] = ["ops", "failed", "unsupported"];

fn reader_table(report: &JsValue) -> ReaderTable {
    let areas = members(report.get("areas"));
    let levels: Vec<String> = match declared_levels(report) {
        Some(levels) => levels.into_iter().map(|(name, _)| name).collect(),
        None => areas
            .iter()
            .flat_map(|(_, ops)| members(Some(ops)))
            .flat_map(|(_, counts)| members(Some(counts)))
            .map(|(key, _)| key)
            .filter(|key| !NOT_LEVELS.contains(&key.as_str()))
            .fold(Vec::new(), |mut seen, key| {
                if !seen.contains(&key) {
                    seen.push(key);
                }
                seen
            }),
    };
    let areas = areas
        .into_iter()
        .map(|(name, ops)| {
            let mut area = Area {
                reached: vec![0; levels.len()],
                ..Area::default()
            };
            for (_, counts) in members(Some(ops)) {
                let unsupported = number(counts.get("unsupported"));
                area.unsupported += unsupported;
                area.scored += number(counts.get("ops")) - unsupported;
                for (i, level) in levels.iter().enumerate() {
                    area.reached[i] += number(counts.get(level));
                }
            }
            (name, area)
        })
        .collect();
    ReaderTable {
        levels,
        cases: number(report.get("cases")),
        areas,
    }
}

/// One writer run: scenario, profile, the levels it passed, and what sets it apart.
struct Run {
    scenario: String,
    profile: String,
    passed: Vec<bool>,
    unsupported: bool,
    javascript_only: bool,
    divergence: bool,
}

struct WriterTable {
    levels: Vec<(String, Option<String>)>,
    runs: Vec<Run>,
}

fn writer_table(report: &JsValue) -> WriterTable {
    let runs: Vec<&JsValue> = match report.get("runs") {
        Some(JsValue::Array(runs)) => runs.0.iter().collect(),
        _ => Vec::new(),
    };
    let levels = declared_levels(report).unwrap_or_else(|| {
        // The members of a run that are verdicts (`{"passed": …}`).
        let mut names: Vec<(String, Option<String>)> = Vec::new();
        for run in &runs {
            for (key, value) in members(Some(run)) {
                if matches!(value.get("passed"), Some(JsValue::Bool(_)))
                    && !names.iter().any(|(n, _)| *n == key)
                {
                    names.push((key, None));
                }
            }
        }
        names
    });
    let runs = runs
        .into_iter()
        .map(|run| Run {
            scenario: text(run.get("scenario")).unwrap_or_default(),
            profile: text(run.get("profile")).unwrap_or_default(),
            passed: levels
                .iter()
                .map(|(name, _)| {
                    matches!(
                        run.get(name).and_then(|v| v.get("passed")),
                        Some(JsValue::Bool(true))
                    )
                })
                .collect(),
            unsupported: run
                .get("unsupported")
                .is_some_and(|v| !matches!(v, JsValue::Null)),
            javascript_only: run
                .get("javascriptOnly")
                .is_some_and(|v| !matches!(v, JsValue::Null)),
            divergence: run
                .get("divergence")
                .is_some_and(|v| !matches!(v, JsValue::Null)),
        })
        .collect();
    WriterTable { levels, runs }
}

/// `count/total`, or `—` when nothing was scored.
fn fraction(count: usize, total: usize) -> String {
    if total == 0 {
        "—".into()
    } else {
        format!("{count}/{total}")
    }
}

/// Operations passed at each level (reached it or a stricter one).
fn cumulative(reached: &[usize]) -> Vec<usize> {
    reached
        .iter()
        .scan(0, |sum, n| {
            *sum += n;
            Some(*sum)
        })
        .collect()
}

/// Today's date (UTC), `2026-11-26`, as the format crate writes times.
fn today() -> String {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64);
    let mut iso = pi_session_format::date::to_iso_string(now_ms);
    iso.truncate(10);
    iso
}

fn render() -> Result<String, String> {
    let root = root();
    let started = Instant::now();
    build(&root)?;
    let elapsed = || format!("{:.0} s", started.elapsed().as_secs_f64());
    eprintln!("xtask implementations: built ({})", elapsed());
    let implementations = implementations(&root)?;
    let mut readers = Vec::new();
    let mut writers = Vec::new();
    for implementation in &implementations {
        if let Some(command) = &implementation.reader {
            eprintln!(
                "xtask implementations: reader {} ({})",
                implementation.name,
                elapsed()
            );
            let report = report(
                &root,
                &["run", "--corpus", "conformance/cases", "--impl", command],
            )?;
            readers.push((implementation, reader_table(&report)));
        }
        if let Some(command) = &implementation.writer {
            eprintln!(
                "xtask implementations: writer {} ({})",
                implementation.name,
                elapsed()
            );
            let report = report(
                &root,
                &[
                    "writer",
                    "--corpus",
                    "conformance/writers",
                    "--impl",
                    command,
                ],
            )?;
            writers.push((implementation, writer_table(&report)));
        }
    }
    Ok(markdown(&implementations, &readers, &writers))
}

fn markdown(
    implementations: &[Implementation],
    readers: &[(&Implementation, ReaderTable)],
    writers: &[(&Implementation, WriterTable)],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Implementations of the pi session format\n\n\
         What every implementation that can be built or run here does on the conformance \
         corpus, measured by the runner itself (`pi-session conformance run` for readers, \
         `pi-session conformance writer` for writers). Written by `{REGENERATE}`; do not edit.\n\n\
         {DATE_LINE}{}.\n",
        today()
    );
    out.push_str("| implementation | what runs | reader | writer |\n|---|---|---|---|\n");
    for i in implementations {
        let cell = |c: &Option<String>| c.as_ref().map_or("—".into(), |c| format!("`{c}`"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            i.name,
            i.note,
            cell(&i.reader),
            cell(&i.writer)
        );
    }
    out.push_str(
        "\nThe adapters of the crates are glue only (`conformance/adapters/README.md`): what a \
         crate has no code for is answered with exit status 3, *unsupported*, and not scored.\n",
    );
    reader_sections(&mut out, readers);
    writer_sections(&mut out, writers);
    out.push_str(
        "\n## Reproducing\n\n\
         ```sh\n\
         (cd conformance/reference && npm ci && node fetch-pi-1.5.mjs)   # pi, once\n\
         cargo xtask implementations             # builds everything, runs everything, writes this file\n\
         cargo xtask implementations --check     # fails when this file is stale\n\
         ```\n\n\
         One implementation, by hand (after a `cargo xtask implementations`, which builds the \
         adapters into `target/adapters/`), from the repository's root:\n\n\
         ```sh\n\
         target/debug/pi-session conformance run --corpus conformance/cases --impl 'COMMAND'\n\
         target/debug/pi-session conformance writer --corpus conformance/writers --impl 'COMMAND'\n\
         ```\n",
    );
    out
}

fn reader_sections(out: &mut String, readers: &[(&Implementation, ReaderTable)]) {
    let Some((_, first)) = readers.first() else {
        return;
    };
    let _ = writeln!(
        out,
        "\n## Readers\n\n\
         The corpus `conformance/cases` ({} cases; `divergence/` left out: those are \
         pi-session's own choices). Operations passed at each level, of those the \
         implementation does: an operation passes at a level when it reaches that level or a \
         stricter one (what `--level` counts). *unsupported*: exit status 3, not scored.\n",
        first.cases
    );
    let header = |out: &mut String, first: &str, levels: &[String]| {
        let _ = writeln!(
            out,
            "| {first} | scored | {} | unsupported |\n|---|---:|{}---:|",
            levels.join(" | "),
            "---:|".repeat(levels.len())
        );
    };
    header(out, "implementation", &first.levels);
    for (implementation, table) in readers {
        let mut total = Area {
            reached: vec![0; table.levels.len()],
            ..Area::default()
        };
        for (_, area) in &table.areas {
            total.scored += area.scored;
            total.unsupported += area.unsupported;
            for (t, n) in total.reached.iter_mut().zip(&area.reached) {
                *t += n;
            }
        }
        let cells: Vec<String> = cumulative(&total.reached)
            .into_iter()
            .map(|n| fraction(n, total.scored))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            implementation.name,
            total.scored,
            cells.join(" | "),
            total.unsupported
        );
    }
    for (implementation, table) in readers {
        let _ = writeln!(
            out,
            "\n### {} (reader)\n\n`{}`\n",
            implementation.name,
            implementation.reader.as_deref().unwrap_or_default()
        );
        header(out, "area", &table.levels);
        for (name, area) in &table.areas {
            let cells: Vec<String> = cumulative(&area.reached)
                .into_iter()
                .map(|n| fraction(n, area.scored))
                .collect();
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} |",
                area.scored,
                cells.join(" | "),
                area.unsupported
            );
        }
    }
}

fn writer_sections(out: &mut String, writers: &[(&Implementation, WriterTable)]) {
    let Some((_, first)) = writers.first() else {
        return;
    };
    let names: Vec<String> = first.levels.iter().map(|(n, _)| n.clone()).collect();
    out.push_str(
        "\n## Writers\n\n\
         The corpus `conformance/writers`: each scenario's script run with each pi version it \
         lists (its profile), the file judged at every level on its own",
    );
    let meanings: Vec<String> = first
        .levels
        .iter()
        .filter_map(|(n, m)| m.as_ref().map(|m| format!("**{n}**: {m}")))
        .collect();
    if meanings.is_empty() {
        out.push('.');
    } else {
        let _ = write!(out, " ({})", meanings.join("; "));
        out.push('.');
    }
    out.push_str(
        " Runs passed at each level, of those scored; *unsupported*: the writer does not do an \
         operation of the script (exit status 3), not scored. Runs of a scenario whose script \
         holds JavaScript-only input (a lone surrogate, which no JSON parser but JavaScript's \
         keeps) are listed below but not counted here. † marks a run where pi-session's writer \
         differs from pi on purpose (the scenario's `divergences`), judged here like any other.\n\n",
    );
    let _ = writeln!(
        out,
        "| implementation | scored | {} | unsupported |\n|---|---:|{}---:|",
        names.join(" | "),
        "---:|".repeat(names.len())
    );
    for (implementation, table) in writers {
        let counted: Vec<&Run> = table.runs.iter().filter(|r| !r.javascript_only).collect();
        let scored: Vec<&&Run> = counted.iter().filter(|r| !r.unsupported).collect();
        let cells: Vec<String> = (0..table.levels.len())
            .map(|i| fraction(scored.iter().filter(|r| r.passed[i]).count(), scored.len()))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            implementation.name,
            scored.len(),
            cells.join(" | "),
            counted.len() - scored.len()
        );
    }
    for (implementation, table) in writers {
        let names: Vec<&str> = table.levels.iter().map(|(n, _)| n.as_str()).collect();
        let _ = writeln!(
            out,
            "\n### {} (writer)\n\n`{}`\n\n| scenario | pi | {} |\n|---|---|{}",
            implementation.name,
            implementation.writer.as_deref().unwrap_or_default(),
            names.join(" | "),
            ":---:|".repeat(names.len())
        );
        for run in &table.runs {
            let mut scenario = run.scenario.clone();
            if run.javascript_only {
                scenario.push_str(" (JavaScript-only input)");
            }
            if run.divergence {
                scenario.push_str(" †");
            }
            let cells: Vec<&str> = if run.unsupported {
                std::iter::once("unsupported")
                    .chain(std::iter::repeat_n("", names.len() - 1))
                    .collect()
            } else {
                run.passed
                    .iter()
                    .map(|&p| if p { "✓" } else { "✗" })
                    .collect()
            };
            let _ = writeln!(
                out,
                "| {scenario} | {} | {} |",
                run.profile,
                cells.join(" | ")
            );
        }
    }
}
