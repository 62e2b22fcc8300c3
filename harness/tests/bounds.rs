//! What bounds `airlock` whatever it is given: a hostile adapter (given up on, cut by
//! `--max-duration`, its escaped descendants killed, on SIGTERM too), a closed or full
//! stdout, unwritable paths, out-of-range arguments, exponential schemas (the files a
//! user names: `named_files.rs`).

use airlock_guard::{Contract, Guard, Request};
use airlock_harness::adapter::{Adapter, AdapterFailure, Answer, GuardAdapter};
use airlock_harness::cases::Upstream;
use airlock_harness::check::{Check, MAX_REPRODUCERS_PER_CLASS};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::{airlock, contract_dir, root};

fn adapter_script(name: &str) -> String {
    format!(
        "sh {}",
        root().join("harness/tests/adapters").join(name).display()
    )
}

/// `airlock` with `args` and extra environment, stdin closed; its output.
fn airlock_env(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_airlock"));
    command
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn json_report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_adapter_printing_garbage_is_given_up_on_after_five_consecutive_protocol_violations() {
    let dir = tempfile::tempdir().unwrap();
    let out = airlock(
        &[
            "check",
            "--contract",
            "schemas/review_status",
            "--cases",
            "20",
            "--format",
            "json",
            "--reproducers",
            dir.path().to_str().unwrap(),
            "--adapter-cmd",
            &adapter_script("garbage.sh"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_report(&out);
    let contract = &report["contracts"][0];
    assert_eq!(contract["cases"], 5, "{contract}");
    assert!(contract["not_run"].as_u64().unwrap() > 100, "{contract}");
    let last = contract["findings"].as_array().unwrap().last().unwrap();
    assert_eq!(last["case"], "adapter/given-up");
    assert_eq!(last["kind"], "protocol");
}

#[test]
fn max_duration_bounds_a_run_whose_adapter_answers_slowly_but_in_time() {
    let start = Instant::now();
    let out = airlock_env(
        &[
            "check",
            "--contract",
            "schemas/review_status",
            "--cases",
            "100",
            "--max-duration",
            "1500ms",
            "--format",
            "json",
            "--adapter-cmd",
            &adapter_script("slow_guard.sh"),
        ],
        &[("AIRLOCK_BIN", Path::new(env!("CARGO_BIN_EXE_airlock")))],
    );
    let elapsed = start.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let report = json_report(&out);
    let contract = &report["contracts"][0];
    let findings = contract["findings"].as_array().unwrap();
    assert!(contract["cases"].as_u64().unwrap() > 0, "some cases ran");
    assert!(contract["not_run"].as_u64().unwrap() > 0, "{contract}");
    assert_eq!(
        findings.len(),
        1,
        "only the bound is a finding: {findings:?}"
    );
    assert_eq!(findings[0]["case"], "adapter/max-duration");
    assert_eq!(findings[0]["kind"], "timeout");
}

/// The guard with the tool of every agent value misspelled: a `value` finding on every
/// case, in every class.
pub(crate) struct WrongTool(pub(crate) GuardAdapter);

impl Adapter for WrongTool {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let Answer::Value(mut value) = self.0.answer(request, upstream)? else {
            unreachable!("the guard adapter answers with values");
        };
        value["tool"] = Value::from("not_the_tool");
        Ok(value.into())
    }
}

pub(crate) fn files_under(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    out
}

#[test]
fn reproducers_are_capped_per_contract_and_class_and_the_rest_are_counted_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let guard = Guard::new(Contract::load(contract_dir("review_status")).unwrap());
    let mut adapter = WrongTool(GuardAdapter::new([guard]));
    let report = Check::contract(contract_dir("review_status"))
        .random_cases(0)
        .reproducers(dir.path())
        .run(&mut adapter)
        .unwrap();
    let contract = &report.contracts[0];
    let written = files_under(dir.path(), ".case.json").len();
    // Every finding here is a `value` one: one kind per class.
    assert!(
        written <= MAX_REPRODUCERS_PER_CLASS * contract.classes.len(),
        "{written} reproducers for {} classes",
        contract.classes.len()
    );
    assert!(contract.findings.len() > written);
    assert_eq!(
        contract.reproducers_not_written,
        contract.findings.len() - written
    );
    assert!(report.human(false).contains(&format!(
        "and {} more reproducers not written",
        contract.reproducers_not_written
    )));
    let json: Value = serde_json::from_str(&report.json()).unwrap();
    assert_eq!(
        json["contracts"][0]["reproducers_not_written"],
        contract.reproducers_not_written
    );
}

#[test]
fn cases_beyond_the_documented_maximum_are_a_usage_error() {
    for cases in ["18446744073709551615", "100001"] {
        let out = airlock(&["check", "--cases", cases], b"");
        assert_eq!(
            out.status.code(),
            Some(2),
            "--cases {cases}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("100000"), "{}", stderr(&out));
    }
}

#[test]
fn a_zero_timeout_is_a_usage_error() {
    let out = airlock(&["check", "--cases", "0", "--timeout-ms", "0"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--timeout-ms"), "{}", stderr(&out));
}

/// Whether `pid` is gone (or a zombie, which holds no resources but its slot).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z')),
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn sigterm_kills_the_adapter_and_a_descendant_that_escaped_with_setsid_then_exits_143() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let child = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "check",
            "--contract",
            "schemas/review_status",
            "--cases",
            "0",
            "--timeout-ms",
            "60000",
            "--reproducers",
            dir.path().to_str().unwrap(),
            "--adapter-cmd",
            &adapter_script("escape.sh"),
        ])
        .env("AIRLOCK_TEST_PIDS", &pid_file)
        .current_dir(root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the adapter and its escaped child wrote their pids", || {
        pids(&pid_file).len() == 2
    });
    let airlock_pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(airlock_pid, rustix::process::Signal::TERM).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    for pid in pids(&pid_file) {
        wait_until(&format!("process {pid} is still running"), || gone(pid));
    }
}

#[test]
fn a_descendant_that_escaped_with_setsid_is_killed_when_its_adapter_is() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let out = airlock_env(
        &[
            "check",
            "--contract",
            "schemas/review_status",
            "--cases",
            "0",
            "--reproducers",
            dir.path().to_str().unwrap(),
            "--adapter-cmd",
            &adapter_script("escape_and_die.sh"),
        ],
        &[("AIRLOCK_TEST_PIDS", &pid_file)],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let escaped = pids(&pid_file);
    assert!(!escaped.is_empty());
    // airlock has exited: whatever it did not kill lives on under init.
    for pid in escaped {
        assert!(gone(pid), "process {pid} escaped");
    }
}

/// Run `airlock args` with `input` on stdin and its stdout a pipe whose reader is already
/// gone.
fn with_stdout_closed(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // A command that never reads its stdin closes the pipe: the write may fail.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// A `tools/call` of a tool no contract names, as an MCP client sends it.
const UNCONTRACTED_CALL: &[u8] =
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\",\"arguments\":{}}}\n";

/// The proxy, every contract of the repository, in front of a stdio MCP server that reads
/// everything and answers nothing.
const PROXY_SILENT_SERVER: [&str; 8] = [
    "mcp",
    "proxy",
    "--contracts",
    "schemas",
    "--",
    "sh",
    "-c",
    "cat >/dev/null",
];

#[test]
fn a_closed_stdout_ends_every_command_quietly_with_the_exit_code_of_its_work() {
    let garbage = adapter_script("garbage.sh");
    let fixture = "corpora/review_status/accepted/success_approved_compact.json";
    let dir = tempfile::tempdir().unwrap();
    let reproducers = dir.path().to_str().unwrap();
    let out = |name: &str| dir.path().join(name).display().to_string();
    let (init_out, import_out) = (out("init"), out("import"));
    let cases: [(&[&str], &[u8], i32); 13] = [
        (&["lint"], b"", 0),
        (&["lint", "--list-rules"], b"", 0),
        (
            &["check", "--cases", "0", "--reproducers", reproducers],
            b"",
            0,
        ),
        (
            &[
                "check",
                "--contract",
                "schemas/review_status",
                "--cases",
                "0",
                "--reproducers",
                reproducers,
                "--adapter-cmd",
                &garbage,
            ],
            b"",
            1,
        ),
        (&["certify", "--contract", "schemas/review_status"], b"", 1),
        (
            &["admit", "--contract", "schemas/review_status", fixture],
            b"",
            0,
        ),
        (
            &[
                "validate",
                "--schema",
                "schemas/review_status/v2.schema.json",
                fixture,
            ],
            b"",
            0,
        ),
        (&["mutate", "--list-classes"], b"", 0),
        (
            &[
                "fuzz",
                "--contract",
                "schemas/review_status",
                "--runs",
                "20",
            ],
            b"",
            0,
        ),
        (
            &["init", "sampled", "--sample", fixture, "--out", &init_out],
            b"",
            0,
        ),
        (
            &[
                "mcp",
                "import",
                "--tools-list",
                "tests/mcp/captures/tools_list.memory.json",
                "--out",
                &import_out,
            ],
            b"",
            0,
        ),
        // The client stops reading: the proxy ends quietly (docs/mcp.md, exit 0).
        (&PROXY_SILENT_SERVER, UNCONTRACTED_CALL, 0),
        // The sidecar stops at the first failed write (exit 3).
        (
            &["guard", "--contract", "schemas/review_status"],
            b"not a case\n",
            3,
        ),
    ];
    for (args, input, code) in cases {
        let out = with_stdout_closed(args, input);
        let err = stderr(&out);
        // (The closing summary of `check` counts "contract errors": not an error.) The
        // sidecar's stdout is its protocol: a failed write there is its error, said once.
        let error_expected = args[0] == "guard";
        assert!(
            !err.contains("panicked")
                && !err.contains("internal error")
                && err.contains("airlock: error") == error_expected,
            "{args:?}: {err}"
        );
        if error_expected {
            assert_eq!(err.matches("Broken pipe").count(), 1, "{err}");
        }
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    }
}

#[test]
fn guard_stops_at_the_first_failed_write_with_exit_3() {
    // A pipe whose reader is gone, and a descriptor that is closed.
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(["guard", "--contract", "schemas/review_status"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map(|mut child| {
            drop(child.stdout.take());
            let mut stdin = child.stdin.take().unwrap();
            // Unbounded input: only a stop at the first failed write ends it.
            let writer = std::thread::spawn(move || {
                use std::io::Write;
                while stdin.write_all(b"not a case\n").is_ok() {}
            });
            let out = child.wait_with_output().unwrap();
            writer.join().unwrap();
            out
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    let closed = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec {} guard --contract schemas/review_status >&-",
            env!("CARGO_BIN_EXE_airlock")
        ))
        .current_dir(root())
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .unwrap();
    assert_eq!(closed.status.code(), Some(3), "{}", stderr(&closed));
    assert!(stderr(&closed).contains("stdout"), "{}", stderr(&closed));
}

#[test]
fn output_that_cannot_be_written_exits_3_naming_it() {
    let out = airlock(&["check", "--cases", "0", "--output", "/dev/full"], b"");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("/dev/full"), "{}", stderr(&out));
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .arg("lint")
        .current_dir(root())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("writing stdout") && !stderr(&out).contains("internal error"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_reproducer_folder_that_cannot_be_written_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let folder = file.join("reproducers");
    let out = airlock(
        &[
            "check",
            "--contract",
            "schemas/review_status",
            "--cases",
            "0",
            "--reproducers",
            folder.to_str().unwrap(),
            "--adapter-cmd",
            &adapter_script("garbage.sh"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(folder.to_str().unwrap()),
        "{}",
        stderr(&out)
    );
}

/// Every command with a stderr whose reader is gone exits with the code its work decided
/// (it was exit 3: `eprintln!` panicked on the broken pipe): its messages, its errors and
/// its summaries are lost, never its exit code.
#[test]
fn a_closed_stderr_never_changes_the_exit_code() {
    let bin = env!("CARGO_BIN_EXE_airlock");
    let near_miss = root().join("corpora/review_status/near_miss/bom_prefixed.json");
    let near_miss = near_miss.display().to_string();
    let contract = contract_dir("review_status").display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("b.toml");
    std::fs::write(
        &baseline,
        "[[finding]]\ncontract = \"x\"\nclass = \"y\"\nlocation = \"/\"\nkind = \"leak\"\nreason = \"TODO: say why this finding is accepted\"\nexpires = 2999-01-01\n",
    )
    .unwrap();
    let baseline = baseline.display().to_string();
    let out = |name: &str| dir.path().join(name).display().to_string();
    let (mutated, sampled) = (out("m"), out("i"));
    let missing = "/nonexistent/airlock-input";
    let call = String::from_utf8(UNCONTRACTED_CALL.to_vec()).unwrap();
    // (arguments, stdin, exit code): each writes to stderr on its way out.
    let cases: Vec<(Vec<&str>, &str, i32)> = vec![
        (vec!["admit", "--contract", &contract, &near_miss], "", 1),
        (
            vec!["check", "--contract", &contract, "--baseline", &baseline],
            "",
            2,
        ),
        (
            vec![
                "mutate",
                "--contract",
                &contract,
                "--cases",
                "0",
                "--out",
                &mutated,
            ],
            "",
            0,
        ),
        (
            vec![
                "validate",
                "--schema",
                "schemas/review_status/v2.schema.json",
                &near_miss,
            ],
            "",
            1,
        ),
        (vec!["lint", "--contract", missing], "", 2),
        (vec!["certify", "--contract", missing], "", 2),
        // One malformed line: answered, and counted on stderr at the end.
        (vec!["guard", "--contract", &contract], "not a case\n", 0),
        (vec!["fuzz", "--replay", missing], "", 2),
        (
            vec!["init", "sampled", "--sample", missing, "--out", &sampled],
            "",
            2,
        ),
        (vec!["mcp", "import", "--tools-list", missing], "", 2),
        // One stderr line per call of a tool without a contract, refused or passed.
        (PROXY_SILENT_SERVER.to_vec(), &call, 0),
        (
            [
                &PROXY_SILENT_SERVER[..4],
                &["--unguarded", "pass"],
                &PROXY_SILENT_SERVER[4..],
            ]
            .concat(),
            &call,
            0,
        ),
    ];
    for (args, input, expected) in cases {
        // The stderr reader (`true`) is gone before airlock starts writing.
        let quoted: Vec<String> = std::iter::once(bin)
            .chain(args.iter().copied())
            .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
            .collect();
        let script = format!(
            "(sleep 0.3; exec {} ) 2>&1 >/dev/null | true; echo \"${{PIPESTATUS[0]}}\"",
            quoted.join(" ")
        );
        let mut child = Command::new("bash")
            .args(["-c", &script])
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.as_bytes().to_vec();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        let status = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        assert_eq!(status, expected.to_string(), "{args:?}");
    }
}

/// A 2 KB schema whose nested `allOf`s repeat a `$ref` costs 2^N evaluations per value
/// (17-22 s at N = 30 before): refused at load by `validate`, and `mcp import` refuses a
/// server's tool whose outputSchema is one, so the proxy never judges with it.
#[test]
fn an_exponential_schema_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            serde_json::json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d30".into(), serde_json::json!({"type": "object"}));
    let schema = serde_json::json!({"type": "object", "$ref": "#/$defs/d0", "$defs": defs});
    let schema_file = dir.path().join("s.json");
    std::fs::write(&schema_file, schema.to_string()).unwrap();
    let instance = dir.path().join("i.json");
    std::fs::write(&instance, r#"{"a":"x"}"#).unwrap();
    let started = Instant::now();
    let out = airlock(
        &[
            "validate",
            "--schema",
            schema_file.to_str().unwrap(),
            instance.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("exponential"), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(10));

    let list = dir.path().join("tools.json");
    let tools = serde_json::json!({"tools": [{"name": "slow", "inputSchema": {"type": "object"}, "outputSchema": schema}]});
    std::fs::write(&list, tools.to_string()).unwrap();
    let out_dir = dir.path().join("schemas");
    let out = airlock(
        &[
            "mcp",
            "import",
            "--tools-list",
            list.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("refused") && text.contains("exponential"),
        "{text}"
    );
    assert!(!out_dir.join("slow").exists());
}

/// Outputs are compared by file identity (a hard link is the same file), and a run that
/// fails after the writability check leaves no empty report behind.
#[test]
fn outputs_are_one_file_each_by_identity_and_removed_when_the_run_fails() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("b.toml");
    std::fs::write(&baseline, "# reviewed\n").unwrap();
    let link = dir.path().join("report.txt");
    std::fs::hard_link(&baseline, &link).unwrap();
    let out = airlock(
        &[
            "check",
            "--contract",
            contract_dir("review_status").to_str().unwrap(),
            "--output",
            link.to_str().unwrap(),
            "--write-baseline",
            baseline.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("the same file"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&baseline).unwrap(), "# reviewed\n");

    let fresh = dir.path().join("new-report.json");
    let out = airlock(
        &[
            "check",
            "--contract",
            dir.path().join("no-such-contract").to_str().unwrap(),
            "--format",
            "json",
            "--output",
            fresh.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!fresh.exists(), "an empty report was left behind");
}
