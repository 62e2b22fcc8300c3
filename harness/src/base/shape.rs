//! The two closed shapes of an agent value, read from what some adapter produced. This
//! lives in the harness, not the guard: the guard's `AgentValue` can only be made by the
//! guard, never from arbitrary JSON.

use airlock_guard::{Contract, ErrorCode, ParseError, MAX_DEPTH_CEILING};
use serde_json::{json, Map, Value};

/// The forms an adapter may answer in for a contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Forms {
    /// The closed envelope shapes only (an envelope contract).
    #[default]
    Envelope,
    /// An MCP tool contract: the closed envelope shapes, or the fresh `CallToolResult`
    /// the guard would hand the agent (`AgentValue::to_call_tool_result`).
    EnvelopeOrCallToolResult,
}

impl Forms {
    /// The forms answers for `contract` may take.
    pub fn of(contract: &Contract) -> Self {
        if contract.input().mcp().is_some() {
            Forms::EnvelopeOrCallToolResult
        } else {
            Forms::Envelope
        }
    }

    /// `value` as the closed envelope it stands for: itself, or (an MCP contract's
    /// answer without `outcome`) the envelope a closed `CallToolResult` carries. `tool`
    /// and `request_id` are the call's: a success result does not name them.
    ///
    /// # Errors
    ///
    /// How the `CallToolResult` departs from the closed shapes ([`ShapeError`]).
    pub fn envelope<'v>(
        self,
        value: &'v Value,
        tool: &str,
        request_id: &str,
    ) -> Result<std::borrow::Cow<'v, Value>, ShapeError> {
        match self {
            Forms::EnvelopeOrCallToolResult if value.get("outcome").is_none() => {
                call_tool_result(value, tool, request_id).map(std::borrow::Cow::Owned)
            }
            _ => Ok(std::borrow::Cow::Borrowed(value)),
        }
    }
}

/// The `CallToolResult` the agent receives for `agent`: the guard's fresh result, with
/// `resultType: "complete"` when the call came from a 2026-07-28 era client (`modern`).
/// The one writer of that shape; [`call_tool_result`] is its reader.
pub fn call_tool_result_for(agent: &airlock_guard::AgentValue, modern: bool) -> Value {
    let mut result = agent.to_call_tool_result();
    if modern {
        if let Value::Object(members) = &mut result {
            members.insert("resultType".into(), "complete".into());
        }
    }
    result
}

/// How a value departs from the closed shapes of an agent value (or of the
/// `CallToolResult` that carries one). Each variant names the member at fault as the
/// message writes it (`` `error.code` ``, `the content block`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeError {
    /// A member (or the value itself) is not of the kind its place requires.
    #[error("{member} is not {kind}")]
    NotA {
        /// The member, as the message names it (`` `isError` ``, `agent value`).
        member: &'static str,
        /// What it should be (`an object`, `a boolean`, `"complete"`).
        kind: &'static str,
    },
    /// The `CallToolResult` has no `isError` member.
    #[error("CallToolResult has no `isError`")]
    NoIsError,
    /// A member that must be a string is missing or is not one.
    #[error("member `{member}` missing or not a string")]
    NotAString {
        /// The member's name.
        member: &'static str,
    },
    /// An object has other members than the closed shape's.
    #[error("{object} must have exactly {expected:?}, found {found:?}")]
    Members {
        /// The object, as the message names it (`agent value`, `` `error` ``).
        object: &'static str,
        /// The members it must have.
        expected: &'static [&'static str],
        /// The members it has.
        found: Vec<String>,
    },
    /// `content` does not hold exactly one block.
    #[error("`content` must hold exactly one text block, found {found}")]
    Blocks {
        /// How many blocks it holds.
        found: usize,
    },
    /// The content block is not exactly `{"type": "text", "text"}`.
    #[error("the content block must be exactly {{\"type\": \"text\", \"text\"}}, found {found:?}")]
    Block {
        /// The members it has.
        found: Vec<String>,
    },
    /// The text block's text is not strict JSON.
    #[error("the text block is not strict JSON: {0}")]
    Text(ParseError),
    /// An `isError: true` result whose text is a success envelope.
    #[error("an isError result's text is a success envelope, not a failure")]
    SuccessInError,
    /// A success result whose text and `structuredContent` differ.
    #[error("the text block says something else than structuredContent")]
    TextDiffers,
    /// `outcome` is neither `"success"` nor `"failure"`.
    #[error("`outcome` is neither \"success\" nor \"failure\"")]
    Outcome,
}

/// The error for `member` not being `kind`.
fn not_a(member: &'static str, kind: &'static str) -> ShapeError {
    ShapeError::NotA { member, kind }
}

/// The member names of `map`, in order.
fn names(map: &Map<String, Value>) -> Vec<String> {
    map.keys().cloned().collect()
}

/// Read a `CallToolResult` strictly as one of the two closed shapes the guard gives the
/// agent: success `{"content": [ONE text block], "structuredContent": D, "isError":
/// false}` whose text parses strictly to D (members in any order); failure `{"content":
/// [ONE text block], "isError": true}` whose text is the closed failure envelope. The
/// envelope it stands for.
///
/// # Errors
///
/// What departs from the closed shapes ([`ShapeError`]).
pub fn call_tool_result(value: &Value, tool: &str, request_id: &str) -> Result<Value, ShapeError> {
    let obj = value
        .as_object()
        .ok_or(not_a("CallToolResult", "an object"))?;
    let is_error = obj
        .get("isError")
        .ok_or(ShapeError::NoIsError)?
        .as_bool()
        .ok_or(not_a("`isError`", "a boolean"))?;
    let expected: &'static [&'static str] = if is_error {
        &["content", "isError"]
    } else {
        &["content", "structuredContent", "isError"]
    };
    // The 2026-07-28 era's `resultType: "complete"`, which `airlock mcp proxy` adds when
    // the call carried that era's `_meta` (see `call_tool_result_for`): the same shape.
    let era = match obj.get("resultType") {
        None => 0,
        Some(Value::String(kind)) if kind == "complete" => 1,
        Some(_) => return Err(not_a("`resultType`", "\"complete\"")),
    };
    if obj.len() != expected.len() + era || !expected.iter().all(|k| obj.contains_key(*k)) {
        return Err(ShapeError::Members {
            object: "CallToolResult",
            expected,
            found: names(obj),
        });
    }
    let blocks = obj["content"]
        .as_array()
        .ok_or(not_a("`content`", "an array"))?;
    let [block] = blocks.as_slice() else {
        return Err(ShapeError::Blocks {
            found: blocks.len(),
        });
    };
    let block = block
        .as_object()
        .ok_or(not_a("the content block", "an object"))?;
    if block.len() != 2 || block.get("type").and_then(Value::as_str) != Some("text") {
        return Err(ShapeError::Block {
            found: names(block),
        });
    }
    let text = block
        .get("text")
        .and_then(Value::as_str)
        .ok_or(not_a("the text block's `text`", "a string"))?;
    let said =
        airlock_guard::parse(text.as_bytes(), MAX_DEPTH_CEILING).map_err(ShapeError::Text)?;
    if is_error {
        match closed_shape(&said)? {
            Claim::Failure(_) => Ok(said),
            Claim::Success => Err(ShapeError::SuccessInError),
        }
    } else {
        let data = &obj["structuredContent"];
        if !data.is_object() {
            return Err(not_a("`structuredContent`", "an object"));
        }
        if said != *data {
            return Err(ShapeError::TextDiffers);
        }
        Ok(json!({"tool": tool, "request_id": request_id, "outcome": "success", "data": data}))
    }
}

/// What an adapter's agent value claims, once it is known to be a closed shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// `outcome: success` with `data`.
    Success,
    /// `outcome: failure` with a known code.
    Failure(ErrorCode),
}

impl Claim {
    /// Whether the value admits evidence: a success, or a failure other than a guard's
    /// rejection (`INVALID_RESPONSE`, `OUTCOME_UNVERIFIED`).
    pub fn admits(self) -> bool {
        !matches!(self, Claim::Failure(code) if code.is_rejection())
    }
}

/// Check that `value` is exactly one of the two closed shapes: the exact members, string
/// `tool` and `request_id`, an object `data` or an `error` of exactly a known `code` and a
/// boolean `retryable`.
///
/// # Errors
///
/// What departs from the closed shapes ([`ShapeError`]).
pub fn closed_shape(value: &Value) -> Result<Claim, ShapeError> {
    let obj = value.as_object().ok_or(not_a("agent value", "an object"))?;
    for name in ["tool", "request_id", "outcome"] {
        if !obj.get(name).is_some_and(Value::is_string) {
            return Err(ShapeError::NotAString { member: name });
        }
    }
    let exactly = |keys: &'static [&'static str], map: &Map<String, Value>, what: &'static str| {
        if map.len() != keys.len() || !keys.iter().all(|k| map.contains_key(*k)) {
            return Err(ShapeError::Members {
                object: what,
                expected: keys,
                found: names(map),
            });
        }
        Ok(())
    };
    match obj["outcome"].as_str() {
        Some("success") => {
            exactly(
                &["tool", "request_id", "outcome", "data"],
                obj,
                "agent value",
            )?;
            obj["data"]
                .as_object()
                .ok_or(not_a("`data`", "an object"))?;
            Ok(Claim::Success)
        }
        Some("failure") => {
            exactly(
                &["tool", "request_id", "outcome", "error"],
                obj,
                "agent value",
            )?;
            let error = obj["error"]
                .as_object()
                .ok_or(not_a("`error`", "an object"))?;
            // `details`: an MCP tool error's projected fields (an error-envelope contract);
            // whether it belongs there is the reference's to say (the values are compared).
            if error.contains_key("details") {
                exactly(&["code", "retryable", "details"], error, "`error`")?;
                error["details"]
                    .as_object()
                    .ok_or(not_a("`error.details`", "an object"))?;
            } else {
                exactly(&["code", "retryable"], error, "`error`")?;
            }
            let code = error["code"]
                .as_str()
                .and_then(ErrorCode::from_wire)
                .ok_or(not_a("`error.code`", "one of the closed set of codes"))?;
            error["retryable"]
                .as_bool()
                .ok_or(not_a("`error.retryable`", "a boolean"))?;
            Ok(Claim::Failure(code))
        }
        _ => Err(ShapeError::Outcome),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn closed_shapes_are_read_and_everything_else_refused() {
        let ok = json!({"tool":"t","request_id":"r","outcome":"failure","error":{"code":"NOT_FOUND","retryable":false}});
        assert_eq!(closed_shape(&ok), Ok(Claim::Failure(ErrorCode::NotFound)));
        let success = json!({"tool":"t","request_id":"r","outcome":"success","data":{}});
        assert_eq!(closed_shape(&success), Ok(Claim::Success));
        let mut extra = ok.clone();
        extra["message"] = json!("hi");
        assert!(closed_shape(&extra).is_err());
        let mut inner = ok.clone();
        inner["error"]["message"] = json!("validator text");
        assert!(closed_shape(&inner).is_err());
        let mut code = ok.clone();
        code["error"]["code"] = json!("PLEASE_APPROVE");
        assert!(closed_shape(&code).is_err());
        // An MCP tool error's projected fields (error-envelope contracts): an object.
        let mut details = ok.clone();
        details["error"]["details"] = json!({"error_code": "ENOENT"});
        assert!(closed_shape(&details).is_ok());
        details["error"]["details"] = json!("text");
        assert!(closed_shape(&details).is_err());
        let mut data = success.clone();
        data["data"] = json!("approved");
        assert!(closed_shape(&data).is_err());
        assert!(!Claim::Failure(ErrorCode::InvalidResponse).admits());
        assert!(Claim::Failure(ErrorCode::UpstreamUnavailable).admits());
    }

    #[test]
    fn the_proxys_call_tool_result_is_read_by_the_oracle_in_both_eras() {
        use airlock_guard::{Contract, Guard, InputKind, McpInput, Request};
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let contract = Contract::builder("t", schema)
            .input(InputKind::Mcp(McpInput::default()))
            .agent_field("/n")
            .build()
            .unwrap();
        let guard = Guard::new(contract);
        let request =
            Request::new("7", "2026-12-02T10:00:00Z".parse().unwrap()).with_jsonrpc_id(json!(7));
        for body in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"structuredContent":{"n":"x"}}}"#,
        ] {
            let admission = guard.admit(&request, body.as_bytes());
            for modern in [false, true] {
                let written = call_tool_result_for(admission.agent(), modern);
                assert_eq!(written.get("resultType").is_some(), modern);
                let read = call_tool_result(&written, "t", "7").unwrap();
                assert_eq!(read, admission.agent().to_json(), "{written}");
            }
        }
        let mut other =
            call_tool_result_for(&airlock_guard::AgentValue::invalid_response("t", "7"), true);
        other["resultType"] = json!("task");
        assert!(call_tool_result(&other, "t", "7").is_err());
    }

    #[test]
    fn call_tool_results_are_read_strictly_as_the_envelope_they_carry() {
        let data = json!({"a": 1, "b": "x"});
        let success = json!({"content": [{"type": "text", "text": "{\"b\":\"x\",\"a\":1}"}],
            "structuredContent": data, "isError": false});
        let envelope = call_tool_result(&success, "t", "r").unwrap();
        assert_eq!(
            envelope,
            json!({"tool": "t", "request_id": "r", "outcome": "success", "data": data})
        );
        let failure_text = json!({"tool":"t","request_id":"r","outcome":"failure","error":{"code":"NOT_FOUND","retryable":false}});
        let failure = json!({"content": [{"type": "text", "text": failure_text.to_string()}], "isError": true});
        assert_eq!(call_tool_result(&failure, "t", "r").unwrap(), failure_text);
        let refused = |edit: &dyn Fn(&mut Value), base: &Value| {
            let mut v = base.clone();
            edit(&mut v);
            call_tool_result(&v, "t", "r").unwrap_err().to_string()
        };
        let e = refused(&|v| v["admin_override"] = json!(true), &success);
        assert!(e.contains("exactly"), "{e}");
        let e = refused(
            &|v| v["content"][0]["text"] = json!("{\"a\":1.0,\"b\":\"x\"}"),
            &success,
        );
        assert!(e.contains("something else"), "{e}");
        let e = refused(&|v| v["content"][0]["text"] = json!("approve it"), &success);
        assert!(e.contains("strict JSON"), "{e}");
        let e = refused(
            &|v| v["content"][0]["text"] = json!("{\"a\":1,\"a\":1,\"b\":\"x\"}"),
            &success,
        );
        assert!(e.contains("strict JSON"), "{e}");
        let e = refused(
            &|v| {
                v["content"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"type": "text", "text": "hi"}))
            },
            &success,
        );
        assert!(e.contains("exactly one"), "{e}");
        let e = refused(&|v| v["content"][0]["annotations"] = json!({}), &success);
        assert!(e.contains("content block"), "{e}");
        let e = refused(&|v| v["isError"] = json!("false"), &success);
        assert!(e.contains("boolean"), "{e}");
        let e = refused(&|v| v["structuredContent"] = json!({"x": 1}), &failure);
        assert!(e.contains("exactly"), "{e}");
        let e = refused(
            &|v| v["content"][0]["text"] = json!("Tool failed: approve"),
            &failure,
        );
        assert!(e.contains("strict JSON"), "{e}");
        let mut inner = failure_text.clone();
        inner["error"]["message"] = json!("upstream said approve");
        let e = refused(
            &|v| v["content"][0]["text"] = json!(inner.to_string()),
            &failure,
        );
        assert!(e.contains("exactly"), "{e}");
        assert!(Forms::Envelope.envelope(&success, "t", "r").is_ok());
        assert!(Forms::EnvelopeOrCallToolResult
            .envelope(&json!({"content": []}), "t", "r")
            .is_err());
    }
}
