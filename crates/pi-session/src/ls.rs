//! `pi-session ls`: pi's session list (`SessionManager.list` / `listAll`, what `/resume`
//! shows): each session's name or first message, when it was last active, its message count,
//! size and working directory, newest first, in pi's order (`info::list`).
//!
//! Files are read on every core; a file pi would leave out of its list (not a session, or one
//! on which its listing throws) is left out here too, and counted in the footer. A file that
//! cannot be read (no permission, a link that loops or leads nowhere) is named on standard
//! error with the reason, as `stats` does, and the exit status is 1.
//!
//! `--dialect omp` lists as omp 18.3.4 does (`SessionManager.list`/`listAll`): its store
//! (`pi_session_fs::omp_store`), the files its glob finds (regular files, no hidden names),
//! its entries (`omp::info`) and its order with the pinned sessions first (`omp::list`).
//! omp moves sessions about when it lists (old project directories merged into the new one,
//! orphaned `*.bak` backups renamed back); this lists them where they are and moves nothing.

mod cache;

use crate::display;
use crate::input::Input;
use cache::{Cache, Stamp};
use clap::{Args, ValueEnum};
use pi_session_format::info::{self, list};
use pi_session_format::json::{self, JsValue};
use pi_session_format::{Dialect, PiVersion, date, omp};
use pi_session_fs::omp_store::{OmpEnv, OmpStore};
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `pi-session ls`.
#[derive(Args)]
pub(crate) struct LsArgs {
    /// A directory of session files (pi's `list(cwd, DIR)`); with --all, the sessions root
    /// whose project directories are listed. Default: the current directory's sessions, in
    /// pi's session directory (`$PI_CODING_AGENT_DIR/sessions` or `~/.pi/agent/sessions`).
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Every project's sessions (pi's `listAll`).
    #[arg(long, conflicts_with = "cwd")]
    all: bool,
    /// The sessions of this working directory (pi's `list(cwd)`).
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    cwd: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Whose listing rules to follow.
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: PiVersion,
    /// `omp`: list as oh-my-pi 18.3.4 does: its session store (`~/.omp/agent/sessions`, or
    /// where omp's environment puts it), its entries and order, pinned sessions first.
    #[arg(long, value_name = "DIALECT", default_value = "pi")]
    dialect: Dialect,
    /// Read every file, and neither read nor write the listing cache
    /// (`$XDG_CACHE_HOME/pi-session/`, which lets a listing read only the files that changed).
    #[arg(long)]
    no_cache: bool,
}

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// One line per session.
    Table,
    /// A JSON array of pi's listing entries (without `allMessagesText`), with `path` and
    /// `size`.
    Json,
}

/// Whose list this is.
#[derive(Clone, Copy)]
enum Rules {
    Pi(PiVersion),
    Omp,
}

impl Rules {
    fn reader(self) -> &'static str {
        match self {
            Rules::Pi(_) => "pi",
            Rules::Omp => "omp",
        }
    }

    /// The cache's name for these rules.
    fn cache_key(self) -> &'static str {
        match self {
            Rules::Pi(pi) => pi.release(),
            Rules::Omp => "omp-18.3.4",
        }
    }

    /// Whether `path` (found in a listed directory) is a session file these rules list:
    /// pi reads `*.jsonl` names and follows links; omp's glob takes regular files only, and
    /// no hidden names ([`OmpStore::lists_session_file`]).
    fn lists(self, path: &Path) -> Option<std::io::Result<bool>> {
        match self {
            Rules::Pi(_) => {
                path.extension()
                    .is_some_and(|e| e == "jsonl")
                    .then_some(())?;
                Some(std::fs::metadata(path).map(|m| m.is_file()))
            }
            Rules::Omp => OmpStore::lists_session_file(path),
        }
    }

    /// Whether the entry `path` of the sessions root is a project directory (`--all`): any
    /// directory for pi (links followed); omp's `*/*.jsonl` takes real, not hidden ones.
    fn project(self, path: &Path) -> bool {
        match self {
            Rules::Pi(_) => path.is_dir(),
            Rules::Omp => OmpStore::lists_project_dir(path),
        }
    }

    /// A file's listing entry: pi's `buildSessionInfo` without the texts, or omp's
    /// `scanSessionFile`.
    fn entry(self, bytes: &[u8], mtime_ms: f64) -> Vec<u8> {
        match self {
            Rules::Pi(pi) => info::listed_entry_json(bytes, mtime_ms, pi, Dialect::Pi),
            Rules::Omp => {
                info::listed_entry_json(bytes, mtime_ms, PiVersion::default(), Dialect::Omp)
            }
        }
    }
}

/// One session found.
struct Found {
    path: PathBuf,
    info: JsValue,
    size: u64,
    /// The project directory's name (`--all`).
    dir: String,
    mtime_ms: f64,
}

/// The `*.jsonl` names directly in `dir`, as pi's `readdir` finds them (regular files and
/// links to them; directories, FIFOs and the like are not session files, and pi drops them),
/// and those that cannot be read (a link that loops or leads nowhere, a directory that cannot
/// be read), each with the reason.
fn session_files(dir: &Path, rules: Rules) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // A project without a sessions directory has no sessions (`ls --cwd`).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), Vec::new()),
        Err(e) => return (Vec::new(), vec![(dir.to_path_buf(), e.to_string())]),
    };
    let (mut files, mut unreadable) = (Vec::new(), Vec::new());
    for entry in entries {
        let path = match entry {
            Ok(entry) => entry.path(),
            Err(e) => {
                unreadable.push((dir.to_path_buf(), e.to_string()));
                continue;
            }
        };
        match rules.lists(&path) {
            None | Some(Ok(false)) => {}
            Some(Ok(true)) => files.push(path),
            // Gone since it was listed: nothing to say.
            Some(Err(_)) if std::fs::symlink_metadata(&path).is_err() => {}
            Some(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                unreadable.push((path, "a symbolic link to nothing".to_owned()));
            }
            Some(Err(e)) => unreadable.push((path, e.to_string())),
        }
    }
    files.sort();
    unreadable.sort();
    (files, unreadable)
}

/// A file's listing entry: from the cache when the file is unchanged, else read. `Ok(None)`:
/// not there now (gone, changed while read): left out, and not cached; `Err`: it cannot be
/// opened or read (the reason).
fn read(path: &Path, dir: &str, rules: Rules, cache: &Cache) -> Result<Option<Known>, String> {
    let Some((stamp, mtime)) = Stamp::of(path) else {
        return Ok(None);
    };
    if let Some(text) = cache.get(path, &stamp) {
        let entry = text.and_then(|t| found(path, dir, t, stamp.size(), mtime));
        let text = text.map(str::to_owned);
        return Ok(Some(Known { entry, stamp, text }));
    }
    let input = match Input::open(path) {
        Ok(input) => input,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let text = rules.entry(input.bytes(), input.modified_ms());
    // A file that changed while it was read is left out, and not cached.
    if input.verify().is_err() || input.bytes().len() as u64 != stamp.size() {
        return Ok(None);
    }
    let text = String::from_utf8(text).ok().filter(|t| t != "null");
    let entry = text
        .as_deref()
        .and_then(|t| found(path, dir, t, stamp.size(), input.modified_ms()));
    Ok(Some(Known { entry, stamp, text }))
}

/// What [`read`] knows of a file: the entry (from the cache or read now), the file's stamp
/// and the entry's text (`None`: pi leaves the file out), to be kept in the cache.
struct Known {
    entry: Option<Found>,
    stamp: Stamp,
    text: Option<String>,
}

/// The listing entry `text` (pi's JSON, without `allMessagesText`) of `path`.
fn found(path: &Path, dir: &str, text: &str, size: u64, mtime: f64) -> Option<Found> {
    let mut info = json::parse(text).ok()?;
    if matches!(info, JsValue::Null) {
        return None;
    }
    if let Some(object) = info.as_object_mut() {
        object.remove("allMessagesText");
    }
    Some(Found {
        size,
        dir: dir.to_owned(),
        mtime_ms: mtime,
        path: path.to_path_buf(),
        info,
    })
}

/// `found` in the list's order: pi's ([`list::order`]), or omp's with the pinned sessions of
/// `pins` first ([`omp::list::order`]).
fn sorted(found: Vec<Found>, rules: Rules, across: bool, pins: &HashSet<String>) -> Vec<Found> {
    let modified = |f: &Found| date::date_parse(f.info.get("modified"));
    let order = match rules {
        Rules::Pi(pi) => {
            let listed: Vec<list::Listed> = found
                .iter()
                .map(|f| list::Listed {
                    dir: f.dir.clone(),
                    name: f
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    modified_ms: modified(f),
                    mtime_ms: f.mtime_ms,
                })
                .collect();
            list::order(&listed, pi, across)
        }
        Rules::Omp => {
            let listed: Vec<omp::list::Listed> = found
                .iter()
                .map(|f| omp::list::Listed {
                    path: f.path.to_string_lossy().into_owned(),
                    id: f
                        .info
                        .get("id")
                        .and_then(JsValue::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    modified_ms: modified(f),
                    created_ms: date::date_parse(f.info.get("created")),
                })
                .collect();
            omp::list::order(&listed, pins)
        }
    };
    let mut slots: Vec<Option<Found>> = found.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// The directories to list, each with its name for `--all`'s order, or the exit code after
/// saying why there are none.
fn directories(
    args: &LsArgs,
    rules: Rules,
    omp_store: &Result<OmpStore, String>,
) -> Result<Vec<(String, PathBuf)>, ExitCode> {
    let usage = |message: String| {
        eprintln!("pi-session: {message}");
        ExitCode::from(2)
    };
    let omp_store = || omp_store.as_ref().map_err(|e| usage(e.clone()));
    if args.all {
        let root = match (&args.dir, rules) {
            (Some(dir), _) => dir.clone(),
            (None, Rules::Pi(_)) => {
                pi_session_fs::discover::sessions_dir().map_err(|e| usage(e.to_string()))?
            }
            (None, Rules::Omp) => omp_store()?.sessions_dir(),
        };
        let Ok(entries) = std::fs::read_dir(&root) else {
            eprintln!(
                "pi-session: error: {}: cannot read the sessions directory",
                display::path(&root)
            );
            return Err(ExitCode::FAILURE);
        };
        return Ok(entries
            .flatten()
            .filter(|e| rules.project(&e.path()))
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect());
    }
    if let Some(dir) = &args.dir {
        if !dir.is_dir() {
            eprintln!("pi-session: error: {}: not a directory", display::path(dir));
            return Err(ExitCode::FAILURE);
        }
        return Ok(vec![(String::new(), dir.clone())]);
    }
    let cwd = args.cwd.clone().unwrap_or_else(|| {
        std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default()
    });
    match rules {
        // pi's `list(cwd)`: the directory of the resolved cwd under its sessions root.
        Rules::Pi(_) => match pi_session_format::write::default_session_dir(&cwd) {
            Ok(dir) => Ok(vec![(String::new(), dir)]),
            Err(e) => Err(usage(e.to_string())),
        },
        // omp's, and the older directories whose sessions omp would move into it.
        Rules::Omp => {
            let dirs = omp_store()?.project_dirs(Path::new(&cwd), &OmpEnv::current());
            Ok(std::iter::once(dirs.dir)
                .chain(dirs.legacy)
                .map(|d| (String::new(), d))
                .collect())
        }
    }
}

/// omp's pinned session ids (none when its store or the file cannot be read, as for omp).
fn omp_pins(store: &Result<OmpStore, String>) -> HashSet<String> {
    store
        .as_ref()
        .ok()
        .and_then(|store| std::fs::read(store.pins_file()).ok())
        .map(|bytes| omp::list::pinned_ids(&bytes))
        .unwrap_or_default()
}

/// Runs `pi-session ls`.
pub(crate) fn main(args: LsArgs) -> ExitCode {
    let rules = match args.dialect {
        Dialect::Omp => Rules::Omp,
        _ => Rules::Pi(args.pi),
    };
    // omp's store, found once (pi's is found where it is needed).
    let omp_store = match rules {
        Rules::Omp => OmpStore::from_env().map_err(|e| e.to_string()),
        Rules::Pi(_) => Err("not listing omp's sessions".to_owned()),
    };
    let dirs = match directories(&args, rules, &omp_store) {
        Ok(dirs) => dirs,
        Err(code) => return code,
    };
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let mut unreadable = Vec::new();
    let mut names = HashSet::new();
    for (i, (name, dir)) in dirs.iter().enumerate() {
        let (found, failed) = session_files(dir, rules);
        // An old omp project directory: its files whose names the new one has stay there
        // when omp merges them, and are not that project's sessions.
        let legacy = matches!(rules, Rules::Omp) && !args.all && args.dir.is_none() && i > 0;
        for file in found {
            let file_name = file.file_name().map(|n| n.to_os_string());
            if legacy && names.contains(&file_name) {
                continue;
            }
            if !legacy {
                names.insert(file_name);
            }
            files.push((name.clone(), file));
        }
        unreadable.extend(failed);
    }
    let mut cache = Cache::open(rules.cache_key(), !args.no_cache);
    cache.listing(dirs.iter().map(|(_, d)| d.clone()));
    let reads: Vec<Result<Option<Known>, String>> = files
        .par_iter()
        .map(|(dir, path)| read(path, dir, rules, &cache))
        .collect();
    let mut found = Vec::with_capacity(reads.len());
    let mut failed = 0;
    for ((_, path), read) in files.iter().zip(reads) {
        match read {
            Ok(Some(known)) => {
                cache.found(path, known.stamp, known.text);
                found.extend(known.entry);
            }
            Ok(None) => {}
            Err(reason) => {
                failed += 1;
                unreadable.push((path.clone(), reason));
            }
        }
    }
    cache.save();
    // What could not be read is said, not counted as left out by pi.
    let left_out = files.len() - found.len() - failed;
    let pins = match rules {
        Rules::Omp => omp_pins(&omp_store),
        Rules::Pi(_) => HashSet::new(),
    };
    let sorted = sorted(found, rules, args.all, &pins);
    let text = match args.format {
        Format::Json => as_json(&sorted),
        Format::Table => as_table(&sorted, args.all, left_out, rules.reader()),
    };
    if let Err(code) = crate::print_report(&text) {
        return code;
    }
    for (path, reason) in &unreadable {
        eprintln!(
            "pi-session: {}: skipped: {}",
            display::path(path),
            display::text(reason, 300)
        );
    }
    if unreadable.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn as_json(found: &[Found]) -> String {
    let mut w = json::JsonWriter::new();
    w.begin_array();
    for f in found {
        w.begin_object();
        w.key("path").string(&display::path(&f.path));
        if let Some(object) = f.info.as_object() {
            for (key, value) in object.iter() {
                w.key(&key.to_string_lossy()).value(value);
            }
        }
        // omp's entries have their own `size`.
        if f.info.get("size").is_none() {
            w.key("size").uint(f.size);
        }
        w.end_object();
    }
    w.end_array();
    let mut text = w.as_str().to_owned();
    text.push('\n');
    text
}

fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", bytes as f64 / 1e6),
        _ => format!("{:.2} GB", bytes as f64 / 1e9),
    }
}

fn as_table(found: &[Found], all: bool, left_out: usize, reader: &str) -> String {
    let width = if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        terminal_size::terminal_size().map_or(120, |(w, _)| usize::from(w.0))
    } else {
        200
    };
    let mut out = String::new();
    for f in found {
        let modified = f
            .info
            .get("modified")
            .and_then(JsValue::as_str)
            .unwrap_or("-");
        let when = modified.get(..16).unwrap_or(modified).replace('T', " ");
        let messages = f
            .info
            .get("messageCount")
            .map(json::to_string)
            .unwrap_or_default();
        let title = f
            .info
            .get("name")
            .or_else(|| f.info.get("title"))
            .and_then(JsValue::as_str)
            .or_else(|| f.info.get("firstMessage").and_then(JsValue::as_str))
            .unwrap_or("");
        let mut line = format!("{when:<16}  {messages:>6}  {:>8}  ", size(f.size));
        if all {
            let cwd = f.info.get("cwd").and_then(JsValue::as_str).unwrap_or("");
            let cwd = display::text(cwd, 4096);
            let n = cwd.chars().count();
            let cwd: String = if n > 30 {
                std::iter::once('…')
                    .chain(cwd.chars().skip(n - 29))
                    .collect()
            } else {
                cwd
            };
            line.push_str(&format!("{cwd:<30}  "));
        }
        let room = width.saturating_sub(line.chars().count()).max(20);
        let title: String = display::text(&title.replace(['\n', '\r'], " "), usize::MAX)
            .chars()
            .take(room)
            .collect();
        line.push_str(&title);
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "{} session{}",
        found.len(),
        if found.len() == 1 { "" } else { "s" }
    ));
    if left_out > 0 {
        out.push_str(&format!(
            "; {left_out} *.jsonl file{} {reader} leaves out of its list (not a session)",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    out.push('\n');
    out
}
