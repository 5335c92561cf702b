//! Talking to the pinned references: `node conformance/reference/pi-ref.mjs batch` for pi and
//! `bun conformance/reference/omp/omp-ref.ts batch` for oh-my-pi (Bun fetched by
//! `omp/fetch-omp.mjs`), one NDJSON request per line in, one response per line out.

use crate::root;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// One request to the reference.
pub(crate) struct Request<'a> {
    /// `context`, `migrate`, `tree` or `info` (`llm` is `context` with `llm: true`).
    pub op: &'a str,
    /// The session file (absolute path).
    pub file: &'a Path,
    /// Leaf id for `context`.
    pub leaf: Option<&'a str>,
    /// Whether to apply `convertToLlm`.
    pub llm: bool,
    /// `"0.73"`, `"0.87"` or `"1.5"`.
    pub pi: &'a str,
    /// `"pi"` or `"omp"`: which reference answers.
    pub dialect: &'a str,
    /// omp: the blob store of the request (a directory of `<sha256>` files).
    pub blobs: Option<std::path::PathBuf>,
}

/// What the reference answered: its exact output, or the error it threw.
pub(crate) type Response = Result<Vec<u8>, String>;

/// Makes sure `node` and the pinned packages are there (`npm ci` from the lockfile, and pi
/// 1.5.2 fetched by `fetch-pi-1.5.mjs`).
pub(crate) fn ensure_installed() -> Result<(), String> {
    let dir = root().join("conformance/reference");
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err("node is required to run the reference (Node ≥ 20 with npm)".into());
    }
    if !dir.join("node_modules").is_dir() {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .map_err(|e| format!("npm ci: {e}"))?;
        if !status.success() {
            return Err("npm ci failed in conformance/reference".into());
        }
    }
    // pi 1.5.2 is not installable with npm: its tarballs are fetched and checked by this script
    // (which does nothing when they are there already).
    let status = Command::new("node")
        .arg(dir.join("fetch-pi-1.5.mjs"))
        .status()
        .map_err(|e| format!("fetch-pi-1.5.mjs: {e}"))?;
    if !status.success() {
        return Err("conformance/reference/fetch-pi-1.5.mjs failed".into());
    }
    Ok(())
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Makes sure omp's packages and Bun are there (`omp/fetch-omp.mjs`, which does nothing when
/// they are) and returns the Bun binary.
pub(crate) fn ensure_omp_installed() -> Result<std::path::PathBuf, String> {
    let dir = root().join("conformance/reference");
    let status = Command::new("node")
        .arg(dir.join("omp/fetch-omp.mjs"))
        .status()
        .map_err(|e| format!("omp/fetch-omp.mjs: {e} (node is required)"))?;
    if !status.success() {
        return Err("conformance/reference/omp/fetch-omp.mjs failed".into());
    }
    Ok(dir.join("vendor/omp/bun/bin/bun"))
}

/// Runs every request through its dialect's reference, one process per dialect; the
/// responses come back in the order of the requests.
pub(crate) fn batch(requests: &[Request<'_>]) -> Result<Vec<Response>, String> {
    let (omp, pi): (Vec<usize>, Vec<usize>) =
        (0..requests.len()).partition(|&i| requests[i].dialect == "omp");
    let mut responses: Vec<Option<Response>> = vec![None; requests.len()];
    for (indices, dialect) in [(pi, "pi"), (omp, "omp")] {
        if indices.is_empty() {
            continue;
        }
        let part: Vec<&Request<'_>> = indices.iter().map(|&i| &requests[i]).collect();
        let answers = batch_of(&part, dialect)?;
        for (i, answer) in indices.into_iter().zip(answers) {
            responses[i] = Some(answer);
        }
    }
    Ok(responses.into_iter().flatten().collect())
}

/// Runs the requests of one dialect through one reference process, in order.
fn batch_of(requests: &[&Request<'_>], dialect: &str) -> Result<Vec<Response>, String> {
    let mut command = if dialect == "omp" {
        let mut command = Command::new(ensure_omp_installed()?);
        command.arg(root().join("conformance/reference/omp/omp-ref.ts"));
        command
    } else {
        ensure_installed()?;
        let mut command = Command::new("node");
        command.arg(root().join("conformance/reference/pi-ref.mjs"));
        command
    };
    let mut child = command
        .arg("batch")
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the {dialect} reference: {e}"))?;
    let mut input = String::new();
    for r in requests {
        let leaf = r.leaf.map_or("null".to_string(), json_string);
        let file = json_string(&r.file.to_string_lossy());
        let blobs = r
            .blobs
            .as_ref()
            .map_or("null".to_string(), |b| json_string(&b.to_string_lossy()));
        input.push_str(&format!(
            "{{\"op\":{},\"file\":{file},\"leaf\":{leaf},\"llm\":{},\"pi\":{},\"blobs\":{blobs}}}\n",
            json_string(r.op),
            r.llm,
            json_string(r.pi)
        ));
    }
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut responses = Vec::with_capacity(requests.len());
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        let value: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("bad response {line:?}: {e}"))?;
        let response = if value["ok"] == true {
            // The exact bytes: `migrate` output may hold invalid UTF-8.
            use base64::Engine as _;
            let encoded = value["output_b64"]
                .as_str()
                .ok_or_else(|| format!("no output_b64 in {line:?}"))?;
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| e.to_string())
        } else {
            Err(value["error"].as_str().unwrap_or("error").to_string())
        };
        responses.push(response);
    }
    writer
        .join()
        .map_err(|_| "writer panicked")?
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() || responses.len() != requests.len() {
        return Err(format!(
            "the reference answered {} of {} requests ({status})",
            responses.len(),
            requests.len()
        ));
    }
    Ok(responses)
}
