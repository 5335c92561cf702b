//! JSON exactly as JavaScript sees it.
//!
//! pi reads every line with `JSON.parse` and writes with `JSON.stringify`. Those differ from
//! what `serde_json` offers in ways real session files exercise, so this module reproduces them:
//!
//! - strings are sequences of UTF-16 code units, so a lone surrogate escape such as `"\ud83d"`
//!   is a valid string; we store strings as WTF-8 ([`JsString`]) and write lone surrogates
//!   back as `\udXXX` escapes, like `JSON.stringify` does;
//! - numbers are IEEE doubles: `1e400` parses to infinity and is written as `null`,
//!   `12345678901234567890` becomes `12345678901234567000` (ECMAScript `Number::toString`);
//! - duplicate keys: the last value wins at the position of the first occurrence;
//! - integer-like keys (`"0"`, `"1"`, …) come first in ascending order, like any JS object;
//! - nesting depth is limited only by memory: parsing, writing and dropping are iterative.
//!
//! [`parse()`] builds a whole value; [`scan_skeleton`] validates a line just as strictly but
//! builds only the top-level `type`, `id` and `parentId` members, which is all the index needs.

mod escapes;
mod parse;
mod scan;
mod simd;
mod value;
mod write;
mod writer;

pub use escapes::{OptionalEscapes, optional_escapes};
pub use parse::{ParseError, ParseErrorKind, parse};
pub use scan::{Content, MessageScan, Role, Skeleton, SkeletonMembers, scan_skeleton};
pub use scan::{
    Cursor, LineScanner, RawSkeleton, Span, array_elements, is_canonical, object_members,
};
pub use value::{JsArray, JsObject, JsString, JsValue, is_str, truthy};
pub use write::{to_string, to_string_pretty, write_value};
pub use write::{write_number, write_string};
pub use writer::JsonWriter;
