//! Contract and schema loading: names, limits, reference cycles, the folder's files.

use airlock_guard::{
    load_schema_file, Contract, ContractError, Limits, MAX_BYTES_CEILING, MAX_CONTRACT_FILE_BYTES,
    MAX_DEPTH_CEILING,
};
use serde_json::{json, Value};
use std::path::Path;

/// A manifest with the given tool name and limits, one agent field `/data/x`.
fn manifest(tool: &str, max_bytes: &str, max_depth: &str) -> String {
    format!(
        "tool = {tool:?}\nversion = 1\n\n[limits]\nmax_bytes = {max_bytes}\nmax_depth = {max_depth}\n\n\
         [agent]\nfields = [\"/data/x\"]\n\n[retry]\nmax_attempts = 1\ndeadline = \"1s\"\nretryable = []\n"
    )
}

/// The smallest schema the manifest above fits: `defs` as its `$defs`, and `x` the schema
/// of the member `/data/x`.
fn schema(defs: Value, x: Value) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"data": {"type": "object", "properties": {"x": x}}},
        "$defs": defs
    })
}

/// A contract folder holding `manifest` and `v1.schema.json`.
fn folder(manifest: &str, schema: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("contract.toml"), manifest).unwrap();
    std::fs::write(
        dir.path().join("v1.schema.json"),
        serde_json::to_vec_pretty(schema).unwrap(),
    )
    .unwrap();
    dir
}

fn load(dir: &Path) -> Result<Contract, ContractError> {
    Contract::load(dir)
}

fn plain_schema() -> Value {
    schema(json!({}), json!({"type": "string"}))
}

#[test]
fn a_tool_name_that_is_a_path_is_a_load_error_naming_the_rule() {
    for tool in [
        "/tmp/airlock-evil",
        "../x",
        "..",
        ".",
        "a/b",
        "a\\b",
        "",
        "x y",
    ] {
        let dir = folder(&manifest(tool, "4096", "8"), &plain_schema());
        let message = load(dir.path()).unwrap_err().to_string();
        assert!(
            message.starts_with("tool: ") && message.contains("is not a tool name"),
            "{tool:?}: {message}"
        );
        assert!(message.contains("A-Z a-z 0-9 _ . -"), "{message}");
        let built = Contract::builder(tool, plain_schema()).build().unwrap_err();
        assert!(built.to_string().contains("is not a tool name"), "{built}");
    }
    let long = "x".repeat(129);
    let dir = folder(&manifest(&long, "4096", "8"), &plain_schema());
    assert!(load(dir.path()).is_err());
    for tool in ["review_status", "a.b-c_9", &"x".repeat(128)] {
        let dir = folder(&manifest(tool, "4096", "8"), &plain_schema());
        assert_eq!(load(dir.path()).unwrap().tool(), tool);
    }
}

#[test]
fn max_bytes_above_the_ceiling_or_zero_is_a_load_error() {
    for max_bytes in [
        "9223372036854775807",
        "0",
        &(MAX_BYTES_CEILING + 1).to_string(),
    ] {
        let dir = folder(&manifest("t", max_bytes, "8"), &plain_schema());
        let message = load(dir.path()).unwrap_err().to_string();
        assert!(message.contains("max_bytes"), "{max_bytes}: {message}");
    }
    let dir = folder(
        &manifest("t", &MAX_BYTES_CEILING.to_string(), "8"),
        &plain_schema(),
    );
    assert_eq!(
        load(dir.path()).unwrap().limits().max_bytes,
        MAX_BYTES_CEILING
    );
    for max_bytes in [u64::MAX, 1 << 63, MAX_BYTES_CEILING + 1] {
        let built = Contract::builder("t", plain_schema())
            .limits(Limits {
                max_bytes,
                max_depth: 8,
            })
            .build()
            .unwrap_err();
        assert!(
            built.to_string().starts_with("limits.max_bytes: "),
            "{built}"
        );
    }
}

#[test]
fn max_depth_zero_is_a_load_error_that_states_the_minimum() {
    let dir = folder(&manifest("t", "4096", "0"), &plain_schema());
    let message = load(dir.path()).unwrap_err().to_string();
    assert!(message.starts_with("limits.max_depth: "), "{message}");
    assert!(
        message.contains(&format!("must be 1 to {MAX_DEPTH_CEILING}")),
        "{message}"
    );
    let dir = folder(&manifest("t", "4096", "1"), &plain_schema());
    assert!(load(dir.path()).is_ok());
}

/// Every message of an error chain, the way `anyhow`'s `{:#}` prints it.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[test]
fn an_error_chain_prints_each_piece_of_a_contract_error_once() {
    let dir = folder(&manifest("t", "4096", "8"), &plain_schema());
    std::fs::remove_file(dir.path().join("v1.schema.json")).unwrap();
    let missing = chain(&load(dir.path()).unwrap_err());
    assert!(missing.contains("v1.schema.json"), "{missing}");
    assert_eq!(missing.matches("(os error").count(), 1, "{missing}");

    std::fs::write(dir.path().join("v1.schema.json"), b"{\"type\": oops}").unwrap();
    let broken = chain(&load(dir.path()).unwrap_err());
    assert_eq!(broken.matches("at byte 9").count(), 1, "{broken}");
    // The bytes of a file that is not a valid schema are never quoted.
    assert!(!broken.contains("'o'"), "{broken}");
}

#[test]
fn an_in_place_reference_cycle_is_a_load_error_naming_the_cycle() {
    let cases = [
        (
            json!({"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}),
            "#/$defs/a → #/$defs/b → #/$defs/a",
        ),
        (json!({"a": {"$ref": "#/$defs/a"}}), "#/$defs/a → #/$defs/a"),
        (
            json!({"a": {"allOf": [{"$ref": "#/$defs/a"}]}}),
            "#/$defs/a → #/$defs/a/allOf/0 → #/$defs/a",
        ),
    ];
    for (defs, cycle) in cases {
        let dir = folder(
            &manifest("t", "4096", "8"),
            &schema(defs, json!({"$ref": "#/$defs/a"})),
        );
        let message = load(dir.path()).unwrap_err().to_string();
        assert!(message.contains("v1.schema.json"), "{message}");
        assert!(
            message.contains(&format!("reference cycle {cycle} ")),
            "{message}"
        );
        assert!(message.contains("admits any value"), "{message}");
    }
}

#[test]
fn recursion_through_a_member_or_an_item_still_loads() {
    let defs = json!({"node": {"type": "object", "additionalProperties": false, "properties": {
        "children": {"type": "array", "maxItems": 4, "items": {"$ref": "#/$defs/node"}},
        "next": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/node"}]}
    }}});
    let dir = folder(
        &manifest("t", "4096", "8"),
        &schema(defs, json!({"$ref": "#/$defs/node"})),
    );
    assert!(load(dir.path()).is_ok());
}

#[test]
fn a_contract_loads_without_reading_files_no_reference_names() {
    let dir = folder(&manifest("t", "4096", "8"), &plain_schema());
    // Neither is strict JSON, and one is not even a file: no `$ref` names them.
    std::fs::write(dir.path().join("notes.json"), b"{not json").unwrap();
    std::fs::create_dir(dir.path().join("folder.json")).unwrap();
    assert!(load(dir.path()).is_ok());
}

#[test]
fn a_referenced_file_that_is_not_strict_json_is_named_without_quoting_it() {
    let dir = folder(
        &manifest("t", "4096", "8"),
        &schema(json!({}), json!({"$ref": "common.json#/$defs/x"})),
    );
    std::fs::write(dir.path().join("common.json"), b"SECRET-CONTENTS").unwrap();
    let message = load(dir.path()).unwrap_err().to_string();
    assert!(message.contains("common.json"), "{message}");
    assert!(message.contains("not strict JSON"), "{message}");
    assert!(
        !message.contains("SECRET") && !message.contains("'S'"),
        "{message}"
    );
}

#[test]
fn a_referenced_sibling_file_is_still_served() {
    let dir = folder(
        &manifest("t", "4096", "8"),
        &schema(json!({}), json!({"$ref": "common.json#/$defs/x"})),
    );
    std::fs::write(
        dir.path().join("common.json"),
        br#"{"$defs": {"x": {"type": "string", "maxLength": 3}}}"#,
    )
    .unwrap();
    let contract = load(dir.path()).unwrap();
    assert!(contract.schema().is_valid(&json!({"data": {"x": "abc"}})));
    assert!(!contract.schema().is_valid(&json!({"data": {"x": "abcd"}})));
}

#[test]
fn a_standalone_schema_of_another_dialect_is_refused_before_its_siblings_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.json");
    std::fs::write(
        &path,
        br#"{"$schema": "http://json-schema.org/draft-04/schema#", "$ref": "other.json"}"#,
    )
    .unwrap();
    // Reading this sibling would fail: it is a folder.
    std::fs::create_dir(dir.path().join("other.json")).unwrap();
    std::fs::write(dir.path().join("junk.json"), b"not json").unwrap();
    let message = load_schema_file(&path).unwrap_err().to_string();
    assert!(message.contains("draft-04"), "{message}");
    assert!(message.contains("is not supported"), "{message}");
}

/// A file of `len` bytes that takes no disk space (sparse): a schema of spaces would be
/// valid JSON after its first byte, so the loader must refuse it by size, unread.
fn sparse(path: &Path, len: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_len(len).unwrap();
}

#[test]
fn a_contract_file_larger_than_the_bound_is_refused_by_name_without_being_read() {
    // The manifest, the schema version and a file a `$ref` names: each is bounded.
    for name in ["contract.toml", "v1.schema.json", "common.json"] {
        let dir = folder(
            &manifest("t", "4096", "8"),
            &schema(json!({}), json!({"$ref": "common.json#/$defs/x"})),
        );
        std::fs::write(
            dir.path().join("common.json"),
            br#"{"$defs": {"x": {"type": "string"}}}"#,
        )
        .unwrap();
        assert!(
            load(dir.path()).is_ok(),
            "{name}: the folder loads as written"
        );
        sparse(&dir.path().join(name), MAX_CONTRACT_FILE_BYTES + 1);
        let message = chain(&load(dir.path()).unwrap_err());
        assert!(
            message.contains(&format!("{name}: is larger than 32 MiB")),
            "{message}"
        );
    }
    // At the bound itself the file is read (and here refused for what it holds).
    let dir = folder(&manifest("t", "4096", "8"), &plain_schema());
    sparse(&dir.path().join("v1.schema.json"), MAX_CONTRACT_FILE_BYTES);
    let message = chain(&load(dir.path()).unwrap_err());
    assert!(!message.contains("larger than"), "{message}");
}

#[cfg(unix)]
mod links {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_symlinked_resource_is_refused_by_name_and_its_target_is_never_quoted() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("secret.txt");
        std::fs::write(&target, b"root:x:0:0").unwrap();
        let dir = folder(
            &manifest("t", "4096", "8"),
            &schema(json!({}), json!({"$ref": "common.json#/$defs/x"})),
        );
        symlink(&target, dir.path().join("common.json")).unwrap();
        let error = load(dir.path()).unwrap_err();
        let message = chain(&error);
        assert!(message.contains("common.json"), "{message}");
        assert!(message.contains("symbolic link"), "{message}");
        assert!(
            !message.contains("root") && !message.contains("'r'"),
            "{message}"
        );
        assert!(matches!(error, ContractError::Resource { .. }), "{error:?}");
    }

    #[test]
    fn a_symlinked_resource_is_refused_even_when_its_target_is_a_valid_schema() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("common.json");
        std::fs::write(&target, br#"{"$defs": {"x": {"type": "string"}}}"#).unwrap();
        let dir = folder(
            &manifest("t", "4096", "8"),
            &schema(json!({}), json!({"$ref": "common.json#/$defs/x"})),
        );
        symlink(&target, dir.path().join("common.json")).unwrap();
        let message = load(dir.path()).unwrap_err().to_string();
        assert!(
            message.contains("common.json: is a symbolic link"),
            "{message}"
        );

        // A standalone schema's siblings follow the same rule.
        let standalone = dir.path().join("v1.schema.json");
        let message = load_schema_file(&standalone).unwrap_err().to_string();
        assert!(
            message.contains("common.json: is a symbolic link"),
            "{message}"
        );
    }

    #[test]
    fn a_symlinked_schema_or_manifest_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        let dir = folder(&manifest("t", "4096", "8"), &plain_schema());
        for name in ["v1.schema.json", "contract.toml"] {
            let moved = outside.path().join(name);
            std::fs::rename(dir.path().join(name), &moved).unwrap();
            symlink(&moved, dir.path().join(name)).unwrap();
            let message = load(dir.path()).unwrap_err().to_string();
            assert!(
                message.contains(&format!("{name}: is a symbolic link")),
                "{message}"
            );
            std::fs::remove_file(dir.path().join(name)).unwrap();
            std::fs::rename(&moved, dir.path().join(name)).unwrap();
        }
        assert!(load(dir.path()).is_ok());
    }
}

#[test]
fn the_whole_data_object_as_an_agent_field_is_a_load_error() {
    let manifest = manifest("t", "4096", "8").replace(r#"["/data/x"]"#, r#"["/data"]"#);
    let dir = folder(&manifest, &schema(json!({}), json!({"type": "string"})));
    let error = load(dir.path()).unwrap_err().to_string();
    assert!(error.contains("whole data object"), "{error}");
}

#[test]
fn a_reference_cycle_through_another_file_of_the_contract_is_a_load_error() {
    let dir = folder(
        &manifest("t", "4096", "8"),
        &schema(
            json!({"a": {"$ref": "common.json#/$defs/x"}}),
            json!({"$ref": "#/$defs/a"}),
        ),
    );
    std::fs::write(
        dir.path().join("common.json"),
        br##"{"$defs": {"x": {"anyOf": [{"$ref": "v1.schema.json#/$defs/a"}]}}}"##,
    )
    .unwrap();
    let message = load(dir.path()).unwrap_err().to_string();
    assert!(message.contains("common.json#/$defs/x"), "{message}");
    assert!(message.contains("v1.schema.json#/$defs/a"), "{message}");
}
