//! The documentation stays true: every manifest key the parser accepts is in the contract
//! reference, every lint rule and variant class in its page, every command and flag in
//! the README's command table, no document points outside the repository, and the Python
//! adapter of the exec-protocol page passes `airlock check`.

use airlock_guard::Contract;
use airlock_harness::adversary::CLASSES;
use airlock_harness::lint::RULES;
use std::collections::BTreeSet;
use std::path::Path;

use crate::util::{airlock, root};

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A manifest with every table: `{BOGUS:table}` marks where an unknown key goes.
const MANIFEST: &str = r#"tool = "job_run_status"
version = 1
{BOGUS:top}
[limits]
max_bytes = 4096
max_depth = 8
{BOGUS:limits}
[agent]
fields = ["/data/project_id"]
{BOGUS:agent}
[[checks]]
kind = "equals_param"
field = "/data/project_id"
param = "project_id"
{BOGUS:equals_param}
[[checks]]
kind = "in_param"
field = "/data/run_id"
param = "run_ids"
{BOGUS:in_param}
[[checks]]
kind = "fresh"
field = "/data/observed_at"
max_age = "15m"
max_skew = "1m"
{BOGUS:fresh}
[retry]
max_attempts = 3
deadline = "10s"
retryable = ["UPSTREAM_UNAVAILABLE"]
{BOGUS:retry}
[input]
{BOGUS:input}
[lint]
{BOGUS:lint}
[[lint.allow]]
rule = "unbounded-string"
at = "/x"
reason = "r"
{BOGUS:allow}
"#;

/// The keys the manifest parser accepts in `table`, from its own "expected one of" error
/// for an unknown key there.
fn accepted_keys(table: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let contract = dir.path().join("job_run_status");
    std::fs::create_dir(&contract).unwrap();
    std::fs::copy(
        root().join("schemas/job_run_status/v1.schema.json"),
        contract.join("v1.schema.json"),
    )
    .unwrap();
    let mut manifest = MANIFEST.to_owned();
    for line in MANIFEST.lines().filter(|l| l.starts_with("{BOGUS:")) {
        let replacement = if line == format!("{{BOGUS:{table}}}") {
            "zz_unknown_key = 1"
        } else {
            ""
        };
        manifest = manifest.replace(line, replacement);
    }
    std::fs::write(contract.join("contract.toml"), manifest).unwrap();
    let error = Contract::load(&contract).unwrap_err().to_string();
    let expected = error
        .split("expected ")
        .nth(1)
        .unwrap_or_else(|| panic!("{table}: no list of expected keys in: {error}"));
    let keys: Vec<String> = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    assert!(!keys.is_empty(), "{table}: {error}");
    keys
}

#[test]
fn every_manifest_key_the_parser_accepts_is_in_the_contract_reference() {
    let doc = read("docs/contract.md");
    let mut all = BTreeSet::new();
    for table in [
        "top",
        "limits",
        "agent",
        "equals_param",
        "in_param",
        "fresh",
        "retry",
        "input",
        "lint",
        "allow",
    ] {
        all.extend(accepted_keys(table));
    }
    for kind in ["equals_param", "in_param", "fresh"] {
        all.insert(kind.to_owned());
    }
    // And the values the `[input]` keys take, as TOML strings.
    for value in [
        "envelope",
        "mcp",
        "agree",
        "ignore",
        "image",
        "audio",
        "resource_link",
        "resource",
    ] {
        assert!(
            doc.contains(&format!("`\"{value}\"`")),
            "docs/contract.md does not name the [input] value \"{value}\""
        );
    }
    assert!(all.len() >= 15, "{all:?}");
    // Named as `key`, as a dotted `table.key`, or set in a TOML example (`key = …`).
    let named = |k: &str| {
        doc.contains(&format!("`{k}`"))
            || doc.contains(&format!(".{k}`"))
            || doc.lines().any(|l| l.starts_with(&format!("{k} = ")))
    };
    let missing: Vec<_> = all.iter().filter(|k| !named(k)).collect();
    assert!(
        missing.is_empty(),
        "docs/contract.md does not name {missing:?}"
    );
}

#[test]
fn every_lint_rule_is_in_the_lint_page_with_the_text_list_rules_prints() {
    let doc = read("docs/lint.md");
    for (id, _, what) in RULES {
        assert!(doc.contains(id), "docs/lint.md does not name rule {id}");
        assert!(
            doc.contains(what),
            "docs/lint.md does not say of {id}: {what}"
        );
    }
}

#[test]
fn every_variant_class_is_in_the_variants_page() {
    let doc = read("docs/variants.md");
    for (class, _) in CLASSES {
        assert!(
            doc.contains(&format!("| `{class}` |")),
            "docs/variants.md has no row for {class}"
        );
    }
}

/// What `airlock ARGS... --help` prints.
fn help(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("--help");
    String::from_utf8(airlock(&args, b"").stdout).unwrap()
}

/// The subcommands the help of `airlock PARENT...` lists.
fn subcommands_of(parent: &[&str]) -> Vec<String> {
    help(parent)
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

/// Every command `airlock --help` lists, and the subcommands of those that have some
/// (`mcp proxy`), as space-separated words.
fn subcommands() -> Vec<String> {
    let mut commands = Vec::new();
    for command in subcommands_of(&[]) {
        let nested = subcommands_of(&[&command]);
        if nested.is_empty() {
            commands.push(command);
        } else {
            commands.extend(nested.into_iter().map(|sub| format!("{command} {sub}")));
        }
    }
    commands
}

#[test]
fn every_command_and_flag_of_the_help_is_in_the_readme_command_table() {
    let readme = read("README.md");
    let table: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| `airlock "))
        .collect();
    let commands = subcommands();
    assert!(commands.len() >= 8, "{commands:?}");
    for command in commands {
        let rows: Vec<&&str> = table
            .iter()
            .filter(|r| r.starts_with(&format!("| `airlock {command}")))
            .collect();
        assert!(
            !rows.is_empty(),
            "README's command table has no `airlock {command}` row"
        );
        let args: Vec<&str> = command.split(' ').collect();
        for flag in help_flags(&args) {
            assert!(
                rows.iter().any(|r| r.contains(flag.as_str())),
                "README's `airlock {command}` rows do not mention {flag}"
            );
        }
    }
}

/// The flags `airlock ARGS... --help` lists (without --help and --version).
fn help_flags(args: &[&str]) -> BTreeSet<String> {
    help(args)
        .split_whitespace()
        .map(|w| w.trim_start_matches(['[', '(', '`', '"']))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            let end = w[2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(w.len(), |i| i + 2);
            w[..end].to_owned()
        })
        .filter(|w| w != "--help" && w != "--version")
        .collect()
}

#[test]
fn every_flag_of_mcp_import_is_in_its_readme_row() {
    let readme = read("README.md");
    let rows: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| `airlock mcp import"))
        .collect();
    assert!(!rows.is_empty(), "README has no `airlock mcp import` row");
    let flags = help_flags(&["mcp", "import"]);
    assert!(flags.contains("--server-cmd"), "{flags:?}");
    for flag in flags {
        assert!(
            rows.iter().any(|r| r.contains(&flag)),
            "README's `airlock mcp import` row does not mention {flag}"
        );
    }
}

#[test]
fn no_document_points_outside_the_repository() {
    let mut files = documents();
    files.push(root().join("CHANGELOG.md"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // A clone has nothing outside itself: no document may send a user there.
        for (n, line) in text.lines().enumerate() {
            let outside = line.contains("DESIGN.md") || line.contains("../shared");
            assert!(
                !outside,
                "{}:{}: points outside the repository: {line}",
                file.display(),
                n + 1
            );
        }
    }
}

#[test]
fn the_python_adapter_of_the_exec_protocol_page_passes_airlock_check() {
    let adapter = root().join("docs/examples/adapter.py");
    assert!(Path::new(&adapter).is_file());
    let command = format!("python3 {}", adapter.display());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .current_dir(root())
        .env("AIRLOCK", env!("CARGO_BIN_EXE_airlock"))
        .args([
            "check",
            "--contract",
            "schemas/review_status",
            "--contract",
            "schemas/quota_usage",
            "--cases",
            "50",
            "--adapter-cmd",
            &command,
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("clean:"), "{stdout}");
}

/// The CI templates a team copies use only flags `airlock` has: each `airlock SUB ...`
/// command of `ci/*.yml` (continued over `\` line ends) is checked against `SUB --help`.
#[test]
fn the_ci_templates_use_only_flags_airlock_has() {
    let mut checked = 0;
    let templates = [
        "ci/adapter-crate.yml",
        "ci/adapter-crate-matrix.yml",
        "ci/python-adapter.yml",
        "ci/mcp-server.yml",
        "ci/adapter-fuzz-overnight.sh",
        "ci/clusterfuzzlite/adapter/build.sh",
    ];
    for name in templates {
        // Join shell continuations so a command's flags stay together; the scripts call
        // the binary they built as "$airlock".
        let text = read(name).replace("\"$airlock\" ", "airlock ");
        let joined = text.replace("\\\n", " ");
        for line in joined.lines() {
            let Some(at) = line.find("airlock ") else {
                continue;
            };
            let mut words = line[at + "airlock ".len()..].split_whitespace();
            let Some(sub) = words.next() else { continue };
            if !["check", "fuzz", "lint", "certify", "mcp"].contains(&sub) {
                continue;
            }
            let known = if sub == "mcp" {
                let Some(action) = words.next() else { continue };
                help_flags(&[sub, action])
            } else {
                help_flags(&[sub])
            };
            for word in words.filter(|w| w.starts_with("--")) {
                let flag = word.split('=').next().unwrap();
                assert!(
                    known.contains(flag),
                    "{name}: `airlock {sub}` has no flag {flag} (line: {line})"
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 3,
        "found only {checked} airlock commands in the ci/ templates"
    );
}

/// Every YAML file of `ci/` is YAML a real parser reads (GitHub rejects a workflow that
/// is not), and every workflow has jobs with steps.
#[test]
fn every_ci_template_is_yaml() {
    fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                yaml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "yml" || e == "yaml") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    yaml_files(&root().join("ci"), &mut files);
    assert!(files.len() >= 4, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let docs = yaml_rust2::YamlLoader::load_from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not YAML: {e}", file.display()));
        let doc = &docs[0];
        if doc["jobs"].is_badvalue() {
            continue; // not a workflow (project.yaml)
        }
        let jobs = doc["jobs"].as_hash().expect("jobs is a map");
        for (name, job) in jobs {
            assert!(
                job["steps"].as_vec().is_some_and(|s| !s.is_empty()),
                "{}: job {name:?} has no steps",
                file.display()
            );
        }
    }
}

/// docs/init.md shows what `airlock init` prints for its worked example, not a copy that
/// drifts: the example is run here and its output compared with the page's.
#[test]
fn the_init_page_shows_what_init_prints() {
    let page = read("docs/init.md");
    let start = page.find("```text\n").expect("the output block") + "```text\n".len();
    let shown = &page[start..start + page[start..].find("```").unwrap()];
    let tmp = tempfile::tempdir().unwrap();
    let example = |name: &str| root().join("docs/examples/init").join(name);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .arg("init")
        .arg("pr_review_status")
        .arg("--sample")
        .arg(example("open.json"))
        .arg("--sample")
        .arg(example("merged.json"))
        .arg("--near-miss")
        .arg(example("approved_override.json"))
        .args(["--out", "scaffold"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        shown, printed,
        "docs/init.md's output block is not what init prints"
    );
}

/// The documents a user reads.
fn documents() -> Vec<std::path::PathBuf> {
    let mut files = vec![
        root().join("README.md"),
        root().join("ARCHITECTURE.md"),
        root().join("BENCHMARKS.md"),
    ];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files
}

/// Every repository path a document names (in backticks or as a link, starting at a
/// top-level folder of the repository, no placeholder in it) exists.
#[test]
fn every_file_path_the_documents_name_exists() {
    let tops: BTreeSet<String> = std::fs::read_dir(root())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !matches!(n.as_str(), "target" | ".git"))
        .collect();
    let mut missing = Vec::new();
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let base = file.parent().unwrap();
        let names = text
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|s| (s.to_owned(), false))
            .chain(text.split("](").skip(1).filter_map(|s| {
                s.split(')')
                    .next()
                    .map(|s| (s.split('#').next().unwrap_or("").to_owned(), true))
            }));
        for (name, link) in names {
            let name = name.trim().trim_end_matches(['.', ',', ':']);
            if name.is_empty()
                || name.contains(['<', '*', ' ', '$', '{', '…'])
                || name.starts_with("http")
                || !name.contains('/')
            {
                continue;
            }
            let path = if link {
                base.join(name)
            } else {
                let first = name.split('/').next().unwrap_or("");
                if !tops.contains(first) {
                    continue;
                }
                root().join(name)
            };
            if std::fs::symlink_metadata(&path).is_err() {
                missing.push(format!("{}: {name}", file.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named but not in the repository:\n{}",
        missing.join("\n")
    );
}

/// One test command everywhere: the README's second line, its Developing table, and the
/// command `.ci/run` runs.
#[test]
fn the_test_command_is_the_same_everywhere() {
    let readme = read("README.md");
    let first = readme
        .lines()
        .find(|l| l.contains("cargo test"))
        .unwrap()
        .split('#')
        .next()
        .unwrap()
        .trim()
        .to_owned();
    assert!(first.starts_with("ci/testsuites.sh"), "{first}");
    let table = readme
        .lines()
        .find(|l| l.starts_with("| test |"))
        .expect("the Developing table has a test row");
    assert!(table.contains(&format!("`{first}`")), "{table} vs {first}");
    let testing = read("docs/testing.md");
    assert!(
        testing.contains(&first),
        "docs/testing.md does not show {first}"
    );
    let ci = read(".ci/run");
    for part in first.split(" && ") {
        assert!(ci.contains(part), ".ci/run does not run {part}");
    }
}

mod printed;
