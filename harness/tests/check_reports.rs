//! What a CI run of `airlock check` produces: every report format, every report from one
//! run (SARIF valid against its schema, JUnit readable), the closing summary, baselines
//! across seeds, and shards that together run exactly one run's cases.

use airlock_harness::adapter::GuardAdapter;
use airlock_harness::check::Check;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

use crate::check::{broken, guard, Flaw};
use crate::util::{airlock, contract_dir, root, TOOLS};

/// The SARIF file at `path`, asserted valid against the SARIF 2.1.0 schema (vendored in
/// the test data).
fn valid_sarif(path: &Path) -> Value {
    let schema: Value = serde_json::from_slice(
        &std::fs::read(root().join("harness/tests/data/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let sarif: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    sarif
}

#[test]
fn every_report_format_renders_the_findings() {
    let report = broken(Flaw::SkipsRequestIdCheck);
    let json: Value = serde_json::from_str(&report.json()).unwrap();
    assert_eq!(
        json["totals"]["findings"].as_u64().unwrap() as usize,
        report.findings().count()
    );
    assert!(json["totals"]["by_kind"]["verdict"].as_u64().unwrap() > 0);
    let junit = report.junit();
    assert!(
        junit.contains("<testsuite name=\"review_status\"")
            && junit.contains("request_id_mismatch")
            && junit.contains("<failure"),
        "{junit}"
    );
    let sarif: Value = serde_json::from_str(&report.sarif()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    // The first findings of each class and kind; the rest counted.
    assert_eq!(
        results.len() + report.findings_omitted(),
        report.findings().count()
    );
    assert_eq!(
        sarif["runs"][0]["properties"]["findingsOmitted"],
        report.findings_omitted()
    );
    let uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.ends_with(".json"), "{uri}");
    let markdown = report.markdown();
    assert!(markdown.contains("| review\\_status |") && markdown.contains("❌"));
    assert!(report.human(false).contains("findings:"));
}

#[test]
fn one_run_writes_every_report_sarif_valid_and_junit_readable_with_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let (sarif_path, junit, json) = (path("a.sarif"), path("junit.xml"), path("r.json"));
    let adapter = format!(
        "python3 {}",
        root().join("harness/tests/adapters/leak.py").display()
    );
    let out = airlock(
        &[
            "check",
            "--contract",
            "schemas/review_status",
            "--cases",
            "10",
            "--adapter-cmd",
            &adapter,
            "--reproducers",
            &path("repro"),
            "--report",
            &format!("sarif={sarif_path}"),
            "--report",
            &format!("junit={junit}"),
            "--report",
            &format!("json={json}"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let findings = report["contracts"][0]["findings"].as_array().unwrap();
    assert!(!findings.is_empty());

    // SARIF 2.1.0, by its schema: rules, regions, fingerprints.
    let sarif = valid_sarif(Path::new(&sarif_path));
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(rules
        .iter()
        .any(|r| r["id"] == "leak" && r["help"]["text"].is_string()));
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    assert!(results
        .iter()
        .all(|r| r["partialFingerprints"]["airlockFinding/v1"].is_string()));
    assert!(results
        .iter()
        .any(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"].is_u64()));

    // JUnit, by a reader: classname = the contract, name = the case id.
    let suites =
        junit_parser::from_reader(std::io::Cursor::new(std::fs::read(&junit).unwrap())).unwrap();
    let cases: Vec<_> = suites.suites.iter().flat_map(|s| &s.cases).collect();
    assert!(cases
        .iter()
        .all(|c| c.classname.as_deref() == Some("review_status")));
    // The findings a report leaves out stand as one failing test case per class.
    let failing: BTreeSet<&str> = cases
        .iter()
        .filter(|c| c.status.is_failure() && !c.name.ends_with(" more findings"))
        // The reader names a case `classname::name`.
        .map(|c| c.name.strip_prefix("review_status::").unwrap_or(&c.name))
        .collect();
    let with_findings: BTreeSet<&str> = findings
        .iter()
        .map(|f| f["case"].as_str().unwrap())
        .collect();
    assert_eq!(failing.len(), with_findings.len());
    assert!(
        failing == with_findings,
        "JUnit failures are the cases with findings"
    );

    // The closing summary: counts, the worst findings with their reproduce line, reports.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("worst: leak"), "{stderr}");
    assert!(
        stderr.contains("reproduce: airlock check --replay"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("report: {sarif_path}")),
        "{stderr}"
    );
    let quiet = airlock(
        &[
            "check",
            "--contract",
            "schemas/deploy_status",
            "--cases",
            "5",
            "--quiet",
        ],
        b"",
    );
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    let bad = airlock(&["check", "--report", "pdf=x.pdf"], b"");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn the_shards_of_a_run_hold_exactly_its_cases_each_once() {
    use airlock_harness::adversary::generate;
    use airlock_harness::check::{Shard, Subject};
    let subjects: Vec<Subject> = TOOLS
        .iter()
        .map(|t| Subject::load(&contract_dir(t)).unwrap())
        .collect();
    let mut all = BTreeSet::new();
    for s in &subjects {
        for case in generate(s.guard.contract(), &s.corpus, 4, 50) {
            all.insert((s.guard.contract().tool().to_owned(), case.id));
        }
    }
    let count = 3;
    let mut union = BTreeSet::new();
    let mut ran = 0;
    for index in 1..=count {
        let shard = Shard::new(index, count).unwrap();
        let mine: Vec<_> = all.iter().filter(|(t, id)| shard.holds(t, id)).collect();
        assert!(!mine.is_empty(), "part {index} is empty");
        for key in mine {
            assert!(union.insert(key.clone()), "{key:?} is in two parts");
        }
        // The run applies the partition: its cases are this part's.
        let mut check = Check::contract(contract_dir(TOOLS[0]))
            .seed(4)
            .random_cases(50);
        for tool in &TOOLS[1..] {
            check = check.and_contract(contract_dir(tool));
        }
        let report = check
            .shard(shard)
            .run(&mut GuardAdapter::new(TOOLS.map(guard)))
            .unwrap();
        report.assert_clean();
        ran += report.cases();
    }
    assert_eq!(union, all);
    assert_eq!(ran, all.len());
    for bad in ["0/2", "3/2", "1", "a/b", "1/0"] {
        assert!(bad.parse::<Shard>().is_err(), "{bad}");
        let out = airlock(&["check", "--shard", bad], b"");
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
}

#[test]
fn a_baseline_accepts_findings_across_seeds_until_it_expires_and_reports_stale_entries() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.toml");
    let baseline = baseline.to_str().unwrap();
    let adapter = format!(
        "python3 {}",
        root().join("harness/tests/adapters/leak.py").display()
    );
    let run = |seed: &str, extra: &[&str]| {
        let mut args = vec![
            "check",
            "--contract",
            "schemas/deploy_status",
            "--cases",
            "0",
            "--seed",
            seed,
            "--quiet",
            "--adapter-cmd",
            &adapter,
        ];
        args.extend_from_slice(extra);
        airlock(&args, b"")
    };
    // Written from one seed, it accepts the findings of another.
    let out = run("1", &["--write-baseline", baseline]);
    assert_eq!(out.status.code(), Some(1));
    let written = std::fs::read_to_string(baseline).unwrap();
    assert!(written.contains("TODO: say why"), "{written}");
    // As written it accepts nothing: the placeholder reasons are refused at load (exit 2,
    // naming the file and the entries), until a person says why.
    let out = run("1", &["--baseline", baseline]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(baseline)
            && stderr.contains("finding[0]")
            && stderr.contains("placeholder"),
        "{stderr}"
    );
    let written = written.replace(
        "TODO: say why this finding is accepted",
        "known: ticket SEC-7",
    );
    std::fs::write(baseline, &written).unwrap();
    let out = run("1", &["--baseline", baseline]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("findings baselined"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("(baselined)"));
    // Another seed: other canaries, other generated instances; every finding on a
    // fixture's variants is still matched (canary names in locations are `<canary>`).
    let out = run("2", &["--baseline", baseline, "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["contracts"][0]["findings"].as_array().unwrap();
    let on_fixtures: Vec<&Value> = findings
        .iter()
        .filter(|f| !f["case"].as_str().unwrap().contains("generated_"))
        .collect();
    assert!(on_fixtures.len() > 100, "{}", on_fixtures.len());
    for f in on_fixtures {
        assert!(
            f["baselined"].is_string(),
            "not baselined across seeds: {f}"
        );
    }

    // An entry that matches nothing is stale (reported, not failing).
    let stale = format!(
        "{written}\n[[finding]]\ncontract = \"deploy_status\"\nclass = \"extra_property\"\nlocation = \"/nowhere\"\nkind = \"leak\"\nreason = \"gone\"\nexpires = 2999-01-01\n"
    );
    std::fs::write(baseline, &stale).unwrap();
    let out = run("1", &["--baseline", baseline]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("stale baseline entry"), "{stderr}");

    // Expired: the run fails, naming the entry.
    let expired = written.replace(
        &written[written.find("expires = \"").unwrap() + 11..][..10],
        "2020-01-01",
    );
    std::fs::write(baseline, &expired).unwrap();
    let out = run("1", &["--baseline", baseline]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("expired on 2020-01-01"), "{stderr}");

    // A reason is mandatory.
    std::fs::write(baseline, written.replace("known: ticket SEC-7", " ")).unwrap();
    let out = run("2", &["--baseline", baseline]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no reason"));
}

/// Accepted findings stay accepted in every report: JUnit skips them, SARIF suppresses
/// them, Markdown marks them; rewriting a reviewed baseline keeps its reasons and dates.
#[test]
fn baselined_findings_are_accepted_in_every_report_and_a_rewrite_keeps_the_review() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let baseline = path("baseline.toml");
    let adapter = format!(
        "python3 {}",
        root().join("harness/tests/adapters/leak.py").display()
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--contract",
            "schemas/deploy_status",
            "--cases",
            "0",
            "--quiet",
            "--adapter-cmd",
            &adapter,
            "--reproducers",
            dir.path().to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        airlock(&args, b"")
    };
    assert_eq!(run(&["--write-baseline", &baseline]).status.code(), Some(1));
    let reviewed = std::fs::read_to_string(&baseline)
        .unwrap()
        .replace("TODO: say why this finding is accepted", "ticket SEC-12")
        .replacen("expires = \"", "expires = \"2999-01-02\"\n#", 1);
    // The first entry now expires 2999-01-02 (its old date is commented out).
    std::fs::write(&baseline, &reviewed).unwrap();
    let (sarif, junit, markdown) = (path("r.sarif"), path("r.xml"), path("r.md"));
    let out = run(&[
        "--baseline",
        &baseline,
        "--report",
        &format!("sarif={sarif}"),
        "--report",
        &format!("junit={junit}"),
        "--report",
        &format!("markdown={markdown}"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Still valid SARIF with the suppressions.
    let sarif = valid_sarif(Path::new(&sarif));
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for result in results {
        assert_eq!(
            result["suppressions"][0]["justification"], "ticket SEC-12",
            "{result}"
        );
    }
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(
        junit.contains("<skipped") && !junit.contains("<failure"),
        "{junit}"
    );
    assert!(junit.contains("baselined"), "{junit}");
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    assert!(
        markdown.contains("✅ clean") && markdown.contains("*baselined*"),
        "{markdown}"
    );

    // Rewritten over itself: every reviewed reason and date is kept.
    let out = run(&["--baseline", &baseline, "--write-baseline", &baseline]);
    assert_eq!(out.status.code(), Some(0));
    let rewritten = std::fs::read_to_string(&baseline).unwrap();
    assert!(!rewritten.contains("TODO"), "{rewritten}");
    assert!(rewritten.contains("ticket SEC-12"), "{rewritten}");
    assert!(rewritten.contains("2999-01-02"), "{rewritten}");

    // A sharded run cannot write one (it sees only its shard's findings), and two
    // reports in one file are refused before the run.
    let out = run(&["--shard", "1/2", "--write-baseline", &path("b2.toml")]);
    assert_eq!(out.status.code(), Some(2));
    let same = path("same.out");
    let out = run(&[
        "--report",
        &format!("sarif={same}"),
        "--report",
        &format!("junit={same}"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("both name"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `airlock lint --report sarif=PATH`: valid SARIF 2.1.0 with a rule per lint rule and
/// every finding at its file, line and column.
#[test]
fn lint_writes_sarif_with_its_rules_and_regions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lint.sarif");
    let out = airlock(
        &[
            "lint",
            "--format",
            "json",
            "--report",
            &format!("sarif={}", path.display()),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = json["findings"].as_array().unwrap();
    assert!(!findings.is_empty(), "the shipped contracts have warnings");
    let sarif = valid_sarif(&path);
    let run = &sarif["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), airlock_harness::lint::RULES.len());
    // A contract that does not load: its finding's rule is defined too, and its index
    // points at it (found in review: it pointed at the first rule).
    let broken = dir.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("contract.toml"),
        "tool = \"x\"\n[input]\nkind = \"nope\"\n",
    )
    .unwrap();
    let other = dir.path().join("broken.sarif");
    let out = airlock(
        &[
            "lint",
            "--contract",
            broken.to_str().unwrap(),
            "--report",
            &format!("sarif={}", other.display()),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    let broken_sarif = valid_sarif(&other);
    let broken_run = &broken_sarif["runs"][0];
    for result in broken_run["results"].as_array().unwrap() {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            broken_run["tool"]["driver"]["rules"][index]["id"], result["ruleId"],
            "{result}"
        );
    }
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    for (result, finding) in results.iter().zip(findings) {
        assert_eq!(result["ruleId"], finding["rule"]);
        let region = &result["locations"][0]["physicalLocation"]["region"];
        assert_eq!(region["startLine"], finding["line"], "{result}");
        assert_eq!(
            rules[result["ruleIndex"].as_u64().unwrap() as usize]["id"],
            finding["rule"]
        );
    }
}

/// `airlock certify --report sarif=… --report junit=…`: the certificate as valid SARIF
/// (a result per change, located in the new schema file) and as JUnit a reader parses
/// (a failing case per breaking change, a passing one per agent-visible change).
#[test]
fn certify_writes_sarif_and_junit_of_its_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (sarif, junit) = (dir.path().join("c.sarif"), dir.path().join("c.xml"));
    let out = airlock(
        &[
            "certify",
            "--contract",
            "schemas/review_status",
            "--format",
            "json",
            "--report",
            &format!("sarif={}", sarif.display()),
            "--report",
            &format!("junit={}", junit.display()),
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "review_status v1 -> v2 is breaking"
    );
    let certificate: Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = certificate["changes"].as_array().unwrap();
    let sarif = valid_sarif(&sarif);
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), changes.len());
    for (result, change) in results.iter().zip(changes) {
        assert_eq!(result["ruleId"], change["kind"]);
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(uri.ends_with("review_status/v2.schema.json"), "{uri}");
        let level = if change["class"] == "breaking" {
            "error"
        } else {
            "warning"
        };
        assert_eq!(result["level"], level, "{result}");
    }
    let suites =
        junit_parser::from_reader(std::io::Cursor::new(std::fs::read(&junit).unwrap())).unwrap();
    let cases: Vec<_> = suites.suites.iter().flat_map(|s| &s.cases).collect();
    assert_eq!(cases.len(), changes.len());
    let failing = cases.iter().filter(|c| c.status.is_failure()).count();
    let breaking = changes.iter().filter(|c| c["class"] == "breaking").count();
    assert!(breaking > 0);
    assert_eq!(failing, breaking);
}

/// A report of review_status by an adapter that misspells the tool of every agent value:
/// a `value` finding on every case of every class.
fn every_case_wrong() -> airlock_harness::Report {
    let mut adapter = crate::bounds::WrongTool(GuardAdapter::new([guard("review_status")]));
    Check::contract(contract_dir("review_status"))
        .random_cases(0)
        .run(&mut adapter)
        .unwrap()
}

#[test]
fn reports_show_the_first_findings_of_each_class_and_kind_and_count_the_rest() {
    use airlock_harness::check::MAX_FINDINGS_SHOWN_PER_CLASS as MAX;
    let mut report = every_case_wrong();
    let total = report.findings().count();
    let omitted = report.findings_omitted();
    assert!(omitted > 0 && omitted < total, "{omitted} of {total}");
    // Display only: the run still fails on every finding.
    assert_eq!(report.conclusion(), airlock_harness::Conclusion::Findings);

    let json: Value = serde_json::from_str(&report.json()).unwrap();
    let contract = &json["contracts"][0];
    let shown = contract["findings"].as_array().unwrap();
    assert_eq!(json["totals"]["findings"], total);
    assert_eq!(json["totals"]["findings_omitted"], omitted);
    assert_eq!(json["findings_shown_per_class"], MAX);
    assert_eq!(shown.len() + omitted, total);
    let mut per_class: std::collections::BTreeMap<&str, usize> = Default::default();
    for f in shown {
        *per_class.entry(f["class"].as_str().unwrap()).or_default() += 1;
    }
    for (class, n) in &per_class {
        assert!(*n <= MAX, "{class}: {n}");
        let left = contract["findings_omitted"][class]["value"]
            .as_u64()
            .unwrap_or(0) as usize;
        assert_eq!(
            n + left,
            contract["classes"][class]["findings"].as_u64().unwrap() as usize,
            "{class}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let sarif_path = dir.path().join("r.sarif");
    std::fs::write(&sarif_path, report.sarif()).unwrap();
    let sarif = valid_sarif(&sarif_path);
    let run = &sarif["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), shown.len());
    assert_eq!(run["properties"]["findingsOmitted"], omitted);
    let notes = run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
        .as_str()
        .unwrap();
    assert!(
        notes.contains(&format!("{omitted} more findings not shown")),
        "{notes}"
    );

    let human = report.human(false);
    assert!(
        human.contains(&format!("review_status: {omitted} more findings not shown")),
        "{human}"
    );
    assert_eq!(
        human.matches("\nvalue review_status ").count() + 1,
        shown.len()
    );
    let junit =
        junit_parser::from_reader(std::io::Cursor::new(report.junit().into_bytes())).unwrap();
    let omitted_cases = junit.suites[0]
        .cases
        .iter()
        .filter(|c| c.name.contains("more findings") && c.status.is_failure())
        .count();
    assert!(omitted_cases > 0);

    // Every finding when asked.
    report.show_every_finding();
    let json: Value = serde_json::from_str(&report.json()).unwrap();
    assert_eq!(
        json["contracts"][0]["findings"].as_array().unwrap().len(),
        total
    );
    assert_eq!(json["totals"]["findings_omitted"], 0);
    assert_eq!(
        json["contracts"][0]["findings_omitted"],
        serde_json::json!({})
    );
    let sarif: Value = serde_json::from_str(&report.sarif()).unwrap();
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), total);
    assert!(!report.human(false).contains("more findings not shown"));
}

#[test]
fn all_findings_lists_every_finding_of_a_run_and_the_exit_code_counts_them_either_way() {
    let adapter = format!(
        "python3 {}",
        root().join("harness/tests/adapters/leak.py").display()
    );
    let run = |more: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec![
            "check",
            "--contract",
            "schemas/review_status",
            "--cases",
            "10",
            "--quiet",
            "--format",
            "json",
            "--adapter-cmd",
            &adapter,
            "--reproducers",
            dir.path().to_str().unwrap(),
        ];
        args.extend(more);
        let out = airlock(&args, b"");
        assert_eq!(out.status.code(), Some(1));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let bounded = run(&[]);
    let every = run(&["--all-findings"]);
    let total = bounded["totals"]["findings"].as_u64().unwrap();
    let omitted = bounded["totals"]["findings_omitted"].as_u64().unwrap();
    assert!(omitted > 0, "{}", bounded["totals"]);
    assert_eq!(
        bounded["contracts"][0]["findings"]
            .as_array()
            .unwrap()
            .len() as u64
            + omitted,
        total
    );
    assert_eq!(every["totals"]["findings"], total);
    assert_eq!(every["totals"]["findings_omitted"], 0);
    assert_eq!(
        every["contracts"][0]["findings"].as_array().unwrap().len() as u64,
        total
    );
}

/// `assert_clean` of a run with thousands of findings: a panic message of a few
/// kilobytes (counts, the first findings, reproduce lines) and the reproducers written
/// in the folder given, each replaying the finding.
#[test]
fn assert_clean_panics_with_a_short_summary_and_writes_its_reproducers() {
    let report = every_case_wrong();
    assert!(
        report.human(false).len() > 100_000,
        "the old message's size"
    );
    let dir = tempfile::tempdir().unwrap();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        report.assert_clean_in(dir.path());
    }))
    .expect_err("findings fail");
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.len() < 4096, "{} bytes: {message}", message.len());
    let findings = report.findings().count();
    assert!(
        message.contains(&format!("{findings} findings")),
        "{message}"
    );
    assert!(
        message.contains(&format!("review_status: value {findings}")),
        "{message}"
    );
    assert!(
        message.contains("first findings:\n  value review_status "),
        "{message}"
    );
    let written = crate::bounds::files_under(dir.path(), ".case.json");
    assert!(!written.is_empty());
    assert!(
        message.contains(&format!(
            "{} reproducers written under {}",
            written.len(),
            dir.path().display()
        )),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "airlock check --replay {}",
            dir.path().join("review_status").display()
        )),
        "{message}"
    );
    // Written with an absolute contract folder: it replays from anywhere.
    let reproducer: airlock_harness::Reproducer =
        serde_json::from_slice(&std::fs::read(&written[0]).unwrap()).unwrap();
    assert!(reproducer.contract.is_absolute());
    let mut adapter = crate::bounds::WrongTool(GuardAdapter::new([guard("review_status")]));
    let replayed = airlock_harness::check::replay(&reproducer, &mut adapter).unwrap();
    assert!(replayed.findings().count() > 0);
}
