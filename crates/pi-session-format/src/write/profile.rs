//! [`WriteProfile`]: which pi's writing rules a [`super::SessionWriter`] follows, and the
//! rules themselves, one method per place where the versions differ.

use crate::PiVersion;
use std::fmt;
use std::str::FromStr;

/// Which pi's `SessionManager` the writer writes like.
///
/// The versions write the same lines for most entries; where they differ, each rule is one
/// method here, named after what it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum WriteProfile {
    /// `@mariozechner/pi-coding-agent` 0.73.1: the documented v3 format.
    V0_73,
    /// `@earendil-works/pi-coding-agent` 0.87.1: adds `usage` and `context_edit` entries and
    /// the compaction's `usage` and `systemMessage`.
    V0_87,
    /// `@earendil-works/pi-coding-agent` 1.5.2, current pi (the default): writes the file at
    /// the first user message already.
    #[default]
    V1_5,
}

impl WriteProfile {
    /// Every profile, oldest first.
    pub const ALL: [WriteProfile; 3] =
        [WriteProfile::V0_73, WriteProfile::V0_87, WriteProfile::V1_5];

    /// The release whose rules these are, as npm names it (`"1.5.2"`).
    pub fn release(self) -> &'static str {
        match self {
            WriteProfile::V0_73 => "0.73.1",
            WriteProfile::V0_87 => "0.87.1",
            WriteProfile::V1_5 => "1.5.2",
        }
    }

    /// The short name the conformance corpus uses (`"0.73"`, `"0.87"`, `"1.5"`).
    pub fn short_name(self) -> &'static str {
        match self {
            WriteProfile::V0_73 => "0.73",
            WriteProfile::V0_87 => "0.87",
            WriteProfile::V1_5 => "1.5",
        }
    }

    /// The reading rules of the same pi (the inverse of [`PiVersion::write_profile`]).
    pub fn reading(self) -> PiVersion {
        match self {
            WriteProfile::V0_73 => PiVersion::V0_73,
            WriteProfile::V0_87 => PiVersion::V0_87,
            WriteProfile::V1_5 => PiVersion::V1_5,
        }
    }

    /// Whether a user message already starts the file (1.5.2); otherwise only an assistant
    /// message does.
    pub(crate) fn user_message_starts_file(self) -> bool {
        self == WriteProfile::V1_5
    }

    /// Whether the `usage` and `context_edit` entries, the compaction's `usage` and
    /// `systemMessage`, and a compaction's own id as the default `firstKeptEntryId` exist.
    pub(crate) fn has_usage_entries(self) -> bool {
        self != WriteProfile::V0_73
    }

    /// Whether `session_info` names turn runs of newlines into a space (0.87.1+) before
    /// trimming; 0.73.1 only trims.
    pub(crate) fn names_lose_newlines(self) -> bool {
        self != WriteProfile::V0_73
    }

    /// Whether a branch summary's `fromId` is the leaf before the branch (0.87.1+) rather
    /// than the branch point (0.73.1).
    pub(crate) fn branch_summary_names_previous_leaf(self) -> bool {
        self != WriteProfile::V0_73
    }

    /// Whether session and fork paths are resolved against the current directory (0.87.1+).
    pub(crate) fn resolves_paths(self) -> bool {
        self != WriteProfile::V0_73
    }
}

impl fmt::Display for WriteProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.release())
    }
}

/// The error of parsing a [`WriteProfile`] name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProfile(pub String);

impl fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown pi version {:?}: expected 0.73, 0.87 or 1.5 (or 0.73.1, 0.87.1, 1.5.2)",
            self.0
        )
    }
}

impl std::error::Error for UnknownProfile {}

impl FromStr for WriteProfile {
    type Err = UnknownProfile;

    /// `"0.73"`, `"0.87"`, `"1.5"`, or the full release (`"1.5.2"`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        WriteProfile::ALL
            .into_iter()
            .find(|p| p.short_name() == s || p.release() == s)
            .ok_or_else(|| UnknownProfile(s.to_owned()))
    }
}
