//! The renderings a CI system reads: JUnit, SARIF, the job summary and the Markdown report
//! for a pull-request comment.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use super::{markdown_text, printable, Conclusion, Finding, FindingKind, Report, Severity, Shown};
use crate::base::report::{line_of, relative, sarif_run_log, Align, Table};

impl Report {
    /// The JUnit rendering: a test suite per contract (`classname` = the contract's tool);
    /// a test case per case with findings (`name` = case id), failing with each
    /// finding's kind, severity, message and expected and actual agent values; and one
    /// passing test case per variant class for the cases without findings.
    #[cfg(feature = "junit")]
    pub fn junit(&self) -> String {
        use quick_junit::{NonSuccessKind, Report as Junit, TestCase, TestCaseStatus, TestSuite};
        let mut report = Junit::new("airlock check");
        for (c, shown) in self.contracts.iter().zip(self.shown()) {
            let mut suite = TestSuite::new(c.tool.clone());
            let mut by_case: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
            for f in shown.contract_errors.iter().chain(&shown.findings) {
                by_case.entry(f.case.as_str()).or_default().push(f);
            }
            for (case, findings) in &by_case {
                // A case whose every finding the baseline accepts is skipped, not failed:
                // CI's test report stays green as the run does.
                let accepted = findings.iter().all(|f| f.baselined.is_some());
                let mut status = if accepted {
                    TestCaseStatus::skipped()
                } else {
                    TestCaseStatus::non_success(NonSuccessKind::Failure)
                };
                let first = findings
                    .iter()
                    .find(|f| f.baselined.is_none())
                    .unwrap_or(&findings[0]);
                status.set_message(match &first.baselined {
                    Some(reason) => format!(
                        "baselined {} ({}): {reason}",
                        first.kind.as_str(),
                        first.severity.as_str()
                    ),
                    None => format!(
                        "{} ({}): {}",
                        first.kind.as_str(),
                        first.severity.as_str(),
                        first.message
                    ),
                });
                status.set_type(first.kind.as_str());
                let text = |v: &Option<Value>| v.as_ref().map_or("-".into(), Value::to_string);
                status.set_description(
                    findings
                        .iter()
                        .map(|f| {
                            format!(
                                "{}{} ({}) [{} {}]: {}\nexpected: {}\nactual:   {}{}",
                                f.baselined
                                    .as_ref()
                                    .map_or(String::new(), |r| format!("baselined ({r}): ")),
                                f.kind.as_str(),
                                f.severity.as_str(),
                                f.class,
                                f.location,
                                f.message,
                                text(&f.expected),
                                text(&f.actual),
                                f.reproducer.as_ref().map_or(String::new(), |r| format!(
                                    "\nreproduce: airlock check --replay {}",
                                    r.display()
                                ))
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                );
                let mut test = TestCase::new(*case, status);
                test.set_classname(c.tool.clone());
                suite.add_test_case(test);
            }
            // Every case with findings, shown or not, counts as failing.
            let mut failing_cases: BTreeMap<&str, &str> = BTreeMap::new();
            for f in c.contract_errors.iter().chain(&c.findings) {
                failing_cases
                    .entry(f.case.as_str())
                    .or_insert(f.class.as_str());
            }
            let mut omitted: BTreeMap<&str, Vec<String>> = BTreeMap::new();
            for ((class, kind), n) in &shown.omitted {
                omitted
                    .entry(class)
                    .or_default()
                    .push(format!("{} {n}", kind.as_str()));
            }
            for (class, counts) in &omitted {
                // One failing test case per class stands for the findings left out.
                let total: usize = shown
                    .omitted
                    .iter()
                    .filter(|((k, _), _)| k == class)
                    .map(|(_, n)| n)
                    .sum();
                // Skipped, as a case is, when the baseline accepts every one left out.
                let listed: std::collections::HashSet<*const Finding> = shown
                    .findings
                    .iter()
                    .chain(&shown.contract_errors)
                    .map(|f| std::ptr::from_ref(*f))
                    .collect();
                let accepted = c
                    .contract_errors
                    .iter()
                    .chain(&c.findings)
                    .filter(|f| f.class == *class && !listed.contains(&std::ptr::from_ref(*f)))
                    .all(|f| f.baselined.is_some());
                let mut status = if accepted {
                    TestCaseStatus::skipped()
                } else {
                    TestCaseStatus::non_success(NonSuccessKind::Failure)
                };
                status.set_message(format!(
                    "{total} more findings not shown: {} (--all-findings shows every one){}",
                    counts.join(", "),
                    if accepted { ", all baselined" } else { "" }
                ));
                let mut test = TestCase::new(format!("{class}: {total} more findings"), status);
                test.set_classname(c.tool.clone());
                suite.add_test_case(test);
            }
            for (class, summary) in &c.classes {
                let failing = failing_cases.values().filter(|k| *k == class).count();
                let passed = summary.cases.saturating_sub(failing);
                if passed > 0 {
                    let mut test = TestCase::new(
                        format!("{class}: {passed} cases without findings"),
                        TestCaseStatus::success(),
                    );
                    test.set_classname(c.tool.clone());
                    suite.add_test_case(test);
                }
            }
            report.add_test_suite(suite);
        }
        report.to_string().unwrap_or_default()
    }

    /// The SARIF 2.1.0 rendering: one rule per finding kind (with help text), each
    /// finding a result located in its fixture or schema file (with a region where the
    /// line is known), with `partialFingerprints` that survive seed changes (contract,
    /// class, location, kind).
    pub fn sarif(&self) -> String {
        let kinds = FindingKind::ALL;
        let rules: Vec<Value> = kinds
            .iter()
            .map(|kind| {
                json!({
                    "id": kind.as_str(),
                    "name": kind.as_str(),
                    "shortDescription": {"text": kind.summary()},
                    "fullDescription": {"text": kind.summary()},
                    "help": {"text": kind.help()},
                    "defaultConfiguration": {"level": "error"},
                })
            })
            .collect();
        let shown = self.shown();
        let results: Vec<Value> = shown
            .iter()
            .flat_map(|s| s.findings.iter())
            .chain(shown.iter().flat_map(|s| s.contract_errors.iter()))
            .map(|f| {
                let rule_index = kinds.iter().position(|k| *k == f.kind).unwrap_or(0);
                let level = match f.severity {
                    Severity::Error => "error",
                    Severity::Availability => "warning",
                };
                // The location with the seed's canaries written `<canary>`: the same finding
                // has the same fingerprint whatever the seed.
                let fingerprint = airlock_guard::sha256_hex(
                    format!(
                        "{}\u{1}{}\u{1}{}\u{1}{}",
                        f.tool,
                        f.class,
                        crate::base::report::stable_location(&f.location),
                        f.kind.as_str()
                    )
                    .as_bytes(),
                );
                let mut result = json!({
                    "ruleId": f.kind.as_str(),
                    "ruleIndex": rule_index,
                    "level": level,
                    "message": {"text": format!("{} [{} {}]: {}", f.case, f.class, f.location, f.message)},
                    "partialFingerprints": {"airlockFinding/v1": fingerprint},
                    "properties": {"tool": f.tool, "case": f.case, "class": f.class, "severity": f.severity.as_str()},
                });
                if let Some(reason) = &f.baselined {
                    // Accepted in the baseline file: code scanning shows it as suppressed.
                    result["suppressions"] =
                        json!([{"kind": "external", "status": "accepted", "justification": reason}]);
                }
                if let Some(file) = &f.file {
                    let mut physical = json!({"artifactLocation": {"uri": relative(file)}});
                    if let Some(line) = line_of(file, &f.location) {
                        physical["region"] = json!({"startLine": line});
                    }
                    result["locations"] = json!([{"physicalLocation": physical}]);
                }
                result
            })
            .collect();
        // The findings left out: counted in the run's property bag (per contract, class
        // and kind), and said in one notification of the invocation.
        let mut run = serde_json::Map::new();
        let omitted: Vec<Value> = self
            .contracts
            .iter()
            .zip(&shown)
            .flat_map(|(c, s)| {
                s.omitted.iter().map(move |((class, kind), n)| {
                    json!({"contract": c.tool, "class": class, "kind": kind.as_str(), "count": n})
                })
            })
            .collect();
        let total: usize = shown.iter().map(Shown::omitted_count).sum();
        run.insert(
            "properties".into(),
            json!({
                "findingsShownPerClass": self.shown_per_class,
                "findingsOmitted": total,
                "omitted": omitted,
            }),
        );
        if let (true, Some(max)) = (total > 0, self.shown_per_class) {
            run.insert(
                "invocations".into(),
                json!([{
                    "executionSuccessful": true,
                    "toolExecutionNotifications": [{
                        "level": "note",
                        "message": {"text": format!(
                            "{total} more findings not shown: the first {max} per contract, variant class and finding kind are (run.properties.omitted counts the rest; --all-findings shows every one)"
                        )},
                    }],
                }]),
            );
        }
        sarif_run_log("airlock", rules, results, run)
    }

    /// The closing summary a reviewer reads in a CI job's log: the verdict, findings by
    /// kind and severity, the three worst findings with their reproduce line, and the
    /// reports written.
    pub fn summary(&self, reports: &[&PathBuf]) -> String {
        let mut out = String::new();
        let findings: Vec<&Finding> = self.findings().collect();
        let mut by_kind: BTreeMap<(Severity, FindingKind), usize> = BTreeMap::new();
        for f in &findings {
            *by_kind.entry((f.severity, f.kind)).or_default() += 1;
        }
        let _ = writeln!(
            out,
            "airlock check: {} cases, {} findings{}, {} contract errors",
            self.cases(),
            findings.len(),
            self.baselined_note(),
            self.contract_errors().count()
        );
        for ((severity, kind), n) in by_kind.iter().rev() {
            let _ = writeln!(out, "  {n:>6} {} ({})", kind.as_str(), severity.as_str());
        }
        // The worst first: errors before availability, leaks and wrong verdicts first; one
        // per case, and none the baseline accepts.
        let mut worst: Vec<&Finding> = findings
            .iter()
            .copied()
            .filter(|f| f.baselined.is_none())
            .collect();
        let rank = |kind: FindingKind| match kind {
            FindingKind::Leak => 0,
            FindingKind::Verdict => 1,
            FindingKind::Shape => 2,
            FindingKind::Value => 3,
            _ => 4,
        };
        worst.sort_by_key(|f| (std::cmp::Reverse(f.severity), rank(f.kind)));
        let mut cases = std::collections::BTreeSet::new();
        worst.retain(|f| cases.insert((&f.tool, &f.case)));
        for f in worst.iter().take(3) {
            let _ = writeln!(
                out,
                "  worst: {} {} {} [{}]: {}",
                f.kind.as_str(),
                printable(&f.tool),
                printable(&f.case),
                printable(&f.class),
                printable(&f.message)
            );
            if let Some(path) = &f.reproducer {
                let _ = writeln!(
                    out,
                    "         reproduce: airlock check --replay {}",
                    printable(&path.display().to_string())
                );
            }
        }
        for path in reports {
            let _ = writeln!(out, "  report: {}", printable(&path.display().to_string()));
        }
        out
    }

    /// The Markdown rendering, for a pull-request comment.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let status = match self.conclusion() {
            Conclusion::Clean => "✅ clean",
            Conclusion::Findings => "❌ findings",
            Conclusion::ContractErrors => "❌ contract errors",
        };
        let _ = writeln!(out, "### airlock check: {status}\n");
        let baselined = self.baselined();
        if baselined > 0 {
            let _ = writeln!(
                out,
                "{baselined} of {} findings are accepted by the baseline (marked *baselined*).\n",
                self.findings().count()
            );
        }
        let mut table = Table::new(&[
            ("contract", Align::Left, 0),
            ("cases", Align::Right, 0),
            ("findings", Align::Right, 0),
            ("contract errors", Align::Right, 0),
        ]);
        for c in &self.contracts {
            table.row(vec![
                markdown_text(&c.tool),
                c.cases.to_string(),
                c.findings.len().to_string(),
                c.contract_errors.len().to_string(),
            ]);
        }
        out.push_str(&table.markdown());
        // The findings shown per class and kind, at most 50 rows (a comment has a size
        // limit, whatever --all-findings says).
        let shown = self.shown();
        let mut all: Vec<&Finding> = shown
            .iter()
            .flat_map(|s| s.contract_errors.iter().copied())
            .chain(shown.iter().flat_map(|s| s.findings.iter().copied()))
            .collect();
        let total = self.contract_errors().count() + self.findings().count();
        // What fails the run first; the accepted findings after.
        all.sort_by_key(|f| f.baselined.is_some());
        if !all.is_empty() {
            let mut table = Table::new(&[
                ("kind", Align::Left, 0),
                ("severity", Align::Left, 0),
                ("contract", Align::Left, 0),
                ("case", Align::Left, 0),
                ("message", Align::Left, 0),
                ("reproduce", Align::Left, 0),
            ]);
            for f in all.iter().take(50) {
                let reproduce = f.reproducer.as_ref().map_or(String::new(), |path| {
                    markdown_text(&format!("airlock check --replay {}", path.display()))
                });
                let baselined = if f.baselined.is_some() {
                    " *baselined*"
                } else {
                    ""
                };
                table.row(vec![
                    format!("{}{baselined}", f.kind.as_str()),
                    f.severity.as_str().to_owned(),
                    markdown_text(&f.tool),
                    markdown_text(&f.case),
                    markdown_text(&f.message),
                    reproduce,
                ]);
            }
            let _ = write!(out, "\n{}", table.markdown());
            let rows = all.len().min(50);
            if total > rows {
                let _ = writeln!(out, "\n…and {} more.", total - rows);
            }
        }
        let _ = writeln!(out, "\n{} cases, seed {}.", self.cases(), self.seed);
        out
    }
}
