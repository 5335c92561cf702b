//! omp's `getSessionStats()` (`session-stats.ts`, `SessionStatsTracker`): the numbers omp's
//! `/session` shows for a resumed session.
//!
//! Where it differs from pi's ([`crate::stats`]):
//!
//! - it counts the messages of the context omp resumes ([`crate::omp::context`]), as pi 0.73.1
//!   does, not every entry of the file;
//! - a `task` tool result adds the usage of the subagent it ran (`details.usage`, when that
//!   is a complete usage object);
//! - the `model_usage` entries of the active window add theirs: the calls omp makes beside
//!   the conversation (titles, summaries, …), from the latest `/clear` or the kept part of the
//!   latest compaction on;
//! - the totals are more: `reasoning` tokens, `premiumRequests`, `credits` (when a usage has
//!   them) and `routedModels` (assistant turns by the model the provider routed them to), and
//!   `tokens.total` adds up each usage's `totalTokens` instead of the four counts.
//!
//! Numbers are added with JavaScript's `+`, in omp's order, so that sums agree to the last bit.
//! Where omp throws (an assistant `content` that is not iterable, a `null` block, a usage
//! without `cost`, …) or would make a string of a sum, the message or entry is counted as
//! [`OmpStats::unreadable`] and its numbers are left out.

use super::context::{self as omp_context, OmpContextError, PathEntry};
use crate::json::{self, JsObject, JsString, JsValue};
use crate::llm::to_js_string;
use crate::session::{Key, Session};
// `+` of a number member, as pi's stats read it.
use crate::stats::{Usage, js_number as plus};
use crate::tree::Leaf;

/// The numbers of one usage object, as omp's `addUsage` reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OmpUsage {
    /// `usage.input`.
    pub input: f64,
    /// `usage.output`.
    pub output: f64,
    /// `usage.reasoningTokens ?? 0`.
    pub reasoning: f64,
    /// `usage.cacheRead`.
    pub cache_read: f64,
    /// `usage.cacheWrite`.
    pub cache_write: f64,
    /// `usage.totalTokens`.
    pub total: f64,
    /// `usage.cost.total`.
    pub cost: f64,
    /// `usage.premiumRequests ?? 0`.
    pub premium_requests: f64,
}

impl OmpUsage {
    /// The counts and cost pi's usage has ([`Usage`]): what the totals over many sessions add.
    pub fn counts(&self) -> Usage {
        Usage {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            cost: self.cost,
        }
    }
}

/// `usage.credits`, added up member by member (`?? 0` each).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Credits {
    /// `credits.cost`.
    pub cost: f64,
    /// `credits.committedCost`.
    pub committed_cost: f64,
    /// `credits.acuCost`.
    pub acu_cost: f64,
}

/// What omp's `getSessionStats()` returns (without the file, the id and the context usage
/// estimate, which needs a tokenizer and a model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OmpStats {
    /// Messages with role `user`.
    pub user_messages: u64,
    /// Messages with role `assistant`.
    pub assistant_messages: u64,
    /// `toolCall` blocks of assistant messages.
    pub tool_calls: u64,
    /// Messages with role `toolResult`.
    pub tool_results: u64,
    /// Every message of the context.
    pub total_messages: u64,
    /// The usage added up.
    pub usage: OmpUsage,
    /// The credits added up, when a usage had `credits`.
    pub credits: Option<Credits>,
    /// Assistant turns (with a usage) by `upstreamModel` (as a property key: `String(model)`),
    /// in the order they were first seen (`to_json` puts them in JavaScript's key order).
    pub routed_models: Vec<(JsString, u64)>,
    /// Messages and entries omp's `getSessionStats` throws on, or whose sum it would make a
    /// string of: their numbers are left out.
    pub unreadable: u64,
}

/// `+ (value ?? 0)`.
fn plus_or_zero(value: Option<&JsValue>) -> Option<f64> {
    match value {
        None | Some(JsValue::Null) => Some(0.0),
        v => plus(v),
    }
}

/// One usage object read as `addUsage` reads it: `None` where it throws (`usage` or
/// `usage.cost` nullish, `credits` null) or makes a string of a sum.
pub(crate) fn read_usage(usage: Option<&JsValue>) -> Option<(OmpUsage, Option<Credits>)> {
    let usage = usage.filter(|u| !matches!(u, JsValue::Null))?;
    // `usage.cost.total`: a primitive `cost` has no `total` (NaN); a nullish one throws.
    let cost = usage.get("cost").filter(|c| !matches!(c, JsValue::Null))?;
    let read = OmpUsage {
        input: plus(usage.get("input"))?,
        output: plus(usage.get("output"))?,
        reasoning: plus_or_zero(usage.get("reasoningTokens"))?,
        cache_read: plus(usage.get("cacheRead"))?,
        cache_write: plus(usage.get("cacheWrite"))?,
        total: plus(usage.get("totalTokens"))?,
        premium_requests: plus_or_zero(usage.get("premiumRequests"))?,
        cost: plus(cost.get("total"))?,
    };
    let credits = match usage.get("credits") {
        None => None,
        Some(JsValue::Null) => return None,
        Some(c) => Some(Credits {
            cost: plus_or_zero(c.get("cost"))?,
            committed_cost: plus_or_zero(c.get("committedCost"))?,
            acu_cost: plus_or_zero(c.get("acuCost"))?,
        }),
    };
    Some((read, credits))
}

/// omp's `isUsage`: an object whose five counts and `cost.total` are numbers.
fn is_usage(value: &JsValue) -> bool {
    let number = |v: Option<&JsValue>| matches!(v, Some(JsValue::Number(_)));
    let cost = value.get("cost");
    matches!(value, JsValue::Object(_))
        && matches!(cost, Some(JsValue::Object(_)))
        && ["input", "output", "cacheRead", "cacheWrite", "totalTokens"]
            .iter()
            .all(|k| number(value.get(k)))
        && number(cost.and_then(|c| c.get("total")))
}

impl OmpStats {
    /// Adds a usage as `addUsage` does; `false` (nothing added) where omp would throw.
    fn add_usage(&mut self, usage: Option<&JsValue>) -> bool {
        let Some((u, credits)) = read_usage(usage) else {
            return false;
        };
        let t = &mut self.usage;
        t.input += u.input;
        t.output += u.output;
        t.reasoning += u.reasoning;
        t.cache_read += u.cache_read;
        t.cache_write += u.cache_write;
        t.total += u.total;
        t.premium_requests += u.premium_requests;
        t.cost += u.cost;
        if let Some(c) = credits {
            let sum = self.credits.get_or_insert_with(Credits::default);
            sum.cost += c.cost;
            sum.committed_cost += c.committed_cost;
            sum.acu_cost += c.acu_cost;
        }
        true
    }

    /// Counts one message of the context; `false` where omp would throw on it.
    pub(crate) fn count_message(&mut self, message: &JsValue) -> bool {
        match message.get("role").and_then(JsValue::as_str) {
            Some("user") => self.user_messages += 1,
            Some("toolResult") => {
                self.tool_results += 1;
                if json::is_str(message.get("toolName"), "task")
                    && let Some(usage) = message
                        .get("details")
                        .and_then(|d| d.get("usage"))
                        .filter(|u| is_usage(u))
                {
                    return self.add_usage(Some(usage));
                }
            }
            Some("assistant") => {
                self.assistant_messages += 1;
                // `for (const content of message.content)`: a string iterates its characters
                // (none a tool call); anything else but an array throws, and so does a
                // nullish block.
                match message.get("content") {
                    Some(JsValue::String(_)) => {}
                    Some(JsValue::Array(blocks)) => {
                        for block in &blocks.0 {
                            if matches!(block, JsValue::Null) {
                                return false;
                            }
                            self.tool_calls +=
                                u64::from(json::is_str(block.get("type"), "toolCall"));
                        }
                    }
                    _ => return false,
                }
                let Some(usage) = message.get("usage").filter(|u| u.is_truthy()) else {
                    return true;
                };
                if !self.add_usage(Some(usage)) {
                    return false;
                }
                if let Some(model) = message.get("upstreamModel") {
                    let key = to_js_string(Some(model));
                    match self.routed_models.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, turns)) => *turns += 1,
                        None => self.routed_models.push((key, 1)),
                    }
                }
            }
            _ => {}
        }
        true
    }

    /// The JSON omp's `getSessionStats()` returns, without `sessionFile`, `sessionId` and
    /// `contextUsage`, members in omp's order (NaN as `null`, as `JSON.stringify` writes it).
    pub fn to_json(&self) -> JsValue {
        let n = JsValue::Number;
        let count = |c: u64| JsValue::Number(c as f64);
        let mut tokens = JsObject::new();
        tokens.set("input", n(self.usage.input));
        tokens.set("output", n(self.usage.output));
        tokens.set("reasoning", n(self.usage.reasoning));
        tokens.set("cacheRead", n(self.usage.cache_read));
        tokens.set("cacheWrite", n(self.usage.cache_write));
        tokens.set("total", n(self.usage.total));
        let mut o = JsObject::new();
        o.set("userMessages", count(self.user_messages));
        o.set("assistantMessages", count(self.assistant_messages));
        o.set("toolCalls", count(self.tool_calls));
        o.set("toolResults", count(self.tool_results));
        o.set("totalMessages", count(self.total_messages));
        o.set("tokens", JsValue::Object(tokens));
        o.set("cost", n(self.usage.cost));
        o.set("premiumRequests", n(self.usage.premium_requests));
        if let Some(c) = &self.credits {
            let mut credits = JsObject::new();
            credits.set("cost", n(c.cost));
            credits.set("committedCost", n(c.committed_cost));
            credits.set("acuCost", n(c.acu_cost));
            o.set("credits", JsValue::Object(credits));
        }
        if !self.routed_models.is_empty() {
            let mut routed = JsObject::new();
            for (model, turns) in &self.routed_models {
                routed.set(model.clone(), count(*turns));
            }
            o.set("routedModels", JsValue::Object(routed));
        }
        JsValue::Object(o)
    }
}

/// The entries that end a usage window (`isUsageWindowBoundary`).
fn is_window_boundary(entry: &PathEntry<'_, '_>) -> bool {
    [
        "message",
        "custom_message",
        "branch_summary",
        "compaction",
        "reset_boundary",
    ]
    .iter()
    .any(|t| entry.type_is(t))
}

/// `activeModelUsageEntries(getBranch())`: the `model_usage` entries of the branch from the
/// latest `/clear`, or from the kept part of the latest compaction (back to the entry after
/// the message before it), on.
fn active_model_usage<'p, 's, 'b>(
    branch: &'p [PathEntry<'s, 'b>],
) -> impl Iterator<Item = &'p PathEntry<'s, 'b>> {
    let compaction = branch.iter().rposition(|e| e.type_is("compaction"));
    let reset = branch.iter().rposition(|e| e.type_is("reset_boundary"));
    let start = match (reset, compaction) {
        (Some(r), c) if c.is_none_or(|c| r > c) => r + 1,
        (_, Some(c)) => {
            let first_kept = branch[c].get("firstKeptEntryId");
            let kept = first_kept.and_then(|k| {
                let key = Key::of(Some(k), u64::MAX);
                branch.iter().position(|e| omp_context::same(e.id(), &key))
            });
            let mut start = kept.unwrap_or(c + 1);
            while start > 0 && !is_window_boundary(&branch[start - 1]) {
                start -= 1;
            }
            start
        }
        _ => 0,
    };
    branch[start..].iter().filter(|e| e.type_is("model_usage"))
}

/// omp's `getSessionStats()` of the session omp resumes ([`Session::omp_stats`]).
pub fn stats(session: &Session<'_>) -> Result<OmpStats, OmpContextError> {
    let context = omp_context::build(session, &Leaf::Current, None)?;
    let mut stats = OmpStats {
        total_messages: context.messages.len() as u64,
        ..OmpStats::default()
    };
    for message in &context.messages {
        if !stats.count_message(message) {
            stats.unreadable += 1;
        }
    }
    let index = session.index();
    if let Some(leaf) = index.leaf_record(session, &Leaf::Current) {
        let missing = Default::default();
        let branch = omp_context::path(session, index, leaf, None, &missing);
        for entry in active_model_usage(&branch) {
            if !stats.add_usage(entry.get("usage")) {
                stats.unreadable += 1;
            }
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dialect, PiVersion};

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;

    /// The stats of a chain of entries (each the parent of the next), read as omp's.
    fn stats_of(entries: &[String]) -> OmpStats {
        let mut lines = vec![HEADER.to_owned()];
        for (i, body) in entries.iter().enumerate() {
            let parent = if i == 0 {
                "null".to_owned()
            } else {
                format!("\"e{}\"", i - 1)
            };
            lines.push(format!(
                r#"{{"id":"e{i}","parentId":{parent},"timestamp":"2026-01-01T00:00:0{}.000Z",{body}}}"#,
                i % 10
            ));
        }
        let bytes = lines.join("\n") + "\n";
        let session = Session::loader(PiVersion::V1_5)
            .dialect(Dialect::Omp)
            .load(bytes.as_bytes())
            .expect("loads");
        session.omp_stats().expect("no unsupported feature")
    }

    fn assistant(content: &str, usage: &str, extra: &str) -> String {
        format!(
            r#""type":"message","message":{{"role":"assistant","content":{content},"usage":{usage},"stopReason":"stop","timestamp":1{extra}}}"#
        )
    }

    const USAGE: &str = r#"{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":100,"cost":{"total":0.5}}"#;

    #[test]
    fn what_omp_throws_on_is_unreadable() {
        let cases = [
            // `usage.cost.total` of a usage without cost.
            assistant(
                "[]",
                r#"{"input":1,"output":1,"cacheRead":0,"cacheWrite":0}"#,
                "",
            ),
            // A null block, and a content that is not iterable.
            assistant(r#"[null]"#, USAGE, ""),
            assistant("{}", USAGE, ""),
            // `credits.cost` of null credits.
            assistant(
                "[]",
                &USAGE.replace(r#""cost":"#, r#""credits":null,"cost":"#),
                "",
            ),
            // A sum `+` would make a string of.
            assistant("[]", &USAGE.replace(r#""input":1"#, r#""input":"1""#), ""),
            // A model_usage entry without a usage.
            r#""type":"model_usage","purpose":"title""#.to_owned(),
        ];
        for case in cases {
            let stats = stats_of(std::slice::from_ref(&case));
            assert_eq!(stats.unreadable, 1, "{case}");
            assert_eq!(stats.usage.cost, 0.0, "{case}: its numbers are left out");
        }
        // A missing or falsy usage is no error: nothing is added.
        for usage in ["null", "0", "false", r#""""#] {
            let stats = stats_of(&[assistant(r#""text""#, usage, "")]);
            assert_eq!(
                (stats.unreadable, stats.assistant_messages),
                (0, 1),
                "{usage}"
            );
        }
    }

    #[test]
    fn totals_add_total_tokens_reasoning_credits_and_routed_models_in_key_order() {
        let with = |extra: &str| USAGE.replace(r#""cost":"#, &format!(r#"{extra},"cost":"#));
        let stats = stats_of(&[
            assistant(
                r#"[{"type":"toolCall","id":"c","name":"ls","arguments":{}},{"type":"text"}]"#,
                &with(r#""reasoningTokens":7,"premiumRequests":1,"credits":{"cost":1}"#),
                r#","upstreamModel":"b""#,
            ),
            r#""type":"message","message":{"role":"toolResult","toolCallId":"c","toolName":"ls","content":[],"timestamp":1}"#.to_owned(),
            assistant("[]", USAGE, r#","upstreamModel":2"#),
            assistant("[]", USAGE, r#","upstreamModel":"b""#),
        ]);
        assert_eq!(stats.usage.total, 300.0, "the sum of totalTokens");
        assert_eq!(stats.usage.reasoning, 7.0);
        assert_eq!(stats.usage.premium_requests, 1.0);
        assert_eq!((stats.tool_calls, stats.tool_results), (1, 1));
        let json = crate::json::to_string(&stats.to_json());
        assert!(
            json.ends_with(r#""credits":{"cost":1,"committedCost":0,"acuCost":0},"routedModels":{"2":1,"b":2}}"#),
            "{json}"
        );
    }

    #[test]
    fn model_usage_counts_from_the_latest_clear_or_the_compaction_s_kept_window() {
        let usage = |input: u32| {
            format!(
                r#""type":"model_usage","purpose":"p","usage":{}"#,
                USAGE.replace(r#""input":1"#, &format!(r#""input":{input}"#))
            )
        };
        let user = r#""type":"message","message":{"role":"user","content":"u","timestamp":1}"#;
        // Before the reset: left out.
        let stats = stats_of(&[
            user.to_owned(),
            usage(1000),
            r#""type":"reset_boundary""#.to_owned(),
            usage(10),
        ]);
        assert_eq!(stats.usage.input, 10.0);
        // The kept part starts at e3; the window back to after the last message (e1).
        let stats = stats_of(&[
            usage(1000),
            user.to_owned(),
            usage(100),
            user.to_owned(),
            r#""type":"compaction","summary":"s","firstKeptEntryId":"e3","tokensBefore":1"#
                .to_owned(),
            usage(1),
        ]);
        assert_eq!(stats.usage.input, 101.0);
    }
}
