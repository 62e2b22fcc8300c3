//! Schema dialects: draft-07 and 2019-09 contracts load and judge like 2020-12 ones
//! (`format` asserted, remote `$ref` refused), a schema without `$schema` is 2020-12, and
//! any other dialect is refused.

use airlock_guard::{Contract, ContractError, Dialect, Guard, Request, SchemaError, Stage};
use serde_json::{json, Value};

const MANIFEST: &str = "tool = \"probe_status\"\nversion = 1\n\n[limits]\nmax_bytes = 4096\n\
    max_depth = 8\n\n[agent]\nfields = [\"/data/state\", \"/data/checked_at\"]\n\n[retry]\n\
    max_attempts = 1\ndeadline = \"1s\"\nretryable = []\n";

/// The envelope of a `probe_status` contract as a generator writes it in `dialect`: the
/// definitions under `defs` (`definitions` for draft-07, `$defs` after), objects closed by
/// `additionalProperties: false`, `checked_at` a `date-time`.
fn envelope(dialect: Dialect, defs: &str) -> Value {
    let at = |name: &str| json!({"$ref": format!("#/{defs}/{name}")});
    json!({
        "$schema": dialect.uri(),
        "oneOf": [at("success"), at("failure")],
        defs: {
            "success": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "const": "probe_status"},
                    "request_id": {"type": "string", "maxLength": 64},
                    "outcome": {"type": "string", "const": "success"},
                    "data": at("data")
                },
                "required": ["tool", "request_id", "outcome", "data"],
                "additionalProperties": false
            },
            "failure": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "const": "probe_status"},
                    "request_id": {"type": "string", "maxLength": 64},
                    "outcome": {"type": "string", "const": "failure"},
                    "error": {
                        "type": "object",
                        "properties": {
                            "code": {"type": "string", "enum": ["NOT_FOUND", "UPSTREAM_UNAVAILABLE"]},
                            "retryable": {"type": "boolean"}
                        },
                        "required": ["code", "retryable"],
                        "additionalProperties": false
                    }
                },
                "required": ["tool", "request_id", "outcome", "error"],
                "additionalProperties": false
            },
            "data": {
                "type": "object",
                "properties": {
                    "state": {"type": "string", "enum": ["up", "down"]},
                    "checked_at": {"type": "string", "format": "date-time"}
                },
                "required": ["state", "checked_at"],
                "additionalProperties": false
            }
        }
    })
}

/// A contract folder holding the manifest above and `schema`.
fn load(schema: &Value) -> Result<Contract, ContractError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("contract.toml"), MANIFEST).unwrap();
    std::fs::write(
        dir.path().join("v1.schema.json"),
        serde_json::to_vec_pretty(schema).unwrap(),
    )
    .unwrap();
    Contract::load(dir.path())
}

fn request() -> Request {
    Request::from_json(br#"{"request_id": "req.Pr0be001", "now": "2026-12-02T10:00:00Z"}"#).unwrap()
}

fn body(checked_at: &str, extra: &str) -> Vec<u8> {
    format!(
        r#"{{"tool":"probe_status","request_id":"req.Pr0be001","outcome":"success",
            "data":{{"state":"up","checked_at":"{checked_at}"{extra}}}}}"#
    )
    .into_bytes()
}

/// Admits the good body and rejects a bad `date-time`, an extra member, and a wrong type.
fn judges_like_2020_12(contract: Contract, dialect: Dialect) {
    assert_eq!(contract.schema().dialect(), dialect);
    let guard = Guard::new(contract);
    let request = request();
    let admitted = guard.admit(&request, &body("2026-12-02T09:59:00Z", ""));
    assert!(
        admitted.is_admitted(),
        "{dialect}: {:?}",
        admitted.diagnostic()
    );
    let data = admitted.agent().data().unwrap();
    assert_eq!(data["checked_at"], "2026-12-02T09:59:00Z");
    for (bad, keyword) in [
        (body("2026-12-02 09:59", ""), "format"),
        (body("yesterday", ""), "format"),
        (
            body("2026-12-02T09:59:00Z", r#","note":"hi""#),
            "additionalProperties",
        ),
    ] {
        let admission = guard.admit(&request, &bad);
        assert!(
            !admission.is_admitted(),
            "{dialect}: admitted {}",
            String::from_utf8_lossy(&bad)
        );
        let diagnostic = admission.diagnostic().unwrap();
        assert_eq!(diagnostic.stage(), Stage::Schema);
        let keywords: Vec<&str> = std::iter::once(diagnostic.keyword())
            .chain(diagnostic.causes().iter().map(|c| c.keyword()))
            .collect();
        assert!(keywords.contains(&keyword), "{dialect}: {keywords:?}");
    }
}

#[test]
fn a_draft_07_contract_loads_and_asserts_date_time() {
    let contract = load(&envelope(Dialect::Draft7, "definitions")).unwrap();
    judges_like_2020_12(contract, Dialect::Draft7);
    // Also with the `$schema` spelled without its `#`.
    let mut schema = envelope(Dialect::Draft7, "definitions");
    schema["$schema"] = json!("http://json-schema.org/draft-07/schema");
    judges_like_2020_12(load(&schema).unwrap(), Dialect::Draft7);
}

#[test]
fn a_2019_09_contract_loads_and_asserts_date_time() {
    let contract = load(&envelope(Dialect::Draft2019_09, "$defs")).unwrap();
    judges_like_2020_12(contract, Dialect::Draft2019_09);
}

#[test]
fn a_schema_without_schema_is_draft_2020_12() {
    let mut schema = envelope(Dialect::Draft2020_12, "$defs");
    schema.as_object_mut().unwrap().remove("$schema");
    let contract = load(&schema).unwrap();
    judges_like_2020_12(contract, Dialect::Draft2020_12);
    // 2020-12 rules: an `items` array is not a draft-07 tuple, and is refused.
    let built = Contract::builder("t", json!({"type": "array", "items": [{"type": "string"}]}))
        .build()
        .unwrap_err();
    assert!(matches!(built, ContractError::Schema { .. }), "{built}");
}

#[test]
fn an_unknown_dialect_is_still_refused_naming_the_three_accepted() {
    for uri in [
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "https://json-schema.org/draft/2021-01/schema",
    ] {
        let mut schema = envelope(Dialect::Draft7, "definitions");
        schema["$schema"] = json!(uri);
        let error = load(&schema).unwrap_err();
        let ContractError::Schema { error: inner, .. } = &error else {
            panic!("{error:?}");
        };
        assert!(
            matches!(inner, SchemaError::UnknownDialect(u) if u == uri),
            "{inner:?}"
        );
        let message = error.to_string();
        assert!(message.contains("is not supported"), "{message}");
        for dialect in Dialect::ALL {
            assert!(message.contains(dialect.uri()), "{message}");
        }
    }
}

#[test]
fn a_draft_07_remote_ref_is_refused() {
    let mut schema = envelope(Dialect::Draft7, "definitions");
    schema["definitions"]["data"]["properties"]["state"] =
        json!({"$ref": "https://example.com/state.json"});
    let message = load(&schema).unwrap_err().to_string();
    assert!(
        message.contains("https://example.com/state.json"),
        "{message}"
    );
    assert!(message.contains("refused"), "{message}");
}

#[test]
fn a_draft_07_ref_ignores_its_siblings_in_the_guard_too() {
    // `additionalProperties: false` beside a `$ref` closes nothing in draft-07: the
    // referenced definition must close the object itself.
    let mut schema = envelope(Dialect::Draft7, "definitions");
    schema["definitions"]["success"]["properties"]["data"] = json!({
        "$ref": "#/definitions/open", "additionalProperties": false
    });
    schema["definitions"]["open"] = json!({"type": "object",
        "properties": {"state": {"enum": ["up"]}, "checked_at": {"format": "date-time"}}});
    let guard = Guard::new(load(&schema).unwrap());
    let admission = guard.admit(&request(), &body("2026-12-02T09:59:00Z", r#","note":"hi""#));
    assert!(admission.is_admitted(), "draft-07 ignores `$ref` siblings");
}
