//! `airlock check` over the exec protocol against script adapters that crash, hang, stay
//! silent, print garbage, flood, leak, or hide text in duplicate members: each caught with
//! the exact finding kinds and exit codes, without hanging the harness.

use serde_json::Value;
use std::collections::BTreeSet;

use crate::util::{airlock, root};

#[test]
fn an_exec_adapter_that_hides_the_upstream_text_in_a_first_duplicate_member_is_caught() {
    let (code, report) = script("duplicate_leak.py", "5000");
    assert_eq!(code, Some(1), "{report}");
    let kinds = finding_kinds(&report);
    assert!(kinds.contains("shape"), "{kinds:?}");
    assert!(kinds.contains("leak"), "{kinds:?}");
}

#[test]
fn an_exec_answer_line_with_a_duplicate_or_extra_member_is_a_protocol_violation() {
    let (code, report) = script("duplicate_case.py", "5000");
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        finding_kinds(&report),
        BTreeSet::from(["protocol".to_owned()]),
        "{report}"
    );
    let message = report["contracts"][0]["findings"][0]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("duplicate field"), "{message}");
}

#[test]
fn airlock_check_over_the_shipped_contracts_is_clean_in_process_and_over_the_protocol() {
    let out = airlock(&["check", "--cases", "100"], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("clean:"), "{stdout}");
    let sidecar = format!("{} guard", env!("CARGO_BIN_EXE_airlock"));
    let out = airlock(&["check", "--cases", "100", "--adapter-cmd", &sidecar], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Run `airlock check` on review_status with a script adapter; the JSON report.
fn script(name: &str, timeout_ms: &str) -> (Option<i32>, Value) {
    let (code, report, _reproducers) = script_keeping_reproducers(name, timeout_ms);
    (code, report)
}

/// As [`script`], keeping the folder the reproducers were written to.
fn script_keeping_reproducers(
    name: &str,
    timeout_ms: &str,
) -> (Option<i32>, Value, tempfile::TempDir) {
    script_on("review_status", name, timeout_ms)
}

/// As [`script_keeping_reproducers`], on the shipped contract `tool`.
fn script_on(tool: &str, name: &str, timeout_ms: &str) -> (Option<i32>, Value, tempfile::TempDir) {
    let path = root().join("harness/tests/adapters").join(name);
    let command = if name.ends_with(".py") {
        // Python adapters may delegate to the guard sidecar, given as their arguments.
        format!(
            "python3 {} {} guard",
            path.display(),
            env!("CARGO_BIN_EXE_airlock")
        )
    } else {
        format!("sh {}", path.display())
    };
    let dir = tempfile::tempdir().unwrap();
    let reproducers = dir.path().to_str().unwrap();
    let out = airlock(
        &[
            "check",
            "--contract",
            &format!("schemas/{tool}"),
            "--cases",
            "20",
            "--timeout-ms",
            timeout_ms,
            "--format",
            "json",
            "--reproducers",
            reproducers,
            "--adapter-cmd",
            &command,
        ],
        b"",
    );
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap(),
        dir,
    )
}

fn finding_kinds(report: &Value) -> BTreeSet<String> {
    report["contracts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_crashing_adapter_is_reported_as_crash_and_given_up_on() {
    let (code, report) = script("crash.sh", "2000");
    assert_eq!(code, Some(1));
    assert_eq!(finding_kinds(&report), BTreeSet::from(["crash".to_owned()]));
    assert!(report["contracts"][0]["not_run"].as_u64().unwrap() > 0);
    let first = &report["contracts"][0]["findings"][0]["message"];
    assert!(
        first.as_str().unwrap().contains("giving up"),
        "stderr tail is reported: {first}"
    );
}

#[test]
fn a_hanging_adapter_is_reported_as_timeout_without_hanging_the_harness() {
    let start = std::time::Instant::now();
    let (code, report) = script("hang.sh", "300");
    assert_eq!(code, Some(1));
    assert_eq!(
        finding_kinds(&report),
        BTreeSet::from(["timeout".to_owned()])
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn a_silent_adapter_is_reported_as_timeout() {
    let (code, report) = script("silent.sh", "300");
    assert_eq!(code, Some(1));
    assert_eq!(
        finding_kinds(&report),
        BTreeSet::from(["timeout".to_owned()])
    );
}

#[test]
fn an_adapter_printing_garbage_is_reported_as_protocol() {
    let (code, report) = script("garbage.sh", "2000");
    assert_eq!(code, Some(1));
    assert_eq!(
        finding_kinds(&report),
        BTreeSet::from(["protocol".to_owned()])
    );
}

#[test]
fn an_adapter_flooding_its_output_is_reported_as_flood() {
    let (code, report) = script("huge.sh", "5000");
    assert_eq!(code, Some(1));
    assert!(
        finding_kinds(&report).contains("flood"),
        "{:?}",
        finding_kinds(&report)
    );
}

/// The findings of `report` as (class, kind) pairs.
fn finding_classes(report: &Value) -> BTreeSet<(String, String)> {
    report["contracts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["class"].as_str().unwrap().to_owned(),
                f["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_mcp_adapter_forwarding_the_servers_result_is_caught_in_the_mcp_classes() {
    let (code, report, _dir) = script_on("change_review", "mcp_leak.py", "5000");
    assert_eq!(code, Some(1), "{report}");
    let found = finding_classes(&report);
    for (class, kind) in [
        ("mcp-text-instructions", "leak"),
        ("mcp-text-instructions", "shape"),
        ("mcp-id", "verdict"),
        ("mcp-is-error", "leak"),
        ("mcp-text-disagrees", "leak"),
        ("mcp-result-members", "shape"),
        ("mcp-content-kinds", "leak"),
        ("fixture", "shape"),
        ("extra_property", "leak"),
    ] {
        assert!(
            found.contains(&(class.to_owned(), kind.to_owned())),
            "no {kind} finding in {class}: {found:?}"
        );
    }
    // A CallToolResult whose text disagrees is a shape finding, named as such.
    let shape = report["contracts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["class"] == "mcp-text-disagrees" && f["kind"] == "shape")
        .unwrap();
    assert!(
        shape["message"]
            .as_str()
            .unwrap()
            .contains("not a closed CallToolResult"),
        "{shape}"
    );
}

#[test]
fn an_mcp_adapter_answering_the_guards_value_as_a_call_tool_result_is_clean() {
    let (code, report, _dir) = script_on("change_review", "mcp_call_tool_result.py", "5000");
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report["contracts"][0]["cases"].as_u64().unwrap() > 1000,
        "{report}"
    );
    assert_eq!(report["contracts"][0]["findings"], serde_json::json!([]));
}

#[test]
fn an_adapter_leaking_error_text_and_unknown_members_is_caught() {
    let (code, report, _reproducers) = script_keeping_reproducers("leak.py", "5000");
    assert_eq!(code, Some(1));
    let kinds = finding_kinds(&report);
    for kind in ["leak", "shape", "verdict"] {
        assert!(kinds.contains(kind), "{kind} missing from {kinds:?}");
    }
    let reproducer = report["contracts"][0]["findings"][0]["reproducer"]
        .as_str()
        .unwrap()
        .to_owned();
    let command = format!(
        "python3 {}",
        root().join("harness/tests/adapters/leak.py").display()
    );
    let out = airlock(
        &[
            "check",
            "--replay",
            &reproducer,
            "--adapter-cmd",
            &command,
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "replay reproduces the finding");
    let replayed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        replayed["contracts"][0]["findings"][0]["case"],
        report["contracts"][0]["findings"][0]["case"]
    );
    let out = airlock(&["check", "--replay", &reproducer], b"");
    assert_eq!(out.status.code(), Some(0), "the guard passes the same case");
}

#[test]
fn a_lenient_vendor_adapter_forwarding_unmapped_members_is_caught_in_the_vendor_classes() {
    let (code, report, _dir) = script_on("ci_pipeline_status", "vendor_leak.py", "5000");
    assert_eq!(code, Some(1), "{report}");
    let found = finding_classes(&report);
    for (class, kind) in [
        // Unmapped members forwarded under data.details carry their canaries.
        ("vendor-unmapped", "leak"),
        ("extra_property", "leak"),
        // A name matched case-insensitively: the look-alike beside it wins, or the
        // renamed member is still read.
        ("vendor-near-name", "leak"),
        ("vendor-near-name", "verdict"),
        // "7" read as 7, "SUCCESS" as success: admitted where the contract rejects.
        ("vendor-coerce", "verdict"),
        // "404 not found" is not the rule's "404 Not Found".
        ("vendor-failure", "verdict"),
        // The last duplicate wins.
        ("duplicate_member", "leak"),
        ("freshness", "verdict"),
    ] {
        assert!(
            found.contains(&(class.to_owned(), kind.to_owned())),
            "no {kind} finding in {class}: {found:?}"
        );
    }
}

#[test]
fn a_lax_command_output_reader_is_caught_in_the_lines_classes() {
    let (code, report, _dir) = script_on("git_branch_head", "lines_lax.py", "5000");
    assert_eq!(code, Some(1), "{report}");
    let found = finding_classes(&report);
    for (class, kind) in [
        // Banners and warnings skipped instead of refused.
        ("lines-stray-line", "verdict"),
        // The last duplicate wins: its canary value reaches the agent.
        ("lines-duplicate-key", "leak"),
        ("lines-unknown-key", "verdict"),
        ("lines-line-ending", "verdict"),
        ("lines-whitespace", "verdict"),
        // Colour codes kept in the value (hidden text among them).
        ("lines-control", "leak"),
        ("lines-value", "verdict"),
        ("oversize", "verdict"),
        ("fixture", "verdict"),
    ] {
        assert!(
            found.contains(&(class.to_owned(), kind.to_owned())),
            "no {kind} finding in {class}: {found:?}"
        );
    }
}

/// `--replay` of a case whose finding shrinks: the shrunk case, its body and what the
/// reference and the adapter said about it are written beside the reproducer (never over
/// it), the report's finding names the shrunk reproducer, and it replays.
#[test]
fn replaying_a_shrinkable_finding_writes_the_shrunk_case_and_its_answer_beside_the_reproducer() {
    use base64::Engine as _;
    let (code, report, _reproducers) = script_keeping_reproducers("leak.py", "5000");
    assert_eq!(code, Some(1));
    // A leak of an extra member, its body padded with white space the shrink removes.
    let finding = report["contracts"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["class"] == "extra_property" && f["kind"] == "leak" && f["reproducer"].is_string()
        })
        .unwrap_or_else(|| panic!("no extra_property leak with a reproducer: {report}"));
    let mut reproducer: Value =
        serde_json::from_slice(&std::fs::read(finding["reproducer"].as_str().unwrap()).unwrap())
            .unwrap();
    let engine = base64::engine::general_purpose::STANDARD;
    let body = engine
        .decode(reproducer["case"]["upstream"]["body"].as_str().unwrap())
        .unwrap();
    let mut padded = b"{".to_vec();
    padded.extend(std::iter::repeat_n(b' ', 300));
    padded.extend(&body[1..]);
    reproducer["case"]["upstream"]["body"] = Value::from(engine.encode(&padded));
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("padded.case.json");
    let original = serde_json::to_vec_pretty(&reproducer).unwrap();
    std::fs::write(&input, &original).unwrap();

    let command = format!(
        "python3 {}",
        root().join("harness/tests/adapters/leak.py").display()
    );
    let replay = |file: &std::path::Path| {
        airlock(
            &[
                "check",
                "--replay",
                file.to_str().unwrap(),
                "--adapter-cmd",
                &command,
                "--format",
                "json",
            ],
            b"",
        )
    };
    let out = replay(&input);
    assert_eq!(out.status.code(), Some(1), "the replay reproduces the leak");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shrunk_case = dir.path().join("padded.shrunk.case.json");
    assert!(
        stderr.contains(&format!("shrunk case written: {}", shrunk_case.display())),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&input).unwrap(),
        original,
        "the input is kept"
    );
    let replayed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &replayed["contracts"][0]["findings"][0];
    assert!(
        first["message"].as_str().unwrap().contains("(shrunk from"),
        "{first}"
    );
    assert_eq!(
        first["reproducer"],
        shrunk_case.to_str().unwrap(),
        "{first}"
    );
    // The body, smaller than the padded one, and the shrunk case's answers.
    let shrunk_body = std::fs::read(dir.path().join("padded.shrunk.json")).unwrap();
    assert!(shrunk_body.len() < padded.len(), "{}", shrunk_body.len());
    let answer: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("padded.shrunk.answer.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(answer["shrunk_bytes"], shrunk_body.len(), "{answer}");
    assert_eq!(answer["original_bytes"], padded.len(), "{answer}");
    assert_eq!(answer["expected"]["outcome"], "failure", "{answer}");
    assert!(answer["actual"].is_object(), "{answer}");
    assert!(
        answer["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "leak"),
        "{answer}"
    );
    let case: Value = serde_json::from_slice(&std::fs::read(&shrunk_case).unwrap()).unwrap();
    assert_eq!(
        engine
            .decode(case["case"]["upstream"]["body"].as_str().unwrap())
            .unwrap(),
        shrunk_body
    );
    // The shrunk case is a reproducer of its own: the leak again.
    let again = replay(&shrunk_case);
    assert_eq!(again.status.code(), Some(1));
}
