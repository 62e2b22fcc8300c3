//! `airlock mcp proxy` end to end with real parts: the official MCP Python SDK client and
//! the test server (tests/mcp/) on either side of the proxy binary. What a real server
//! will not do is in `mcp_proxy_raw`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::root;

pub(crate) const CANARY: &str = "AIRLOCK-CANARY-7f3a9c";

pub(crate) fn airlock_bin() -> &'static str {
    env!("CARGO_BIN_EXE_airlock")
}

/// The venv's Python with the MCP SDK; `None` (with the reason printed) only when it is
/// absent and `AIRLOCK_REQUIRE_MCP` is not set.
pub(crate) fn venv_python() -> Option<PathBuf> {
    let python = root().join("target/mcp-venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("AIRLOCK_REQUIRE_MCP").is_none(),
        "AIRLOCK_REQUIRE_MCP is set but {} is missing; install it with: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r tests/mcp/requirements.txt",
        python.display()
    );
    eprintln!(
        "SKIPPED: the MCP SDK venv {} is absent (install: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r tests/mcp/requirements.txt; AIRLOCK_REQUIRE_MCP=1 makes this a failure)",
        python.display()
    );
    None
}

/// The test server's two tools with an outputSchema: (review, quota). They are
/// `change_review` / `project_quota` once the server's rename has landed, and
/// `review_status` / `quota_usage` before.
pub(crate) fn server_tools() -> (&'static str, &'static str) {
    let server = std::fs::read_to_string(root().join("tests/mcp/server.py")).unwrap();
    if server.contains("def change_review(") {
        ("change_review", "project_quota")
    } else {
        ("review_status", "quota_usage")
    }
}

/// The `outputSchema` the test server lists for `tool` (from the saved capture).
pub(crate) fn listed_schema(tool: &str) -> Value {
    let list: Value = serde_json::from_slice(
        &std::fs::read(root().join("tests/mcp/captures/tools_list.json")).unwrap(),
    )
    .unwrap();
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("{tool} is not in captures/tools_list.json"))["outputSchema"]
        .clone()
}

/// Test contracts for the server's two tools under `dir`: the review tool as
/// schemas/change_review without its `fresh` check (the server's `observed_at` is a fixed
/// time); the quota tool from its listed schema. Both have `max_bytes` and the retry
/// `deadline` (a guarded call unanswered by then gets the proxy's timeout failure).
pub(crate) fn contracts(dir: &Path, max_bytes: u64, deadline: &str) -> (PathBuf, PathBuf) {
    let (review, quota) = server_tools();
    let review_dir = dir.join(review);
    std::fs::create_dir_all(&review_dir).unwrap();
    std::fs::copy(
        root().join("schemas/change_review/v1.schema.json"),
        review_dir.join("v1.schema.json"),
    )
    .unwrap();
    std::fs::write(
        review_dir.join("contract.toml"),
        format!(
            r#"tool = "{review}"
version = 1
[input]
kind = "mcp"
read_only = true
[limits]
max_bytes = {max_bytes}
max_depth = 8
[agent]
fields = ["/change_id", "/decision", "/reviewed_by", "/observed_at"]
[[checks]]
kind = "equals_param"
field = "/change_id"
param = "change_id"
[retry]
max_attempts = 1
deadline = "{deadline}"
retryable = ["UPSTREAM_UNAVAILABLE"]
"#
        ),
    )
    .unwrap();
    let quota_dir = dir.join(quota);
    std::fs::create_dir_all(&quota_dir).unwrap();
    std::fs::write(
        quota_dir.join("v1.schema.json"),
        serde_json::to_vec_pretty(&listed_schema(quota)).unwrap(),
    )
    .unwrap();
    std::fs::write(
        quota_dir.join("contract.toml"),
        format!(
            r#"tool = "{quota}"
version = 1
[input]
kind = "mcp"
read_only = true
[limits]
max_bytes = {max_bytes}
max_depth = 8
[agent]
fields = ["/project_id", "/used", "/limit", "/fraction"]
[[checks]]
kind = "equals_param"
field = "/project_id"
param = "project_id"
[retry]
max_attempts = 1
deadline = "{deadline}"
retryable = ["UPSTREAM_UNAVAILABLE"]
"#
        ),
    )
    .unwrap();
    (review_dir, quota_dir)
}

/// Single-quoted for `shlex.split` (and sh).
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

struct ClientRun {
    status: i32,
    stdout: String,
    stderr: String,
}

impl ClientRun {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("client output is not JSON ({e}): {}", self.stdout))
    }
}

/// Run the SDK client against `server_cmd`, killed after 60 s.
fn sdk_client(python: &Path, server_cmd: &str, extra: &[&str], command: &[&str]) -> ClientRun {
    let mut child = Command::new(python)
        .arg(root().join("tests/mcp/client.py"))
        .args(["--timeout", "30", "--server-cmd", server_cmd])
        .args(extra)
        .args(command)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the client did not finish within 60 s: {server_cmd}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    ClientRun {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `airlock mcp proxy FLAGS -- <python> tests/mcp/server.py --mode MODE`, as one string.
fn proxied_server(python: &Path, flags: &str, mode: &str) -> String {
    format!(
        "{} mcp proxy {flags} -- {} {} --mode {mode}",
        quote(airlock_bin()),
        quote(&python.display().to_string()),
        quote(&root().join("tests/mcp/server.py").display().to_string()),
    )
}

fn contract_flags(dirs: &[&Path]) -> String {
    dirs.iter()
        .map(|d| format!("--contract {}", quote(&d.display().to_string())))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The fixed failure (or another failure code) as the SDK client prints it.
fn assert_failure(run: &ClientRun, code: &str) {
    assert_eq!(run.status, 0, "{}\n{}", run.stdout, run.stderr);
    let result = run.json();
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    let blocks = result["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{result}");
    let text: Value = serde_json::from_str(blocks[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["outcome"], "failure", "{text}");
    assert_eq!(text["error"]["code"], code, "{text}");
}

#[test]
fn tools_list_passes_through_the_proxy() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (review, quota) = contracts(dir.path(), 16384, "60s");
    let run = sdk_client(
        &python,
        &proxied_server(&python, &contract_flags(&[&review, &quota]), "ok"),
        &[],
        &["list"],
    );
    assert_eq!(run.status, 0, "{}\n{}", run.stdout, run.stderr);
    let names: Vec<String> = run.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let (review_tool, quota_tool) = server_tools();
    assert_eq!(names, [review_tool, quota_tool, "echo"]);
    assert!(
        run.stderr.contains("tools without a contract (their calls are refused; said again only when this list changes): echo (no outputSchema)"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("outputSchema differs"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_good_call_arrives_as_the_fresh_value_in_both_protocol_eras() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (review, quota) = contracts(dir.path(), 16384, "60s");
    let audit = dir.path().join("audit.jsonl");
    let flags = format!(
        "{} --audit {}",
        contract_flags(&[&review, &quota]),
        quote(&audit.display().to_string())
    );
    let (review_tool, quota_tool) = server_tools();
    for negotiate in ["legacy", "auto"] {
        let run = sdk_client(
            &python,
            &proxied_server(&python, &flags, "ok"),
            &["--negotiate", negotiate],
            &["call", review_tool, r#"{"change_id":"CR-1"}"#],
        );
        assert_eq!(run.status, 0, "{}\n{}", run.stdout, run.stderr);
        let result = run.json();
        // The server reports the call's own time (the contract's `fresh` check holds).
        let observed_at = result["structuredContent"]["observed_at"].clone();
        let expected = json!({"change_id":"CR-1","decision":"approved","reviewed_by":"alice","observed_at": observed_at});
        assert_eq!(result["structuredContent"], expected, "{result}");
        assert_eq!(result["isError"], false);
        let blocks = result["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 1);
        let text: Value = serde_json::from_str(blocks[0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, expected);
        // The modern era's client requires resultType; the proxy adds it there only.
        assert_eq!(
            result.get("resultType").is_some(),
            negotiate == "auto",
            "{result}"
        );
    }
    let run = sdk_client(
        &python,
        &proxied_server(&python, &flags, "ok"),
        &[],
        &["call", quota_tool, r#"{"project_id":"P-7"}"#],
    );
    assert_eq!(
        run.json()["structuredContent"],
        json!({"project_id":"P-7","used":1200,"limit":5000,"fraction":0.24})
    );
    let records: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{records:?}");
    assert!(
        records.iter().all(|r| r["verdict"] == "admitted"),
        "{records:?}"
    );
    assert_eq!(records[2]["tool"], quota_tool);
}

#[test]
fn hostile_answers_arrive_as_failures_and_the_canary_never_reaches_the_client() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (review, quota) = contracts(dir.path(), 16384, "60s");
    let flags = contract_flags(&[&review, &quota]);
    let (review_tool, quota_tool) = server_tools();
    let cases: Vec<(&str, &str, &str, &str)> = vec![
        (
            "extra_member",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "disagreeing_text",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "non_json_text",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "duplicate_key_text",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "extra_text_block",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "bad_format",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "wrong_enum",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "wrong_type",
            quota_tool,
            r#"{"project_id":"P-7"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "missing_structured",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "INVALID_RESPONSE",
        ),
        (
            "is_error_injection",
            review_tool,
            r#"{"change_id":"CR-1"}"#,
            "TOOL_ERROR",
        ),
        (
            "jsonrpc_error",
            quota_tool,
            r#"{"project_id":"P-7"}"#,
            "UPSTREAM_UNAVAILABLE",
        ),
        (
            "extra_member",
            quota_tool,
            r#"{"project_id":"P-7"}"#,
            "INVALID_RESPONSE",
        ),
    ];
    // Four clients at a time: each is a Python process starting a proxy and a server.
    let runs: Vec<(String, ClientRun, &str)> = cases
        .chunks(4)
        .flat_map(|chunk| {
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|&(mode, tool, arguments, code)| {
                        let server = proxied_server(&python, &flags, mode);
                        let python = &python;
                        scope.spawn(move || {
                            let run = sdk_client(python, &server, &[], &["call", tool, arguments]);
                            (format!("{mode} {tool}"), run, code)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (case, run, code) in &runs {
        assert!(!run.stdout.contains(CANARY), "{case}: {}", run.stdout);
        assert!(!run.stdout.contains("IMPORTANT"), "{case}: {}", run.stdout);
        assert!(
            !run.stderr.contains(CANARY),
            "{case}: the proxy's stderr quotes the server: {}",
            run.stderr
        );
        assert_failure(run, code);
        if *code == "INVALID_RESPONSE" {
            assert!(run.stderr.contains("rejected:"), "{case}: {}", run.stderr);
        }
    }
}

#[test]
fn a_tool_without_a_contract_is_refused_by_default_and_passes_with_unguarded_pass() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let flags = contract_flags(&[&review]);
    let refused = sdk_client(
        &python,
        &proxied_server(&python, &flags, "ok"),
        &[],
        &["call", "echo", r#"{"message":"hi"}"#],
    );
    assert_failure(&refused, "INVALID_RESPONSE");
    assert!(
        refused.stderr.contains("refused a call to tool echo"),
        "{}",
        refused.stderr
    );
    let passed = sdk_client(
        &python,
        &proxied_server(&python, &format!("{flags} --unguarded pass"), "ok"),
        &[],
        &["call", "echo", r#"{"message":"hi"}"#],
    );
    assert_eq!(passed.status, 0, "{}", passed.stderr);
    assert_eq!(passed.json()["content"][0]["text"], "hi");
    assert!(passed.stderr.contains("unguarded"), "{}", passed.stderr);
    // Unguarded means unguarded: the server's injection reaches the client.
    let injected = sdk_client(
        &python,
        &proxied_server(
            &python,
            &format!("{flags} --unguarded pass"),
            "extra_text_block",
        ),
        &[],
        &["call", "echo", r#"{"message":"hi"}"#],
    );
    assert!(injected.stdout.contains(CANARY), "{}", injected.stdout);
}

#[test]
fn a_response_with_the_wrong_id_is_dropped_and_the_call_is_answered_at_its_deadline() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "2s");
    let started = Instant::now();
    let run = sdk_client(
        &python,
        &proxied_server(&python, &contract_flags(&[&review]), "wrong_id"),
        &[],
        &["call", server_tools().0, r#"{"change_id":"CR-1"}"#],
    );
    assert_failure(&run, "UPSTREAM_UNAVAILABLE");
    assert!(
        started.elapsed() < Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    assert!(
        run.stderr.contains("answers no outstanding request"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("no answer within"), "{}", run.stderr);
    assert!(!run.stdout.contains(CANARY));
}

#[test]
fn a_server_crash_mid_call_is_an_error_for_the_client_and_exit_4() {
    let Some(python) = venv_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    // A server that speaks the handshake, then dies on the first tools/call.
    let crash = dir.path().join("crash.py");
    std::fs::write(
        &crash,
        r#"import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {"tools": {}}, "protocolVersion": "2025-11-25", "serverInfo": {"name": "crash", "version": "1"}}}), flush=True)
    elif msg.get("method") == "tools/call":
        sys.exit(9)
"#,
    )
    .unwrap();
    let status_file = dir.path().join("status");
    let server = format!(
        "sh -c {}",
        quote(&format!(
            "{} mcp proxy {} -- {} {}; echo $? > {}",
            quote(airlock_bin()),
            contract_flags(&[&review]),
            quote(&python.display().to_string()),
            quote(&crash.display().to_string()),
            quote(&status_file.display().to_string()),
        ))
    );
    let run = sdk_client(
        &python,
        &server,
        &[],
        &["call", server_tools().0, r#"{"change_id":"CR-1"}"#],
    );
    assert_eq!(run.status, 3, "{}\n{}", run.stdout, run.stderr);
    let error = run.json();
    assert_eq!(
        error["message"], "airlock: the MCP server exited",
        "{error}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !status_file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_to_string(&status_file).unwrap().trim(),
        "4",
        "{}",
        run.stderr
    );
}

// ---- Hand-written JSON-RPC over pipes ----
