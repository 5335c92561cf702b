//! Writer scripts (`conformance/writers/*/script.ndjson`): parsing them, and running them
//! through our own [`SessionWriter`] — the Rust counterpart of
//! `conformance/reference/pi-write.mjs`, which runs them through pi's `SessionManager`.
//!
//! A script is NDJSON, one operation per line: `create` first, then appends (each with the
//! 8-character `id` pi's `generateId` draws and the `timestamp` pi's clock reads), `branch`,
//! `reset_leaf`, `branch_with_summary`, `create_branched_session` (`sessionId`, `labelIds`),
//! `fork` (`cwd`, `sessionId`), `reopen` and `export`; the output compared is the last export,
//! or else the file of the session the script ends in. Each append passes the arguments present in the
//! operation, in pi's parameter order, up to the first absent one (pi's optional parameters
//! are trailing), exactly as the Node driver does.

use pi_session_format::date;
use pi_session_format::json::{self, JsValue};
use pi_session_format::write::{
    BranchSummary, Compaction, IdSource, ManualClock, SessionWriter, WriteProfile, WriterConfig,
};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What running a script did.
#[derive(Debug)]
pub struct Outcome {
    /// The file the writer wrote (`None`: no conversation yet, no file), or the script's last
    /// `export` of the active branch.
    pub file: Option<Vec<u8>>,
    /// The leaf id at the end.
    pub leaf: Option<String>,
}

/// A script that could not run: the 1-based line of the operation and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// The line of the script.
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "script line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ScriptError {}

/// The ids a script gives: entry ids as the UUIDs pi-write.mjs's `randomUUID` returns, and
/// session ids (UUID v7) as its `uuidv7` does.
#[derive(Clone, Default)]
struct ScriptIds {
    queue: Arc<Mutex<VecDeque<String>>>,
    sessions: Arc<Mutex<VecDeque<String>>>,
    drew_unknown: Arc<Mutex<bool>>,
}

fn push(queue: &Mutex<VecDeque<String>>, id: String) {
    if let Ok(mut q) = queue.lock() {
        q.push_back(id);
    }
}

fn front(queue: &Mutex<VecDeque<String>>) -> Option<String> {
    queue.lock().ok().and_then(|q| q.front().cloned())
}

impl IdSource for ScriptIds {
    fn random_uuid(&mut self) -> String {
        let next = self.queue.lock().ok().and_then(|mut q| q.pop_front());
        match next {
            Some(id) => format!("{id}-0000-4000-8000-000000000000"),
            None => {
                if let Ok(mut flag) = self.drew_unknown.lock() {
                    *flag = true;
                }
                "ffffffff-0000-4000-8000-000000000000".into()
            }
        }
    }

    fn session_id(&mut self, _now_ms: i64) -> String {
        let next = self.sessions.lock().ok().and_then(|mut q| q.pop_front());
        next.unwrap_or_else(|| {
            if let Ok(mut flag) = self.drew_unknown.lock() {
                *flag = true;
            }
            "ffffffff-0000-7000-8000-000000000000".into()
        })
    }
}

/// The members of an operation that name an entry by the id the script gave it.
const ENTRY_REFERENCES: [&str; 4] = ["targetId", "from", "firstKeptEntryId", "leaf"];

/// Without hooks, the entries the operation names by the script's ids are named by the ids the
/// writer drew for them instead (as any driver of a writer without id hooks must do).
fn translate(op: &mut JsValue, drawn: &HashMap<String, String>) {
    let JsValue::Object(op) = op else {
        return;
    };
    for key in ENTRY_REFERENCES {
        if let Some(member) = op.get_mut(key)
            && let Some(mine) = member.as_str().and_then(|id| drawn.get(id))
        {
            *member = JsValue::string(mine.clone());
        }
    }
}

/// The arguments of `op` present in the operation, in order, up to the first absent one.
fn present<'o>(op: &'o JsValue, keys: &[&str]) -> Vec<Option<&'o JsValue>> {
    let mut seen = true;
    keys.iter()
        .map(|k| {
            seen = seen && op.get(k).is_some();
            if seen { op.get(k) } else { None }
        })
        .collect()
}

fn string<'v>(value: Option<&'v JsValue>, what: &str) -> Result<&'v str, String> {
    match value {
        Some(JsValue::String(s)) => s
            .as_str()
            .ok_or_else(|| format!("{what}: a lone surrogate is only supported in payloads")),
        Some(_) => Err(format!("{what}: expected a string")),
        None => Err(format!("{what}: missing")),
    }
}

fn optional_string<'v>(value: Option<&'v JsValue>, what: &str) -> Result<Option<&'v str>, String> {
    value.map(|v| string(Some(v), what)).transpose()
}

fn optional_bool(value: Option<&JsValue>, what: &str) -> Result<Option<bool>, String> {
    match value {
        None => Ok(None),
        Some(JsValue::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("{what}: expected true or false")),
    }
}

/// Whether the writer takes the script's ids and times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Hooks {
    /// Entry and session ids from the script's `id`, `sessionId` and `labelIds`, the clock
    /// set to each operation's `timestamp`: pi's bytes.
    #[default]
    Script,
    /// Random ids and the system clock, the script's ids and times ignored: a writer without
    /// id and clock hooks, judged at the renamed level ([`crate::renamed`]).
    None,
}

/// Runs `script` through our writer with `profile`'s rules, in a temporary session
/// directory under `work`, and returns the file it wrote.
pub fn run(script: &str, profile: WriteProfile, work: &Path) -> Result<Outcome, ScriptError> {
    run_with(script, profile, work, Hooks::Script)
}

/// [`run`], with or without the script's ids and times.
pub fn run_with(
    script: &str,
    profile: WriteProfile,
    work: &Path,
    hooks: Hooks,
) -> Result<Outcome, ScriptError> {
    // A script with a fixed `sessionDir` (its paths are written in headers) empties, writes
    // and removes that directory: such runs take turns in this process (tests run scenarios
    // on several threads at once).
    static FIXED_DIR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let fixed = script
        .lines()
        .find(|line| !line.trim().is_empty())
        .and_then(|line| json::parse(line).ok())
        .is_some_and(|op| op.get("sessionDir").is_some());
    let _turn = fixed.then(|| FIXED_DIR.lock().unwrap_or_else(|e| e.into_inner()));
    let ids = ScriptIds::default();
    let clock = ManualClock::at(date::parse_date("2026-01-01T00:00:00.000Z") as i64);
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = work.join(format!("pi-session-write-{}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut used_dir = dir.clone();
    let result = run_in(
        script,
        profile,
        dir.clone(),
        &mut used_dir,
        (hooks == Hooks::Script).then_some((&ids, &clock)),
    );
    let _ = std::fs::remove_dir_all(&used_dir);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(
    script: &str,
    profile: WriteProfile,
    mut dir: PathBuf,
    used_dir: &mut PathBuf,
    hooks: Option<(&ScriptIds, &ManualClock)>,
) -> Result<Outcome, ScriptError> {
    // Without hooks, queues nobody draws from and a clock nobody reads; the ids the writer
    // drew, by the script's ids they stand for.
    let unhooked = (ScriptIds::default(), ManualClock::at(0));
    let (ids, clock) = hooks.unwrap_or((&unhooked.0, &unhooked.1));
    let mut drawn: HashMap<String, String> = HashMap::new();
    let mut writer: Option<SessionWriter> = None;
    let mut exported: Option<Vec<u8>> = None;
    let mut line_no = 0;
    for text in script.split('\n') {
        line_no += 1;
        if text.trim().is_empty() {
            continue;
        }
        let fail = |message: String| ScriptError {
            line: line_no,
            message,
        };
        let mut op = json::parse(text).map_err(|e| fail(e.message()))?;
        if hooks.is_none() {
            translate(&mut op, &drawn);
        }
        if let Some(t) = op.get("timestamp") {
            let ms = date::date_parse(Some(t));
            if ms.is_nan() {
                return Err(fail(format!("bad timestamp {}", json::to_string(t))));
            }
            clock.set(ms as i64);
        }
        let name = string(op.get("op"), "op").map_err(&fail)?;
        if let Some(id) = op.get("sessionId") {
            push(
                &ids.sessions,
                string(Some(id), "sessionId").map_err(&fail)?.to_owned(),
            );
        }
        if let Some(JsValue::Array(labels)) = op.get("labelIds") {
            for id in &labels.0 {
                push(
                    &ids.queue,
                    string(Some(id), "labelIds").map_err(&fail)?.to_owned(),
                );
            }
        }
        if name != "create"
            && let Some(id) = op.get("id")
        {
            match id.as_str() {
                Some(id) if id.chars().count() == 8 => push(&ids.queue, id.to_owned()),
                _ => return Err(fail("an entry id has 8 characters".into())),
            }
        }
        let config = || match hooks {
            Some(_) => WriterConfig::default()
                .profile(profile)
                .ids(ids.clone())
                .clock(clock.clone()),
            None => WriterConfig::default().profile(profile),
        };
        match (name, writer.as_mut()) {
            ("create", Some(_)) => return Err(fail("create twice".into())),
            ("create", None) => {
                let cwd = string(op.get("cwd"), "cwd").map_err(&fail)?;
                if !cwd.starts_with('/') {
                    return Err(fail("the cwd must be an absolute path".into()));
                }
                let mut config = config();
                if let Some(id) = op.get("id").filter(|_| hooks.is_some()) {
                    config = config.session_id(string(Some(id), "id").map_err(&fail)?);
                }
                if let Some(fixed) = op.get("sessionDir") {
                    let fixed = string(Some(fixed), "sessionDir").map_err(&fail)?;
                    if !fixed.starts_with('/') {
                        return Err(fail("the sessionDir must be an absolute path".into()));
                    }
                    // A fixed directory (paths of the session files are written in headers):
                    // emptied first, removed afterwards.
                    let _ = std::fs::remove_dir_all(fixed);
                    dir = PathBuf::from(fixed);
                    *used_dir = dir.clone();
                }
                writer = Some(
                    SessionWriter::create(cwd, Some(&dir), config)
                        .map_err(|e| fail(e.to_string()))?,
                );
            }
            (_, None) => return Err(fail("the script must start with create".into())),
            ("fork", Some(w)) => {
                let cwd = string(op.get("cwd"), "cwd").map_err(&fail)?;
                if !cwd.starts_with('/') {
                    return Err(fail("the cwd must be an absolute path".into()));
                }
                let source = w.path().map(Path::to_owned).unwrap_or_default();
                let forked =
                    SessionWriter::fork_from(&source, cwd, Some(&dir.join("forks")), config())
                        .map_err(|e| fail(e.to_string()))?;
                writer = Some(forked);
            }
            ("reopen", Some(w)) => {
                if !w.is_written() {
                    return Err(fail("reopen: the session has no file yet".into()));
                }
                let path = w.path().map(Path::to_owned).unwrap_or_default();
                // Our writer holds the file's lock: let it go before opening again.
                drop(writer.take());
                writer =
                    Some(SessionWriter::open(&path, config()).map_err(|e| fail(e.to_string()))?);
            }
            ("export", Some(w)) => {
                exported = Some(w.export_branch().map_err(|e| fail(e.to_string()))?);
            }
            (name, Some(w)) => {
                apply(w, name, &op).map_err(&fail)?;
                // Every append leaves its entry as the leaf.
                if let Some(JsValue::String(id)) = op.get("id")
                    && let (Some(id), Some(leaf)) = (id.as_str(), w.leaf_id())
                {
                    drawn.insert(id.to_owned(), leaf);
                }
            }
        }
        if hooks.is_none() {
            continue;
        }
        if let Some(id) = front(&ids.queue) {
            return Err(fail(format!("the writer did not draw the id {id}")));
        }
        if let Some(id) = front(&ids.sessions) {
            return Err(fail(format!("the writer did not draw the session id {id}")));
        }
        if ids.drew_unknown.lock().is_ok_and(|f| *f) {
            return Err(fail("the writer drew an id the script did not give".into()));
        }
    }
    let writer = writer.ok_or(ScriptError {
        line: line_no,
        message: "the script has no create".into(),
    })?;
    let file = match writer.path() {
        _ if exported.is_some() => exported,
        Some(path) if writer.is_written() => {
            Some(std::fs::read(path).map_err(|e| ScriptError {
                line: line_no,
                message: format!("{}: {e}", path.display()),
            })?)
        }
        _ => None,
    };
    Ok(Outcome {
        file,
        leaf: writer.leaf_id(),
    })
}

/// One operation on the writer.
fn apply(w: &mut SessionWriter, name: &str, op: &JsValue) -> Result<(), String> {
    let err = |e: pi_session_format::WriteError| e.to_string();
    match name {
        "message" => {
            let message = op.get("message").cloned().ok_or("message: missing")?;
            w.append_message_value(&message).map_err(err)?;
        }
        "thinking_level_change" => {
            w.append_thinking_level_change(string(op.get("thinkingLevel"), "thinkingLevel")?)
                .map_err(err)?;
        }
        "model_change" => {
            let a = present(op, &["provider", "modelId"]);
            w.append_model_change(string(a[0], "provider")?, string(a[1], "modelId")?)
                .map_err(err)?;
        }
        "compaction" => {
            let a = present(
                op,
                &[
                    "summary",
                    "firstKeptEntryId",
                    "tokensBefore",
                    "details",
                    "fromHook",
                    "usage",
                ],
            );
            let tokens_before = match a[2] {
                Some(JsValue::Number(n)) => *n,
                _ => return Err("tokensBefore: expected a number (and firstKeptEntryId before it, null for the default)".into()),
            };
            let first_kept = match a[1] {
                Some(JsValue::Null) => None,
                other => Some(string(other, "firstKeptEntryId")?),
            };
            w.append_compaction(&Compaction {
                summary: string(a[0], "summary")?,
                first_kept_entry_id: first_kept,
                tokens_before,
                details: a[3],
                from_hook: optional_bool(a[4], "fromHook")?,
                usage: a[5],
            })
            .map_err(err)?;
        }
        "custom" => {
            let a = present(op, &["customType", "data"]);
            w.append_custom_entry(string(a[0], "customType")?, a[1])
                .map_err(err)?;
        }
        "custom_message" => {
            let a = present(op, &["customType", "content", "display", "details"]);
            let display = optional_bool(a[2], "display")?.ok_or("display: missing")?;
            w.append_custom_message_entry(
                string(a[0], "customType")?,
                a[1].ok_or("content: missing")?,
                display,
                a[3],
            )
            .map_err(err)?;
        }
        "session_info" => {
            w.append_session_info(string(op.get("name"), "name")?)
                .map_err(err)?;
        }
        "label" => {
            let a = present(op, &["targetId", "label"]);
            w.append_label_change(string(a[0], "targetId")?, optional_string(a[1], "label")?)
                .map_err(err)?;
        }
        "usage" => {
            let a = present(op, &["kind", "provider", "model", "usage", "note"]);
            w.append_usage(
                string(a[0], "kind")?,
                string(a[1], "provider")?,
                string(a[2], "model")?,
                a[3].ok_or("usage: missing")?,
                optional_string(a[4], "note")?,
            )
            .map_err(err)?;
        }
        "context_edit" => {
            let replacement = op.get("replacement").ok_or("replacement: missing")?;
            w.append_context_edit(string(op.get("targetId"), "targetId")?, replacement)
                .map_err(err)?;
        }
        "branch" => w.branch(string(op.get("from"), "from")?).map_err(err)?,
        "create_branched_session" => {
            w.create_branched_session(string(op.get("leaf"), "leaf")?)
                .map_err(err)?;
        }
        "reset_leaf" => w.reset_leaf(),
        "branch_with_summary" => {
            let a = present(op, &["from", "summary", "details", "fromHook", "usage"]);
            let from = match a[0] {
                Some(JsValue::Null) => None,
                other => Some(string(other, "from")?),
            };
            w.branch_with_summary(
                from,
                &BranchSummary {
                    summary: string(a[1], "summary")?,
                    details: a[2],
                    from_hook: optional_bool(a[3], "fromHook")?,
                    usage: a[4],
                },
            )
            .map_err(err)?;
        }
        other => return Err(format!("unknown op {other:?}")),
    }
    Ok(())
}

/// A scratch directory for [`run`]: `$TMPDIR`.
pub fn scratch() -> PathBuf {
    std::env::temp_dir()
}
