//! `airlock mcp proxy` modes and the rest of what real traffic needs (issue 20): shadow
//! mode, recording answers as fixtures, the deadline's `notifications/cancelled` and the
//! tombstones behind it, tools with side effects, `--contracts DIR`, no contract at all
//! under `--unguarded pass`, calls without an id, and uncontracted tools said once.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::mcp_proxy::{airlock_bin, contracts, server_tools, CANARY};
use crate::mcp_proxy_raw::{call, good_answer, script, Session};

/// The review tool's answer with an extra member carrying the canary (refused by its
/// contract), as sh `printf` text.
fn hostile_answer(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok"}}],"structuredContent":{{"change_id":"CR-1","decision":"approved","reviewed_by":"alice","observed_at":"2026-12-03T08:00:00Z","note":"{CANARY}"}},"isError":false}}}}"#
    )
}

fn code(answer: &Value) -> (String, bool) {
    let text: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    (
        text["error"]["code"].as_str().unwrap().to_owned(),
        text["error"]["retryable"].as_bool().unwrap(),
    )
}

fn audit_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn shadow_mode_passes_the_servers_answer_and_audits_what_enforce_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    let hostile = hostile_answer(3);
    let server = script(
        dir.path(),
        "hostile.sh",
        &format!(
            "read -r line\nprintf '%s\\n' '{hostile}'\nread -r line\nprintf '%s\\n' '{}'\nread -r line\n",
            good_answer(4)
        ),
    );
    let audit = dir.path().join("audit.jsonl");
    let mut session = Session::start(
        &[
            "--contract",
            review.to_str().unwrap(),
            "--mode",
            "shadow",
            "--audit",
            audit.to_str().unwrap(),
        ],
        &server,
    );
    session.send(&call(3, tool, "CR-1"));
    // The client gets the server's own answer, as it came.
    let answer = session.recv();
    assert_eq!(answer, serde_json::from_str::<Value>(&hostile).unwrap());
    session.send(&call(4, tool, "CR-1"));
    assert_eq!(
        session.recv(),
        serde_json::from_str::<Value>(&good_answer(4)).unwrap()
    );
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("rejected"), "{stderr}");
    assert!(
        stderr.contains("shadow: the client got the server's answer; enforce would have sent"),
        "{stderr}"
    );
    assert!(stderr.contains("INVALID_RESPONSE"), "{stderr}");
    let verdicts: Vec<Value> = audit_records(&audit)
        .iter()
        .map(|r| r["verdict"].clone())
        .collect();
    assert_eq!(verdicts, [json!("rejected"), json!("admitted")]);
}

#[test]
fn recorded_answers_become_a_corpus_that_check_runs_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    let server = script(
        dir.path(),
        "two.sh",
        &format!(
            "read -r line\nprintf '%s\\n' '{}'\nread -r line\nprintf '%s\\n' '{}'\nread -r line\n",
            good_answer(3),
            hostile_answer(4)
        ),
    );
    let recorded = dir.path().join("recorded");
    let mut session = Session::start(
        &[
            "--contract",
            review.to_str().unwrap(),
            "--record",
            recorded.to_str().unwrap(),
        ],
        &server,
    );
    session.send(&call(3, tool, "CR-1"));
    assert_eq!(session.recv()["result"]["isError"], false);
    session.send(&call(4, tool, "CR-1"));
    assert_eq!(session.recv()["result"]["isError"], true);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    let corpus = recorded.join(tool);
    let files = |sub: &str| -> Vec<PathBuf> {
        let mut f: Vec<PathBuf> = std::fs::read_dir(corpus.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        f.sort();
        f
    };
    let accepted = files("accepted");
    assert_eq!(accepted.len(), 2, "{accepted:?}");
    let request: Value = serde_json::from_slice(&std::fs::read(&accepted[1]).unwrap()).unwrap();
    assert!(accepted[1].to_str().unwrap().ends_with(".request.json"));
    assert_eq!(request["jsonrpc_id"], 3);
    assert_eq!(request["params"], json!({"change_id": "CR-1"}));
    let raw = std::fs::read_to_string(&accepted[0]).unwrap();
    assert_eq!(raw.trim_end(), good_answer(3));
    let review_files = files("review");
    assert_eq!(review_files.len(), 2, "{review_files:?}");
    assert!(corpus.join("request.json").is_file());
    assert!(stderr.contains("recorded the refused answer"), "{stderr}");
    // `airlock check` runs on the recording as it is (review/ is never run).
    let check = Command::new(airlock_bin())
        .args(["check", "--contract"])
        .arg(&review)
        .arg("--corpus")
        .arg(&corpus)
        .args(["--cases", "20", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn a_deadline_cancels_the_call_at_the_server_and_tombstones_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "1s");
    let tool = server_tools().0;
    let seen = dir.path().join("seen.jsonl");
    // The server takes the call, then writes what it reads next (the proxy's cancel) to a
    // file, then answers the call late; then answers the next call on time.
    let server = script(
        dir.path(),
        "slow.sh",
        &format!(
            "read -r line\nread -r cancel\nprintf '%s\\n' \"$cancel\" > {seen}\nprintf '%s\\n' '{}'\nread -r line\nprintf '%s\\n' '{}'\nread -r line\n",
            good_answer(3),
            good_answer(4),
            seen = seen.display()
        ),
    );
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(&call(3, tool, "CR-1"));
    let timeout = session.recv();
    assert_eq!(timeout["id"], 3);
    assert_eq!(
        code(&timeout),
        ("UPSTREAM_UNAVAILABLE".to_owned(), true),
        "{timeout}"
    );
    // The id of the expired call cannot be used again: the late answer must never
    // answer another request raw.
    session.send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    let refused = session.recv();
    assert_eq!(refused["id"], 3);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    session.send(&call(4, tool, "CR-1"));
    let next = session.recv();
    assert_eq!(next["id"], 4, "{next}");
    assert_eq!(next["result"]["isError"], false);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    let cancel: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(cancel["method"], "notifications/cancelled", "{cancel}");
    assert_eq!(cancel["params"]["requestId"], 3);
    assert!(
        stderr.contains("dropped a late server response with id 3"),
        "{stderr}"
    );
}

/// A copy of the review contract whose `[input]` says the tool has side effects.
fn with_side_effects(review: &Path, idempotent: bool) -> PathBuf {
    let manifest = review.join("contract.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace(
        "read_only = true",
        &format!("read_only = false\nidempotent = {idempotent}"),
    );
    std::fs::write(&manifest, text).unwrap();
    review.to_path_buf()
}

#[test]
fn a_refused_result_of_a_tool_with_side_effects_says_its_outcome_is_unverified() {
    for idempotent in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (review, _) = contracts(dir.path(), 16384, "60s");
        let review = with_side_effects(&review, idempotent);
        let tool = server_tools().0;
        let server = script(
            dir.path(),
            "write.sh",
            &format!(
                "read -r line\nprintf '%s\\n' '{}'\nread -r line\nprintf '%s\\n' '{}'\nread -r line\n",
                hostile_answer(3),
                r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"ENOENT: AIRLOCK-CANARY-7f3a9c"}],"isError":true}}"#
            ),
        );
        let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
        session.send(&call(3, tool, "CR-1"));
        let refused = session.recv();
        assert_eq!(
            code(&refused),
            ("OUTCOME_UNVERIFIED".to_owned(), idempotent),
            "{refused}"
        );
        session.send(&call(4, tool, "CR-1"));
        let tool_error = session.recv();
        assert_eq!(code(&tool_error), ("TOOL_ERROR".to_owned(), false));
        assert!(!tool_error.to_string().contains(CANARY));
        let (status, stderr) = session.finish();
        assert_eq!(status, 0, "{stderr}");
    }
}

#[test]
fn contracts_folders_and_unguarded_pass_without_any_contract() {
    let dir = tempfile::tempdir().unwrap();
    let schemas = dir.path().join("schemas");
    contracts(&schemas, 16384, "60s");
    // An envelope contract among them is skipped.
    crate::util::copy_shipped("review_status", dir.path());
    let tool = server_tools().0;
    let server = script(
        dir.path(),
        "one.sh",
        &format!(
            "read -r line\nprintf '%s\\n' '{}'\nread -r line\n",
            hostile_answer(3)
        ),
    );
    let mut session = Session::start(&["--contracts", schemas.to_str().unwrap()], &server);
    session.send(&call(3, tool, "CR-1"));
    assert_eq!(code(&session.recv()).0, "INVALID_RESPONSE");
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");

    // No contract: relayed under --unguarded pass, a usage error otherwise.
    let mut session = Session::start(&["--unguarded", "pass"], &server);
    session.send(&call(3, tool, "CR-1"));
    assert_eq!(
        session.recv(),
        serde_json::from_str::<Value>(&hostile_answer(3)).unwrap()
    );
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    let refused = Command::new(airlock_bin())
        .args(["mcp", "proxy", "--", "sh"])
        .arg(&server)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no contract"));
}

#[test]
fn a_call_without_an_id_is_never_forwarded_and_uncontracted_tools_are_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    let list = r#"{"jsonrpc":"2.0","id":ID,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#;
    // The server echoes every line it reads to a file, and answers two tools/list calls.
    let seen = dir.path().join("seen.txt");
    let server = script(
        dir.path(),
        "list.sh",
        &format!(
            "read -r line\nprintf '%s\\n' \"$line\" >> {seen}\nprintf '%s\\n' '{}'\nread -r line\nprintf '%s\\n' \"$line\" >> {seen}\nprintf '%s\\n' '{}'\nread -r line\n",
            list.replace("ID", "5"),
            list.replace("ID", "6"),
            seen = seen.display()
        ),
    );
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(
        &json!({"jsonrpc":"2.0","method":"tools/call","params":{"name":tool,"arguments":{"change_id":"CR-1"}}})
            .to_string(),
    );
    session.send(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    assert_eq!(session.recv()["id"], 5);
    session.send(r#"{"jsonrpc":"2.0","id":6,"method":"tools/list"}"#);
    assert_eq!(session.recv()["id"], 6);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    let forwarded = std::fs::read_to_string(&seen).unwrap();
    assert!(!forwarded.contains("tools/call"), "{forwarded}");
    assert!(
        stderr.contains("dropped a tools/call without an id"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("tools without a contract").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("echo (no outputSchema)"), "{stderr}");
}

/// `airlock check` builds its MCP text cases from the contract's own text rule: under
/// `consistent` and `ignore` prose and (under `ignore`) disagreeing JSON in a text block
/// are admitted cases whose canaries must still never reach the agent, so a contract
/// using the documented fix can pass (it could not: exit 2, cases built as must-reject).
#[test]
fn check_builds_text_cases_from_the_contracts_text_rule() {
    for rule in ["consistent", "ignore"] {
        let dir = tempfile::tempdir().unwrap();
        let contract = crate::util::copy_shipped("change_review", dir.path());
        let manifest = contract.join("contract.toml");
        let text = std::fs::read_to_string(&manifest).unwrap().replace(
            "kind = \"mcp\"\n",
            &format!("kind = \"mcp\"\ntext = \"{rule}\"\n"),
        );
        std::fs::write(&manifest, text).unwrap();
        // The near misses only a stricter rule refuses are admitted answers here: prose
        // (a first or a second block) under both, JSON text that disagrees under ignore.
        let admitted: &[&str] = match rule {
            "consistent" => &["non_json_text", "extra_text_block"],
            _ => &[
                "non_json_text",
                "extra_text_block",
                "disagreeing_text",
                "duplicate_key_text",
            ],
        };
        for name in admitted {
            let near_miss = dir.path().join("corpora/change_review/near_miss");
            std::fs::remove_file(near_miss.join(format!("{name}.json"))).unwrap();
            let _ = std::fs::remove_file(near_miss.join(format!("{name}.request.json")));
        }
        let check = Command::new(airlock_bin())
            .args(["check", "--contract"])
            .arg(&contract)
            .args(["--cases", "50", "--format", "json"])
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&check.stdout);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{rule}: {report}{}",
            String::from_utf8_lossy(&check.stderr)
        );
        // The text classes ran, as admitted cases.
        assert!(report.contains("mcp-text-instructions"), "{rule}");
    }
}

/// A re-encoded MCP case is measured as sent, with the JSON-RPC message around it: near
/// the limit, no case built to be admitted is over `max_bytes` (it was: the size was
/// checked on structuredContent alone, and `check` stopped with contract errors).
#[test]
fn reencoded_mcp_cases_fit_the_limit_with_the_message_around_them() {
    let dir = tempfile::tempdir().unwrap();
    let contract = crate::util::copy_shipped("change_review", dir.path());
    let manifest = contract.join("contract.toml");
    let text = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("max_bytes = 16384", "max_bytes = 360");
    std::fs::write(&manifest, text).unwrap();
    let out = dir.path().join("variants");
    let mutate = Command::new(airlock_bin())
        .args(["mutate", "--class", "reencoding", "--contract"])
        .arg(&contract)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(mutate.status.code(), Some(0));
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with("-reencoding.json") {
            let len = std::fs::metadata(&path).unwrap().len();
            assert!(len <= 360, "{name}: {len} bytes");
        }
    }
    let check = Command::new(airlock_bin())
        .args(["check", "--cases", "50", "--quiet", "--contract"])
        .arg(&contract)
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

/// A process the server started that left its group (`setsid`) dies with the proxy (it
/// survived before: the proxy was no subreaper).
#[test]
fn a_servers_setsid_descendant_does_not_outlive_the_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let pid_file = dir.path().join("pid");
    let server = script(
        dir.path(),
        "escape.sh",
        &format!(
            "setsid sleep 300 &\necho $! > {}\nwhile read -r line; do :; done\n",
            pid_file.display()
        ),
    );
    let session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    let start = std::time::Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .is_some_and(|stat| {
            !stat[stat.rfind(')').unwrap() + 1..]
                .trim_start()
                .starts_with('Z')
        });
    assert!(
        !alive,
        "the server's setsid descendant {pid} outlived the proxy"
    );
}
