//! Certificates as documents: JSON and Markdown (for a pull request or a review record),
//! SARIF 2.1.0 (a rule per change kind, each change a result located in the new schema
//! file) and JUnit (a test suite per certificate, a test case per change, failing where
//! the verdict fails the run).

use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;

use super::{Certificate, Class};
use crate::base::report::{cell_text, code_span, Align, Table};

impl Certificate {
    /// The certificate as pretty JSON.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The certificate for a pull request or a review record.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let side = |v: &Value| {
            v.get("version")
                .map(|n| format!("v{n}"))
                .or_else(|| {
                    v.get("vendor_schema")
                        .and_then(Value::as_str)
                        .map(|f| format!("vendor schema {}", code_span(f)))
                })
                .or_else(|| v.get("path").and_then(Value::as_str).map(code_span))
                .unwrap_or_default()
        };
        let _ = writeln!(
            out,
            "# Certificate: {} {} → {}\n\n**Verdict: {}** (evidence: {})\n\n| | schema | SHA-256 |\n|---|---|---|\n| from | {} | `{}` |\n| to | {} | `{}` |\n",
            code_span(&self.tool),
            side(&self.from),
            side(&self.to),
            self.verdict.as_str(),
            self.evidence.as_str(),
            side(&self.from),
            self.from["sha256"].as_str().unwrap_or_default(),
            side(&self.to),
            self.to["sha256"].as_str().unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "Set algebra: newly rejected **{}**, newly admitted **{}** (`no` is a proof).\n",
            self.semantic.newly_rejected.as_str(),
            self.semantic.newly_admitted.as_str()
        );
        let mut changes = Table::new(&[
            ("class", Align::Left, 0),
            ("change", Align::Left, 0),
            ("at", Align::Left, 0),
            ("detail", Align::Left, 0),
            ("evidence", Align::Left, 0),
            ("witness", Align::Left, 0),
        ]);
        for c in &self.changes {
            let witness = c.witness.as_ref().map_or_else(
                || "none".to_owned(),
                |w| {
                    let isolated = if w.isolated { "" } else { " (not isolated)" };
                    let instance = code_span(&w.instance.to_string());
                    format!("{}{isolated}: {instance}", w.accepted_by)
                },
            );
            changes.row(vec![
                c.class.as_str().to_owned(),
                c.kind.to_owned(),
                code_span(&c.pointer),
                cell_text(&c.detail),
                c.evidence.as_str().to_owned(),
                witness,
            ]);
        }
        let _ = write!(out, "## Changes\n\n{}", changes.markdown());
        if self.fixtures.is_empty() {
            return out;
        }
        let mut fixtures = Table::new(&[
            ("fixture", Align::Left, 0),
            ("old", Align::Left, 0),
            ("new", Align::Left, 0),
        ]);
        for f in &self.fixtures {
            let verdict = |admitted: bool| if admitted { "admit" } else { "reject" };
            let mark = if f.old == f.new { "" } else { " **changed**" };
            fixtures.row(vec![
                code_span(&f.fixture),
                verdict(f.old).to_owned(),
                format!("{}{mark}", verdict(f.new)),
            ]);
        }
        let _ = write!(out, "\n## Fixtures\n\n{}", fixtures.markdown());
        out
    }
}

/// Whether a change of `class` fails the run (`agent_visible` only with `strict`).
#[cfg(feature = "junit")]
fn fails(class: Class, strict: bool) -> bool {
    match class {
        Class::Breaking | Class::Unknown => true,
        Class::AgentVisible => strict,
        Class::Compatible => false,
    }
}

/// The certificates as SARIF 2.1.0: one rule per change kind found, one result per
/// change (`error` for breaking and unknown, `warning` for agent-visible, `note` for
/// compatible) located in `file` — the new schema — with a region where the member's
/// schema is found, and `partialFingerprints` of tool, kind and location.
pub fn sarif(certificates: &[&Certificate], file: &Path) -> String {
    let mut kinds: Vec<&str> = certificates
        .iter()
        .flat_map(|c| c.changes.iter().map(|x| x.kind))
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let rules: Vec<Value> = kinds
        .iter()
        .map(|kind| {
            json!({
                "id": kind,
                "name": kind,
                "shortDescription": {"text": format!("schema change: {kind}")},
                "help": {"text": "A difference between two schema versions, classed breaking (a response admitted before is rejected now), agent_visible (the agent can receive something new), unknown (undecided) or compatible; see docs/certify.md for the evidence kinds."},
            })
        })
        .collect();
    let uri = crate::base::report::relative(file);
    let results: Vec<Value> = certificates
        .iter()
        .flat_map(|c| c.changes.iter().map(move |x| (c, x)))
        .map(|(c, x)| {
            let level = match x.class {
                Class::Breaking | Class::Unknown => "error",
                Class::AgentVisible => "warning",
                Class::Compatible => "note",
            };
            let mut physical = json!({"artifactLocation": {"uri": uri}});
            if let Some(line) = crate::base::report::line_of(file, &x.pointer) {
                physical["region"] = json!({"startLine": line});
            }
            let witness = x.witness.as_ref().map_or(String::new(), |w| {
                format!(" (witness, {}: {})", w.accepted_by, w.instance)
            });
            let at = if x.pointer.is_empty() { "(root)" } else { &x.pointer };
            json!({
                "ruleId": x.kind,
                "ruleIndex": kinds.iter().position(|k| *k == x.kind).unwrap_or(0),
                "level": level,
                "message": {"text": format!("{}: {} {at}: {}{witness}", c.tool, x.class.as_str(), x.detail)},
                "locations": [{"physicalLocation": physical}],
                "partialFingerprints": {"airlockCertify/v1": airlock_guard::sha256_hex(
                    format!("{}\u{1}{}\u{1}{}", c.tool, x.kind, x.pointer).as_bytes())},
                "properties": {"tool": c.tool, "class": x.class.as_str(), "evidence": x.evidence.as_str()},
            })
        })
        .collect();
    crate::base::report::sarif_log("airlock certify", rules, results)
}

/// The certificates as JUnit: a test suite per certificate (`classname` = the tool), a
/// test case per change (`name` = kind and location), failing where that change fails
/// the run (breaking, unknown; agent-visible with `strict`), with its detail and witness;
/// a certificate without changes is one passing case.
#[cfg(feature = "junit")]
pub fn junit(certificates: &[&Certificate], strict: bool) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("airlock certify");
    for c in certificates {
        let mut suite = TestSuite::new(c.tool.clone());
        if c.changes.is_empty() {
            let mut test = TestCase::new(
                format!("no change ({})", c.evidence.as_str()),
                TestCaseStatus::success(),
            );
            test.set_classname(c.tool.clone());
            suite.add_test_case(test);
        }
        for x in &c.changes {
            let at = if x.pointer.is_empty() {
                "(root)"
            } else {
                &x.pointer
            };
            let status = if fails(x.class, strict) {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_type(x.class.as_str());
                status.set_message(format!("{} {at}: {}", x.class.as_str(), x.detail));
                status.set_description(format!(
                    "{} {}: {}\nevidence: {}{}",
                    x.kind,
                    at,
                    x.detail,
                    x.evidence.as_str(),
                    x.witness.as_ref().map_or(String::new(), |w| format!(
                        "\nwitness ({}): {}",
                        w.accepted_by, w.instance
                    ))
                ));
                status
            } else {
                TestCaseStatus::success()
            };
            let mut test = TestCase::new(format!("{} {at} ({})", x.kind, x.class.as_str()), status);
            test.set_classname(c.tool.clone());
            suite.add_test_case(test);
        }
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_default()
}
