//! The documents show what the code prints: variant counts, console blocks, run summaries
//! and scaffolds are compared with a run, and the Rust snippets compile.

use airlock_harness::adversary::CLASSES;
use std::collections::{BTreeMap, BTreeSet};

use super::{documents, read};
use crate::util::{airlock, root};

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
