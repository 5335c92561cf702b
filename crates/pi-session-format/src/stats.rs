//! Tokens, cost and message counts: pi's own per-session numbers ([`Session::stats`], what
//! `AgentSession.getSessionStats()` gives `/session`), and totals over many sessions that
//! count history copied into forked and branched sessions once ([`ledger`]), and the report
//! of them as one document ([`report`]).
//!
//! pi adds usage numbers with JavaScript's `+`, as doubles in file order; so does this module,
//! so that sums agree to the last bit (`1.0647764000000002`). A value `+` would turn into a
//! string, or a missing `usage` or `usage.cost` on which pi throws, makes the entry
//! *unreadable*: it is counted apart ([`SessionStats::unreadable`]) instead of crashing.

pub mod ledger;
pub mod report;

use crate::Session;
use crate::json::{self, JsValue};
use crate::tree::{CycleError, Leaf};

/// Token counts and cost, summed as pi sums them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// `usage.input`.
    pub input: f64,
    /// `usage.output`.
    pub output: f64,
    /// `usage.cacheRead`.
    pub cache_read: f64,
    /// `usage.cacheWrite`.
    pub cache_write: f64,
    /// `usage.cost.total`.
    pub cost: f64,
}

impl Usage {
    /// The four token counts added up, as pi's `tokens.total` is.
    pub fn total_tokens(&self) -> f64 {
        self.input + self.output + self.cache_read + self.cache_write
    }

    /// Reads a `usage` object as pi's `addUsageToTotals` does; `None` where pi would throw
    /// (`usage` or `usage.cost` not an object) or make a string of a sum (a string, object
    /// or array among the numbers).
    pub fn of(usage: Option<&JsValue>) -> Option<Usage> {
        let usage = usage.filter(|u| matches!(u, JsValue::Object(_)))?;
        let cost = usage
            .get("cost")
            .filter(|c| matches!(c, JsValue::Object(_)))?;
        Some(Usage {
            input: js_number(usage.get("input"))?,
            output: js_number(usage.get("output"))?,
            cache_read: js_number(usage.get("cacheRead"))?,
            cache_write: js_number(usage.get("cacheWrite"))?,
            cost: js_number(cost.get("total"))?,
        })
    }

    /// The same numbers with a missing one (NaN) taken as 0: for totals over many sessions,
    /// where one file's missing `cacheRead` should not make every sum NaN as it does pi's.
    pub fn missing_as_zero(self) -> Usage {
        let z = |n: f64| if n.is_nan() { 0.0 } else { n };
        Usage {
            input: z(self.input),
            output: z(self.output),
            cache_read: z(self.cache_read),
            cache_write: z(self.cache_write),
            cost: z(self.cost),
        }
    }

    /// Adds `other`, member by member.
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.cost += other.cost;
    }
}

/// What `total + value` adds to a number in JavaScript: the number, 0 for `null`, 0 or 1 for
/// a boolean, NaN for a missing member; `None` for a value `+` concatenates as a string.
pub(crate) fn js_number(value: Option<&JsValue>) -> Option<f64> {
    match value {
        None => Some(f64::NAN),
        Some(JsValue::Number(n)) => Some(*n),
        Some(JsValue::Null) => Some(0.0),
        Some(JsValue::Bool(b)) => Some(f64::from(u8::from(*b))),
        Some(_) => None,
    }
}

/// pi's `getSessionStats()` for one session (without the file, the id and the context usage).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStats {
    /// Messages with role `user`.
    pub user_messages: u64,
    /// Messages with role `assistant`.
    pub assistant_messages: u64,
    /// `toolCall` blocks of assistant messages.
    pub tool_calls: u64,
    /// Messages with role `toolResult`.
    pub tool_results: u64,
    /// Every message counted (see [`Session::stats`] for which).
    pub total_messages: u64,
    /// Tokens and cost.
    pub usage: Usage,
    /// Entries whose numbers pi cannot add (it throws, or makes a string of the sum); pi's
    /// `/session` fails on such a file. Their numbers are left out.
    pub unreadable: u64,
}

impl SessionStats {
    /// The JSON pi's `getSessionStats()` returns, without `sessionFile`, `sessionId` and
    /// `contextUsage`: `{"userMessages",…,"tokens":{"input",…,"total"},"cost"}` (NaN as
    /// `null`, as `JSON.stringify` writes it).
    pub fn to_json(&self) -> String {
        let mut w = json::JsonWriter::new();
        w.begin_object();
        w.key("userMessages").uint(self.user_messages);
        w.key("assistantMessages").uint(self.assistant_messages);
        w.key("toolCalls").uint(self.tool_calls);
        w.key("toolResults").uint(self.tool_results);
        w.key("totalMessages").uint(self.total_messages);
        w.key("tokens").begin_object();
        w.key("input").number(self.usage.input);
        w.key("output").number(self.usage.output);
        w.key("cacheRead").number(self.usage.cache_read);
        w.key("cacheWrite").number(self.usage.cache_write);
        w.key("total").number(self.usage.total_tokens());
        w.end_object();
        w.key("cost").number(self.usage.cost);
        w.end_object();
        w.as_str().to_owned()
    }

    /// Counts one message (its value) as both pis do; `false` when pi would fail on it.
    fn count_message(&mut self, message: &JsValue, tool_result_usage: bool) -> bool {
        self.total_messages += 1;
        match message.get("role").and_then(JsValue::as_str) {
            Some("user") => self.user_messages += 1,
            Some("toolResult") => {
                self.tool_results += 1;
                if tool_result_usage && message.get("usage").is_some_and(JsValue::is_truthy) {
                    return self.add_usage(message.get("usage"));
                }
            }
            Some("assistant") => {
                self.assistant_messages += 1;
                if let Some(JsValue::Array(content)) = message.get("content") {
                    let mut calls = 0;
                    for block in &content.0 {
                        // `c.type` throws on null and undefined blocks.
                        if matches!(block, JsValue::Null) {
                            return false;
                        }
                        calls += u64::from(json::is_str(block.get("type"), "toolCall"));
                    }
                    self.tool_calls += calls;
                } else if !tool_result_usage {
                    // 0.73.1 calls `content.filter` without a check.
                    return false;
                }
                return self.add_usage(message.get("usage"));
            }
            _ => {}
        }
        true
    }

    fn add_usage(&mut self, usage: Option<&JsValue>) -> bool {
        match Usage::of(usage) {
            Some(u) => {
                self.usage.add(&u);
                true
            }
            None => false,
        }
    }
}

impl Session<'_> {
    /// What pi's `AgentSession.getSessionStats()` returns for this session, with the rules
    /// of [`Session::pi`]:
    ///
    /// - pi 0.73.1 counts the messages of the context it resumes (the current branch, from
    ///   the latest compaction's summary on; custom, bash and summary messages count in
    ///   `total_messages`), tokens and cost from its assistant messages;
    /// - pi 0.87.1 and 1.5.2 count every `message` entry of the file, on every branch, and
    ///   add the usage of assistant messages, of tool results that carry one, of `usage`
    ///   entries and of compactions and branch summaries that carry one.
    ///
    /// Fails only where building the context does (a parent cycle, 0.73.1).
    pub fn stats(&self) -> Result<SessionStats, CycleError> {
        let mut stats = SessionStats::default();
        match self.pi.reads_like_0_87() {
            false => {
                // Values pi 0.73.1 throws on while it opens the file (a `null` line), which
                // we skip (0.87.1 ignores them).
                stats.unreadable += self.skipped.len() as u64;
                for message in self.context(Leaf::Current)?.message_values() {
                    if !stats.count_message(&message, false) {
                        stats.unreadable += 1;
                    }
                }
                // A message entry without a message on the path: pi puts `undefined` or
                // `null` in its context and throws on its role; our context leaves it out.
                let index = self.index();
                if let Some(leaf) = index.leaf_record(self, &Leaf::Current) {
                    for i in index.path(self, leaf)? {
                        let Some(record) = self.records.get(i) else {
                            continue;
                        };
                        if record.entry_type() == Some("message")
                            && record
                                .message_value()
                                .is_none_or(|m| matches!(m, JsValue::Null))
                        {
                            stats.unreadable += 1;
                        }
                    }
                }
            }
            true => {
                for record in self.entry_records() {
                    let ok = match record.entry_type() {
                        Some("usage") => stats.add_usage(record.value().get("usage")),
                        Some("branch_summary" | "compaction") => {
                            let value = record.value();
                            let usage = value.get("usage");
                            !usage.is_some_and(JsValue::is_truthy) || stats.add_usage(usage)
                        }
                        Some("message") => match record.message_value() {
                            Some(message) if !matches!(message, JsValue::Null) => {
                                stats.count_message(&message, true)
                            }
                            // Counted, then `entry.message.role` throws on a missing or
                            // null message.
                            _ => {
                                stats.total_messages += 1;
                                false
                            }
                        },
                        _ => true,
                    };
                    if !ok {
                        stats.unreadable += 1;
                    }
                }
            }
        }
        Ok(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PiVersion;

    const FILE: &[u8] = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"ls","arguments":{}}],"usage":{"input":10,"output":5,"cacheRead":1,"cacheWrite":2,"totalTokens":18,"cost":{"total":0.1}},"stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"ls","content":[],"isError":false,"timestamp":3}}
{"type":"message","id":"b2","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"total":0.2}},"stopReason":"stop","timestamp":4}}
{"type":"usage","id":"u1","parentId":"b2","timestamp":"2026-01-01T00:00:05.000Z","usage":{"input":100,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":100,"cost":{"total":1}}}
"#;

    #[test]
    fn pi_073_counts_the_current_branch() {
        let s = Session::from_bytes(FILE, PiVersion::V0_73).expect("loads");
        let stats = s.stats().expect("no cycle");
        assert_eq!(
            (
                stats.user_messages,
                stats.assistant_messages,
                stats.tool_calls
            ),
            (1, 1, 0)
        );
        assert_eq!(stats.total_messages, 2);
        assert_eq!(stats.usage.cost, 0.2);
    }

    #[test]
    fn pi_087_counts_every_entry() {
        let s = Session::from_bytes(FILE, PiVersion::V0_87).expect("loads");
        let stats = s.stats().expect("no cycle");
        assert_eq!(
            (
                stats.user_messages,
                stats.assistant_messages,
                stats.tool_calls,
                stats.tool_results,
                stats.total_messages
            ),
            (1, 2, 1, 1, 4)
        );
        assert_eq!(stats.usage.input, 111.0);
        assert_eq!(stats.usage.total_tokens(), 120.0);
        assert_eq!(stats.usage.cost, 0.1 + 0.2 + 1.0);
        assert_eq!(stats.unreadable, 0);
        assert!(
            stats
                .to_json()
                .starts_with(r#"{"userMessages":1,"assistantMessages":2,"toolCalls":1"#)
        );
    }

    #[test]
    fn numbers_add_as_in_javascript() {
        let usage =
            json::parse(r#"{"input":null,"output":true,"cacheRead":1.5,"cost":{"total":2}}"#).ok();
        let u = Usage::of(usage.as_ref()).expect("readable");
        assert_eq!((u.input, u.output, u.cache_read), (0.0, 1.0, 1.5));
        assert!(u.cache_write.is_nan(), "a missing member is undefined: NaN");
        let text = json::parse(
            r#"{"input":"5","output":1,"cacheRead":0,"cacheWrite":0,"cost":{"total":0}}"#,
        )
        .ok();
        assert_eq!(Usage::of(text.as_ref()), None, "a string makes a string");
        let no_cost = json::parse(r#"{"input":1,"output":1,"cacheRead":0,"cacheWrite":0}"#).ok();
        assert_eq!(
            Usage::of(no_cost.as_ref()),
            None,
            "pi throws on usage.cost.total"
        );
    }
}
