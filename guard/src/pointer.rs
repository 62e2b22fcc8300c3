//! JSON Pointers (RFC 6901) as the contract names fields: parsed once at load time.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// Why a text is not a JSON Pointer ([`Pointer::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PointerError {
    /// A non-empty pointer that does not start with `/`.
    #[error("JSON pointer {text:?} must start with '/'")]
    NoLeadingSlash {
        /// The text as given.
        text: String,
    },
    /// A `~` that is not `~0` or `~1`.
    #[error("JSON pointer {text:?} has a bad '~' escape")]
    BadEscape {
        /// The text as given.
        text: String,
    },
}

/// A parsed JSON Pointer such as `/data/run_id`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pointer {
    text: String,
    tokens: Vec<String>,
}

impl Pointer {
    /// Parse a pointer; it must be empty or start with `/`, and `~` only as `~0`/`~1`.
    ///
    /// # Errors
    ///
    /// A [`PointerError`] naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, PointerError> {
        if text.is_empty() {
            return Ok(Self {
                text: String::new(),
                tokens: Vec::new(),
            });
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(PointerError::NoLeadingSlash {
                text: text.to_owned(),
            });
        };
        let mut tokens = Vec::new();
        for raw in rest.split('/') {
            let mut token = String::with_capacity(raw.len());
            let mut chars = raw.chars();
            while let Some(c) = chars.next() {
                match (c, c == '~') {
                    (_, false) => token.push(c),
                    (_, true) => match chars.next() {
                        Some('0') => token.push('~'),
                        Some('1') => token.push('/'),
                        _ => {
                            return Err(PointerError::BadEscape {
                                text: text.to_owned(),
                            })
                        }
                    },
                }
            }
            tokens.push(token);
        }
        Ok(Self {
            text: text.to_owned(),
            tokens,
        })
    }

    /// The pointer as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The unescaped reference tokens.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The tokens below `/data` (or all of them when the pointer is not under `/data`):
    /// where the field lands inside the agent's `data`.
    pub(crate) fn agent_tokens(&self) -> &[String] {
        match self.tokens.split_first() {
            Some((first, rest)) if first == "data" && !rest.is_empty() => rest,
            _ => &self.tokens,
        }
    }

    /// `token` escaped as one reference token of a pointer (RFC 6901: `~` as `~0`, then
    /// `/` as `~1`); borrowed when there is nothing to escape. The one escaping of the
    /// guard: a pointer is built as `format!("{at}/{}", Pointer::escape_token(name))`.
    ///
    /// ```
    /// use airlock_guard::Pointer;
    ///
    /// assert_eq!(Pointer::escape_token("a/b~c"), "a~1b~0c");
    /// assert_eq!(Pointer::escape_token("plain"), "plain");
    /// ```
    pub fn escape_token(token: &str) -> Cow<'_, str> {
        if token.contains(['~', '/']) {
            Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
        } else {
            Cow::Borrowed(token)
        }
    }

    /// The value this pointer names in `value`, if any.
    pub fn resolve<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        let mut at = value;
        for token in &self.tokens {
            at = match at {
                Value::Object(map) => member(map, token)?,
                Value::Array(items) => items.get(array_index(token)?)?,
                _ => return None,
            };
        }
        Some(at)
    }
}

/// Objects with at most this many members are searched by a scan: comparing a few short
/// names costs less than hashing one with `serde_json`'s SipHash.
const SCAN: usize = 8;

/// `map[name]`, by a scan for small objects and the hash index otherwise.
pub(crate) fn member<'v>(map: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    if map.len() <= SCAN {
        map.iter()
            .find_map(|(key, value)| (key == name).then_some(value))
    } else {
        map.get(name)
    }
}

/// A reference token as an array index: digits without a leading zero (RFC 6901).
pub(crate) fn array_index(token: &str) -> Option<usize> {
    if token.len() > 1 && token.starts_with('0') {
        return None;
    }
    token.parse().ok()
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointer_escapes_are_decoded_and_resolve_finds_the_member() {
        let p = Pointer::parse("/a~1b/c~0d/1").unwrap();
        assert_eq!(p.tokens(), ["a/b", "c~d", "1"]);
        let v = json!({"a/b": {"c~d": [0, "hit"]}});
        assert_eq!(p.resolve(&v), Some(&json!("hit")));
    }

    #[test]
    fn array_indices_with_a_leading_zero_name_nothing() {
        let v = json!([10, 20]);
        assert_eq!(Pointer::parse("/1").unwrap().resolve(&v), Some(&json!(20)));
        assert_eq!(Pointer::parse("/01").unwrap().resolve(&v), None);
        assert_eq!(Pointer::parse("/0").unwrap().resolve(&v), Some(&json!(10)));
    }

    #[test]
    fn member_lookup_agrees_with_the_index_below_and_above_the_scan_size() {
        for size in [0, 1, SCAN, SCAN + 1, 40] {
            let map: Map<String, Value> = (0..size).map(|i| (format!("k{i}"), json!(i))).collect();
            for probe in ["k0", "k7", "k8", "k39", "k", "missing", ""] {
                assert_eq!(
                    member(&map, probe),
                    map.get(probe),
                    "{size} members, {probe}"
                );
            }
        }
    }

    #[test]
    fn malformed_pointers_are_refused() {
        assert!(Pointer::parse("data/x").is_err());
        assert!(Pointer::parse("/a~2").is_err());
    }
}
