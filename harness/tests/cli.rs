//! The `airlock` binary end to end: `admit`, `validate`, `guard`, and their exit codes.

use airlock_guard::Request;
use base64::Engine as _;
use serde_json::Value;

use crate::util::{airlock, load, root, TOOLS};

const FIXED: &str = r#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}"#;

#[test]
fn admit_prints_the_agent_value_and_exits_0_for_an_accepted_fixture() {
    let out = airlock(
        &[
            "admit",
            "--contract",
            "schemas/review_status",
            "corpora/review_status/accepted/success_approved_compact.json",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let agent: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(agent["outcome"], "success");
    assert_eq!(agent["data"]["decision"], "approved");
    assert!(out.stderr.is_empty());
}

#[test]
fn admit_prints_the_fixed_failure_and_the_diagnostic_and_exits_1_for_a_near_miss() {
    let out = airlock(
        &[
            "admit",
            "--contract",
            "schemas/review_status",
            "corpora/review_status/near_miss/extra_property_admin_override_with_instructions.json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim_end(), FIXED);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("additionalProperties at /data"), "{stderr}");
}

#[test]
fn admit_prints_a_diagnostic_the_body_cannot_give_lines_or_escape_sequences() {
    // A member name with a line feed, a forged `because` line and a terminal escape.
    let body = br#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success","data":{"change_id":"CR-1042","decision":"approved","reviewed_by":"x","a\n  because all is well\u001b[2J":1}}"#;
    let out = airlock(&["admit", "--contract", "schemas/review_status", "-"], body);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    assert!(
        stderr.contains(r"a\u{a}  because all is well\u{1b}[2J"),
        "{stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines.len() >= 2, "{stderr}");
    assert!(
        lines[1..].iter().all(|l| l.starts_with("  because ")),
        "{stderr}"
    );
}

#[test]
fn admit_reads_stdin_and_uses_the_override_request_beside_a_fixture() {
    let body =
        std::fs::read(root().join("corpora/review_status/accepted/success_approved_compact.json"))
            .unwrap();
    let out = airlock(
        &["admit", "--contract", "schemas/review_status", "-"],
        &body,
    );
    assert_eq!(out.status.code(), Some(0));
    let out = airlock(
        &[
            "admit",
            "--contract",
            "schemas/review_status",
            "corpora/review_status/accepted/success_approved_other_change.json",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "the fixture's own request.json was not used"
    );
    let out = airlock(
        &[
            "admit",
            "--contract",
            "schemas/review_status",
            "--request",
            "corpora/review_status/request.json",
            "corpora/review_status/accepted/success_approved_other_change.json",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "--request must win over the override"
    );
}

#[test]
fn admit_with_audit_prints_the_audit_record() {
    let out = airlock(
        &[
            "admit",
            "--audit",
            "--contract",
            "schemas/deploy_status",
            "corpora/deploy_status/near_miss/html_502_bad_gateway.json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let record: Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(record["stage"], "parse");
    assert_eq!(record["diagnostic"]["byte_offset"], 0);
}

#[test]
fn admit_usage_and_contract_errors_exit_2() {
    assert_eq!(
        airlock(&["admit", "--contract", "schemas/nope", "x.json"], b"")
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        airlock(
            &[
                "admit",
                "--contract",
                "schemas/review_status",
                "no/such/file.json"
            ],
            b""
        )
        .status
        .code(),
        Some(2)
    );
    assert_eq!(airlock(&["admit"], b"").status.code(), Some(2));
    assert_eq!(airlock(&["frobnicate"], b"").status.code(), Some(2));
}

#[test]
fn validate_reports_each_instance_and_exits_by_the_worst() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("true.json");
    std::fs::write(&schema, "true").unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, r#"{"a": [1, 2]}"#).unwrap();
    let dup = dir.path().join("dup.json");
    std::fs::write(&dup, r#"{"a": 1, "a": 2}"#).unwrap();
    let s = schema.to_str().unwrap();
    let out = airlock(&["validate", "--schema", s, good.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}: valid\n", good.display())
    );
    let out = airlock(
        &[
            "validate",
            "--schema",
            s,
            good.to_str().unwrap(),
            dup.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(&format!(
            "{}: invalid: parse: duplicate_member",
            dup.display()
        )),
        "{stdout}"
    );
    let out = airlock(
        &[
            "validate",
            "--schema",
            s,
            "--max-depth",
            "1",
            good.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let out = airlock(
        &[
            "validate",
            "--schema",
            s,
            "--max-depth",
            "100000",
            good.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "a depth past the ceiling is a usage error"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("max-depth"));
    let out = airlock(
        &[
            "validate",
            "--schema",
            s,
            "--max-bytes",
            "5",
            good.to_str().unwrap(),
        ],
        b"",
    );
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("invalid: limits: max_bytes"));
    let missing = dir.path().join("missing.json");
    let out = airlock(
        &[
            "validate",
            "--schema",
            s,
            good.to_str().unwrap(),
            missing.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn validate_uses_format_assertion_and_reports_the_schema_stage() {
    let out = airlock(
        &[
            "validate",
            "--schema",
            "schemas/job_run_status/v1.schema.json",
            "corpora/job_run_status/accepted/success_running_compact.json",
            "corpora/job_run_status/near_miss/observed_at_without_offset.json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<_> = stdout.lines().collect();
    assert!(lines[0].ends_with(": valid"), "{stdout}");
    assert!(
        lines[1].contains(": invalid: schema: oneOf") && lines[1].contains("format"),
        "{stdout}"
    );
}

#[test]
fn validate_with_a_broken_schema_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(&schema, r#"{"type": "strin"}"#).unwrap();
    let out = airlock(
        &[
            "validate",
            "--schema",
            schema.to_str().unwrap(),
            schema.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("invalid schema"), "{stderr}");
    // The error names the schema file once, not once per layer that saw it.
    let named = schema.to_str().unwrap();
    assert_eq!(stderr.matches(named).count(), 1, "{stderr}");
}

#[test]
fn guard_serves_the_exec_protocol_with_the_same_verdicts_as_the_library() {
    for tool in TOOLS {
        let (guard, corpus) = load(tool);
        let mut input = String::new();
        let mut expected = Vec::new();
        for (i, fixture) in corpus.fixtures.iter().enumerate() {
            let mut request: Request = fixture.request.clone();
            request.tool = Some(tool.to_owned());
            let line = serde_json::json!({
                "case": format!("c-{i:06}"),
                "request": request,
                "response_b64": base64::engine::general_purpose::STANDARD.encode(&fixture.bytes),
            });
            input.push_str(&line.to_string());
            input.push('\n');
            expected.push(guard.admit(&request, &fixture.bytes).agent().to_json());
        }
        input.push_str(&format!(
            "{{\"case\":\"t\",\"request\":{},\"transport_error\":\"unreachable\"}}\n",
            serde_json::to_string(&corpus.request).unwrap()
        ));
        let contract = format!("schemas/{tool}");
        let out = airlock(&["guard", "--contract", &contract], input.as_bytes());
        assert_eq!(out.status.code(), Some(0));
        let answers: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(answers.len(), expected.len() + 1);
        for (i, (answer, expected)) in answers.iter().zip(&expected).enumerate() {
            assert_eq!(answer["case"], format!("c-{i:06}"));
            assert_eq!(&answer["agent"], expected, "{tool} case {i}");
        }
        assert_eq!(
            answers.last().unwrap()["agent"]["error"]["code"],
            "UPSTREAM_UNAVAILABLE"
        );
    }
}

#[test]
fn mutate_lists_every_class_of_the_catalogue() {
    let out = airlock(&["mutate", "--list-classes"], b"");
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    for (class, _) in airlock_harness::adversary::CLASSES {
        assert!(
            stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(class)),
            "{class} not listed"
        );
    }
}

#[test]
fn mutate_writes_the_chosen_classes_as_raw_files_with_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().to_str().unwrap();
    let out = airlock(
        &[
            "mutate",
            "--contract",
            "schemas/review_status",
            "--fixture",
            "corpora/review_status/accepted/success_approved_compact.json",
            "--class",
            "duplicate_member",
            "--class",
            "transport_error",
            "--out",
            out_dir,
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
        serde_json::from_slice(&std::fs::read(dir.path().join("manifest.json")).unwrap()).unwrap();
    let variants = manifest["variants"].as_array().unwrap();
    assert!(variants.len() >= 10);
    for v in variants {
        assert_eq!(
            v["class"], "duplicate_member",
            "transport errors derive from no fixture, so --fixture leaves them out"
        );
        assert_eq!(v["origin"], "success_approved_compact");
        assert_eq!(v["expected"], "reject");
        assert_eq!(v["stage"], "parse");
        let bytes = std::fs::read(dir.path().join(v["file"].as_str().unwrap())).unwrap();
        assert!(airlock_guard::parse(&bytes, 64).is_err());
        // What the reference gives the agent, as its exact text: here the fixed failure.
        assert_eq!(
            v["agent"],
            r#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}"#
        );
    }
    let out = airlock(
        &[
            "mutate",
            "--contract",
            "schemas/review_status",
            "--class",
            "nonsense",
            "--out",
            out_dir,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "airlock: error: unknown class \"nonsense\"; see airlock mutate --list-classes\n"
    );
    // An unknown fixture is named as the user wrote it (a path), not by its stem.
    let out = airlock(
        &[
            "mutate",
            "--contract",
            "schemas/review_status",
            "--fixture",
            "corpora/review_status/accepted/no_such_fixture.json",
            "--out",
            out_dir,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "airlock: error: corpora/review_status/accepted/no_such_fixture.json is not a fixture \
         of this contract's corpus\n"
    );
}

#[test]
fn a_missing_corpus_names_the_folder_tried_and_corpus_names_another() {
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("lonely");
    std::fs::create_dir(&contract).unwrap();
    for file in ["contract.toml", "v1.schema.json", "v2.schema.json"] {
        std::fs::copy(
            root().join("schemas/review_status").join(file),
            contract.join(file),
        )
        .unwrap();
    }
    let lonely = contract.to_str().unwrap();
    let out = airlock(&["check", "--contract", lonely], b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tried = dir.path().parent().unwrap().join("corpora/review_status");
    assert!(stderr.contains(&tried.display().to_string()), "{stderr}");
    assert!(stderr.contains("--corpus DIR"), "{stderr}");
    assert_eq!(stderr.matches("no corpus folder").count(), 1, "{stderr}");
    let corpus = root().join("corpora/review_status");
    let out = airlock(
        &[
            "check",
            "--contract",
            lonely,
            "--corpus",
            corpus.to_str().unwrap(),
            "--cases",
            "5",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn validate_max_bytes_above_the_ceiling_is_a_usage_error() {
    let schema = "schemas/job_run_status/v1.schema.json";
    let instance = "corpora/job_run_status/accepted/success_running_compact.json";
    for max_bytes in [
        "67108865",
        "9223372036854775808",
        "18446744073709551615",
        "0",
    ] {
        let out = airlock(
            &[
                "validate",
                "--schema",
                schema,
                "--max-bytes",
                max_bytes,
                instance,
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "--max-bytes {max_bytes}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("max-bytes"), "{stderr}");
    }
    let out = airlock(
        &[
            "validate",
            "--schema",
            schema,
            "--max-bytes",
            "67108864",
            instance,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn lint_and_certify_write_every_report_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lint.json");
    let out = airlock(
        &["lint", "--report", &format!("json={}", json.display())],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let printed = airlock(&["lint", "--format", "json"], b"").stdout;
    assert_eq!(std::fs::read(&json).unwrap(), printed);
    let markdown = dir.path().join("certificate.md");
    let out = airlock(
        &[
            "certify",
            "--contract",
            "schemas/review_status",
            "--report",
            &format!("markdown={}", markdown.display()),
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "review_status v1 -> v2 is breaking"
    );
    let printed = airlock(
        &[
            "certify",
            "--contract",
            "schemas/review_status",
            "--format",
            "markdown",
        ],
        b"",
    )
    .stdout;
    assert_eq!(std::fs::read(&markdown).unwrap(), printed);
    let bad = airlock(&["lint", "--report", "junit=x.xml"], b"");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn progress_is_drawn_on_a_terminal_only_and_never_with_quiet() {
    // `script` (util-linux) runs the command on a pseudo-terminal.
    let on_terminal = |args: &str| {
        let command = format!(
            "{} {args} --contract schemas/deploy_status > /dev/null",
            env!("CARGO_BIN_EXE_airlock")
        );
        let out = std::process::Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .current_dir(root())
            .output()
            .expect("script(1) runs a command on a terminal");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let bar = '\u{2588}';
    let drawn = on_terminal("check --cases 5");
    assert!(drawn.contains(bar), "{drawn}");
    // Contracts done of all, cases, findings so far, a rate.
    assert!(
        drawn.contains("contract 1/1 deploy_status") && drawn.contains("0 findings"),
        "{drawn}"
    );
    assert!(!on_terminal("check --cases 5 --quiet").contains(bar));
    assert!(on_terminal("fuzz --runs 3000").contains("inputs"));
    assert!(!on_terminal("fuzz --runs 3000 --quiet").contains("inputs,"));
    // Not a terminal: no progress, only the closing summary.
    let out = airlock(
        &[
            "check",
            "--contract",
            "schemas/deploy_status",
            "--cases",
            "5",
        ],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains(bar), "{stderr}");
    assert!(stderr.starts_with("airlock check:"), "{stderr}");
}

#[test]
fn init_scaffolds_a_contract_from_samples_that_lints_without_error_and_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let accepted = root().join("corpora/review_status/accepted");
    let mut args: Vec<String> = vec!["init".into(), "review_status".into()];
    for name in [
        "success_approved_compact.json",
        "success_pending_pretty.json",
        "success_rejected_members_reordered_utf8.json",
        "success_reviewed_by_128_chars.json",
        "failure_not_found.json",
    ] {
        args.push("--sample".into());
        args.push(accepted.join(name).display().to_string());
    }
    args.extend([
        "--request".into(),
        "corpora/review_status/request.json".into(),
    ]);
    args.extend(["--out".into(), out.into()]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = airlock(&argv, b"");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // What was inferred and what to review is said.
    assert!(stdout.contains("equals_param change_id"), "{stdout}");
    assert!(
        stdout.contains("enum {\"approved\", \"pending\", \"rejected\"} guessed"),
        "{stdout}"
    );
    assert!(stdout.contains("free text"), "{stdout}");

    let contract = dir.path().join("schemas/review_status");
    let contract = contract.to_str().unwrap();
    let lint = airlock(&["lint", "--contract", contract], b"");
    assert_eq!(
        lint.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
    // `check` runs the samples (accepted) and the written near misses (each rejected by
    // the new contract, else a contract error) with every variant: clean.
    let check = airlock(
        &["check", "--contract", contract, "--cases", "50", "--quiet"],
        b"",
    );
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let near = std::fs::read_dir(dir.path().join("corpora/review_status/near_miss"))
        .unwrap()
        .count();
    assert!(near >= 10, "{near} near misses");
    // A shipped near miss the samples tell apart is rejected: another change (bound).
    let admit = airlock(
        &[
            "admit",
            "--contract",
            contract,
            "corpora/review_status/near_miss/wrong_change_id_cr_1043.json",
        ],
        b"",
    );
    assert_eq!(admit.status.code(), Some(1));

    // Never overwrites; a sample that is not JSON is named.
    let again = airlock(&argv, b"");
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, b"{\"a\":1,\"a\":2}").unwrap();
    let other = dir.path().join("other");
    let run = airlock(
        &[
            "init",
            "x",
            "--sample",
            bad.to_str().unwrap(),
            "--out",
            other.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("bad.json"));
    // A sample the envelope cannot admit (an unknown failure code): nothing is left.
    let odd = dir.path().join("odd.json");
    std::fs::write(
        &odd,
        br#"{"tool":"x","request_id":"req.Sample0001","outcome":"failure","error":{"code":"TEAPOT","retryable":false}}"#,
    )
    .unwrap();
    let good = accepted.join("success_approved_compact.json");
    let run = airlock(
        &[
            "init",
            "x",
            "--sample",
            good.to_str().unwrap(),
            "--sample",
            odd.to_str().unwrap(),
            "--out",
            other.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no contract was written"));
    assert!(!other.join("schemas/x").exists() && !other.join("corpora/x").exists());
}

#[test]
fn admit_on_an_mcp_contract_prints_the_agents_call_tool_result() {
    let out = airlock(
        &[
            "admit",
            "--contract",
            "schemas/change_review",
            "corpora/change_review/accepted/approved.json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["isError"], false);
    assert_eq!(printed["structuredContent"]["decision"], "approved");
    let text = printed["content"][0]["text"].as_str().unwrap();
    let said: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(said, printed["structuredContent"]);
    let out = airlock(
        &[
            "admit",
            "--contract",
            "schemas/change_review",
            "corpora/change_review/near_miss/wrong_id.json",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["isError"], true);
    assert!(printed.get("structuredContent").is_none());
    let envelope: serde_json::Value =
        serde_json::from_str(printed["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(envelope["error"]["code"], "INVALID_RESPONSE");
    assert_eq!(envelope["request_id"], "3");
}

/// A closed stderr (`2>&1 | true` after the reader left) loses the message, never the
/// exit code: a usage error is still 2, not a panic's 101.
#[test]
fn an_error_with_stderr_closed_still_exits_with_its_code() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["mcp", "import", "--tools-list", "no/such/tools_list.json"])
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(2));
}

/// `airlock validate` escapes what it prints: a diagnostic quoting an instance's bidi
/// override or bell shows them as escapes, never raw.
#[test]
fn validate_prints_diagnostics_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(&schema, r#"{"enum": ["ok"]}"#).unwrap();
    let instance = dir.path().join("i.json");
    std::fs::write(&instance, "\"x\u{202E}y\\u0007\"").unwrap();
    let out = airlock(
        &[
            "validate",
            "--schema",
            schema.to_str().unwrap(),
            instance.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains('\u{202E}') && !text.contains('\u{0007}'),
        "{text:?}"
    );
    assert!(text.contains("\\u{202e}"), "{text}");
}

#[test]
fn fuzz_prints_progress_lines_in_a_ci_log_and_none_when_quiet() {
    // The in-process fuzz of the guard, stderr a pipe: a line every --progress seconds
    // (before, only a terminal saw progress).
    let args = [
        "fuzz",
        "--contract",
        "schemas/review_status",
        "--target",
        "admit",
        "--duration",
        "3s",
        "--progress",
        "1",
    ];
    let out = airlock(&args, b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("fuzz: ") && l.contains(" inputs, "))
        .unwrap_or_else(|| panic!("no progress line: {stderr}"));
    assert!(line.contains("/s, ") && line.ends_with('s'), "{line}");
    let mut quiet = args.to_vec();
    quiet[6] = "1s";
    quiet.push("--quiet");
    let out = airlock(&quiet, b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn check_prints_progress_lines_in_a_ci_log_and_none_when_quiet() {
    // stderr is a pipe here, as in a CI job: a line every --progress seconds.
    let args = [
        "check",
        "--contract",
        "schemas/review_status",
        "--cases",
        "40000",
        "--progress",
        "1",
    ];
    let out = airlock(&args, b"");
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("airlock check: contract 1/1 review_status, "))
        .collect();
    assert!(!lines.is_empty(), "{stderr}");
    assert!(
        lines[0].contains(" findings, ") && lines[0].ends_with('s'),
        "{}",
        lines[0]
    );
    let mut quiet = args.to_vec();
    quiet.push("--quiet");
    let out = airlock(&quiet, b"");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("airlock check: contract"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
