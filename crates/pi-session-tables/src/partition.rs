//! Hive-style partitions (`messages/month=2026-11/part-….parquet`): which directory a row
//! goes to under its table's.

use pi_session_format::date;

/// What the rows are partitioned by (`--partition-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionBy {
    /// The session's `cwd`: `project=<cwd, escaped>`.
    Project,
    /// The month (UTC) of the row's timestamp (a session's creation for `sessions`):
    /// `month=YYYY-MM`.
    Month,
}

/// The value Hive uses for a row without one (no timestamp, no cwd).
pub const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

impl PartitionBy {
    /// The column name of the partition.
    pub fn column(self) -> &'static str {
        match self {
            PartitionBy::Project => "project",
            PartitionBy::Month => "month",
        }
    }
}

/// The directory of a row's partition (`month=2026-11`), `""` without partitioning.
pub fn directory(by: Option<PartitionBy>, cwd: &str, time_ms: Option<i64>) -> String {
    match by {
        None => String::new(),
        Some(PartitionBy::Project) => {
            let value = if cwd.is_empty() {
                NULL_PARTITION.to_owned()
            } else {
                escape(cwd)
            };
            format!("project={value}")
        }
        Some(PartitionBy::Month) => {
            let value = time_ms
                .map(|t| date::to_iso_string(t as f64))
                .filter(|iso| iso.len() >= 7 && !iso.starts_with('+') && !iso.starts_with('-'))
                .map_or_else(|| NULL_PARTITION.to_owned(), |iso| iso[..7].to_owned());
            format!("month={value}")
        }
    }
}

/// A partition value as Hive writes it in a path: `%XX` for the bytes that cannot stand in
/// a directory name or that readers split on (`/`, `=`, `%`, control characters and a few
/// more), so `/home/me/app` is `%2Fhome%2Fme%2Fapp`. Readers decode it back.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        let special = c < ' '
            || c == '\x7f'
            || matches!(
                c,
                '"' | '#' | '%' | '\'' | '*' | '/' | ':' | '=' | '?' | '\\' | '{' | '[' | ']' | '^'
            );
        if special {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories() {
        assert_eq!(directory(None, "/w", Some(0)), "");
        assert_eq!(
            directory(Some(PartitionBy::Project), "/home/me/app", None),
            "project=%2Fhome%2Fme%2Fapp"
        );
        assert_eq!(
            directory(Some(PartitionBy::Project), "/é/x=1", None),
            "project=%2Fé%2Fx%3D1"
        );
        assert_eq!(
            directory(Some(PartitionBy::Month), "", Some(1_700_000_000_000)),
            "month=2023-11"
        );
        assert_eq!(
            directory(Some(PartitionBy::Month), "", None),
            "month=__HIVE_DEFAULT_PARTITION__"
        );
        assert_eq!(
            directory(Some(PartitionBy::Project), "", None),
            "project=__HIVE_DEFAULT_PARTITION__"
        );
    }
}
