//! `airlock mcp import`: contracts from saved `tools/list` captures and from the real test
//! server (tests/mcp/server.py), re-imports (next version + certify, unchanged), bad
//! inputs with clear errors and nothing written.

use airlock_guard::{parse, Contract};
use airlock_harness::corpus::{corpus_dir, Corpus};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{airlock, copy_shipped, root};

fn captures() -> PathBuf {
    root().join("tests/mcp/captures")
}

fn run(args: &[&str]) -> Output {
    airlock(args, b"")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `airlock mcp import --tools-list FILES... --out ROOT/schemas`.
fn import_files(files: &[&Path], root: &Path) -> Output {
    let out = root.join("schemas");
    let mut args = vec![
        "mcp",
        "import",
        "--out",
        out.to_str().unwrap(),
        "--tools-list",
    ];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    run(&args)
}

/// The tools of a saved `tools/list` response line.
fn listed(file: &Path) -> Vec<Value> {
    let value: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    value["result"]["tools"].as_array().unwrap().clone()
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// A `tools/list` response line holding `tools`, saved as `name` in `dir`.
fn save_list(dir: &Path, name: &str, tools: &[Value]) -> PathBuf {
    let path = dir.join(name);
    let line = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}});
    std::fs::write(&path, format!("{line}\n")).unwrap();
    path
}

/// Every tool with an outputSchema has a contract under `root` that loads, judges by the
/// published schema, names every top-level member as an agent field, and a corpus that
/// loads; the others none.
fn assert_imported(root: &Path, tools: &[Value]) {
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let dir = root.join("schemas").join(name);
        let Some(schema) = tool.get("outputSchema") else {
            assert!(!dir.exists(), "{name} has no outputSchema: no contract");
            assert!(!root.join("corpora").join(name).exists());
            continue;
        };
        let contract = Contract::load(&dir).unwrap();
        assert_eq!(contract.tool(), name);
        assert_eq!(contract.version(), 1);
        assert!(contract.input().mcp().is_some(), "{name}: kind mcp");
        assert_eq!(
            contract.schema().document(),
            schema,
            "{name}: the published schema"
        );
        let fields: Vec<String> = contract
            .agent_fields()
            .iter()
            .map(|f| f.as_str().to_owned())
            .collect();
        let members: Vec<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| format!("/{k}"))
            .collect();
        assert_eq!(fields, members, "{name}: every member, in order");
        assert!(contract.checks().is_empty());
        let corpus = Corpus::load(&corpus_dir(&contract).unwrap()).unwrap();
        assert!(corpus.fixtures.is_empty());
        assert_eq!(corpus.request.tool.as_deref(), Some(name));
        for sub in ["accepted", "near_miss"] {
            assert!(root
                .join("corpora")
                .join(name)
                .join(sub)
                .join(".gitkeep")
                .is_file());
        }
    }
}

#[test]
fn saved_tools_list_imports_a_loading_contract_per_tool_with_an_output_schema() {
    let temp = tempfile::tempdir().unwrap();
    let file = captures().join("tools_list.json");
    let o = import_files(&[&file], temp.path());
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let tools = listed(&file);
    assert_imported(temp.path(), &tools);
    let text = stdout(&o);
    assert!(text.contains("imported  change_review: "), "{text}");
    assert!(text.contains("imported  project_quota: "), "{text}");
    assert!(
        text.contains("skipped   echo: no outputSchema: cannot be guarded"),
        "{text}"
    );
    assert!(text.contains("lint: "), "lint findings are printed: {text}");
    assert!(
        text.contains("inputSchema requires \"change_id\""),
        "{text}"
    );
    assert!(text.contains("2 imported, 0 updated, 0 unchanged, 1 without outputSchema"));
    // Nothing but the two folders, and no staging leftovers.
    let mut top: Vec<String> = std::fs::read_dir(temp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(top, ["corpora", "schemas"]);
    assert_eq!(
        files_under(&temp.path().join("schemas")),
        [
            "change_review/contract.toml",
            "change_review/v1.schema.json",
            "project_quota/contract.toml",
            "project_quota/v1.schema.json",
        ]
    );
}

#[test]
fn import_reproduces_the_shipped_change_review_schema_byte_for_byte() {
    let temp = tempfile::tempdir().unwrap();
    let o = import_files(&[&captures().join("tools_list.json")], temp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let made = std::fs::read(temp.path().join("schemas/change_review/v1.schema.json")).unwrap();
    let shipped = std::fs::read(root().join("schemas/change_review/v1.schema.json")).unwrap();
    assert_eq!(made, shipped);
    // And the shipped contract differs from the imported one only by what was added by
    // hand: its header, limits, checks and two [input] settings (text tightened to
    // "agree", since this server writes the JSON of structuredContent, and read_only set,
    // since the tool reads and publishes no annotation); same tool, kind, agent fields.
    let (made, shipped) = (
        Contract::load(temp.path().join("schemas/change_review")).unwrap(),
        Contract::load(root().join("schemas/change_review")).unwrap(),
    );
    assert_eq!(made.agent_fields(), shipped.agent_fields());
    let (made, shipped) = (
        made.input().mcp().unwrap().clone(),
        shipped.input().mcp().unwrap().clone(),
    );
    assert_eq!(
        airlock_guard::McpInput {
            text: airlock_guard::TextRule::Agree,
            read_only: true,
            ..made
        },
        shipped
    );
}

#[test]
fn paged_captures_chain_in_order_and_import_the_same_tools() {
    let paged = captures().join("tools_list.paged");
    let (p1, p2) = (
        paged.join("page-1.response.json"),
        paged.join("page-2.response.json"),
    );
    let temp = tempfile::tempdir().unwrap();
    let o = import_files(&[&p1, &p2], temp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut tools = listed(&p1);
    tools.extend(listed(&p2));
    assert_eq!(tools, listed(&captures().join("tools_list.json")));
    assert_imported(temp.path(), &tools);

    // A page with nextCursor must be followed by another; a page without it by none.
    for (files, blamed, says) in [
        (vec![p1.as_path()], &p1, "nextCursor \"page-2\""),
        (vec![p2.as_path(), p1.as_path()], &p1, "has no nextCursor"),
    ] {
        let temp = tempfile::tempdir().unwrap();
        let o = import_files(&files, temp.path());
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        let err = stderr(&o);
        assert!(err.contains(&blamed.display().to_string()), "{err}");
        assert!(err.contains(says), "{err}");
        assert_eq!(
            files_under(temp.path()),
            Vec::<String>::new(),
            "nothing written"
        );
    }
}

#[test]
fn bad_tools_list_files_are_clear_errors_naming_the_file_and_write_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 7] = [
        ("not_json.json", b"tools: none\n", "not strict JSON"),
        (
            "duplicate.json",
            br#"{"tools": [], "tools": []}"#,
            "not strict JSON: duplicate",
        ),
        (
            "no_tools.json",
            br#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
            "no \"tools\" member",
        ),
        ("array.json", b"[]", "expected a JSON object"),
        (
            "error.json",
            br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#,
            "a JSON-RPC error answer",
        ),
        (
            "request.json",
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            "not the answer to tools/list",
        ),
        (
            "cursor.json",
            br#"{"tools":[],"nextCursor":7}"#,
            "\"nextCursor\" is not a string",
        ),
    ];
    for (name, bytes, says) in cases {
        let file = temp.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let out = temp.path().join("out");
        let o = import_files(&[&file], &out);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(err.contains(&file.display().to_string()), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(!out.exists(), "{name}: nothing written");
    }
    let missing = temp.path().join("missing.json");
    let o = import_files(&[&missing], &temp.path().join("out"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("missing.json: cannot read"),
        "{}",
        stderr(&o)
    );
    let o = run(&["mcp", "import", "--out", temp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "a source is required");
}

/// MCP structured content is an object: an outputSchema that is not an object schema
/// (`true`, an array) would make a contract judging nothing; it is refused. A tool name
/// of 128 characters (the longest) imports with a corpus `airlock check` finds.
#[test]
fn a_non_object_output_schema_is_refused_and_the_longest_name_imports_whole() {
    let temp = tempfile::tempdir().unwrap();
    let long = "t".repeat(128);
    let tools = [
        json!({"name": "anything", "inputSchema": {"type": "object"}, "outputSchema": true}),
        json!({"name": "list", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}}),
        json!({"name": long, "inputSchema": {"type": "object"},
               "outputSchema": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 8}}, "required": ["a"]}}),
    ];
    let file = save_list(temp.path(), "list.json", &tools);
    let root = temp.path().join("w");
    let o = import_files(&[&file], &root);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("refused   anything: its outputSchema is not an object schema"),
        "{text}"
    );
    assert!(
        text.contains("refused   list: its outputSchema is not an object schema"),
        "{text}"
    );
    assert!(!root.join("schemas/anything").exists() && !root.join("schemas/list").exists());
    assert!(root
        .join("corpora")
        .join(&long)
        .join("request.json")
        .exists());
    let dir = root.join("schemas").join(&long);
    let out = run(&[
        "check",
        "--contract",
        dir.to_str().unwrap(),
        "--cases",
        "5",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_tool_name_that_is_not_a_contract_name_is_skipped_and_never_a_path() {
    let temp = tempfile::tempdir().unwrap();
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let tools = [
        json!({"name": "../escape", "inputSchema": {"type": "object"}, "outputSchema": schema}),
        json!({"name": "a/b", "inputSchema": {"type": "object"}, "outputSchema": schema}),
        json!({"name": "fine", "inputSchema": {"type": "object"}, "outputSchema": schema}),
        json!({"name": "fine", "inputSchema": {"type": "object"}, "outputSchema": schema}),
    ];
    let file = save_list(temp.path(), "list.json", &tools);
    let root = temp.path().join("w");
    let o = import_files(&[&file], &root);
    assert_eq!(o.status.code(), Some(1), "skipped tools need attention");
    let text = stdout(&o);
    assert!(
        text.contains("skipped   ../escape: \"../escape\" is not a contract tool name"),
        "{text}"
    );
    assert!(
        text.contains("skipped   a/b: \"a/b\" is not a contract tool name"),
        "{text}"
    );
    assert!(text.contains("imported  fine: "), "{text}");
    assert!(text.contains("skipped   fine: listed twice"), "{text}");
    assert_eq!(
        files_under(&root),
        [
            "corpora/fine/accepted/.gitkeep",
            "corpora/fine/near_miss/.gitkeep",
            "corpora/fine/request.json",
            "schemas/fine/contract.toml",
            "schemas/fine/v1.schema.json",
        ]
    );
    assert!(!temp.path().join("escape").exists());
}

#[test]
fn a_schema_the_guard_refuses_leaves_nothing_behind() {
    let temp = tempfile::tempdir().unwrap();
    let tools = [json!({
        "name": "remote",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"a": {"$ref": "https://example.invalid/a.json"}}},
    })];
    let file = save_list(temp.path(), "list.json", &tools);
    let root = temp.path().join("w");
    let o = import_files(&[&file], &root);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("refused   remote: the guard refuses this contract (nothing written): "),
        "{text}"
    );
    assert!(
        !text.contains(".import-"),
        "the staging folder is not named: {text}"
    );
    assert_eq!(files_under(&root), Vec::<String>::new());
    assert_eq!(
        std::fs::read_dir(root.join("schemas")).unwrap().count(),
        0,
        "no staging folder left"
    );
}

/// A copy of the capture with `change` applied to change_review's outputSchema.
fn changed_list(dir: &Path, name: &str, change: impl Fn(&mut Value)) -> PathBuf {
    let mut tools = listed(&captures().join("tools_list.json"));
    let tool = tools
        .iter_mut()
        .find(|t| t["name"] == "change_review")
        .unwrap();
    change(&mut tool["outputSchema"]);
    save_list(dir, name, &tools)
}

#[test]
fn reimport_unchanged_writes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let file = captures().join("tools_list.json");
    assert_eq!(import_files(&[&file], temp.path()).status.code(), Some(0));
    let request = temp.path().join("corpora/change_review/request.json");
    std::fs::write(&request, "{\"now\": \"edited by hand\"}").unwrap();
    let manifest = temp.path().join("schemas/change_review/contract.toml");
    let before = (
        files_under(temp.path()),
        std::fs::metadata(&manifest).unwrap().modified().unwrap(),
    );
    let o = import_files(&[&file], temp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("unchanged change_review: "), "{text}");
    assert!(text.contains("unchanged project_quota: "), "{text}");
    assert!(!text.contains("lint:"), "nothing new to lint: {text}");
    let after = (
        files_under(temp.path()),
        std::fs::metadata(&manifest).unwrap().modified().unwrap(),
    );
    assert_eq!(before, after);
    assert_eq!(
        std::fs::read_to_string(&request).unwrap(),
        "{\"now\": \"edited by hand\"}"
    );
    // The 2026-07-28 era lists the same schemas with their members in another order:
    // equal as JSON values, so unchanged too.
    let other_era = captures().join("tools_list.2026-07-28.json");
    let o = import_files(&[&other_era], temp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("2 unchanged"), "{}", stdout(&o));
    assert_eq!(files_under(temp.path()), before.0);
}

#[test]
fn reimport_with_a_changed_schema_writes_the_next_version_and_prints_certify() {
    let temp = tempfile::tempdir().unwrap();
    let original = captures().join("tools_list.json");
    assert_eq!(
        import_files(&[&original], temp.path()).status.code(),
        Some(0)
    );
    let dir = temp.path().join("schemas/change_review");
    let manifest = dir.join("contract.toml");
    // The operator's edits of the manifest survive: only the version line changes.
    let edited = std::fs::read_to_string(&manifest).unwrap().replace(
        "[retry]",
        "# checks added by hand\n[[checks]]\nkind = \"equals_param\"\nfield = \"/change_id\"\nparam = \"change_id\"\n\n[retry]",
    );
    std::fs::write(&manifest, &edited).unwrap();

    // A breaking change: "pending" is no longer a decision.
    let narrowed = changed_list(temp.path(), "narrowed.json", |s| {
        s["properties"]["decision"]["enum"] = json!(["approved", "rejected"]);
    });
    let o = import_files(&[&narrowed], temp.path());
    assert_eq!(o.status.code(), Some(1), "breaking: exit 1\n{}", stdout(&o));
    let text = stdout(&o);
    assert!(text.contains("updated   change_review: "), "{text}");
    assert!(text.contains("v1 -> v2"), "{text}");
    assert!(
        text.contains("certify change_review v1 -> v2: breaking"),
        "{text}"
    );
    assert!(text.contains("enum_narrowed"), "{text}");
    assert!(text.contains("unchanged project_quota"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&manifest).unwrap(),
        edited.replacen("\nversion = 1\n", "\nversion = 2\n", 1)
    );
    let v2: Value = parse(&std::fs::read(dir.join("v2.schema.json")).unwrap(), 64).unwrap();
    assert_eq!(
        v2["properties"]["decision"]["enum"],
        json!(["approved", "rejected"])
    );
    let contract = Contract::load(&dir).unwrap();
    assert_eq!((contract.version(), contract.checks().len()), (2, 1));
    assert_eq!(
        std::fs::read(dir.join("v1.schema.json")).unwrap(),
        std::fs::read(root().join("schemas/change_review/v1.schema.json")).unwrap(),
        "v1 kept as it was"
    );

    // A compatible or agent-visible change exits 0: the enum widened again.
    let widened = changed_list(temp.path(), "widened.json", |s| {
        s["properties"]["decision"]["enum"] =
            json!(["approved", "rejected", "pending", "escalated"]);
    });
    let o = import_files(&[&widened], temp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("certify change_review v2 -> v3: agent_visible"),
        "{text}"
    );
    assert_eq!(Contract::load(&dir).unwrap().version(), 3);
}

#[test]
fn reimport_with_a_new_required_member_writes_it_and_says_the_contract_does_not_load() {
    let temp = tempfile::tempdir().unwrap();
    let original = captures().join("tools_list.json");
    assert_eq!(
        import_files(&[&original], temp.path()).status.code(),
        Some(0)
    );
    let grown = changed_list(temp.path(), "grown.json", |s| {
        s["properties"]["score"] = json!({"type": "integer"});
        s["required"].as_array_mut().unwrap().push(json!("score"));
    });
    let o = import_files(&[&grown], temp.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("v2 does not load: agent.fields: the output schema requires \"score\""),
        "{text}"
    );
    assert!(
        text.contains("certify: not run: v2 does not load"),
        "{text}"
    );
    assert!(text.contains("edit [agent] fields"), "{text}");
    let dir = temp.path().join("schemas/change_review");
    // Consistent: the version line names the newest schema; the agent fields are the
    // operator's and untouched. Adding the member makes it load.
    let manifest = std::fs::read_to_string(dir.join("contract.toml")).unwrap();
    assert!(manifest.contains("\nversion = 2\n"));
    assert!(dir.join("v2.schema.json").is_file());
    std::fs::write(
        dir.join("contract.toml"),
        manifest.replace("\"/observed_at\"]", "\"/observed_at\", \"/score\"]"),
    )
    .unwrap();
    assert_eq!(Contract::load(&dir).unwrap().version(), 2);
    // Re-running the import now finds it unchanged.
    let o = import_files(&[&grown], temp.path());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("unchanged change_review"));
}

#[test]
fn an_envelope_contract_of_the_same_name_is_refused_and_left_alone() {
    let temp = tempfile::tempdir().unwrap();
    copy_shipped("review_status", temp.path());
    let before = files_under(temp.path());
    let tools = [json!({
        "name": "review_status",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
    })];
    let file = save_list(temp.path(), "list.json", &tools);
    let o = import_files(&[&file], temp.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("is an envelope contract, not an MCP one"),
        "{}",
        stdout(&o)
    );
    let mut after = files_under(temp.path());
    after.retain(|f| f != "list.json");
    assert_eq!(before, after);
}

#[test]
fn corpora_go_where_told_and_existing_corpus_files_are_kept() {
    let temp = tempfile::tempdir().unwrap();
    let corpora = temp.path().join("elsewhere");
    let request = corpora.join("change_review/request.json");
    std::fs::create_dir_all(request.parent().unwrap()).unwrap();
    std::fs::write(&request, "mine").unwrap();
    let out = temp.path().join("contracts");
    let o = run(&[
        "mcp",
        "import",
        "--tools-list",
        captures().join("tools_list.json").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--corpora",
        corpora.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&request).unwrap(), "mine");
    assert!(corpora.join("change_review/accepted/.gitkeep").is_file());
    assert!(corpora.join("project_quota/request.json").is_file());
    assert!(out.join("change_review/contract.toml").is_file());
    assert!(!temp.path().join("corpora").exists());
    let text = stdout(&o);
    assert!(
        !text.contains("change_review/request.json: params"),
        "kept, no note: {text}"
    );
}

/// The venv's Python, or `None` (a skip, said on stderr) when it is absent and
/// `AIRLOCK_REQUIRE_MCP` is not set.
pub(crate) fn mcp_python() -> Option<PathBuf> {
    let python = root().join("target/mcp-venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        std::env::var_os("AIRLOCK_REQUIRE_MCP").is_none(),
        "AIRLOCK_REQUIRE_MCP is set but {} is missing: install it (tests/mcp/README.md)",
        python.display()
    );
    eprintln!(
        "skipped: {} is absent (install it as tests/mcp/README.md says; AIRLOCK_REQUIRE_MCP=1 makes this a failure)",
        python.display()
    );
    None
}

#[test]
fn server_cmd_against_the_real_server_follows_every_page_and_matches_the_capture() {
    let Some(python) = mcp_python() else {
        return;
    };
    let temp = tempfile::tempdir().unwrap();
    let command = format!(
        "{} {} --page-size 1",
        python.display(),
        root().join("tests/mcp/server.py").display()
    );
    let out = temp.path().join("schemas");
    let o = run(&[
        "mcp",
        "import",
        "--server-cmd",
        &command,
        "--timeout",
        "60s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_imported(temp.path(), &listed(&captures().join("tools_list.json")));
    assert_eq!(
        std::fs::read(out.join("change_review/v1.schema.json")).unwrap(),
        std::fs::read(root().join("schemas/change_review/v1.schema.json")).unwrap()
    );
    let manifest = std::fs::read_to_string(out.join("change_review/contract.toml")).unwrap();
    assert!(
        manifest.starts_with(
            "# Imported by `airlock mcp import` from a live server (serverInfo \"airlock-test-server\""
        ),
        "{manifest}"
    );
    assert!(
        !manifest.contains("server.py"),
        "the command line is not recorded"
    );
}

#[test]
fn a_failing_server_is_a_clear_error_with_exit_2() {
    let temp = tempfile::tempdir().unwrap();
    let out = temp.path().join("schemas");
    let error_answer = r#"read line; echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method"}}'"#;
    let wrong_id = r#"read line; echo '{"jsonrpc":"2.0","method":"notifications/message","params":{}}'; echo '{"jsonrpc":"2.0","id":9,"result":{}}'"#;
    let looping = r#"read l; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read l; n=2; while read l; do echo "{\"jsonrpc\":\"2.0\",\"id\":$n,\"result\":{\"tools\":[],\"nextCursor\":\"same\"}}"; n=$((n+1)); done"#;
    for (command, says) in [
        (
            "read line; exit 3",
            "closed its output before answering (it exited: exit status: 3)",
        ),
        ("sleep 5", "no answer within 1s"),
        ("read line; echo not json", "not strict JSON"),
        (
            error_answer,
            "initialize: JSON-RPC error: code -32601, message \"no such method\"",
        ),
        (wrong_id, "initialize: answered id 9, expected 1"),
        (looping, "nextCursor \"same\" came twice"),
    ] {
        let started = std::time::Instant::now();
        let o = run(&[
            "mcp",
            "import",
            "--server-cmd",
            command,
            "--timeout",
            "1s",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{command}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains("the MCP server (--server-cmd): "),
            "{command}: {err}"
        );
        assert!(err.contains(says), "{command}: {err}");
        assert!(
            started.elapsed().as_secs() < 5,
            "{command}: killed, not waited for"
        );
        assert!(!out.exists());
    }
}

/// The settings an import chooses come from the server's own publication: the official
/// filesystem and memory servers' saved `tools/list` answers (tests/mcp/captures).
#[test]
fn import_chooses_text_media_size_side_effects_and_deadline_from_what_the_server_publishes() {
    use airlock_guard::{ContentKind, TextRule};
    let dir = tempfile::tempdir().unwrap();
    let out = import_files(
        &[&captures().join("tools_list.filesystem.json")],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("chose: text = \"consistent\""), "{text}");
    let load = |name: &str| Contract::load(dir.path().join("schemas").join(name)).unwrap();
    let media = load("read_media_file");
    let mcp = media.input().mcp().unwrap();
    assert_eq!(mcp.text, TextRule::Consistent);
    assert!(mcp.allow_content.contains(&ContentKind::Image));
    assert!(mcp.allow_content.contains(&ContentKind::Audio));
    assert!(mcp.read_only && mcp.idempotent);
    // A file's text is unbounded in the schema and sent twice: MiBs, not 64 KiB.
    assert!(media.limits().max_bytes >= 4 * 1024 * 1024);
    assert_eq!(media.retry().deadline(), std::time::Duration::from_secs(60));
    let write = load("write_file").input().mcp().unwrap().clone();
    assert!(!write.read_only && write.idempotent, "{write:?}");
    let mv = load("move_file").input().mcp().unwrap().clone();
    assert!(!mv.read_only && !mv.idempotent, "{mv:?}");
    assert!(load("read_text_file")
        .input()
        .mcp()
        .unwrap()
        .allow_content
        .is_empty());
    assert!(
        text.contains("chose: read_only = false, idempotent = false: the tool's annotations"),
        "{text}"
    );

    // The memory server: a tool without annotations would get MCP's defaults.
    let dir = tempfile::tempdir().unwrap();
    let mut tools = listed(&captures().join("tools_list.memory.json"));
    tools[0].as_object_mut().unwrap().remove("annotations");
    let list = save_list(dir.path(), "memory.json", &tools);
    let out = import_files(&[&list], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let name = tools[0]["name"].as_str().unwrap();
    let plain = Contract::load(dir.path().join("schemas").join(name)).unwrap();
    let mcp = plain.input().mcp().unwrap();
    assert!(!mcp.read_only && !mcp.idempotent);
    assert!(stdout(&out).contains("publishes no readOnlyHint"));
}

/// A tool list is bounded as a whole, every page counted: its tools, its JSON values and
/// its bytes. Each bound is an error naming the file or the server (exit 2), reached
/// before the list is built: 21 M empty tools in 63 MB took 7 GB, and a server could send
/// 1000 pages of 64 MiB.
#[test]
fn a_tool_list_is_bounded_in_tools_values_and_bytes_across_its_pages() {
    let temp = tempfile::tempdir().unwrap();
    let out = temp.path().join("schemas");
    let write = |name: &str, text: String| {
        let path = temp.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let tools = |from: usize, n: usize, cursor: &str| {
        let listed: Vec<String> = (from..from + n)
            .map(|i| format!(r#"{{"name":"t{i}"}}"#))
            .collect();
        format!(r#"{{"tools":[{}]{cursor}}}"#, listed.join(","))
    };
    let import = |files: &[&Path]| import_files(files, temp.path());
    // 10 000 tools over two pages are a list; one more is not.
    let first = write("p1.json", tools(0, 6_000, r#","nextCursor":"2""#));
    let second = write("p2.json", tools(6_000, 4_000, ""));
    let o = import(&[&first, &second]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let second = write("p2.json", tools(6_000, 4_001, ""));
    let o = import(&[&first, &second]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("more than 10000 tools listed"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("p2.json"), "{}", stderr(&o));
    // Millions of values in one tool: refused before they are built.
    let zeros = vec!["0"; 4_000_001].join(",");
    let wide = write(
        "wide.json",
        format!(r#"{{"tools":[{{"name":"a","x":[{zeros}]}}]}}"#),
    );
    let o = import(&[&wide]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("more than 4000000 JSON values"),
        "{}",
        stderr(&o)
    );
    // A server's pages count together: five pages of 16 MiB pass one answer's bound, not
    // the list's.
    let pages = r#"read l; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; read l; n=2; while read l; do printf '{"jsonrpc":"2.0","id":%d,"result":{"tools":[],"nextCursor":"c%d","pad":"' $n $n; head -c 16777216 /dev/zero | tr '\0' a; echo '"}}'; n=$((n+1)); done"#;
    let o = run(&[
        "mcp",
        "import",
        "--server-cmd",
        pages,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("tools/list pages together are larger than 67108864 bytes"),
        "{}",
        stderr(&o)
    );
}
