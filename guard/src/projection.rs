//! Stage 6: projection. The agent value is built fresh from the contract's agent fields
//! of an admitted response; on rejection it is the fixed failure. No other path makes one,
//! so no rejected byte and no validator text can reach the agent.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::ops::Index;
use std::sync::Arc;

use crate::doc::{Node, Object};
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
    /// An MCP tool refused the call (`isError: true`): the call reached the tool, which
    /// said it failed (an unknown file, an invalid argument). Its text is never forwarded.
    ToolError,
    /// The call was made to a tool with side effects (not `read_only`), but its result
    /// could not be verified (refused by the contract, or no answer in time): the effect
    /// may have happened. Retryable only when the contract says the tool is `idempotent`.
    OutcomeUnverified,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 5] = [
        ErrorCode::NotFound,
        ErrorCode::UpstreamUnavailable,
        ErrorCode::InvalidResponse,
        ErrorCode::ToolError,
        ErrorCode::OutcomeUnverified,
    ];

    /// The codes an upstream's own failure envelope may carry (the guard forwards them);
    /// the others are the guard's to give.
    pub const ENVELOPE: [ErrorCode; 3] = [
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
            ErrorCode::ToolError => "TOOL_ERROR",
            ErrorCode::OutcomeUnverified => "OUTCOME_UNVERIFIED",
        }
    }

    /// Whether this code is a guard's rejection (the response was not admitted as
    /// evidence): `INVALID_RESPONSE`, or `OUTCOME_UNVERIFIED` for a tool with side effects.
    pub fn is_rejection(self) -> bool {
        matches!(
            self,
            ErrorCode::InvalidResponse | ErrorCode::OutcomeUnverified
        )
    }

    /// The code with this wire spelling, if it is one of the closed set.
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The code with this wire spelling, if an upstream envelope may carry it
    /// ([`ErrorCode::ENVELOPE`]).
    pub fn envelope_from_wire(s: &str) -> Option<Self> {
        Self::ENVELOPE.into_iter().find(|c| c.as_str() == s)
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
    Success(Fields),
    Failure {
        code: ErrorCode,
        retryable: bool,
        /// The projected fields of an MCP tool error whose structured content honours the
        /// contract's error schema (`[input] error_schema`); none otherwise.
        details: Option<Fields>,
    },
}

/// The `data` of a success: a new object holding the contract's agent fields that the
/// response carried, in the contract's order, and nothing else.
///
/// Read it like a JSON object: `fields["decision"]`, [`Fields::get`], [`Fields::iter`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fields {
    members: Vec<(String, Value)>,
}

impl Fields {
    /// The member `name`, if the response carried it.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.members
            .iter()
            .find_map(|(key, value)| (key == name).then_some(value))
    }

    /// The members, in the contract's order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.members
            .iter()
            .map(|(key, value)| (key.as_str(), value))
    }

    /// The member names, in the contract's order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.members.iter().map(|(key, _)| key.as_str())
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there are none (an admitted response without any agent field).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// A JSON object with the same members, in the same order.
    pub fn to_map(&self) -> Map<String, Value> {
        self.members.iter().cloned().collect()
    }
}

impl Index<&str> for Fields {
    type Output = Value;

    /// The member `name`, or `null` when absent (as `serde_json::Value` indexes).
    fn index(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(name).unwrap_or(&NULL)
    }
}

/// Equal when both hold the same members with equal values (order aside, as JSON objects
/// compare).
impl PartialEq<Map<String, Value>> for Fields {
    fn eq(&self, other: &Map<String, Value>) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(key, value)| other.get(key) == Some(value))
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
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
        Self::failure_with(tool, request_id, code, retryable, None)
    }

    /// A tool's own error with the projected fields of its structured content.
    pub(crate) fn tool_failure(
        tool: &Arc<str>,
        request_id: &Arc<str>,
        code: ErrorCode,
        retryable: bool,
        details: Fields,
    ) -> Self {
        Self::failure_with(tool, request_id, code, retryable, Some(details))
    }

    fn failure_with(
        tool: &Arc<str>,
        request_id: &Arc<str>,
        code: ErrorCode,
        retryable: bool,
        details: Option<Fields>,
    ) -> Self {
        Self {
            tool: Arc::clone(tool),
            request_id: Arc::clone(request_id),
            body: Body::Failure {
                code,
                retryable,
                details,
            },
        }
    }

    pub(crate) fn success(tool: &Arc<str>, request_id: &Arc<str>, data: Fields) -> Self {
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
    pub fn data(&self) -> Option<&Fields> {
        match &self.body {
            Body::Success(data) => Some(data),
            Body::Failure { .. } => None,
        }
    }

    /// The code and retryability of a failure.
    pub fn error(&self) -> Option<(ErrorCode, bool)> {
        match self.body {
            Body::Success(_) => None,
            Body::Failure {
                code, retryable, ..
            } => Some((code, retryable)),
        }
    }

    /// The projected fields of an MCP tool error (`error.details`), when the contract
    /// declares an error schema that the error's structured content honours.
    pub fn error_details(&self) -> Option<&Fields> {
        match &self.body {
            Body::Failure { details, .. } => details.as_ref(),
            Body::Success(_) => None,
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
                out.insert("data".into(), Value::Object(data.to_map()));
            }
            Body::Failure {
                code,
                retryable,
                details,
            } => {
                out.insert("outcome".into(), "failure".into());
                let mut error = Map::new();
                error.insert("code".into(), code.as_str().into());
                error.insert("retryable".into(), (*retryable).into());
                if let Some(details) = details {
                    error.insert("details".into(), Value::Object(details.to_map()));
                }
                out.insert("error".into(), Value::Object(error));
            }
        }
        Value::Object(out)
    }

    /// The value as the `result` of an MCP `tools/call`: a fresh `CallToolResult`.
    ///
    /// A success is `{"content":[{"type":"text","text":T}],"structuredContent":D,
    /// "isError":false}` where `D` is the projected `data` and `T` its compact
    /// serialisation; a failure is `{"content":[{"type":"text","text":F}],"isError":true}`
    /// where `F` is this value's own JSON (the closed failure shape). Nothing else.
    pub fn to_call_tool_result(&self) -> Value {
        let mut out = Map::new();
        let (text, structured) = match &self.body {
            Body::Success(data) => {
                let structured = Value::Object(data.to_map());
                (structured.to_string(), Some(structured))
            }
            Body::Failure { .. } => (self.to_json_string(), None),
        };
        let mut block = Map::new();
        block.insert("type".into(), "text".into());
        block.insert("text".into(), Value::String(text));
        out.insert("content".into(), Value::Array(vec![Value::Object(block)]));
        if let Some(structured) = structured {
            out.insert("structuredContent".into(), structured);
        }
        out.insert("isError".into(), Value::Bool(!self.is_success()));
        Value::Object(out)
    }

    /// The value as one line of compact JSON.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| {
            // Strings, numbers and maps with string keys always serialise; should that
            // ever change, the agent still gets a closed shape rather than a panic.
            AgentValue::invalid_response(&self.tool, &self.request_id).to_json_string()
        })
    }
}

/// Serialises as [`AgentValue::to_json`] would, without building the JSON value.
impl Serialize for AgentValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Error<'a>(ErrorCode, bool, Option<&'a Fields>);
        impl Serialize for Error<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(2 + usize::from(self.2.is_some())))?;
                map.serialize_entry("code", self.0.as_str())?;
                map.serialize_entry("retryable", &self.1)?;
                if let Some(details) = self.2 {
                    map.serialize_entry("details", details)?;
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("tool", &*self.tool)?;
        map.serialize_entry("request_id", &*self.request_id)?;
        match &self.body {
            Body::Success(data) => {
                map.serialize_entry("outcome", "success")?;
                map.serialize_entry("data", data)?;
            }
            Body::Failure {
                code,
                retryable,
                details,
            } => {
                map.serialize_entry("outcome", "failure")?;
                map.serialize_entry("error", &Error(*code, *retryable, details.as_ref()))?;
            }
        }
        map.end()
    }
}

/// How the agent fields are gathered, decided once per contract.
#[derive(Debug, Clone)]
pub(crate) struct Projection {
    fields: Vec<Pointer>,
    /// Whether the fields live below `/data` (an envelope) or are members of the judged
    /// value itself (an MCP tool's `structuredContent`).
    under_data: bool,
    /// When every field is `/data/<name>` (the usual envelope contract) or `/<name>` (an
    /// MCP contract): the names, sorted, with the position of each in the contract's order.
    flat: Option<Vec<(String, usize)>>,
}

impl Projection {
    pub(crate) fn new(fields: &[Pointer], under_data: bool) -> Self {
        let flat = fields
            .iter()
            .enumerate()
            .map(|(slot, field)| match field.tokens() {
                [data, name] if under_data && data == "data" => Some((name.clone(), slot)),
                [name] if !under_data => Some((name.clone(), slot)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(|mut names| {
                names.sort();
                names
            });
        Self {
            fields: fields.to_vec(),
            under_data,
            flat,
        }
    }

    /// Build the agent `data` object from every agent field present in `response`, each
    /// at its place below `/data` (the `/data` prefix is dropped), in the contract's order.
    /// Fields absent from an admitted response are left out. Only these fields become
    /// owned values; the rest of the document is dropped with it.
    pub(crate) fn project(&self, response: Node<'_>) -> Fields {
        let source = if self.under_data {
            response.get("data")
        } else {
            Some(response)
        };
        match (&self.flat, source.and_then(Node::as_object)) {
            (Some(names), Some(source)) => project_flat(source, names),
            _ => project_general(response, &self.fields),
        }
    }
}

/// The members of `source` named in `names`, in slot order, as a new object: no hashing,
/// one allocation for the object and one per string.
fn project_flat(source: Object<'_>, names: &[(String, usize)]) -> Fields {
    let slot_of = |key: &str| {
        names
            .binary_search_by(|(name, _)| name.as_str().cmp(key))
            .ok()
            .map(|i| names[i].1)
    };
    let mut members = Vec::with_capacity(names.len());
    let mut previous = None;
    let mut ordered = true;
    for (key, value) in source.iter() {
        if let Some(slot) = slot_of(key) {
            ordered &= previous < Some(slot);
            previous = Some(slot);
            members.push((key.to_owned(), value.to_value()));
        }
    }
    if !ordered {
        // The response lists the fields in another order than the contract.
        members.sort_by_key(|(key, _)| slot_of(key));
    }
    Fields { members }
}

/// Any pointers (nested, outside `/data`, through arrays): resolve each in turn.
fn project_general(response: Node<'_>, fields: &[Pointer]) -> Fields {
    let mut data = Map::new();
    for field in fields {
        let Some(value) = response.resolve(field) else {
            continue;
        };
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
        slot.insert(last.clone(), value.to_value());
    }
    Fields {
        members: data.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serialisation_matches_the_json_value_for_both_shapes() {
        let tool: Arc<str> = Arc::from("t");
        let id: Arc<str> = Arc::from("req.12345678");
        let data = Fields {
            members: vec![
                ("z".into(), json!("last\u{2028}")),
                ("a".into(), json!({"n": [1, 2.5]})),
            ],
        };
        for value in [
            AgentValue::success(&tool, &id, data.clone()),
            AgentValue::success(&tool, &id, Fields::default()),
            AgentValue::failure(&tool, &id, ErrorCode::NotFound, true),
        ] {
            assert_eq!(value.to_json_string(), value.to_json().to_string());
        }
        assert_eq!(data["z"], "last\u{2028}");
        assert_eq!(data["absent"], Value::Null);
        assert_eq!(keys(&data), ["z", "a"]);
        assert!(
            data == json!({"a": {"n": [1, 2.5]}, "z": "last\u{2028}"})
                .as_object()
                .unwrap()
                .clone()
        );
    }

    #[test]
    fn fixed_failure_has_the_documented_shape_and_order() {
        let v = AgentValue::invalid_response("review_status", "req.J7q94MkP");
        assert_eq!(
            v.to_json_string(),
            r#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}"#
        );
    }

    fn projection(fields: &[&str]) -> Projection {
        let fields: Vec<Pointer> = fields.iter().map(|p| Pointer::parse(p).unwrap()).collect();
        Projection::new(&fields, true)
    }

    fn keys(data: &Fields) -> Vec<&str> {
        data.keys().collect()
    }

    fn project(plan: &Projection, body: &Value) -> Fields {
        let text = body.to_string();
        plan.project(crate::parse::parse_doc(text.as_bytes(), 16).unwrap().root())
    }

    #[test]
    fn projection_copies_only_the_agent_fields() {
        let response = json!({"data": {"a": 1, "b": {"c": 2}, "secret": "x"}, "extra": true});
        let plan = projection(&["/data/a", "/data/b/c", "/data/missing"]);
        assert!(plan.flat.is_none());
        let data = project(&plan, &response);
        assert_eq!(Value::Object(data.to_map()), json!({"a": 1, "b": {"c": 2}}));
    }

    #[test]
    fn flat_projection_keeps_only_the_fields_in_contract_order() {
        let plan = projection(&["/data/state", "/data/id", "/data/absent", "/data/at"]);
        assert!(plan.flat.is_some());
        for body in [
            json!({"data": {"id": "x", "secret": "CANARY", "state": "ok", "at": 1}}),
            json!({"data": {"state": "ok", "id": "x", "at": 1, "secret": "CANARY"}}),
            json!({"data": {"at": 1, "state": "ok", "secret": "CANARY", "id": "x"}}),
        ] {
            let data = project(&plan, &body);
            assert_eq!(keys(&data), ["state", "id", "at"]);
            assert_eq!(
                Value::Object(data.to_map()),
                json!({"state": "ok", "id": "x", "at": 1})
            );
        }
    }

    #[test]
    fn flat_and_general_projection_agree() {
        let flat = projection(&["/data/b", "/data/a"]);
        let general = Projection {
            flat: None,
            ..flat.clone()
        };
        for body in [
            json!({"data": {"a": 1, "b": [2], "c": 3}}),
            json!({"data": {"c": 3}}),
            json!({"data": ["a", "b"]}),
            json!({"data": null}),
            json!({"other": {"a": 1}}),
            json!([1, 2]),
        ] {
            let (one, two) = (project(&flat, &body), project(&general, &body));
            assert_eq!(keys(&one), keys(&two));
            assert_eq!(one, two);
        }
    }
}
