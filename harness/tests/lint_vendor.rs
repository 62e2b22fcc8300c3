//! `airlock lint` on vendor and lines contracts: the vendor schema's own rules, pointers
//! the vendor schema does not describe, mapping tables, line grammars' bounds.

use airlock_harness::lint::{lint_contract, Level};
use std::path::Path;

use crate::util::{airlock, copy_shipped};

/// The rules of the findings on the file named `name`.
fn rules_on(findings: &[airlock_harness::lint::LintFinding], name: &str) -> Vec<&'static str> {
    findings
        .iter()
        .filter(|f| f.file.file_name().is_some_and(|n| n == name))
        .map(|f| f.rule)
        .collect()
}

#[test]
fn a_vendor_schema_staged_or_kept_beside_the_one_in_use_is_linted_as_a_vendor_schema() {
    // Found in review: `vendor.v2.schema.json` starts with `v`, so it was linted as a
    // contract schema version (open-object, envelope-overlap) and the upgrade failed lint.
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("ci_pipeline_status", tmp.path());
    std::fs::copy(
        dir.join("vendor.v1.schema.json"),
        dir.join("vendor.v2.schema.json"),
    )
    .unwrap();
    let staged = lint_contract(&dir);
    assert!(
        staged.iter().all(|f| f.severity != Level::Error),
        "{staged:?}"
    );
    // Switched to v2, v1 kept.
    let manifest = dir.join("contract.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "schema = \"vendor.v1.schema.json\"",
            "schema = \"vendor.v2.schema.json\"",
        ),
    )
    .unwrap();
    let switched = lint_contract(&dir);
    assert!(
        switched.iter().all(|f| f.severity != Level::Error),
        "{switched:?}"
    );
    let out = airlock(&["lint", "--contract", dir.to_str().unwrap()], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A staged vendor schema is still held to the vendor rules.
    let mut staged: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("vendor.v1.schema.json")).unwrap()).unwrap();
    staged["$defs"] = serde_json::json!({"far": {"$ref": "https://example.com/x.json"}});
    std::fs::write(dir.join("vendor.v1.schema.json"), staged.to_string()).unwrap();
    assert_eq!(
        rules_on(&lint_contract(&dir), "vendor.v1.schema.json"),
        ["remote-ref"]
    );
}

#[test]
fn a_vendor_schema_not_named_v_star_is_linted_and_a_contract_that_does_not_load_keeps_vendor_rules()
{
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("ci_pipeline_status", tmp.path());
    let mut vendor: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("vendor.v1.schema.json")).unwrap()).unwrap();
    std::fs::remove_file(dir.join("vendor.v1.schema.json")).unwrap();
    vendor["oneOf"][0]["properties"]["ref"]["pattern"] = "(a+)+".into();
    std::fs::write(dir.join("gitlab.json"), vendor.to_string()).unwrap();
    let manifest = dir.join("contract.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace(
        "schema = \"vendor.v1.schema.json\"",
        "schema = \"gitlab.json\"",
    );
    std::fs::write(&manifest, &text).unwrap();
    let findings = lint_contract(&dir);
    let on_vendor = rules_on(&findings, "gitlab.json");
    assert!(on_vendor.contains(&"backtracking-pattern"), "{findings:?}");
    assert!(!on_vendor.contains(&"open-object"), "{findings:?}");
    // The same contract broken (a mapping into a member data does not have): the vendor
    // schema is still linted by the vendor rules, not as a contract schema.
    std::fs::write(
        &manifest,
        text.replacen("field = \"ref\"", "field = \"no_such_member\"", 1),
    )
    .unwrap();
    let findings = lint_contract(&dir);
    assert!(
        findings.iter().any(|f| f.rule == "contract-load"),
        "{findings:?}"
    );
    let on_vendor = rules_on(&findings, "gitlab.json");
    assert!(on_vendor.contains(&"backtracking-pattern"), "{findings:?}");
    assert!(
        !on_vendor.contains(&"open-object") && !on_vendor.contains(&"envelope-overlap"),
        "{findings:?}"
    );
}

/// A copy of the shipped `ci_pipeline_status` whose contract.toml has `from` replaced by
/// `to` (once).
fn ci_pipeline_with(into: &Path, from: &str, to: &str) -> std::path::PathBuf {
    let dir = copy_shipped("ci_pipeline_status", into);
    let manifest = dir.join("contract.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(&manifest, text.replacen(from, to, 1)).unwrap();
    dir
}

#[test]
fn a_pointer_an_open_vendor_schema_does_not_describe_is_a_vendor_pointer_undescribed_warning() {
    // Found in review: the vendor schema is open, so `at = "/mesage"` loads (it can be
    // there) though the schema says nothing of it, and the rule never matches.
    let tmp = tempfile::tempdir().unwrap();
    let dir = ci_pipeline_with(tmp.path(), "at = \"/message\"", "at = \"/mesage\"");
    let findings = lint_contract(&dir);
    let found: Vec<_> = findings
        .iter()
        .filter(|f| f.rule == "vendor-pointer-undescribed")
        .collect();
    assert_eq!(found.len(), 1, "{findings:?}");
    assert_eq!(found[0].pointer, "/mesage");
    assert_eq!(found[0].severity, Level::Warning);
    assert!(found[0].file.ends_with("contract.toml") && found[0].line > 0);
    let tmp = tempfile::tempdir().unwrap();
    let dir = ci_pipeline_with(tmp.path(), "from = \"/sha\"", "from = \"/commit_sha\"");
    let pointers: Vec<String> = lint_contract(&dir)
        .into_iter()
        .filter(|f| f.rule == "vendor-pointer-undescribed")
        .map(|f| f.pointer)
        .collect();
    assert_eq!(pointers, ["/commit_sha"]);
}

#[test]
fn a_table_value_the_contract_schema_refuses_is_a_table_value_refused_error() {
    // Found in review: each of these loaded, and every response with `success` was then
    // rejected at runtime.
    for bad in ["1", "{ x = \"CANARY\" }", "\"approved\""] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = ci_pipeline_with(
            tmp.path(),
            "success = \"succeeded\"",
            &format!("success = {bad}"),
        );
        let findings = lint_contract(&dir);
        let refused: Vec<_> = findings
            .iter()
            .filter(|f| f.rule == "table-value-refused")
            .collect();
        assert_eq!(refused.len(), 1, "{bad}: {findings:?}");
        assert_eq!(refused[0].pointer, "/data/state");
        assert!(refused[0].message.contains("\"success\""), "{}", refused[0]);
        let out = airlock(&["lint", "--contract", dir.to_str().unwrap()], b"");
        assert_eq!(out.status.code(), Some(1), "{bad}");
    }
}

#[test]
fn a_line_grammar_without_its_own_line_bound_or_with_one_never_reached_is_a_finding() {
    // Found in review: no rule looked at line grammars; `max_line_bytes = 65536` under
    // `max_bytes = 1024` and a grammar leaving it to the default both passed in silence.
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_shipped("git_branch_head", tmp.path());
    let manifest = dir.join("contract.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let line_rules = |dir: &Path| -> Vec<(&'static str, usize)> {
        lint_contract(dir)
            .into_iter()
            .filter(|f| f.rule.starts_with("line-bound-"))
            .map(|f| (f.rule, f.line))
            .collect()
    };
    assert_eq!(line_rules(&dir), []);
    std::fs::write(
        &manifest,
        text.replace("max_line_bytes = 256", "max_line_bytes = 65536"),
    )
    .unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("max_line_bytes"))
        .unwrap()
        + 1;
    assert_eq!(line_rules(&dir), [("line-bound-unreachable", line)]);
    std::fs::write(&manifest, text.replace("max_line_bytes = 256\n", "")).unwrap();
    let input = text.lines().position(|l| l == "[input]").unwrap() + 1;
    // The default (4096) is past this contract's max_bytes (1024) too.
    assert_eq!(
        line_rules(&dir),
        [
            ("line-bound-default", input),
            ("line-bound-unreachable", input)
        ]
    );
    let out = airlock(
        &["lint", "--strict", "--contract", dir.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
}
