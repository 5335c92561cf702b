//! The operations of the tool over a session's bytes, shared by the file commands and the
//! conformance protocol: each returns the exact output and the warnings to show.

use pi_session_format::context::write_messages;
use pi_session_format::info;
use pi_session_format::llm::to_llm;
use pi_session_format::migrate::{IdGenerator, RandomIds, SequentialIds};
use pi_session_format::omp::Blobs;
use pi_session_format::omp::rewrite::{OnOpen, on_open};
use pi_session_format::session::{
    ChangeKind, Changes, Key, ReadAt, Session, quoted, skipped_warning,
};
use pi_session_format::tree::{self, Leaf};
use pi_session_format::{Dialect, PiVersion};
use pi_session_fs::input::Input;
use std::io::Write;
use std::ops::Range;

/// What an operation produced.
pub(crate) struct Output {
    /// The bytes for stdout.
    pub bytes: Vec<u8>,
    /// `LINE[:COL]: message` warnings for stderr.
    pub warnings: Vec<String>,
}

/// How an operation runs.
#[derive(Clone, Copy)]
pub(crate) struct Settings {
    /// Whose rules to follow.
    pub pi: PiVersion,
    /// The file's dialect; `None`: the file's own ([`Dialect::detect`]).
    pub dialect: Option<Dialect>,
    /// Number migration ids `00000001`, … instead of random ones.
    pub sequential_ids: bool,
    /// The process exits right after the operation: the loaded session is left for the
    /// kernel to free at exit (dropping tens of thousands of records and unmapping their
    /// memory piece by piece takes milliseconds of the command's time).
    pub exits_after: bool,
}

impl Settings {
    /// Sequential ids when asked or when `PI_SESSION_DETERMINISTIC_IDS=1`.
    pub(crate) fn new(pi: PiVersion, sequential_ids: bool) -> Settings {
        let from_env = std::env::var_os("PI_SESSION_DETERMINISTIC_IDS").is_some_and(|v| v == "1");
        Settings {
            pi,
            dialect: Some(Dialect::Pi),
            sequential_ids: sequential_ids || from_env,
            exits_after: false,
        }
    }
}

/// An operation failed on its input (exit status 1).
pub struct Rejected(pub String);

impl<E: std::fmt::Display> From<E> for Rejected {
    fn from(e: E) -> Self {
        Rejected(e.to_string())
    }
}

/// How the loader gets at the bytes of the input.
#[derive(Clone, Copy)]
pub(crate) enum Access<'r> {
    /// Scans the bytes, telling the function which ranges it is done with (see
    /// [`pi_session_format::session::Loader::releasing`]).
    Release(&'r (dyn Fn(Range<usize>) + Sync)),
    /// Scans copies read with the function (see
    /// [`pi_session_format::session::Loader::reading`]).
    ReadAt(&'r ReadAt<'r>),
    /// Loads the file as the command line reads one
    /// ([`pi_session_format::session::Loader::load_input`]: a mapped file through positioned
    /// reads, one read into memory as it is).
    Input(&'r Input),
}

/// The migration ids the settings ask for.
fn ids(settings: Settings) -> Box<dyn IdGenerator> {
    if settings.sequential_ids {
        Box::new(SequentialIds::default())
    } else {
        Box::new(RandomIds)
    }
}

fn load_accessing<'a>(
    bytes: &'a [u8],
    access: Access<'a>,
    settings: Settings,
    warnings: &mut Vec<String>,
) -> Result<Session<'a>, Rejected> {
    let mut ids = ids(settings);
    let loader = Session::loader(settings.pi)
        .ids(ids.as_mut())
        .with_dialect(settings.dialect);
    let session = match access {
        Access::Release(release) => loader.releasing(release).load(bytes)?,
        Access::ReadAt(read_at) => loader.reading(read_at).load(bytes)?,
        Access::Input(input) => loader.load_input(input)?,
    };
    for s in &session.skipped {
        warnings.push(format!("{}: warning: skipped {}", s.line, s.reason));
    }
    Ok(session)
}

/// `buildSessionContext` (or `convertToLlm` of it with `llm`), written to `out` followed by
/// a newline; returns the warnings. `access` tells how loading reads the bytes.
pub(crate) fn context<'a>(
    bytes: &'a [u8],
    access: Access<'a>,
    leaf: Option<&str>,
    llm: bool,
    settings: Settings,
    blobs: Option<&Blobs>,
    out: &mut dyn Write,
) -> Result<Vec<String>, Rejected> {
    let mut warnings = Vec::new();
    let session = load_accessing(bytes, access, settings, &mut warnings)?;
    if let Some(id) = leaf
        && session.index().get(&session, &Key::string(id)).is_none()
    {
        warnings.push(format!(
            " warning: --leaf {}: no entry has this id; the context is built from the last entry, as pi does",
            quoted(id)
        ));
    }
    let leaf = leaf.map_or(Leaf::Current, |id| Leaf::Id(id.to_string()));
    if llm {
        if session.dialect == Dialect::Omp {
            return Err(Rejected(
                "--llm: omp's convertToLlm is not reproduced yet (the context is: drop --llm)"
                    .into(),
            ));
        }
        let context = session.context(leaf)?;
        warnings.extend(context.skipped_lines.iter().map(|&l| skipped_warning(l)));
        write_messages(&to_llm(context.messages, session.pi), out)?;
    } else {
        let notes = session.write_resumed_context(leaf, blobs, out)?;
        warnings.extend(notes.warnings(blobs));
    }
    out.write_all(b"\n")?;
    if settings.exits_after {
        std::mem::forget(session);
    }
    Ok(warnings)
}

/// What [`migrate`] did.
#[derive(Debug, Default)]
pub(crate) struct Migrated {
    /// `LINE[:COL]: warning: …` lines for stderr (aggregated: the first few of each kind,
    /// then a count).
    pub warnings: Vec<String>,
    /// Whether the output differs from the input (pi rewrites the file).
    pub changed: bool,
}

/// Warnings of one kind shown before the rest are only counted.
const WARNINGS_SHOWN: usize = 10;

/// Whether [`migrate`] would change the file, from its header alone (nothing else is read):
/// for a caller that opens a temporary file only when there is something to write.
pub(crate) fn needs_migration(bytes: &[u8], settings: Settings) -> Result<bool, Rejected> {
    Ok(Session::read_version(bytes, settings.pi)?.rewrite)
}

/// Writes the file as pi leaves it after opening it to `out`, one batch of lines at a time;
/// returns the warnings (what pi's rewrite loses, lines kept that pi would drop) and
/// whether the output differs from the input. Whether it does is known from the header
/// before anything is written ([`needs_migration`]).
pub(crate) fn migrate(
    bytes: &[u8],
    settings: Settings,
    out: &mut dyn Write,
) -> Result<Migrated, Rejected> {
    migrate_releasing(bytes, &|_| {}, settings, out)
}

/// [`migrate`], telling `release` which byte ranges of `bytes` it is done with (a mapped
/// input can drop those pages: see `Input::release`), so that memory does not grow with the
/// file.
pub(crate) fn migrate_releasing(
    bytes: &[u8],
    release: &(dyn Fn(Range<usize>) + Sync),
    settings: Settings,
    out: &mut dyn Write,
) -> Result<Migrated, Rejected> {
    let mut ids = ids(settings);
    let migration = Session::loader(settings.pi)
        .ids(ids.as_mut())
        .releasing(release)
        .load_for_rewrite(bytes)?;
    let session = migration.session();
    let changed = migration.changed();
    let mut warnings = Vec::new();
    let mut skipped = session.skipped.iter();
    for s in skipped.by_ref().take(WARNINGS_SHOWN) {
        warnings.push(format!("{}: warning: skipped {}", s.line, s.reason));
    }
    more(&mut warnings, skipped.len(), "lines skipped (see above)");
    if changed {
        let mut dropped = session.dropped.iter();
        for d in dropped.by_ref().take(WARNINGS_SHOWN) {
            warnings.push(format!(
                "{}:{}: warning: not JSON ({}); kept verbatim (pi would delete this line)",
                d.line,
                d.column,
                d.error.message()
            ));
        }
        more(
            &mut warnings,
            dropped.len(),
            "lines that are not JSON, kept verbatim (pi would delete them)",
        );
    }
    let mut changes = Changes::new(WARNINGS_SHOWN);
    migration.write(out, &mut changes, release)?;
    if changed {
        warnings.extend(change_warnings(&changes));
    }
    if settings.exits_after {
        std::mem::forget(migration);
    }
    Ok(Migrated { warnings, changed })
}

/// What omp does to the file when it opens it (leaves it, rewrites it into what, or fails),
/// with the warnings of loading it in omp's dialect; blob references resolve from `blobs`.
pub(crate) fn omp_on_open(
    bytes: &[u8],
    settings: Settings,
    blobs: Option<&Blobs>,
) -> Result<(OnOpen, Vec<String>), Rejected> {
    let mut warnings = Vec::new();
    let settings = Settings {
        dialect: Some(Dialect::Omp),
        ..settings
    };
    let session = load_accessing(bytes, Access::Release(&|_| {}), settings, &mut warnings)?;
    let on_open = on_open(&session, blobs);
    if let OnOpen::Rewrites { rewritten, .. } = &on_open {
        warnings.extend(rewritten.missing_blobs.iter().map(|hash| {
            format!(
                "warning: blob {hash} is not in the blob store; its reference stays, as omp \
                 leaves it"
            )
        }));
    }
    if settings.exits_after {
        std::mem::forget(session);
    }
    Ok((on_open, warnings))
}

/// ` warning: N more …` when `n > 0`.
fn more(warnings: &mut Vec<String>, n: usize, what: &str) {
    if n > 0 {
        warnings.push(format!(" warning: {n} more {what}"));
    }
}

/// The warnings for what pi's rewrite changes, each naming its `validate` code.
fn change_warnings(changes: &Changes) -> Vec<String> {
    let mut warnings: Vec<String> = changes
        .shown
        .iter()
        .map(|c| {
            let (line, column) = (c.line, c.column);
            match &c.kind {
                ChangeKind::InvalidUtf8 { byte } => format!(
                    "{line}:{column}: warning: byte 0x{byte:02X} is not valid UTF-8: written as U+FFFD, as pi does; the original bytes are lost [PS0008]"
                ),
                ChangeKind::BlankLines { count: 1 } => {
                    format!("{line}: warning: blank line left out, as pi does [PS0009]")
                }
                ChangeKind::BlankLines { count } => format!(
                    "{line}: warning: {count} blank lines (lines {line}–{}) left out, as pi does [PS0009]",
                    line + count - 1
                ),
                ChangeKind::NumberNotExact { written, becomes } => format!(
                    "{line}:{column}: warning: the number {} is written as {}, as pi does (JSON numbers are doubles) [PS0011]",
                    quoted(written).trim_matches('"'),
                    quoted(becomes).trim_matches('"')
                ),
                ChangeKind::DuplicateKey { key } => format!(
                    "{line}:{column}: warning: duplicate key {}: only its last value is kept, as pi does [PS0012]",
                    quoted(key)
                ),
            }
        })
        .collect();
    for (k, what) in [
        "lines with invalid UTF-8 written with U+FFFD [PS0008]",
        "blank lines left out [PS0009]",
        "numbers written with another value [PS0011]",
        "duplicate keys collapsed [PS0012]",
    ]
    .into_iter()
    .enumerate()
    {
        more(&mut warnings, changes.hidden(k), what);
    }
    warnings
}

/// `getTree()` as `[{id, type, label?, children}]`, or drawn (`text`).
pub(crate) fn tree<'a>(
    bytes: &'a [u8],
    access: Access<'a>,
    settings: Settings,
    text: Option<tree::TextOptions>,
) -> Result<Output, Rejected> {
    let mut warnings = Vec::new();
    let session = load_accessing(bytes, access, settings, &mut warnings)?;
    if session.dialect == Dialect::Omp {
        let mut bytes = Vec::new();
        match text {
            // omp's tree, in omp's order, drawn as pi's is.
            Some(options) => {
                let mut drawing = String::new();
                let view = session.omp_tree()?;
                view.write_text(&session, session.index(), options, &mut drawing);
                bytes = drawing.into_bytes();
            }
            None => {
                session.write_omp_tree(&mut bytes)?;
                bytes.push(b'\n');
            }
        }
        if settings.exits_after {
            std::mem::forget(session);
        }
        return Ok(Output { bytes, warnings });
    }
    let view = session.tree();
    if let (tree::Form::Once(why), Some((line, id))) = (view.form(), view.first_duplicate()) {
        let pi = match why {
            tree::Why::Cycle => "loop forever".to_owned(),
            // The count saturates: u64::MAX is anything from there on, and the newline
            // makes it at least 2^64.
            tree::Why::Size(u64::MAX) => "print at least 2^64 bytes".to_owned(),
            tree::Why::Size(bytes) => format!("print {} bytes", bytes + 1),
        };
        warnings.push(format!(
            "{line}: warning: the id {} is reused by a later entry; pi's tree repeats a reused id's subtree at each of its places; each entry is listed once here, at its first place (pi would {pi})",
            id.display()
        ));
    }
    let mut bytes = Vec::new();
    match text {
        Some(options) => {
            let mut drawing = String::new();
            view.write_text(&session, session.index(), options, &mut drawing);
            bytes = drawing.into_bytes();
        }
        None => {
            view.write_json(&session, session.index(), &mut bytes);
            bytes.push(b'\n');
        }
    }
    if settings.exits_after {
        std::mem::forget(view);
        std::mem::forget(session);
    }
    Ok(Output { bytes, warnings })
}

/// The listing entry, with its newline: pi's (`buildSessionInfo`), or omp's (`scanSessionFile`)
/// for a file read as omp's (given, or detected when no dialect was given); `null` when the
/// program leaves the file out of lists.
pub(crate) fn info(bytes: &[u8], mtime_ms: f64, settings: Settings) -> Output {
    let mut out = Vec::new();
    // Writing into a vector cannot fail.
    let _ = info_to(bytes, None, mtime_ms, settings, &mut out);
    Output {
        bytes: out,
        warnings: Vec::new(),
    }
}

/// [`info()`] streamed to `out` (pi's texts of the messages, which can be as big as the file,
/// are never held whole; omp reads only two windows of the file); `read_at` reads the file
/// through small buffers, as for [`context`].
pub(crate) fn info_to(
    bytes: &[u8],
    read_at: Option<&ReadAt<'_>>,
    mtime_ms: f64,
    settings: Settings,
    out: &mut dyn Write,
) -> Result<(), Rejected> {
    info::write_entry(bytes, read_at, mtime_ms, settings.pi, settings.dialect, out)?;
    out.write_all(b"\n")?;
    Ok(())
}
