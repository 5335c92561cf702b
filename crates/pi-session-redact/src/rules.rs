//! The rules: what a secret looks like, read from rule files in gitleaks' format.
//!
//! `rules/gitleaks.toml` is gitleaks' own default configuration, verbatim (v8.30.0; its
//! licence and provenance are in `rules/`), and `rules/project.toml` adds what it does not
//! cover in sessions (see its comments). Both are embedded and read once, on first use.
//!
//! The patterns are RE2 syntax, which the `regex` crate reads but for two things this module
//! mends when it compiles them: a `{` that does not start a repetition (RE2 takes it as a
//! literal, `regex` refuses it) is escaped, and every pattern is compiled with Unicode off, so
//! that `\w`, `\d`, `\s` and `\b` are ASCII as in Go. Patterns run over the bytes of a decoded
//! string (`regex::bytes`), and spans are widened to whole characters before they are cut.
//! Each rule's regex is compiled the first time its keywords are seen.
//!
//! Changed from gitleaks, deliberately: the global allowlist's `(?i)^true|false|null$`, which
//! allows any secret that merely contains `false` or `null`, is read as
//! `(?i)^(?:true|false|null)$`; path-only and path-restricted rules are left out (a session
//! has no file paths to match); `gitleaks:allow` has no effect (a session cannot opt out).

use serde::Deserialize;
use std::sync::OnceLock;

/// Where a rule comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// gitleaks v8.30.0's default configuration (MIT, Copyright (c) 2019 Zachary Rice).
    Gitleaks,
    /// This project's additions (`rules/project.toml`).
    Project,
}

/// One rule: an id, a regex with the secret in it, and what rules a match out.
#[derive(Debug)]
pub struct Rule {
    /// The rule's id, as its file names it (gitleaks' ids are kept unchanged).
    pub id: String,
    /// What it finds.
    pub description: String,
    /// Where it comes from.
    pub origin: Origin,
    /// Lower-case words of which one must be in a string for the regex to run on it.
    pub keywords: Vec<String>,
    pattern: String,
    regex: OnceLock<Result<regex::bytes::Regex, String>>,
    secret_group: Option<usize>,
    /// Shannon entropy (bits per character) the secret must exceed.
    entropy: Option<f64>,
    allowlists: Vec<Allowlist>,
    /// The whole match is the secret (gitleaks' first group is only a piece of it).
    whole_match: bool,
    /// Where the regex can match, near a keyword ([`Rule::find_near`]).
    tail: Option<Tail>,
}

/// What rules a finding out: regexes over the secret, the match or its line, and stopwords.
#[derive(Debug)]
pub(crate) struct Allowlist {
    and: bool,
    target: Target,
    regexes: Vec<regex::bytes::Regex>,
    stopwords: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

/// A match of a rule, before the allowlists.
pub(crate) struct Candidate<'t> {
    /// The span to replace, in the scanned text.
    pub(crate) span: std::ops::Range<usize>,
    /// The secret as gitleaks selects it (its entropy and allowlists are checked on it).
    pub(crate) secret: &'t [u8],
    /// The whole match.
    pub(crate) matched: &'t [u8],
}

impl Rule {
    /// The compiled regex, or why it does not compile (a test compiles every rule).
    pub fn regex(&self) -> Result<&regex::bytes::Regex, &str> {
        self.regex
            .get_or_init(|| compile(&self.pattern))
            .as_ref()
            .map_err(String::as_str)
    }

    /// The matches of the rule in `text` that pass its entropy and allowlists and the
    /// global ones, each with the span to replace.
    pub(crate) fn find(
        &self,
        text: &[u8],
        global: &[Allowlist],
        found: &mut Vec<std::ops::Range<usize>>,
    ) {
        self.find_in(text, 0..text.len(), global, found);
    }

    /// [`Rule::find`] with the keyword occurrences the detector saw (sorted by start): a rule
    /// with a [`Tail`] runs its regex only in windows around the occurrences its tail
    /// allows, which finds the same secrets (a test compares) without running the regex over
    /// all the prose its common keywords (`key`, `token`) are found in.
    pub(crate) fn find_near(
        &self,
        text: &[u8],
        occurrences: impl Iterator<Item = std::ops::Range<usize>>,
        global: &[Allowlist],
        found: &mut Vec<std::ops::Range<usize>>,
    ) {
        let Some(tail) = &self.tail else {
            return self.find(text, global, found);
        };
        let mut window: Option<std::ops::Range<usize>> = None;
        // The last run of value characters walked: a later occurrence inside it ends where it
        // ends (each byte is walked once: `key=key=key=…` is linear).
        let mut walked = 0..0;
        for occurrence in occurrences {
            let Some(m) = tail.regex.find(&text[occurrence.end..]) else {
                continue;
            };
            let start = occurrence.start.saturating_sub(tail.before);
            let mut end = occurrence.end + m.end();
            if walked.contains(&end) {
                end = walked.end;
            } else {
                let from = end;
                while end < text.len() && VALUE[usize::from(text[end])] {
                    end += 1;
                }
                walked = from..end;
            }
            // The delimiter the regex ends with (`\n` is two bytes).
            let end = (end + 2).min(text.len());
            window = match window {
                Some(w) if start <= w.end => Some(w.start..w.end.max(end)),
                Some(w) => {
                    self.find_in(text, w, global, found);
                    Some(start..end)
                }
                None => Some(start..end),
            };
        }
        if let Some(w) = window {
            self.find_in(text, w, global, found);
        }
    }

    /// The rule's finds in `text[range]` (the allowlists see the whole text).
    fn find_in(
        &self,
        text: &[u8],
        range: std::ops::Range<usize>,
        global: &[Allowlist],
        found: &mut Vec<std::ops::Range<usize>>,
    ) {
        let Ok(regex) = self.regex() else { return };
        let offset = range.start;
        let haystack = &text[range];
        let mut locations = regex.capture_locations();
        let mut at = 0;
        while at <= haystack.len() {
            let Some(found_at) = regex.captures_read_at(&mut locations, haystack, at) else {
                break;
            };
            let whole = found_at.range();
            let chosen = match self.secret_group {
                Some(g) => locations.get(g),
                None => (1..locations.len())
                    .filter_map(|g| locations.get(g))
                    .find(|(start, end)| start < end),
            };
            let chosen = chosen.map_or(whole.clone(), |(start, end)| start..end);
            // The next search starts inside this one's secret, not after its match: a value
            // can swallow the name of the next secret (`token=abc… secret,xyz`), which
            // gitleaks' non-overlapping search then misses.
            at = if chosen == whole || self.whole_match {
                whole.end.max(at + 1)
            } else {
                (chosen.start + 1).max(at + 1)
            };
            let mut span = if self.whole_match {
                whole.clone()
            } else {
                chosen.clone()
            };
            // gitleaks trims newlines from a match; a whole match may end in its delimiter.
            while span.end > span.start && matches!(haystack[span.end - 1], b'\n' | b'\r') {
                span.end -= 1;
            }
            if self.whole_match || chosen == whole {
                while span.end > span.start
                    && matches!(
                        haystack[span.end - 1],
                        b'"' | b'\'' | b'`' | b';' | b',' | b' '
                    )
                {
                    span.end -= 1;
                }
            }
            if span.is_empty() {
                continue;
            }
            let span = span.start + offset..span.end + offset;
            let candidate = Candidate {
                span: span.clone(),
                secret: &haystack[chosen],
                matched: &haystack[whole],
            };
            if let Some(threshold) = self.entropy
                && crate::entropy::shannon(candidate.secret) <= threshold
            {
                continue;
            }
            let allowed = |lists: &[Allowlist]| lists.iter().any(|a| a.allows(&candidate, text));
            if allowed(global) || allowed(&self.allowlists) {
                continue;
            }
            found.push(widen_to_chars(text, span));
        }
    }

    /// Whether the detector must tell this rule where its keywords are ([`Rule::find_near`]).
    pub(crate) fn wants_occurrences(&self) -> bool {
        self.tail.is_some()
    }
}

/// What must follow a keyword for a rule to match there, for rules whose keywords are common
/// words: an anchored regex over the text after the keyword, and how far before the keyword
/// a match can start. Derived by hand from the rule's own regex (see [`TAILS`]): every match
/// of the rule holds a keyword followed by text the tail matches.
#[derive(Debug)]
struct Tail {
    regex: regex::bytes::Regex,
    before: usize,
}

/// The tails: `generic-api-key` is `[\w.-]{0,50}?(?:KEYWORD)` then what its tail says, then a
/// value of `[\w.=-]` or `[a-z0-9+/]` characters and a delimiter.
const TAILS: &[(&str, &str, usize)] = &[(
    "generic-api-key",
    r#"^(?i)[ \t\w.-]{0,20}[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}(?:[\w.=-]{10}|[a-z0-9][a-z0-9+/]{11})"#,
    50,
)];

/// The characters of a value (`[\w.=+/-]`): a window around a keyword reaches past them.
static VALUE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] =
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'=' | b'+' | b'/' | b'-');
        b += 1;
    }
    table
};

impl Allowlist {
    fn allows(&self, candidate: &Candidate<'_>, text: &[u8]) -> bool {
        let target: &[u8] = match self.target {
            Target::Secret => candidate.secret,
            Target::Match => candidate.matched,
            Target::Line => line_around(text, &candidate.span),
        };
        let by_regex =
            (!self.regexes.is_empty()).then(|| self.regexes.iter().any(|r| r.is_match(target)));
        let by_stopword = (!self.stopwords.is_empty()).then(|| {
            let secret = candidate.secret.to_ascii_lowercase();
            self.stopwords
                .iter()
                .any(|w| memchr::memmem::find(&secret, w.as_bytes()).is_some())
        });
        if self.and {
            by_regex.unwrap_or(true)
                && by_stopword.unwrap_or(true)
                && (by_regex.is_some() || by_stopword.is_some())
        } else {
            by_regex.unwrap_or(false) || by_stopword.unwrap_or(false)
        }
    }
}

/// The line of `text` holding `span` (gitleaks' `regexTarget = "line"`), at most
/// [`LINE_REACH`] bytes on either side of it: a string of megabytes on one line would make
/// every find's allowlist search the whole string (time as the square of its length); the
/// line allowlists (`import … from`, `LICENSE = "…"`) are about the text next to the secret.
fn line_around<'t>(text: &'t [u8], span: &std::ops::Range<usize>) -> &'t [u8] {
    let from = span.start.saturating_sub(LINE_REACH);
    let to = (span.end + LINE_REACH).min(text.len());
    let start = memchr::memrchr(b'\n', &text[from..span.start]).map_or(from, |i| from + i + 1);
    let end = memchr::memchr(b'\n', &text[span.end..to]).map_or(to, |i| span.end + i);
    &text[start..end]
}

/// How far [`line_around`] looks from a secret.
const LINE_REACH: usize = 1024;

/// `span` widened to whole UTF-8 characters (a regex with Unicode off can stop inside one).
fn widen_to_chars(text: &[u8], mut span: std::ops::Range<usize>) -> std::ops::Range<usize> {
    while span.start > 0 && (text[span.start] & 0xC0) == 0x80 {
        span.start -= 1;
    }
    while span.end < text.len() && (text[span.end] & 0xC0) == 0x80 {
        span.end += 1;
    }
    span
}

/// The rules and the global allowlist.
#[derive(Debug)]
pub struct RuleSet {
    /// Every rule, gitleaks' first, in file order.
    pub rules: Vec<Rule>,
    pub(crate) global: Vec<Allowlist>,
}

/// The rules of gitleaks v8.30.0 (`config/gitleaks.toml`), verbatim.
const GITLEAKS: &str = include_str!("../rules/gitleaks.toml");
/// This project's rules.
const PROJECT: &str = include_str!("../rules/project.toml");

/// Rules whose first capture group is a piece of the secret, not the secret.
const WHOLE_MATCH: &[&str] = &["jwt-base64", "microsoft-teams-webhook"];

impl RuleSet {
    /// The built-in rules, read on first use.
    pub fn builtin() -> &'static RuleSet {
        static RULES: OnceLock<RuleSet> = OnceLock::new();
        RULES.get_or_init(|| {
            let mut set = RuleSet {
                rules: Vec::new(),
                global: Vec::new(),
            };
            set.add(GITLEAKS, Origin::Gitleaks)
                .expect("the embedded gitleaks rules parse (a test checks it)");
            set.add(PROJECT, Origin::Project)
                .expect("the embedded project rules parse (a test checks it)");
            set
        })
    }

    /// The rule with this id.
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// The spans of `text` that `rule` alone would redact (its keywords aside: the caller
    /// asks), after its entropy and allowlists and the global ones.
    pub fn secrets(&self, rule: &Rule, text: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut found = Vec::new();
        rule.find(text, &self.global, &mut found);
        found
    }

    fn add(&mut self, text: &str, origin: Origin) -> Result<(), String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        if let Some(global) = file.allowlist {
            self.global.push(global.build()?);
        }
        for rule in file.rules {
            let (Some(pattern), None) = (rule.regex, rule.path) else {
                continue; // path rules: a session has no file paths to match
            };
            let allowlists = rule
                .allowlists
                .into_iter()
                .chain(rule.allowlist)
                .filter(|a| a.paths.is_empty() || !a.regexes.is_empty() || !a.stopwords.is_empty())
                .map(RawAllowlist::build)
                .collect::<Result<_, _>>()?;
            let tail = match TAILS.iter().find(|(id, _, _)| *id == rule.id) {
                Some((_, pattern, before)) => Some(Tail {
                    regex: compile(pattern)?,
                    before: *before,
                }),
                None => None,
            };
            self.rules.push(Rule {
                tail,
                whole_match: WHOLE_MATCH.contains(&rule.id.as_str()),
                id: rule.id,
                description: rule.description,
                origin,
                keywords: rule.keywords.iter().map(|k| k.to_lowercase()).collect(),
                pattern,
                regex: OnceLock::new(),
                secret_group: rule.secret_group.filter(|&g| g > 0),
                entropy: rule.entropy.filter(|&e| e > 0.0),
                allowlists,
            });
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct File {
    allowlist: Option<RawAllowlist>,
    #[serde(default)]
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    id: String,
    #[serde(default)]
    description: String,
    regex: Option<String>,
    path: Option<String>,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    allowlists: Vec<RawAllowlist>,
    allowlist: Option<RawAllowlist>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAllowlist {
    #[serde(default)]
    condition: Option<String>,
    #[serde(default)]
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
}

impl RawAllowlist {
    fn build(self) -> Result<Allowlist, String> {
        let target = match self.regex_target.as_deref() {
            None | Some("" | "secret") => Target::Secret,
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            Some(other) => return Err(format!("unknown regexTarget {other:?}")),
        };
        let regexes = self
            .regexes
            .iter()
            .map(|p| compile(&fix_global_quirk(p)))
            .collect::<Result<_, _>>()?;
        Ok(Allowlist {
            and: self.condition.as_deref() == Some("AND"),
            target,
            regexes,
            stopwords: self.stopwords.iter().map(|w| w.to_lowercase()).collect(),
        })
    }
}

/// gitleaks' `(?i)^true|false|null$` allows any secret containing `false` or `null`.
fn fix_global_quirk(pattern: &str) -> String {
    if pattern == "(?i)^true|false|null$" {
        "(?i)^(?:true|false|null)$".to_owned()
    } else {
        pattern.to_owned()
    }
}

/// An RE2 pattern compiled as Go reads it: ASCII classes, literal `{`s escaped.
pub(crate) fn compile(pattern: &str) -> Result<regex::bytes::Regex, String> {
    regex::bytes::RegexBuilder::new(&escape_literal_braces(pattern))
        .unicode(false)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// Escapes each `{` outside a class that does not start a repetition `{n}`, `{n,}` or
/// `{n,m}`, and the `}` closing it (RE2 reads both as literals; `regex` refuses them).
fn escape_literal_braces(pattern: &str) -> String {
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut literal_open = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' => {
                // An escape: copy it and the character it escapes.
                let next = pattern[i + 1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&pattern[i..i + 1 + next]);
                i += 1 + next;
                continue;
            }
            b'[' if !in_class => {
                in_class = true;
                out.push('[');
                i += 1;
                // A `]` or `^]` right after the bracket is a literal.
                if bytes.get(i) == Some(&b'^') {
                    out.push('^');
                    i += 1;
                }
                if bytes.get(i) == Some(&b']') {
                    out.push(']');
                    i += 1;
                }
                continue;
            }
            b']' if in_class => in_class = false,
            b'{' if !in_class && !starts_repetition(&bytes[i..]) => {
                out.push_str("\\{");
                literal_open += 1;
                i += 1;
                continue;
            }
            b'}' if !in_class && literal_open > 0 => {
                out.push_str("\\}");
                literal_open -= 1;
                i += 1;
                continue;
            }
            _ => {}
        }
        let len = pattern[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&pattern[i..i + len]);
        i += len;
    }
    out
}

/// Whether `text` (starting at a `{`) is `{n}`, `{n,}` or `{n,m}`.
fn starts_repetition(text: &[u8]) -> bool {
    let Some(close) = text.iter().position(|&b| b == b'}') else {
        return false;
    };
    let inner = &text[1..close];
    let mut parts = inner.splitn(2, |&b| b == b',');
    let first = parts.next().unwrap_or_default();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    !first.is_empty() && digits(first) && parts.next().is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        let set = RuleSet::builtin();
        assert!(set.rules.len() > 200, "{} rules", set.rules.len());
        for rule in &set.rules {
            if let Err(e) = rule.regex() {
                panic!("{}: {e}", rule.id);
            }
            assert!(!rule.keywords.is_empty(), "{} has no keyword", rule.id);
        }
    }

    #[test]
    fn literal_braces_are_escaped_and_repetitions_kept() {
        assert_eq!(
            escape_literal_braces(r"^\$(?:\d+|{\d+})$"),
            r"^\$(?:\d+|\{\d+\})$"
        );
        assert_eq!(escape_literal_braces(r"a{2,3}[{]"), r"a{2,3}[{]");
        assert_eq!(escape_literal_braces(r"\${x}"), r"\$\{x\}");
        assert_eq!(escape_literal_braces(r"a{3}\{"), r"a{3}\{");
    }

    #[test]
    fn the_global_quirk_is_mended() {
        let set = RuleSet::builtin();
        let aws = set.get("aws-access-token").unwrap();
        let mut found = Vec::new();
        // Contains "false": gitleaks' global allowlist would let it through.
        aws.find(b"key AKIAFALSEQ2W3E4R5T6Y end", &set.global, &mut found);
        assert_eq!(found.len(), 1);
    }

    /// Every occurrence of the rule's keywords in `text`, ASCII case-insensitive, by start.
    fn occurrences(rule: &Rule, text: &[u8]) -> Vec<std::ops::Range<usize>> {
        let lower = text.to_ascii_lowercase();
        let mut found = Vec::new();
        for keyword in &rule.keywords {
            for at in memchr::memmem::find_iter(&lower, keyword.as_bytes()) {
                found.push(at..at + keyword.len());
            }
        }
        found.sort_by_key(|r| r.start);
        found
    }

    #[test]
    fn windows_around_keywords_find_what_the_whole_text_finds() {
        const PIECES: &[&str] = &[
            "my",
            "_",
            "-",
            ".",
            " ",
            "\t",
            "\n",
            "\\n",
            "API",
            "api",
            "Api",
            "key",
            "KEY",
            "token",
            "secret",
            "passwd",
            "password",
            "auth",
            "access",
            "credential",
            "creds",
            "=",
            ":",
            ": ",
            "=>",
            ":=",
            "||",
            "?=",
            ",",
            ">",
            "\"",
            "'",
            "`",
            ";",
            "primary",
            "Key",
            "id",
            "the",
            "value",
            "=\"",
            "\": \"",
            "abcdEFGH1234",
            "Zx9q/8+Lw3Rt7YuP",
            "aB3dE6gH9jK2mN5pQ8sT",
            "q9W8e7R6t5Y4u3I2o1P0aSdFgHjKlZxCvBnM1234567890abcdefQWERTYUIOPasdfghjklzxcvbnm==",
            "0123456789",
            "x",
            "é",
            "ünïcode",
            "::",
            "import { a } from 'b'",
        ];
        let rule = RuleSet::builtin().get("generic-api-key").unwrap();
        let global = &RuleSet::builtin().global;
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut compared = 0;
        let mut with_finds = 0;
        for _ in 0..6_000 {
            let len = 1 + next() % 40;
            let text: String = (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let text = text.as_bytes();
            let mut whole = Vec::new();
            rule.find(text, global, &mut whole);
            let mut near = Vec::new();
            rule.find_near(text, occurrences(rule, text).into_iter(), global, &mut near);
            assert_eq!(whole, near, "{:?}", String::from_utf8_lossy(text));
            compared += 1;
            with_finds += usize::from(!whole.is_empty());
        }
        assert!(
            with_finds > 300,
            "{with_finds} of {compared} texts had a find"
        );
    }
}
