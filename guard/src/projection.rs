//! Stage 6: projection. The agent value is built fresh from the contract's agent fields
//! of an admitted response; on rejection it is the fixed failure. No other path makes one,
//! so no rejected byte and no validator text can reach the agent.

use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

use crate::pointer::Pointer;

/// The codes the agent can see in a failure. A closed set: an upstream envelope with any
/// other code is rejected, so a code can never carry free text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// The upstream said the thing asked about does not exist.
    NotFound,
    /// The upstream could not be reached, or said it is unavailable.
    UpstreamUnavailable,
    /// The response did not honour the contract (every guard rejection).
    InvalidResponse,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 3] = [
        ErrorCode::NotFound,
        ErrorCode::UpstreamUnavailable,
        ErrorCode::InvalidResponse,
    ];

    /// The wire spelling, such as `NOT_FOUND`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::UpstreamUnavailable => "UPSTREAM_UNAVAILABLE",
            ErrorCode::InvalidResponse => "INVALID_RESPONSE",
        }
    }

    /// The code with this wire spelling, if it is one of the closed set.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the agent is given: one of two closed shapes.
///
/// ```json
/// {"tool":"…","request_id":"…","outcome":"success","data":{…agent fields…}}
/// {"tool":"…","request_id":"…","outcome":"failure","error":{"code":"…","retryable":false}}
/// ```
///
/// `tool` is the contract's, `request_id` the outstanding request's: neither is read from
/// the response.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentValue {
    tool: Arc<str>,
    request_id: Arc<str>,
    body: Body,
}

#[derive(Debug, Clone, PartialEq)]
enum Body {
    Success(Map<String, Value>),
    Failure { code: ErrorCode, retryable: bool },
}

impl AgentValue {
    /// The fixed failure every rejection produces: `INVALID_RESPONSE`, not retryable.
    pub fn invalid_response(tool: &str, request_id: &str) -> Self {
        Self::failure(
            &Arc::from(tool),
            &Arc::from(request_id),
            ErrorCode::InvalidResponse,
            false,
        )
    }

    pub(crate) fn failure(
        tool: &Arc<str>,
        request_id: &Arc<str>,
        code: ErrorCode,
        retryable: bool,
    ) -> Self {
        Self {
            tool: Arc::clone(tool),
            request_id: Arc::clone(request_id),
            body: Body::Failure { code, retryable },
        }
    }

    pub(crate) fn success(
        tool: &Arc<str>,
        request_id: &Arc<str>,
        data: Map<String, Value>,
    ) -> Self {
        Self {
            tool: Arc::clone(tool),
            request_id: Arc::clone(request_id),
            body: Body::Success(data),
        }
    }

    /// The tool name.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The outstanding request's id.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// Whether this is the success shape.
    pub fn is_success(&self) -> bool {
        matches!(self.body, Body::Success(_))
    }

    /// The projected agent fields of a success.
    pub fn data(&self) -> Option<&Map<String, Value>> {
        match &self.body {
            Body::Success(data) => Some(data),
            Body::Failure { .. } => None,
        }
    }

    /// The code and retryability of a failure.
    pub fn error(&self) -> Option<(ErrorCode, bool)> {
        match self.body {
            Body::Success(_) => None,
            Body::Failure { code, retryable } => Some((code, retryable)),
        }
    }

    /// The value as JSON, members in the documented order.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("tool".into(), Value::String(self.tool.to_string()));
        out.insert(
            "request_id".into(),
            Value::String(self.request_id.to_string()),
        );
        match &self.body {
            Body::Success(data) => {
                out.insert("outcome".into(), "success".into());
                out.insert("data".into(), Value::Object(data.clone()));
            }
            Body::Failure { code, retryable } => {
                out.insert("outcome".into(), "failure".into());
                let mut error = Map::new();
                error.insert("code".into(), code.as_str().into());
                error.insert("retryable".into(), (*retryable).into());
                out.insert("error".into(), Value::Object(error));
            }
        }
        Value::Object(out)
    }

    /// The value as one line of compact JSON.
    pub fn to_json_string(&self) -> String {
        self.to_json().to_string()
    }
}

impl Serialize for AgentValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// Build the agent `data` object by moving every agent field present in `response` to its
/// place below `/data` (the `/data` prefix is dropped). Fields absent from an admitted
/// response are left out. `response` is left with those members nulled.
pub(crate) fn project(response: &mut Value, fields: &[Pointer]) -> Map<String, Value> {
    let mut data = Map::new();
    for field in fields {
        let Some(value) = field.resolve_mut(response) else {
            continue;
        };
        let value = value.take();
        let tokens = field.agent_tokens();
        let Some((last, parents)) = tokens.split_last() else {
            continue;
        };
        let mut slot = &mut data;
        for token in parents {
            let entry = slot
                .entry(token.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            // Agent fields never nest (the contract loader refuses overlaps), so the slot
            // is always an object; make sure of it rather than trust it.
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            let Value::Object(next) = entry else {
                unreachable!("the entry was just made an object")
            };
            slot = next;
        }
        slot.insert(last.clone(), value);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fixed_failure_has_the_documented_shape_and_order() {
        let v = AgentValue::invalid_response("review_status", "req.J7q94MkP");
        assert_eq!(
            v.to_json_string(),
            r#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}"#
        );
    }

    #[test]
    fn projection_copies_only_the_agent_fields() {
        let mut response = json!({"data": {"a": 1, "b": {"c": 2}, "secret": "x"}, "extra": true});
        let fields = ["/data/a", "/data/b/c", "/data/missing"].map(|p| Pointer::parse(p).unwrap());
        let data = project(&mut response, &fields);
        assert_eq!(Value::Object(data), json!({"a": 1, "b": {"c": 2}}));
    }
}
