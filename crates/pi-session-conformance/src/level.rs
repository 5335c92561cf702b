//! How close a reader's output is to pi's: the level an operation reaches, and where two outputs
//! differ, as JSON paths.
//!
//! - **exact**: the same bytes;
//! - **equivalent**: the same JSON values, read as JavaScript reads them (a `migrate` output
//!   line by line): object keys in any order, numbers in any spelling (`1.0`, `1e0`, `1`),
//!   whitespace between tokens and escapes in strings (`\u0041` for `A`) aside. The judgement
//!   says which of these differed;
//! - **structural** (`migrate` and `tree`): equivalent once the ids are renamed consistently
//!   (each output's ids numbered in order of first appearance, in `id`, `parentId`,
//!   `firstKeptEntryId`, `fromId` and `targetId`), so that an implementation that gives a v1
//!   file random ids, as pi does, is judged on the shape it builds.
//!
//! Every output that does not reach the level asked for gets its first differences as JSON
//! paths (`line 3: $.message.content[0].text`), both values shortened around the point where
//! they part.

use pi_session_format::json::{self, JsValue};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

/// A level an output is judged at, from the loosest to the strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The same shape with the ids renamed consistently (`migrate`, `tree`).
    Structural,
    /// The same JSON values.
    Equivalent,
    /// The same bytes.
    Exact,
}

impl Level {
    /// Every level, strictest first.
    pub const ALL: [Level; 3] = [Level::Exact, Level::Equivalent, Level::Structural];

    /// The level's name (`exact`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Structural => "structural",
            Level::Equivalent => "equivalent",
            Level::Exact => "exact",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(text: &str) -> Result<Level, String> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == text)
            .ok_or_else(|| format!("{text:?} is not a level: exact, equivalent or structural"))
    }
}

/// Where two outputs differ: the line (1-based, for line-by-line outputs), the JSON path and
/// both values, shortened around the point where they part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The output's line (1 for a single document).
    pub line: usize,
    /// The JSON path (`$.messages[3].content[0].text`).
    pub path: String,
    /// The expected value there (JSON, shortened), or `(missing)`.
    pub expected: String,
    /// The actual value there (JSON, shortened), or `(missing)`.
    pub actual: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {}\n    expected: {}\n    actual:   {}",
            self.line, self.path, self.expected, self.actual
        )
    }
}

/// What an output reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// The strictest level reached; `None` for none.
    pub level: Option<Level>,
    /// Below exact: what differed besides the values (`key order`, `number spelling`,
    /// `whitespace`, `string escapes`, `ids`), as far as it can be told.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differed: Vec<&'static str>,
    /// Below equivalent: the first differences of the values (at most [`MAX_DIFFERENCES`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// Why the outputs could not be compared as JSON (an output that is not JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_json: Option<String>,
}

/// How many differences a judgement lists.
pub const MAX_DIFFERENCES: usize = 5;

/// Characters of a value shown on each side of the point where two values part.
const SHOWN: usize = 60;

/// The keys whose string values are entry ids, renamed at the structural level.
const ID_KEYS: [&str; 5] = ["id", "parentId", "firstKeptEntryId", "fromId", "targetId"];

/// Judges `actual` against `expected`. `lines`: the output is JSON lines (`migrate`), else
/// one document; `structural`: the structural level applies (`migrate`, `tree`).
pub fn judge(expected: &[u8], actual: &[u8], lines: bool, structural: bool) -> Judgement {
    let mut judgement = Judgement {
        level: None,
        differed: Vec::new(),
        differences: Vec::new(),
        not_json: None,
    };
    if expected == actual {
        judgement.level = Some(Level::Exact);
        return judgement;
    }
    let (expected_values, actual_values) = match (values(expected, lines), values(actual, lines)) {
        (Ok(e), Ok(a)) => (e, a),
        (Err(e), _) => {
            judgement.not_json = Some(format!("the expected output: {e}"));
            return judgement;
        }
        (_, Err(e)) => {
            judgement.not_json = Some(format!("the output is not JSON: {e}"));
            return judgement;
        }
    };
    let mut differences = Vec::new();
    compare_documents(&expected_values, &actual_values, &mut differences);
    if differences.is_empty() {
        judgement.level = Some(Level::Equivalent);
        judgement.differed = byte_differences(expected, actual);
        return judgement;
    }
    if structural {
        let renamed_expected: Vec<JsValue> = renamed(&expected_values);
        let renamed_actual: Vec<JsValue> = renamed(&actual_values);
        let mut structural_differences = Vec::new();
        compare_documents(
            &renamed_expected,
            &renamed_actual,
            &mut structural_differences,
        );
        if structural_differences.is_empty() {
            judgement.level = Some(Level::Structural);
            judgement.differed = vec!["ids"];
            judgement.differences = differences;
            return judgement;
        }
        // Below every level: show where the shapes part, which the ids no longer hide.
        differences = structural_differences;
    }
    judgement.differences = differences;
    judgement
}

/// The JSON values of an output: one per non-blank line (`lines`), or the one document.
fn values(bytes: &[u8], lines: bool) -> Result<Vec<JsValue>, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 ({e})"))?;
    if !lines {
        return json::parse(text.trim())
            .map(|v| vec![v])
            .map_err(|e| e.to_string());
    }
    text.split('\n')
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| json::parse(line.trim()).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// Compares two documents value by value, line by line, into `out` (at most
/// [`MAX_DIFFERENCES`]).
fn compare_documents(expected: &[JsValue], actual: &[JsValue], out: &mut Vec<Difference>) {
    for line in 0..expected.len().max(actual.len()) {
        if out.len() >= MAX_DIFFERENCES {
            return;
        }
        match (expected.get(line), actual.get(line)) {
            (Some(e), Some(a)) => compare(line + 1, "$", e, a, out),
            (e, a) => out.push(Difference {
                line: line + 1,
                path: "$".into(),
                expected: e.map_or_else(|| "(missing)".into(), shown),
                actual: a.map_or_else(|| "(missing)".into(), shown),
            }),
        }
    }
}

/// What is left to do while comparing: two values at a path, or a difference found.
enum Step<'v> {
    Compare(usize, &'v JsValue, &'v JsValue),
    Differ(usize, String, String),
}

/// JSON paths as a tree: each node its parent and its last segment (`.key`, `[3]`), so that a
/// path is written out only for a difference (writing each out would take the square of the
/// depth).
struct Paths(Vec<(usize, String)>);

impl Paths {
    fn child(&mut self, parent: usize, segment: String) -> usize {
        self.0.push((parent, segment));
        self.0.len() - 1
    }

    fn render(&self, mut node: usize) -> String {
        let mut segments = Vec::new();
        while node != 0 {
            segments.push(self.0[node].1.as_str());
            node = self.0[node].0;
        }
        segments.push(self.0[0].1.as_str());
        segments.reverse();
        segments.concat()
    }
}

/// Compares two values at `path`, pushing where they differ, depth first in document order.
/// Iterative: an output nested a million levels deep (a chain's `tree`) is compared without
/// recursion, as the JSON layer parses, writes and drops it.
fn compare(
    line: usize,
    path: &str,
    expected: &JsValue,
    actual: &JsValue,
    out: &mut Vec<Difference>,
) {
    let mut paths = Paths(vec![(0, path.to_owned())]);
    let mut steps = vec![Step::Compare(0, expected, actual)];
    while let Some(step) = steps.pop() {
        if out.len() >= MAX_DIFFERENCES {
            return;
        }
        let (at, expected, actual) = match step {
            Step::Differ(at, expected, actual) => {
                out.push(Difference {
                    line,
                    path: paths.render(at),
                    expected,
                    actual,
                });
                continue;
            }
            Step::Compare(at, expected, actual) => (at, expected, actual),
        };
        // The steps of this node's children, in document order (pushed reversed below).
        let mut children: Vec<Step<'_>> = Vec::new();
        match (expected, actual) {
            (JsValue::Object(e), JsValue::Object(a)) => {
                for (key, value) in e.iter() {
                    let child = paths.child(at, member(key.as_wtf8()));
                    match a.iter().find(|(k, _)| k.as_wtf8() == key.as_wtf8()) {
                        Some((_, other)) => children.push(Step::Compare(child, value, other)),
                        None => {
                            children.push(Step::Differ(child, shown(value), "(missing)".into()))
                        }
                    }
                }
                for (key, value) in a.iter() {
                    if !e.iter().any(|(k, _)| k.as_wtf8() == key.as_wtf8()) {
                        let child = paths.child(at, member(key.as_wtf8()));
                        children.push(Step::Differ(child, "(missing)".into(), shown(value)));
                    }
                }
            }
            (JsValue::Array(e), JsValue::Array(a)) => {
                for i in 0..e.0.len().max(a.0.len()) {
                    let child = paths.child(at, format!("[{i}]"));
                    children.push(match (e.0.get(i), a.0.get(i)) {
                        (Some(x), Some(y)) => Step::Compare(child, x, y),
                        (x, y) => Step::Differ(
                            child,
                            x.map_or_else(|| "(missing)".into(), shown),
                            y.map_or_else(|| "(missing)".into(), shown),
                        ),
                    });
                }
            }
            (JsValue::String(e), JsValue::String(a)) if e.as_wtf8() != a.as_wtf8() => {
                // As JSON, quoted and escaped: a difference in whitespace or a control
                // character shows.
                let (e, a) = (json::to_string(expected), json::to_string(actual));
                let cut = e
                    .char_indices()
                    .zip(a.chars())
                    .find(|((_, x), y)| x != y)
                    .map_or(e.len().min(a.len()), |((i, _), _)| i);
                out.push(Difference {
                    line,
                    path: paths.render(at),
                    expected: around(&e, cut),
                    actual: around(&a, cut.min(a.len())),
                });
            }
            (JsValue::Number(e), JsValue::Number(a)) if !same_number(*e, *a) => {
                out.push(Difference {
                    line,
                    path: paths.render(at),
                    expected: shown(expected),
                    actual: shown(actual),
                });
            }
            (JsValue::Null, JsValue::Null)
            | (JsValue::String(_), JsValue::String(_))
            | (JsValue::Number(_), JsValue::Number(_)) => {}
            (JsValue::Bool(e), JsValue::Bool(a)) if e == a => {}
            _ => out.push(Difference {
                line,
                path: paths.render(at),
                expected: shown(expected),
                actual: shown(actual),
            }),
        }
        steps.extend(children.into_iter().rev());
    }
}

/// Numbers are the same double (NaN never occurs in JSON).
fn same_number(a: f64, b: f64) -> bool {
    a == b
}

/// `.key` for an identifier-like key, else `["key"]`.
fn member(key: &[u8]) -> String {
    let key = String::from_utf8_lossy(key);
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        format!(".{key}")
    } else {
        format!("[{}]", serde_json::Value::String(key.into_owned()))
    }
}

/// A value as JSON, shortened to about twice [`SHOWN`] characters.
fn shown(value: &JsValue) -> String {
    let text = json::to_string(value);
    around(&text, 0)
}

/// `text` shortened to [`SHOWN`] characters on each side of byte `at` (a char boundary).
fn around(text: &str, at: usize) -> String {
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(SHOWN)
        .map_or(0, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .nth(SHOWN)
        .map_or(text.len(), |(i, _)| at + i);
    format!(
        "{}{}{}",
        if start > 0 { "…" } else { "" },
        &text[start..end],
        if end < text.len() { "…" } else { "" }
    )
}

/// The values with every id (the string values of [`ID_KEYS`]) renamed to `#1`, `#2`, … in
/// order of first appearance across the whole output.
fn renamed(values: &[JsValue]) -> Vec<JsValue> {
    let mut names: HashMap<Vec<u8>, usize> = HashMap::new();
    values
        .iter()
        .map(|v| {
            let mut v = v.clone();
            rename(&mut v, &mut names);
            v
        })
        .collect()
}

/// Renames the ids of `value` in document order (depth first, members in order), without
/// recursion.
fn rename(value: &mut JsValue, names: &mut HashMap<Vec<u8>, usize>) {
    // A value to visit, or an id member's value to rename.
    let mut steps: Vec<(bool, &mut JsValue)> = vec![(false, value)];
    while let Some((is_id, value)) = steps.pop() {
        if is_id
            && let JsValue::String(id) = value
            && id.as_wtf8() != b"root"
        {
            let next = names.len() + 1;
            let n = *names.entry(id.as_wtf8().to_vec()).or_insert(next);
            *value = JsValue::string(format!("#{n}"));
            continue;
        }
        match value {
            JsValue::Object(object) => {
                let children: Vec<(bool, &mut JsValue)> = object
                    .iter_mut()
                    .map(|(key, member)| {
                        let is_id = key.as_str().is_some_and(|k| ID_KEYS.contains(&k));
                        (is_id, member)
                    })
                    .collect();
                steps.extend(children.into_iter().rev());
            }
            JsValue::Array(array) => {
                steps.extend(array.0.iter_mut().rev().map(|item| (false, item)));
            }
            _ => {}
        }
    }
}

/// What differs in the bytes of two equivalent outputs, as far as a scan of their tokens can
/// tell.
fn byte_differences(expected: &[u8], actual: &[u8]) -> Vec<&'static str> {
    let mut differed = Vec::new();
    let (e, a) = (without_whitespace(expected), without_whitespace(actual));
    if expected.len() - e.len() != actual.len() - a.len() || (e == a && expected != actual) {
        differed.push("whitespace");
    }
    if e == a {
        return differed;
    }
    let (keys_e, keys_a) = (key_sequence(&e), key_sequence(&a));
    let (mut sorted_e, mut sorted_a) = (keys_e.clone(), keys_a.clone());
    sorted_e.sort();
    sorted_a.sort();
    if keys_e != keys_a && sorted_e == sorted_a {
        differed.push("key order");
    }
    let (mut numbers_e, mut numbers_a) = (number_tokens(&e), number_tokens(&a));
    if differed.contains(&"key order") {
        // Reordered members move their numbers: compare the spellings as sets.
        numbers_e.sort();
        numbers_a.sort();
    }
    if numbers_e != numbers_a {
        differed.push("number spelling");
    }
    let escapes = |b: &[u8]| b.windows(2).filter(|w| w[0] == b'\\').count();
    if escapes(&e) != escapes(&a) {
        differed.push("string escapes");
    }
    differed
}

/// The bytes without whitespace outside strings.
fn without_whitespace(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        if in_string {
            out.push(b);
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if !matches!(b, b' ' | b'\t' | b'\r' | b'\n') {
            if b == b'"' {
                in_string = true;
            }
            out.push(b);
        }
    }
    out
}

/// The object keys in order of appearance (the strings followed by `:`).
fn key_sequence(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            if bytes.get(i) == Some(&b':') {
                keys.push(bytes[start..i.min(bytes.len())].to_vec());
            }
        } else {
            i += 1;
        }
    }
    keys
}

/// The number tokens outside strings, in order.
fn number_tokens(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut numbers = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    let mut current: Vec<u8> = Vec::new();
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E') {
            current.push(b);
            continue;
        }
        if !current.is_empty() {
            numbers.push(std::mem::take(&mut current));
        }
        if b == b'"' {
            in_string = true;
        }
    }
    if !current.is_empty() {
        numbers.push(current);
    }
    numbers
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(e: &str, a: &str, lines: bool, structural: bool) -> Judgement {
        judge(e.as_bytes(), a.as_bytes(), lines, structural)
    }

    #[test]
    fn the_same_bytes_are_exact() {
        let j = level(r#"{"a":1}"#, r#"{"a":1}"#, false, false);
        assert_eq!(j.level, Some(Level::Exact));
        assert!(j.differed.is_empty() && j.differences.is_empty());
    }

    #[test]
    fn key_order_alone_is_equivalent_and_said() {
        let j = level(r#"{"a":1,"b":[2]}"#, r#"{"b":[2],"a":1}"#, false, false);
        assert_eq!(j.level, Some(Level::Equivalent));
        assert_eq!(j.differed, ["key order"]);
    }

    #[test]
    fn number_spelling_alone_is_equivalent_and_said() {
        let j = level(r#"{"a":1,"b":0.5}"#, r#"{"a":1.0,"b":5e-1}"#, false, false);
        assert_eq!(j.level, Some(Level::Equivalent));
        assert_eq!(j.differed, ["number spelling"]);
    }

    #[test]
    fn whitespace_and_escapes_alone_are_equivalent_and_said() {
        let j = level("{\"a\":\"A\"}", "{ \"a\" : \"\\u0041\" }\n", false, false);
        assert_eq!(j.level, Some(Level::Equivalent));
        assert_eq!(j.differed, ["whitespace", "string escapes"]);
    }

    #[test]
    fn renamed_ids_are_structural_for_the_ops_that_allow_it() {
        let e = "{\"type\":\"message\",\"id\":\"00000001\",\"parentId\":null}\n{\"type\":\"message\",\"id\":\"00000002\",\"parentId\":\"00000001\"}\n";
        let a = "{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null}\n{\"type\":\"message\",\"id\":\"ffee0011\",\"parentId\":\"a1b2c3d4\"}\n";
        let j = level(e, a, true, true);
        assert_eq!(j.level, Some(Level::Structural));
        assert_eq!(j.differed, ["ids"]);
        assert_eq!(j.differences[0].path, "$.id");
        // Not for the others.
        assert_eq!(level(e, a, true, false).level, None);
        // Ids renamed inconsistently (the child points at an id that is not its parent's).
        let wrong = a.replace("\"parentId\":\"a1b2c3d4\"", "\"parentId\":\"99999999\"");
        let j = level(e, &wrong, true, true);
        assert_eq!(j.level, None);
        assert_eq!(j.differences[0].line, 2);
        assert_eq!(j.differences[0].path, "$.parentId");
    }

    #[test]
    fn a_real_difference_is_shown_as_a_path_with_both_values() {
        let e =
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hello world"}]}]}"#;
        let a =
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"hello there"}]}]}"#;
        let j = level(e, a, false, false);
        assert_eq!(j.level, None);
        assert_eq!(
            j.differences,
            [Difference {
                line: 1,
                path: "$.messages[0].content[0].text".into(),
                expected: "\"hello world\"".into(),
                actual: "\"hello there\"".into(),
            }]
        );
    }

    #[test]
    fn missing_members_items_and_lines_are_named() {
        let j = level(r#"{"a":[1,2],"b":1}"#, r#"{"a":[1],"c":1}"#, false, false);
        let paths: Vec<&str> = j.differences.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(paths, ["$.a[1]", "$.b", "$.c"]);
        assert_eq!(j.differences[0].actual, "(missing)");
        let j = level("{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}\n", true, false);
        assert_eq!(j.differences[0].line, 2);
        assert_eq!(j.differences[0].actual, "(missing)");
    }

    #[test]
    fn long_values_are_shortened_around_the_difference() {
        let e = format!("{{\"t\":\"{}x{}\"}}", "a".repeat(500), "b".repeat(500));
        let a = format!("{{\"t\":\"{}y{}\"}}", "a".repeat(500), "b".repeat(500));
        let j = level(&e, &a, false, false);
        let d = &j.differences[0];
        assert!(
            d.expected.starts_with('…') && d.expected.ends_with('…'),
            "{d}"
        );
        assert!(d.expected.contains("ax") && d.actual.contains("ay"), "{d}");
        assert!(d.expected.chars().count() < 2 * SHOWN + 4, "{d}");
    }

    #[test]
    fn output_that_is_not_json_is_said() {
        let j = level(r#"{"a":1}"#, "oops", false, false);
        assert_eq!(j.level, None);
        assert!(j.not_json.unwrap().contains("not JSON"));
    }

    #[test]
    fn lone_surrogates_are_compared_as_javascript_reads_them() {
        let e = r#"{"t":"\ud800"}"#;
        assert_eq!(
            level(e, r#"{"t":"\uD800"}"#, false, false).level,
            Some(Level::Equivalent)
        );
        assert_eq!(level(e, r#"{"t":"\ud801"}"#, false, false).level, None);
    }

    #[test]
    fn deeply_nested_outputs_are_judged_without_recursion() {
        let depth = 100_000;
        let tree = |leaf: &str| {
            format!(
                "{}{{\"id\":\"{leaf}\",\"children\":[]}}{}",
                "{\"id\":\"x\",\"children\":[".repeat(depth),
                "]}".repeat(depth)
            )
        };
        let (e, a) = (tree("00000001"), tree("ffffffff"));
        // On a thread of 256 KiB: a recursive comparison would overflow it at once.
        let judged = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || judge(e.as_bytes(), a.as_bytes(), false, true))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(judged.level, Some(Level::Structural));
    }

    #[test]
    fn levels_read_and_order() {
        assert!(Level::Exact > Level::Equivalent && Level::Equivalent > Level::Structural);
        assert_eq!("equivalent".parse::<Level>(), Ok(Level::Equivalent));
        assert!("loose".parse::<Level>().is_err());
    }
}
