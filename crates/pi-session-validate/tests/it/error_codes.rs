//! The library's errors name themselves with codes the bindings pass on as they are: where a
//! code is a diagnostic code, it is the catalogue's, for the same failure the validator reports.

use pi_session_format::{Dialect, PiVersion, Session};
use pi_session_validate::{Code, Options, validate};

/// The diagnostic codes the validator reports for `bytes`.
fn diagnostics(bytes: &[u8]) -> Vec<String> {
    let options = Options {
        pi: PiVersion::V0_87,
        path: None,
        schema_only: false,
        max_text_units: pi_session_validate::PI_MAX_TEXT_UNITS,
        dialect: Dialect::Pi,
        blobs: None,
        release: None,
        read_at: None,
    };
    validate(bytes, &options)
        .diagnostics
        .iter()
        .map(|d| d.code.as_str().to_owned())
        .collect()
}

#[test]
fn a_load_error_s_code_is_the_diagnostic_the_validator_reports() {
    for bytes in [
        &b""[..],
        b"\n\n",
        b"not json\n",
        b"[1,2]\n",
        b"{\"type\":\"message\"}\n",
    ] {
        let error = Session::from_bytes(bytes, PiVersion::V0_87).unwrap_err();
        let code = error.code();
        assert!(
            Code::parse(code).is_some(),
            "{code} is not in the catalogue"
        );
        assert!(
            diagnostics(bytes).iter().any(|d| d == code),
            "{:?}: load error {code}, diagnostics {:?}",
            String::from_utf8_lossy(bytes),
            diagnostics(bytes)
        );
    }
}

#[test]
fn a_cycle_s_code_is_the_diagnostic_the_validator_reports() {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let entry = |id: &str, parent: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"x","timestamp":1}}}}"#
        )
    };
    for lines in [
        vec![entry("a", "b"), entry("b", "a")],
        vec![entry("a", "a")],
    ] {
        let text = format!("{header}\n{}\n", lines.join("\n"));
        let session = Session::from_bytes(text.as_bytes(), PiVersion::V0_87).unwrap();
        let error = session
            .context(pi_session_format::Leaf::Current)
            .unwrap_err();
        let code = error.code();
        assert!(
            diagnostics(text.as_bytes()).iter().any(|d| d == code),
            "cycle {code}, diagnostics {:?}",
            diagnostics(text.as_bytes())
        );
    }
}
