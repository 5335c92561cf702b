//! Keeps the diagnostics of a file bounded: a file of a million broken lines must not make
//! a million diagnostics (issue 12, item 4: 11 GB for a 5 MB file).
//!
//! A [`Sink`] lists the first [`LISTED_PER_CODE`] diagnostics of each code; the later ones
//! are only counted, and become one summary diagnostic per code, severity and pi effect
//! ("… and 999,900 more PS0001"), with [`Diagnostic::omitted`] set to their number and the
//! location of the first of them. A few codes that are usually on every line of a file
//! ([`FOLDED`]: CR LF endings, id formats, timestamps) are folded into their first
//! occurrence at once, whose message then names the next lines.
//!
//! The line pass fills one sink per piece of the file, in parallel, and [`Sink::absorb`]s
//! them in file order, which lists exactly the diagnostics a single sink would have.

use super::catalogue::{Code, PiEffect, Severity};
use super::report::{Diagnostic, Location};

/// How many diagnostics of one code a file lists before it only counts them.
pub const LISTED_PER_CODE: usize = 100;

/// Codes reported once per file, with a count, rather than on every line.
pub(crate) const FOLDED: &[Code] = &[Code::CrlfLineEnding, Code::IdFormat, Code::TimestampNotIso];

/// Lines of further occurrences a folded diagnostic names.
const FOLDED_LINES: usize = 5;

/// Occurrences of one code, severity and pi effect that are counted, not listed.
#[derive(Debug)]
struct Omitted {
    code: Code,
    severity: Severity,
    pi: PiEffect,
    first: Option<Location>,
    count: usize,
}

/// A folded code: its first diagnostic (an index in the list) and the later occurrences.
#[derive(Debug)]
struct Folded {
    code: Code,
    index: usize,
    more: usize,
    lines: Vec<usize>,
}

/// A bounded collection of diagnostics (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Sink {
    listed: Vec<Diagnostic>,
    /// How many diagnostics of each code are listed (`Code::ALL` order).
    per_code: Vec<usize>,
    omitted: Vec<Omitted>,
    folded: Vec<Folded>,
}

fn code_index(code: Code) -> usize {
    Code::ALL.iter().position(|c| *c == code).unwrap_or(0)
}

impl Sink {
    /// Adds one diagnostic.
    pub(crate) fn push(&mut self, d: Diagnostic) {
        if FOLDED.contains(&d.code) && d.omitted.is_none() {
            if let Some(f) = self.folded.iter_mut().find(|f| f.code == d.code) {
                f.more += 1;
                if f.lines.len() < FOLDED_LINES {
                    f.lines.push(d.location.map_or(0, |l| l.line));
                }
                return;
            }
            self.folded.push(Folded {
                code: d.code,
                index: self.listed.len(),
                more: 0,
                lines: Vec::new(),
            });
            self.listed.push(d);
            return;
        }
        if self.per_code.is_empty() {
            self.per_code = vec![0; Code::ALL.len()];
        }
        let listed = &mut self.per_code[code_index(d.code)];
        if *listed < LISTED_PER_CODE && d.omitted.is_none() {
            *listed += 1;
            self.listed.push(d);
            return;
        }
        self.count_omitted(d.code, d.severity, d.pi, d.location, d.occurrences());
    }

    fn count_omitted(
        &mut self,
        code: Code,
        severity: Severity,
        pi: PiEffect,
        location: Option<Location>,
        count: usize,
    ) {
        match self
            .omitted
            .iter_mut()
            .find(|o| o.code == code && o.severity == severity && o.pi == pi)
        {
            Some(o) => o.count += count,
            None => self.omitted.push(Omitted {
                code,
                severity,
                pi,
                first: location,
                count,
            }),
        }
    }

    /// Adds every diagnostic of `iter`.
    pub(crate) fn extend(&mut self, iter: impl IntoIterator<Item = Diagnostic>) {
        for d in iter {
            self.push(d);
        }
    }

    /// Adds what `later` collected, as if its diagnostics had been pushed here after ours
    /// (`later` holds the diagnostics of a later part of the file).
    pub(crate) fn absorb(&mut self, later: Sink) {
        let Sink {
            listed,
            omitted,
            folded,
            ..
        } = later;
        let mut folded_at: Vec<Option<&Folded>> = vec![None; listed.len()];
        for f in &folded {
            if let Some(slot) = folded_at.get_mut(f.index) {
                *slot = Some(f);
            }
        }
        for (d, f) in listed.into_iter().zip(folded_at) {
            match f {
                Some(f) => {
                    let line = d.location.map_or(0, |l| l.line);
                    if let Some(mine) = self.folded.iter_mut().find(|m| m.code == f.code) {
                        mine.more += 1 + f.more;
                        let room = FOLDED_LINES.saturating_sub(mine.lines.len());
                        mine.lines.extend(
                            std::iter::once(line)
                                .chain(f.lines.iter().copied())
                                .take(room),
                        );
                    } else {
                        self.folded.push(Folded {
                            code: f.code,
                            index: self.listed.len(),
                            more: f.more,
                            lines: f.lines.clone(),
                        });
                        self.listed.push(d);
                    }
                }
                None => self.push(d),
            }
        }
        for o in omitted {
            self.count_omitted(o.code, o.severity, o.pi, o.first, o.count);
        }
    }

    /// The diagnostics: those listed (folded ones with their count), then one summary per
    /// code, severity and pi effect whose occurrences were only counted.
    pub(crate) fn finish(self) -> Vec<Diagnostic> {
        let Sink {
            mut listed,
            omitted,
            folded,
            ..
        } = self;
        for f in folded {
            if f.more == 0 {
                continue;
            }
            let shown: Vec<String> = f.lines.iter().map(usize::to_string).collect();
            let etc = if f.more > shown.len() { ", …" } else { "" };
            listed[f.index].message.push_str(&format!(
                " (and {} more: line{} {}{etc})",
                f.more,
                if f.more > 1 { "s" } else { "" },
                shown.join(", ")
            ));
        }
        for o in omitted {
            let mut d = Diagnostic::new(
                o.code,
                o.first,
                format!(
                    "… and {} more {} ({}){}: only the first {LISTED_PER_CODE} of a code are listed",
                    o.count,
                    o.code,
                    o.code.info().title,
                    o.first
                        .map(|l| format!(", the first of them on line {}", l.line))
                        .unwrap_or_default(),
                ),
            )
            .with_severity(o.severity)
            .with_pi(o.pi);
            d.omitted = Some(o.count);
            listed.push(d);
        }
        listed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(code: Code, line: usize) -> Diagnostic {
        let location = Location {
            line,
            column: 1,
            offset: line,
            length: 1,
        };
        Diagnostic::new(code, Some(location), format!("line {line}"))
    }

    fn one_sink(ds: &[(Code, usize)]) -> Vec<Diagnostic> {
        let mut sink = Sink::default();
        sink.extend(ds.iter().map(|&(c, l)| at(c, l)));
        sink.finish()
    }

    #[test]
    fn repeated_codes_are_counted_after_the_first_hundred() {
        let ds: Vec<(Code, usize)> = (1..=1000).map(|l| (Code::InvalidJson, l)).collect();
        let out = one_sink(&ds);
        assert_eq!(out.len(), LISTED_PER_CODE + 1);
        let summary = out.last().unwrap();
        assert_eq!(summary.omitted, Some(900));
        assert_eq!(summary.location.unwrap().line, 101);
        assert!(
            summary.message.contains("900 more PS0001"),
            "{}",
            summary.message
        );
        let total: usize = out.iter().map(Diagnostic::occurrences).sum();
        assert_eq!(total, 1000);
    }

    #[test]
    fn pieces_absorbed_in_order_list_what_one_sink_lists() {
        let mut ds = Vec::new();
        for l in 1..=700 {
            ds.push((Code::InvalidJson, l));
            if l % 3 == 0 {
                ds.push((Code::CrlfLineEnding, l));
            }
            if l % 7 == 0 {
                ds.push((Code::NullLine, l));
            }
        }
        let whole = one_sink(&ds);
        for cut in [1, 50, 99, 250, 699] {
            let mut merged = Sink::default();
            for part in ds.chunks(cut) {
                let mut sink = Sink::default();
                sink.extend(part.iter().map(|&(c, l)| at(c, l)));
                merged.absorb(sink);
            }
            assert_eq!(merged.finish(), whole, "pieces of {cut}");
        }
    }

    #[test]
    fn folded_codes_name_their_next_lines() {
        let out = one_sink(&[
            (Code::CrlfLineEnding, 1),
            (Code::CrlfLineEnding, 2),
            (Code::CrlfLineEnding, 3),
        ]);
        assert_eq!(out.len(), 1);
        assert!(
            out[0].message.ends_with("(and 2 more: lines 2, 3)"),
            "{}",
            out[0].message
        );
    }
}
