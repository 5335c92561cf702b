//! The `repair` target: arbitrary bytes repaired with both pi versions' rules, with and
//! without `--reattach`.

use super::PIS;
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
                assert_eq!(r.output, data, "{pi:?}: no fix, yet the file changed");
                assert!(r.rejects.is_empty(), "{pi:?}: rejects without a fix");
            }
            let again = run_repair(&r.output, &options);
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

/// Nothing is lost: every reject is bytes of the input line it names, as they were in the
/// input; every input line that no fix touched is in the output; the pieces of a split line
/// are the line, byte for byte. In a migrated file, the lines pi parses are pi's rewrite;
/// the others are held to the same rules.
fn lossless(data: &[u8], r: &pi_session_validate::repair::Repaired) {
    let migrated = r.fixes.iter().any(|f| f.action == FixAction::Migrated);
    let output_lines: Vec<&[u8]> = r.output.split(|&b| b == b'\n').collect();
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
        if migrated && pi_session_format::json::parse(&String::from_utf8_lossy(line)).is_ok() {
            continue; // pi's own rewrite
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
