//! One Parquet part file being written: rows collected into a builder, written as one row
//! group whenever they reach [`ROW_GROUP_BYTES`] (so memory stays flat), compressed as the
//! [`Layout`](crate::Layout) says ([`Compression`]),
//! into a hidden temporary file (`pi_session_fs::temp`) that becomes the part file only when
//! it is complete — by a hard link, which fails instead of replacing a file that exists.
//! Neither the temporary is made nor the part put in place once the run is abandoned
//! ([`crate::run`]).

use crate::compression::Compression;
use crate::error::Error;
use crate::tables::Builder;
use crate::{SCHEMA_VERSION, SCHEMA_VERSION_KEY};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use pi_session_fs::temp::Temp;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Rows are written as a row group once they take about this many bytes in memory.
pub const ROW_GROUP_BYTES: usize = 16 << 20;

/// The columns of long texts (messages, thinking, arguments, results, summaries).
const LONG_TEXTS: [&str; 5] = ["text", "thinking", "arguments", "summary", "error_message"];

/// What every part file of one export says in its key-value metadata.
#[derive(Debug, Clone, Default)]
pub struct Stamp {
    /// Whether forked history is counted once (`false` with `--no-dedupe`).
    pub dedupe: bool,
    /// `--since`, as given.
    pub since: Option<String>,
}

/// A part file being written.
pub struct Part<B: Builder> {
    builder: B,
    /// The writer into the temporary file (a second handle of it) and the temporary.
    writer: Option<(ArrowWriter<File>, Temp)>,
    /// The temporary's name (`.part-….parquet.tmp`: found by [`crate::run`] by its name).
    temp: PathBuf,
    path: PathBuf,
    stamp: Stamp,
    compression: Compression,
}

impl<B: Builder> Part<B> {
    /// A part to be written at `path` (its directory is created when the first row group is
    /// written), its column chunks compressed with `compression`.
    pub fn new(path: PathBuf, stamp: Stamp, compression: Compression) -> Part<B> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = path.with_file_name(format!(".{name}.tmp"));
        Part {
            builder: B::default(),
            writer: None,
            temp,
            path,
            stamp,
            compression,
        }
    }

    /// Where the part will be.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds a row; writes a row group when enough have been collected.
    pub fn push(&mut self, row: &B::Row<'_>) -> Result<(), Error> {
        self.builder.push(row);
        if self.builder.bytes() >= ROW_GROUP_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Bytes collected and not written yet.
    pub fn buffered(&self) -> usize {
        self.builder.bytes()
    }

    /// Writes the rows collected as one row group.
    pub fn flush(&mut self) -> Result<(), Error> {
        if self.builder.is_empty() {
            return Ok(());
        }
        let batch = self.builder.finish();
        let (writer, _) = match &mut self.writer {
            Some(w) => w,
            None => self.writer.insert(self.open()?),
        };
        writer.write(&batch).map_err(Error::parquet(&self.temp))?;
        writer.flush().map_err(Error::parquet(&self.temp))
    }

    fn open(&self) -> Result<(ArrowWriter<File>, Temp), Error> {
        if let Some(dir) = self.temp.parent() {
            std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
        }
        if self.path.exists() {
            return Err(Error::Exists(self.path.clone()));
        }
        // Not once the run is abandoned (a signal): its files are being removed.
        let guard = crate::run::guard(&self.path)?;
        let temp = Temp::create_at(&self.temp).map_err(Error::io(&self.temp))?;
        drop(guard);
        let file = temp.get().try_clone().map_err(Error::io(&self.temp))?;
        let mut metadata = vec![
            KeyValue::new(SCHEMA_VERSION_KEY.to_owned(), SCHEMA_VERSION.to_string()),
            KeyValue::new(
                "pi_session_tables.table".to_owned(),
                B::TABLE.name().to_owned(),
            ),
            KeyValue::new(
                "pi_session_tables.dedupe".to_owned(),
                self.stamp.dedupe.to_string(),
            ),
        ];
        if let Some(since) = &self.stamp.since {
            metadata.push(KeyValue::new(
                "pi_session_tables.since".to_owned(),
                since.clone(),
            ));
        }
        let mut properties = WriterProperties::builder()
            .set_compression(self.compression.parquet())
            .set_max_row_group_row_count(None)
            .set_max_row_group_bytes(None)
            .set_key_value_metadata(Some(metadata));
        // Long texts are nearly all different: a dictionary or min/max statistics of them
        // cost time and help no query.
        for field in B::TABLE.schema().fields() {
            if LONG_TEXTS.contains(&field.name().as_str()) {
                let column = ColumnPath::from(field.name().as_str());
                properties = properties
                    .set_column_dictionary_enabled(column.clone(), false)
                    .set_column_statistics_enabled(column, EnabledStatistics::None);
            }
        }
        let properties = properties.build();
        let writer = ArrowWriter::try_new(file, B::TABLE.schema(), Some(properties))
            .map_err(Error::parquet(&self.temp))?;
        Ok((writer, temp))
    }

    /// Writes what is left, closes the file and puts it in place; `Ok(None)` when no row
    /// was ever written (no file is made), unless `even_empty`.
    pub fn finish(mut self, even_empty: bool) -> Result<Option<PathBuf>, Error> {
        self.flush()?;
        let (writer, mut temp) = match self.writer.take() {
            Some(w) => w,
            None if even_empty => self.open()?,
            None => return Ok(None),
        };
        writer.close().map_err(Error::parquet(&self.temp))?;
        // Not once the run is abandoned (a signal): its files are being removed.
        let _guard = crate::run::guard(&self.path)?;
        // A hard link: fails instead of replacing a file that exists. The temporary goes
        // when it is dropped, placed or not.
        match temp.persist_new(&self.path) {
            Ok(()) => Ok(Some(self.path.clone())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(Error::Exists(self.path.clone()))
            }
            Err(e) => Err(Error::io(&self.path)(e)),
        }
    }
}
