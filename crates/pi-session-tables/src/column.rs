//! The kinds of column the tables are made of: each pairs the Rust value a row holds with
//! the Arrow builder that collects it and the Arrow type it is written as.

use arrow_array::ArrayRef;
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
    TimestampMillisecondBuilder,
};
use arrow_schema::{DataType, Field, TimeUnit};
use std::borrow::Cow;
use std::sync::Arc;

/// One column being built.
pub trait Column: Default {
    /// What one row holds.
    type Value<'a>: Default + Clone + std::fmt::Debug;
    /// The Arrow type written.
    fn data_type() -> DataType;
    /// The type's name in the documentation (`docs/tables.md`).
    fn doc_type() -> &'static str;
    /// Adds a row's value.
    fn push(&mut self, value: &Self::Value<'_>);
    /// About how many bytes the value takes in memory (for flushing by size).
    fn size(value: &Self::Value<'_>) -> usize;
    /// The values so far, as an array; the builder starts again empty.
    fn finish(&mut self) -> ArrayRef;
}

/// Text (UTF-8), borrowed or owned; `None` is null.
#[derive(Default)]
pub struct Text(StringBuilder);

impl Column for Text {
    type Value<'a> = Option<Cow<'a, str>>;
    fn data_type() -> DataType {
        DataType::Utf8
    }
    fn doc_type() -> &'static str {
        "string"
    }
    fn push(&mut self, value: &Self::Value<'_>) {
        self.0.append_option(value.as_deref());
    }
    fn size(value: &Self::Value<'_>) -> usize {
        value.as_ref().map_or(1, |s| s.len() + 4)
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A time in milliseconds since the epoch, UTC; `None` is null.
pub struct Time(TimestampMillisecondBuilder);

impl Default for Time {
    fn default() -> Self {
        Time(TimestampMillisecondBuilder::new().with_timezone("UTC"))
    }
}

impl Column for Time {
    type Value<'a> = Option<i64>;
    fn data_type() -> DataType {
        DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
    }
    fn doc_type() -> &'static str {
        "timestamp (ms, UTC)"
    }
    fn push(&mut self, value: &Self::Value<'_>) {
        self.0.append_option(*value);
    }
    fn size(_: &Self::Value<'_>) -> usize {
        8
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A 64-bit integer; `None` is null.
#[derive(Default)]
pub struct Int(Int64Builder);

impl Column for Int {
    type Value<'a> = Option<i64>;
    fn data_type() -> DataType {
        DataType::Int64
    }
    fn doc_type() -> &'static str {
        "int64"
    }
    fn push(&mut self, value: &Self::Value<'_>) {
        self.0.append_option(*value);
    }
    fn size(_: &Self::Value<'_>) -> usize {
        8
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A double; `None` is null.
#[derive(Default)]
pub struct Float(Float64Builder);

impl Column for Float {
    type Value<'a> = Option<f64>;
    fn data_type() -> DataType {
        DataType::Float64
    }
    fn doc_type() -> &'static str {
        "double"
    }
    fn push(&mut self, value: &Self::Value<'_>) {
        self.0.append_option(*value);
    }
    fn size(_: &Self::Value<'_>) -> usize {
        8
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A boolean; `None` is null.
#[derive(Default)]
pub struct Bool(BooleanBuilder);

impl Column for Bool {
    type Value<'a> = Option<bool>;
    fn data_type() -> DataType {
        DataType::Boolean
    }
    fn doc_type() -> &'static str {
        "boolean"
    }
    fn push(&mut self, value: &Self::Value<'_>) {
        self.0.append_option(*value);
    }
    fn size(_: &Self::Value<'_>) -> usize {
        1
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A list of texts (never null; empty when there is nothing to list).
pub struct Texts(ListBuilder<StringBuilder>);

impl Default for Texts {
    fn default() -> Self {
        Texts(ListBuilder::new(StringBuilder::new()).with_field(item()))
    }
}

fn item() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Utf8, false))
}

impl Column for Texts {
    type Value<'a> = Vec<&'a str>;
    fn data_type() -> DataType {
        DataType::List(item())
    }
    fn doc_type() -> &'static str {
        "list<string>"
    }
    fn push(&mut self, value: &Self::Value<'_>) {
        for v in value {
            self.0.values().append_value(v);
        }
        self.0.append(true);
    }
    fn size(value: &Self::Value<'_>) -> usize {
        4 + value.iter().map(|v| v.len() + 4).sum::<usize>()
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}

/// A list of texts that may be null (a question not asked); an empty list is an answer.
pub struct MaybeTexts(ListBuilder<StringBuilder>);

impl Default for MaybeTexts {
    fn default() -> Self {
        MaybeTexts(ListBuilder::new(StringBuilder::new()).with_field(item()))
    }
}

impl Column for MaybeTexts {
    type Value<'a> = Option<Vec<&'a str>>;
    fn data_type() -> DataType {
        DataType::List(item())
    }
    fn doc_type() -> &'static str {
        "list<string>"
    }
    fn push(&mut self, value: &Self::Value<'_>) {
        for v in value.iter().flatten() {
            self.0.values().append_value(v);
        }
        self.0.append(value.is_some());
    }
    fn size(value: &Self::Value<'_>) -> usize {
        value.as_ref().map_or(1, Texts::size)
    }
    fn finish(&mut self) -> ArrayRef {
        Arc::new(self.0.finish())
    }
}
