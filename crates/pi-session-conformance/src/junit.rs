//! A run as JUnit XML (`conformance run --format junit`), the report CI systems show as tests:
//! one `<testsuite>` per area, one `<testcase>` per operation of a case (`name` is
//! `case [op]`), a `<failure>` with [`run::explain`]'s text for each
//! operation below the level asked for.

use crate::run::{self, Report};
use pi_session_format::export::html;
use std::collections::BTreeMap;

/// The report as a JUnit XML document.
pub fn junit(report: &Report) -> String {
    let mut areas: BTreeMap<&str, Vec<&run::OpResult>> = BTreeMap::new();
    for result in &report.results {
        let area = result.case.split('/').next().unwrap_or_default();
        areas.entry(area).or_default().push(result);
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"pi-session conformance ({})\" tests=\"{}\" failures=\"{}\">\n",
        escaped(&report.implementation),
        report.results.len(),
        report.failed
    ));
    for (area, results) in areas {
        let failures = results.iter().filter(|r| !r.passed).count();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">\n",
            escaped(area),
            results.len()
        ));
        for r in results {
            let name = format!("{} [{}]", r.case, r.op);
            if r.passed {
                xml.push_str(&format!(
                    "    <testcase classname=\"{}\" name=\"{}\"/>\n",
                    escaped(area),
                    escaped(&name)
                ));
                continue;
            }
            let reached = r.level.map_or("no level".to_owned(), |l| l.to_string());
            xml.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{}\">\n      <failure message=\"reached {} (needs {})\">{}</failure>\n    </testcase>\n",
                escaped(area),
                escaped(&name),
                escaped(&reached),
                report.level,
                escaped(&run::explain(r))
            ));
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Text fit for XML content and attributes: the characters XML 1.0 does not allow (control
/// characters but tab, newline and carriage return; U+FFFE, U+FFFF) shown as `\u{…}`, then
/// the markup characters escaped as the HTML export escapes them
/// ([`pi_session_format::export::html::escape`]: its `&#39;` is XML too).
fn escaped(text: &str) -> String {
    let allowed = |c: char| {
        (matches!(c, '\t' | '\n' | '\r') || (c as u32) >= 0x20)
            && c != '\u{fffe}'
            && c != '\u{ffff}'
    };
    if text.chars().all(allowed) {
        return html::escape(text);
    }
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if allowed(c) {
            shown.push(c);
        } else {
            shown.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    html::escape(&shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_and_forbidden_characters_are_escaped() {
        assert_eq!(escaped("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(escaped("x\u{1}y\tz"), "x\\u{1}y\tz");
    }
}
