//! `pi-session redact`: sessions with their secrets replaced by placeholders, still pi
//! sessions (the library's [`pi_session_redact::Redactor`]); written to standard output, to
//! `-o OUT` (atomically, never over a file without `--force`) or in place (through
//! [`crate::replace`]), or only reported (`--dry-run`). The report names rules and places,
//! never a secret.

use crate::display;
use crate::replace::{self, Job, Snapshot};
use crate::validate::targets::{self, Target};
use clap::{Args, ValueEnum};
use pi_session_redact::{Finding, Key, MIN_NAMED_LEN, Options, Redactor, Report};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const AFTER_HELP: &str = "\
What is found, in every string of every line (decoded first; JSON inside a string as JSON):
  - known formats: gitleaks' rules (v8.30.0, MIT, Copyright (c) 2019 Zachary Rice) and a few
    of this project's (AWS secret keys, passwords in URLs, Authorization headers, bearer
    tokens, Anthropic OAuth tokens);
  - the values of --secret and --secrets-from (a .env or any KEY=VALUE file: the values,
    never the names);
  - long random-looking tokens no rule names: candidates, reported, replaced only with
    --aggressive. Hex hashes, git SHAs, UUIDs and base64 images are never candidates.
Each becomes [REDACTED:rule:h8], h8 a hash of the secret keyed by a random key (or
--key-file's): the same secret gives the same placeholder in every file of the run.
Ids, parents, types, timestamps, roles and usage never change: pi loads and resumes the
redacted file as it did the original.

Output: one file to standard output (the report on stderr), -o OUT, or --in-place
(atomically; refuses hard-linked and read-only files unless --force; --backup keeps
FILE.bak). --dry-run only reports.

Exit codes: 0 nothing redacted; 1 something was redacted (or would be, in a dry run), or a
file could not be read or written (said on stderr); 2 usage error.";

/// The arguments of `pi-session redact`.
#[derive(Args)]
#[command(after_long_help = AFTER_HELP)]
pub(crate) struct RedactArgs {
    /// Session files and directories (walked for `*.jsonl`); `-` reads standard input.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Write the redacted file to OUT (one input; OUT must not exist unless --force).
    #[arg(short, long, value_name = "OUT", conflicts_with_all = ["in_place", "dry_run"])]
    out: Option<PathBuf>,
    /// Replace each file with its redacted version, atomically (files with nothing to
    /// redact are left alone).
    #[arg(long, conflicts_with = "dry_run")]
    in_place: bool,
    /// With --in-place: keep the original as FILE.bak (never overwritten: refused when it
    /// exists, FILE.bak.1, .2, … with --force).
    #[arg(long, requires = "in_place")]
    backup: bool,
    /// Overwrite OUT; with --in-place, replace hard-linked or read-only files and back up to
    /// FILE.bak.N when FILE.bak exists.
    #[arg(long)]
    force: bool,
    /// Report what would be redacted; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Output format of the report.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    redaction: RedactionArgs,
    /// Follow symbolic links to directories while walking a directory.
    #[arg(long)]
    follow: bool,
}

/// What to find and how to replace it: `redact`'s options, which `export --redact` shares.
#[derive(Args, Clone)]
pub(crate) struct RedactionArgs {
    /// A value to redact wherever it is (repeatable; at least 4 bytes).
    #[arg(long, value_name = "VALUE")]
    secret: Vec<String>,
    /// A file of KEY=VALUE lines (a .env file): each value is redacted wherever it is.
    #[arg(long, value_name = "FILE")]
    secrets_from: Vec<PathBuf>,
    /// The key placeholders are made with (at least 16 bytes), so that runs sharing it give
    /// the same placeholder for the same secret (default: a random key per run).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Also redact the candidates of the entropy tier.
    #[arg(long)]
    aggressive: bool,
    /// Empty the providers' opaque signatures (`thinkingSignature`, `textSignature`,
    /// `thoughtSignature`).
    #[arg(long)]
    strip_signatures: bool,
    /// Replace every image by a 1×1 PNG.
    #[arg(long)]
    strip_images: bool,
}

impl RedactionArgs {
    /// Whether any of the options was given.
    pub(crate) fn given(&self) -> bool {
        !self.secret.is_empty()
            || !self.secrets_from.is_empty()
            || self.key_file.is_some()
            || self.aggressive
            || self.strip_signatures
            || self.strip_images
    }

    /// The redactor these options describe, or the usage error they make.
    pub(crate) fn redactor(&self) -> Result<Redactor, String> {
        let key = match &self.key_file {
            None => Key::random(),
            Some(path) => match std::fs::read(path) {
                Ok(bytes) => Key::from_bytes(&bytes),
                Err(e) => return Err(format!("--key-file {}: {e}", display::path(path))),
            },
        }
        .map_err(|e| format!("--key-file: {e}"))?;
        Ok(Redactor::new(self.options()?, key))
    }

    /// The redaction options: the named values read.
    fn options(&self) -> Result<Options, String> {
        let mut options = Options {
            named: Vec::new(),
            aggressive: self.aggressive,
            strip_signatures: self.strip_signatures,
            strip_images: self.strip_images,
        };
        for value in &self.secret {
            options
                .add_secret(value.as_bytes())
                .map_err(|e| format!("--secret: {e}"))?;
        }
        for path in &self.secrets_from {
            let text = std::fs::read(path)
                .map_err(|e| format!("--secrets-from {}: {e}", display::path(path)))?;
            let short = options.add_env_file(&text);
            if short > 0 {
                eprintln!(
                    "pi-session: --secrets-from {}: {short} value(s) shorter than \
                     {MIN_NAMED_LEN} bytes left out (they would redact ordinary text)",
                    display::path(path)
                );
            }
        }
        Ok(options)
    }
}

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Per file: counts by rule, then each finding's line, entry and place.
    Human,
    /// One JSON object per run: `{"formatVersion":1,"files":[…]}`.
    Json,
}

/// Where the redacted session goes.
enum Destination<'a> {
    Stdout,
    File(&'a Path),
    InPlace,
    Nowhere,
}

/// Runs `pi-session redact`.
pub(crate) fn main(args: RedactArgs) -> ExitCode {
    let usage = |message: &str| {
        eprintln!("pi-session: error: {message}");
        ExitCode::from(2)
    };
    if let Err(targets::Usage(message)) = targets::check_usage(&args.paths) {
        return usage(&message);
    }
    let redactor = match args.redaction.redactor() {
        Ok(redactor) => redactor,
        Err(message) => return usage(&message),
    };
    let collected = match targets::collect_said(
        &args.paths,
        targets::Walk {
            follow: args.follow,
            include_archived: false,
        },
    ) {
        Ok(collected) => collected,
        Err(code) => return code,
    };
    let many = collected.targets.len() != 1;
    let destination = match (&args.out, args.in_place, args.dry_run) {
        (Some(out), _, _) if many => {
            let _ = out;
            return usage("-o OUT writes one redacted file: give exactly one input file");
        }
        (Some(out), _, _) => Destination::File(out),
        (None, true, _) => Destination::InPlace,
        (None, false, true) => Destination::Nowhere,
        (None, false, false) if many => {
            return usage(
                "several files: redact them --in-place, one at a time with -o OUT, or report \
                 with --dry-run",
            );
        }
        (None, false, false) => Destination::Stdout,
    };
    if matches!(destination, Destination::InPlace) && collected.targets.contains(&Target::Stdin) {
        return usage("--in-place needs a file to replace, not `-` (standard input); use -o OUT");
    }
    // The report goes to stdout unless the session does.
    let mut report_out: Box<dyn Write> = match destination {
        Destination::Stdout => Box::new(std::io::stderr().lock()),
        _ => Box::new(std::io::stdout().lock()),
    };
    let mut files = Vec::new();
    let mut failed = !collected.empty.is_empty();
    let mut redacted_any = false;
    for target in &collected.targets {
        let name = target.display();
        match redact_one(&redactor, target, &destination, &args) {
            Ok(done) => {
                redacted_any |= done.report.redacted() > 0;
                if args.format == Format::Human {
                    let _ = report_out.write_all(human(&name, &done).as_bytes());
                }
                files.push(json(&name, &done));
            }
            Err(message) => {
                let _ = report_out.flush();
                eprintln!("pi-session: {name}: {message}");
                failed = true;
                files.push(serde_json::json!({ "path": name, "error": message }));
            }
        }
    }
    if args.format == Format::Json {
        let report = serde_json::json!({ "formatVersion": 1, "files": files });
        let _ = writeln!(report_out, "{report}");
    }
    if report_out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    if failed || redacted_any {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// What happened to one file.
struct Done {
    report: Report,
    written: Option<PathBuf>,
    backup: Option<PathBuf>,
    warnings: Vec<String>,
}

fn redact_one(
    redactor: &Redactor,
    target: &Target,
    destination: &Destination<'_>,
    args: &RedactArgs,
) -> Result<Done, String> {
    // For --in-place, every refusal that needs no content comes before the file is read.
    let prepared = match (destination, target.path()) {
        (Destination::InPlace, Some(path)) => {
            let snapshot = match std::fs::metadata(path) {
                Ok(m) if m.is_file() => Snapshot::of(&m),
                Ok(_) => {
                    return Err(
                        "is not a regular file: --in-place replaces a file; use -o OUT".into(),
                    );
                }
                Err(e) => return Err(format!("cannot read it: {e}")),
            };
            let options = replace::Options {
                backup: args.backup,
                force: args.force,
                job: Job::REDACT,
            };
            match replace::prepare(path, snapshot, options) {
                Ok(prepared) => Some(prepared),
                // A file with nothing to redact is left alone, refusal or not (a second run
                // over a redacted directory, its backups there, succeeds).
                Err(refused) => return untouched(redactor, target).ok_or(refused.0),
            }
        }
        _ => None,
    };
    let input = target.open().map_err(|e| format!("cannot read it: {e}"))?;
    let release = |range| input.release(range);
    let verified = |report: Report| {
        input
            .verify()
            .map(|()| report)
            .map_err(|e| format!("{e}; nothing was written"))
    };
    let mut done = Done {
        report: Report::default(),
        written: None,
        backup: None,
        warnings: Vec::new(),
    };
    match destination {
        Destination::Nowhere => {
            done.report = verified(
                redactor
                    .redact_releasing(input.bytes(), &mut std::io::sink(), &release)
                    .map_err(|e| e.to_string())?,
            )?;
        }
        Destination::Stdout => {
            let mut stdout = std::io::stdout().lock();
            let mut out = std::io::BufWriter::with_capacity(1 << 20, &mut stdout);
            let report = redactor
                .redact_releasing(input.bytes(), &mut out, &release)
                .and_then(|r| out.flush().map(|()| r))
                .map_err(|e| format!("standard output: {e}"))?;
            // Streamed as it was made: a file that shrank meanwhile makes it wrong.
            done.report = input.verify().map(|()| report).map_err(|e| e.to_string())?;
        }
        Destination::File(out) => {
            let mut report = None;
            let mut shrank = None;
            pi_session_fs::write_new_with(out, args.force, |w| {
                let r = redactor.redact_releasing(input.bytes(), w, &release)?;
                if let Err(e) = input.verify() {
                    shrank = Some(e.to_string());
                    return Err(std::io::Error::other("the file shrank"));
                }
                report = Some(r);
                Ok(())
            })
            .map_err(|e| match &shrank {
                Some(shrank) => format!("{shrank}; nothing was written"),
                None => e,
            })?;
            done.report = report.expect("written only with a report");
            done.written = Some(out.to_path_buf());
        }
        Destination::InPlace => {
            let Some(prepared) = prepared else {
                return Err("is not a regular file any more: --in-place replaces a file".into());
            };
            let mut report = None;
            let mut shrank = None;
            let committed = prepared.commit(|w| {
                let r = redactor.redact_releasing(input.bytes(), w, &release)?;
                if let Err(e) = input.verify() {
                    shrank = Some(e.to_string());
                    return Err(std::io::Error::other("the file shrank"));
                }
                let unchanged = r.lines_changed == 0;
                report = Some(r);
                if unchanged {
                    return Err(std::io::Error::other("nothing to redact"));
                }
                Ok(())
            });
            if let Some(shrank) = shrank {
                return Err(format!("{shrank}; the file is unchanged"));
            }
            match (committed, report) {
                (Err(_), Some(r)) if r.lines_changed == 0 => done.report = r,
                (Err(e), _) => return Err(e.0),
                (Ok(replaced), Some(r)) => {
                    done.report = r;
                    done.written = target.path().map(Path::to_path_buf);
                    done.backup = replaced.backup;
                    done.warnings = replaced.warnings;
                }
                (Ok(_), None) => unreachable!("committed only with a report"),
            }
        }
    }
    Ok(done)
}

/// The report of a file with nothing to redact (read, not written), or `None` when it has
/// something, or cannot be read.
fn untouched(redactor: &Redactor, target: &Target) -> Option<Done> {
    let input = target.open().ok()?;
    let report = redactor.redact(input.bytes(), &mut std::io::sink()).ok()?;
    input.verify().ok()?;
    (report.lines_changed == 0).then_some(Done {
        report,
        written: None,
        backup: None,
        warnings: Vec::new(),
    })
}

/// The human report of one file: counts by rule, then each finding.
fn human(name: &str, done: &Done) -> String {
    use std::fmt::Write as _;
    let report = &done.report;
    let mut out = String::new();
    let redacted = report.redacted();
    let left = report.candidates_left();
    let _ = write!(out, "{name}: ");
    if redacted == 0 && left == 0 {
        out.push_str("nothing found");
    } else {
        let _ = write!(out, "{redacted} redacted");
        let counts: Vec<String> = report
            .by_rule()
            .into_iter()
            .filter(|(_, (r, _))| *r > 0)
            .map(|(rule, (r, _))| format!("{rule} {r}"))
            .collect();
        if !counts.is_empty() {
            let _ = write!(out, " ({})", counts.join(", "));
        }
        if left > 0 {
            let _ = write!(
                out,
                "; {left} high-entropy candidate(s) left (--aggressive redacts them)"
            );
        }
    }
    match (&done.written, &done.backup) {
        (Some(path), Some(backup)) => {
            let _ = write!(
                out,
                "; written to {} (the original kept as {})",
                display::path(path),
                display::path(backup)
            );
        }
        (Some(path), None) => {
            let _ = write!(out, "; written to {}", display::path(path));
        }
        (None, _) => {}
    }
    out.push('\n');
    for f in &report.findings {
        let _ = writeln!(out, "  {}", describe(f));
    }
    for w in &done.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
    out
}

/// `line 12, entry 1a2b3c4d, message.content[0].text: github-pat (redacted)`.
fn describe(f: &Finding) -> String {
    let mut place = format!("line {}", f.line);
    if let Some(id) = &f.entry_id {
        place.push_str(&format!(", entry {}", display::text(id, 80)));
    }
    if !f.path.is_empty() {
        place.push_str(&format!(", {}", display::text(&f.path, 200)));
    }
    let what = match (f.redacted, f.candidate) {
        (true, _) => "redacted",
        (false, true) => "candidate, left",
        (false, false) => "left",
    };
    format!("{place}: {} ({what})", f.rule)
}

/// The JSON report of one file: the library's report, with the file, where it was written
/// and its backup.
fn json(name: &str, done: &Done) -> serde_json::Value {
    let mut file = serde_json::json!({ "path": name });
    if let (Some(file), Ok(serde_json::Value::Object(report))) =
        (file.as_object_mut(), serde_json::to_value(&done.report))
    {
        file.extend(report);
        file.insert(
            "written".into(),
            done.written.as_deref().map(display::path).into(),
        );
        file.insert(
            "backup".into(),
            done.backup.as_deref().map(display::path).into(),
        );
    }
    file
}
