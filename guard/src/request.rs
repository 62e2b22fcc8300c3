//! The outstanding request a response is judged against: its id, its parameters and the
//! time it was made. `now` comes from here, never from a global clock.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The request a raw response answers.
///
/// On disk and on the exec protocol it is `{"request_id", "params", "now"}` with an
/// optional `"tool"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The tool the request was sent to; when present it must be the contract's tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The id the response must echo.
    pub request_id: String,
    /// The parameters binding checks compare against.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// The time of the request, RFC 3339; freshness is measured from it.
    pub now: Timestamp,
}

impl Request {
    /// A request with no parameters.
    pub fn new(request_id: impl Into<String>, now: Timestamp) -> Self {
        Self {
            tool: None,
            request_id: request_id.into(),
            params: Map::new(),
            now,
        }
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
    fn request_with_unknown_member_is_an_error() {
        assert!(
            Request::from_json(br#"{"request_id":"a","now":"2026-12-02T10:00:00Z","x":1}"#)
                .is_err()
        );
    }
}
