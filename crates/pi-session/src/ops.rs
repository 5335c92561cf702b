//! The operations of the tool over a session's bytes, shared by the file commands and the
//! conformance protocol: each returns the exact output and the warnings to show.

use pi_session_format::PiVersion;
use pi_session_format::context::{build_context, write_messages};
use pi_session_format::info::session_info;
use pi_session_format::json::{self, JsValue};
use pi_session_format::llm::to_llm;
use pi_session_format::migrate::{IdGenerator, RandomIds, SequentialIds};
use pi_session_format::session::{Key, LoadOptions, ReadAt, Session, quoted};
use pi_session_format::tree::{self, Index, Leaf};
use std::io::Write;
use std::ops::Range;

/// What an operation produced.
pub struct Output {
    /// The bytes for stdout.
    pub bytes: Vec<u8>,
    /// `LINE[:COL]: message` warnings for stderr.
    pub warnings: Vec<String>,
}

/// How an operation runs.
#[derive(Clone, Copy)]
pub struct Settings {
    /// Whose rules to follow.
    pub pi: PiVersion,
    /// Number migration ids `00000001`, … instead of random ones.
    pub sequential_ids: bool,
    /// The process exits right after the operation: the loaded session is left for the
    /// kernel to free at exit (dropping tens of thousands of records and unmapping their
    /// memory piece by piece takes milliseconds of the command's time).
    pub exits_after: bool,
}

impl Settings {
    /// Sequential ids when asked or when `PI_SESSION_DETERMINISTIC_IDS=1`.
    pub fn new(pi: PiVersion, sequential_ids: bool) -> Settings {
        let from_env = std::env::var_os("PI_SESSION_DETERMINISTIC_IDS").is_some_and(|v| v == "1");
        Settings {
            pi,
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
pub enum Access<'r> {
    /// Scans the bytes, telling the function which ranges it is done with (see
    /// [`Session::load_releasing`]).
    Release(&'r (dyn Fn(Range<usize>) + Sync)),
    /// Scans copies read with the function (see [`Session::load_reading`]).
    ReadAt(&'r ReadAt<'r>),
}

fn load<'a>(
    bytes: &'a [u8],
    settings: Settings,
    warnings: &mut Vec<String>,
) -> Result<Session<'a>, Rejected> {
    load_accessing(bytes, Access::Release(&|_| {}), settings, warnings)
}

fn load_accessing<'a>(
    bytes: &'a [u8],
    access: Access<'a>,
    settings: Settings,
    warnings: &mut Vec<String>,
) -> Result<Session<'a>, Rejected> {
    let mut ids: Box<dyn IdGenerator> = if settings.sequential_ids {
        Box::new(SequentialIds::default())
    } else {
        Box::new(RandomIds)
    };
    let options = LoadOptions {
        ids: ids.as_mut(),
        pi: settings.pi,
    };
    let session = match access {
        Access::Release(release) => Session::load_releasing(bytes, options, release)?,
        Access::ReadAt(read_at) => Session::load_reading(bytes, options, read_at)?,
    };
    for s in &session.skipped {
        warnings.push(format!("{}: warning: skipped {}", s.line, s.reason));
    }
    Ok(session)
}

fn json_line(value: &JsValue) -> Vec<u8> {
    let mut bytes = Vec::new();
    json::write_value(&mut bytes, value);
    bytes.push(b'\n');
    bytes
}

/// `buildSessionContext` (or `convertToLlm` of it with `llm`), written to `out` followed by
/// a newline; returns the warnings. `access` tells how loading reads the bytes.
pub fn context<'a>(
    bytes: &'a [u8],
    access: Access<'a>,
    leaf: Option<&str>,
    llm: bool,
    settings: Settings,
    out: &mut dyn Write,
) -> Result<Vec<String>, Rejected> {
    let mut warnings = Vec::new();
    let session = load_accessing(bytes, access, settings, &mut warnings)?;
    let index = Index::build(&session);
    if let Some(id) = leaf
        && index.get(&session, &Key::string(id)).is_none()
    {
        warnings.push(format!(
            " warning: --leaf {}: no entry has this id; the context is built from the last entry, as pi does",
            quoted(id)
        ));
    }
    let leaf = leaf.map_or(Leaf::Current, |id| Leaf::Id(id.to_string()));
    let context = build_context(&session, &index, &leaf, settings.pi)?;
    for line in &context.skipped_lines {
        warnings.push(format!("{line}: warning: `message` is missing or null; entry skipped (pi would throw a TypeError)"));
    }
    if llm {
        write_messages(&to_llm(context.messages, settings.pi), out)?;
    } else {
        context.write_json(out)?;
    }
    out.write_all(b"\n")?;
    if settings.exits_after {
        std::mem::forget(index);
        std::mem::forget(session);
    }
    Ok(warnings)
}

/// The file as pi leaves it after opening it, and whether that differs from the input.
pub fn migrate(bytes: &[u8], settings: Settings) -> Result<(Output, bool), Rejected> {
    let mut warnings = Vec::new();
    let session = load(bytes, settings, &mut warnings)?;
    if session.version.rewrite {
        for d in &session.dropped {
            warnings.push(format!(
                "{}:{}: warning: not JSON ({}); kept verbatim (pi would delete this line)",
                d.line, d.column, d.error
            ));
        }
    }
    let changed = session.version.rewrite;
    Ok((
        Output {
            bytes: session.to_jsonl(),
            warnings,
        },
        changed,
    ))
}

/// `getTree()` as `[{id, type, label?, children}]`.
pub fn tree(bytes: &[u8], settings: Settings) -> Result<Output, Rejected> {
    let mut warnings = Vec::new();
    let session = load(bytes, settings, &mut warnings)?;
    let index = Index::build(&session);
    let roots = tree::tree(&session, &index);
    Ok(Output {
        bytes: json_line(&tree::tree_to_json(&session, &roots)),
        warnings,
    })
}

/// The listing entry (`buildSessionInfo`), `null` when pi leaves the file out of lists.
pub fn info(bytes: &[u8], mtime_ms: f64, settings: Settings) -> Output {
    let value = session_info(bytes, mtime_ms, settings.pi).unwrap_or(JsValue::Null);
    Output {
        bytes: json_line(&value),
        warnings: Vec::new(),
    }
}
