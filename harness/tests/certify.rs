//! `airlock certify`: classified changes, witnesses the versions really disagree on,
//! fixture replay, exit codes.

use airlock_guard::Contract;
use airlock_harness::certify::{certify, diff, Class};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::util::{airlock, contract_dir, copy_shipped};

#[test]
fn review_status_v1_to_v2_is_breaking_with_witnesses_and_replayed_fixtures() {
    let dir = contract_dir("review_status");
    let certificate = certify(&dir, 1, 2).unwrap();
    assert_eq!(certificate.verdict, Class::Breaking);
    let changes: Vec<(Class, &str, &str)> = certificate
        .changes
        .iter()
        .map(|c| (c.class, c.kind, c.pointer.as_str()))
        .collect();
    assert_eq!(
        changes,
        [
            (Class::AgentVisible, "enum_widened", "/data/decision"),
            (Class::Breaking, "new_required_member", "/data/reviewed_by"),
        ]
    );
    let (v1, v2) = (
        Contract::load_version(&dir, 1).unwrap(),
        Contract::load_version(&dir, 2).unwrap(),
    );
    for change in &certificate.changes {
        let w = change.witness.as_ref().expect("every change has a witness");
        let (old, new) = (
            v1.schema().is_valid(&w.instance),
            v2.schema().is_valid(&w.instance),
        );
        assert_ne!(old, new, "{}: the versions must disagree", change.kind);
        assert_eq!(w.accepted_by, if old { "old_only" } else { "new_only" });
        assert!(
            w.isolated,
            "{}: the edit at the location flips a verdict",
            change.kind
        );
        let expected = if change.class == Class::Breaking {
            "old_only"
        } else {
            "new_only"
        };
        assert_eq!(w.accepted_by, expected, "the direction follows the class");
    }
    assert_eq!(
        certificate.changes[0].witness.as_ref().unwrap().instance["data"]["decision"],
        "pending"
    );
    assert_eq!(certificate.from["sha256"], v1.schema().sha256());
    assert_eq!(certificate.to["sha256"], v2.schema().sha256());
    let verdict = |name: &str| {
        let r = certificate
            .fixtures
            .iter()
            .find(|f| f.fixture.ends_with(name))
            .unwrap();
        (r.old, r.new)
    };
    assert_eq!(
        verdict("historical/1/v1_success_approved.json"),
        (true, false)
    );
    assert_eq!(
        verdict("accepted/success_pending_pretty.json"),
        (false, true)
    );
    assert_eq!(verdict("accepted/failure_not_found.json"), (true, true));
}

fn schema(data: Value, required: &[&str]) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "additionalProperties": false, "required": ["data"],
        "properties": {"data": {"type": "object", "additionalProperties": false,
                                "required": required, "properties": data}}
    })
}

#[test]
fn each_kind_of_change_is_classified() {
    let base = json!({"s": {"type": "string", "maxLength": 10}, "e": {"enum": ["a", "b"]},
                      "c": {"const": 1}, "t": {"type": "integer"}, "gone": {"type": "boolean"}});
    let cases: Vec<(Value, &[&str], Class, &str, &str)> = vec![
        (
            json!({"s": {"type": "string", "maxLength": 5}}),
            &[],
            Class::Breaking,
            "limit_tightened",
            "/data/s",
        ),
        (
            json!({"s": {"type": "string", "maxLength": 20}}),
            &[],
            Class::AgentVisible,
            "limit_loosened",
            "/data/s",
        ),
        (
            json!({"e": {"enum": ["a"]}}),
            &[],
            Class::Breaking,
            "enum_narrowed",
            "/data/e",
        ),
        (
            json!({"e": {"enum": ["a", "b", "z"]}}),
            &[],
            Class::AgentVisible,
            "enum_widened",
            "/data/e",
        ),
        (
            json!({"c": {"const": 2}}),
            &[],
            Class::Breaking,
            "const_changed",
            "/data/c",
        ),
        (
            json!({"t": {"type": "string"}}),
            &[],
            Class::Breaking,
            "type_changed",
            "/data/t",
        ),
        (
            json!({"new": {"type": "boolean"}}),
            &[],
            Class::AgentVisible,
            "new_optional_member",
            "/data/new",
        ),
        (
            json!({"new": {"type": "boolean"}}),
            &["new"],
            Class::Breaking,
            "new_required_member",
            "/data/new",
        ),
    ];
    let agent = ["/data".to_owned()];
    let old = schema(base.clone(), &[]);
    assert!(diff(&old, &old, &agent).is_empty(), "no change, no finding");
    for (edit, required, class, kind, pointer) in cases {
        let mut data = base.clone();
        for (k, v) in edit.as_object().unwrap() {
            data[k] = v.clone();
        }
        let new = schema(data, required);
        let changes = diff(&old, &new, &agent);
        assert!(
            changes
                .iter()
                .any(|c| c.class == class && c.kind == kind && c.pointer == pointer),
            "{kind} at {pointer}: {changes:?}"
        );
    }
    let mut without = base.clone();
    without.as_object_mut().unwrap().remove("gone");
    let changes = diff(&old, &schema(without, &[]), &agent);
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].class, changes[0].kind),
        (Class::Breaking, "removed_member")
    );
}

/// A copy of deploy_status with a version 2 made by `edit` from version 1.
fn deploy_v2(into: &Path, edit: impl FnOnce(String) -> String) -> PathBuf {
    let dir = copy_shipped("deploy_status", into);
    let v1 = std::fs::read_to_string(dir.join("v1.schema.json")).unwrap();
    std::fs::write(dir.join("v2.schema.json"), edit(v1)).unwrap();
    let manifest = std::fs::read_to_string(dir.join("contract.toml"))
        .unwrap()
        .replace("version = 1", "version = 2");
    std::fs::write(dir.join("contract.toml"), manifest).unwrap();
    dir
}

#[test]
fn cli_certify_exit_codes_and_certificate_files() {
    let out = airlock(&["certify", "--contract", "schemas/review_status"], b"");
    assert_eq!(out.status.code(), Some(1), "breaking");
    assert!(String::from_utf8_lossy(&out.stdout).contains("new_required_member"));

    let tmp = tempfile::tempdir().unwrap();
    let same = deploy_v2(tmp.path(), |v1| v1);
    let out = airlock(&["certify", "--contract", same.to_str().unwrap()], b"");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("compatible"), "{stdout}");

    let tmp = tempfile::tempdir().unwrap();
    let widened = deploy_v2(tmp.path(), |v1| {
        v1.replacen("\"failed\"", "\"failed\", \"paused\"", 1)
    });
    let args = ["certify", "--contract", widened.to_str().unwrap()];
    assert_eq!(
        airlock(&args, b"").status.code(),
        Some(0),
        "agent-visible passes"
    );
    let out_dir = tmp.path().join("certs");
    let out = airlock(
        &[
            &args[..],
            &[
                "--strict",
                "--format",
                "json",
                "--out",
                out_dir.to_str().unwrap(),
            ],
        ]
        .concat(),
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "agent-visible fails with --strict"
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["verdict"], "agent_visible");
    let written: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("deploy_status-v1-v2.json")).unwrap())
            .unwrap();
    assert_eq!(written, printed);
    let markdown = std::fs::read_to_string(out_dir.join("deploy_status-v1-v2.md")).unwrap();
    assert!(
        markdown.contains("**Verdict: agent_visible**"),
        "{markdown}"
    );

    let out = airlock(&["certify", "--contract", "schemas/deploy_status"], b"");
    assert_eq!(out.status.code(), Some(2), "no earlier version");
    let out = airlock(
        &[
            "certify",
            "--contract",
            "schemas/review_status",
            "--from",
            "2",
            "--to",
            "2",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn array_items_open_objects_and_agent_fields_are_taken_into_account() {
    let agent = ["/data/tags".to_owned()];
    let tags = |values: Value| {
        schema(
            json!({"tags": {"type": "array", "maxItems": 4, "items": {"enum": values}},
                      "note": {"type": "string", "maxLength": 9}}),
            &[],
        )
    };
    let changes = diff(&tags(json!(["a", "b"])), &tags(json!(["a"])), &agent);
    assert!(
        changes
            .iter()
            .any(|c| c.kind == "enum_narrowed" && c.pointer == "/data/tags/0"),
        "{changes:?}"
    );
    // Widening a member the agent never sees is compatible.
    let wider = schema(
        json!({"tags": {"type": "array", "maxItems": 4, "items": {"enum": ["a", "b"]}},
                              "note": {"type": "string", "maxLength": 99}}),
        &[],
    );
    let changes = diff(&tags(json!(["a", "b"])), &wider, &agent);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        (changes[0].class, changes[0].kind),
        (Class::Compatible, "limit_loosened")
    );
    // A member described for the first time in an open object constrains it.
    let open = json!({"type": "object", "properties": {"data": {"type": "object"}}});
    let described = json!({"type": "object", "properties": {"data": {"type": "object",
                           "properties": {"x": {"type": "integer"}}}}});
    let changes = diff(&open, &described, &agent);
    assert_eq!(changes.len(), 1);
    assert_eq!(
        (changes[0].class, changes[0].kind),
        (Class::Breaking, "member_constrained")
    );
}
