//! The dialects a contract's schema may use, and how each is recognised.

use jsonschema::Draft;
use serde_json::Value;
use std::fmt;

/// The dialect of a schema without `$schema` (MCP's default), and the newest one.
pub const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";
/// Draft 2019-09's meta-schema URI.
pub const DRAFT_2019_09: &str = "https://json-schema.org/draft/2019-09/schema";
/// Draft-07's meta-schema URI (written with or without the trailing `#`): the dialect of
/// most generated schemas (zod, pydantic v1).
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema";

/// A JSON Schema dialect a contract may use. A schema without `$schema` is Draft 2020-12.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Draft-07 (`http://json-schema.org/draft-07/schema#`): `definitions`, `items` as an
    /// array is a tuple (`additionalItems`), `dependencies`, and a `$ref` makes its
    /// sibling keywords ignored.
    Draft7,
    /// Draft 2019-09: `$defs`, `items` as an array is a tuple (`additionalItems`),
    /// `$recursiveRef`, `unevaluated*`; a `$ref` composes with its siblings.
    Draft2019_09,
    /// Draft 2020-12: `prefixItems`, `$dynamicRef`. The default.
    Draft2020_12,
}

impl Dialect {
    /// Every dialect a contract may use, oldest first.
    pub const ALL: [Dialect; 3] = [
        Dialect::Draft7,
        Dialect::Draft2019_09,
        Dialect::Draft2020_12,
    ];

    /// The meta-schema URI (draft-07's with its customary `#`).
    #[must_use]
    pub fn uri(self) -> &'static str {
        match self {
            Dialect::Draft7 => "http://json-schema.org/draft-07/schema#",
            Dialect::Draft2019_09 => DRAFT_2019_09,
            Dialect::Draft2020_12 => DRAFT_2020_12,
        }
    }

    /// The dialect a `$schema` URI names, with or without a trailing `#`; `None` for any
    /// other URI (another draft, `https` for draft-07, a custom meta-schema).
    #[must_use]
    pub fn from_uri(uri: &str) -> Option<Self> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        Self::ALL
            .into_iter()
            .find(|d| d.uri().trim_end_matches('#') == uri)
    }

    /// The dialect `document` declares: its `$schema`, or Draft 2020-12 when it has none;
    /// `None` when `$schema` names no dialect of [`Dialect::ALL`].
    #[must_use]
    pub fn of(document: &Value) -> Option<Self> {
        match document.get("$schema") {
            None => Some(Dialect::Draft2020_12),
            Some(uri) => uri.as_str().and_then(Self::from_uri),
        }
    }

    /// Whether a `$ref` makes the other keywords of its schema object ignored (draft-07).
    #[must_use]
    pub fn ref_overrides_siblings(self) -> bool {
        self == Dialect::Draft7
    }

    pub(super) fn draft(self) -> Draft {
        match self {
            Dialect::Draft7 => Draft::Draft7,
            Dialect::Draft2019_09 => Draft::Draft201909,
            Dialect::Draft2020_12 => Draft::Draft202012,
        }
    }
}

impl fmt::Display for Dialect {
    /// `draft-07`, `2019-09`, `2020-12`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dialect::Draft7 => "draft-07",
            Dialect::Draft2019_09 => "2019-09",
            Dialect::Draft2020_12 => "2020-12",
        })
    }
}
