//! `pi-session repair`: the plan of [`pi_session_validate::repair`] for each file (a line per
//! fix and a unified diff), and, when asked, the repaired file written: to `-o OUT`, or in
//! place (atomically, with `--backup`). Bytes a repair takes out go to a rejects file beside
//! the file written, never overwriting one.

use crate::display;
use crate::replace::{self, Job, Snapshot};
use crate::validate::targets::{self, Target};
use clap::{Args, ValueEnum};
use pi_session_validate::Code;
use pi_session_validate::repair::{RepairOptions, Repaired, fixability, repair};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `pi-session repair`.
#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct RepairArgs {
    /// Session files and directories (walked for `*.jsonl`); `-` reads standard input (plan
    /// only). Default: pi's session directory.
    paths: Vec<PathBuf>,
    /// Show the plan and the diff, write nothing (the default).
    #[arg(long, conflicts_with_all = ["out", "in_place"])]
    dry_run: bool,
    /// Write the repaired file to OUT (one input file; OUT must not exist unless --force).
    #[arg(short, long, value_name = "OUT", conflicts_with = "in_place")]
    out: Option<PathBuf>,
    /// Replace each file with its repaired version, atomically.
    #[arg(long)]
    in_place: bool,
    /// With --in-place: keep the old file as FILE.bak.
    #[arg(long, requires = "in_place")]
    backup: bool,
    /// Overwrite OUT; with --in-place, replace hard-linked or read-only files and back up to
    /// FILE.bak.N when FILE.bak exists.
    #[arg(long)]
    force: bool,
    /// Only the repairs of these codes (comma-separated: PS0001,PS0210).
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    only: Vec<String>,
    /// Also reattach entries whose parent is missing, themselves or on a cycle to the entry
    /// before them (it changes the tree).
    #[arg(long)]
    reattach: bool,
    /// Also give tool calls whose `arguments` is `null` (pi's /tree crashes on them) an empty
    /// object (it changes what the model is sent).
    #[arg(long)]
    tool_calls: bool,
    /// Also move tool results whose call is on no assistant message before them (model APIs
    /// refuse every request that carries one) to the rejects file, their children attached to
    /// their parent (it changes the tree and what the model is sent).
    #[arg(long)]
    tool_results: bool,
    /// The working directory for a rebuilt header (default: read from the directory name).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Which pi's reading rules the verdicts follow.
    #[arg(long, value_parser = crate::pi::parser(), default_value = crate::pi::DEFAULT)]
    pi: pi_session_format::PiVersion,
    /// The files' dialect, `pi` or `omp` (oh-my-pi); default: each file's own (see
    /// docs/dialects.md). Repairs are pi's: an omp file is refused (nothing written), as pi's
    /// repairs would break what omp reads (`migrate --dialect omp` does what omp does).
    #[arg(long, value_name = "DIALECT")]
    dialect: Option<pi_session_format::Dialect>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Follow symbolic links to directories while walking a directory.
    #[arg(long)]
    follow: bool,
    /// Also take, in directories, the archives real deployments leave beside sessions:
    /// `*.jsonl.reset.<time>`, `*.jsonl.deleted.<time>`, `*.jsonl.bak-<n>-ms` (each said
    /// on stderr with what it is; `*.checkpoint.<uuid>.jsonl` files are always repaired, as pi
    /// lists them).
    #[arg(long)]
    include_archived: bool,
}

const AFTER_HELP: &str = "\
Repairs (each tied to the validate code it fixes; docs/diagnostics.md says per code): glued \
lines split (PS0001) and a torn last line ended (PS0002); byte-identical repeated headers and \
entries removed (PS0104, PS0210); a missing header rebuilt from the file name (PS0101); v1/v2 \
files migrated (PS0105, PS0108); shared ids told apart (PS0210); with --reattach, dangling \
parents, self-parents and cycles (PS0212, PS0214, PS0213); with --tool-calls, tool calls \
with `arguments: null` (PS0204); with --tool-results, tool results without their call \
(PS0219); lines without an id after the last entry, on which pi resumes an empty \
conversation (PS0226).

Nothing is lost: bytes taken out that are not a repeat of a line that stays go to \
FILE.repair-rejects.jsonl (OUT.repair-rejects.jsonl with -o), never overwriting one.

Exit codes: 0 nothing to repair, or repaired (or repairable, in a dry run) so that pi loses \
nothing; 1 something could not be repaired (said per file), or a file could not be read or \
written (said on stderr); 2 usage error.";

/// `--format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The plan, one line per fix, and a unified diff.
    Human,
    /// One JSON object per run: `{"formatVersion":1,"files":[…]}`.
    Json,
}

/// What happened to one file.
struct Outcome {
    json: serde_json::Value,
    ok: bool,
}

/// Runs `pi-session repair`.
pub(crate) fn main(args: RepairArgs) -> ExitCode {
    let usage = |message: &str| {
        eprintln!("pi-session: error: {message}");
        ExitCode::from(2)
    };
    if let Err(targets::Usage(message)) = targets::check_usage(&args.paths) {
        return usage(&message);
    }
    let only = match parse_codes(&args.only) {
        Ok(only) => only,
        Err(message) => return usage(&message),
    };
    let collected = match targets::collect_said(
        &args.paths,
        targets::Walk {
            follow: args.follow,
            include_archived: args.include_archived,
        },
    ) {
        Ok(collected) => collected,
        Err(code) => return code,
    };
    if args.out.is_some() && collected.targets.len() != 1 {
        return usage("-o OUT writes one repaired file: give exactly one input file");
    }
    if (args.in_place || args.out.is_some()) && collected.targets.contains(&Target::Stdin) {
        return usage(
            "standard input can only be repaired as a dry run (the plan); save it to a file first",
        );
    }
    let progress = crate::validate::progress_bar(collected.targets.len(), "repairing");
    let mut files = Vec::new();
    let mut ok = collected.empty.is_empty();
    for dir in &collected.empty {
        eprintln!(
            "pi-session: error: {}: no session files (*.jsonl) in this directory",
            display::path(dir)
        );
    }
    let mut stdout = std::io::stdout().lock();
    for target in &collected.targets {
        let outcome = run(&args, only.as_deref(), target, &mut stdout);
        ok &= outcome.ok;
        files.push(outcome.json);
        if let Some(bar) = &progress {
            bar.inc(1);
        }
    }
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    if args.format == Format::Json {
        let report = serde_json::json!({ "formatVersion": 1, "files": files });
        let _ = writeln!(stdout, "{report}");
    }
    if stdout.flush().is_err() {
        return ExitCode::FAILURE;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn parse_codes(given: &[String]) -> Result<Option<Vec<Code>>, String> {
    if given.is_empty() {
        return Ok(None);
    }
    given
        .iter()
        .map(|c| {
            Code::ALL
                .iter()
                .copied()
                .find(|code| code.as_str().eq_ignore_ascii_case(c.trim()))
                .ok_or_else(|| format!("--only: {c:?} is not a diagnostic code (PS0001, …)"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// Repairs one file; prints its plan (human format) as it goes.
fn run(args: &RepairArgs, only: Option<&[Code]>, target: &Target, out: &mut dyn Write) -> Outcome {
    let name = target.display();
    // An error is said on stderr, as `migrate` says it; the JSON report holds it too.
    let failed = |message: String, out: &mut dyn Write| {
        // What came before it on stdout first.
        let _ = out.flush();
        eprintln!("pi-session: {name}: {message}");
        Outcome {
            json: serde_json::json!({ "path": name, "error": message }),
            ok: false,
        }
    };
    // For --in-place, every refusal that needs no content comes before the file is read.
    let prepared = match (args.in_place, target.path()) {
        (true, Some(path)) => {
            let snapshot = match fs::metadata(path) {
                Ok(m) if m.is_file() => Snapshot::of(&m),
                Ok(_) => {
                    return failed(
                        "is not a regular file: --in-place replaces a file; use -o OUT".into(),
                        out,
                    );
                }
                Err(e) => return failed(format!("cannot read it: {e}"), out),
            };
            let options = replace::Options {
                backup: args.backup,
                force: args.force,
                job: Job::REPAIR,
            };
            match replace::prepare(path, snapshot, options) {
                Ok(p) => Some(p),
                Err(e) => return failed(e.0, out),
            }
        }
        _ => None,
    };
    let input = match target.open() {
        Ok(input) => input,
        Err(e) => return failed(format!("cannot read it: {e}"), out),
    };
    if pi_session_format::Dialect::given_or_detected(args.dialect, input.bytes())
        == pi_session_format::Dialect::Omp
    {
        return failed(
            "an oh-my-pi (omp) session: repair mends what pi breaks by pi's rules, which \
             would break what omp reads (its title slot, its JSONL reading); nothing written. \
             `pi-session validate --dialect omp` says what is wrong, and `pi-session migrate \
             --dialect omp --in-place` rewrites the file as omp does when it opens it"
                .into(),
            out,
        );
    }
    let absolute = target.path().and_then(|p| std::path::absolute(p).ok());
    let release = |range| input.release(range);
    let options = RepairOptions {
        pi: args.pi,
        path: absolute.as_deref(),
        only: only.map(<[Code]>::to_vec),
        reattach: args.reattach,
        cwd: args.cwd.clone(),
        tool_calls: args.tool_calls,
        tool_results: args.tool_results,
        // A mapped file's pages are let go as repair is done with them.
        release: Some(pi_session_validate::Release(&release)),
        read_at: Some(pi_session_validate::Reading(&input)),
    };
    let repaired = repair(input.bytes(), &options);
    if let Err(e) = input.verify() {
        return failed(format!("{e}; nothing was written"), out);
    }
    let ok = repaired.is_complete();
    let mut written = None;
    let mut backup = None;
    let mut rejects_file = None;
    let mut warnings = Vec::new();
    // -o OUT is always written (a copy when there is nothing to repair); --in-place only when
    // something changes.
    let destination = match (&args.out, target.path()) {
        (Some(out), _) => Some(out.clone()),
        (None, Some(path)) if args.in_place && repaired.changed() => Some(path.to_path_buf()),
        _ => None,
    };
    if let Some(destination) = destination {
        if !repaired.rejects.is_empty() {
            match save_rejects(&destination, &repaired.rejects_jsonl()) {
                Ok(path) => rejects_file = Some(path),
                Err(e) => {
                    return failed(
                        format!("cannot keep the rejects: {e}; nothing was written"),
                        out,
                    );
                }
            }
        }
        // The output is written a line at a time, the lines a repair left read from the file
        // as they are written (its pages let go behind): checked again before it is published.
        let write = |w: &mut dyn Write| {
            repaired.write_output(w)?;
            input.verify()
        };
        let result = match prepared {
            Some(prepared) => prepared
                .commit(write)
                .map(|done| {
                    backup = done.backup;
                    warnings = done.warnings;
                })
                .map_err(|e| e.0),
            None => pi_session_fs::write_new_with(&destination, args.force, write),
        };
        if let Err(e) = result {
            // Nothing was written: the rejects of this attempt go too.
            if let Some(path) = &rejects_file {
                let _ = fs::remove_file(path);
            }
            return failed(e, out);
        }
        written = Some(destination);
    }
    let diff = repaired.diff(&name);
    if args.format == Format::Human {
        let _ = out.write_all(
            plan(
                &name,
                &repaired,
                &diff,
                written.as_deref(),
                backup.as_deref(),
                rejects_file.as_deref(),
            )
            .as_bytes(),
        );
        let _ = out.flush();
        for w in &warnings {
            eprintln!("pi-session: {name}: {w}");
        }
    }
    Outcome {
        json: json_report(
            &name,
            &repaired,
            &diff,
            written.as_deref(),
            backup.as_deref(),
            rejects_file.as_deref(),
        ),
        ok,
    }
}

/// Writes the rejects beside `destination`: `NAME.repair-rejects.jsonl`, or the first free
/// `NAME.repair-rejects.N.jsonl` (never replacing a file); atomic.
fn save_rejects(destination: &Path, content: &[u8]) -> Result<PathBuf, String> {
    for n in 0..1000 {
        let suffix = if n == 0 {
            ".repair-rejects.jsonl".to_owned()
        } else {
            format!(".repair-rejects.{n}.jsonl")
        };
        let mut name = destination.as_os_str().to_os_string();
        name.push(&suffix);
        let path = PathBuf::from(name);
        match pi_session_fs::publish(&path, content, false) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{}: {e}", display::path(&path))),
        }
    }
    Err("every rejects file name is taken".into())
}

/// The human plan of one file.
fn plan(
    name: &str,
    r: &Repaired,
    diff: &str,
    written: Option<&Path>,
    backup: Option<&Path>,
    rejects: Option<&Path>,
) -> String {
    let mut s = String::new();
    if !r.changed() && r.unrepaired.is_empty() {
        match written {
            Some(p) => s.push_str(&format!(
                "{name}: nothing to repair; copied unchanged to {}\n",
                display::path(p)
            )),
            None => s.push_str(&format!("{name}: nothing to repair\n")),
        }
        return s;
    }
    s.push_str(&format!(
        "{name}: {} fix{}{}\n",
        r.fixes.len(),
        if r.fixes.len() == 1 { "" } else { "es" },
        match written {
            Some(p) => format!(", written to {}", display::path(p)),
            None if r.changed() =>
                " (dry run: nothing written; -o OUT or --in-place to write)".to_owned(),
            None => String::new(),
        }
    ));
    for f in &r.fixes {
        s.push_str(&format!(
            "  line {}: {} {}: {}\n",
            f.line,
            f.code.as_str(),
            action(f.action),
            f.message
        ));
    }
    for j in &r.rejects {
        s.push_str(&format!(
            "  line {}: {} bytes to the rejects: {}\n",
            j.line,
            j.text.len(),
            j.reason
        ));
    }
    for u in &r.unrepaired {
        s.push_str(&format!(
            "  line {}: {} not repaired: {}\n",
            u.line,
            u.code.as_str(),
            u.message
        ));
    }
    if let Some(p) = backup {
        s.push_str(&format!("  the old file is kept as {}\n", display::path(p)));
    }
    if let Some(p) = rejects {
        s.push_str(&format!(
            "  the rejected bytes are kept in {}\n",
            display::path(p)
        ));
    }
    let verdict = |v: &pi_session_validate::Verdict| match (v.strict, v.pi_loadable) {
        (true, _) => "strict",
        (false, true) => "pi-loadable",
        (false, false) => "not pi-loadable",
    };
    let after = if r.is_complete() && !r.after.verdict.pi_loadable {
        "pi-loadable but for the torn last line kept (pi ignores it)"
    } else {
        verdict(&r.after.verdict)
    };
    s.push_str(&format!(
        "  before: {}; after: {after}\n",
        verdict(&r.before.verdict)
    ));
    s.push_str(diff);
    s
}

fn action(a: pi_session_validate::repair::FixAction) -> &'static str {
    use pi_session_validate::repair::FixAction as A;
    match a {
        A::Split => "split",
        A::Rejected => "rejected",
        A::Trimmed => "trimmed",
        A::Terminated => "terminated",
        A::RemovedRepeat => "removed repeat",
        A::RebuiltHeader => "rebuilt header",
        A::Migrated => "migrated",
        A::NewId => "new id",
        A::Relinked => "relinked",
        A::Reattached => "reattached",
        A::Normalized => "normalized",
    }
}

fn json_report(
    name: &str,
    r: &Repaired,
    diff: &str,
    written: Option<&Path>,
    backup: Option<&Path>,
    rejects: Option<&Path>,
) -> serde_json::Value {
    let path = |p: Option<&Path>| p.map(display::path);
    serde_json::json!({
        "path": name,
        "changed": r.changed(),
        "fixes": r.fixes,
        "rejects": r.rejects.iter().map(|j| serde_json::json!({
            "line": j.line,
            "bytes": j.text.len(),
            "reason": j.reason,
        })).collect::<Vec<_>>(),
        "unrepaired": r.unrepaired,
        "before": { "strict": r.before.verdict.strict, "piLoadable": r.before.verdict.pi_loadable },
        "after": { "strict": r.after.verdict.strict, "piLoadable": r.after.verdict.pi_loadable },
        "written": path(written),
        "backup": path(backup),
        "rejectsFile": path(rejects),
        "diff": diff,
        "fixable": r.before.diagnostics.iter().map(|d| d.code).collect::<std::collections::BTreeSet<_>>()
            .into_iter().map(|c| serde_json::json!({ "code": c, "fixable": fixability(c).0 })).collect::<Vec<_>>(),
    })
}
