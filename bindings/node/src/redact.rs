//! `redact(path, { out, force, secrets, secretsFrom, key, aggressive, stripSignatures,
//! stripImages })` and `redactBytes(data, { … })`: a session's secrets replaced by
//! `[REDACTED:rule:h8]` (`pi_session_redact::Redactor`), the result still a session pi loads and
//! resumes; the report as `pi-session redact --format json` gives it for a file. `out` is
//! written as the command's `-o` writes it (atomically, never over a file unless `force`);
//! without it nothing is written.

use crate::error::{self, Result, guard, guard_text};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use pi_session_fs::input::Input;
use pi_session_redact::{Key, Options, Redactor, Report};
use std::path::PathBuf;

/// The redactor of the options: named values (and those of `.env` files), the key.
fn redactor(
    secrets: Vec<String>,
    secrets_from: Vec<String>,
    key: Option<Buffer>,
    flags: [bool; 3],
) -> Result<Redactor> {
    let [aggressive, strip_signatures, strip_images] = flags;
    let mut options = Options {
        named: Vec::new(),
        aggressive,
        strip_signatures,
        strip_images,
    };
    for value in secrets {
        options.add_secret(value.as_bytes()).map_err(|e| {
            error::failure("ERR_INVALID_ARG_VALUE", format!("options.secrets: {e}"))
        })?;
    }
    for path in secrets_from {
        let text = std::fs::read(&path)
            .map_err(|e| error::io_error(&e, &format!("options.secretsFrom {path}")))?;
        options.add_env_file(&text);
    }
    let key = match &key {
        Some(bytes) => Key::from_bytes(bytes),
        None => Key::random(),
    }
    .map_err(|e| error::failure("ERR_INVALID_ARG_VALUE", format!("options.key: {e}")))?;
    Ok(Redactor::new(options, key))
}

fn report_json(report: &Report) -> Result<String> {
    serde_json::to_string(report).map_err(|e| error::failure("io", e.to_string()))
}

/// The report of redacting `path` (into `out` when given) as JSON text.
#[allow(clippy::too_many_arguments)]
#[napi(js_name = "redactJson")]
pub fn redact_json(
    path: String,
    out: Option<String>,
    force: Option<bool>,
    secrets: Vec<String>,
    secrets_from: Vec<String>,
    key: Option<Buffer>,
    flags: Vec<bool>,
) -> Result<String> {
    guard_text("the report", || {
        let redactor = redactor(secrets, secrets_from, key, flags_of(&flags))?;
        let path = PathBuf::from(path);
        let input =
            Input::open(&path).map_err(|e| error::io_error(&e, &path.display().to_string()))?;
        let release = |range| input.release(range);
        let report = match out {
            None => redactor
                .redact_releasing(input.bytes(), &mut std::io::sink(), &release)
                .map_err(|e| error::io_error(&e, "redact"))?,
            Some(out) => {
                let out = std::path::Path::new(&out);
                let force = force.unwrap_or(false);
                if !force && std::fs::symlink_metadata(out).is_ok() {
                    return Err(error::failure(
                        "already-exists",
                        format!(
                            "{} exists: pass force to replace it; nothing was written",
                            out.display()
                        ),
                    ));
                }
                let mut report = None;
                pi_session_fs::write_new_with(out, force, |w| {
                    report = Some(redactor.redact_releasing(input.bytes(), w, &release)?);
                    input.verify()
                })
                .map_err(|e| error::failure("io", e))?;
                report.ok_or_else(|| error::failure("io", "nothing was redacted"))?
            }
        };
        input
            .verify()
            .map_err(|e| error::failure("io", format!("{}: {e}", path.display())))?;
        report_json(&report)
    })
}

/// `data` redacted, and the report as JSON text.
#[napi(js_name = "redactBytes")]
pub fn redact_bytes(
    data: Buffer,
    secrets: Vec<String>,
    secrets_from: Vec<String>,
    key: Option<Buffer>,
    flags: Vec<bool>,
) -> Result<(Buffer, String)> {
    guard(|| {
        let redactor = redactor(secrets, secrets_from, key, flags_of(&flags))?;
        let mut out = Vec::with_capacity(data.len());
        let report = redactor
            .redact(&data, &mut out)
            .map_err(|e| error::io_error(&e, "redact"))?;
        Ok((out.into(), report_json(&report)?))
    })
}

/// `[aggressive, stripSignatures, stripImages]`.
fn flags_of(flags: &[bool]) -> [bool; 3] {
    let flag = |i: usize| flags.get(i).copied().unwrap_or(false);
    [flag(0), flag(1), flag(2)]
}
