//! `airlock mcp proxy` over pipes with hand-written JSON-RPC (shell servers, no SDK), for
//! what a real server will not do: 100 MB lines, ids written last, broken lines, drift,
//! crashes, children holding its stdout, closed pipes, signals, and client requests that
//! could route a call around its guard.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::mcp_proxy::{airlock_bin, contracts, server_tools, CANARY};
use crate::util::root;

/// The proxy with a raw client: lines written to its stdin, its stdout read line by line.
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Receiver<String>,
}

impl Session {
    pub(crate) fn start(flags: &[&str], server_script: &Path) -> Self {
        let mut child = Command::new(airlock_bin())
            .args(["mcp", "proxy"])
            .args(flags)
            .arg("--")
            .arg("sh")
            .arg(server_script)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let (tx, stderr) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                text.push_str(&line);
                text.push('\n');
            }
            let _ = tx.send(text);
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("no line from the proxy within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn vm_hwm_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Close stdin; the exit code (within 10 s) and the whole stderr.
    pub(crate) fn finish(mut self) -> (i32, String) {
        drop(self.stdin.take());
        self.wait()
    }

    fn wait(mut self) -> (i32, String) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("the proxy did not exit within 10 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stderr = self
            .stderr
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_default();
        (status.code().unwrap_or(-1), stderr)
    }
}

pub(crate) fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

pub(crate) fn call(id: u64, tool: &str, change_id: &str) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":{"change_id":change_id}}}).to_string()
}

/// The server's well-behaved answer to a review call, as sh `printf` text.
pub(crate) fn good_answer(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{{\"change_id\":\"CR-1\",\"decision\":\"approved\",\"reviewed_by\":\"alice\",\"observed_at\":\"2026-12-03T08:00:00Z\"}}"}}],"structuredContent":{{"change_id":"CR-1","decision":"approved","reviewed_by":"alice","observed_at":"2026-12-03T08:00:00Z"}},"isError":false}}}}"#
    )
}

fn assert_admitted(answer: &Value, id: u64) {
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["decision"],
        "approved"
    );
}

fn assert_fixed_failure(answer: &Value, id: u64) {
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["error"]["code"], "INVALID_RESPONSE", "{text}");
}

#[test]
fn a_100_mb_answer_is_rejected_as_too_large_without_being_held() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    // id first (as every SDK writes it): the call it answers is known from the prefix;
    // then id last: every pending guarded call gets the fixed failure.
    let server = script(
        dir.path(),
        "big.sh",
        &format!(
            r#"read -r line
printf '{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":"'
head -c 100000000 /dev/zero | tr '\0' a
printf '"}}]}}}}\n'
read -r line
printf '%s\n' '{}'
read -r line
printf '{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"'
head -c 100000000 /dev/zero | tr '\0' a
printf '"}}]}},"id":5}}\n'
read -r line
"#,
            good_answer(4)
        ),
    );
    let audit = dir.path().join("audit.jsonl");
    let mut session = Session::start(
        &[
            "--contract",
            review.to_str().unwrap(),
            "--audit",
            audit.to_str().unwrap(),
        ],
        &server,
    );
    session.send(&call(3, tool, "CR-1"));
    assert_fixed_failure(&session.recv(), 3);
    session.send(&call(4, tool, "CR-1"));
    // Answered only after the whole 100 MB line was skipped.
    assert_admitted(&session.recv(), 4);
    session.send(&call(5, tool, "CR-1"));
    assert_fixed_failure(&session.recv(), 5);
    let peak = session.vm_hwm_kib();
    assert!(peak < 40 * 1024, "the proxy's peak RSS is {peak} KiB");
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    let records: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{records:?}");
    assert_eq!(records[0]["stage"], "limits");
    assert_eq!(records[0]["raw_len"], 16385);
    assert_eq!(records[1]["verdict"], "admitted");
    assert_eq!(records[2]["stage"], "limits");
    assert!(stderr.contains("rejected: limits: max_bytes"), "{stderr}");
}

/// A long answer written `result` first (as the TypeScript SDK writes every response)
/// concludes only the request it answers: a ping's 100 KB answer passes, a guarded call's
/// 100 MB answer rejects that call alone, the other guarded call is judged on its own.
#[test]
fn a_long_answer_with_its_id_last_concludes_only_the_request_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    let server = script(
        dir.path(),
        "id_last.sh",
        &format!(
            r#"read -r line
read -r line
read -r line
printf '{{"result":{{"pad":"'
head -c 100000 /dev/zero | tr '\0' p
printf '"}},"jsonrpc":"2.0","id":8}}\n'
printf '{{"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"'
head -c 100000000 /dev/zero | tr '\0' a
printf '"}}]}},"id":6}}\n'
printf '%s\n' '{}'
read -r line
"#,
            good_answer(7)
        ),
    );
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(&call(6, tool, "CR-1"));
    session.send(&call(7, tool, "CR-1"));
    session.send(r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#);
    let ping = session.recv();
    assert_eq!(ping["id"], 8, "{ping}");
    assert_eq!(ping["result"]["pad"].as_str().unwrap().len(), 100_000);
    assert_fixed_failure(&session.recv(), 6);
    assert_admitted(&session.recv(), 7);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
}

/// A server notification longer than the contracts' bound with its `method` after long
/// `params`, while nothing is outstanding, passes whole (found in review: it was dropped).
#[test]
fn a_long_notification_with_its_method_last_passes_when_nothing_is_outstanding() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let server = script(
        dir.path(),
        "notify.sh",
        r#"read -r line
printf '{"params":{"level":"info","data":"'
head -c 20000 /dev/zero | tr '\0' n
printf '"},"method":"notifications/message","jsonrpc":"2.0"}
'
read -r line
"#,
    );
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let note = session.recv();
    assert_eq!(note["method"], "notifications/message", "{note}");
    assert_eq!(note["params"]["data"].as_str().unwrap().len(), 20_000);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
}

/// Client requests that could take a guarded call around its guard are refused with a
/// JSON-RPC error, never forwarded: a repeated member (read one way here, another way by
/// the server) and a task-augmented call (its result would come by `tasks/result`). A
/// request dropped for its size is answered too.
#[test]
fn requests_that_could_bypass_the_guard_are_refused_and_answered() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    let received = dir.path().join("received");
    let server = script(
        dir.path(),
        "record.sh",
        &format!(
            "while read -r line; do printf '%s\\n' \"$line\" >> {}; done\n",
            received.display()
        ),
    );
    let mut session = Session::start(
        &[
            "--contract",
            review.to_str().unwrap(),
            "--unguarded",
            "pass",
            "--max-message-bytes",
            "4096",
        ],
        &server,
    );
    let repeated = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","name":"other","arguments":{{}}}}}}"#
    );
    session.send(&repeated);
    let answer = session.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(1), json!(-32600)),
        "{answer}"
    );
    let task = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}","arguments":{{"change_id":"CR-1"}},"task":{{"ttl":60000}}}}}}"#
    );
    session.send(&task);
    let answer = session.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(2), json!(-32602)),
        "{answer}"
    );
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("task"));
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "p".repeat(8000)
    );
    session.send(&long);
    let answer = session.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(3), json!(-32600)),
        "{answer}"
    );
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    // None of the three reached the server.
    let forwarded = std::fs::read_to_string(&received).unwrap_or_default();
    assert!(forwarded.is_empty(), "{forwarded}");
}

/// The server exits while a process it started keeps its stdout open: the proxy sees the
/// exit itself, answers what is pending and exits 4 (not at the calls' deadlines).
#[test]
fn a_server_that_exits_leaving_a_child_holding_its_stdout_still_ends_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let server = script(dir.path(), "fork.sh", "read -r line\nsleep 60 &\nexit 5\n");
    let started = Instant::now();
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(&call(3, server_tools().0, "CR-1"));
    let answer = session.recv();
    assert_eq!(answer["id"], 3, "{answer}");
    assert_eq!(answer["error"]["message"], "airlock: the MCP server exited");
    let (status, _) = session.wait();
    assert_eq!(status, 4);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn malformed_and_unknown_lines_are_dropped_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    let server = script(
        dir.path(),
        "noisy.sh",
        &format!(
            r#"read -r line
printf '%s\n' 'this is not JSON {CANARY}'
printf '%s\n' '{{"jsonrpc":"2.0","id":99,"result":{{"note":"{CANARY}"}}}}'
printf '%s\n' '{{"jsonrpc":"2.0","id":3,"id":7,"result":{{"note":"{CANARY}"}}}}'
printf '%s\n' '{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"ok"}}}}'
printf '%s\n' '{}'
read -r line
"#,
            good_answer(3)
        ),
    );
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send("garbage from the client");
    session.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#);
    let refused = session.recv();
    assert_eq!(refused["id"], 1);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    session.send(&call(3, tool, "CR-1"));
    let notification = session.recv();
    assert_eq!(notification["method"], "notifications/message");
    assert_admitted(&session.recv(), 3);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("dropped a client line that is not one strict JSON object"),
        "{stderr}"
    );
    assert!(
        stderr.contains("dropped a server line that is not JSON"),
        "{stderr}"
    );
    assert!(
        stderr.contains("id 99 that answers no outstanding request"),
        "{stderr}"
    );
    assert!(stderr.contains("ambiguous id"), "{stderr}");
    assert!(!stderr.contains(CANARY), "{stderr}");
}

#[test]
fn the_client_closing_early_ends_the_server_and_answers_what_is_pending() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    // A server that never answers nor exits on its own.
    let server = script(dir.path(), "stuck.sh", "trap '' TERM\nsleep 60\n");
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(&call(3, server_tools().0, "CR-1"));
    drop(session.stdin.take());
    let started = Instant::now();
    let answer = session.recv();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["error"]["message"], "airlock: the MCP server exited");
    let (status, stderr) = session.wait();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_closed_client_stdout_kills_the_server_and_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let pid_file = dir.path().join("server.pid");
    let server = script(
        dir.path(),
        "answer.sh",
        &format!(
            "echo $$ > {}\nread -r line\nprintf '%s\\n' '{}'\nsleep 60\n",
            pid_file.display(),
            good_answer(3)
        ),
    );
    let mut proxy = Command::new(airlock_bin())
        .args(["mcp", "proxy", "--contract"])
        .arg(&review)
        .args(["--", "sh"])
        .arg(&server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Nobody reads the proxy's stdout: its answer meets a closed pipe.
    drop(proxy.stdout.take());
    let mut stdin = proxy.stdin.take().unwrap();
    writeln!(stdin, "{}", call(3, server_tools().0, "CR-1")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = proxy.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the proxy did not exit");
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = String::new();
    let status = status.code().unwrap_or(-1);
    assert_eq!(status, 0, "{stderr}");
    drop(stdin);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(
        !Path::new(&format!("/proc/{}", pid.trim())).exists(),
        "the server {pid} is still running"
    );
}

#[test]
fn sigterm_kills_the_server_and_exits_143() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let pid_file = dir.path().join("server.pid");
    let server = script(
        dir.path(),
        "idle.sh",
        &format!("echo $$ > {}\nsleep 60\n", pid_file.display()),
    );
    let session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&pid_file).map_or(true, |p| p.trim().is_empty()) {
        assert!(Instant::now() < deadline, "the server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Command::new("kill")
        .args(["-TERM", &session.child.id().to_string()])
        .status()
        .unwrap();
    let (status, _) = session.wait();
    assert_eq!(status, 143);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(!Path::new(&format!("/proc/{}", pid.trim())).exists());
}

#[test]
fn drift_is_reported_and_strict_drift_refuses_the_list_and_the_calls() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    // The server lists the review tool with a schema that differs from the contract (a
    // member added) and a tool the proxy has no contract for.
    let mut schema: Value =
        serde_json::from_slice(&std::fs::read(review.join("v1.schema.json")).unwrap()).unwrap();
    schema["properties"]["comment"] = json!({"type": "string"});
    let list = json!({"jsonrpc":"2.0","id":2,"result":{"tools":[
        {"name": tool, "inputSchema": {"type":"object"}, "outputSchema": schema},
        {"name": "other", "inputSchema": {"type":"object"}}
    ]}})
    .to_string();
    let received = dir.path().join("received");
    let server = script(
        dir.path(),
        "list.sh",
        &format!(
            "read -r line\nprintf '%s\\n' '{list}'\nwhile read -r line; do printf '%s\\n' \"$line\" >> {}; done\n",
            received.display()
        ),
    );
    let list_request = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(list_request);
    let answer = session.recv();
    assert_eq!(answer, serde_json::from_str::<Value>(&list).unwrap());
    let (status, stderr) = session.finish();
    assert_eq!(status, 0);
    assert!(
        stderr.contains(&format!("drift: tool {tool}: outputSchema differs from"))
            && stderr.contains("v1.schema.json"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tools without a contract (their calls are refused; said again only when this list changes): other (no outputSchema)"),
        "{stderr}"
    );

    let mut session = Session::start(
        &["--contract", review.to_str().unwrap(), "--strict-drift"],
        &server,
    );
    session.send(list_request);
    let answer = session.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(
        answer["error"]["message"],
        format!("airlock: outputSchema drift for tools: {tool}")
    );
    session.send(&call(3, tool, "CR-1"));
    assert_fixed_failure(&session.recv(), 3);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    // The refused call never reached the server.
    let forwarded = std::fs::read_to_string(&received).unwrap_or_default();
    assert!(!forwarded.contains("tools/call"), "{forwarded}");
}

#[test]
fn a_server_that_exits_mid_call_answers_pending_requests_and_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let server = script(dir.path(), "die.sh", "read -r line\nread -r line\nexit 1\n");
    let mut session = Session::start(&["--contract", review.to_str().unwrap()], &server);
    session.send(r#"{"jsonrpc":"2.0","id":"list-1","method":"tools/list"}"#);
    session.send(&call(3, server_tools().0, "CR-1"));
    let mut ids: Vec<Value> = (0..2)
        .map(|_| {
            let answer = session.recv();
            assert_eq!(answer["error"]["message"], "airlock: the MCP server exited");
            answer["id"].clone()
        })
        .collect();
    ids.sort_by_key(Value::to_string);
    assert_eq!(ids, [json!("list-1"), json!(3)]);
    let (status, _) = session.wait();
    assert_eq!(status, 4);
}

/// A `tools/list` answer a client may read otherwise than the proxy compares it is drift:
/// a tool listed twice (drifted, then as the contract says) and a repeated
/// `outputSchema` member are refused with --strict-drift.
#[test]
fn a_tool_listed_twice_or_a_repeated_output_schema_is_drift() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let tool = server_tools().0;
    let schema = std::fs::read_to_string(review.join("v1.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&schema).unwrap();
    let twice = json!({"jsonrpc":"2.0","id":2,"result":{"tools":[
        {"name": tool, "inputSchema": {"type":"object"}, "outputSchema": {"type":"object"}},
        {"name": tool, "inputSchema": {"type":"object"}, "outputSchema": schema}
    ]}})
    .to_string();
    let repeated = format!(
        r#"{{"jsonrpc":"2.0","id":3,"result":{{"tools":[{{"name":"{tool}","inputSchema":{{"type":"object"}},"outputSchema":{{"type":"object"}},"outputSchema":{schema}}}]}}}}"#
    );
    let server = script(
        dir.path(),
        "lists.sh",
        &format!(
            "read -r line\nprintf '%s\\n' '{twice}'\nread -r line\nprintf '%s\\n' '{repeated}'\nread -r line\n"
        ),
    );
    let mut session = Session::start(
        &["--contract", review.to_str().unwrap(), "--strict-drift"],
        &server,
    );
    for id in [2, 3] {
        session.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#
        ));
        let answer = session.recv();
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer["error"]["message"].is_string(), "{answer}");
    }
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(stderr.contains("is listed twice"), "{stderr}");
    assert!(stderr.contains("not strict JSON"), "{stderr}");
}

#[test]
fn contracts_that_are_not_mcp_or_share_a_tool_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "60s");
    let out = Command::new(airlock_bin())
        .args([
            "mcp",
            "proxy",
            "--contract",
            "schemas/review_status",
            "--",
            "true",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("schemas/review_status") && stderr.contains("mcp"),
        "{stderr}"
    );
    let out = Command::new(airlock_bin())
        .args(["mcp", "proxy", "--contract"])
        .arg(&review)
        .arg("--contract")
        .arg(&review)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("two contracts for the tool"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_guarded_call_unanswered_by_its_deadline_gets_upstream_unavailable_and_an_audit_record() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 16384, "1s");
    let server = script(dir.path(), "silent.sh", "while read -r line; do :; done\n");
    let audit = dir.path().join("audit.jsonl");
    let mut session = Session::start(
        &[
            "--contract",
            review.to_str().unwrap(),
            "--audit",
            audit.to_str().unwrap(),
        ],
        &server,
    );
    let started = Instant::now();
    session.send(&call(3, server_tools().0, "CR-1"));
    let answer = session.recv();
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer["id"], 3);
    let text: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        text["error"],
        json!({"code": "UPSTREAM_UNAVAILABLE", "retryable": true})
    );
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    let record: Value =
        serde_json::from_str(std::fs::read_to_string(&audit).unwrap().trim()).unwrap();
    assert_eq!(record["verdict"], "transport_failure");
    assert_eq!(record["diagnostic"]["keyword"], "timeout");
}

#[test]
fn lines_over_max_message_bytes_are_dropped_and_the_request_they_answer_gets_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (review, _) = contracts(dir.path(), 4096, "60s");
    let big_list = json!({"jsonrpc":"2.0","id":2,"result":{"tools":[],"padding":"x".repeat(8000)}});
    let received = dir.path().join("received");
    let server = script(
        dir.path(),
        "lists.sh",
        &format!(
            "read -r line\nprintf '%s\\n' '{big_list}'\nwhile read -r line; do printf '%s\\n' \"$line\" >> {}; done\n",
            received.display()
        ),
    );
    let mut session = Session::start(
        &[
            "--contract",
            review.to_str().unwrap(),
            "--max-message-bytes",
            "6000",
        ],
        &server,
    );
    session.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answer = session.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(
        answer["error"]["message"],
        "airlock: the MCP server's answer exceeded --max-message-bytes"
    );
    session.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"p":"{}"}}}}"#,
        "y".repeat(7000)
    ));
    session.send(r#"{"jsonrpc":"2.0","method":"notifications/small"}"#);
    let (status, stderr) = session.finish();
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains("dropped a server line over 6000 bytes"),
        "{stderr}"
    );
    assert!(
        stderr.contains("dropped a client line over 6000 bytes"),
        "{stderr}"
    );
    let forwarded = std::fs::read_to_string(&received).unwrap();
    assert_eq!(
        forwarded,
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/small\"}\n"
    );
}
