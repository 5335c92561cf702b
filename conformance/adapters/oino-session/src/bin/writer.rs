//! oino-session 1.0.0's `SessionManager` as a writer under the writer protocol
//! (conformance/writers/README.md): `oino-session-writer --pi P OUT` with the script on stdin
//! (its format: the top of conformance/reference/pi-write.mjs).
//!
//! Glue only: each operation calls the `SessionManager` method that does it, and the file the
//! manager wrote is copied to OUT. oino-session has no id or clock hooks for entries: it draws
//! its own entry ids and reads the real clock, so the script's `id`s and `timestamp`s are not
//! used; a later operation's reference to a script id (`targetId`, `from`, …) is translated
//! to the id the manager returned for it. Session ids go through its `CreateOptions::id`.
//! `branch_with_summary`'s `fromId` is the leaf before the call (oino-session's documented
//! "previous leaf whose path was summarised", `root` when there is none). Not done (exit
//! status 3): `export` (no branch export in oino-session). `--pi` is ignored: oino-session
//! has one behaviour.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use oino_ai::{AgentMessage, Usage, UserContentField};
use oino_session::{
    BranchSummaryDraft, CompactionDraft, CreateOptions, EditableContent, EntryId, SessionManager,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// How a run ended other than by writing.
enum Stop {
    /// An operation oino-session does not do (exit status 3).
    Unsupported(String),
    /// oino-session failed (exit status 1).
    Failed(String),
}

fn failed(e: impl std::fmt::Display) -> Stop {
    Stop::Failed(e.to_string())
}

/// The script's operations, in order, with the manager and the id translation.
struct Run {
    root: PathBuf,
    manager: Option<SessionManager>,
    ids: HashMap<String, EntryId>,
}

fn field<T: DeserializeOwned>(op: &Value, key: &str) -> Result<Option<T>, Stop> {
    match op.get(key) {
        None => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| failed(format!("`{key}`: {e}"))),
    }
}

fn text(op: &Value, key: &str) -> String {
    op.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Run {
    fn manager(&mut self) -> Result<&mut SessionManager, Stop> {
        self.manager
            .as_mut()
            .ok_or_else(|| failed("the script must start with create"))
    }

    /// The manager's id for the script's id in `key`.
    fn id(&self, op: &Value, key: &str) -> Option<EntryId> {
        let script = op.get(key)?.as_str()?;
        Some(
            self.ids
                .get(script)
                .cloned()
                .unwrap_or_else(|| EntryId::new(script)),
        )
    }

    fn apply(&mut self, op: &Value) -> Result<(), Stop> {
        let name = op.get("op").and_then(Value::as_str).unwrap_or_default();
        let appended = match name {
            "create" => {
                let options = CreateOptions {
                    id: op.get("id").and_then(Value::as_str).map(str::to_owned),
                    parent_session: None,
                };
                let cwd = PathBuf::from(text(op, "cwd"));
                self.manager =
                    Some(SessionManager::create(&cwd, &self.root, options).map_err(failed)?);
                None
            }
            "message" => {
                let message: AgentMessage =
                    field(op, "message")?.ok_or_else(|| failed("no message"))?;
                Some(self.manager()?.append_message(message).map_err(failed)?)
            }
            "thinking_level_change" => {
                let level = text(op, "thinkingLevel");
                Some(
                    self.manager()?
                        .append_thinking_level_change(&level)
                        .map_err(failed)?,
                )
            }
            "model_change" => {
                let (provider, model) = (text(op, "provider"), text(op, "modelId"));
                Some(
                    self.manager()?
                        .append_model_change(&provider, &model)
                        .map_err(failed)?,
                )
            }
            "compaction" => {
                let draft = CompactionDraft {
                    summary: text(op, "summary"),
                    first_kept_entry_id: self.id(op, "firstKeptEntryId"),
                    tokens_before: op.get("tokensBefore").and_then(Value::as_u64).unwrap_or(0),
                    details: op.get("details").cloned(),
                    from_hook: field(op, "fromHook")?,
                    usage: field::<Usage>(op, "usage")?,
                    system_message: None,
                };
                Some(self.manager()?.append_compaction(draft).map_err(failed)?)
            }
            "custom" => {
                let (kind, data) = (text(op, "customType"), op.get("data").cloned());
                Some(
                    self.manager()?
                        .append_custom_entry(&kind, data)
                        .map_err(failed)?,
                )
            }
            "custom_message" => {
                let content: UserContentField = field(op, "content")?.unwrap_or_default();
                let display = op.get("display").and_then(Value::as_bool).unwrap_or(false);
                let (kind, details) = (text(op, "customType"), op.get("details").cloned());
                let manager = self.manager()?;
                Some(
                    manager
                        .append_custom_message_entry(&kind, content, display, details)
                        .map_err(failed)?,
                )
            }
            "session_info" => {
                let name: Option<String> = field(op, "name")?;
                Some(
                    self.manager()?
                        .append_session_info(name.as_deref())
                        .map_err(failed)?,
                )
            }
            "label" => {
                let target = self
                    .id(op, "targetId")
                    .ok_or_else(|| failed("no targetId"))?;
                let label: Option<String> = field(op, "label")?;
                let manager = self.manager()?;
                Some(
                    manager
                        .append_label_change(&target, label.as_deref())
                        .map_err(failed)?,
                )
            }
            "usage" => {
                let usage: Usage = field(op, "usage")?.unwrap_or_default();
                let (kind, provider, model) =
                    (text(op, "kind"), text(op, "provider"), text(op, "model"));
                let note: Option<String> = field(op, "note")?;
                let manager = self.manager()?;
                Some(
                    manager
                        .append_usage(&kind, &provider, &model, usage, note)
                        .map_err(failed)?,
                )
            }
            "context_edit" => {
                let target = self
                    .id(op, "targetId")
                    .ok_or_else(|| failed("no targetId"))?;
                let content: Option<EditableContent> = match op.get("replacement") {
                    Some(Value::Null) | None => None,
                    Some(replacement) => field(replacement, "content")?,
                };
                Some(
                    self.manager()?
                        .append_context_edit(&target, content)
                        .map_err(failed)?,
                )
            }
            "branch" => {
                let from = self.id(op, "from").ok_or_else(|| failed("no from"))?;
                self.manager()?.set_leaf(&from).map_err(failed)?;
                None
            }
            "reset_leaf" => {
                self.manager()?.reset_leaf();
                None
            }
            "branch_with_summary" => {
                let from = self.id(op, "from");
                let manager = self.manager.as_mut().ok_or_else(|| failed("no session"))?;
                let draft = BranchSummaryDraft {
                    from_id: manager
                        .leaf_id()
                        .cloned()
                        .unwrap_or_else(|| EntryId::new("root")),
                    summary: text(op, "summary"),
                    details: op.get("details").cloned(),
                    from_hook: field(op, "fromHook")?,
                    usage: field::<Usage>(op, "usage")?,
                };
                Some(
                    manager
                        .branch_with_summary(from.as_ref(), draft)
                        .map_err(failed)?,
                )
            }
            "create_branched_session" => {
                let leaf = self.id(op, "leaf").ok_or_else(|| failed("no leaf"))?;
                self.manager()?
                    .branch_into_new_session(&leaf)
                    .map_err(failed)?;
                None
            }
            "fork" => {
                let source = self.file()?;
                let options = CreateOptions {
                    id: op
                        .get("sessionId")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    parent_session: None,
                };
                let cwd = PathBuf::from(text(op, "cwd"));
                let fork = SessionManager::fork_from(&source, &cwd, &self.root, options);
                self.manager = Some(fork.map_err(failed)?);
                None
            }
            "reopen" => {
                let file = self.file()?;
                self.manager = Some(SessionManager::open(&file, &self.root, None).map_err(failed)?);
                None
            }
            "export" => {
                return Err(Stop::Unsupported(
                    "export: oino-session has no branch export".into(),
                ));
            }
            other => return Err(Stop::Unsupported(format!("operation {other:?}"))),
        };
        if let (Some(id), Some(script)) = (appended, op.get("id").and_then(Value::as_str)) {
            self.ids.insert(script.to_owned(), id);
        }
        Ok(())
    }

    /// The current session's file, when the manager has written it.
    fn file(&mut self) -> Result<PathBuf, Stop> {
        let manager = self.manager()?;
        manager.sync().map_err(failed)?;
        manager
            .session_file()
            .filter(|p| p.is_file())
            .map(Path::to_path_buf)
            .ok_or_else(|| failed("the session has no file yet"))
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args
        .last()
        .filter(|_| args.len() % 2 == 1)
        .map(PathBuf::from)
    else {
        eprintln!("usage: oino-session-writer --pi P OUT < script.ndjson");
        return ExitCode::from(2);
    };
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let root = std::env::temp_dir().join(format!("oino-writer-{}-{nanos}", std::process::id()));
    let mut run = Run {
        root: root.clone(),
        manager: None,
        ids: HashMap::new(),
    };
    let result = (|| {
        let mut script = String::new();
        std::io::stdin()
            .read_to_string(&mut script)
            .map_err(failed)?;
        for (n, line) in script.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let op: Value = serde_json::from_str(line).map_err(failed)?;
            run.apply(&op).map_err(|stop| match stop {
                Stop::Failed(why) => Stop::Failed(format!("line {}: {why}", n + 1)),
                unsupported => unsupported,
            })?;
        }
        if let Some(manager) = run.manager.as_mut() {
            manager.sync().map_err(failed)?;
            if let Some(file) = manager.session_file().filter(|p| p.is_file()) {
                std::fs::copy(file, &out).map_err(failed)?;
            }
        }
        Ok(())
    })();
    drop(run);
    let _ = std::fs::remove_dir_all(&root);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Stop::Unsupported(what)) => {
            eprintln!("oino-session-writer: unsupported: {what}");
            ExitCode::from(3)
        }
        Err(Stop::Failed(why)) => {
            eprintln!("oino-session-writer: {why}");
            ExitCode::FAILURE
        }
    }
}
