//! The outstanding request a response is judged against: its id, its parameters and the
//! time it was made. `now` comes from here, never from a global clock.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The request a raw response answers.
///
/// On disk and on the exec protocol it is `{"request_id", "params", "now"}` with an
/// optional `"tool"`. A call to an MCP tool also carries `"jsonrpc_id"`, the JSON-RPC id
/// of its `tools/call` (a string or an integer), and its `params` are the call's
/// `arguments`; its `request_id` may then be left out (it is the id's JSON text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RequestWire")]
pub struct Request {
    /// The tool the request was sent to; when present it must be the contract's tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The id the response must echo (an envelope's `request_id`; for an MCP call, the
    /// correlation id of the audit record and the agent value).
    pub request_id: String,
    /// The JSON-RPC id of an MCP `tools/call`: the response's `id` must be this value.
    /// Without it, an MCP contract expects the `request_id` as a string id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jsonrpc_id: Option<Value>,
    /// The parameters binding checks compare against.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// The time of the request, RFC 3339; freshness is measured from it.
    pub now: Timestamp,
}

/// The request as written: `request_id` may be left out when `jsonrpc_id` is given.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestWire {
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default)]
    jsonrpc_id: Option<Value>,
    #[serde(default)]
    params: Map<String, Value>,
    now: String,
}

impl TryFrom<RequestWire> for Request {
    type Error = String;

    fn try_from(wire: RequestWire) -> Result<Self, String> {
        match &wire.jsonrpc_id {
            None | Some(Value::String(_)) => {}
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {}
            Some(_) => return Err("jsonrpc_id must be a string or an integer".into()),
        }
        let request_id = match (wire.request_id, &wire.jsonrpc_id) {
            (Some(id), _) => id,
            (None, Some(Value::String(id))) => id.clone(),
            (None, Some(id)) => id.to_string(),
            (None, None) => return Err("missing field `request_id`".into()),
        };
        // Strictly RFC 3339, as the guard reads times: an offset such as `+25:00`, which
        // a lenient reader takes, would move `now` and so every freshness verdict.
        if !crate::upstream::is_rfc3339(&wire.now) {
            return Err(format!(
                "now {:?} is not an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS[.fraction] then Z or ±HH:MM, hours 00-23)",
                wire.now
            ));
        }
        let now: Timestamp = wire
            .now
            .parse()
            .map_err(|e| format!("now {:?}: {e}", wire.now))?;
        Ok(Self {
            tool: wire.tool,
            request_id,
            jsonrpc_id: wire.jsonrpc_id,
            params: wire.params,
            now,
        })
    }
}

impl Request {
    /// A request with no parameters.
    pub fn new(request_id: impl Into<String>, now: Timestamp) -> Self {
        Self {
            tool: None,
            request_id: request_id.into(),
            jsonrpc_id: None,
            params: Map::new(),
            now,
        }
    }

    /// Set the JSON-RPC id of the MCP `tools/call` this request is (builder style).
    #[must_use]
    pub fn with_jsonrpc_id(mut self, id: impl Into<Value>) -> Self {
        self.jsonrpc_id = Some(id.into());
        self
    }

    /// Add a parameter (builder style).
    #[must_use]
    pub fn param(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params.insert(name.into(), value.into());
        self
    }

    /// Parse a request from JSON bytes.
    ///
    /// # Errors
    ///
    /// When the bytes are not a request object (unknown members are errors, `now` must be
    /// an RFC 3339 time with an offset).
    pub fn from_json(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_read_as_strictly_as_the_guard_reads_times() {
        for now in [
            "2026-12-02T10:00:00+25:00",
            "2026-12-02T10:00:00+23:60",
            "2026-12-02T10:00:00+0100",
            "2026-12-02t10:00:00z",
            "2026-12-02 10:00:00Z",
        ] {
            let line = format!(r#"{{"request_id":"r","now":"{now}"}}"#);
            assert!(Request::from_json(line.as_bytes()).is_err(), "{now}");
        }
        let r = Request::from_json(br#"{"request_id":"r","now":"2026-12-02T10:00:00.5-01:30"}"#)
            .unwrap();
        assert_eq!(r.now.to_string(), "2026-12-02T11:30:00.5Z");
    }

    #[test]
    fn request_file_shape_parses_and_now_is_a_timestamp() {
        let r = Request::from_json(
            br#"{"request_id":"req.J7q94MkP","params":{"change_id":"CR-1042"},"now":"2026-12-02T10:00:00Z"}"#,
        )
        .unwrap();
        assert_eq!(r.request_id, "req.J7q94MkP");
        assert_eq!(r.params["change_id"], "CR-1042");
        assert_eq!(r.now.to_string(), "2026-12-02T10:00:00Z");
    }

    #[test]
    fn an_mcp_request_carries_its_jsonrpc_id_and_may_leave_out_the_request_id() {
        let r = Request::from_json(
            br#"{"jsonrpc_id":7,"params":{"change_id":"CR-1"},"now":"2026-12-02T10:00:00Z"}"#,
        )
        .unwrap();
        assert_eq!((r.request_id.as_str(), r.jsonrpc_id), ("7", Some(7.into())));
        let r =
            Request::from_json(br#"{"jsonrpc_id":"a-1","now":"2026-12-02T10:00:00Z"}"#).unwrap();
        assert_eq!(r.request_id, "a-1");
        for bad in [r#"1.5"#, "null", "[]", "{}"] {
            let text = format!(r#"{{"jsonrpc_id":{bad},"now":"2026-12-02T10:00:00Z"}}"#);
            assert!(Request::from_json(text.as_bytes()).is_err(), "{bad}");
        }
        assert!(Request::from_json(br#"{"now":"2026-12-02T10:00:00Z"}"#).is_err());
    }

    #[test]
    fn request_with_unknown_member_is_an_error() {
        assert!(
            Request::from_json(br#"{"request_id":"a","now":"2026-12-02T10:00:00Z","x":1}"#)
                .is_err()
        );
    }
}
