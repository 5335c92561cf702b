//! `--pi`: which pi's rules a command follows. Every command that takes it takes the same
//! values, parsed into the library's [`PiVersion`], with the same default: current pi.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use pi_session_format::PiVersion;

/// The default of every `--pi`: current pi.
pub(crate) const DEFAULT: &str = "1.5";

/// What `--help` says of each value.
fn about(pi: PiVersion) -> &'static str {
    match pi {
        PiVersion::V0_73 => "@mariozechner/pi-coding-agent 0.73.1, the documented v3 format",
        PiVersion::V0_87 => {
            "@earendil-works/pi-coding-agent 0.87.1, the first @earendil-works release pinned"
        }
        PiVersion::V1_5 => {
            "@earendil-works/pi-coding-agent 1.5.2, current pi, the default of every command: it \
             reads every file as 0.87.1 does and writes a session at its first user message"
        }
        _ => "",
    }
}

/// The parser of `--pi`: `0.73`, `0.87` or `1.5`, or the full release (`1.5.2`).
pub(crate) fn parser() -> impl TypedValueParser<Value = PiVersion> {
    PossibleValuesParser::new(PiVersion::ALL.map(|pi| {
        PossibleValue::new(pi.short_name())
            .alias(pi.release())
            .help(about(pi))
    }))
    .map(|name| {
        name.parse::<PiVersion>()
            .expect("a possible value names a pi")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_is_a_value_and_the_default_is_the_library_s() {
        for pi in PiVersion::ALL {
            assert!(!about(pi).is_empty(), "{pi:?} is described");
            assert_eq!(pi.short_name().parse::<PiVersion>(), Ok(pi));
            assert_eq!(pi.release().parse::<PiVersion>(), Ok(pi));
        }
        assert_eq!(DEFAULT.parse::<PiVersion>(), Ok(PiVersion::default()));
    }

    /// Walks the whole command tree: every `--pi` has the one default, current pi, and the
    /// same values; every command that reads or writes sessions has one.
    #[test]
    fn every_pi_option_defaults_to_current_pi() {
        use clap::CommandFactory;
        fn walk(command: &clap::Command, path: String, found: &mut Vec<String>) {
            for arg in command
                .get_arguments()
                .filter(|a| a.get_long() == Some("pi"))
            {
                let defaults: Vec<_> = arg.get_default_values().iter().collect();
                assert_eq!(defaults, ["1.5"], "{path} --pi");
                let values: Vec<String> = arg
                    .get_possible_values()
                    .iter()
                    .map(|v| v.get_name().to_owned())
                    .collect();
                assert_eq!(values, ["0.73", "0.87", "1.5"], "{path} --pi");
                found.push(path.clone());
            }
            for sub in command.get_subcommands() {
                walk(sub, format!("{path} {}", sub.get_name()), found);
            }
        }
        let mut found = Vec::new();
        walk(&crate::Cli::command(), "pi-session".into(), &mut found);
        for command in [
            "context",
            "migrate",
            "tree",
            "info",
            "validate",
            "repair",
            "stats",
            "ls",
            "search",
            "export",
            "new",
            "append",
            "fork",
            "conformance write",
            "conformance impl",
        ] {
            let command = format!("pi-session {command}");
            assert!(found.contains(&command), "{command} has no --pi: {found:?}");
        }
    }

    #[test]
    fn pi_takes_the_short_name_or_the_release() {
        use clap::Parser;
        let pi = |args: &[&str]| match crate::Cli::try_parse_from(args).map(|c| c.command) {
            Ok(crate::Command::Context { file, .. }) => Ok(file.pi),
            Ok(_) => unreachable!("a context command"),
            Err(e) => Err(e.kind()),
        };
        assert_eq!(pi(&["pi-session", "context", "f"]), Ok(PiVersion::V1_5));
        assert_eq!(
            pi(&["pi-session", "context", "f", "--pi", "0.73"]),
            Ok(PiVersion::V0_73)
        );
        assert_eq!(
            pi(&["pi-session", "context", "f", "--pi", "0.87.1"]),
            Ok(PiVersion::V0_87)
        );
        assert_eq!(
            pi(&["pi-session", "context", "f", "--pi", "1.5.2"]),
            Ok(PiVersion::V1_5)
        );
        assert_eq!(
            pi(&["pi-session", "context", "f", "--pi", "1.4"]),
            Err(clap::error::ErrorKind::InvalidValue)
        );
    }
}
