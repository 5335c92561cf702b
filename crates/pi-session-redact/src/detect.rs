//! Finding secrets in one decoded string: the values the user named, the rules whose keywords
//! the string holds (one Aho-Corasick pass finds them all, as gitleaks and ripgrep prefilter
//! before any regex), then the entropy tier; overlapping finds merged into one span.

use crate::entropy;
use crate::rules::RuleSet;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::ops::Range;

/// What found a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finder {
    /// A rule of the rule set (its index).
    Rule(usize),
    /// A value the user named (`--secret`, `--secrets-from`).
    Named,
    /// The entropy tier: a candidate, redacted only when asked.
    Entropy,
}

/// One secret found in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub(crate) span: Range<usize>,
    pub(crate) finder: Finder,
}

/// Buffers a thread reuses from string to string.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The text searched, lower-cased for the keyword automaton.
    lower: Vec<u8>,
    occurrences: Vec<(usize, Range<usize>)>,
    spans: Vec<Range<usize>>,
    /// What [`Detector::find`] found.
    pub(crate) hits: Vec<Hit>,
}

/// The rules, the named values and the keyword automaton, built once per run.
pub(crate) struct Detector {
    rules: &'static RuleSet,
    /// Every rule's keywords, ASCII case-insensitive; a match's pattern index is a keyword.
    keywords: AhoCorasick,
    /// Keyword index → the rules it lets run.
    keyword_rules: Vec<Vec<usize>>,
    /// Rule index → its keywords' indices.
    rule_keywords: Vec<Vec<usize>>,
    /// Keyword index → whether a rule that runs near its keywords has it.
    located: Vec<bool>,
    named: Option<AhoCorasick>,
    /// The generic rules, whose finds give way to a specific rule's.
    generic: Vec<bool>,
}

/// Words of the bit set of rules to run: room for 256 rules (a test checks there are fewer).
const RULE_WORDS: usize = 4;

/// The text every placeholder starts with; a find inside one is not a secret.
pub(crate) const PLACEHOLDER_START: &[u8] = b"[REDACTED:";

impl std::fmt::Debug for Detector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The named values are secrets: never shown.
        f.debug_struct("Detector")
            .field("rules", &self.rules.rules.len())
            .field("named", &self.named.as_ref().map(|n| n.patterns_len()))
            .finish_non_exhaustive()
    }
}

impl Detector {
    /// A detector for `rules` and the user's own `named` values.
    pub(crate) fn new(rules: &'static RuleSet, named: &[Vec<u8>]) -> Detector {
        assert!(
            rules.rules.len() <= RULE_WORDS * 64,
            "more rules than the detector's bit set holds"
        );
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for (index, rule) in rules.rules.iter().enumerate() {
            for keyword in &rule.keywords {
                match words.iter().position(|w| w == keyword) {
                    Some(at) => keyword_rules[at].push(index),
                    None => {
                        words.push(keyword.clone());
                        keyword_rules.push(vec![index]);
                    }
                }
            }
        }
        // A DFA: overlapping keywords (`sk`, `sk_live`) must all be seen, and common ones
        // (`key`, `token`) are everywhere, so no prefilter helps; one transition a byte does.
        // Keywords are lower-case and the text is lower-cased first: a case-sensitive
        // automaton is faster than an ASCII case-insensitive one.
        let keywords = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build(&words)
            .expect("keywords build an automaton");
        let named = (!named.is_empty()).then(|| {
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostLongest)
                .build(named)
                .expect("named values build an automaton")
        });
        let generic = rules
            .rules
            .iter()
            .map(|r| r.id.contains("generic"))
            .collect();
        let mut rule_keywords = vec![Vec::new(); rules.rules.len()];
        for (keyword, rules) in keyword_rules.iter().enumerate() {
            for &rule in rules {
                rule_keywords[rule].push(keyword);
            }
        }
        let located = keyword_rules
            .iter()
            .map(|of| of.iter().any(|&r| rules.rules[r].wants_occurrences()))
            .collect();
        Detector {
            rules,
            keywords,
            keyword_rules,
            rule_keywords,
            located,
            named,
            generic,
        }
    }

    /// The rule set.
    pub(crate) fn rules(&self) -> &'static RuleSet {
        self.rules
    }

    /// Every secret of `text` (and, with `entropy_tier`, every candidate), merged, in order,
    /// into `scratch.hits`.
    pub(crate) fn find(&self, text: &[u8], entropy_tier: bool, scratch: &mut Scratch) {
        let Scratch {
            lower,
            occurrences,
            spans,
            hits,
        } = scratch;
        hits.clear();
        if let Some(named) = &self.named {
            for m in named.find_iter(text) {
                hits.push(Hit {
                    span: m.range(),
                    finder: Finder::Named,
                });
            }
        }
        let mut run = [0u64; RULE_WORDS];
        let mut any = false;
        occurrences.clear();
        lower.clear();
        lower.extend_from_slice(text);
        lower.make_ascii_lowercase();
        for m in self.keywords.find_overlapping_iter(lower.as_slice()) {
            let keyword = m.pattern().as_usize();
            if self.located[keyword] {
                occurrences.push((keyword, m.range()));
            }
            for &rule in &self.keyword_rules[keyword] {
                run[rule / 64] |= 1 << (rule % 64);
            }
            any = true;
        }
        if any {
            // Overlapping matches come by end; windows want them by start.
            occurrences.sort_by_key(|(_, r)| r.start);
            for (index, rule) in self.rules.rules.iter().enumerate() {
                if run[index / 64] & (1 << (index % 64)) == 0 {
                    continue;
                }
                spans.clear();
                if rule.wants_occurrences() {
                    let mine = &self.rule_keywords[index];
                    let near = occurrences
                        .iter()
                        .filter(|(k, _)| mine.contains(k))
                        .map(|(_, r)| r.clone());
                    rule.find_near(text, near, &self.rules.global, spans);
                } else {
                    rule.find(text, &self.rules.global, spans);
                }
                hits.extend(spans.drain(..).map(|span| Hit {
                    span,
                    finder: Finder::Rule(index),
                }));
            }
        }
        self.drop_generic_inside_specific(hits);
        if entropy_tier {
            spans.clear();
            entropy::candidates(text, spans);
            for span in spans.drain(..) {
                if !hits.iter().any(|h| overlaps(&h.span, &span)) {
                    hits.push(Hit {
                        span,
                        finder: Finder::Entropy,
                    });
                }
            }
        }
        drop_inside_placeholders(text, hits);
        merge(hits);
    }

    /// gitleaks' `filter`: a generic rule's find inside a specific rule's is dropped.
    fn drop_generic_inside_specific(&self, hits: &mut Vec<Hit>) {
        let is_generic = |h: &Hit| matches!(h.finder, Finder::Rule(i) if self.generic[i]);
        if !hits.iter().any(is_generic) {
            return;
        }
        let specific: Vec<Range<usize>> = hits
            .iter()
            .filter(|h| !is_generic(h))
            .map(|h| h.span.clone())
            .collect();
        hits.retain(|h| {
            !is_generic(h)
                || !specific
                    .iter()
                    .any(|s| s.start <= h.span.start && h.span.end <= s.end)
        });
    }
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end
}

/// Finds inside a placeholder already there (a file redacted twice) are not secrets. Only a
/// whole placeholder counts (`[REDACTED:rule:h8]`, eight lower-case hex digits), so that text
/// merely mentioning `[REDACTED:` exempts nothing; linear in the text and the hits.
fn drop_inside_placeholders(text: &[u8], hits: &mut Vec<Hit>) {
    if hits.is_empty() || memchr::memmem::find(text, PLACEHOLDER_START).is_none() {
        return;
    }
    let placeholders: Vec<Range<usize>> = memchr::memmem::find_iter(text, PLACEHOLDER_START)
        .filter_map(|start| placeholder_at(text, start).map(|len| start..start + len))
        .collect();
    if placeholders.is_empty() {
        return;
    }
    hits.sort_by_key(|h| h.span.start);
    let mut p = 0;
    hits.retain(|h| {
        while p < placeholders.len() && placeholders[p].end <= h.span.start {
            p += 1;
        }
        !placeholders
            .get(p)
            .is_some_and(|ph| ph.start <= h.span.start && h.span.end <= ph.end)
    });
}

/// The length of the placeholder starting at `start`, if one does: `[REDACTED:`, a rule id
/// (`[a-z0-9-]`, at most 64), `:`, eight lower-case hex digits, `]`.
fn placeholder_at(text: &[u8], start: usize) -> Option<usize> {
    let rest = &text[start + PLACEHOLDER_START.len()..];
    let id = rest
        .iter()
        .take(65)
        .position(|&b| !(b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))?;
    if id == 0 || id > 64 || rest.get(id) != Some(&b':') {
        return None;
    }
    let hash = rest.get(id + 1..id + 9)?;
    let hex = hash
        .iter()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
    (hex && rest.get(id + 9) == Some(&b']')).then_some(PLACEHOLDER_START.len() + id + 10)
}

/// Sorts the hits and merges overlapping ones: the merged span keeps the finder of its first
/// hit that is not a mere candidate.
fn merge(hits: &mut Vec<Hit>) {
    hits.sort_by(|a, b| {
        a.span
            .start
            .cmp(&b.span.start)
            .then(b.span.end.cmp(&a.span.end))
    });
    let mut merged: Vec<Hit> = Vec::with_capacity(hits.len());
    for hit in hits.drain(..) {
        match merged.last_mut() {
            Some(last) if hit.span.start < last.span.end => {
                last.span.end = last.span.end.max(hit.span.end);
                if last.finder == Finder::Entropy {
                    last.finder = hit.finder;
                }
            }
            _ => merged.push(hit),
        }
    }
    *hits = merged;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str, named: &[&str]) -> Vec<(String, &'static str)> {
        let named: Vec<Vec<u8>> = named.iter().map(|s| s.as_bytes().to_vec()).collect();
        let detector = Detector::new(RuleSet::builtin(), &named);
        let mut scratch = Scratch::default();
        detector.find(text.as_bytes(), true, &mut scratch);
        scratch
            .hits
            .into_iter()
            .map(|h| {
                let by = match h.finder {
                    Finder::Rule(i) => RuleSet::builtin().rules[i].id.as_str(),
                    Finder::Named => "named",
                    Finder::Entropy => "entropy",
                };
                (text[h.span].to_owned(), by)
            })
            .collect()
    }

    #[test]
    fn specific_rules_win_over_generic() {
        let text = "export GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr12\n";
        assert_eq!(
            found(text, &[]),
            [(
                "ghp_R4nd0mT0k3nV4lu3Abcdefghijklmnopqr12".to_owned(),
                "github-pat"
            )]
        );
    }

    #[test]
    fn named_values_are_found_anywhere() {
        assert_eq!(
            found("pw is hunter2hunter2!", &["hunter2hunter2"]),
            [("hunter2hunter2".to_owned(), "named")]
        );
    }

    #[test]
    fn placeholders_are_not_found_again() {
        assert!(found("token: [REDACTED:github-pat:0a1b2c3d] and more", &[]).is_empty());
        // Text that only mentions a placeholder exempts nothing.
        let text =
            "const P = b\"[REDACTED:\"; let t = \"ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u\"; v[0]";
        assert_eq!(found(text, &[]).len(), 1);
        assert_eq!(
            found(
                "[REDACTED:x:0123456z] ghp_Q7vK2mX9pL4rT8wN3bY6zH1cJ5dF0gS2aE7u]",
                &[]
            )
            .len(),
            1
        );
    }

    #[test]
    fn url_passwords_and_headers() {
        let hits = found(
            "DATABASE_URL=postgres://app:s3cr3tP4ssw0rd@db.internal:5432/app",
            &[],
        );
        assert_eq!(hits, [("s3cr3tP4ssw0rd".to_owned(), "url-password")]);
        let hits = found("Authorization: Bearer abc123DEF456ghi789JKL012mno", &[]);
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].0, "abc123DEF456ghi789JKL012mno");
    }
}
