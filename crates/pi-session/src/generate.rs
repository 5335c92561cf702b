//! `pi-session gen`: write a deterministic, realistic session (the library's `generate`).

use clap::Args;
use pi_session_testkit::generate::{self, FileVersion, Limit, Options};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `pi-session gen`.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("limit").required(true).args(["size", "entries"])))]
pub(crate) struct GenArgs {
    /// Stop after the entry that reaches this size: `100MB`, `1GB`, `64MiB`, bytes.
    #[arg(long, value_parser = generate::parse_size, value_name = "SIZE")]
    size: Option<u64>,
    /// Stop after this many entries (the header not counted).
    #[arg(long, value_name = "N")]
    entries: Option<u64>,
    /// A linear chain of short user/assistant messages (the scaling test) instead of a
    /// realistic session.
    #[arg(long)]
    linear: bool,
    /// The PRNG seed: the same arguments give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The format version to write.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=3))]
    version: u32,
    /// Write to FILE instead of standard output (atomically; never over an existing file
    /// without --force).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Replace FILE when it exists (the new file is given its name; a symlink there is
    /// replaced, not written through).
    #[arg(long, requires = "out")]
    force: bool,
    /// Print statistics (entries, compactions, branches, leaf path length, …) as JSON on
    /// standard error.
    #[arg(long)]
    stats: bool,
    /// Write a tree of sessions under DIR instead, laid out as pi keeps them
    /// (`--<cwd>--/<time>_<id>.jsonl`), --size in all, every tenth session a fork of an
    /// earlier one (the many-file benchmarks).
    #[arg(long, value_name = "DIR", requires = "size", conflicts_with_all = ["out", "entries", "linear"])]
    tree: Option<PathBuf>,
    /// How many sessions --tree writes.
    #[arg(long, value_name = "N", default_value_t = 1000, requires = "tree")]
    files: u64,
}

/// Runs `pi-session gen`.
pub(crate) fn main(args: GenArgs) -> ExitCode {
    if let (Some(dir), Some(bytes)) = (&args.tree, args.size) {
        let options = generate::TreeOptions {
            files: args.files,
            bytes,
            seed: args.seed,
        };
        return match generate::generate_tree(dir, &options) {
            Ok(stats) => {
                eprintln!(
                    "pi-session: gen: {} sessions ({} forks), {} bytes under {}",
                    stats.files,
                    stats.forks,
                    stats.bytes,
                    crate::display::path(dir)
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("pi-session: gen: {}: {e}", crate::display::path(dir));
                ExitCode::FAILURE
            }
        };
    }
    let limit = match (args.size, args.entries) {
        (Some(bytes), _) => Limit::Bytes(bytes),
        (None, Some(n)) => Limit::Entries(n),
        (None, None) => unreachable!("clap requires one"),
    };
    let options = Options {
        seed: args.seed,
        version: FileVersion::from_number(args.version).expect("clap checks the range"),
        limit,
        linear: args.linear,
    };
    let result = match &args.out {
        Some(path) => {
            let mut stats = None;
            let written = pi_session_fs::write_new_with(path, args.force, |out| {
                stats = Some(generate::generate(&options, out)?);
                Ok(())
            });
            if let Err(message) = written {
                eprintln!("pi-session: gen: {message}");
                return ExitCode::FAILURE;
            }
            Ok(stats.expect("written"))
        }
        None => {
            let mut w = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
            generate::generate(&options, &mut w).and_then(|s| w.flush().map(|()| s))
        }
    };
    match result {
        Ok(stats) => {
            if args.stats {
                eprintln!("{}", stats.to_json());
            }
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let target = args.out.as_ref().map_or_else(
                || "standard output".to_string(),
                |p| crate::display::path(p),
            );
            eprintln!("pi-session: gen: {target}: {e}");
            ExitCode::FAILURE
        }
    }
}
