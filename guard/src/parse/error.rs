//! What a strict parse rejects, and where: the operator's view of a body that is not
//! strict JSON (the agent never sees one).

use std::fmt;

use crate::audit::{Diagnostic, Stage};

/// Why a body is not strict JSON.
///
/// Variants that name input (`DuplicateMember`) are operator diagnostics only; the agent
/// never sees a parse error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The body is empty or only whitespace.
    EmptyBody,
    /// The body starts with a UTF-8 byte-order mark.
    ByteOrderMark,
    /// A byte sequence that is not UTF-8.
    InvalidUtf8,
    /// The body ended inside a value.
    UnexpectedEnd,
    /// A byte that cannot start or continue a value here.
    UnexpectedByte(u8),
    /// `/` where a value was expected: JSON has no comments.
    Comment,
    /// `NaN`, `Infinity` or `-Infinity`, which JSON does not have.
    NonFiniteNumber,
    /// A string delimited by `'`.
    SingleQuotedString,
    /// A member name appearing twice in one object (compared after unescaping).
    DuplicateMember(String),
    /// Containers nested deeper than the limit.
    TooDeep {
        /// The configured maximum depth.
        max_depth: usize,
    },
    /// A raw control character (U+0000..U+001F) inside a string.
    ControlCharacterInString,
    /// A backslash escape that JSON does not define.
    InvalidEscape,
    /// A `\uD800`..`\uDFFF` escape that is not part of a surrogate pair.
    LoneSurrogate,
    /// A number that does not follow the JSON grammar (leading zero, bare `-`, `1.`).
    InvalidNumber,
    /// An integer outside the 64-bit range (`-2^63 ..= 2^64-1`); rejected rather than
    /// rounded to a float the agent would read as a different value.
    IntegerOutOfRange,
    /// A number whose magnitude overflows `f64` (such as `1e400`).
    NumberOverflow,
    /// A non-zero number too small for `f64` that would silently become `0`.
    NumberUnderflow,
    /// Bytes after the value (a second document, garbage, an unclosed HTML tail).
    TrailingBytes,
    /// A body of 512 MiB or more: past what the parsed form addresses (the guard's own
    /// limit, [`MAX_BYTES_CEILING`](crate::limits::MAX_BYTES_CEILING), is far below).
    TooLarge,
    /// More values than [`parse_within`](crate::parse_within)'s budget allowed.
    TooManyValues {
        /// The budget the body passed.
        max_values: usize,
    },
}

/// A strict-parse rejection: what and where (byte offset into the body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    kind: ParseErrorKind,
    offset: usize,
}

impl ParseError {
    pub(super) fn new(kind: ParseErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// A duplicate `name` at `offset`; the name is kept to its first 256 bytes (a name
    /// can be as long as the body, and the message quotes 128).
    pub(super) fn duplicate(name: &str, offset: usize) -> Self {
        let mut end = name.len().min(256);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        Self::new(
            ParseErrorKind::DuplicateMember(name[..end].to_owned()),
            offset,
        )
    }

    /// What went wrong.
    pub fn kind(&self) -> &ParseErrorKind {
        &self.kind
    }

    /// The byte offset in the body where it went wrong.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// A short stable name for the kind, used as the diagnostic keyword.
    pub fn keyword(&self) -> &'static str {
        match self.kind {
            ParseErrorKind::EmptyBody => "empty_body",
            ParseErrorKind::ByteOrderMark => "byte_order_mark",
            ParseErrorKind::InvalidUtf8 => "invalid_utf8",
            ParseErrorKind::UnexpectedEnd => "unexpected_end",
            ParseErrorKind::UnexpectedByte(_) => "unexpected_byte",
            ParseErrorKind::Comment => "comment",
            ParseErrorKind::NonFiniteNumber => "non_finite_number",
            ParseErrorKind::SingleQuotedString => "single_quoted_string",
            ParseErrorKind::DuplicateMember(_) => "duplicate_member",
            ParseErrorKind::TooDeep { .. } => "max_depth",
            ParseErrorKind::ControlCharacterInString => "control_character",
            ParseErrorKind::InvalidEscape => "invalid_escape",
            ParseErrorKind::LoneSurrogate => "lone_surrogate",
            ParseErrorKind::InvalidNumber => "invalid_number",
            ParseErrorKind::IntegerOutOfRange => "integer_out_of_range",
            ParseErrorKind::NumberOverflow => "number_overflow",
            ParseErrorKind::NumberUnderflow => "number_underflow",
            ParseErrorKind::TrailingBytes => "trailing_bytes",
            ParseErrorKind::TooLarge => "too_large",
            ParseErrorKind::TooManyValues { .. } => "too_many_values",
        }
    }

    /// The operator diagnostic of this error (stage `parse`, with the byte offset).
    pub(crate) fn into_diagnostic(self) -> Diagnostic {
        Diagnostic::new(
            Stage::Parse,
            self.keyword(),
            self.to_string(),
            self.masked_message(),
        )
        .with_byte_offset(self.offset())
    }

    /// The message without any text taken from the input.
    pub fn masked_message(&self) -> String {
        match &self.kind {
            ParseErrorKind::DuplicateMember(_) => {
                format!("duplicate member name at byte {}", self.offset)
            }
            ParseErrorKind::UnexpectedByte(_) => format!("unexpected byte at byte {}", self.offset),
            _ => self.to_string(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            ParseErrorKind::EmptyBody => write!(f, "empty body"),
            ParseErrorKind::ByteOrderMark => write!(f, "byte-order mark at byte {at}"),
            ParseErrorKind::InvalidUtf8 => write!(f, "invalid UTF-8 at byte {at}"),
            ParseErrorKind::UnexpectedEnd => write!(f, "body ends inside a value at byte {at}"),
            ParseErrorKind::UnexpectedByte(b) if b.is_ascii_graphic() => {
                write!(f, "unexpected '{}' at byte {at}", char::from(*b))
            }
            ParseErrorKind::UnexpectedByte(b) => {
                write!(f, "unexpected byte 0x{b:02x} at byte {at}")
            }
            ParseErrorKind::Comment => write!(f, "comment at byte {at}: JSON has no comments"),
            ParseErrorKind::NonFiniteNumber => {
                write!(f, "NaN or Infinity at byte {at}: not a JSON number")
            }
            ParseErrorKind::SingleQuotedString => write!(f, "single-quoted string at byte {at}"),
            ParseErrorKind::DuplicateMember(name) => {
                // A member name can be as long as the body: quote its first 128 bytes.
                let mut end = name.len().min(128);
                while !name.is_char_boundary(end) {
                    end -= 1;
                }
                let cut = if end < name.len() { "…" } else { "" };
                write!(
                    f,
                    "duplicate member name {:?}{cut} at byte {at}",
                    &name[..end]
                )
            }
            ParseErrorKind::TooDeep { max_depth } => {
                write!(f, "nesting deeper than {max_depth} at byte {at}")
            }
            ParseErrorKind::ControlCharacterInString => {
                write!(f, "raw control character in a string at byte {at}")
            }
            ParseErrorKind::InvalidEscape => write!(f, "invalid escape at byte {at}"),
            ParseErrorKind::LoneSurrogate => write!(f, "lone surrogate escape at byte {at}"),
            ParseErrorKind::InvalidNumber => write!(f, "malformed number at byte {at}"),
            ParseErrorKind::IntegerOutOfRange => {
                write!(f, "integer beyond 64 bits at byte {at}")
            }
            ParseErrorKind::NumberOverflow => write!(f, "number overflows f64 at byte {at}"),
            ParseErrorKind::NumberUnderflow => {
                write!(f, "non-zero number underflows f64 to zero at byte {at}")
            }
            ParseErrorKind::TrailingBytes => write!(f, "bytes after the JSON value at byte {at}"),
            ParseErrorKind::TooLarge => write!(f, "body of 512 MiB or more: too large to parse"),
            ParseErrorKind::TooManyValues { max_values } => {
                write!(f, "more than {max_values} values (members and items)")
            }
        }
    }
}

impl std::error::Error for ParseError {}
