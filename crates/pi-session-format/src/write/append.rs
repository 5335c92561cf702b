//! The appends: one method per entry type pi's `SessionManager` appends, each building its
//! line in pi's key order ([`super::build`]) and handing it to [`SessionWriter::push`], which
//! writes it (or keeps it until the first conversation) and undoes everything on failure.

use super::build::{self, EntryLine};
use super::{LeafId, SessionWriter, WriteError, ids, line_key, string_key, system};
use crate::date;
use crate::json::{self, JsObject, JsValue};
use pi_session_fs::Appender;

impl SessionWriter {
    fn next_id(&mut self) -> String {
        let by_id = &self.by_id;
        ids::entry_id(self.ids.as_mut(), |id| by_id.contains_key(&string_key(id)))
    }

    pub(super) fn now(&mut self) -> (i64, String) {
        let now = self.clock.now_ms();
        (now, date::to_iso_string(now as f64))
    }

    /// pi's `_appendEntry`: the line joins the session and becomes the leaf, and is written
    /// (or, before the first conversation, kept in memory). On failure nothing changed.
    fn push(&mut self, entry: EntryLine) -> Result<String, WriteError> {
        let id = entry.id.clone();
        let i = self.lines.len();
        self.lines.push(entry.into_line());
        let (replaced, previous_leaf) = self.index_line(i);
        if let Err(e) = self.persist(i) {
            let line = self.lines.pop().expect("the line just pushed");
            self.user_messages -= usize::from(line.is_message("user"));
            self.assistant_messages -= usize::from(line.is_message("assistant"));
            match replaced {
                Some(previous) => self.by_id.insert(string_key(&id), previous),
                None => self.by_id.remove(&string_key(&id)),
            };
            self.leaf = previous_leaf;
            return Err(e);
        }
        Ok(id)
    }

    fn conversation_started(&self) -> bool {
        self.assistant_messages > 0
            || (self.profile.user_message_starts_file() && self.user_messages > 0)
    }

    /// pi's `_persist`.
    fn persist(&mut self, i: usize) -> Result<(), WriteError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if !self.flushed {
            if !self.conversation_started() {
                return Ok(());
            }
            let content = self.whole_file();
            self.check_source()?;
            self.file = Some(Appender::create_new(path, &content, self.fsync)?);
            self.flushed = true;
            return Ok(());
        }
        let json = std::mem::take(&mut self.lines[i].json);
        let held = self.hold_back(json.bytes());
        self.lines[i].json = json;
        if held {
            return Ok(());
        }
        let Some(path) = &self.path else {
            return Ok(());
        };
        if self.file.is_none() {
            self.file = Some(Appender::open_existing(path, self.fsync)?);
        }
        if let Some(file) = self.file.as_mut() {
            file.append_line(self.lines[i].text())?;
        }
        Ok(())
    }

    fn require_newer(&self, what: &'static str) -> Result<(), WriteError> {
        if self.profile.has_usage_entries() {
            Ok(())
        } else {
            Err(WriteError::Unsupported {
                what,
                profile: self.profile,
            })
        }
    }

    /// Writes the session file now, even before the conversation starts (pi waits for it):
    /// the header and every entry so far. Nothing to do in memory or once written.
    pub fn write_now(&mut self) -> Result<(), WriteError> {
        if self.flushed {
            return Ok(());
        }
        let Some(path) = &self.path else {
            return Ok(());
        };
        let content = self.whole_file();
        self.check_source()?;
        self.file = Some(Appender::create_new(path, &content, self.fsync)?);
        self.flushed = true;
        Ok(())
    }

    /// Appends a whole entry given as a JSON object, for entries built elsewhere (an
    /// importer, `pi-session append`). `id` (a new one), `parentId` (the leaf) and
    /// `timestamp` (now) are filled in when absent, and put where pi puts them (first after
    /// `type`; last for `custom` and `custom_message` entries). A given `id` must be new, a
    /// given `parentId` an existing entry or `null`; a label's target must exist. The rest
    /// is written as given: check it with the validator first.
    pub fn append_entry(&mut self, entry: JsValue) -> Result<String, WriteError> {
        let by_id = &self.by_id;
        let ids = &mut self.ids;
        let clock = &mut self.clock;
        let (line, is_label) = complete_entry(
            entry,
            &|key| by_id.contains_key(key),
            &self.leaf,
            &mut || date::to_iso_string(clock.now_ms() as f64),
            &mut || ids::entry_id(ids.as_mut(), |id| by_id.contains_key(&string_key(id))),
        )?;
        let id = self.push(line)?;
        if is_label {
            let i = self.lines.len() - 1;
            self.index_label(i);
        }
        Ok(id)
    }

    /// Appends a typed message (pi's `appendMessage`); returns its entry id. The message is
    /// written with the members in the order of its type's fields.
    pub fn append_message(
        &mut self,
        message: &crate::types::AgentMessage,
    ) -> Result<String, WriteError> {
        let value = build::to_js(message).map_err(WriteError::BadMessage)?;
        self.append_message_value(&value)
    }

    /// Appends a message given as a JSON value, written exactly as given (key order and
    /// all); it must be an object.
    pub fn append_message_value(&mut self, message: &JsValue) -> Result<String, WriteError> {
        if !matches!(message, JsValue::Object(_)) {
            return Err(WriteError::BadMessage(format!(
                "a message is a JSON object, not {}",
                json::to_string(message)
            )));
        }
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let entry = build::message(&id, &self.leaf, &timestamp, message);
        self.push(entry)
    }

    /// Appends a thinking level change (pi's `appendThinkingLevelChange`).
    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, WriteError> {
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::start("thinking_level_change", &id, &self.leaf, &timestamp);
        e.string("thinkingLevel", level);
        self.push(e.finish(&id))
    }

    /// Appends a model change (pi's `appendModelChange`).
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, WriteError> {
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::start("model_change", &id, &self.leaf, &timestamp);
        e.string("provider", provider).string("modelId", model_id);
        self.push(e.finish(&id))
    }

    /// Appends a `usage` entry (pi 0.87.1+'s `appendUsage`); the note is written when not
    /// empty.
    pub fn append_usage(
        &mut self,
        kind: &str,
        provider: &str,
        model: &str,
        usage: &JsValue,
        note: Option<&str>,
    ) -> Result<String, WriteError> {
        self.require_newer("usage entries")?;
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::start("usage", &id, &self.leaf, &timestamp);
        e.string("kind", kind)
            .string("provider", provider)
            .string("model", model)
            .value("usage", Some(usage));
        if let Some(note) = note.filter(|n| !n.is_empty()) {
            e.string("note", note);
        }
        self.push(e.finish(&id))
    }

    /// Appends a compaction (pi's `appendCompaction`). `first_kept_entry_id` defaults to the
    /// compaction's own id (0.87.1+; 0.73.1 requires it); `None` arguments are not written.
    /// In 0.87.1+ the entry also stores the context's current system message, if any.
    pub fn append_compaction(&mut self, compaction: &Compaction<'_>) -> Result<String, WriteError> {
        if compaction.first_kept_entry_id.is_none() && !self.profile.has_usage_entries() {
            // 0.73.1 would write the entry without the member, which its format requires.
            return Err(WriteError::MissingArgument {
                what: "the compaction's firstKeptEntryId (0.87.1 and later default it to the compaction's own id)",
                profile: self.profile,
            });
        }
        let (now, timestamp) = self.now();
        let system_message = if self.profile.has_usage_entries() {
            let messages = self.context_messages()?;
            system::current_system_message(&messages, now).map_err(WriteError::Type)?
        } else {
            None
        };
        let id = self.next_id();
        let mut e = build::Entry::start("compaction", &id, &self.leaf, &timestamp);
        e.value("summary", Some(&JsValue::string(compaction.summary)));
        match (
            compaction.first_kept_entry_id,
            self.profile.has_usage_entries(),
        ) {
            (Some(kept), _) => e.string("firstKeptEntryId", kept),
            (None, true) => e.string("firstKeptEntryId", &id),
            (None, false) => &mut e,
        };
        e.value(
            "tokensBefore",
            Some(&JsValue::Number(compaction.tokens_before)),
        );
        e.value("details", compaction.details);
        if self.profile.has_usage_entries() {
            e.value("usage", compaction.usage);
        }
        e.value("fromHook", compaction.from_hook.map(JsValue::Bool).as_ref());
        e.value("systemMessage", system_message.as_ref());
        self.push(e.finish(&id))
    }

    /// Appends a custom (extension) entry, which stays out of the context (pi's
    /// `appendCustomEntry`).
    pub fn append_custom_entry(
        &mut self,
        custom_type: &str,
        data: Option<&JsValue>,
    ) -> Result<String, WriteError> {
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::bare("custom");
        e.string("customType", custom_type).value("data", data);
        e.tail(&id, &self.leaf, Some(&JsValue::string(timestamp)));
        self.push(e.finish(&id))
    }

    /// Appends a custom message, which joins the context (pi's `appendCustomMessageEntry`).
    pub fn append_custom_message_entry(
        &mut self,
        custom_type: &str,
        content: &JsValue,
        display: bool,
        details: Option<&JsValue>,
    ) -> Result<String, WriteError> {
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::bare("custom_message");
        e.string("customType", custom_type)
            .value("content", Some(content))
            .value("display", Some(&JsValue::Bool(display)))
            .value("details", details);
        e.tail(&id, &self.leaf, Some(&JsValue::string(timestamp)));
        self.push(e.finish(&id))
    }

    /// Names the session (pi's `appendSessionInfo`): trimmed, and in 0.87.1+ with runs of
    /// newlines as one space; `""` clears the name.
    pub fn append_session_info(&mut self, name: &str) -> Result<String, WriteError> {
        let name = build::session_name(name, self.profile.names_lose_newlines());
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::start("session_info", &id, &self.leaf, &timestamp);
        e.string("name", &name);
        self.push(e.finish(&id))
    }

    /// Sets (`Some`, not empty) or clears (`None` or `""`) the label of an entry (pi's
    /// `appendLabelChange`).
    pub fn append_label_change(
        &mut self,
        target_id: &str,
        label: Option<&str>,
    ) -> Result<String, WriteError> {
        let target = string_key(target_id);
        if !self.by_id.contains_key(&target) {
            return Err(WriteError::NotFound(target_id.to_owned()));
        }
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::start("label", &id, &self.leaf, &timestamp);
        e.string("targetId", target_id);
        if let Some(label) = label {
            e.string("label", label);
        }
        let id = self.push(e.finish(&id))?;
        match label.filter(|l| !l.is_empty()) {
            Some(label) => self.labels.set(
                target,
                JsValue::string(target_id),
                JsValue::string(label),
                Some(JsValue::string(timestamp)),
            ),
            None => self.labels.delete(&target),
        }
        Ok(id)
    }

    /// Appends a context edit (pi 0.87.1+'s `appendContextEdit`): `replacement` is `null`
    /// (drop the target from the context) or `{content}`; a string content of an assistant
    /// or tool result target becomes one text block. The target must be on the active branch.
    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: &JsValue,
    ) -> Result<String, WriteError> {
        self.require_newer("context edits")?;
        let content = replacement.get("content");
        let valid = match replacement {
            JsValue::Null => true,
            JsValue::Object(_) => matches!(content, Some(JsValue::String(_) | JsValue::Array(_))),
            _ => false,
        };
        if !valid {
            return Err(WriteError::BadReplacement);
        }
        // Stricter than pi, which writes any array: only content the format allows.
        if !matches!(replacement, JsValue::Null)
            && let Err(e) = serde_json::from_str::<crate::types::ContextEditReplacement>(
                &crate::session::without_lone_surrogates(&json::to_string(replacement)),
            )
        {
            return Err(WriteError::BadReplacementContent(e.to_string()));
        }
        let Some(&target) = self.by_id.get(&string_key(target_id)) else {
            return Err(WriteError::NotFound(target_id.to_owned()));
        };
        if !self.branch_path(None)?.contains(&target) {
            return Err(WriteError::NotOnBranch(target_id.to_owned()));
        }
        let line = &self.lines[target];
        // A custom message entry, or a message entry of one of the three model roles (a
        // message entry whose role is `custom` is not editable).
        let role = match line.entry_type.as_deref() {
            Some("custom_message") => "custom_message",
            Some("message") => line.role.as_deref().unwrap_or(""),
            _ => "",
        };
        if !matches!(role, "custom_message" | "user" | "assistant" | "toolResult") {
            return Err(WriteError::NotEditable(target_id.to_owned()));
        }
        let normalized = match content {
            Some(JsValue::String(text)) if matches!(role, "assistant" | "toolResult") => {
                Some(build::text_block_replacement(text))
            }
            _ => None,
        };
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::start("context_edit", &id, &self.leaf, &timestamp);
        e.string("targetId", target_id).value(
            "replacement",
            Some(normalized.as_ref().unwrap_or(replacement)),
        );
        self.push(e.finish(&id))
    }

    /// Moves the leaf to `from` (`None`: a new root) and appends a summary of the branch
    /// left behind (pi's `branchWithSummary`). `fromId` is the previous leaf in 0.87.1+
    /// (`"root"` when there was none), the branch point in 0.73.1.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &BranchSummary<'_>,
    ) -> Result<String, WriteError> {
        if let Some(from) = from
            && !self.by_id.contains_key(&string_key(from))
        {
            return Err(WriteError::NotFound(from.to_owned()));
        }
        let branch_point = from.map_or(JsValue::Null, JsValue::string);
        let from_id = if self.profile.branch_summary_names_previous_leaf() {
            match &self.leaf.value {
                None | Some(JsValue::Null) => JsValue::string("root"),
                Some(leaf) => leaf.clone(),
            }
        } else {
            from.map_or_else(|| JsValue::string("root"), JsValue::string)
        };
        let previous_leaf = std::mem::replace(&mut self.leaf, LeafId::named(Some(branch_point)));
        let (_, timestamp) = self.now();
        let id = self.next_id();
        let mut e = build::Entry::start("branch_summary", &id, &self.leaf, &timestamp);
        e.value("fromId", Some(&from_id))
            .value("summary", Some(&JsValue::string(summary.summary)))
            .value("details", summary.details);
        if self.profile.has_usage_entries() {
            e.value("usage", summary.usage);
        }
        e.value("fromHook", summary.from_hook.map(JsValue::Bool).as_ref());
        match self.push(e.finish(&id)) {
            Ok(id) => Ok(id),
            Err(err) => {
                // pi moved the leaf before appending; a failed append leaves it where it was.
                self.leaf = previous_leaf;
                Err(err)
            }
        }
    }
}

/// The arguments of [`SessionWriter::append_compaction`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Compaction<'a> {
    /// The summary of what was compacted.
    pub summary: &'a str,
    /// The first entry kept after the summary.
    pub first_kept_entry_id: Option<&'a str>,
    /// The context's size in tokens before compacting (`tokensBefore`).
    pub tokens_before: f64,
    /// Extension data.
    pub details: Option<&'a JsValue>,
    /// Whether an extension's hook made the summary.
    pub from_hook: Option<bool>,
    /// The summary's model usage (0.87.1+).
    pub usage: Option<&'a JsValue>,
}

/// The arguments of [`SessionWriter::branch_with_summary`].
#[derive(Debug, Clone, Copy, Default)]
pub struct BranchSummary<'a> {
    /// The summary of the branch left behind.
    pub summary: &'a str,
    /// Extension data.
    pub details: Option<&'a JsValue>,
    /// Whether an extension's hook made the summary.
    pub from_hook: Option<bool>,
    /// The summary's model usage (0.87.1+).
    pub usage: Option<&'a JsValue>,
}

/// [`SessionWriter::append_entry`]'s completion of an entry, for any holder of a session:
/// `exists` says whether an id is taken, `leaf` is the current leaf, `now` gives the time
/// (asked only when the entry has none) and `new_id` a fresh id (asked only when it has
/// none). Returns the line and whether it is a label.
pub(super) fn complete_entry(
    entry: JsValue,
    exists: &dyn Fn(&crate::session::Key) -> bool,
    leaf: &LeafId,
    now: &mut dyn FnMut() -> String,
    new_id: &mut dyn FnMut() -> String,
) -> Result<(EntryLine, bool), WriteError> {
    let bad = |why: &str| Err(WriteError::BadEntry(why.to_owned()));
    let JsValue::Object(mut given) = entry else {
        return bad("an entry is a JSON object");
    };
    let entry_type = match given.get("type") {
        Some(JsValue::String(t)) if t.as_wtf8() == b"session" => {
            return bad("a session header cannot be appended; it is the file's first line");
        }
        Some(JsValue::String(t)) => t.to_string_lossy(),
        _ => return bad("an entry has a string `type`"),
    };
    if entry_type == "message" && !matches!(given.get("message"), Some(JsValue::Object(_))) {
        return bad("a message entry has a `message` object");
    }
    let target = given.get("targetId").cloned();
    if entry_type == "label" && !target.as_ref().is_some_and(|t| exists(&line_key(Some(t)))) {
        return Err(WriteError::NotFound(super::id_text(target.as_ref())));
    }
    let id = match given.remove("id") {
        None => new_id(),
        Some(JsValue::String(s)) if !s.is_empty() => {
            let id = s.to_string_lossy();
            if exists(&string_key(&id)) {
                return bad(&format!("the id {id:?} is taken by another entry"));
            }
            id
        }
        Some(_) => return bad("`id` is a non-empty string"),
    };
    // `under_leaf`: no `parentId` given, so the entry leads back to the leaf's line by key.
    let (parent, under_leaf) = match given.remove("parentId") {
        None => (leaf.value.clone(), true),
        Some(JsValue::Null) => (Some(JsValue::Null), false),
        Some(JsValue::String(p)) => {
            let p = p.to_string_lossy();
            if !exists(&string_key(&p)) {
                return Err(WriteError::NotFound(p));
            }
            (Some(JsValue::string(p)), false)
        }
        Some(_) => return bad("`parentId` is a string or null"),
    };
    let timestamp = match given.remove("timestamp") {
        None => JsValue::string(now()),
        Some(t @ JsValue::String(_)) => t,
        Some(_) => return bad("`timestamp` is an ISO 8601 string"),
    };
    let ids_last = matches!(entry_type.as_str(), "custom" | "custom_message");
    let mut out = JsObject::new();
    out.set("type", JsValue::string(entry_type.as_str()));
    let put_ids = |out: &mut JsObject| {
        out.set("id", JsValue::string(id.as_str()));
        if let Some(parent) = parent.clone() {
            out.set("parentId", parent);
        }
        out.set("timestamp", timestamp.clone());
    };
    if !ids_last {
        put_ids(&mut out);
    }
    for (key, value) in given.iter() {
        if key.as_wtf8() != b"type" {
            out.set(key.clone(), value.clone());
        }
    }
    if ids_last {
        put_ids(&mut out);
    }
    let mut line = build::line_of_value(&JsValue::Object(out));
    if under_leaf {
        line.parent = leaf.key.clone();
    }
    Ok((EntryLine::new(id, line), entry_type == "label"))
}
