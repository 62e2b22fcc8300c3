//! `airlock certify` on real-upstream contracts: a vendor contract's vendor schema change
//! (`--vendor-from`/`--vendor-to`) judged by both whole guards, and a line-grammar
//! contract's schema change with witnesses written back as the command's text.

use airlock_guard::{Contract, Guard, Request};
use airlock_harness::certify::{certify, certify_vendor, Certificate, Class, Evidence};
use airlock_harness::corpus::Corpus;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::util::{airlock, copy_shipped};

const TOOL: &str = "ci_pipeline_status";
const V1: &str = "vendor.v1.schema.json";

/// The shipped vendor contract copied under `tmp`, with the shipped vendor schema edited
/// by `edit_old` into `vendor.old.schema.json` and by `edit_new` into
/// `vendor.new.schema.json`.
fn vendor_pair(
    tmp: &Path,
    edit_old: impl FnOnce(&mut Value),
    edit_new: impl FnOnce(&mut Value),
) -> PathBuf {
    let dir = copy_shipped(TOOL, tmp);
    let shipped: Value = serde_json::from_slice(&std::fs::read(dir.join(V1)).unwrap()).unwrap();
    let (mut old, mut new) = (shipped.clone(), shipped);
    edit_old(&mut old);
    edit_new(&mut new);
    std::fs::write(dir.join("vendor.old.schema.json"), old.to_string()).unwrap();
    std::fs::write(dir.join("vendor.new.schema.json"), new.to_string()).unwrap();
    dir
}

/// The pipeline branch's member `name` of a vendor schema.
fn member<'v>(schema: &'v mut Value, name: &str) -> &'v mut Value {
    &mut schema["oneOf"][0]["properties"][name]
}

fn certify_pair(dir: &Path) -> Certificate {
    let certificate = certify_vendor(
        dir,
        "vendor.old.schema.json",
        Some("vendor.new.schema.json"),
        None,
    )
    .unwrap();
    assert_guard_witnesses(dir, &certificate);
    certificate
}

/// Every witness is a vendor document the two whole guards (old and new vendor schema,
/// same contract) judge differently, in the direction it claims, under the corpus's
/// request.
fn assert_guard_witnesses(dir: &Path, certificate: &Certificate) {
    let old = Guard::new(Contract::load_with_vendor_schema(dir, "vendor.old.schema.json").unwrap());
    let new = Guard::new(Contract::load_with_vendor_schema(dir, "vendor.new.schema.json").unwrap());
    let corpus = Corpus::load(&dir.join("../../corpora").join(TOOL)).unwrap();
    for change in &certificate.changes {
        let Some(w) = &change.witness else {
            assert_ne!(change.evidence, Evidence::Witness, "{change:?}");
            continue;
        };
        assert_eq!(change.evidence, Evidence::Witness, "{change:?}");
        let bytes = serde_json::to_vec(&w.instance).unwrap();
        let verdicts = (
            old.admit(&corpus.request, &bytes).is_admitted(),
            new.admit(&corpus.request, &bytes).is_admitted(),
        );
        let expected = (w.accepted_by == "old_only", w.accepted_by == "new_only");
        assert_eq!(verdicts, expected, "{}: {}", change.kind, w.instance);
    }
}

fn change<'c>(
    c: &'c Certificate,
    kind: &str,
    pointer: &str,
) -> &'c airlock_harness::certify::Change {
    c.changes
        .iter()
        .find(|x| x.kind == kind && x.pointer == pointer)
        .unwrap_or_else(|| panic!("no {kind} at {pointer} in {:#?}", c.changes))
}

#[test]
fn certify_vendor_field_renamed_upstream_is_breaking() {
    let tmp = tempfile::tempdir().unwrap();
    // Open object: the member is no longer declared (the vendor no longer promises it).
    let dir = vendor_pair(
        tmp.path(),
        |_| {},
        |new| {
            let sha = member(new, "sha").take();
            let properties = new["oneOf"][0]["properties"].as_object_mut().unwrap();
            properties.shift_remove("sha");
            properties.insert("commit_sha".into(), sha);
            new["oneOf"][0]["required"] = json!(["id", "project_id", "status", "commit_sha"]);
        },
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let gone = change(&c, "mapped_member_gone", "/sha");
    assert_eq!(gone.class, Class::Breaking);
    assert!(gone.detail.contains("data.sha"), "{}", gone.detail);
    // Every accepted success fixture is rejected now: the witness is one of them.
    assert_eq!(gone.witness.as_ref().unwrap().accepted_by, "old_only");
    assert!(c.fixtures.iter().any(|f| f.old && !f.new));

    // A vendor schema that cannot hold the member any more: the same, proved. (Both
    // branches of its `oneOf` must rule it out: the error branch, open, could hold it.)
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |_| {},
        |new| {
            new["oneOf"][0]["properties"]["sha"] = json!(false);
            new["oneOf"][1]["additionalProperties"] = json!(false);
        },
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Breaking);
    let gone = change(&c, "mapped_member_gone", "/sha");
    assert!(gone.detail.contains("cannot hold it"), "{}", gone.detail);
    assert!(matches!(gone.evidence, Evidence::Witness | Evidence::Proof));
}

/// A vendor schema whose status lists only some of GitLab's values.
fn closed_status(schema: &mut Value, values: &[&str]) {
    *member(schema, "status") = json!({ "enum": values });
}

#[test]
fn certify_vendor_status_widened_outside_the_table_is_compatible() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |old| closed_status(old, &["success", "failed", "running"]),
        |new| closed_status(new, &["success", "failed", "running", "on_hold_v2"]),
    );
    let c = certify_pair(&dir);
    // The vendor schema admits more, but the mapping's table has no "on_hold_v2": the
    // guard rejects such a response under both (decode: normalise), so nothing the old
    // guard admitted changes and nothing new reaches the agent.
    assert_eq!(c.semantic.newly_admitted.as_str(), "yes");
    assert_eq!(c.verdict, Class::Compatible, "{}", c.json());
    let noted = change(&c, "vendor_value_changed", "/status");
    assert_eq!(noted.class, Class::Compatible);
    assert!(noted.detail.contains("\"on_hold_v2\""), "{}", noted.detail);
    assert!(noted.detail.contains("normalise"), "{}", noted.detail);
    assert!(
        noted
            .detail
            .contains("table for data.state does not list it"),
        "{}",
        noted.detail
    );
    assert!(noted.witness.is_none());
    assert!(c.fixtures.iter().all(|f| f.old == f.new));
}

#[test]
fn certify_vendor_status_widened_inside_the_table_is_agent_visible() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |old| closed_status(old, &["success", "failed", "running"]),
        |new| closed_status(new, &["success", "failed", "running", "skipped"]),
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::AgentVisible, "{}", c.json());
    let visible = change(&c, "mapped_value_newly_admitted", "/status");
    assert_eq!(visible.class, Class::AgentVisible);
    let w = visible.witness.as_ref().unwrap();
    assert_eq!(w.accepted_by, "new_only");
    assert_eq!(w.instance["status"], "skipped");
    assert!(w.isolated);

    // Narrowed the other way: responses admitted before are rejected now.
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |old| closed_status(old, &["success", "failed", "running", "skipped"]),
        |new| closed_status(new, &["success", "failed", "running"]),
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Breaking);
    let narrowed = change(&c, "mapped_value_newly_rejected", "/status");
    assert_eq!(
        narrowed.witness.as_ref().unwrap().instance["status"],
        "skipped"
    );
}

#[test]
fn certify_vendor_unmapped_member_changed_is_compatible() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |old| *member(old, "web_url") = json!({"type": "string"}),
        |new| *member(new, "web_url") = json!({"type": ["string", "null"]}),
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Compatible, "{}", c.json());
    assert!(c.changes.iter().all(|x| x.class == Class::Compatible));
    assert!(c
        .changes
        .iter()
        .all(|x| x.pointer == "/web_url" || x.pointer.is_empty()));

    // The same file on both sides: proved.
    let c = certify_vendor(
        &dir,
        "vendor.old.schema.json",
        Some("vendor.old.schema.json"),
        None,
    )
    .unwrap();
    assert_eq!(
        (c.verdict, c.evidence),
        (Class::Compatible, Evidence::Proof)
    );
    assert!(c.changes.is_empty());
}

#[test]
fn certify_vendor_error_shape_newly_rejected_and_admitted() {
    let short = |s: &mut Value| s["oneOf"][1]["properties"]["message"]["maxLength"] = json!(8);
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(tmp.path(), |_| {}, short);
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let rejected = change(&c, "failure_shape_newly_rejected", "/message");
    assert_eq!(rejected.witness.as_ref().unwrap().accepted_by, "old_only");

    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(tmp.path(), short, |_| {});
    let c = certify_pair(&dir);
    // The agent now gets NOT_FOUND / UPSTREAM_UNAVAILABLE where it got INVALID_RESPONSE.
    assert_eq!(c.verdict, Class::AgentVisible, "{}", c.json());
    change(&c, "failure_shape_newly_admitted", "/message");
}

#[test]
fn certify_vendor_defaults_to_the_manifest_file_and_refuses_other_kinds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |old| closed_status(old, &["success", "failed", "running"]),
        |_| {},
    );
    let c = certify_vendor(&dir, "vendor.old.schema.json", None, None).unwrap();
    assert_eq!(c.to["vendor_schema"], V1);
    assert_eq!(c.from["vendor_schema"], "vendor.old.schema.json");
    assert!(c
        .markdown()
        .contains("vendor schema `vendor.v1.schema.json`"));

    let lines = copy_shipped("git_branch_head", tmp.path());
    let err = certify_vendor(&lines, V1, None, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("kind = \"vendor\""), "{err}");
    let err = certify_vendor(&dir, "../v1.schema.json", None, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a .json file name"), "{err}");
}

#[test]
fn cli_certify_vendor_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |old| closed_status(old, &["success", "failed", "running"]),
        |new| closed_status(new, &["success", "failed", "running", "skipped"]),
    );
    let d = dir.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["certify", "--contract", d];
        args.extend_from_slice(extra);
        airlock(&args, b"")
    };
    let pair = [
        "--vendor-from",
        "vendor.old.schema.json",
        "--vendor-to",
        "vendor.new.schema.json",
    ];
    // Agent-visible: 0, and 1 with --strict.
    let out = run(&pair);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("agent_visible"), "{stdout}");
    let mut strict = pair.to_vec();
    strict.push("--strict");
    assert_eq!(run(&strict).status.code(), Some(1));
    // Reversed: breaking, 1; the JSON certificate names the files.
    let out = run(&[
        "--vendor-from",
        "vendor.new.schema.json",
        "--vendor-to",
        "vendor.old.schema.json",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["verdict"], "breaking");
    assert_eq!(json["from"]["vendor_schema"], "vendor.new.schema.json");
    // Same file: compatible, 0; --out names the certificate after both files.
    let certs = tmp.path().join("certs");
    let out = run(&["--vendor-from", V1, "--out", certs.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let written =
        std::fs::read_to_string(certs.join("ci_pipeline_status-vendor.v1-vendor.v1.json")).unwrap();
    assert!(written.contains("\"verdict\": \"compatible\""), "{written}");
    assert!(certs
        .join("ci_pipeline_status-vendor.v1-vendor.v1.md")
        .is_file());
    // A missing file, a lines contract, flags that do not go together: 2.
    let out = run(&["--vendor-from", "vendor.v9.schema.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("vendor.v9.schema.json"));
    let lines = copy_shipped("git_branch_head", tmp.path());
    let out = airlock(
        &[
            "certify",
            "--contract",
            lines.to_str().unwrap(),
            "--vendor-from",
            V1,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(run(&["--vendor-to", V1]).status.code(), Some(2));
    assert_eq!(
        run(&["--vendor-from", V1, "--from", "1"]).status.code(),
        Some(2)
    );
}

/// `git_branch_head` at version 2 with its data schema edited.
fn lines_v2(tmp: &Path, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let dir = copy_shipped("git_branch_head", tmp);
    let mut schema: Value =
        serde_json::from_slice(&std::fs::read(dir.join("v1.schema.json")).unwrap()).unwrap();
    edit(&mut schema["$defs"]["data"]["properties"]);
    std::fs::write(dir.join("v2.schema.json"), schema.to_string()).unwrap();
    let manifest = std::fs::read_to_string(dir.join("contract.toml")).unwrap();
    std::fs::write(
        dir.join("contract.toml"),
        manifest.replace("version = 1", "version = 2"),
    )
    .unwrap();
    dir
}

/// Every witness of a lines certificate is the command's text, which both whole guards
/// judge differently (under the request asking for the branch it names).
fn assert_text_witnesses(dir: &Path, certificate: &Certificate) -> usize {
    let old = Guard::new(Contract::load_version(dir, 1).unwrap());
    let new = Guard::new(Contract::load_version(dir, 2).unwrap());
    let mut seen = 0;
    for change in &certificate.changes {
        let Some(w) = &change.witness else { continue };
        let text = w.instance.as_str().expect("a text witness");
        let branch = text.lines().next().unwrap().strip_prefix("ref=").unwrap();
        let request = Request::new("req.GitHead01", "2026-12-03T09:00:00Z".parse().unwrap())
            .param("ref", json!(branch));
        let verdicts = (
            old.admit(&request, text.as_bytes()).is_admitted(),
            new.admit(&request, text.as_bytes()).is_admitted(),
        );
        let expected = (w.accepted_by == "old_only", w.accepted_by == "new_only");
        assert_eq!(verdicts, expected, "{}: {text:?}", change.kind);
        seen += 1;
    }
    seen
}

#[test]
fn certify_lines_contract_witnesses_are_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = lines_v2(tmp.path(), |data| {
        data["ref"]["pattern"] = json!("^refs/heads/[a-z]{1,10}$");
    });
    let c = certify(&dir, 1, 2).unwrap();
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    assert!(assert_text_witnesses(&dir, &c) > 0, "{}", c.json());
    // The captured feature branch's name no longer passes.
    assert!(c.fixtures.iter().any(|f| f.old && !f.new));

    let tmp = tempfile::tempdir().unwrap();
    let dir = lines_v2(tmp.path(), |data| {
        data["commit"]["pattern"] = json!("^[0-9a-f]{40}([0-9a-f]{24})?$");
    });
    let c = certify(&dir, 1, 2).unwrap();
    // The patterns compared as languages: the change at the location only widens (with a
    // witness); the algebra leaves the whole schema's "newly rejected" undecided, and an
    // undecided direction is never taken for "nothing rejected".
    assert_eq!(c.verdict, Class::Unknown, "{}", c.json());
    let widened = c
        .changes
        .iter()
        .find(|x| x.kind == "pattern_changed")
        .unwrap();
    assert_eq!(widened.class, Class::AgentVisible, "{}", c.json());
    assert!(assert_text_witnesses(&dir, &c) > 0, "{}", c.json());

    // A change only a failure envelope shows: the guard builds a lines contract's
    // failures itself and never judges them by the schema, so no text changes verdict.
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("git_branch_head", tmp.path());
    let mut schema: Value =
        serde_json::from_slice(&std::fs::read(dir.join("v1.schema.json")).unwrap()).unwrap();
    let codes = schema["$defs"]["error"]["properties"]["code"]["enum"]
        .as_array_mut()
        .unwrap();
    codes.retain(|c| c != "NOT_FOUND");
    std::fs::write(dir.join("v2.schema.json"), schema.to_string()).unwrap();
    let manifest = std::fs::read_to_string(dir.join("contract.toml")).unwrap();
    std::fs::write(
        dir.join("contract.toml"),
        manifest.replace("version = 1", "version = 2"),
    )
    .unwrap();
    let c = certify(&dir, 1, 2).unwrap();
    assert_text_witnesses(&dir, &c);
    let narrowed = c
        .changes
        .iter()
        .find(|x| x.pointer == "/error/code")
        .unwrap_or_else(|| panic!("{}", c.json()));
    assert!(narrowed.witness.is_none());
    assert_eq!(
        (narrowed.class, narrowed.evidence),
        (Class::Compatible, Evidence::Structural)
    );
    assert_eq!(c.verdict, Class::Compatible, "{}", c.json());
}

#[test]
fn certify_lines_contract_unchanged_schema_is_proved() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = lines_v2(tmp.path(), |_| {});
    let c = certify(&dir, 1, 2).unwrap();
    assert_eq!(
        (c.verdict, c.evidence),
        (Class::Compatible, Evidence::Proof)
    );
    assert!(c.fixtures.iter().all(|f| f.old == f.new));
}

#[test]
fn certify_vendor_contract_version_witnesses_are_vendor_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped(TOOL, tmp.path());
    let mut schema: Value =
        serde_json::from_slice(&std::fs::read(dir.join("v1.schema.json")).unwrap()).unwrap();
    let states = schema["$defs"]["data"]["properties"]["state"]["enum"]
        .as_array_mut()
        .unwrap();
    states.retain(|s| s != "skipped");
    std::fs::write(dir.join("v2.schema.json"), schema.to_string()).unwrap();
    let manifest = std::fs::read_to_string(dir.join("contract.toml")).unwrap();
    std::fs::write(
        dir.join("contract.toml"),
        manifest.replace("version = 1", "version = 2"),
    )
    .unwrap();
    let c = certify(&dir, 1, 2).unwrap();
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let narrowed = change(&c, "enum_narrowed", "/data/state");
    let w = narrowed
        .witness
        .as_ref()
        .unwrap_or_else(|| panic!("{}", c.json()));
    // The vendor's own spelling, through the table: GitLab's "skipped".
    assert_eq!(w.instance["status"], "skipped");
    let (old, new) = (
        Guard::new(Contract::load_version(&dir, 1).unwrap()),
        Guard::new(Contract::load_version(&dir, 2).unwrap()),
    );
    let request = Request::new(
        "req.CiPipe0046",
        w.instance["updated_at"].as_str().unwrap().parse().unwrap(),
    )
    .param("project_id", w.instance["project_id"].clone())
    .param("pipeline_id", w.instance["id"].clone());
    let bytes = serde_json::to_vec(&w.instance).unwrap();
    assert_eq!(
        (
            old.admit(&request, &bytes).is_admitted(),
            new.admit(&request, &bytes).is_admitted()
        ),
        (true, false)
    );
}

#[test]
fn certify_vendor_time_format_dropped_is_judged_by_the_normaliser_s_own_rule() {
    // Found in review: the claim "still rejects at normalise" rested on one value (""). The
    // probes now try the fixture's own time in every spelling at the edge of
    // `format: date-time`; rfc3339_utc (strict RFC 3339) refuses them all, so the change
    // is compatible, and the detail says what was probed.
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |_| {},
        |new| {
            member(new, "updated_at")
                .as_object_mut()
                .unwrap()
                .shift_remove("format");
        },
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Compatible, "{}", c.json());
    let noted = change(&c, "vendor_value_changed", "/updated_at");
    assert!(noted.detail.contains("leap second"), "{}", noted.detail);
}

#[test]
fn certify_vendor_type_change_under_a_mapped_member_is_breaking_with_a_witness() {
    // Found in review: integer → string for `id` was a compatible "vendor_value_changed"
    // (only the fixture replay said breaking): every base was already judged differently,
    // and no edit made both guards admit it.
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |_| {},
        |new| *member(new, "id") = json!({"type": "string", "maxLength": 20}),
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let rejected = change(&c, "mapped_value_newly_rejected", "/id");
    assert_eq!(rejected.class, Class::Breaking);
    assert_eq!(rejected.witness.as_ref().unwrap().accepted_by, "old_only");
}

#[test]
fn certify_vendor_type_change_under_a_failure_member_is_breaking_and_agent_visible() {
    // Found in review: string → object for the error `message` was compatible.
    let tmp = tempfile::tempdir().unwrap();
    let dir = vendor_pair(
        tmp.path(),
        |_| {},
        |new| new["oneOf"][1]["properties"]["message"] = json!({"type": "object"}),
    );
    let c = certify_pair(&dir);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let rejected = change(&c, "failure_shape_newly_rejected", "/message");
    assert_eq!(rejected.witness.as_ref().unwrap().accepted_by, "old_only");
    let admitted = change(&c, "failure_shape_newly_admitted", "/message");
    assert_eq!(admitted.class, Class::AgentVisible);
    assert_eq!(admitted.witness.as_ref().unwrap().accepted_by, "new_only");
}
