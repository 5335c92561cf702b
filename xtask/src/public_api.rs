//! `cargo xtask public-api [--check]`: the public API of every published library crate, one
//! item per line, in `api/<crate>.txt` (see `api/README.md`).
//!
//! - `cargo xtask public-api` writes every `api/<crate>.txt` (and removes stale ones);
//! - `cargo xtask public-api --check` writes nothing and fails, naming each crate whose file
//!   is stale or missing and showing the lines added and removed, when the files are not what
//!   the code has. A change of the API is then either a mistake, or reviewed and blessed by
//!   running `cargo xtask public-api` and committing the diff of `api/`.
//!
//! The crates are [`library_crates`]: every workspace package that can be published (no
//! `publish = false`) and has a library target; `cargo xtask tidy` checks that each has its
//! file ([`snapshot_problems`]), so a new crate cannot skip the snapshot.
//!
//! How: one `cargo doc --no-deps --lib --all-features -p … ` of every library crate, with
//! `RUSTDOCFLAGS="-Z unstable-options --output-format json"` (all features: what docs.rs
//! documents, `schema` and `arbitrary` included), writes `TARGET/doc/<crate>.json` for each; one
//! command, so that the dependencies are checked once for all the crates and their checks are
//! those of `cargo doc` (one `cargo rustdoc` per crate, as the `rustdoc-json` crate runs it,
//! resolved each crate's features on its own and checked the dependencies again for each:
//! 2m55s in CI for seven crates). The
//! [`public-api`](https://crates.io/crates/public-api) crate renders the JSON as
//! `cargo public-api -s` prints it: every item, sorted, with blanket impls left out (they come
//! from `std`, such as `impl<T> From<T> for T`, and change with the toolchain, not with our
//! code), and so are the impls of the auto traits only nightly can name
//! ([`UNSTABLE_AUTO_TRAITS`]). The other auto-trait impls stay: a type that stops being `Send`
//! breaks its users.
//!
//! rustdoc JSON is unstable: the toolchain is `$PUBLIC_API_TOOLCHAIN` when set, else nightly
//! when rustup has it, else the active toolchain with `RUSTC_BOOTSTRAP=1` (as `.ci/run` builds
//! the fuzzers). `RUSTC_BOOTSTRAP` is set for rustdoc alone, not for cargo: xtask is cargo's
//! `RUSTDOC` for that command ([`rustdoc_unstable`]). Set for cargo, every build script that
//! asks for it (`proc-macro2`'s does) runs again, everything above it is checked again, and the
//! next `cargo xtask` rebuilds xtask itself: a minute and a half each way. `public-api` reads one format version ([`FORMAT_VERSION`], that of the
//! `rustdoc-types` it is built on, which xtask also depends on: the test
//! `one_rustdoc_types_in_the_lockfile` keeps them the same): JSON of another version is refused
//! with a message rather than read wrongly. public-api 0.52.1 reads version 57, what the
//! nightlies of 2026-05 and stable 1.95 write (0.52.2 reads 59). Both give the same files.

use crate::root;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The rustdoc JSON format version that `public-api` reads.
const FORMAT_VERSION: u32 = rustdoc_types::FORMAT_VERSION;

/// Where the snapshots live, below the workspace root.
const API_DIR: &str = "api";

const REGENERATE: &str = "cargo xtask public-api";

pub(crate) fn main(args: &[&str]) -> Result<(), String> {
    match args {
        [] => write(),
        ["--check"] => check(),
        _ => Err(format!("unknown public-api arguments\n{}", crate::USAGE)),
    }
}

/// A library crate whose API is snapshotted.
pub(crate) struct Library {
    /// The package name (`pi-session-json`), which names its file (`api/pi-session-json.txt`).
    pub(crate) name: String,
}

/// The workspace packages that can be published and have a library target, by name, from
/// `cargo metadata` at `root`.
pub(crate) fn library_crates(root: &Path) -> Result<Vec<Library>, String> {
    let metadata = crate::cargo_metadata(root)?;
    Ok(libraries_of(&metadata))
}

/// [`library_crates`] of parsed `cargo metadata` output. `publish` is `null` for a package
/// that may be published anywhere and a list of registries otherwise (`[]` for
/// `publish = false`).
fn libraries_of(metadata: &Value) -> Vec<Library> {
    let mut out: Vec<Library> = metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["publish"].as_array().is_none_or(|r| !r.is_empty()))
        .filter(|p| {
            p["targets"].as_array().into_iter().flatten().any(|t| {
                t["kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k == "lib" || k == "rlib")
            })
        })
        .filter_map(|p| {
            Some(Library {
                name: p["name"].as_str()?.to_owned(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The file of the crate `name`, relative to the root.
fn file_name(name: &str) -> String {
    format!("{API_DIR}/{name}.txt")
}

/// What `cargo xtask tidy` says about the snapshot files: a library crate without its file,
/// a file without its crate. `crates` are the names of [`library_crates`], `files` the names
/// of the `.txt` files in `api/`.
pub(crate) fn snapshot_problems(crates: &[String], files: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for name in crates {
        if !files.iter().any(|f| *f == format!("{name}.txt")) {
            problems.push(format!(
                "{}: missing; {name} is a publishable library crate, its public API is snapshotted \
                 (run `{REGENERATE}` and commit the file)",
                file_name(name)
            ));
        }
    }
    for file in files {
        let name = file.strip_suffix(".txt").unwrap_or(file);
        if !crates.iter().any(|c| c == name) {
            problems.push(format!(
                "{API_DIR}/{file}: no publishable library crate {name} (run `{REGENERATE}`, which removes it)"
            ));
        }
    }
    problems
}

/// The `.txt` files of `api/` under `root`, by name, sorted.
pub(crate) fn snapshot_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root.join(API_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    files.sort();
    files
}

/// The environment variable that names the rustup toolchain for rustdoc JSON (such as
/// `nightly-2026-05-19`, when the current nightly writes a format [`FORMAT_VERSION`] is not).
const TOOLCHAIN_VAR: &str = "PUBLIC_API_TOOLCHAIN";

/// The toolchain for rustdoc JSON: [`TOOLCHAIN_VAR`] when set, else `nightly` when rustup has
/// it, else `None` (the active toolchain; `RUSTC_BOOTSTRAP=1` is set in every case).
fn toolchain() -> Option<String> {
    if let Some(named) = std::env::var(TOOLCHAIN_VAR).ok().filter(|t| !t.is_empty()) {
        return Some(named);
    }
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    nightly.then(|| "nightly".to_owned())
}

/// The rustdoc JSON of every crate of `libraries`, by name, from one `cargo doc` (see the
/// module's documentation) into `TARGET_DIRECTORY/doc`, with `toolchain` (`rustup run TOOLCHAIN cargo`) or the cargo that
/// runs xtask.
fn rustdoc_json(
    root: &Path,
    target_directory: &Path,
    libraries: &[Library],
    toolchain: Option<&str>,
) -> Result<BTreeMap<String, PathBuf>, String> {
    let mut command = match toolchain {
        Some(toolchain) => {
            let mut rustup = Command::new("rustup");
            rustup.args(["run", toolchain, "cargo"]);
            rustup
        }
        None => Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())),
    };
    let xtask =
        std::env::current_exe().map_err(|e| format!("cannot find xtask's own executable: {e}"))?;
    command
        .current_dir(root)
        .args(["doc", "--quiet", "--no-deps", "--lib", "--all-features"])
        .args(libraries.iter().flat_map(|l| ["-p", l.name.as_str()]))
        .env("RUSTDOCFLAGS", "-Z unstable-options --output-format json")
        .env("RUSTDOC", xtask)
        // The rustup proxy, which runs the toolchain's rustdoc (`rustup run` chose it).
        .env(RUSTDOC_VAR, "rustdoc");
    let status = command
        .status()
        .map_err(|e| format!("cannot run cargo doc for rustdoc JSON: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo doc for rustdoc JSON failed ({status}); its errors are above"
        ));
    }
    let doc = target_directory.join("doc");
    Ok(libraries
        .iter()
        .map(|l| {
            (
                l.name.clone(),
                doc.join(format!("{}.json", l.name.replace('-', "_"))),
            )
        })
        .collect())
}

/// The environment variable that makes xtask a `RUSTDOC` wrapper: it holds the rustdoc to run.
pub(crate) const RUSTDOC_VAR: &str = "XTASK_PUBLIC_API_RUSTDOC";

/// xtask as cargo's `RUSTDOC`: runs `rustdoc` with xtask's arguments and `RUSTC_BOOTSTRAP=1`
/// (`-Z unstable-options` on a toolchain other than nightly; nightly ignores it), its status
/// xtask's.
pub(crate) fn rustdoc_unstable(rustdoc: &std::ffi::OsStr) -> std::process::ExitCode {
    let status = Command::new(rustdoc)
        .args(std::env::args_os().skip(1))
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove(RUSTDOC_VAR)
        .status();
    match status {
        Ok(status) => std::process::ExitCode::from(
            status
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .unwrap_or(1),
        ),
        Err(e) => {
            eprintln!("xtask: cannot run {}: {e}", rustdoc.to_string_lossy());
            std::process::ExitCode::FAILURE
        }
    }
}

/// The public API of the crate `name` from its rustdoc JSON `json`, as its file holds it.
fn render(name: &str, json: &Path) -> Result<String, String> {
    let version = format_version(json)?;
    if version != FORMAT_VERSION {
        return Err(format!(
            "{name}: {} is rustdoc JSON format {version}; the public-api crate reads format \
             {FORMAT_VERSION}: use a toolchain that writes {FORMAT_VERSION}, or update public-api \
             and rustdoc-types together in Cargo.toml to a pair that reads {version}",
            json.display()
        ));
    }
    let api = public_api::Builder::from_rustdoc_json(json)
        .omit_blanket_impls(true)
        .build()
        .map_err(|e| format!("{name}: public-api: {e}"))?;
    let mut text = String::new();
    for item in api.items().map(ToString::to_string) {
        if !is_unstable_auto_trait_impl(&item) {
            text.push_str(&item);
            text.push('\n');
        }
    }
    Ok(text)
}

/// Auto traits that only nightly can name, whose impls the snapshot leaves out: no user of a
/// stable toolchain can rely on them, and the set changes with the nightly (`UnsafeUnpin` is
/// recent).
const UNSTABLE_AUTO_TRAITS: [&str; 2] = ["core::marker::Freeze", "core::marker::UnsafeUnpin"];

/// Whether `item` is an impl (or negative impl) of one of [`UNSTABLE_AUTO_TRAITS`].
fn is_unstable_auto_trait_impl(item: &str) -> bool {
    item.starts_with("impl")
        && UNSTABLE_AUTO_TRAITS
            .iter()
            .any(|t| item.contains(&format!(" {t} for ")) || item.contains(&format!(" !{t} for ")))
}

/// The `format_version` of a rustdoc JSON file, read before the rest is read as types (which
/// is what fails, or worse, when the version is not the expected one).
fn format_version(json: &Path) -> Result<u32, String> {
    let text = std::fs::read(json).map_err(|e| format!("{}: {e}", json.display()))?;
    let value: Value =
        serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", json.display()))?;
    value["format_version"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("{}: no format_version", json.display()))
}

/// Every file of `api/`: `pi-session-json.txt` → its contents.
fn generate() -> Result<BTreeMap<String, String>, String> {
    let root = root();
    let toolchain = toolchain();
    match &toolchain {
        Some(t) => eprintln!("public-api: rustdoc JSON with the {t} toolchain"),
        None => eprintln!(
            "public-api: no nightly toolchain in rustup: rustdoc JSON with the active one and RUSTC_BOOTSTRAP=1"
        ),
    }
    let metadata = crate::cargo_metadata(&root)?;
    let libraries = libraries_of(&metadata);
    let target_directory = metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or("cargo metadata: no target_directory")?;
    let names: Vec<&str> = libraries.iter().map(|l| l.name.as_str()).collect();
    eprintln!("public-api: {}", names.join(", "));
    let mut files = BTreeMap::new();
    for (name, json) in rustdoc_json(&root, &target_directory, &libraries, toolchain.as_deref())? {
        files.insert(format!("{name}.txt"), render(&name, &json)?);
    }
    Ok(files)
}

fn write() -> Result<(), String> {
    let files = generate()?;
    let dir = root().join(API_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for stale in snapshot_files(&root()) {
        if !files.contains_key(&stale) {
            let path = dir.join(&stale);
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!("public-api: removed {API_DIR}/{stale}");
        }
    }
    for (name, text) in &files {
        let path = dir.join(name);
        let lines = text.lines().count();
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!("public-api: wrote {API_DIR}/{name} ({lines} items)");
    }
    Ok(())
}

fn check() -> Result<(), String> {
    let files = generate()?;
    let root = root();
    let mut report = Vec::new();
    for (name, text) in &files {
        let path = root.join(API_DIR).join(name);
        let old = std::fs::read_to_string(&path).ok();
        match old {
            None => report.push(format!(
                "{API_DIR}/{name}: missing ({} items)",
                text.lines().count()
            )),
            Some(old) if old != *text => {
                report.push(format!(
                    "{API_DIR}/{name}: the public API of {} changed:\n{}",
                    name.trim_end_matches(".txt"),
                    changed_lines(&old, text)
                ));
            }
            Some(_) => {}
        }
    }
    for stale in snapshot_files(&root) {
        if !files.contains_key(&stale) {
            report.push(format!(
                "{API_DIR}/{stale}: no publishable library crate has this name"
            ));
        }
    }
    if report.is_empty() {
        eprintln!("public-api: api/ is up to date ({} crates)", files.len());
        Ok(())
    } else {
        Err(format!(
            "{}\n\nThe public API differs from api/. If the change is meant, run `{REGENERATE}` \
             and commit api/ with it, so that the diff is reviewed (api/README.md).",
            report.join("\n")
        ))
    }
}

/// The lines removed from `old` (`- `) and added in `new` (`+ `), in order. The files are
/// sorted lists of items, so context lines would say little.
fn changed_lines(old: &str, new: &str) -> String {
    use similar::{ChangeTag, TextDiff};
    let mut out = String::new();
    for change in TextDiff::from_lines(old, new).iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Delete => "-",
            ChangeTag::Insert => "+",
            ChangeTag::Equal => continue,
        };
        out.push_str(&format!("  {sign} {}", change.value()));
        if !change.value().ends_with('\n') {
            out.push('\n');
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_are_signed() {
        let old = "pub fn a()\npub fn b()\npub fn c()\n";
        let new = "pub fn a()\npub fn c()\npub fn d()\n";
        assert_eq!(changed_lines(old, new), "  - pub fn b()\n  + pub fn d()");
        assert_eq!(changed_lines(old, old), "");
    }

    #[test]
    fn impls_of_unstable_auto_traits_are_left_out() {
        for item in [
            "impl core::marker::Freeze for a::B",
            "impl !core::marker::Freeze for a::B",
            "impl<T> core::marker::UnsafeUnpin for a::B<T> where T: core::marker::UnsafeUnpin",
        ] {
            assert!(is_unstable_auto_trait_impl(item), "{item}");
        }
        for item in [
            "impl core::marker::Send for a::B",
            "impl<T> core::marker::Send for a::B<T> where T: core::marker::Freeze",
            "pub fn a::freeze(core::marker::Freeze)",
        ] {
            assert!(!is_unstable_auto_trait_impl(item), "{item}");
        }
    }

    #[test]
    fn libraries_are_the_publishable_crates_with_a_lib_target() {
        let metadata = serde_json::json!({"packages": [
            {"name": "b-lib", "publish": null, "manifest_path": "/w/b/Cargo.toml",
             "targets": [{"kind": ["lib"]}, {"kind": ["test"]}]},
            {"name": "a-lib", "publish": ["crates-io"], "manifest_path": "/w/a/Cargo.toml",
             "targets": [{"kind": ["rlib"]}]},
            {"name": "bin-only", "publish": null, "manifest_path": "/w/c/Cargo.toml",
             "targets": [{"kind": ["bin"]}]},
            {"name": "private", "publish": [], "manifest_path": "/w/d/Cargo.toml",
             "targets": [{"kind": ["lib"]}]},
        ]});
        let names: Vec<String> = libraries_of(&metadata)
            .into_iter()
            .map(|l| l.name)
            .collect();
        assert_eq!(names, ["a-lib", "b-lib"]);
    }

    #[test]
    fn every_library_has_its_file_and_every_file_its_library() {
        let crates = ["a".to_owned(), "b".to_owned()];
        assert!(snapshot_problems(&crates, &["a.txt".into(), "b.txt".into()]).is_empty());
        let problems = snapshot_problems(&crates, &["a.txt".into(), "gone.txt".into()]).join("\n");
        assert!(problems.contains("api/b.txt: missing"), "{problems}");
        assert!(
            problems.contains("api/gone.txt: no publishable library crate gone"),
            "{problems}"
        );
    }

    /// [`FORMAT_VERSION`] is the version `public-api` reads only if both use one `rustdoc-types`.
    #[test]
    fn one_rustdoc_types_in_the_lockfile() {
        let lock = std::fs::read_to_string(root().join("Cargo.lock")).unwrap();
        let versions = lock.matches("name = \"rustdoc-types\"\n").count();
        assert_eq!(
            versions, 1,
            "Cargo.lock has {versions} rustdoc-types: bump it with public-api (root Cargo.toml)"
        );
    }

    /// The workspace's own crates: the binary `pi-session` and the `publish = false` ones have
    /// no snapshot.
    #[test]
    fn the_workspace_libraries() {
        let names: Vec<String> = library_crates(&root())
            .unwrap()
            .into_iter()
            .map(|l| l.name)
            .collect();
        assert!(names.contains(&"pi-session-json".to_owned()), "{names:?}");
        for not in ["pi-session", "pi-session-bench", "xtask"] {
            assert!(!names.contains(&not.to_owned()), "{names:?}");
        }
    }
}
