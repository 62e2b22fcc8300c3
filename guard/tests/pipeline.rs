//! The whole pipeline on the shipped contracts: the seed's first test, the reader entry
//! point, retries, custom checks, audit records and contract loading errors.

use airlock_guard::{
    AgentValue, CheckFailure, Contract, ContractError, CustomCheck, ErrorCode, Guard, Limits,
    Request, Stage, StopReason, TransportError, Verdict, MAX_BYTES_CEILING, MAX_EXPLAINED_BYTES,
};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use crate::util::{accepted_successes, contract, request, root, TOOLS};

/// Every object of `value`, by JSON pointer.
fn object_pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            out.push(at.clone());
            for (k, v) in map {
                object_pointers(v, format!("{at}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                object_pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn one_unexpected_property_anywhere_is_rejected_and_not_one_byte_of_it_reaches_the_agent() {
    for tool in TOOLS {
        let guard = Guard::new(contract(tool));
        let request = request(tool);
        let fixed = AgentValue::invalid_response(tool, &request.request_id).to_json_string();
        for (name, bytes) in accepted_successes(tool) {
            assert!(
                guard.admit(&request, &bytes).is_admitted(),
                "{tool}/{name} must be admitted as is"
            );
            let base: Value = serde_json::from_slice(&bytes).unwrap();
            let mut objects = Vec::new();
            object_pointers(&base, String::new(), &mut objects);
            for (i, pointer) in objects.iter().enumerate() {
                let canary = format!("CANARYq{i}x{}", tool.len());
                let mut variant = base.clone();
                let target = variant
                    .pointer_mut(pointer)
                    .unwrap()
                    .as_object_mut()
                    .unwrap();
                target.insert(
                    format!("{canary}_name"),
                    Value::String(format!("{canary}_value")),
                );
                let admission = guard.admit(&request, variant.to_string().as_bytes());
                let agent = admission.agent().to_json_string();
                assert!(
                    !admission.is_admitted(),
                    "{tool}/{name}: extra member at {pointer:?} admitted"
                );
                assert_eq!(agent, fixed, "{tool}/{name} at {pointer:?}");
                assert!(!agent.contains("CANARY"), "{agent}");
                let diagnostic = admission.diagnostic().unwrap();
                assert_eq!(diagnostic.stage(), Stage::Schema);
                assert!(
                    !diagnostic.masked().to_string().contains("CANARY"),
                    "masked diagnostic leaks"
                );
            }
        }
    }
}

#[test]
fn admitted_success_carries_exactly_the_agent_fields_and_the_requests_id() {
    let guard = Guard::new(contract("deploy_status"));
    let request = request("deploy_status");
    let body = br#"{"tool":"deploy_status","request_id":"req.Dp40sTgA","outcome":"success","data":{"environment":"staging","revision":"a83f19c","state":"healthy"}}"#;
    let admission = guard.admit(&request, body);
    assert_eq!(admission.audit().verdict(), Verdict::Admitted);
    assert_eq!(
        admission.agent().to_json_string(),
        r#"{"tool":"deploy_status","request_id":"req.Dp40sTgA","outcome":"success","data":{"environment":"staging","revision":"a83f19c","state":"healthy"}}"#
    );
}

#[test]
fn failure_envelope_keeps_its_code_and_takes_retryable_from_the_policy_not_the_upstream() {
    let guard = Guard::new(contract("review_status"));
    let request = request("review_status");
    let body = |code: &str, retryable: bool| {
        format!(
            r#"{{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure","error":{{"code":"{code}","retryable":{retryable}}}}}"#
        )
    };
    let a = guard.admit(&request, body("NOT_FOUND", true).as_bytes());
    assert_eq!(a.audit().verdict(), Verdict::UpstreamFailure);
    assert_eq!(a.agent().error(), Some((ErrorCode::NotFound, false)));
    let b = guard.admit(&request, body("UPSTREAM_UNAVAILABLE", false).as_bytes());
    assert_eq!(
        b.agent().error(),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    let c = guard.admit(&request, body("INVALID_RESPONSE", true).as_bytes());
    assert_eq!(c.agent().error(), Some((ErrorCode::InvalidResponse, false)));
}

#[test]
fn transport_errors_are_upstream_unavailable_with_the_policys_retryable() {
    let guard = Guard::new(contract("job_run_status"));
    for error in TransportError::ALL {
        let a = guard.admit_transport_error(&request("job_run_status"), error);
        assert_eq!(
            a.agent().error(),
            Some((ErrorCode::UpstreamUnavailable, true))
        );
        assert_eq!(a.audit().verdict(), Verdict::TransportFailure);
        assert_eq!(a.audit().stage(), Stage::Transport);
    }
}

/// A reader that serves an endless valid-looking prefix and counts what it served.
struct Flood {
    served: u64,
}

impl Read for Flood {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        buf.fill(b' ');
        self.served += buf.len() as u64;
        Ok(buf.len())
    }
}

#[test]
fn reader_entry_point_stops_one_byte_past_max_bytes() {
    let guard = Guard::new(contract("review_status"));
    let mut flood = Flood { served: 0 };
    let admission = guard.admit_reader(&request("review_status"), &mut flood);
    assert_eq!(flood.served, 4097);
    assert_eq!(admission.audit().stage(), Stage::Limits);
    assert!(!admission.is_admitted());
}

#[test]
fn reader_failure_is_a_transport_failure() {
    struct Reset;
    impl Read for Reset {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::ConnectionReset.into())
        }
    }
    let a = Guard::new(contract("review_status")).admit_reader(&request("review_status"), Reset);
    assert_eq!(a.audit().verdict(), Verdict::TransportFailure);
    assert_eq!(
        a.agent().error(),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
}

#[test]
fn ten_million_brackets_are_a_clean_parse_rejection() {
    let guard = Guard::new(contract("review_status"));
    let body = vec![b'['; 10_000_000];
    let a = guard.admit(&request("review_status"), &body);
    assert_eq!(
        a.audit().stage(),
        Stage::Limits,
        "the byte limit comes first"
    );
    let small = vec![b'['; 4000];
    let a = guard.admit(&request("review_status"), &small);
    assert_eq!(a.audit().stage(), Stage::Parse);
    assert_eq!(a.diagnostic().unwrap().keyword(), "max_depth");
}

fn success_body() -> Vec<u8> {
    br#"{"tool":"job_run_status","request_id":"req.Bx81LmQa","outcome":"success","data":{"project_id":"bluebird","run_id":"run_8fK2mQ7xLp0Z","state":"running","observed_at":"2026-12-02T09:59:00Z"}}"#.to_vec()
}

fn unavailable_body() -> Vec<u8> {
    br#"{"tool":"job_run_status","request_id":"req.Bx81LmQa","outcome":"failure","error":{"code":"UPSTREAM_UNAVAILABLE","retryable":true}}"#.to_vec()
}

#[test]
fn retry_driver_retries_unavailability_and_stops_on_the_first_admitted_success() {
    let guard = Guard::new(contract("job_run_status"));
    let outcome = guard.call(&request("job_run_status"), |attempt| match attempt {
        1 => Err(TransportError::ConnectionReset),
        2 => Ok(unavailable_body()),
        3 => Ok(success_body()),
        _ => panic!("no fourth attempt"),
    });
    assert_eq!(outcome.stop_reason(), StopReason::Settled);
    assert_eq!(outcome.attempts().len(), 3);
    assert!(outcome.final_admission().agent().is_success());
    let attempts: Vec<_> = outcome
        .attempts()
        .iter()
        .map(|a| a.audit().attempt())
        .collect();
    assert_eq!(attempts, [Some(1), Some(2), Some(3)]);
}

#[test]
fn retry_driver_never_reuses_an_earlier_success_and_a_rejection_is_final() {
    let guard = Guard::new(contract("job_run_status"));
    let request = request("job_run_status");
    let first = guard.call(&request, |_| Ok(success_body()));
    assert!(first.final_admission().agent().is_success());
    // A later call whose evidence is hostile gets the fixed failure, not the old success.
    let mut hostile = success_body();
    hostile.extend_from_slice(b"{}");
    let second = guard.call(&request, |_| Ok(hostile.clone()));
    assert_eq!(second.stop_reason(), StopReason::NotRetryable);
    assert_eq!(second.attempts().len(), 1);
    assert_eq!(
        second.final_admission().agent(),
        &AgentValue::invalid_response("job_run_status", "req.Bx81LmQa")
    );
}

#[test]
fn retry_driver_stops_at_max_attempts_and_at_the_deadline() {
    let guard = Guard::new(contract("job_run_status"));
    let request = request("job_run_status");
    let exhausted = guard.call(&request, |_| Err(TransportError::Timeout));
    assert_eq!(exhausted.stop_reason(), StopReason::AttemptsExhausted);
    assert_eq!(exhausted.attempts().len(), 3);
    let mut clock = 0;
    let late = guard.call_with_clock(
        &request,
        |_| Ok(unavailable_body()),
        || {
            clock += 6;
            Duration::from_secs(clock)
        },
    );
    assert_eq!(late.stop_reason(), StopReason::DeadlinePassed);
    assert_eq!(late.attempts().len(), 2);
    let not_found = guard.call(&request, |_| {
        Ok(br#"{"tool":"job_run_status","request_id":"req.Bx81LmQa","outcome":"failure","error":{"code":"NOT_FOUND","retryable":true}}"#.to_vec())
    });
    assert_eq!(not_found.stop_reason(), StopReason::Settled);
    assert_eq!(not_found.attempts().len(), 1);
}

#[test]
fn stop_after_is_the_drivers_decision_and_reads_the_clock_only_to_retry() {
    let guard = Guard::new(contract("job_run_status"));
    let request = request("job_run_status");
    let unavailable = guard.admit(&request, &unavailable_body());
    let success = guard.admit(&request, &success_body());
    let rejected = guard.admit(&request, b"{}");
    let unread = || -> Duration { panic!("the clock is read only when the rest would retry") };
    assert_eq!(
        guard.stop_after(&success, 1, unread),
        Some(StopReason::Settled)
    );
    assert_eq!(
        guard.stop_after(&rejected, 1, unread),
        Some(StopReason::NotRetryable)
    );
    assert_eq!(
        guard.stop_after(&unavailable, 3, unread),
        Some(StopReason::AttemptsExhausted)
    );
    assert_eq!(
        guard.stop_after(&unavailable, 2, || Duration::from_secs(9)),
        None
    );
    assert_eq!(
        guard.stop_after(&unavailable, 2, || Duration::from_secs(10)),
        Some(StopReason::DeadlinePassed)
    );
}

struct OnlyRunning;

impl CustomCheck for OnlyRunning {
    fn name(&self) -> &str {
        "only_running"
    }
    fn check(&self, request: &Request, response: &Value) -> Result<(), CheckFailure> {
        assert_eq!(request.request_id, "req.Bx81LmQa");
        match response.pointer("/data/state").and_then(Value::as_str) {
            Some("running") | None => Ok(()),
            Some(other) => {
                Err(CheckFailure::new(format!("state {other} is not running")).at("/data/state"))
            }
        }
    }
}

#[test]
fn custom_checks_see_the_request_and_the_value_and_reject_at_the_checks_stage() {
    let guard = Guard::builder(contract("job_run_status"))
        .check(OnlyRunning)
        .build();
    let request = request("job_run_status");
    assert!(guard.admit(&request, &success_body()).is_admitted());
    let failed = String::from_utf8(success_body())
        .unwrap()
        .replace("running", "failed");
    let a = guard.admit(&request, failed.as_bytes());
    let d = a.diagnostic().unwrap();
    assert_eq!(
        (d.stage(), d.keyword(), d.instance_path()),
        (Stage::Checks, "only_running", Some("/data/state"))
    );
    assert!(
        guard.admit(&request, &unavailable_body()).is_admitted(),
        "absent field: the check passes"
    );
}

#[test]
fn audit_record_is_one_json_line_with_identity_digest_and_diagnostic() {
    let guard = Guard::builder(contract("review_status"))
        .adapter("review-connector", "2.1.0")
        .endpoint("https://reviews.internal/api")
        .build();
    let body = br#"{"approved": false, "approved": true}"#;
    let a = guard.admit(&request("review_status"), body);
    let line = a.audit().to_json_line();
    assert!(!line.contains('\n'));
    let record: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(record["tool"], "review_status");
    assert_eq!(record["contract_version"], 2);
    assert_eq!(record["schema_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(record["adapter"]["name"], "review-connector");
    assert_eq!(record["endpoint"], "https://reviews.internal/api");
    assert_eq!(record["request_id"], "req.J7q94MkP");
    assert_eq!(record["stage"], "parse");
    assert_eq!(record["verdict"], "rejected");
    assert_eq!(record["diagnostic"]["keyword"], "duplicate_member");
    assert_eq!(record["diagnostic"]["byte_offset"], 20);
    assert_eq!(record["raw_sha256"], airlock_guard::sha256_hex(body));
    assert_eq!(record["raw_len"], body.len());
}

#[test]
fn an_explained_diagnostic_cannot_be_given_lines_or_escape_sequences_by_the_body() {
    // A member name quoted by the schema's message, holding a line feed, a forged
    // `because` line, an escape sequence and a bidirectional override.
    let guard = Guard::new(contract("review_status"));
    let body = br#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success","data":{"change_id":"CR-1042","decision":"approved","reviewed_by":"x","a\n  because all is well\u001b[2J\u202e":1}}"#;
    let a = guard.admit(&request("review_status"), body);
    let diagnostic = a.diagnostic().expect("rejected");
    assert!(diagnostic.causes()[0].message().contains('\n'));
    let explained = diagnostic.explained();
    assert_eq!(
        explained.lines().count(),
        1 + diagnostic.causes().len(),
        "{explained}"
    );
    assert!(!explained.contains(['\u{1b}', '\u{202e}']), "{explained}");
    assert!(
        explained.contains(r"a\u{a}  because all is well\u{1b}[2J\u{202e}"),
        "{explained}"
    );
    // Text that only looks like an escape is shown as text: its backslash doubled.
    let body = br#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success","data":{"change_id":"CR-1042","decision":"approved","reviewed_by":"x","a\\u{a}  because":1}}"#;
    let a = guard.admit(&request("review_status"), body);
    let explained = a.diagnostic().expect("rejected").explained();
    assert!(explained.contains(r"a\\u{a}  because"), "{explained}");
}

#[test]
fn request_for_another_tool_is_rejected() {
    let guard = Guard::new(contract("review_status"));
    let mut request = request("review_status");
    request.tool = Some("deploy_status".into());
    let a = guard.admit(&request, b"{}");
    assert_eq!(a.audit().stage(), Stage::Request);
}

#[test]
fn a_file_given_for_a_contract_folder_is_named_as_such() {
    let manifest = root().join("schemas/review_status/contract.toml");
    let error = Contract::load(&manifest).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "{}: a file, not a contract folder: give the folder that holds contract.toml",
            manifest.display()
        )
    );
}

/// Copy a shipped contract to a temporary folder and apply `edit` to its manifest.
fn broken_contract(tool: &str, edit: impl FnOnce(&Path)) -> ContractError {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(root().join("schemas").join(tool)).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    edit(dir.path());
    Contract::load(dir.path()).unwrap_err()
}

fn replace_in(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} not in {}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap();
}

/// A change to a copied contract folder.
type Edit = Box<dyn FnOnce(&Path)>;

#[test]
fn contract_loading_errors_are_precise() {
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "missing manifest",
            Box::new(|d: &Path| std::fs::remove_file(d.join("contract.toml")).unwrap()),
            "contract.toml",
        ),
        (
            "missing schema",
            Box::new(|d: &Path| std::fs::remove_file(d.join("v1.schema.json")).unwrap()),
            "v1.schema.json",
        ),
        (
            "unknown key",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("contract.toml"),
                    "max_depth = 8",
                    "max_depth = 8\nmax_dpeth = 9",
                )
            }),
            "max_dpeth",
        ),
        (
            "depth past the ceiling",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("contract.toml"),
                    "max_depth = 8",
                    "max_depth = 100000",
                )
            }),
            "limits.max_depth",
        ),
        (
            "bad duration",
            Box::new(|d: &Path| {
                replace_in(&d.join("contract.toml"), "\"15m\"", "\"fifteen minutes\"")
            }),
            "checks[2].max_age",
        ),
        (
            "bad deadline",
            Box::new(|d: &Path| replace_in(&d.join("contract.toml"), "\"10s\"", "\"-10s\"")),
            "retry.deadline",
        ),
        (
            "unknown code",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("contract.toml"),
                    "retryable = [\"UPSTREAM_UNAVAILABLE\"]",
                    "retryable = [\"TEAPOT\"]",
                )
            }),
            "TEAPOT",
        ),
        (
            "unknown check",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("contract.toml"),
                    "kind = \"fresh\"",
                    "kind = \"recent\"",
                )
            }),
            "recent",
        ),
        (
            "typo in agent field",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("contract.toml"),
                    "\"/data/run_id\", ",
                    "\"/data/runid\", ",
                )
            }),
            "/data/runid",
        ),
        (
            "typo in check field",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("contract.toml"),
                    "field = \"/data/observed_at\"",
                    "field = \"/data/observedAt\"",
                )
            }),
            "/data/observedAt",
        ),
        (
            "bad pointer",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("contract.toml"),
                    "field = \"/data/project_id\"",
                    "field = \"data/project_id\"",
                )
            }),
            "must start with '/'",
        ),
        (
            "meta-invalid schema",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("v1.schema.json"),
                    "\"maxLength\": 35",
                    "\"maxLength\": -35",
                )
            }),
            "v1.schema.json",
        ),
        (
            "unknown format",
            Box::new(|d: &Path| {
                replace_in(&d.join("v1.schema.json"), "\"date-time\"", "\"moment\"")
            }),
            "moment",
        ),
        (
            "duplicate keyword",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("v1.schema.json"),
                    "\"maxLength\": 35",
                    "\"maxLength\": 35, \"maxLength\": 99999",
                )
            }),
            "duplicate member",
        ),
        (
            "remote ref",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("v1.schema.json"),
                    "\"#/$defs/tool\"",
                    "\"https://evil.example/tool.json\"",
                )
            }),
            "refused",
        ),
        (
            "old dialect",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("v1.schema.json"),
                    "https://json-schema.org/draft/2020-12/schema",
                    "http://json-schema.org/draft-04/schema#",
                )
            }),
            "draft-04",
        ),
        (
            "backtracking pattern",
            Box::new(|d: &Path| {
                replace_in(
                    &d.join("v1.schema.json"),
                    "^run_[A-Za-z0-9]{12,48}$",
                    "^run_(?=x)[A-Za-z0-9]{12,48}$",
                )
            }),
            "^run_(?=x)[A-Za-z0-9]{12,48}$",
        ),
    ];
    for (what, edit, expected) in cases {
        let message = broken_contract("job_run_status", edit).to_string();
        assert!(
            message.contains(expected),
            "{what}: {message:?} should mention {expected:?}"
        );
    }
}

#[test]
fn contract_built_in_code_works_like_one_on_disk() {
    let schema: Value = serde_json::from_slice(
        &std::fs::read(root().join("schemas/deploy_status/v1.schema.json")).unwrap(),
    )
    .unwrap();
    let contract = Contract::builder("deploy_status", schema)
        .agent_field("/data/state")
        .build()
        .unwrap();
    let guard = Guard::new(contract);
    let body = br#"{"tool":"deploy_status","request_id":"req.Dp40sTgA","outcome":"success","data":{"environment":"staging","revision":"a83f19c","state":"healthy"}}"#;
    let a = guard.admit(&request("deploy_status"), body);
    let data = a.agent().data().expect("a success");
    assert_eq!(data.keys().collect::<Vec<_>>(), ["state"]);
    assert_eq!(data["state"], "healthy");
}

/// The deepest document any limit allows is parsed, validated (through a recursive `$ref`),
/// projected and dropped on a thread with a 2 MiB stack, the size of a test thread.
#[test]
fn deepest_allowed_document_fits_a_small_thread_stack() {
    let depth = airlock_guard::MAX_DEPTH_CEILING;
    let nested = format!("{}{}", "[".repeat(depth - 2), "]".repeat(depth - 2));
    let body = format!(
        r#"{{"tool":"deep","request_id":"req.Deep0001","outcome":"success","data":{{"n":{nested}}}}}"#
    );
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"nest": {"type": "array", "items": {"$ref": "#/$defs/nest"}}},
        "type": "object",
        "properties": {"data": {"type": "object", "properties": {"n": {"$ref": "#/$defs/nest"}}}}
    });
    let contract = Contract::builder("deep", schema)
        .limits(airlock_guard::Limits {
            max_bytes: 1 << 20,
            max_depth: depth,
        })
        .agent_field("/data/n")
        .build()
        .unwrap();
    let guard = Guard::new(contract);
    let request = Request::new("req.Deep0001", "2026-12-02T10:00:00Z".parse().unwrap());
    let admitted = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let admission = guard.admit(&request, body.as_bytes());
            // Rejected at the very bottom: the diagnostic path (a serde_json copy and the
            // error-building validator) runs at full depth too.
            let bottom = format!("{}1{}", "[".repeat(depth - 2), "]".repeat(depth - 2));
            let wrong = body.replace(&nested, &bottom);
            let rejection = guard.admit(&request, wrong.as_bytes());
            assert_eq!(rejection.audit().stage(), airlock_guard::Stage::Schema);
            assert!(rejection.diagnostic().is_some());
            let too_deep = format!("[{nested}]");
            let rejected = guard
                .contract()
                .schema()
                .validate_bytes(too_deep.as_bytes(), 100_000);
            let json = admission.agent().to_json_string();
            (admission.is_admitted(), rejected.is_err(), json.len())
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(admitted.0, "the deepest allowed document is admitted");
    assert!(
        admitted.1,
        "a deeper one is refused even when a larger depth is asked"
    );
    assert!(admitted.2 > 2 * (depth - 2));
}

/// A contract in code whose successes carry closed `items`, with the largest byte limit.
fn bulk_contract() -> Contract {
    let item = serde_json::json!({"type": "object", "additionalProperties": false,
        "properties": {"id": {"type": "string", "maxLength": 16}}});
    let schema = serde_json::json!({"oneOf": [
        {"type": "object", "additionalProperties": false,
         "required": ["tool", "request_id", "outcome", "data"],
         "properties": {"tool": {"const": "bulk"}, "request_id": {"type": "string"},
            "outcome": {"const": "success"},
            "data": {"type": "object", "additionalProperties": false,
                "properties": {"items": {"type": "array", "items": item}}}}},
        {"type": "object", "additionalProperties": false,
         "required": ["tool", "request_id", "outcome", "error"],
         "properties": {"tool": {"const": "bulk"}, "request_id": {"type": "string"},
            "outcome": {"const": "failure"}, "error": {"type": "object"}}}
    ]});
    Contract::builder("bulk", schema)
        .limits(Limits {
            max_bytes: MAX_BYTES_CEILING,
            max_depth: 8,
        })
        .agent_field("/data/items")
        .build()
        .unwrap()
}

#[test]
fn a_large_rejected_body_gets_a_diagnostic_whose_size_does_not_depend_on_the_body() {
    let guard = Guard::new(bulk_contract());
    let request = Request::new("req.12345678", "2026-12-02T10:00:00Z".parse().unwrap());
    // One item quotes a 100 KB value; four thousand more carry a member too many each.
    let huge = "h".repeat(100_000);
    let mut items = vec![format!(r#"{{"id":"{huge}"}}"#)];
    items.extend((0..4_000).map(|i| format!(r#"{{"id":"i{i}","extra":{i}}}"#)));
    let body = format!(
        r#"{{"tool":"bulk","request_id":"req.12345678","outcome":"success","data":{{"items":[{}]}}}}"#,
        items.join(",")
    );
    assert!(body.len() > 200_000 && body.len() <= MAX_EXPLAINED_BYTES);
    let admission = guard.admit(&request, body.as_bytes());
    let audit = admission.audit();
    assert_eq!(audit.verdict(), Verdict::Rejected);
    let diagnostic = audit.diagnostic().unwrap();
    assert_eq!(diagnostic.stage(), Stage::Schema);
    assert!(
        diagnostic.causes().len() <= 8,
        "{}",
        diagnostic.causes().len()
    );
    assert!(
        diagnostic.message().contains("more causes"),
        "{}",
        diagnostic.message()
    );
    // The success branch explains it: its discriminating `outcome` matched.
    assert!(diagnostic.causes()[0]
        .instance_path()
        .unwrap()
        .starts_with("/data/items/"));
    let line = audit.to_json_line();
    assert!(line.len() < 16 * 1024, "audit line of {} bytes", line.len());
    assert!(!line.contains(&"h".repeat(600)));
    let text = format!("{diagnostic}");
    assert!(text.len() < 2 * 1024, "{} bytes", text.len());
    // The whole account the bindings give: the line, then one `because` line per cause.
    let explained = diagnostic.explained();
    let lines: Vec<&str> = explained.lines().collect();
    assert_eq!(lines.len(), 1 + diagnostic.causes().len(), "{explained}");
    assert_eq!(lines[0], text);
    for (line, cause) in lines[1..].iter().zip(diagnostic.causes()) {
        assert_eq!(*line, format!("  because {cause}"));
    }
}

#[test]
fn a_rejected_body_past_the_explained_size_says_it_was_not_explained() {
    let guard = Guard::new(bulk_contract());
    let request = Request::new("req.12345678", "2026-12-02T10:00:00Z".parse().unwrap());
    let items: Vec<String> = (0..90_000)
        .map(|i| format!(r#"{{"id":"i{i}","extra":{i}}}"#))
        .collect();
    let body = format!(
        r#"{{"tool":"bulk","request_id":"req.12345678","outcome":"success","data":{{"items":[{}]}}}}"#,
        items.join(",")
    );
    assert!(body.len() > MAX_EXPLAINED_BYTES);
    let admission = guard.admit(&request, body.as_bytes());
    assert_eq!(admission.audit().verdict(), Verdict::Rejected);
    let diagnostic = admission.audit().diagnostic().unwrap();
    assert_eq!(diagnostic.stage(), Stage::Schema);
    assert!(
        diagnostic.message().contains("not explained"),
        "{diagnostic}"
    );
    // A valid body of the same size is admitted: only the explanation is skipped.
    let valid = items
        .iter()
        .map(|item| {
            item.split(r#","extra""#)
                .next()
                .unwrap_or_default()
                .to_owned()
                + "}"
        })
        .collect::<Vec<_>>()
        .join(",");
    let valid = format!(
        r#"{{"tool":"bulk","request_id":"req.12345678","outcome":"success","data":{{"items":[{valid}]}}}}"#
    );
    assert!(valid.len() > MAX_EXPLAINED_BYTES);
    assert!(guard.admit(&request, valid.as_bytes()).is_admitted());
}
