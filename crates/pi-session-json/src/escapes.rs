//! Whether JSON text may read otherwise than it is written ([`optional_escapes`]): what lets
//! a reader look for a string in a line's raw bytes instead of parsing the line.

/// The escapes of a JSON text that `JSON.stringify` never writes, so that a string written by
/// it appears in the text as it is but for `\"`, `\\` and control characters, unless the text
/// holds one of these (a hand-written or other writer's line may).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionalEscapes {
    /// A `\u` escape: any character may be written so.
    pub unicode: bool,
    /// A `\/` escape: a slash may be written so.
    pub slash: bool,
}

impl OptionalEscapes {
    /// Whether the text holds either: some string in it may read otherwise than written.
    pub fn any(self) -> bool {
        self.unicode || self.slash
    }

    /// Whether `needle`, a string's text as it reads, may be written otherwise in the text
    /// (through a `\u` escape, or `\/` when it holds a slash).
    pub fn may_hide(self, needle: &str) -> bool {
        self.unicode || (self.slash && needle.contains('/'))
    }
}

/// Which optional escapes `text` (JSON, or part of it) holds. An escaped backslash
/// followed by `u` (`\\u`) counts too: the answer may say "may read otherwise" of a text that
/// does not, never the other way round.
pub fn optional_escapes(text: &[u8]) -> OptionalEscapes {
    OptionalEscapes {
        unicode: memchr::memmem::find(text, b"\\u").is_some(),
        slash: memchr::memmem::find(text, b"\\/").is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_told_apart() {
        let none = optional_escapes(br#"{"a":"b\"c\\d\n"}"#);
        assert!(!none.any());
        let slash = optional_escapes(br#"{"p":"a\/b"}"#);
        assert_eq!((slash.unicode, slash.slash), (false, true));
        assert!(slash.may_hide("a/b") && !slash.may_hide("ab"));
        let unicode = optional_escapes(br#"{"p":"\u0061"}"#);
        assert!(unicode.any() && unicode.may_hide("anything"));
    }
}
