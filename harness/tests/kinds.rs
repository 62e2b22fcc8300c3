//! Every capability on the vendor and lines input kinds: lint, certify, mutate and check
//! on the shipped `ci_pipeline_status` (a vendor document) and `git_branch_head` (a
//! command's output).

use serde_json::Value;

use crate::util::{airlock, copy_shipped};

#[test]
fn lint_passes_the_shipped_vendor_and_lines_contracts() {
    for tool in ["ci_pipeline_status", "git_branch_head"] {
        let out = airlock(&["lint", "--contract", &format!("schemas/{tool}")], b"");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// A copy of the shipped `tool` with a v2 whose `/data/<member>` pattern is `pattern`.
fn with_v2(tool: &str, member: &str, pattern: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let contract = copy_shipped(tool, dir.path());
    let mut schema: Value =
        serde_json::from_slice(&std::fs::read(contract.join("v1.schema.json")).unwrap()).unwrap();
    schema["$defs"]["data"]["properties"][member]["pattern"] = Value::from(pattern);
    std::fs::write(
        contract.join("v2.schema.json"),
        serde_json::to_vec_pretty(&schema).unwrap(),
    )
    .unwrap();
    let manifest = std::fs::read_to_string(contract.join("contract.toml")).unwrap();
    std::fs::write(
        contract.join("contract.toml"),
        manifest.replace("\nversion = 1\n", "\nversion = 2\n"),
    )
    .unwrap();
    let path = contract.to_str().unwrap().to_owned();
    (dir, path)
}

#[test]
fn certify_classifies_a_v2_of_the_vendor_and_lines_contracts_and_replays_their_fixtures() {
    for (tool, member, pattern) in [
        (
            "ci_pipeline_status",
            "ref",
            "^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$",
        ),
        ("git_branch_head", "commit", "^[0-9a-f]{40,64}$"),
    ] {
        let (_dir, contract) = with_v2(tool, member, pattern);
        let out = airlock(
            &["certify", "--contract", &contract, "--format", "json"],
            b"",
        );
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{tool}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let certificate: Value = serde_json::from_slice(&out.stdout).unwrap();
        let changes = certificate["changes"].as_array().unwrap();
        assert!(
            changes
                .iter()
                .any(|c| c["pointer"] == format!("/data/{member}").as_str()),
            "{tool}: {changes:?}"
        );
        // Every fixture (the vendor document, the command's text) replays under both
        // versions as its folder says: the raw input is judged, not the envelope.
        let fixtures = certificate["fixtures"].as_array().unwrap();
        assert!(fixtures.len() >= 18, "{tool}: {fixtures:?}");
        for f in fixtures {
            let accepted = f["fixture"].as_str().unwrap().starts_with("accepted/");
            assert_eq!(f["old"], accepted, "{tool}: {f}");
            assert_eq!(f["new"], accepted, "{tool}: {f}");
        }
    }
}

#[test]
fn mutate_writes_a_commands_variants_as_text_and_the_manifest_says_what_the_guard_decided() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = airlock(
        &[
            "mutate",
            "--contract",
            "schemas/git_branch_head",
            "--class",
            "lines-stray-line",
            "--out",
            out_dir.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("manifest.json")).unwrap()).unwrap();
    let variants = manifest["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 90, "5 bases, 3 places, 6 stray lines");
    let banner = variants
        .iter()
        .find(|v| v["id"].as_str().unwrap().ends_with("#banner:before"))
        .unwrap();
    assert_eq!(banner["expected"], "reject", "{banner}");
    assert_eq!(banner["stage"], "decode", "{banner}");
    let text = std::fs::read_to_string(out_dir.join(banner["file"].as_str().unwrap())).unwrap();
    let canary = banner["canaries"][0].as_str().unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().contains(canary), "{text}");
    assert!(lines.next().unwrap().starts_with("ref="), "{text}");
}
