//! `airlock certify`, the reviewer's pairs (issue 12, round 3): a witness exercises the
//! change it is attached to, a direction nothing decided is never taken for "nothing
//! changed", numeric keywords on integers, `--agent-field` pointers, recursive schemas.

use airlock_harness::certify::{Certificate, Class, Evidence};
use serde_json::{json, Value};

use crate::certify_semantic::{change, files};

/// The change of `kind` at `pointer`.
fn at<'c>(c: &'c Certificate, kind: &str, pointer: &str) -> &'c airlock_harness::certify::Change {
    c.changes
        .iter()
        .find(|x| x.kind == kind && x.pointer == pointer)
        .unwrap_or_else(|| panic!("no {kind} at {pointer:?}: {:#?}", c.changes))
}

fn schema(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// ppr/o3.json → ppr/n3.json: `multipleOf` 2 → 4 narrows `/n` while the enum of `/status`
/// widens; the widening's witness must not be pinned on the `multipleOf` change.
#[test]
fn a_multiple_of_narrowing_beside_a_widened_enum_is_breaking() {
    let old = schema(
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "maxLength": 16}, "status": {"enum": ["open", "closed"]}, "n": {"type": "number", "multipleOf": 2}}, "required": ["id", "status"], "additionalProperties": false}"#,
    );
    let new = schema(
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "maxLength": 16}, "status": {"enum": ["open", "closed", "archived"]}, "n": {"type": "number", "multipleOf": 4}}, "required": ["id", "status"], "additionalProperties": false}"#,
    );
    let (c, _, _) = files(&old, &new, &[]);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let multiple = at(&c, "keyword_changed", "/n");
    assert_eq!(multiple.class, Class::Breaking);
    let w = multiple.witness.as_ref().expect("a witness holding /n");
    assert_eq!(w.accepted_by, "old_only");
    assert!(w.instance.get("n").is_some(), "{}", w.instance);
    assert_eq!(at(&c, "enum_widened", "/status").class, Class::AgentVisible);
}

/// ppr/old.json → ppr/new2.json: `patternProperties` removed from a closed object narrows.
#[test]
fn pattern_properties_removed_from_a_closed_object_is_breaking_with_a_matching_member() {
    let old = schema(
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"id":{"type":"string","maxLength":16},"status":{"enum":["open","closed"]}},"required":["id","status"],"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}"#,
    );
    let new = schema(
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "maxLength": 16}, "status": {"enum": ["open", "closed", "archived"]}}, "required": ["id", "status"], "additionalProperties": false}"#,
    );
    let (c, _, _) = files(&old, &new, &[]);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let pp = at(&c, "keyword_changed", "");
    assert_eq!(pp.class, Class::Breaking);
    let w = pp.witness.as_ref().expect("a witness with an x- member");
    assert_eq!(w.accepted_by, "old_only");
    let members = w.instance.as_object().unwrap();
    assert!(
        members.keys().any(|k| k.starts_with("x-")),
        "{}",
        w.instance
    );
}

/// pat/old.json → pat/new.json: the new pattern admits longer codes but no longer
/// `999999`; a new-only witness of the pattern change leaves the narrowing undecided at
/// best — never compatible or agent-visible, whatever the agent fields.
#[test]
fn a_pattern_change_that_also_narrows_is_never_compatible_or_agent_visible() {
    let old = schema(
        r#"{"type": "object", "properties": {"code": {"type": "string", "pattern": "^[0-9]{1,6}$"}, "note": {"type": "string"}}, "required": ["code", "note"], "additionalProperties": false}"#,
    );
    let new = schema(
        r#"{"type": "object", "properties": {"code": {"type": "string", "pattern": "^([0-9]{1,5}|[0-8][0-9]{5}|9[0-8][0-9]{4}|99[0-8][0-9]{3}|999[0-8][0-9]{2}|9999[0-8][0-9]|99999[0-8]|[0-9]{7,9})$"}, "note": {"type": "string"}}, "required": ["code", "note"], "additionalProperties": false}"#,
    );
    for agent in [&[][..], &["/note"][..]] {
        let (c, os, ns) = files(&old, &new, agent);
        assert!(
            matches!(c.verdict, Class::Breaking | Class::Unknown),
            "{agent:?}: {}",
            c.json()
        );
        let gone = json!({"code": "999999", "note": ""});
        assert!(os.is_valid(&gone) && !ns.is_valid(&gone));
        // The patterns compared as languages give the shortest string only the old one
        // matches.
        let pattern = at(&c, "pattern_changed", "/code");
        assert_eq!(pattern.class, Class::Breaking, "{}", c.json());
        assert_eq!(pattern.witness.as_ref().unwrap().instance, gone);
    }
}

/// fuzz/bad16.json and fuzz/bad180.json: `patternProperties` emptied; `{"x1": …}` is
/// admitted by the old version only. A widening elsewhere must not make it agent-visible.
#[test]
fn pattern_properties_emptied_beside_a_widening_is_not_agent_visible() {
    let pairs = [
        (
            r#"{"type":"object","properties":{"c":{},"a":{"type":"array","minItems":1,"unevaluatedItems":false},"b":{"type":"array","items":{"enum":[0]}}},"additionalProperties":{"type":"array","prefixItems":[{"type":"string"}]},"patternProperties":{"^x":{"enum":[{}]}},"$schema":"https://json-schema.org/draft/2020-12/schema"}"#,
            r#"{"type":"object","properties":{"c":{},"b":{"type":"array","items":{"enum":[0]}}},"additionalProperties":{"type":"array","prefixItems":[{"type":"string"}]},"patternProperties":{},"$schema":"https://json-schema.org/draft/2020-12/schema"}"#,
            json!({"x1": {}}),
        ),
        (
            r#"{"type":"object","properties":{"c":{"enum":[""]}},"additionalProperties":false,"patternProperties":{"^x":{"enum":["b"]}},"$schema":"https://json-schema.org/draft/2020-12/schema"}"#,
            r#"{"type":"object","properties":{"c":{}},"additionalProperties":false,"patternProperties":{},"$schema":"https://json-schema.org/draft/2020-12/schema"}"#,
            json!({"x1": "b"}),
        ),
    ];
    for (old, new, gone) in pairs {
        let (c, os, ns) = files(&schema(old), &schema(new), &[]);
        assert!(os.is_valid(&gone) && !ns.is_valid(&gone));
        assert!(
            matches!(c.verdict, Class::Breaking | Class::Unknown),
            "{}",
            c.json()
        );
        // The emptied patternProperties is not witnessed by an instance without such a
        // member.
        let pp = at(&c, "keyword_changed", "");
        if let Some(w) = &pp.witness {
            assert_eq!(w.accepted_by, "old_only", "{}", w.instance);
            assert!(
                w.instance
                    .as_object()
                    .is_some_and(|m| m.keys().any(|k| k.starts_with('x'))),
                "{}",
                w.instance
            );
        }
        assert_ne!(change(&c, "keyword_changed").evidence, Evidence::Proof);
    }
}

/// ppr/o7.json → ppr/n7.json and lim/multipleOf: the numeric keywords apply to `integer`
/// as they do to `number`.
#[test]
fn numeric_keywords_on_an_integer_are_compared() {
    let old = schema(
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "maxLength": 16}, "status": {"enum": ["open", "closed"]}, "n": {"type": "integer", "multipleOf": 2}}, "required": ["id", "status"], "additionalProperties": false}"#,
    );
    let new = schema(
        r#"{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"id": {"type": "string", "maxLength": 16}, "status": {"enum": ["open", "closed", "archived"]}, "n": {"type": "integer", "multipleOf": 4}}, "required": ["id", "status"], "additionalProperties": false}"#,
    );
    let (c, _, _) = files(&old, &new, &[]);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    let multiple = at(&c, "keyword_changed", "/n");
    assert_eq!(multiple.class, Class::Breaking);
    assert_eq!(
        multiple.witness.as_ref().map(|w| w.accepted_by),
        Some("old_only")
    );

    let old = schema(
        r#"{"type":"object","properties":{"v":{"type":"integer","multipleOf":2}},"required":["v"]}"#,
    );
    let new = schema(
        r#"{"type":"object","properties":{"v":{"type":"integer","multipleOf":4}},"required":["v"]}"#,
    );
    let (c, _, _) = files(&old, &new, &[]);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    assert_eq!(at(&c, "keyword_changed", "/v").evidence, Evidence::Witness);

    for (word, from, to, class) in [
        ("minimum", 0, 5, Class::Breaking),
        ("maximum", 10, 5, Class::Breaking),
        ("exclusiveMinimum", 0, 5, Class::Breaking),
        ("maximum", 5, 10, Class::AgentVisible),
    ] {
        let side = |limit: i64| {
            json!({"type": "object", "required": ["v"],
            "properties": {"v": {"type": "integer", word: limit}}})
        };
        let (c, _, _) = files(&side(from), &side(to), &[]);
        let kind = if class == Class::Breaking {
            "limit_tightened"
        } else {
            "limit_loosened"
        };
        let limit = at(&c, kind, "/v");
        assert_eq!(
            (limit.class, limit.evidence),
            (class, Evidence::Witness),
            "{word}"
        );
    }
}

/// `airlock certify s2.json s1.json --agent-field /A`: a typo, a pointer without `/`, a
/// bad escape are usage errors naming the pointer, not a certificate that nothing
/// reaches the agent.
#[test]
fn an_agent_field_that_is_no_pointer_or_not_described_is_a_usage_error() {
    let s1 = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string","enum":["x","y","z"]}},"required":["a"],"additionalProperties":false}"#;
    let s2 = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"string","enum":["x","y"]}},"required":["a"],"additionalProperties":false}"#;
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("s2.json"), tmp.path().join("s1.json"));
    std::fs::write(&old, s2).unwrap();
    std::fs::write(&new, s1).unwrap();
    let run = |field: &str| {
        crate::util::airlock(
            &[
                "certify",
                old.to_str().unwrap(),
                new.to_str().unwrap(),
                "--agent-field",
                field,
            ],
            b"",
        )
    };
    for (field, says) in [
        ("/A", "neither schema describes"),
        ("data", "not a JSON pointer"),
        ("/a~2", "'~0'"),
        ("/a/b", "neither schema describes"),
    ] {
        let out = run(field);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{field}: {stderr}");
        assert!(
            stderr.contains(&format!("{field:?}")) && stderr.contains(says),
            "{field}: {stderr}"
        );
        let error = airlock_harness::certify::certify_files(&old, &new, &[field.to_owned()]);
        assert!(error.is_err(), "{field}");
    }
    // The real member: a widened enum on the agent field.
    let out = run("/a");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A member only an open object's `additionalProperties` schema describes is one too.
    let open = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let (c, _, _) = files(&open, &open, &["/anything"]);
    assert_eq!(c.verdict, Class::Compatible);
}

/// hole/r_old.json → hole/r_new.json `--agent-field /status`: once a witnessed change
/// shows the agent field widened, an undecided visibility of the whole instance adds
/// nothing.
#[test]
fn a_witnessed_agent_visible_change_in_a_recursive_schema_is_not_doubted_again() {
    let old = schema(
        r##"{"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}},"status":{"enum":["open","closed"]}},"required":["status"],"additionalProperties":false}},"$ref":"#/$defs/node"}"##,
    );
    let new = schema(
        r##"{"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}},"status":{"enum":["open","closed","deleted"]}},"required":["status"],"additionalProperties":false}},"$ref":"#/$defs/node"}"##,
    );
    let (c, _, _) = files(&old, &new, &["/status"]);
    let status = at(&c, "enum_widened", "/status");
    assert_eq!(
        (status.class, status.evidence),
        (Class::AgentVisible, Evidence::Witness)
    );
    assert!(
        !c.changes
            .iter()
            .any(|x| x.kind == "newly_admitted" && x.class == Class::Unknown),
        "{}",
        c.json()
    );
}

/// A remote `$ref` in two-file mode: the error says what is resolved there, once.
#[test]
fn a_remote_reference_in_two_file_mode_names_the_files_given() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("remote.json"), tmp.path().join("new.json"));
    std::fs::write(
        &old,
        r#"{"type":"object","properties":{"a":{"$ref":"https://example.com/schemas/a.json"}}}"#,
    )
    .unwrap();
    std::fs::write(&new, r#"{"type":"object"}"#).unwrap();
    let out = crate::util::airlock(
        &["certify", old.to_str().unwrap(), new.to_str().unwrap()],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr
            .matches("only the schema files given are resolved")
            .count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("contract's own"), "{stderr}");
}

/// A plain schema becoming one alternative of several is one branch added (or, the other
/// way, removed): no `maxLength`/`minLength` "lost" beside a branch "added" that was the
/// old schema all along (reviewer's contract v2 → v7).
#[test]
fn a_schema_made_nullable_is_one_branch_added_without_artefacts() {
    let old = schema(
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"required":["r"],"properties":{"r":{"type":"string","minLength":1,"maxLength":128}}}"#,
    );
    let new = schema(
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"required":["r"],"properties":{"r":{"anyOf":[{"type":"string","minLength":1,"maxLength":128},{"type":"null"}]}}}"#,
    );
    let (c, _, _) = files(&old, &new, &[]);
    assert_eq!(c.verdict, Class::AgentVisible, "{}", c.json());
    let kinds: Vec<(&str, &str)> = c
        .changes
        .iter()
        .map(|x| (x.kind, x.pointer.as_str()))
        .collect();
    assert_eq!(kinds, [("branch_added", "/r")], "{}", c.json());
    assert_eq!(
        c.changes[0].witness.as_ref().unwrap().instance,
        json!({"r": null})
    );
    let (back, _, _) = files(&new, &old, &[]);
    assert_eq!(back.verdict, Class::Breaking, "{}", back.json());
    let kinds: Vec<&str> = back.changes.iter().map(|x| x.kind).collect();
    assert_eq!(kinds, ["branch_removed"], "{}", back.json());
}

/// An added `oneOf` branch that overlaps another narrows (integers now match both): the
/// plain schema is not lifted into it as an `anyOf` would be, and the narrowing is
/// witnessed (found in review).
#[test]
fn an_overlapping_one_of_branch_is_not_a_widening() {
    let old = schema(
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"type":"integer"}}}"#,
    );
    let new = schema(
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false,"required":["n"],"properties":{"n":{"oneOf":[{"type":"integer"},{"type":"number"}]}}}"#,
    );
    let (c, _, _) = files(&old, &new, &[]);
    assert_eq!(c.verdict, Class::Breaking, "{}", c.json());
    // The narrowing is witnessed: an integer the old version admitted, rejected now.
    assert!(
        c.changes.iter().any(|x| x.class == Class::Breaking
            && x.witness
                .as_ref()
                .is_some_and(|w| w.accepted_by == "old_only")),
        "{}",
        c.json()
    );
}
