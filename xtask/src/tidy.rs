//! `cargo xtask tidy` (and the `tidy` test, run by `cargo test --workspace`): the habits that
//! keep the code easy to change, checked rather than remembered.
//!
//! - every Rust file of the project starts with `//!` docs (after any `#![…]` attributes);
//! - one module-file style: `foo.rs` beside `foo/`, no `mod.rs`, no `#[path]`;
//! - no file over [`LONG_FILE`] lines unless its docs say why, in a line starting with
//!   `//! Long file:`;
//! - `ARCHITECTURE.md` names every crate (a `## ` heading holding its directory, such as
//!   `` `crates/pi-session-json` ``) and, in that crate's section, every module of it (its
//!   path below `src/`, such as `` `session/load.rs` ``; a top-level module may be named
//!   `` `session` ``); every `` `….rs` `` path it names exists;
//! - the library example of the workspace's README is the one of `pi-session-format`'s README,
//!   which the crate's doctests compile;
//! - `ARCHITECTURE.md`'s `deps` block names, for every workspace crate, exactly the workspace
//!   crates it depends on (normal and build dependencies, from `cargo metadata`), each only on
//!   crates listed before it: the map of the dependencies is the code's, and has no circle;
//! - `.ci/run`'s header comment lists the steps it runs: each step's number (`3a`, or `4`
//!   for `4c`) is in the header, each number of the header has a step, and every step says
//!   how many there are (`/6`);
//! - every publishable library crate has its public-API snapshot `api/<crate>.txt`, and every
//!   file there is such a crate's (`public_api.rs`; `cargo xtask public-api --check`, which
//!   needs nightly, checks the contents).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Files longer than this need a reason at their top.
pub(crate) const LONG_FILE: usize = 1000;

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    if !args.is_empty() {
        return Err(format!("unexpected arguments\n{}", crate::USAGE));
    }
    let problems = problems(&crate::root());
    if problems.is_empty() {
        eprintln!("tidy: ok");
        Ok(())
    } else {
        Err(format!("tidy:\n  {}", problems.join("\n  ")))
    }
}

/// Everything untidy in the project at `root`.
pub(crate) fn problems(root: &Path) -> Vec<String> {
    let crates = crate_dirs(root);
    let mut problems = Vec::new();
    for file in rust_files(root, &crates) {
        problems.extend(file_problems(root, &file));
    }
    problems.extend(architecture_problems(root, &crates));
    problems.extend(dependency_problems(root));
    problems.extend(ci_header_problems(root));
    problems.extend(readme_problems(root));
    problems.extend(api_problems(root));
    problems
}

/// A publishable library crate without `api/<crate>.txt`, or a file there without its crate.
fn api_problems(root: &Path) -> Vec<String> {
    match crate::public_api::library_crates(root) {
        Ok(libraries) => {
            let names: Vec<String> = libraries.into_iter().map(|l| l.name).collect();
            crate::public_api::snapshot_problems(&names, &crate::public_api::snapshot_files(root))
        }
        Err(e) => vec![format!("api/: {e}")],
    }
}

/// The `deps` block of ARCHITECTURE.md against `cargo metadata` (see the module docs).
fn dependency_problems(root: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap_or_default();
    let Some(block) = text
        .split_once("```deps\n")
        .and_then(|(_, rest)| rest.split_once("```").map(|(b, _)| b))
    else {
        return vec!["ARCHITECTURE.md: no ```deps block (the workspace's dependency map)".into()];
    };
    let mut claimed: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let Some((name, deps)) = line.split_once(':') else {
            return vec![format!(
                "ARCHITECTURE.md: deps line without a colon: {line}"
            )];
        };
        claimed.push((
            name.trim().to_owned(),
            deps.split_whitespace().map(str::to_owned).collect(),
        ));
    }
    let metadata = match crate::cargo_metadata(root) {
        Ok(metadata) => metadata,
        Err(e) => return vec![e],
    };
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let members: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    let mut actual: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in &packages {
        let name = p["name"].as_str().unwrap_or_default().to_owned();
        let deps = p["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].is_null() || d["kind"] == "build")
            .filter_map(|d| d["name"].as_str())
            .filter(|d| members.contains(*d))
            .map(str::to_owned)
            .collect();
        actual.insert(name, deps);
    }
    let mut problems = Vec::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for (name, deps) in &claimed {
        match actual.get(name) {
            None => problems.push(format!(
                "ARCHITECTURE.md: the deps block names {name}, which is not a workspace crate"
            )),
            Some(real) if real != deps => problems.push(format!(
                "ARCHITECTURE.md: the deps block says {name} depends on {deps:?}; cargo metadata says {real:?}"
            )),
            Some(_) => {}
        }
        for dep in deps.difference(&seen) {
            problems.push(format!(
                "ARCHITECTURE.md: {name} depends on {dep}, which the deps block lists after it (or not at all): dependencies point down the list"
            ));
        }
        seen.insert(name.clone());
    }
    for name in actual.keys().filter(|n| !seen.contains(*n)) {
        problems.push(format!(
            "ARCHITECTURE.md: the deps block does not name the workspace crate {name}"
        ));
    }
    problems
}

/// The first `` ```rust `` block of a Markdown file.
fn rust_example(markdown: &str) -> Option<&str> {
    let start = markdown.find("```rust")?;
    let end = markdown[start + 3..].find("```")? + start + 6;
    Some(&markdown[start..end])
}

fn readme_problems(root: &Path) -> Vec<String> {
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_default();
    let (workspace, format) = (
        read("README.md"),
        read("crates/pi-session-format/README.md"),
    );
    match (rust_example(&workspace), rust_example(&format)) {
        (Some(a), Some(b)) if a == b => Vec::new(),
        (Some(_), Some(_)) => vec![
            "README.md: the library example differs from crates/pi-session-format/README.md's (which is doctested)".into(),
        ],
        _ => vec!["README.md or crates/pi-session-format/README.md has no ```rust example".into()],
    }
}

/// The crate directories: the workspace's, and the fuzz crate.
fn crate_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs.push(root.join("xtask"));
    dirs.push(root.join("fuzz"));
    dirs
}

/// Every `.rs` file of the crates (sources, tests, benches, examples, fuzz targets).
fn rust_files(root: &Path, crates: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in crates {
        for sub in ["src", "tests", "benches", "examples", "fuzz_targets"] {
            collect_rs(&dir.join(sub), &mut files);
        }
    }
    files.sort();
    files.retain(|f| !f.starts_with(root.join("target")));
    files
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn file_problems(root: &Path, file: &Path) -> Vec<String> {
    let name = relative(root, file);
    let Ok(text) = std::fs::read_to_string(file) else {
        return vec![format!("{name}: not readable as UTF-8")];
    };
    let mut problems = Vec::new();
    let first = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with("#!["));
    if !first.is_some_and(|l| l.starts_with("//!")) {
        problems.push(format!("{name}: does not start with `//!` docs"));
    }
    if file.file_name().is_some_and(|n| n == "mod.rs") {
        problems.push(format!(
            "{name}: a mod.rs file (use `foo.rs` beside `foo/`)"
        ));
    }
    if text.lines().any(|l| l.trim_start().starts_with("#[path")) {
        problems.push(format!(
            "{name}: a #[path] attribute (name the file after its module)"
        ));
    }
    let lines = text.lines().count();
    if lines > LONG_FILE && !text.lines().any(|l| l.starts_with("//! Long file:")) {
        problems.push(format!(
            "{name}: {lines} lines, over {LONG_FILE}, and no `//! Long file:` line saying why"
        ));
    }
    problems
}

/// The `` `…` `` spans of `text`.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The `## ` sections of ARCHITECTURE.md: heading → body (the heading line included).
fn sections(text: &str) -> Vec<String> {
    let mut sections = vec![String::new()];
    for line in text.lines() {
        if line.starts_with("## ") {
            sections.push(String::new());
        }
        let last = sections.last_mut().expect("never empty");
        last.push_str(line);
        last.push('\n');
    }
    sections
}

fn architecture_problems(root: &Path, crates: &[PathBuf]) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join("ARCHITECTURE.md")) else {
        return vec!["ARCHITECTURE.md is missing".into()];
    };
    let mut problems = Vec::new();
    let sections = sections(&text);
    // The section of each crate: the one whose heading names its directory.
    let mut section_of: BTreeMap<String, &str> = BTreeMap::new();
    for dir in crates {
        let name = relative(root, dir);
        let heading = |s: &&String| {
            s.lines()
                .next()
                .is_some_and(|h| h.starts_with("## ") && backticked(h).any(|b| b == name))
        };
        match sections.iter().find(heading) {
            Some(section) => {
                section_of.insert(name, section);
            }
            None => problems.push(format!(
                "ARCHITECTURE.md: no `## ` heading names the crate `{name}`"
            )),
        }
    }
    for dir in crates {
        let name = relative(root, dir);
        let Some(section) = section_of.get(&name) else {
            continue;
        };
        let named: BTreeSet<&str> = backticked(section).collect();
        let mut modules = Vec::new();
        collect_rs(&dir.join("src"), &mut modules);
        collect_rs(&dir.join("fuzz_targets"), &mut modules);
        for module in modules {
            let base = if module.starts_with(dir.join("src")) {
                dir.join("src")
            } else {
                dir.to_path_buf()
            };
            let path = relative(&base, &module);
            if matches!(path.as_str(), "lib.rs" | "main.rs") || path.ends_with("/tests.rs") {
                continue;
            }
            let top = path.strip_suffix(".rs").filter(|p| !p.contains('/'));
            if !named.contains(path.as_str()) && !top.is_some_and(|m| named.contains(m)) {
                problems.push(format!(
                    "ARCHITECTURE.md: the section of `{name}` does not name its module `{path}`"
                ));
            }
        }
        // Every file the section names exists in the crate (or the workspace).
        for file in named
            .iter()
            .filter(|b| b.ends_with(".rs") && !b.contains(' '))
        {
            let exists = [dir.join("src").join(file), dir.join(file), root.join(file)]
                .iter()
                .any(|p| p.is_file());
            if !exists {
                problems.push(format!(
                    "ARCHITECTURE.md: the section of `{name}` names `{file}`, which does not exist"
                ));
            }
        }
    }
    // Outside the crates' sections, named files and crate directories exist too.
    for section in sections
        .iter()
        .filter(|s| !section_of.values().any(|c| c == s))
    {
        for named in backticked(section).filter(|b| !b.contains(' ')) {
            let is_path = named.ends_with(".rs") || named.starts_with("crates/");
            let exists = root.join(named.trim_end_matches('/')).exists()
                || crates.iter().any(|c| c.join("src").join(named).is_file());
            if is_path && !exists {
                problems.push(format!(
                    "ARCHITECTURE.md names `{named}`, which does not exist"
                ));
            }
        }
    }
    problems
}

fn ci_header_problems(root: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(root.join(".ci/run")) else {
        return vec![".ci/run is missing".into()];
    };
    // `#   3a. …` lines of the leading comment.
    let header: BTreeSet<String> = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| {
            let number = l.trim_start_matches('#').trim_start().split_once(". ")?.0;
            let valid = number.starts_with(|c: char| c.is_ascii_digit())
                && number.chars().all(|c| c.is_ascii_alphanumeric());
            valid.then(|| number.to_string())
        })
        .collect();
    // `step "4c/6 …"` calls.
    let steps: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("step \""))
        .filter_map(|rest| {
            let (number, total) = rest.split_once(' ')?.0.split_once('/')?;
            Some((number.to_string(), total.to_string()))
        })
        .collect();
    let mut problems = Vec::new();
    if steps.is_empty() {
        problems.push(".ci/run: no `step \"N/M …\"` calls".into());
    }
    let majors = |n: &str| {
        n.trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .to_string()
    };
    let total = header
        .iter()
        .filter_map(|n| majors(n).parse::<u32>().ok())
        .max()
        .unwrap_or(0)
        .to_string();
    for (number, step_total) in &steps {
        if !header.contains(number) && !header.contains(&majors(number)) {
            problems.push(format!(
                ".ci/run: step {number} is not described in the header comment"
            ));
        }
        if *step_total != total {
            problems.push(format!(
                ".ci/run: step {number}/{step_total}, but the header describes {total} steps"
            ));
        }
    }
    for number in &header {
        let run = steps
            .iter()
            .any(|(n, _)| n == number || majors(n) == *number);
        if !run {
            problems.push(format!(
                ".ci/run: the header describes step {number}, which no `step` runs"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_is_tidy() {
        let problems = problems(&crate::root());
        assert!(
            problems.is_empty(),
            "untidy (see xtask/src/tidy.rs):\n  {}",
            problems.join("\n  ")
        );
    }

    #[test]
    fn the_checks_find_what_they_look_for() {
        let dir = std::env::temp_dir().join(format!("xtask-tidy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("crates/a/src/m")).unwrap();
        std::fs::write(dir.join("crates/a/Cargo.toml"), "").unwrap();
        std::fs::write(dir.join("crates/a/src/lib.rs"), "//! A.\nmod m;\n").unwrap();
        std::fs::write(
            dir.join("crates/a/src/m/mod.rs"),
            "#[path = \"x.rs\"]\nmod x;\n",
        )
        .unwrap();
        let long = "//! Long.\n".to_string() + &"\n".repeat(LONG_FILE);
        std::fs::write(dir.join("crates/a/src/long.rs"), long).unwrap();
        std::fs::write(
            dir.join("ARCHITECTURE.md"),
            "# A\n\n## `crates/a`\n\n`long.rs`, `gone.rs`\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.join(".ci")).unwrap();
        std::fs::write(
            dir.join(".ci/run"),
            "#!/bin/sh\n#   1. tests\n#   2. fmt\nstep \"1/2 t\" true\nstep \"3/2 x\" true\n",
        )
        .unwrap();
        let found = problems(&dir).join("\n");
        let _ = std::fs::remove_dir_all(&dir);
        for expected in [
            "crates/a/src/m/mod.rs: does not start with `//!` docs",
            "crates/a/src/m/mod.rs: a mod.rs file",
            "crates/a/src/m/mod.rs: a #[path] attribute",
            "crates/a/src/long.rs: 1001 lines, over 1000",
            "no `## ` heading names the crate `xtask`",
            "the section of `crates/a` does not name its module `m/mod.rs`",
            "the section of `crates/a` names `gone.rs`, which does not exist",
            ".ci/run: step 3 is not described in the header comment",
            ".ci/run: the header describes step 2, which no `step` runs",
        ] {
            assert!(found.contains(expected), "{expected:?} not in:\n{found}");
        }
        assert!(!found.contains("long.rs`, which"), "{found}");
    }
}
