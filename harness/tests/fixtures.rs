//! Every fixture of every shipped contract through the guard: accepted ones admitted with
//! exactly the expected agent value, near-misses rejected with the fixed failure,
//! historical ones as `expect.toml` says, and each near-miss's operator diagnostic
//! snapshotted under `snapshots/`.

use airlock_guard::{AgentValue, Contract, Guard};
use airlock_harness::corpus::{Expect, FixtureKind};
use serde_json::{json, Map, Value};

use crate::util::{contract_dir, load, root, TOOLS};

/// The agent value an accepted fixture must produce, computed independently of the guard:
/// serde_json's reading of the body, the contract's agent fields copied below `data`.
fn expected_agent_value(contract: &Contract, request_id: &str, body: &[u8]) -> Value {
    let value: Value = serde_json::from_slice(body).unwrap();
    let tool = contract.tool();
    if let Some(mcp) = contract.input().mcp() {
        // An MCP tool's failure is its tool_error code; its success, the agent fields of
        // structuredContent (top-level members).
        if value["result"]["isError"] == true {
            let code = mcp.tool_error;
            let retryable = contract.retry().is_retryable(code);
            return json!({"tool": tool, "request_id": request_id, "outcome": "failure",
                "error": {"code": code.as_str(), "retryable": retryable}});
        }
        let structured = &value["result"]["structuredContent"];
        let mut data = Map::new();
        for field in contract.agent_fields() {
            let name = field.as_str().strip_prefix('/').unwrap();
            if let Some(v) = structured.pointer(field.as_str()) {
                data.insert(name.to_owned(), v.clone());
            }
        }
        return json!({"tool": tool, "request_id": request_id, "outcome": "success", "data": data});
    }
    if value["outcome"] == "failure" {
        let code = value["error"]["code"].as_str().unwrap();
        let retryable = code == "UPSTREAM_UNAVAILABLE";
        return json!({"tool": tool, "request_id": request_id, "outcome": "failure",
            "error": {"code": code, "retryable": retryable}});
    }
    let mut data = Map::new();
    for field in contract.agent_fields() {
        let name = field.as_str().strip_prefix("/data/").unwrap();
        if let Some(v) = value.pointer(field.as_str()) {
            data.insert(name.to_owned(), v.clone());
        }
    }
    json!({"tool": tool, "request_id": request_id, "outcome": "success", "data": data})
}

/// The agent value of an accepted fixture of a vendor or command-output contract, written
/// out by hand from the fixture (the mapping applied by reading it): `None` for a fixture
/// this table does not know, which fails the test.
fn expected_mapped(tool: &str, fixture: &str, request_id: &str) -> Option<Value> {
    const SHA: &str = "a91957a858320c0e17f3a0eca7cfacbff50ea29a";
    let pipeline = |state: &str| {
        json!({"pipeline_id": 46, "state": state, "ref": "main", "sha": SHA,
            "observed_at": "2026-12-03T07:32:35.169Z"})
    };
    let failure = |code: &str, retryable: bool| {
        Some(
            json!({"tool": tool, "request_id": request_id, "outcome": "failure",
            "error": {"code": code, "retryable": retryable}}),
        )
    };
    let data = match (tool, fixture) {
        ("ci_pipeline_status", "canceled_becomes_cancelled") => pipeline("cancelled"),
        ("ci_pipeline_status", "running_compact") => pipeline("running"),
        ("ci_pipeline_status", "success_full_document_pretty") => pipeline("succeeded"),
        ("ci_pipeline_status", "failure_404_not_found") => return failure("NOT_FOUND", false),
        ("ci_pipeline_status", "failure_500_becomes_upstream_unavailable") => {
            return failure("UPSTREAM_UNAVAILABLE", true)
        }
        ("git_branch_head", "main_captured") => json!({"ref": "refs/heads/main",
            "commit": "3e928c05ce9b4559542d5e41074e68ae2356a6fd",
            "committed_at": "2026-12-03T07:00:00Z"}),
        ("git_branch_head", "feature_branch_offset_minus_5_captured") => {
            json!({"ref": "refs/heads/feature/login-v2",
                "commit": "a55db15404929f09dc6040347c6159e1e3abc0c8",
                "committed_at": "2026-12-02T22:30:05Z"})
        }
        _ => return None,
    };
    Some(json!({"tool": tool, "request_id": request_id, "outcome": "success", "data": data}))
}

#[test]
fn accepted_fixtures_are_admitted_with_exactly_the_expected_agent_value() {
    let mut seen = 0;
    for tool in TOOLS {
        let (guard, corpus) = load(tool);
        for fixture in corpus
            .fixtures
            .iter()
            .filter(|f| f.kind == FixtureKind::Accepted)
        {
            let admission = guard.admit(&fixture.request, &fixture.bytes);
            assert!(
                admission.is_admitted(),
                "{}: {:?}",
                fixture.path.display(),
                admission.diagnostic()
            );
            let request_id = &fixture.request.request_id;
            let expected = match guard.contract().input().as_str() {
                // The source is not the envelope: the mapping's result, by hand.
                "vendor" | "lines" => expected_mapped(tool, &fixture.name, request_id)
                    .unwrap_or_else(|| panic!("{tool}: no expectation for {}", fixture.name)),
                _ => expected_agent_value(guard.contract(), request_id, &fixture.bytes),
            };
            assert_eq!(
                admission.agent().to_json(),
                expected,
                "{}",
                fixture.path.display()
            );
            seen += 1;
        }
    }
    assert!(
        seen >= 12,
        "every contract has at least 3 accepted fixtures"
    );
}

#[test]
fn near_miss_fixtures_are_rejected_with_the_fixed_failure() {
    for tool in TOOLS {
        let (guard, corpus) = load(tool);
        let near: Vec<_> = corpus
            .fixtures
            .iter()
            .filter(|f| f.kind == FixtureKind::NearMiss)
            .collect();
        assert!(near.len() >= 10, "{tool}: only {} near-misses", near.len());
        for fixture in near {
            let admission = guard.admit(&fixture.request, &fixture.bytes);
            assert!(
                !admission.is_admitted(),
                "{} was admitted",
                fixture.path.display()
            );
            assert_eq!(
                admission.agent(),
                &AgentValue::invalid_response(tool, &fixture.request.request_id),
                "{}",
                fixture.path.display()
            );
        }
    }
}

#[test]
fn historical_fixtures_get_the_verdict_expect_toml_declares_and_were_valid_in_their_version() {
    let (guard, corpus) = load("review_status");
    let historical: Vec<_> = corpus
        .fixtures
        .iter()
        .filter(|f| matches!(f.kind, FixtureKind::Historical { .. }))
        .collect();
    assert!(historical.len() >= 3);
    for fixture in historical {
        let FixtureKind::Historical { version } = fixture.kind else {
            unreachable!()
        };
        let admitted = guard.admit(&fixture.request, &fixture.bytes).is_admitted();
        assert_eq!(
            admitted,
            fixture.expect == Expect::Accept,
            "{}",
            fixture.path.display()
        );
        let then =
            Guard::new(Contract::load_version(contract_dir("review_status"), version).unwrap());
        assert!(
            then.admit(&fixture.request, &fixture.bytes).is_admitted(),
            "{} is not even valid under v{version}",
            fixture.path.display()
        );
    }
}

#[test]
fn near_miss_diagnostics_are_snapshotted() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for tool in TOOLS {
            let (guard, corpus) = load(tool);
            for fixture in corpus
                .fixtures
                .iter()
                .filter(|f| f.kind == FixtureKind::NearMiss)
            {
                let admission = guard.admit(&fixture.request, &fixture.bytes);
                let diagnostic = admission
                    .diagnostic()
                    .expect("a rejection has a diagnostic");
                insta::assert_json_snapshot!(
                    format!("near_miss__{tool}__{}", fixture.name),
                    diagnostic
                );
            }
        }
    });
}
