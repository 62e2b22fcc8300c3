//! JSON numbers, strictly: the grammar, integers exact within 64 bits, other numbers the
//! nearest `f64` (refused when that overflows, or underflows a non-zero to 0). The parser
//! checks each number once; the tape reads it again from the body when asked.

use serde_json::Number;

use super::error::{ParseError, ParseErrorKind};

/// The number a text the parser accepted denotes; `None` for a text it refuses.
pub(crate) fn number_of(text: &str) -> Option<Number> {
    scan_number(text.as_bytes(), 0)
        .ok()
        .map(|(number, _)| number)
}

/// The number at `start` (its first byte is `-` or a digit) and the offset after it.
pub(super) fn scan_number(bytes: &[u8], start: usize) -> Result<(Number, usize), ParseError> {
    let err = |kind, offset| Err(ParseError::new(kind, offset));
    let peek = |at: usize| bytes.get(at).copied();
    let digits = |mut at: usize| {
        let from = at;
        while let Some(b'0'..=b'9') = peek(at) {
            at += 1;
        }
        (at, at - from)
    };
    let number_error = |at: usize| match peek(at) {
        None => err(ParseErrorKind::UnexpectedEnd, at),
        Some(b'I' | b'N') => err(ParseErrorKind::NonFiniteNumber, start),
        Some(_) => err(ParseErrorKind::InvalidNumber, start),
    };
    let mut pos = start;
    let negative = peek(pos) == Some(b'-');
    if negative {
        pos += 1;
        if peek(pos) == Some(b'I') {
            return err(ParseErrorKind::NonFiniteNumber, start);
        }
    }
    let int_start = pos;
    let (end, count) = digits(pos);
    pos = end;
    match count {
        0 => return number_error(pos),
        n if n > 1 && bytes[int_start] == b'0' => return err(ParseErrorKind::InvalidNumber, start),
        _ => {}
    }
    let mut integral = true;
    if peek(pos) == Some(b'.') {
        integral = false;
        let (end, count) = digits(pos + 1);
        pos = end;
        if count == 0 {
            return number_error(pos);
        }
    }
    if let Some(b'e' | b'E') = peek(pos) {
        integral = false;
        pos += 1;
        if let Some(b'+' | b'-') = peek(pos) {
            pos += 1;
        }
        let (end, count) = digits(pos);
        pos = end;
        if count == 0 {
            return number_error(pos);
        }
    }
    // Every byte of a number is ASCII, so this slice is valid UTF-8.
    let Ok(text) = std::str::from_utf8(&bytes[start..pos]) else {
        return err(ParseErrorKind::InvalidNumber, start);
    };
    if integral {
        let parsed = if negative {
            text.parse::<i64>().ok().map(Number::from)
        } else {
            text.parse::<u64>().ok().map(Number::from)
        };
        return match parsed {
            // `-0` is kept as the float serde_json makes of it.
            Some(n) if negative && n.as_i64() == Some(0) => match Number::from_f64(-0.0) {
                Some(zero) => Ok((zero, pos)),
                None => err(ParseErrorKind::InvalidNumber, start),
            },
            Some(n) => Ok((n, pos)),
            None => err(ParseErrorKind::IntegerOutOfRange, start),
        };
    }
    let Ok(float) = text.parse::<f64>() else {
        return err(ParseErrorKind::InvalidNumber, start);
    };
    if float.is_infinite() {
        return err(ParseErrorKind::NumberOverflow, start);
    }
    if float == 0.0 && mantissa_has_nonzero_digit(text) {
        return err(ParseErrorKind::NumberUnderflow, start);
    }
    match Number::from_f64(float) {
        Some(n) => Ok((n, pos)),
        None => err(ParseErrorKind::NumberOverflow, start),
    }
}

fn mantissa_has_nonzero_digit(text: &str) -> bool {
    text.bytes()
        .take_while(|b| !matches!(b, b'e' | b'E'))
        .any(|b| matches!(b, b'1'..=b'9'))
}
