//! The two closed shapes of an agent value, read from what some adapter produced. This
//! lives in the harness, not the guard: the guard's `AgentValue` can only be made by the
//! guard, never from arbitrary JSON.

use airlock_guard::ErrorCode;
use serde_json::{Map, Value};

/// What an adapter's agent value claims, once it is known to be a closed shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// `outcome: success` with `data`.
    Success,
    /// `outcome: failure` with a known code.
    Failure(ErrorCode),
}

impl Claim {
    /// Whether the value admits evidence: a success, or a failure other than the fixed
    /// `INVALID_RESPONSE`.
    pub fn admits(self) -> bool {
        !matches!(self, Claim::Failure(ErrorCode::InvalidResponse))
    }
}

/// Check that `value` is exactly one of the two closed shapes: the exact members, string
/// `tool` and `request_id`, an object `data` or an `error` of exactly a known `code` and a
/// boolean `retryable`.
///
/// # Errors
///
/// A sentence saying what departs from the closed shapes.
pub fn closed_shape(value: &Value) -> Result<Claim, String> {
    let obj = value.as_object().ok_or("agent value is not an object")?;
    for name in ["tool", "request_id", "outcome"] {
        if !obj.get(name).is_some_and(Value::is_string) {
            return Err(format!("member `{name}` missing or not a string"));
        }
    }
    let exactly = |keys: &[&str], map: &Map<String, Value>, what: &str| {
        if map.len() != keys.len() || !keys.iter().all(|k| map.contains_key(*k)) {
            let found: Vec<_> = map.keys().map(String::as_str).collect();
            return Err(format!(
                "{what} must have exactly {keys:?}, found {found:?}"
            ));
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
            obj["data"].as_object().ok_or("`data` is not an object")?;
            Ok(Claim::Success)
        }
        Some("failure") => {
            exactly(
                &["tool", "request_id", "outcome", "error"],
                obj,
                "agent value",
            )?;
            let error = obj["error"].as_object().ok_or("`error` is not an object")?;
            exactly(&["code", "retryable"], error, "`error`")?;
            let code = error["code"]
                .as_str()
                .and_then(ErrorCode::from_wire)
                .ok_or("`error.code` is not one of the closed set of codes")?;
            error["retryable"]
                .as_bool()
                .ok_or("`error.retryable` is not a boolean")?;
            Ok(Claim::Failure(code))
        }
        _ => Err("`outcome` is neither \"success\" nor \"failure\"".into()),
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
        let mut data = success.clone();
        data["data"] = json!("approved");
        assert!(closed_shape(&data).is_err());
        assert!(!Claim::Failure(ErrorCode::InvalidResponse).admits());
        assert!(Claim::Failure(ErrorCode::UpstreamUnavailable).admits());
    }
}
