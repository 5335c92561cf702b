//! The invariant the context fast path rests on, checked on every line of the corpus: when
//! the skeleton scanner calls a `message` member canonical, copying its text gives exactly
//! what parsing it and writing it again with `JSON.stringify` semantics gives.

use pi_session_format::json::{parse, scan_skeleton, to_string};
use pi_session_format::read::lines;
use std::path::Path;

#[test]
fn canonical_messages_are_exactly_what_stringify_writes() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/cases");
    let (mut canonical, mut other) = (0usize, 0usize);
    for area in std::fs::read_dir(&cases)
        .expect("the corpus exists")
        .flatten()
    {
        let Ok(dirs) = std::fs::read_dir(area.path()) else {
            continue;
        };
        for case in dirs.flatten() {
            let Ok(bytes) = std::fs::read(case.path().join("session.jsonl")) else {
                continue;
            };
            for line in lines(&bytes) {
                let Ok(skeleton) = scan_skeleton(&line.text) else {
                    continue;
                };
                let Some(message) = skeleton.object.and_then(|m| m.message) else {
                    continue;
                };
                let text = &line.text[message.start..message.end];
                let rewritten = to_string(&parse(text).expect("scanned text parses"));
                if message.canonical {
                    canonical += 1;
                    assert_eq!(rewritten, text, "{}:{}", case.path().display(), line.number);
                } else {
                    other += 1;
                }
            }
        }
    }
    assert!(
        canonical > 1000,
        "only {canonical} canonical messages in the corpus"
    );
    assert!(other > 0, "the corpus has no non-canonical message");
}
