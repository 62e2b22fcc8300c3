//! The semantic comparison: both versions canonicalized by jsonschema's (experimental) set
//! algebra with the guard's settings (formats asserted, the `regex` engine), differences in
//! both directions, and questions about one location ("can the old version ever put this
//! value here?"). An answer is `No` (a proof), `Yes`, `Unknown`, or refused with a reason.

use jsonschema::canonical::{CanonicalKind, CanonicalSchema, CanonicalView, Satisfiability};
use jsonschema::PatternOptions;
use serde::Serialize;
use serde_json::{json, Value};

/// What the algebra says about one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "answer", content = "reason")]
pub enum Existence {
    /// Proved: no instance.
    No,
    /// Some instance exists (a witness is still needed to show one).
    Yes,
    /// Undecided.
    Unknown,
    /// The algebra declined (a construct it does not model, a result it cannot express).
    Refused(String),
}

impl Existence {
    fn of(s: Satisfiability) -> Self {
        match s {
            Satisfiability::No => Existence::No,
            Satisfiability::Yes => Existence::Yes,
            Satisfiability::Unknown => Existence::Unknown,
        }
    }

    /// Its name: `no`, `yes`, `unknown`, `refused`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Existence::No => "no",
            Existence::Yes => "yes",
            Existence::Unknown => "unknown",
            Existence::Refused(_) => "refused",
        }
    }
}

/// Why a document has no canonical schema; its `Display` is the reason a certificate
/// gives for an answer the algebra refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CanonicalError {
    /// The document does not canonicalize (jsonschema's reason).
    #[error("{0}")]
    Canonicalize(String),
    /// It holds a construct the canonical form does not model (a `Raw` result): why,
    /// and where in the document when the algebra says.
    #[error(
        "a construct the algebra does not model ({reason}{})",
        pointer.as_ref().map(|p| format!(" at {p:?}")).unwrap_or_default()
    )]
    Raw {
        /// The algebra's reason (`raw` when it gave none).
        reason: String,
        /// Where in the document.
        pointer: Option<String>,
    },
}

/// A canonical schema with the guard's settings, or why not.
///
/// # Errors
///
/// [`CanonicalError`]: the document does not canonicalize or holds a construct the
/// canonical form does not model (a `Raw` result).
pub(crate) fn canonical(document: &Value) -> Result<CanonicalSchema, CanonicalError> {
    let schema = jsonschema::canonical::options()
        .should_validate_formats(true)
        .with_pattern_options(PatternOptions::regex())
        .canonicalize(document)
        .map_err(|e| CanonicalError::Canonicalize(e.to_string()))?;
    if schema.kind() == CanonicalKind::Raw {
        return Err(match schema.view() {
            CanonicalView::Raw(raw) => CanonicalError::Raw {
                reason: raw.reason.as_str().to_owned(),
                pointer: raw.pointer,
            },
            _ => CanonicalError::Raw {
                reason: "raw".to_owned(),
                pointer: None,
            },
        });
    }
    Ok(schema)
}

/// `a \ b` and whether it holds anything; the difference as a schema (the raw material
/// of witnesses) when it holds something, was expressible, and its JSON text is at most
/// `max_bytes` long (a SchemaStore-sized difference runs to megabytes).
pub(crate) fn difference(
    a: &CanonicalSchema,
    b: &CanonicalSchema,
    max_bytes: usize,
) -> (Existence, Option<Value>) {
    match a.subtract(b) {
        Ok(d) => {
            let answer = Existence::of(d.satisfiability());
            let schema = (answer != Existence::No)
                .then(|| d.to_json_schema())
                .filter(|s| fits(s, max_bytes));
            (answer, schema)
        }
        Err(e) => (Existence::Refused(e.to_string()), None),
    }
}

/// Whether `value` as JSON text is at most `max` bytes (counted, never built).
fn fits(value: &Value, max: usize) -> bool {
    struct Counter(usize, usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            if self.0 > self.1 {
                return Err(std::io::Error::other("too large"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Counter(0, max), value).is_ok()
}

/// `side` restricted by `extra` schemas (each in the dialect of `dialect`, the version's
/// `$schema`), and whether anything is left; the restriction as a schema when expressible.
pub(crate) fn restricted(
    side: &CanonicalSchema,
    extra: &[Value],
    dialect: Option<&Value>,
) -> (Existence, Option<Value>) {
    let mut current = side.clone();
    for schema in extra {
        let mut schema = schema.clone();
        if let (Some(d), Value::Object(map)) = (dialect, &mut schema) {
            map.insert("$schema".into(), d.clone());
        }
        let next = canonical(&schema)
            .map_err(|e| e.to_string())
            .and_then(|s| current.intersect(&s).map_err(|e| e.to_string()));
        match next {
            Ok(next) => current = next,
            Err(reason) => return (Existence::Refused(reason), None),
        }
    }
    (
        Existence::of(current.satisfiability()),
        Some(current.to_json_schema()),
    )
}

/// The schema of instances holding `inner` at `pointer` (a member chain; the empty pointer
/// is `inner` itself).
pub(crate) fn at(pointer: &str, inner: Value) -> Value {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    tokens.iter().rev().fold(
        inner,
        |inner, token| json!({"type": "object", "required": [token], "properties": {token: inner}}),
    )
}

/// The schema of instances where `pointer` leads nowhere (some member on the way missing).
pub(crate) fn absent(pointer: &str) -> Value {
    json!({"not": at(pointer, Value::Bool(true))})
}

/// The envelope's success and failure gates.
pub(crate) fn outcome(which: &str) -> Value {
    at("/outcome", json!({"const": which}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_assertions_as_in_the_guard() {
        let old = canonical(&json!({"type": "string", "format": "date-time"})).unwrap();
        let new = canonical(&json!({"type": "string"})).unwrap();
        assert_eq!(difference(&old, &new, 4096).0, Existence::No);
        assert_ne!(difference(&new, &old, 4096).0, Existence::No);
    }

    #[test]
    fn a_location_question_is_answered_on_the_whole_schema() {
        let s = canonical(&json!({"type": "object", "required": ["a"],
            "properties": {"a": {"enum": ["x", "y"]}}}))
        .unwrap();
        let (answer, _) = restricted(&s, &[at("/a", json!({"const": "z"}))], None);
        assert_eq!(answer, Existence::No);
        let (answer, _) = restricted(&s, &[absent("/a")], None);
        assert_eq!(answer, Existence::No);
        let (answer, _) = restricted(&s, &[at("/a", json!({"const": "y"}))], None);
        assert_ne!(answer, Existence::No);
    }
}
