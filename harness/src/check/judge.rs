//! The oracle: the invariants one answer must keep against the reference's agent value —
//! read strictly, one of the two closed shapes, the reference's verdict and value, and no
//! canary from the input anywhere in its bytes.

use airlock_guard::AgentValue;
use serde_json::Value;

use super::failure_kind;
use super::report::FindingKind;
use crate::adapter::AdapterFailure;
use crate::base::answer::{raw_text, Answer};
use crate::base::report::clip;
use crate::base::shape::{closed_shape, Forms};
use crate::cases::{escape_token, Case};

/// The invariants of one case: shape, verdict, value, canaries. An answer given as bytes
/// is read strictly (what any JSON reader would see), and the leak oracle reads every
/// string literal of those bytes too, so a first duplicate member cannot hide a canary.
pub(crate) fn judge(
    case: &Case,
    reference: &AgentValue,
    actual: &Result<Answer, AdapterFailure>,
    forms: Forms,
) -> Vec<(FindingKind, String)> {
    match actual {
        Ok(answer) => judge_answer(&case.canaries, reference, answer, forms),
        Err(failure) => vec![failure_kind(failure)],
    }
}

/// The invariants of one answer: shape, verdict, value, and none of `canaries` (unless
/// the reference carries it). The answer takes one of `forms` (for an MCP contract, a
/// `CallToolResult` is read as the envelope it carries; the leak oracle reads all of it).
pub(crate) fn judge_answer(
    canaries: &[String],
    reference: &AgentValue,
    answer: &Answer,
    forms: Forms,
) -> Vec<(FindingKind, String)> {
    let mut findings = Vec::new();
    let read = answer.read();
    if !canaries.is_empty() {
        let expected = reference.to_json();
        let mut tokens = match &read {
            Ok(agent) => leaked(canaries, &expected, agent),
            Err(_) => Vec::new(),
        };
        if let Some(raw) = answer.raw() {
            for token in leaked_in_text(canaries, &expected, &raw_text(raw)) {
                if !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
        }
        for token in tokens {
            findings.push((
                FindingKind::Leak,
                format!("canary {token:?} from the rejected input reached the agent value"),
            ));
        }
    }
    let agent = match read {
        Ok(agent) => agent,
        Err(reason) => {
            findings.push((
                FindingKind::Shape,
                format!("the agent's bytes are not one unambiguous JSON value: {reason}"),
            ));
            return findings;
        }
    };
    let agent = match forms.envelope(agent.as_ref(), reference.tool(), reference.request_id()) {
        Ok(agent) => agent,
        Err(reason) => {
            findings.push((
                FindingKind::Shape,
                format!("agent value is not a closed CallToolResult: {reason}"),
            ));
            return findings;
        }
    };
    let agent = agent.as_ref();
    let claim = match closed_shape(agent) {
        Ok(claim) => claim,
        Err(reason) => {
            findings.push((
                FindingKind::Shape,
                format!("agent value is not one of the two closed shapes: {reason}"),
            ));
            return findings;
        }
    };
    let reference_admits = reference
        .error()
        .is_none_or(|(code, _)| !code.is_rejection());
    let say = |admits: bool| if admits { "admitted" } else { "rejected" };
    if claim.admits() != reference_admits {
        findings.push((
            FindingKind::Verdict,
            format!(
                "adapter {} what the contract {}",
                say(claim.admits()),
                say(reference_admits)
            ),
        ));
    } else {
        if !same_value(agent, reference) {
            let expected = reference.to_json();
            findings.push((
                FindingKind::Value,
                format!(
                    "agent value differs from the reference: {}",
                    diff(&expected, agent)
                ),
            ));
        }
    }
    findings
}

/// Whether an adapter's agent value (already known to be a closed shape) equals the
/// reference's, member by member, without serialising the reference.
fn same_value(agent: &Value, reference: &AgentValue) -> bool {
    let text = |name: &str| agent.get(name).and_then(Value::as_str);
    if text("tool") != Some(reference.tool()) || text("request_id") != Some(reference.request_id())
    {
        return false;
    }
    match (reference.data(), reference.error()) {
        (Some(data), _) => agent
            .get("data")
            .and_then(Value::as_object)
            .is_some_and(|agent| data == agent),
        (None, Some((code, retryable))) => {
            let error = &agent["error"];
            error["code"].as_str() == Some(code.as_str())
                && error["retryable"].as_bool() == Some(retryable)
        }
        (None, None) => false,
    }
}

/// Canaries found in the agent value: verbatim, JSON-escaped, re-cased, or any 8+
/// character piece of one, in any string or member name; unless the reference itself
/// legitimately carries it.
pub fn leaked(canaries: &[String], expected: &Value, agent: &Value) -> Vec<String> {
    leaked_in_text(canaries, expected, &all_text(agent))
}

/// Canaries found in `agent_text` (lower-cased text, as [`all_text`] or
/// [`crate::base::answer::raw_text`] make it), unless the reference legitimately carries them.
fn leaked_in_text(canaries: &[String], expected: &Value, agent_text: &str) -> Vec<String> {
    let mut expected_text: Option<String> = None;
    canaries
        .iter()
        .filter(|token| {
            let token = token.to_lowercase();
            let windows: Vec<&str> = (0..=token.len().saturating_sub(8))
                .map(|i| &token[i..(i + 8).min(token.len())])
                .collect();
            let found = |text: &str| windows.iter().any(|w| text.contains(w));
            // The reference's text is only needed when the agent's holds a piece.
            found(agent_text) && !found(expected_text.get_or_insert_with(|| all_text(expected)))
        })
        .cloned()
        .collect()
}

/// Every string and member name of `value`, and its serialisation, lower-cased: escapes
/// are decoded in the strings and kept in the serialisation.
fn all_text(value: &Value) -> String {
    let mut out = value.to_string().to_lowercase();
    fn collect(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push('\u{1}');
                out.push_str(&s.to_lowercase());
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
            Value::Object(map) => {
                for (k, v) in map {
                    out.push('\u{1}');
                    out.push_str(&k.to_lowercase());
                    collect(v, out);
                }
            }
            _ => {}
        }
    }
    collect(value, &mut out);
    out
}

/// A short readable difference: the members that differ, by JSON pointer (a member name
/// holding `/` or `~` escaped, so `a/b` is not member `b` of member `a`).
/// At most 16 members, each name cut at 80 characters; the rest are counted.
pub fn diff(expected: &Value, actual: &Value) -> String {
    let mut out = Vec::new();
    diff_at(expected, actual, String::new(), &mut out);
    let more = out.len().saturating_sub(DIFFERENCES_SHOWN);
    out.truncate(DIFFERENCES_SHOWN);
    if more > 0 {
        out.push(format!("and {more} more"));
    }
    out.join("; ")
}

/// Differing members a difference names; the rest are counted.
const DIFFERENCES_SHOWN: usize = 16;

fn diff_at(expected: &Value, actual: &Value, at: String, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            let under = |k: &str| format!("{at}/{}", clip(&escape_token(k), 80));
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => diff_at(v, w, under(k), out),
                    None => out.push(format!("{}: missing (expected {})", under(k), short(v))),
                }
            }
            for (k, w) in b {
                if !a.contains_key(k) {
                    out.push(format!("{}: unexpected {}", under(k), short(w)));
                }
            }
        }
        _ if expected == actual => {}
        _ => out.push(format!(
            "{}: expected {}, got {}",
            if at.is_empty() { "(root)" } else { &at },
            short(expected),
            short(actual)
        )),
    }
}

fn short(value: &Value) -> String {
    clip(&value.to_string(), 80).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The difference names members by JSON pointer: a name holding `/` or `~` is one
    /// escaped token, and a long expected value is cut like an actual one.
    #[test]
    fn the_difference_names_members_by_escaped_pointer_and_cuts_values() {
        let expected = json!({"data": {"a/b": 1, "a~c": "x".repeat(200), "same": true}});
        let actual = json!({"data": {"a/b": 2, "same": true, "n/ew": 3}});
        let text = diff(&expected, &actual);
        assert!(text.contains("/data/a~1b: expected 1, got 2"), "{text}");
        assert!(text.contains("/data/a~0c: missing (expected \""), "{text}");
        assert!(text.contains("/data/n~1ew: unexpected 3"), "{text}");
        assert!(!text.contains("/same"), "{text}");
        assert!(text.len() < 200, "{text}");

        // An answer with a thousand stray members, each with a long name: a few lines.
        let name = "n".repeat(10_000);
        let actual = Value::Object(
            (0..1000)
                .map(|i| (format!("{name}{i}"), json!(i)))
                .collect(),
        );
        let text = diff(&json!({}), &actual);
        assert!(text.ends_with("; and 984 more"), "{}", clip(&text, 300));
        assert!(text.len() < 16 * 100 + 100, "{} bytes", text.len());
    }
}
