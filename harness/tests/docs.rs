//! The documentation stays true: every manifest key the parser accepts is in the contract
//! reference, every lint rule and variant class in its page, every command and flag in
//! the README's command table, no document points outside the repository, and the Python
//! adapter of the exec-protocol page passes `airlock check`.

use airlock_guard::Contract;
use airlock_harness::adversary::CLASSES;
use airlock_harness::lint::RULES;
use std::collections::{BTreeMap, BTreeSet};
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

/// The subcommands the help of `airlock PARENT...` lists.
fn subcommands_of(parent: &[&str]) -> Vec<String> {
    let mut args = parent.to_vec();
    args.push("--help");
    let out = airlock(&args, b"");
    let help = String::from_utf8(out.stdout).unwrap();
    help.lines()
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
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("--help");
        let out = airlock(&args, b"");
        let help = String::from_utf8(out.stdout).unwrap();
        for flag in help
            .split_whitespace()
            .map(|w| w.trim_start_matches(['[', '(', '`', '"']))
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(|w| {
                let end = w[2..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                    .map_or(w.len(), |i| i + 2);
                &w[..end]
            })
            .filter(|w| *w != "--help" && *w != "--version")
            .collect::<BTreeSet<_>>()
        {
            assert!(
                rows.iter().any(|r| r.contains(flag)),
                "README's `airlock {command}` rows do not mention {flag}"
            );
        }
    }
}

/// The flags `airlock ARGS... --help` lists (without --help and --version).
fn help_flags(args: &[&str]) -> BTreeSet<String> {
    let mut args = args.to_vec();
    args.push("--help");
    let out = airlock(&args, b"");
    let help = String::from_utf8(out.stdout).unwrap();
    help.split_whitespace()
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

/// `n` with its thousands apart, as the documents write counts: `2 667`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Per class, what the reference decides on the variants of `tool` (seed 0, `random`
/// random cases): `9 admit, 23 reject (parse, schema, binding)`, `3 transport`, `—`.
fn verdicts_by_class(tool: &str, random: usize) -> BTreeMap<String, (usize, String)> {
    use airlock_guard::{Stage, Verdict};
    use airlock_harness::cases::Upstream;
    let (guard, corpus) = crate::util::load(tool);
    let cases = airlock_harness::adversary::generate(guard.contract(), &corpus, 0, random);
    let order = [
        Stage::Request,
        Stage::Transport,
        Stage::Limits,
        Stage::Parse,
        Stage::Decode,
        Stage::Schema,
        Stage::Binding,
        Stage::Checks,
        Stage::Projection,
    ];
    let mut tally: BTreeMap<String, (usize, Vec<usize>, usize)> = BTreeMap::new();
    for case in &cases {
        let admission = match &case.upstream {
            Upstream::Body(bytes) => guard.admit(&case.request, bytes),
            Upstream::Transport(e) => guard.admit_transport_error(&case.request, *e),
        };
        let entry = tally
            .entry(case.class.clone())
            .or_insert_with(|| (0, vec![0; order.len()], 0));
        let audit = admission.audit();
        match audit.verdict() {
            Verdict::Admitted | Verdict::UpstreamFailure => entry.0 += 1,
            Verdict::TransportFailure => entry.2 += 1,
            Verdict::Rejected => {
                let at = order.iter().position(|s| *s == audit.stage()).unwrap();
                entry.1[at] += 1;
            }
        }
    }
    let cells = tally
        .into_iter()
        .map(|(class, (admit, rejects, transport))| {
            let mut parts = Vec::new();
            if admit > 0 {
                parts.push(format!("{} admit", grouped(admit)));
            }
            let rejected: usize = rejects.iter().sum();
            if rejected > 0 {
                let stages: Vec<&str> = order
                    .iter()
                    .zip(&rejects)
                    .filter(|(_, n)| **n > 0)
                    .map(|(s, _)| s.as_str())
                    .collect();
                parts.push(format!(
                    "{} reject ({})",
                    grouped(rejected),
                    stages.join(", ")
                ));
            }
            if transport > 0 {
                parts.push(format!("{} transport", grouped(transport)));
            }
            (class, (admit + rejected + transport, parts.join(", ")))
        })
        .collect();
    cells
}

/// The counts docs/variants.md gives are those a run gives: the last column of the
/// catalogue (`review_status`, 500 random cases) and the per-kind totals. With
/// `AIRLOCK_UPDATE_DOCS=1` the page is rewritten instead.
#[test]
fn the_variant_counts_in_the_variants_page_are_those_a_run_gives() {
    let path = root().join("docs/variants.md");
    let doc = read("docs/variants.md");
    let update = std::env::var_os("AIRLOCK_UPDATE_DOCS").is_some();
    let mut out = String::new();
    let mut wrong = Vec::new();
    let mut missing = Vec::new();
    let cells = verdicts_by_class("review_status", 500);
    for line in doc.split_inclusive('\n') {
        let row = line.strip_prefix("| `").and_then(|r| r.split_once("` |"));
        let Some((class, _)) = row.filter(|(c, _)| CLASSES.iter().any(|(k, _)| k == c)) else {
            out.push_str(line);
            continue;
        };
        let cell = line
            .trim_end()
            .trim_end_matches('|')
            .rsplit(" | ")
            .next()
            .unwrap_or("");
        let want = cells
            .get(class)
            .map_or_else(|| "—".to_owned(), |(_, c)| c.clone());
        let ok = cell.trim() == want || (want == "—" && cell.trim().starts_with("— ("));
        if ok {
            out.push_str(line);
        } else {
            wrong.push(format!(
                "{class}: the page says {:?}, the run gives {want:?}",
                cell.trim()
            ));
            let head = &line[..line.trim_end().trim_end_matches('|').len() - cell.len()];
            out.push_str(&format!("{head}{want} |\n"));
        }
    }
    let runs = [
        ("review_status", 500, None),
        ("change_review", 100, Some("mcp")),
        ("ci_pipeline_status", 500, Some("vendor")),
        ("git_branch_head", 500, Some("lines")),
    ];
    for (tool, random, kind) in runs {
        let counts = verdicts_by_class(tool, random);
        let n: usize = counts.values().map(|(n, _)| n).sum();
        let prefix = format!("{}-", kind.unwrap_or_default());
        let own: usize = counts
            .iter()
            .filter(|(class, _)| class.starts_with(&prefix))
            .map(|(_, (n, _))| n)
            .sum();
        let command = format!(
            r"`airlock\s+mutate\s+--contract\s+schemas/{tool}\s+--cases\s+{random}`\)?:\s+"
        );
        let (pattern, want) = match kind {
            None => (
                format!(r"{command}[0-9][0-9 ]*?\s+variants"),
                format!("{} variants", grouped(n)),
            ),
            Some(kind) => (
                format!(
                    r"{command}[0-9][0-9 ]*?\s+variants,\s+[0-9][0-9 ]*?\s+of\s+them\s+in\s+the\s+`{kind}-\*`\s+classes"
                ),
                format!(
                    "{} variants, {} of them in the `{kind}-*` classes",
                    grouped(n),
                    grouped(own)
                ),
            ),
        };
        let re = regex::Regex::new(&pattern).unwrap();
        let found = re
            .find(&out)
            .map(|m| (m.start(), m.end(), m.as_str().to_owned()));
        let Some((start, end, text)) = found else {
            missing.push(format!("{tool}: no count sentence matching {pattern}"));
            continue;
        };
        let head_end = text.rfind(": ").or_else(|| text.rfind(":\n")).unwrap() + 1;
        let said: String = text[head_end..]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if said != want {
            wrong.push(format!(
                "{tool}: the page says {said:?}, the run gives {want:?}"
            ));
            let replaced = format!("{} {want}", text[..head_end].trim_end());
            out.replace_range(start..end, &replaced);
        }
    }
    // A sentence the test cannot find is not rewritten: it is always a failure.
    assert!(
        missing.is_empty(),
        "docs/variants.md: {}",
        missing.join("\n")
    );
    if update && !wrong.is_empty() {
        std::fs::write(&path, &out).unwrap();
        return;
    }
    assert!(
        wrong.is_empty(),
        "docs/variants.md gives counts no run gives (AIRLOCK_UPDATE_DOCS=1 rewrites them):\n{}",
        wrong.join("\n")
    );
}

/// `text` without white space: a snippet and its compiled twin match however rustfmt
/// wrapped the twin.
fn squashed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The ```rust blocks of `text`.
fn rust_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_start().starts_with("```rust") => current = Some(String::new()),
            Some(block) if line.trim_start().starts_with("```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    blocks
}

#[test]
fn every_rust_snippet_of_the_docs_is_compiled_code() {
    // Where compiled twins live: this test binary's snippets.rs and the worked crate
    // (its tests and fuzz targets are built by `cargo test` and `.ci/run`).
    let mut sources = vec![read("harness/tests/snippets.rs")];
    for dir in [
        "examples/ci-connector/tests",
        "examples/ci-connector/fuzz/fuzz_targets",
    ] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                sources.push(std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let sources: Vec<String> = sources.iter().map(|s| squashed(s)).collect();
    let mut checked = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for block in rust_blocks(&text) {
            if !block.contains("airlock_harness") {
                continue;
            }
            let code = squashed(&block);
            let compiled = sources.iter().any(|source| source.contains(&code));
            assert!(
                compiled,
                "{}: this snippet is not compiled anywhere; copy it into harness/tests/snippets.rs \
                 (inside a function, with what it leaves out around it):\n{block}",
                file.display()
            );
            checked += 1;
        }
    }
    // README's Check, the fuzz target and the smoke run of fuzzing-adapters.md.
    assert!(checked >= 3, "only {checked} snippets found");
}

/// The lines of the first ```text block after `marker` in a document, unindented.
fn text_block_after(doc: &str, marker: &str) -> Vec<String> {
    let at = doc.find(marker).unwrap_or_else(|| panic!("no {marker:?}"));
    let start = at + doc[at..].find("```text\n").unwrap() + "```text\n".len();
    let end = start + doc[start..].find("```").unwrap();
    doc[start..end]
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A line with its elapsed time (`, 0.16s` at the end) taken out: the one number of a
/// run's output that is the machine's, not the code's.
fn without_elapsed(line: &str) -> String {
    let timed = regex::Regex::new(r", [0-9]+\.[0-9]+s$").unwrap();
    timed.replace(line.trim(), ", <elapsed>").into_owned()
}

/// Every line `shown` (a page's output block, `…` lines aside) is a line of `stdout`, the
/// elapsed time aside.
fn assert_printed(page: &str, shown: &[String], stdout: &[u8]) {
    let printed: BTreeSet<String> = String::from_utf8_lossy(stdout)
        .lines()
        .map(without_elapsed)
        .collect();
    assert!(shown.len() >= 4, "{page}: {shown:?}");
    for line in shown.iter().filter(|l| l.as_str() != "…") {
        assert!(
            printed.contains(&without_elapsed(line)),
            "{page} shows a line the run does not print:\n  {line}\nthe run printed:\n{}",
            String::from_utf8_lossy(stdout)
        );
    }
}

/// The real output docs/exec-protocol.md shows for an adapter that crashes is what the
/// command it names prints today (every line of the page in the output).
#[test]
fn the_exec_protocol_page_shows_what_a_crashing_adapter_gets() {
    let doc = read("docs/exec-protocol.md");
    let shown = text_block_after(&doc, "Real output, with an adapter that exits at once");
    let out = airlock(
        &[
            "check",
            "--contract",
            "schemas/review_status",
            "--adapter-cmd",
            "harness/tests/adapters/crash.sh",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_printed("docs/exec-protocol.md", &shown, &out.stdout);
}

/// Every ```console block of the docs that starts with `$ airlock …` is what that command
/// prints today: the command is run from the repository root (the `airlock` under test
/// first on the PATH) and every line the block shows must be a line it printed, the
/// elapsed time aside.
#[test]
fn every_console_block_of_the_docs_is_what_its_command_prints() {
    let path = crate::util::path_with_airlock();
    let mut ran = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for block in text.split("```console\n").skip(1) {
            let block = &block[..block.find("```").unwrap()];
            let mut lines = block.lines();
            let Some(command) = lines.next().and_then(|l| l.strip_prefix("$ airlock ")) else {
                continue;
            };
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("airlock {command}")])
                .current_dir(root())
                .env("PATH", &path)
                .env("AIRLOCK", env!("CARGO_BIN_EXE_airlock"))
                .output()
                .unwrap();
            let printed: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .chain(String::from_utf8_lossy(&out.stderr).lines())
                .map(without_elapsed)
                .collect();
            for line in lines.filter(|l| !l.trim().is_empty()) {
                assert!(
                    printed.contains(&without_elapsed(line)),
                    "{}: `airlock {command}` does not print\n  {line}\nit printed:\n{}{}",
                    doc.display(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            ran += 1;
        }
    }
    assert!(ran >= 2, "only {ran} console blocks run");
}

/// docs/corpus.md's contract-error output is what a corpus with two misfiled fixtures
/// gives today.
#[test]
fn the_corpus_page_shows_what_misfiled_fixtures_give() {
    let doc = read("docs/corpus.md");
    let shown = text_block_after(&doc, "Real output\nwith two fixtures in the wrong folders");
    let temp = tempfile::tempdir().unwrap();
    let corpus = temp.path().join("review_status");
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(root().join("corpora/review_status"))
        .arg(&corpus)
        .status()
        .unwrap();
    assert!(copy.success());
    let good = read("corpora/review_status/accepted/success_approved_compact.json");
    std::fs::write(corpus.join("near_miss/looks_fine.json"), &good).unwrap();
    let mut null_data: serde_json::Value = serde_json::from_str(&good).unwrap();
    null_data["data"] = serde_json::Value::Null;
    std::fs::write(
        corpus.join("accepted/null_data.json"),
        null_data.to_string(),
    )
    .unwrap();
    let out = airlock(
        &[
            "check",
            "--contract",
            "schemas/review_status",
            "--corpus",
            corpus.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_printed("docs/corpus.md", &shown, &out.stdout);
}

/// No run's output is copied by hand into the docs: every summary line a run prints
/// (`clean: N cases, …`) stands in a block one of the tests above runs and compares.
#[test]
fn every_run_summary_in_the_docs_is_compared_with_a_run() {
    let summary = regex::Regex::new(r"^\s*(clean|findings|contract errors): [0-9]+ cases").unwrap();
    // (document, the text that introduces the block a test checks)
    let checked = [
        (
            "docs/exec-protocol.md",
            "Real output, with an adapter that exits at once",
        ),
        ("docs/exec-protocol.md", "```console\n$ airlock check"),
        (
            "docs/corpus.md",
            "Real output\nwith two fixtures in the wrong folders",
        ),
        (
            "docs/variants.md",
            "then a table and a summary line. Real output",
        ),
    ];
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc
            .strip_prefix(root())
            .unwrap_or(&doc)
            .to_string_lossy()
            .replace("../", "");
        let covered: Vec<std::ops::Range<usize>> = checked
            .iter()
            .filter(|(d, _)| name.ends_with(d))
            .filter_map(|(_, marker)| {
                let at = text.find(marker)?;
                let open = at + text[at..].find("```")? + 3;
                let close = open + text[open..].find("```")?;
                Some(at..close)
            })
            .collect();
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            if summary.is_match(line) {
                assert!(
                    covered.iter().any(|r| r.contains(&offset)),
                    "{name}: a run's summary copied by hand (no test runs it): {}",
                    line.trim()
                );
            }
            offset += line.len();
        }
    }
}

/// Every `airlock init` command docs/init.md shows runs as written (from the repository
/// root, `--out` a scratch folder), and what it scaffolds passes `airlock check` and has
/// no lint error: the envelope, `--vendor` and `--lines` examples alike.
#[test]
fn every_init_command_of_the_init_page_scaffolds_a_contract_that_checks_clean() {
    let page = read("docs/init.md");
    let mut ran = Vec::new();
    for block in page.split("```sh\n").skip(1) {
        let block = &block[..block.find("```").unwrap()];
        let command = block.replace("\\\n", " ");
        let Some(line) = command.lines().find(|l| l.starts_with("airlock init ")) else {
            continue;
        };
        if line.contains("TOOL") {
            continue; // the usage line
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let tool = words[2];
        let tmp = tempfile::tempdir().unwrap();
        let out_dir = tmp.path().join("scaffold");
        let mut args: Vec<String> = words[1..].iter().map(|w| w.to_string()).collect();
        let at = args.iter().position(|w| w == "--out").expect("--out");
        args[at + 1] = out_dir.to_string_lossy().into_owned();
        let run = |args: &[String]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
                .args(args)
                .current_dir(root())
                .output()
                .unwrap()
        };
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{line}: {out:?}");
        let contract = out_dir
            .join("schemas")
            .join(tool)
            .to_string_lossy()
            .into_owned();
        let check = run(&[
            "check".into(),
            "--contract".into(),
            contract.clone(),
            "--quiet".into(),
        ]);
        assert_eq!(
            check.status.code(),
            Some(0),
            "{line}: the scaffold does not check clean:\n{}",
            String::from_utf8_lossy(&check.stdout)
        );
        let lint = run(&["lint".into(), "--contract".into(), contract]);
        assert_eq!(
            lint.status.code(),
            Some(0),
            "{line}: lint errors:\n{}",
            String::from_utf8_lossy(&lint.stdout)
        );
        ran.push(tool.to_owned());
    }
    assert_eq!(
        ran,
        ["pr_review_status", "ci_pipeline", "git_head"],
        "{ran:?}"
    );
}

/// docs/variants.md's human report of a naive adapter, its omitted-findings lines and its
/// JSON report are what the command it names gives today (elapsed time aside).
#[test]
fn the_variants_page_shows_what_a_naive_adapter_gets() {
    let doc = read("docs/variants.md");
    let tmp = tempfile::tempdir().unwrap();
    let json_path = tmp.path().join("report.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args([
            "check",
            "--contract",
            "schemas/review_status",
            "--adapter-cmd",
            "python3 harness/tests/adapters/leak.py",
            "--cases",
            "20",
            "--quiet",
            "--report",
        ])
        .arg(format!("json={}", json_path.display()))
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let mut shown = text_block_after(&doc, "then a table and a summary line. Real output");
    shown.extend(text_block_after(&doc, "are counted after the blocks"));
    assert!(shown.len() >= 10, "{shown:?}");
    assert_printed("docs/variants.md", &shown, &out.stdout);
    // The JSON block: every number and the finding it shows, as the run's report has them.
    let at = doc.find("### json").unwrap();
    let start = at + doc[at..].find("```json\n").unwrap() + "```json\n".len();
    let shown: serde_json::Value =
        serde_json::from_str(&doc[start..start + doc[start..].find("```").unwrap()]).unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    assert_eq!(shown["totals"], report["totals"]);
    assert_eq!(
        shown["findings_shown_per_class"],
        report["findings_shown_per_class"]
    );
    let (shown, report) = (&shown["contracts"][0], &report["contracts"][0]);
    for key in ["tool", "dir", "cases", "not_run"] {
        assert_eq!(shown[key], report[key], "{key}");
    }
    let class = "bad_string_bytes";
    assert_eq!(shown["classes"][class], report["classes"][class]);
    assert_eq!(
        shown["findings_omitted"][class],
        report["findings_omitted"][class]
    );
    let finding = &shown["findings"][0];
    let same = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["case"] == finding["case"])
        .expect("the finding shown is in the report");
    assert_eq!(finding, same);
}
