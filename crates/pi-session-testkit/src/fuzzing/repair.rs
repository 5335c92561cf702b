//! The `repair` target: arbitrary bytes repaired with both pi versions' rules, with and
//! without `--reattach`.

use super::PIS;
use pi_session_format::read;
use pi_session_validate::Code;
use pi_session_validate::repair::{FixAction, RepairOptions, fixability, repair as run_repair};
use std::collections::HashSet;

/// Repairs `data` and checks what repair promises: no panic; a file without fixes comes back
/// byte for byte; a repaired file repairs to itself; nothing is lost (every line no fix
/// touched is in the output, every torn fragment in the rejects); and what pi still loses is
/// only what repair cannot mend (a code it does not fix, one it said it left, or the torn
/// last line it keeps).
pub fn repair(data: &[u8]) {
    for pi in PIS {
        for reattach in [false, true] {
            let options = RepairOptions {
                pi,
                reattach,
                tool_calls: reattach,
                tool_results: reattach,
                ..RepairOptions::default()
            };
            let r = run_repair(data, &options);
            if r.fixes.is_empty() {
                assert_eq!(r.output(), data, "{pi:?}: no fix, yet the file changed");
                assert!(r.rejects.is_empty(), "{pi:?}: rejects without a fix");
            }
            let output = r.output();
            let mut written = Vec::new();
            r.write_output(&mut written)
                .expect("a Vec takes every write");
            assert!(
                written == *output,
                "{pi:?}: the output written differs from the output"
            );
            diff_makes_the_output(&r.diff("f"), data, &output);
            let again = run_repair(&output, &options);
            assert!(
                again.fixes.is_empty(),
                "{pi:?} reattach {reattach}: repairing the repaired file fixes again: {:?} (first: {:?})",
                again.fixes,
                r.fixes
            );
            lossless(data, &r);
            let left: HashSet<Code> = r.unrepaired.iter().map(|u| u.code).collect();
            for d in r.after.pi_breaking() {
                let line = d.location.map(|l| l.line);
                let kept_torn = d.code == Code::InvalidJson && line == r.kept_torn_line;
                let opt_in = fixability(d.code).0 == "opt-in" && !reattach;
                assert!(
                    fixability(d.code).0 == "no"
                        || left.contains(&d.code)
                        || kept_torn
                        || opt_in
                        || d.code == Code::NoHeader,
                    "{pi:?} reattach {reattach}: repair leaves {} ({}) at line {line:?}, a code it fixes; fixes {:?}",
                    d.code.as_str(),
                    d.message,
                    r.fixes
                );
            }
        }
    }
}

/// The diff is one: applied to the input (as a patch tool applies it), it makes the output;
/// and it changes no more lines than a text diff does (but for a lone CR, which a text diff
/// takes for a line's end and pi does not, and bytes that are not UTF-8). A text diff may tell another of two equal lines
/// removed: the diff names the one repair removed.
fn diff_makes_the_output(diff: &str, before: &[u8], after: &[u8]) {
    let (old, new) = (
        String::from_utf8_lossy(before),
        String::from_utf8_lossy(after),
    );
    assert_eq!(
        apply(diff, &old).as_deref(),
        Some(new.as_ref()),
        "the diff does not make the output:\n{diff}"
    );
    // Decoded lossily, two different lines may read alike: compared only as UTF-8 text.
    if before.contains(&b'\r') || std::str::from_utf8(before).is_err() {
        return;
    }
    let text_diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(1)
        .header("f", "f (repaired)")
        .to_string();
    let changed = |diff: &str| {
        diff.lines()
            .filter(|l| l.starts_with(['+', '-']) && !l.starts_with("+++") && !l.starts_with("---"))
            .count()
    };
    assert!(
        changed(diff) <= changed(&text_diff),
        "the diff changes more lines than a text diff:\n{diff}\n---- text diff:\n{text_diff}"
    );
}

/// `diff` applied to `old` as `patch` applies it; `None` when the diff is not one: a line it
/// keeps or removes is not there, a hunk's header does not count its lines or place them, or
/// the "no newline" mark is missing after the old text's unterminated last line or stands
/// anywhere else (the new text always ends in a newline).
fn apply(diff: &str, old: &str) -> Option<String> {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let mut out = String::new();
    let (mut at, mut made) = (0, 0);
    // The lines the current hunk has still to keep or remove, and to keep or add.
    let (mut from, mut to) = (0, 0);
    // Whether the line before was the old text's last, without a newline.
    let mut unterminated = false;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    for line in diff.split_inclusive('\n').skip(2) {
        let marked = line == "\\ No newline at end of file\n";
        if unterminated != marked {
            return None;
        }
        unterminated = false;
        if marked {
            continue;
        }
        if let Some(header) = line.strip_prefix("@@ -") {
            if (from, to) != (0, 0) {
                return None;
            }
            let mut parts = header.split(' ');
            let (start, len) = range(parts.next()?)?;
            let (new_start, new_len) = range(parts.next()?.strip_prefix('+')?)?;
            let start = if len == 0 {
                start
            } else {
                start.checked_sub(1)?
            };
            out.extend(old.get(at..start)?.iter().copied());
            made += start.checked_sub(at)?;
            let placed = if new_len == 0 {
                new_start
            } else {
                new_start.checked_sub(1)?
            };
            if placed != made {
                return None;
            }
            (at, from, to) = (start, len, new_len);
        } else if let Some(text) = line.strip_prefix('+') {
            to = to.checked_sub(1)?;
            out.push_str(text);
            made += 1;
        } else {
            let keep = line.starts_with(' ');
            if !keep && !line.starts_with('-') {
                return None;
            }
            let line_of_old = *old.get(at)?;
            unterminated = !line_of_old.ends_with('\n');
            let as_shown = if unterminated {
                format!("{line_of_old}\n")
            } else {
                line_of_old.to_owned()
            };
            if as_shown != line[1..] {
                return None;
            }
            from = from.checked_sub(1)?;
            if keep {
                to = to.checked_sub(1)?;
                out.push_str(line_of_old);
                made += 1;
            }
            at += 1;
        }
    }
    if unterminated || (from, to) != (0, 0) {
        return None;
    }
    out.extend(old.get(at..)?.iter().copied());
    Some(out)
}

/// Nothing is lost: every reject is bytes of the input line it names, as they were in the
/// input; every input line that no fix touched is in the output; the pieces of a split line
/// are the line, byte for byte. In a migrated file, the lines pi parses are pi's rewrite;
/// the others are held to the same rules.
fn lossless(data: &[u8], r: &pi_session_validate::repair::Repaired) {
    let migrated = r.fixes.iter().any(|f| f.action == FixAction::Migrated);
    let output = r.output();
    let output_lines: Vec<&[u8]> = output.split(|&b| b == b'\n').collect();
    let output: HashSet<&[u8]> = output_lines.iter().copied().collect();
    let input: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    for j in &r.rejects {
        let line = j.line.checked_sub(1).and_then(|i| input.get(i));
        assert!(
            line.is_some_and(|l| contains(l, &j.text)),
            "a reject is not bytes of input line {} as they were: {:?}",
            j.line,
            String::from_utf8_lossy(&j.text[..j.text.len().min(200)])
        );
    }
    for (i, &line) in input.iter().enumerate() {
        let n = i + 1;
        // pi's own rewrite: a line that parses, once the trim of the whole text's ends (pi
        // 0.73) took the blanks off it, as it does off a line that ends up first or last.
        let start = read::trim_start(line);
        let trimmed = &line[start..start + read::trim_end(&line[start..])];
        if migrated && pi_session_format::json::parse(&String::from_utf8_lossy(trimmed)).is_ok() {
            continue;
        }
        // Split or trimmed: what a later fix speaks of is a piece of the line.
        let split = r
            .fixes
            .iter()
            .any(|f| f.line == n && matches!(f.action, FixAction::Split | FixAction::Trimmed));
        if r.fixes
            .iter()
            .any(|f| f.line == n && f.action == FixAction::RemovedRepeat)
        {
            // A repeat of a line that stays (or, for a split line, a piece repeats one).
            // The original may be a piece of an earlier split line, edited since.
            let edited_original = input[..i].iter().enumerate().any(|(j, earlier)| {
                let split_earlier = r
                    .fixes
                    .iter()
                    .any(|f| f.line == j + 1 && f.action == FixAction::Split);
                (*earlier == line || (split_earlier && contains(earlier, line)))
                    && r.fixes.iter().any(|f| {
                        f.line == j + 1
                            && matches!(
                                f.action,
                                FixAction::NewId
                                    | FixAction::Relinked
                                    | FixAction::Reattached
                                    | FixAction::Normalized
                            )
                    })
            });
            assert!(
                split
                    || edited_original
                    || output.contains(line)
                    || r.rejects.iter().any(|j| j.text == line),
                "line {n} was removed as a repeat, but no line of the output or the rejects is the same"
            );
            continue;
        }
        let touched = r.fixes.iter().any(|f| {
            f.line == n
                && matches!(
                    f.action,
                    FixAction::NewId
                        | FixAction::Relinked
                        | FixAction::Reattached
                        | FixAction::Split
                        | FixAction::Trimmed
                        | FixAction::Rejected
                        | FixAction::Normalized
                )
        });
        if touched {
            if r.fixes
                .iter()
                .any(|f| f.line == n && f.action == FixAction::Rejected)
            {
                // The whole line, or (for a split line) a piece of it.
                assert!(
                    r.rejects
                        .iter()
                        .any(|j| j.line == n
                            && (j.text == line || (split && contains(line, &j.text)))),
                    "a rejected line is not in the rejects"
                );
            }
            let edited = r.fixes.iter().any(|f| {
                f.line == n
                    && matches!(
                        f.action,
                        FixAction::NewId
                            | FixAction::Relinked
                            | FixAction::Reattached
                            | FixAction::Normalized
                    )
            });
            if !edited
                && !migrated
                && r.fixes
                    .iter()
                    .any(|f| f.line == n && f.action == FixAction::Split)
            {
                let pieces: Vec<&[u8]> = r
                    .rejects
                    .iter()
                    .filter(|j| j.line == n)
                    .map(|j| j.text.as_slice())
                    .chain(output_lines.iter().copied())
                    .filter(|p| !p.is_empty() && contains(line, p))
                    .collect();
                assert!(
                    tiles(line, &pieces),
                    "a split line is not its pieces in the output and the rejects, byte for byte: {:?}",
                    String::from_utf8_lossy(&line[..line.len().min(200)])
                );
            }
            continue;
        }
        if i + 1 == input.len() && line.is_empty() {
            continue;
        }
        assert!(
            output.contains(line),
            "input line {n} is not in the output, and no fix says why: {:?}",
            String::from_utf8_lossy(&line[..line.len().min(200)])
        );
    }
}

/// Whether `line` is a concatenation of some of `pieces` (each used any number of times).
fn tiles(line: &[u8], pieces: &[&[u8]]) -> bool {
    let mut reachable = vec![false; line.len() + 1];
    reachable[0] = true;
    for at in 0..line.len() {
        if !reachable[at] {
            continue;
        }
        for p in pieces {
            if line[at..].starts_with(p) {
                reachable[at + p.len()] = true;
            }
        }
    }
    reachable[line.len()]
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.len() <= haystack.len() && haystack.windows(needle.len()).any(|w| w == needle)
}
