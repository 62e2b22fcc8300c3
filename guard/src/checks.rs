//! Stage 5: semantic checks. Declarative ones from the contract (`fresh`) and custom ones
//! in Rust. Time is the request's `now`, never a global clock. A check on an absent field
//! does not apply.

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;
use std::fmt;

use crate::audit::{bounded, Diagnostic, Stage};
use crate::doc::Node;
use crate::pointer::{member, Pointer};
use crate::request::Request;

/// A declarative check from `contract.toml`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CheckSpec {
    /// `field == request.params[param]` (a binding check).
    EqualsParam {
        /// The response member.
        field: Pointer,
        /// The request parameter.
        param: String,
    },
    /// `field` is one of the array `request.params[param]` (a binding check).
    InParam {
        /// The response member.
        field: Pointer,
        /// The request parameter holding an array.
        param: String,
    },
    /// `field` is an RFC 3339 time within `[now - max_age, now + max_skew]`.
    Fresh {
        /// The response member.
        field: Pointer,
        /// How old it may be.
        max_age: SignedDuration,
        /// How far in the future it may be (clock skew).
        max_skew: SignedDuration,
    },
}

impl CheckSpec {
    /// The response member the check reads.
    pub fn field(&self) -> &Pointer {
        match self {
            CheckSpec::EqualsParam { field, .. }
            | CheckSpec::InParam { field, .. }
            | CheckSpec::Fresh { field, .. } => field,
        }
    }

    /// The check's kind as written in `contract.toml`.
    pub fn kind(&self) -> &'static str {
        match self {
            CheckSpec::EqualsParam { .. } => "equals_param",
            CheckSpec::InParam { .. } => "in_param",
            CheckSpec::Fresh { .. } => "fresh",
        }
    }

    /// The stage this check belongs to: parameter checks bind, time checks are semantic.
    pub fn stage(&self) -> Stage {
        match self {
            CheckSpec::EqualsParam { .. } | CheckSpec::InParam { .. } => Stage::Binding,
            CheckSpec::Fresh { .. } => Stage::Checks,
        }
    }

    /// Run the check; an absent field passes.
    ///
    /// # Errors
    ///
    /// The operator diagnostic of the violation.
    pub fn run(&self, request: &Request, response: &Value) -> Result<(), Diagnostic> {
        self.judge(request, self.field().resolve(response))
    }

    /// [`CheckSpec::run`] on the guard's parsed document.
    pub(crate) fn run_doc(&self, request: &Request, response: Node<'_>) -> Result<(), Diagnostic> {
        self.judge(request, response.resolve(self.field()).as_ref())
    }

    fn judge<M: Member + ?Sized>(
        &self,
        request: &Request,
        value: Option<&M>,
    ) -> Result<(), Diagnostic> {
        let field = self.field();
        let Some(value) = value else {
            return Ok(());
        };
        let fail = |message: String, masked: String| {
            Err(Diagnostic::new(self.stage(), self.kind(), message, masked)
                .with_instance_path(field.as_str()))
        };
        match self {
            CheckSpec::EqualsParam { param, .. } => match member(&request.params, param) {
                Some(expected) if value.same_as(expected) => Ok(()),
                Some(expected) => fail(
                    format!(
                        "{} is not the requested {param} {}",
                        bounded(value),
                        bounded(expected)
                    ),
                    format!("value is not the requested {param}"),
                ),
                None => fail(
                    format!("the request has no parameter {param:?} to compare with"),
                    format!("the request has no parameter {param:?} to compare with"),
                ),
            },
            CheckSpec::InParam { param, .. } => match member(&request.params, param) {
                Some(Value::Array(allowed)) if allowed.iter().any(|a| value.same_as(a)) => Ok(()),
                Some(Value::Array(_)) => fail(
                    format!("{} is not one of the requested {param}", bounded(value)),
                    format!("value is not one of the requested {param}"),
                ),
                _ => fail(
                    format!("the request parameter {param:?} is missing or not an array"),
                    format!("the request parameter {param:?} is missing or not an array"),
                ),
            },
            CheckSpec::Fresh {
                max_age, max_skew, ..
            } => {
                let Some(time) = value.text().and_then(parse_time) else {
                    return fail(
                        format!("{} is not an RFC 3339 time", bounded(value)),
                        "value is not an RFC 3339 time".into(),
                    );
                };
                let now = request.now;
                let age = now.duration_since(time);
                if age > *max_age {
                    return fail(
                        format!(
                            "{time} is {} old, older than {max_age:#} before {now}",
                            Friendly(age)
                        ),
                        format!("time is older than {max_age:#}"),
                    );
                }
                if -age > *max_skew {
                    return fail(
                        format!(
                            "{time} is {} ahead of {now}, more than the {max_skew:#} allowed",
                            Friendly(-age)
                        ),
                        format!("time is more than {max_skew:#} in the future"),
                    );
                }
                Ok(())
            }
        }
    }
}

/// What a check reads of a response member: a `serde_json` value or a document node.
trait Member: fmt::Display {
    fn text(&self) -> Option<&str>;
    /// Equality under `serde_json`'s rules.
    fn same_as(&self, other: &Value) -> bool;
}

impl Member for Value {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn same_as(&self, other: &Value) -> bool {
        self == other
    }
}

impl Member for Node<'_> {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }
    fn same_as(&self, other: &Value) -> bool {
        Node::same_as(*self, other)
    }
}

struct Friendly(SignedDuration);

impl fmt::Display for Friendly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

/// Why a custom check refused a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    message: String,
    instance_path: Option<String>,
}

impl CheckFailure {
    /// A failure with an operator message (it may quote the response).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            instance_path: None,
        }
    }

    /// Point at the offending member.
    #[must_use]
    pub fn at(mut self, instance_path: impl Into<String>) -> Self {
        self.instance_path = Some(instance_path.into());
        self
    }

    pub(crate) fn into_diagnostic(self, name: &str) -> Diagnostic {
        let masked = format!("custom check {name} failed");
        let d = Diagnostic::new(Stage::Checks, name, self.message, masked);
        match self.instance_path {
            Some(path) => d.with_instance_path(path),
            None => d,
        }
    }
}

/// A semantic check written in Rust. It sees the request (with its `now`) and the parsed,
/// schema-valid response, and runs after the contract's own checks.
///
/// ```
/// use airlock_guard::{CheckFailure, CustomCheck, Request};
/// use serde_json::Value;
///
/// /// Evidence gathered during the nightly maintenance window (02:00–03:00 UTC) is stale.
/// struct OutsideMaintenance;
///
/// impl CustomCheck for OutsideMaintenance {
///     fn name(&self) -> &str {
///         "outside_maintenance"
///     }
///     fn check(&self, request: &Request, _response: &Value) -> Result<(), CheckFailure> {
///         let second_of_day = request.now.as_second().rem_euclid(86_400);
///         if (7_200..10_800).contains(&second_of_day) {
///             return Err(CheckFailure::new("evidence from the maintenance window is not trusted"));
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait CustomCheck: Send + Sync {
    /// A short name, used as the diagnostic keyword.
    fn name(&self) -> &str;
    /// Judge the response.
    ///
    /// # Errors
    ///
    /// A [`CheckFailure`] rejects the response.
    fn check(&self, request: &Request, response: &Value) -> Result<(), CheckFailure>;
}

/// Why a text is not a contract duration ([`parse_duration`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a duration at all.
    #[error("{text:?} is not a duration such as \"15m\" or \"10s\": {reason}")]
    NotADuration {
        /// The text as given.
        text: String,
        /// The duration parser's reason.
        reason: String,
    },
    /// A duration below zero.
    #[error("{text:?} is negative")]
    Negative {
        /// The text as given.
        text: String,
    },
}

/// Parse a contract duration: `"15m"`, `"1h 30m"`, `"10s"`, `"250ms"` or ISO 8601
/// `"PT15M"`; never negative.
///
/// # Errors
///
/// A [`DurationError`] saying why the text is not a duration.
pub fn parse_duration(text: &str) -> Result<SignedDuration, DurationError> {
    let duration: SignedDuration =
        text.parse()
            .map_err(|e: jiff::Error| DurationError::NotADuration {
                text: text.to_owned(),
                reason: e.to_string(),
            })?;
    if duration.is_negative() {
        return Err(DurationError::Negative {
            text: text.to_owned(),
        });
    }
    Ok(duration)
}

/// An RFC 3339 time, as strictly as the request's `now` is read
/// ([`crate::upstream::is_rfc3339`]; `t` and `z` may be written in lower case, as RFC 3339
/// allows): the lenient reader underneath also takes `+25:00`, a space for the `T`, or no
/// seconds, which a contract without `format: date-time` beside its `fresh` check would
/// otherwise admit. Fraction digits past the ninth (below a nanosecond, which the
/// schema's `date-time` admits but a timestamp cannot hold) are truncated: the time is
/// read at most a nanosecond early, never late.
fn parse_time(text: &str) -> Option<Timestamp> {
    let fraction = text.find('.').filter(|_| text.len() > 20);
    let digits = fraction.map_or(0, |dot| {
        text[dot + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count()
    });
    let mut time = match fraction {
        Some(dot) if digits > 9 => {
            format!("{}{}", &text[..dot + 10], &text[dot + 1 + digits..])
        }
        _ => text.to_owned(),
    };
    time.make_ascii_uppercase();
    // A leap second (`23:59:60Z`) is RFC 3339, and `date-time` admits it; the shape check
    // (written for `now`) refuses it, so it is checked as `:59`. The reader takes `:60`
    // as the second before.
    let shape = match time.get(17..19) {
        Some("60") => format!("{}59{}", &time[..17], &time[19..]),
        _ => time.clone(),
    };
    if !crate::upstream::is_rfc3339(&shape) {
        return None;
    }
    time.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fresh_reads_every_fraction_the_schema_admits_truncating_below_a_nanosecond() {
        let r = request();
        // 30 characters, one minute old: the schema's date-time admits it.
        let long = "2026-12-02T09:59:00.1234567890Z";
        assert!(fresh().run(&r, &json!({"t": long})).is_ok());
        assert_eq!(
            parse_time(long),
            "2026-12-02T09:59:00.123456789Z".parse().ok()
        );
        // Truncated, never rounded up: 0.9999999999 s past the skew is still past it.
        let past = "2026-12-02T10:01:00.0000000001Z";
        assert_eq!(parse_time(past), "2026-12-02T10:01:00Z".parse().ok());
        assert!(fresh()
            .run(&r, &json!({"t": "2026-12-02T10:01:00.0000001Z"}))
            .is_err());
        assert!(fresh()
            .run(&r, &json!({"t": "2026-12-02T10:00:59.99999999999+00:00"}))
            .is_ok());
    }

    fn request() -> Request {
        Request::new("req.12345678", "2026-12-02T10:00:00Z".parse().unwrap())
            .param("project_id", "bluebird")
            .param("run_ids", json!(["run_a", "run_b"]))
    }

    fn fresh() -> CheckSpec {
        CheckSpec::Fresh {
            field: Pointer::parse("/t").unwrap(),
            max_age: parse_duration("15m").unwrap(),
            max_skew: parse_duration("1m").unwrap(),
        }
    }

    #[test]
    fn fresh_window_edges_are_inclusive() {
        let r = request();
        for ok in [
            "2026-12-02T09:45:00Z",
            "2026-12-02T10:01:00Z",
            "2026-12-02T11:00:00+01:00",
        ] {
            assert!(fresh().run(&r, &json!({"t": ok})).is_ok(), "{ok}");
        }
        for bad in [
            "2026-12-02T09:44:59Z",
            "2026-12-02T10:01:01Z",
            "2026-12-02T10:00:00+01:00",
        ] {
            assert_eq!(
                fresh().run(&r, &json!({"t": bad})).unwrap_err().keyword(),
                "fresh",
                "{bad}"
            );
        }
    }

    #[test]
    fn fresh_on_an_unparseable_time_rejects() {
        assert!(fresh().run(&request(), &json!({"t": "soon"})).is_err());
    }

    /// Times a lenient reader takes, each within the window as it reads them: `fresh`
    /// holds the field to RFC 3339 as the request's `now` is held (a contract need not pair
    /// the check with `format: date-time`).
    #[test]
    fn fresh_reads_times_strictly_as_rfc_3339() {
        let r = request();
        for lenient in [
            "2026-12-02 09:59:00Z",
            "2026-12-02T09:59Z",
            "2026-12-01T09:00:00-25:00",
            "2026-12-02T09:59:00+0000",
            "2026-12-02T09:59:00+00",
            "20261202T095900Z",
            "2026-12-02T09:59:00Z[UTC]",
            "2026-12-02T09:59:00,5Z",
            "2026-12-02T09:59:00",
        ] {
            let d = fresh().run(&r, &json!({"t": lenient})).unwrap_err();
            assert_eq!(d.keyword(), "fresh", "{lenient}");
        }
        for strict in [
            "2026-12-02T09:59:00Z",
            "2026-12-02t09:59:00.5z",
            "2026-12-02T09:59:60Z",
            "2026-12-02T10:59:60.25+01:00",
        ] {
            assert!(fresh().run(&r, &json!({"t": strict})).is_ok(), "{strict}");
        }
    }

    #[test]
    fn checks_on_absent_fields_do_not_apply() {
        assert!(fresh().run(&request(), &json!({"error": {}})).is_ok());
    }

    #[test]
    fn equals_and_in_param_compare_with_the_request() {
        let eq = CheckSpec::EqualsParam {
            field: Pointer::parse("/p").unwrap(),
            param: "project_id".into(),
        };
        assert!(eq.run(&request(), &json!({"p": "bluebird"})).is_ok());
        let d = eq.run(&request(), &json!({"p": "copperhead"})).unwrap_err();
        assert_eq!(d.stage(), Stage::Binding);
        assert!(!d.masked_message().contains("copperhead"));
        let within = CheckSpec::InParam {
            field: Pointer::parse("/r").unwrap(),
            param: "run_ids".into(),
        };
        assert!(within.run(&request(), &json!({"r": "run_b"})).is_ok());
        assert!(within.run(&request(), &json!({"r": "run_c"})).is_err());
    }

    #[test]
    fn durations_parse_in_friendly_and_iso_forms() {
        assert_eq!(
            parse_duration("15m").unwrap(),
            SignedDuration::from_mins(15)
        );
        assert_eq!(
            parse_duration("10s").unwrap(),
            SignedDuration::from_secs(10)
        );
        assert_eq!(
            parse_duration("PT1M").unwrap(),
            SignedDuration::from_mins(1)
        );
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-5m").is_err());
    }
}
