//! Stage 4: request binding. The response must answer the outstanding request: its
//! `request_id` is the request's, and every parameter check of the contract holds.

use crate::audit::{bounded, Diagnostic, Stage};
use crate::checks::CheckSpec;
use crate::doc::Node;
use crate::request::Request;

/// Check that `response` answers `request`: the `request_id` member is present and equal,
/// then each binding check of `checks` (the others belong to the checks stage).
///
/// # Errors
///
/// The diagnostic of the first mismatch.
pub(crate) fn bind(
    request: &Request,
    response: Node<'_>,
    checks: &[CheckSpec],
) -> Result<(), Diagnostic> {
    match response.get("request_id") {
        Some(id) if id.as_str() == Some(&*request.request_id) => {}
        Some(other) => {
            return Err(Diagnostic::new(
                Stage::Binding,
                "request_id",
                format!(
                    "response answers request {}, not the outstanding {:?}",
                    bounded(&other),
                    request.request_id
                ),
                "response request_id is not the outstanding request's",
            )
            .with_instance_path("/request_id"))
        }
        None => {
            return Err(Diagnostic::new(
                Stage::Binding,
                "request_id",
                "response has no request_id",
                "response has no request_id",
            )
            .with_instance_path(""))
        }
    }
    bind_params(request, response, checks)
}

/// The parameter checks alone (an MCP message's id is bound by its decoder).
pub(crate) fn bind_params(
    request: &Request,
    response: Node<'_>,
    checks: &[CheckSpec],
) -> Result<(), Diagnostic> {
    checks
        .iter()
        .filter(|c| c.stage() == Stage::Binding)
        .try_for_each(|c| c.run_doc(request, response))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_doc;

    fn bind_body(body: &str) -> Result<(), Diagnostic> {
        bind(
            &request(),
            parse_doc(body.as_bytes(), 8).unwrap().root(),
            &[],
        )
    }

    fn request() -> Request {
        Request::new("req.J7q94MkP", "2026-12-02T10:00:00Z".parse().unwrap())
    }

    #[test]
    fn matching_request_id_binds() {
        assert!(bind_body(r#"{"request_id": "req.J7q94MkP"}"#).is_ok());
    }

    #[test]
    fn other_or_missing_request_id_is_rejected_at_binding() {
        let d = bind_body(r#"{"request_id": "req.OTHER000"}"#).unwrap_err();
        assert_eq!((d.stage(), d.keyword()), (Stage::Binding, "request_id"));
        assert!(d.message().contains("req.OTHER000"));
        assert!(!d.masked_message().contains("req.OTHER000"));
        assert!(bind_body("{}").is_err());
        assert!(bind_body(r#"{"request_id": 7}"#).is_err());
    }
}
