//! `airlock lint`: every rule on a schema built to break it, no false alarm on the shipped
//! contracts, allowances, positions, the command line.

use airlock_harness::lint::{lint_contract, lint_schema_file, positions, Level, RULES};
use std::collections::BTreeSet;
use std::path::Path;

use crate::util::{airlock, contract_dir, copy_shipped, root, TOOLS};

fn bad_schema() -> std::path::PathBuf {
    root().join("harness/tests/lint/bad.schema.json")
}

#[test]
fn all_optional_flags_an_object_admitting_nothing_but_not_branches_or_required_members() {
    let schema = |data: &str| {
        format!(
            r##"{{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "additionalProperties": false, "required": ["data"],
            "properties": {{"data": {data}}}}}"##
        )
    };
    let optional =
        r#"{"type": "object", "additionalProperties": false, "properties": {"a": {"const": 1}}}"#;
    assert_eq!(
        lint_text(&schema(optional)),
        [("all-optional", "/properties/data".to_owned())]
    );
    let min = optional.replacen('{', r#"{"minProperties": 1, "#, 1);
    assert_eq!(lint_text(&schema(&min)), []);
    let required = optional.replacen('{', r#"{"required": ["a"], "#, 1);
    assert_eq!(lint_text(&schema(&required)), []);
    // Inside a composition branch a sibling may require the members.
    let branch = format!(r#"{{"anyOf": [{optional}, {{"type": "null"}}]}}"#);
    assert_eq!(lint_text(&schema(&branch)), []);
    // Dependencies apply only when their member is present: `{}` still passes.
    let dependent = optional.replacen('{', r#"{"dependentRequired": {"a": ["b"]}, "#, 1);
    assert_eq!(
        lint_text(&schema(&dependent)),
        [("all-optional", "/properties/data".to_owned())]
    );
}

#[test]
fn an_unreadable_schema_is_an_error_listed_among_the_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("broken.schema.json");
    std::fs::write(&path, b"{\"type\": ").unwrap();
    let found = lint_schema_file(&path, &[], None);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].rule, found[0].severity),
        ("schema-unreadable", Level::Error)
    );
    assert!(RULES
        .iter()
        .any(|(id, severity, _)| *id == "schema-unreadable" && *severity == Level::Error));
}

/// `lint` reads a contract's files as the loader does: a FIFO or a link in a schema's
/// place is refused by name, not waited on or followed (found in review: lint hung on a
/// FIFO the loader had refused, and linted the target of a link).
#[cfg(unix)]
#[test]
fn lint_refuses_a_fifo_or_a_link_in_a_schemas_place_as_the_loader_does() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("review_status", tmp.path());
    let schema = dir.join("v2.schema.json");
    let outside = tmp.path().join("outside.schema.json");
    std::fs::rename(&schema, &outside).unwrap();
    let status = Command::new("mkfifo").arg(&schema).status().unwrap();
    assert!(status.success());
    for refused in ["is not a regular file", "is a symbolic link"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
            .args(["lint", "--contract", dir.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                child.kill().unwrap();
                panic!("lint still reading {} after 60 s", schema.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{text}");
        assert!(text.contains(refused), "{refused}: {text}");
        // Only the refusal: nothing linted in the file, nothing read through the link.
        assert!(
            !text.contains("schema-unreadable: not strict JSON"),
            "{text}"
        );
        std::fs::remove_file(&schema).unwrap();
        std::os::unix::fs::symlink(&outside, &schema).unwrap();
    }
}

#[test]
fn a_load_error_says_its_reason_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("deploy_status", tmp.path());
    let path = dir.join("v1.schema.json");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-04/schema#",
    );
    std::fs::write(&path, text).unwrap();
    for args in [
        vec!["lint", "--contract", dir.to_str().unwrap()],
        vec!["certify", path.to_str().unwrap(), path.to_str().unwrap()],
        vec!["admit", "--contract", dir.to_str().unwrap()],
    ] {
        let out = crate::util::airlock(&args, b"{}");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("draft-04"), "{args:?}: {text}");
        for line in text.lines() {
            assert!(
                line.matches("contracts use").count() <= 1,
                "{args:?}: {line}"
            );
            assert!(line.matches("draft-04").count() <= 1, "{args:?}: {line}");
        }
    }
}

#[test]
fn every_rule_fires_where_the_schema_breaks_it() {
    let findings = lint_schema_file(&bad_schema(), &[], None);
    let got: BTreeSet<(&str, &str, usize, usize)> = findings
        .iter()
        .map(|f| (f.rule, f.pointer.as_str(), f.line, f.column))
        .collect();
    let expected: BTreeSet<(&str, &str, usize, usize)> = [
        ("schema-dialect", "/$schema", 2, 14),
        ("envelope-overlap", "/oneOf", 3, 12),
        ("open-object", "/oneOf/0", 4, 5),
        ("free-form-map", "/$defs/meta/additionalProperties", 8, 56),
        (
            "unbounded-string",
            "/$defs/meta/additionalProperties",
            8,
            56,
        ),
        ("unbounded-array", "/$defs/tags", 9, 13),
        ("unbounded-string", "/$defs/tags/items", 9, 40),
        ("unanchored-pattern", "/$defs/tags/items/pattern", 9, 70),
        ("unbounded-string", "/$defs/slow", 10, 13),
        ("backtracking-pattern", "/$defs/slow/pattern", 10, 43),
        (
            "composition-needs-unevaluated",
            "/$defs/both/additionalProperties",
            11,
            86,
        ),
        ("remote-ref", "/$defs/far/$ref", 12, 21),
        ("free-form-map", "/$defs/pp/patternProperties", 13, 51),
        (
            "unanchored-pattern",
            "/$defs/pp/patternProperties/^x",
            13,
            58,
        ),
        ("all-optional", "/$defs/opt", 14, 12),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, expected);
    let fired: BTreeSet<&str> = findings.iter().map(|f| f.rule).collect();
    for (rule, _, _) in RULES {
        assert!(
            // The others have their own tests below.
            fired.contains(rule)
                || [
                    "free-text-agent-field",
                    "unconstrained",
                    "stale-allowance",
                    "ref-cycle",
                    "older-dialect",
                    "schema-unreadable",
                    "vendor-pointer-undescribed",
                    "table-value-refused",
                    "line-bound-default",
                    "line-bound-unreachable",
                ]
                .contains(rule),
            "{rule} never fires on the bad schema"
        );
    }
}

#[test]
fn shipped_contracts_have_no_errors_and_only_the_known_warnings() {
    let mut warnings = Vec::new();
    for tool in TOOLS {
        for finding in lint_contract(&contract_dir(tool)) {
            assert_ne!(finding.severity, Level::Error, "{finding}");
            warnings.push((tool, finding.rule, finding.pointer));
        }
    }
    assert_eq!(
        warnings,
        [
            (
                "review_status",
                "free-text-agent-field",
                "/$defs/data/properties/reviewed_by".to_owned()
            ),
            // identity_lookup's `subject` is free text in its schema, but `equals_param`
            // pins it to the request's `subject`.
            // The MCP tool's outputSchema as the server publishes it (imported as is):
            // its strings are unbounded and `reviewed_by` is free text (`change_id` is
            // too, but `equals_param` pins it to the request's own parameter).
            (
                "change_review",
                "unbounded-string",
                "/properties/change_id".to_owned()
            ),
            (
                "change_review",
                "free-text-agent-field",
                "/properties/reviewed_by".to_owned()
            ),
            (
                "change_review",
                "unbounded-string",
                "/properties/reviewed_by".to_owned()
            ),
            (
                "change_review",
                "unbounded-string",
                "/properties/observed_at".to_owned()
            ),
        ]
    );
}

/// An agent field an `equals_param` or `in_param` check pins can only be the caller's own
/// parameter (or absent): not free text the upstream writes. A `fresh` check pins nothing.
#[test]
fn an_agent_field_bound_to_a_request_parameter_is_not_free_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("change_review", tmp.path());
    let manifest = dir.join("contract.toml");
    let shipped = std::fs::read_to_string(&manifest).unwrap();
    let bound = "kind = \"equals_param\"\nfield = \"/change_id\"\nparam = \"change_id\"";
    assert!(shipped.contains(bound));
    let free_text = |text: &str| {
        std::fs::write(&manifest, text).unwrap();
        let findings = lint_contract(&dir);
        assert!(
            findings.iter().all(|f| f.rule != "contract-load"),
            "{findings:?}"
        );
        findings
            .into_iter()
            .filter(|f| f.rule == "free-text-agent-field")
            .map(|f| f.pointer)
            .collect::<Vec<_>>()
    };
    assert_eq!(free_text(&shipped), ["/properties/reviewed_by"]);
    let in_param = shipped.replace(
        bound,
        "kind = \"in_param\"\nfield = \"/change_id\"\nparam = \"change_ids\"",
    );
    assert_eq!(free_text(&in_param), ["/properties/reviewed_by"]);
    let on_another_field = shipped.replace(
        bound,
        "kind = \"equals_param\"\nfield = \"/reviewed_by\"\nparam = \"reviewer\"",
    );
    assert_eq!(free_text(&on_another_field), ["/properties/change_id"]);
    let unbound = shipped.replace(&format!("[[checks]]\n{bound}\n"), "");
    assert_ne!(unbound, shipped);
    assert_eq!(
        free_text(&unbound),
        ["/properties/change_id", "/properties/reviewed_by"]
    );
}

/// A copy of the shipped contract `tool` whose contract.toml ends with `[lint] allow`
/// holding `allowance`.
fn allowing(tool: &str, into: &Path, allowance: &str) -> std::path::PathBuf {
    let dir = copy_shipped(tool, into);
    let manifest = dir.join("contract.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(&format!("\n[lint]\nallow = [{allowance}]\n"));
    std::fs::write(&manifest, text).unwrap();
    dir
}

#[test]
fn an_allowance_in_contract_toml_keeps_the_finding_visible_but_passing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = allowing(
        "review_status",
        tmp.path(),
        r#"{ rule = "free-text-agent-field", at = "/$defs/data/properties/reviewed_by", reason = "reviewer names are shown as names" }"#,
    );
    let findings = lint_contract(&dir);
    assert_eq!(findings.len(), 1);
    assert_eq!(
        findings[0].allowed.as_deref(),
        Some("reviewer names are shown as names")
    );
    let out = airlock(
        &["lint", "--strict", "--contract", dir.to_str().unwrap()],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("(allowed: reviewer names are shown as names)"),
        "{stdout}"
    );
}

#[test]
fn a_contract_that_does_not_load_is_an_error_and_its_schema_is_still_linted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("deploy_status", tmp.path());
    let schema = dir.join("v1.schema.json");
    let text = std::fs::read_to_string(&schema).unwrap().replacen(
        "\"$defs\": {",
        "\"$defs\": {\"far\": {\"$ref\": \"https://example.com/x.json\"},",
        1,
    );
    std::fs::write(&schema, text).unwrap();
    let rules: Vec<&str> = lint_contract(&dir).iter().map(|f| f.rule).collect();
    assert!(rules.contains(&"contract-load"), "{rules:?}");
    assert!(rules.contains(&"remote-ref"), "{rules:?}");
}

#[test]
fn positions_name_the_value_of_every_pointer() {
    let text = "{\n  \"a/b\": [1, {\"~k\": \"v\"}],\n  \"é\": {\"x\": null}, \"e\": []\n}";
    let p = positions(text.as_bytes());
    assert_eq!(p[""], (1, 1));
    assert_eq!(p["/a~1b"], (2, 10));
    assert_eq!(p["/a~1b/0"], (2, 11));
    assert_eq!(p["/a~1b/1"], (2, 14));
    assert_eq!(p["/a~1b/1/~0k"], (2, 21));
    assert_eq!(p["/é"], (3, 8));
    assert_eq!(p["/é/x"], (3, 14));
    assert_eq!(p["/e"], (3, 26));
    assert!(!p.contains_key("/e/0"));
}

#[test]
fn cli_lint_exit_codes_and_formats() {
    let out = airlock(&["lint"], b"");
    assert_eq!(out.status.code(), Some(0), "warnings only");
    let out = airlock(&["lint", "--strict"], b"");
    assert_eq!(out.status.code(), Some(1), "warnings fail with --strict");
    let bad = bad_schema();
    let out = airlock(
        &[
            "lint",
            "--schema",
            bad.to_str().unwrap(),
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["totals"]["errors"], 5);
    assert_eq!(report["findings"][0]["rule"], "schema-dialect");
    let out = airlock(&["lint", "--schema", "no/such.schema.json"], b"");
    assert_eq!(out.status.code(), Some(2));
    let out = airlock(&["lint", "--list-rules"], b"");
    let listed = String::from_utf8_lossy(&out.stdout);
    for (rule, _, _) in RULES {
        assert!(listed.contains(rule));
    }
}

fn lint_text(text: &str) -> Vec<(&'static str, String)> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.schema.json");
    std::fs::write(&path, text).unwrap();
    lint_schema_file(&path, &[], None)
        .into_iter()
        .map(|f| (f.rule, f.pointer))
        .collect()
}

/// [`lint_text`] without the findings of `rule` (a test about other rules, on a schema
/// that also breaks it).
fn lint_text_except(text: &str, rule: &str) -> Vec<(&'static str, String)> {
    let mut found = lint_text(text);
    found.retain(|(r, _)| *r != rule);
    found
}

/// Idioms of careful 2020-12 schemas raise nothing.
#[test]
fn a_well_closed_schema_raises_nothing() {
    let schema = r##"{
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "https://airlock.invalid/contracts/t/v1.schema.json",
      "oneOf": [
        {"type": "object", "required": ["outcome", "data"], "additionalProperties": false,
         "properties": {"outcome": {"enum": ["success"]}, "data": {"$ref": "#/$defs/data"}}},
        {"type": "object", "required": ["outcome"], "additionalProperties": false,
         "properties": {"outcome": {"const": "failure"}}}
      ],
      "$defs": {
        "data": {"$ref": "#/$defs/base", "unevaluatedProperties": false,
                 "properties": {"slug": {"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "maxLength": 64},
                                "pair": {"type": "array", "prefixItems": [{"const": 1}, {"const": 2}], "unevaluatedItems": false},
                                "list": {"type": "array", "maxItems": 4, "items": {"const": 1}, "contains": {"properties": {"k": {"const": 1}}}},
                                "common": {"$ref": "https://airlock.invalid/contracts/t/common.json"}}},
        "base": {"type": "object", "properties": {"id": {"type": "integer"}}}
      }
    }"##;
    assert_eq!(lint_text(schema), []);
}

#[test]
fn loopholes_found_in_review_are_flagged() {
    let schema = r##"{
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "anyOf": [
        {"required": ["outcome"], "properties": {"outcome": {"const": "success"}}, "additionalProperties": false},
        {"required": ["outcome"], "properties": {"outcome": {"const": "failure"}}, "additionalProperties": false}
      ],
      "$defs": {
        "alt": {"type": "string", "pattern": "^ok|fail$"},
        "loose": {"type": "object", "additionalProperties": false,
                  "properties": {"any": true, "doc": {"description": "anything"}, "text": {"minLength": 1}}},
        "far": {"$ref": "//evil.example/x.json"}
      }
    }"##;
    let found = lint_text(schema);
    for expected in [
        ("envelope-overlap", "/anyOf"),
        ("unanchored-pattern", "/$defs/alt/pattern"),
        ("unbounded-string", "/$defs/alt"),
        ("unconstrained", "/$defs/loose/properties/any"),
        ("unconstrained", "/$defs/loose/properties/doc"),
        ("unbounded-string", "/$defs/loose/properties/text"),
        ("remote-ref", "/$defs/far/$ref"),
    ] {
        assert!(
            found.contains(&(expected.0, expected.1.to_owned())),
            "{expected:?} not in {found:?}"
        );
    }
}

#[test]
fn a_stale_allowance_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = allowing(
        "deploy_status",
        tmp.path(),
        r#"{ rule = "open-object", at = "/nowhere", reason = "old" }"#,
    );
    let findings = lint_contract(&dir);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(
        (findings[0].rule, findings[0].pointer.as_str()),
        ("stale-allowance", "/nowhere")
    );
}

/// A `$defs` entry is judged where it is used: closed by one referring schema, open
/// through another.
#[test]
fn a_definition_open_at_one_use_is_flagged_even_if_closed_at_another() {
    let schema = r##"{
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "type": "object", "additionalProperties": false,
      "properties": {
        "a": {"allOf": [{"$ref": "#/$defs/base"}], "unevaluatedProperties": false},
        "b": {"$ref": "#/$defs/base"},
        "c": {"$ref": "#/$defs/loop"}
      },
      "$defs": {
        "base": {"type": "object", "properties": {"x": {"const": 1}}},
        "loop": {"type": "object", "additionalProperties": false, "maxProperties": 1,
                 "properties": {"next": {"$ref": "#/$defs/loop"}}}
      }
    }"##;
    let found = lint_text_except(schema, "all-optional");
    assert_eq!(found, [("open-object", "/$defs/base".to_owned())]);
    let closed_only = schema.replace(r##""b": {"$ref": "#/$defs/base"},"##, "");
    assert_eq!(lint_text_except(&closed_only, "all-optional"), []);
}

#[test]
fn an_in_place_reference_cycle_is_a_ref_cycle_error_and_child_recursion_is_silent() {
    let schema = r##"{
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "type": "object", "additionalProperties": false,
      "properties": {"x": {"$ref": "#/$defs/a"}},
      "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}
    }"##;
    let found = lint_text(schema);
    assert!(
        found.contains(&("ref-cycle", "/$defs/a".to_owned())),
        "{found:?}"
    );
    assert_eq!(severity_of("ref-cycle"), Level::Error);
    let recursive = r##"{
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "$ref": "#/$defs/node",
      "$defs": {"node": {"type": "object", "additionalProperties": false,
        "properties": {"next": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/node"}]}}}}
    }"##;
    let found = lint_text(recursive);
    assert!(
        found.iter().all(|(rule, _)| *rule != "ref-cycle"),
        "{found:?}"
    );
}

fn severity_of(rule: &str) -> Level {
    RULES
        .iter()
        .find(|(id, _, _)| *id == rule)
        .map(|(_, s, _)| *s)
        .unwrap()
}

/// A draft-07 output schema as zod (`zod-to-json-schema`) writes it: `definitions`, a
/// `$ref` at the root, objects closed by `additionalProperties: false`, a tuple.
const ZOD_DRAFT_07: &str = r##"{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "$ref": "#/definitions/Result",
  "definitions": {
    "Result": {
      "type": "object",
      "properties": {
        "status": {"type": "string", "enum": ["ok", "degraded"]},
        "checked_at": {"type": "string", "format": "date-time", "maxLength": 40},
        "count": {"type": "integer", "minimum": 0},
        "range": {"type": "array", "minItems": 2, "items": [{"type": "number"}, {"type": "number"}], "additionalItems": false},
        "owner": {"$ref": "#/definitions/Owner"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 16}, "maxItems": 8}
      },
      "required": ["status", "checked_at", "count"],
      "additionalProperties": false
    },
    "Owner": {
      "type": "object",
      "properties": {"id": {"type": "string", "pattern": "^[a-z]{1,8}$"}},
      "required": ["id"],
      "additionalProperties": false,
      "dependencies": {"id": ["id"]}
    }
  }
}"##;

#[test]
fn a_zod_style_draft_07_schema_lints_with_only_the_older_dialect_warning() {
    assert_eq!(
        lint_text(ZOD_DRAFT_07),
        [("older-dialect", "/$schema".to_owned())]
    );
    assert_eq!(severity_of("older-dialect"), Level::Warning);
    let later = ZOD_DRAFT_07
        .replace(
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
        )
        .replace("definitions", "$defs");
    assert_eq!(
        lint_text(&later),
        [("older-dialect", "/$schema".to_owned())]
    );
    // An unknown dialect is still an error.
    let unknown = ZOD_DRAFT_07.replace("draft-07", "draft-04");
    let found = lint_text(&unknown);
    assert_eq!(found, [("schema-dialect", "/$schema".to_owned())]);
    assert_eq!(severity_of("schema-dialect"), Level::Error);
}

#[test]
fn an_open_draft_07_object_is_still_an_open_object() {
    let open = ZOD_DRAFT_07.replacen(
        r#""required": ["id"],
      "additionalProperties": false,"#,
        r#""required": ["id"],"#,
        1,
    );
    let found = lint_text(&open);
    assert!(
        found.contains(&("open-object", "/definitions/Owner".to_owned())),
        "{found:?}"
    );
    // An open tuple and an unbounded list are flagged in draft-07 terms too.
    let open_tuple = ZOD_DRAFT_07.replace(r#", "additionalItems": false"#, "");
    let found = lint_text(&open_tuple);
    assert!(
        found.contains(&(
            "unbounded-array",
            "/definitions/Result/properties/range".to_owned()
        )),
        "{found:?}"
    );
    // Tuple items are linted as items.
    let loose_item = ZOD_DRAFT_07.replace(
        r#"{"type": "number"}, {"type": "number"}"#,
        r#"{"type": "number"}, {"type": "string"}"#,
    );
    assert!(lint_text(&loose_item).contains(&(
        "unbounded-string",
        "/definitions/Result/properties/range/items/1".to_owned()
    )));
}

#[test]
fn a_draft_07_ref_closes_nothing_beside_it() {
    // In draft-07 the `additionalProperties: false` beside a `$ref` is ignored: the
    // definition is what applies, and it is open.
    let schema = r##"{
      "$schema": "http://json-schema.org/draft-07/schema#",
      "type": "object", "additionalProperties": false,
      "properties": {"x": {"$ref": "#/definitions/open", "additionalProperties": false}},
      "definitions": {"open": {"type": "object", "properties": {"a": {"const": 1}}}}
    }"##;
    let found = lint_text_except(schema, "all-optional");
    assert!(
        found.contains(&("open-object", "/definitions/open".to_owned())),
        "{found:?}"
    );
    // In 2019-09 the sibling applies: it closes the object, and rejects the member the
    // definition declares.
    let later = schema
        .replace(
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
        )
        .replace("definitions", "$defs");
    assert_eq!(
        lint_text_except(&later, "all-optional"),
        [
            ("older-dialect", "/$schema".to_owned()),
            (
                "composition-needs-unevaluated",
                "/properties/x/additionalProperties".to_owned()
            )
        ]
    );
}

#[test]
fn a_draft_07_cycle_through_definitions_is_a_ref_cycle() {
    let schema = r##"{
      "$schema": "http://json-schema.org/draft-07/schema#",
      "type": "object", "additionalProperties": false,
      "properties": {"x": {"$ref": "#/definitions/a"}},
      "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"anyOf": [{"$ref": "#/definitions/a"}]}}
    }"##;
    let found = lint_text(schema);
    assert!(
        found.contains(&("ref-cycle", "/definitions/a".to_owned())),
        "{found:?}"
    );
    // A remote reference is flagged in draft-07 even beside the siblings it hides.
    let remote = schema.replace(
        r##""$ref": "#/definitions/b""##,
        r##""$ref": "https://example.com/b.json""##,
    );
    assert!(lint_text(&remote).contains(&("remote-ref", "/definitions/a/$ref".to_owned())));
}

#[test]
fn an_mcp_output_schema_without_schema_keyword_is_2020_12_and_not_an_envelope() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = r#"{"type": "object", "additionalProperties": false,
        "properties": {"state": {"enum": ["a", "b"]}}, "required": ["state"],
        "anyOf": [{"required": ["state"]}, {"required": ["state"]}]}"#;
    let rules = |input: &str| {
        let dir = tmp.path().join(input.len().to_string());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("v1.schema.json"), schema).unwrap();
        let fields = if input.is_empty() { "" } else { "\"/state\"" };
        std::fs::write(
            dir.join("contract.toml"),
            format!(
                "tool = \"t\"\nversion = 1\n{input}\n[limits]\nmax_bytes = 4096\n\
                 max_depth = 8\n[agent]\nfields = [{fields}]\n[retry]\nmax_attempts = 1\n\
                 deadline = \"1s\"\nretryable = []\n"
            ),
        )
        .unwrap();
        lint_contract(&dir)
            .into_iter()
            .map(|f| f.rule)
            .collect::<BTreeSet<_>>()
    };
    let envelope = rules("");
    assert!(envelope.contains("schema-dialect"), "{envelope:?}");
    assert!(envelope.contains("envelope-overlap"), "{envelope:?}");
    let mcp = rules("[input]\nkind = \"mcp\"");
    assert!(!mcp.contains("schema-dialect"), "{mcp:?}");
    assert!(!mcp.contains("envelope-overlap"), "{mcp:?}");
    // An MCP contract that does not load (an unknown [input] key) is still read as MCP:
    // its load error, not a false `$schema` finding.
    let broken = rules("[input]\nkind = \"mcp\"\ntext = \"sometimes\"");
    assert!(broken.contains("contract-load"), "{broken:?}");
    assert!(!broken.contains("schema-dialect"), "{broken:?}");
}
