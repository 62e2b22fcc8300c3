//! What a check run found, and its five renderings: human and JSON here; JUnit, SARIF and
//! Markdown, the ones a CI system reads, in `ci.rs`.

use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::base::report::{Align, Table};

use crate::base::report::{clip, MAX_MESSAGE_CHARS};
pub use crate::base::report::{markdown_text, printable, visible};
use crate::cases::Case;

mod ci;

/// What kind of invariant a finding breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FindingKind {
    /// Admitted what the contract rejects, or the reverse.
    Verdict,
    /// Same verdict, different agent value.
    Value,
    /// A canary from the input reached the agent value.
    Leak,
    /// The agent value is not one of the two closed shapes.
    Shape,
    /// The adapter died.
    Crash,
    /// The adapter did not answer in time.
    Timeout,
    /// The adapter broke the exec protocol.
    Protocol,
    /// The adapter flooded its output.
    Flood,
    /// A fixture (or constructed case) disagrees with its own contract.
    Contract,
}

impl FindingKind {
    /// Every kind, in report order.
    pub const ALL: [FindingKind; 9] = [
        FindingKind::Verdict,
        FindingKind::Value,
        FindingKind::Leak,
        FindingKind::Shape,
        FindingKind::Crash,
        FindingKind::Timeout,
        FindingKind::Protocol,
        FindingKind::Flood,
        FindingKind::Contract,
    ];

    /// One line on what the kind means.
    pub fn summary(self) -> &'static str {
        match self {
            FindingKind::Verdict => "The adapter admitted what the contract rejects, or rejected what it admits.",
            FindingKind::Value => "Same verdict as the contract, but a different agent value.",
            FindingKind::Leak => "Text planted in a rejected input reached the agent value.",
            FindingKind::Shape => "The agent's bytes are not one unambiguous JSON value of one of the two closed shapes.",
            FindingKind::Crash => "The adapter exited without answering.",
            FindingKind::Timeout => "The adapter did not answer in time (or the run reached --max-duration).",
            FindingKind::Protocol => "The adapter broke the exec protocol.",
            FindingKind::Flood => "The adapter wrote an answer line over the limit.",
            FindingKind::Contract => "A fixture or constructed case disagrees with its own contract.",
        }
    }

    /// What to do about a finding of this kind.
    pub fn help(self) -> &'static str {
        match self {
            FindingKind::Verdict => "Replay the reproducer; an adapter that admits must run every stage of the guard (limits, strict parse, schema, binding, checks); one that rejects valid input is over-strict (severity availability).",
            FindingKind::Value => "Build the agent value from the contract's agent fields only, with tool and request_id from the request and retryable from the policy.",
            FindingKind::Leak => "Never copy upstream text or validator messages into the agent value; hand the agent the guard's fixed failure.",
            FindingKind::Shape => "Hand the agent exactly one of the two closed shapes, each member once, serialised by a JSON writer.",
            FindingKind::Crash => "Read the stderr tail in the message; the adapter must answer every case and exit only at the end of input.",
            FindingKind::Timeout => "Answer each case within --timeout-ms and flush every answer line.",
            FindingKind::Protocol => "Answer each case line with one line {\"case\", \"agent\"}, in order (docs/exec-protocol.md).",
            FindingKind::Flood => "Keep answer lines under 1 MiB.",
            FindingKind::Contract => "Fix the fixture or the contract so that the fixture's folder states the contract's verdict.",
        }
    }

    /// The kind's name.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Verdict => "verdict",
            FindingKind::Value => "value",
            FindingKind::Leak => "leak",
            FindingKind::Shape => "shape",
            FindingKind::Crash => "crash",
            FindingKind::Timeout => "timeout",
            FindingKind::Protocol => "protocol",
            FindingKind::Flood => "flood",
            FindingKind::Contract => "contract",
        }
    }
}

/// How bad a finding is for the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Severity {
    /// The adapter rejected what the contract admits: the agent loses evidence it was
    /// owed (a `verdict` finding in that direction).
    Availability,
    /// Everything else: the adapter admitted or passed on what the contract rejects, a
    /// wrong value, a leak, a shape the agent cannot trust, or an adapter that crashed,
    /// hung or broke the protocol (what its agent would then receive is unknown).
    #[default]
    Error,
}

impl Severity {
    /// The severity's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Availability => "availability",
            Severity::Error => "error",
        }
    }

    /// The severity of a `kind` finding on a case the reference admitted or rejected.
    pub fn of(kind: FindingKind, reference_admits: bool) -> Self {
        if kind == FindingKind::Verdict && reference_admits {
            Severity::Availability
        } else {
            Severity::Error
        }
    }
}

/// One broken invariant on one case.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// The contract's tool.
    pub tool: String,
    /// The case id.
    pub case: String,
    /// The variant class.
    pub class: String,
    /// Where the variant applies (JSON pointer, `byte:N`, or empty).
    pub location: String,
    /// What broke.
    pub kind: FindingKind,
    /// How bad it is for the agent.
    pub severity: Severity,
    /// A sentence for the reader.
    pub message: String,
    /// The reference's agent value; one over 16 KiB of JSON is a string holding the start
    /// of its JSON text and its size: `"{\"tool\"… (20388 bytes of JSON in all, cut)"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// The adapter's agent value, cut as `expected` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<Value>,
    /// The fixture or schema file the case comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// The reproducer written for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<PathBuf>,
    /// Accepted by the baseline, with the entry's reason: reported, never failing the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baselined: Option<String>,
}

impl Finding {
    /// A finding of `kind` on `case` of `tool`'s contract: no values, file or reproducer
    /// yet (set them with struct update syntax).
    pub(crate) fn on_case(
        tool: &str,
        case: &Case,
        kind: FindingKind,
        severity: Severity,
        message: String,
    ) -> Self {
        Self {
            case: case.id.clone(),
            class: case.class.clone(),
            location: case.location.clone(),
            severity,
            ..Self::on_adapter(tool, "", kind, message)
        }
    }

    /// An error on the adapter as a whole, not on one case: class `adapter`, case
    /// `adapter/<what>`, no location.
    pub(crate) fn on_adapter(tool: &str, what: &str, kind: FindingKind, message: String) -> Self {
        Self {
            tool: tool.to_owned(),
            case: format!("adapter/{what}"),
            class: "adapter".into(),
            location: String::new(),
            kind,
            severity: Severity::Error,
            // The oracle's sentence may quote what the adapter answered.
            message: clip(&message, MAX_MESSAGE_CHARS).into_owned(),
            expected: None,
            actual: None,
            file: None,
            reproducer: None,
            baselined: None,
        }
    }
}

/// Cases and findings of one variant class.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[non_exhaustive]
pub struct ClassSummary {
    /// Cases run (or judged, for contract errors).
    pub cases: usize,
    /// Findings.
    pub findings: usize,
}

/// One contract's results.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ContractReport {
    /// The tool.
    pub tool: String,
    /// The contract folder.
    pub dir: Option<PathBuf>,
    /// Cases run through the adapter.
    pub cases: usize,
    /// Cases not run because the adapter was given up on.
    pub not_run: usize,
    /// Per class.
    pub classes: BTreeMap<String, ClassSummary>,
    /// Findings on the adapter.
    pub findings: Vec<Finding>,
    /// Fixtures or constructed cases that disagree with their own contract.
    pub contract_errors: Vec<Finding>,
    /// Findings whose reproducer was not written: past the cap per variant class and
    /// finding kind.
    pub reproducers_not_written: usize,
    /// Reproducers of a run without a reproducer folder, within the cap: written by
    /// [`Report::assert_clean`] (or beside a replayed file).
    #[serde(skip)]
    pub(crate) kept: Vec<crate::check::Kept>,
}

/// What a rendering shows of one contract: the first findings and contract errors of
/// each variant class and finding kind, and how many of the others it leaves out.
pub(crate) struct Shown<'a> {
    /// Findings on the adapter shown, in run order.
    pub findings: Vec<&'a Finding>,
    /// Contract errors shown, in order.
    pub contract_errors: Vec<&'a Finding>,
    /// Findings and contract errors left out, per class and kind.
    pub omitted: BTreeMap<(&'a str, FindingKind), usize>,
}

impl Shown<'_> {
    /// Findings and contract errors left out.
    pub fn omitted_count(&self) -> usize {
        self.omitted.values().sum()
    }
}

impl ContractReport {
    pub(crate) fn new(tool: &str, dir: Option<&Path>) -> Self {
        Self {
            tool: tool.to_owned(),
            dir: dir.map(Path::to_path_buf),
            cases: 0,
            not_run: 0,
            classes: BTreeMap::new(),
            findings: Vec::new(),
            contract_errors: Vec::new(),
            reproducers_not_written: 0,
            kept: Vec::new(),
        }
    }

    /// What a report shows of this contract: the first `per_class` findings (and
    /// contract errors) of each variant class and finding kind, every one when `None`.
    pub(crate) fn shown<'a>(&'a self, per_class: Option<usize>) -> Shown<'a> {
        let mut seen: BTreeMap<(&'a str, FindingKind), usize> = BTreeMap::new();
        let mut take = |list: &'a [Finding]| -> Vec<usize> {
            let mut shown = Vec::new();
            for (i, f) in list.iter().enumerate() {
                let n = seen.entry((f.class.as_str(), f.kind)).or_default();
                *n += 1;
                if per_class.is_none_or(|max| *n <= max) {
                    shown.push(i);
                }
            }
            shown
        };
        let errors = take(&self.contract_errors);
        let findings = take(&self.findings);
        let omitted = seen
            .into_iter()
            .filter_map(|(key, n)| {
                let more = n.saturating_sub(per_class?);
                (more > 0).then_some((key, more))
            })
            .collect();
        Shown {
            findings: findings.into_iter().map(|i| &self.findings[i]).collect(),
            contract_errors: errors
                .into_iter()
                .map(|i| &self.contract_errors[i])
                .collect(),
            omitted,
        }
    }
}

/// What a run concluded; the `airlock` binary maps it to its exit code (0, 1, 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conclusion {
    /// No finding (at the severity asked for) and no contract error.
    Clean,
    /// At least one finding on the adapter that no baseline entry accepts.
    Findings,
    /// A contract or its corpus could not be checked.
    ContractErrors,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The seed.
    pub seed: u64,
    /// Per contract, in order.
    pub contracts: Vec<ContractReport>,
    /// Wall time.
    #[serde(serialize_with = "seconds")]
    pub elapsed: Duration,
    /// Findings the renderings show in full per contract, variant class and finding kind
    /// (the others are counted); `None`: every one. Default
    /// [`MAX_FINDINGS_SHOWN_PER_CLASS`](crate::check::MAX_FINDINGS_SHOWN_PER_CLASS).
    #[serde(skip)]
    pub shown_per_class: Option<usize>,
}

/// `tool: N more findings not shown (…)` and one line per class with its counts per kind;
/// nothing when nothing is left out.
fn omitted_lines(tool: &str, shown: &Shown<'_>, per_class: Option<usize>) -> String {
    let (total, Some(max)) = (shown.omitted_count(), per_class) else {
        return String::new();
    };
    if total == 0 {
        return String::new();
    }
    let mut out = format!(
        "{}: {total} more findings not shown (the first {max} per variant class and finding kind are; --all-findings shows every one)\n",
        printable(tool)
    );
    let mut by_class: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for ((class, kind), n) in &shown.omitted {
        by_class
            .entry(class)
            .or_default()
            .push(format!("{} {n}", kind.as_str()));
    }
    for (class, counts) in by_class {
        let _ = writeln!(out, "    {}: {}", printable(class), counts.join(", "));
    }
    out
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Report {
    /// Show every finding in the renderings (`--all-findings`), not only the first
    /// [`MAX_FINDINGS_SHOWN_PER_CLASS`](crate::check::MAX_FINDINGS_SHOWN_PER_CLASS) per
    /// contract, variant class and finding kind.
    pub fn show_every_finding(&mut self) {
        self.shown_per_class = None;
    }

    /// What the renderings show of each contract, in order.
    pub(crate) fn shown(&self) -> Vec<Shown<'_>> {
        self.contracts
            .iter()
            .map(|c| c.shown(self.shown_per_class))
            .collect()
    }

    /// Findings and contract errors the renderings leave out (counted, not shown).
    pub fn findings_omitted(&self) -> usize {
        self.shown().iter().map(Shown::omitted_count).sum()
    }

    /// Every finding on the adapter.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.contracts.iter().flat_map(|c| c.findings.iter())
    }

    /// Every contract error.
    pub fn contract_errors(&self) -> impl Iterator<Item = &Finding> {
        self.contracts.iter().flat_map(|c| c.contract_errors.iter())
    }

    /// Cases run in all.
    pub fn cases(&self) -> usize {
        self.contracts.iter().map(|c| c.cases).sum()
    }

    /// What the run concluded: contract errors first, then findings, else clean.
    pub fn conclusion(&self) -> Conclusion {
        self.conclusion_failing_on(Severity::Availability)
    }

    /// What the run concluded, counting only findings of at least `fail_on` severity
    /// (`Severity::Error`: findings of availability alone are reported, not failed).
    pub fn conclusion_failing_on(&self, fail_on: Severity) -> Conclusion {
        if self.contract_errors().next().is_some() {
            Conclusion::ContractErrors
        } else if self
            .findings()
            .any(|f| f.severity >= fail_on && f.baselined.is_none())
        {
            Conclusion::Findings
        } else {
            Conclusion::Clean
        }
    }

    /// The human rendering (colour with ANSI codes when `colour`).
    pub fn human(&self, colour: bool) -> String {
        let paint = |code: &str, text: &str| {
            if colour {
                format!("\u{1b}[{code}m{text}\u{1b}[0m")
            } else {
                text.to_owned()
            }
        };
        let mut out = String::new();
        let shown = self.shown();
        let listed = shown
            .iter()
            .flat_map(|s| s.contract_errors.iter())
            .chain(shown.iter().flat_map(|s| s.findings.iter()));
        for finding in listed {
            // Everything here may come from the adapter or the corpus: nothing reaches
            // the terminal unescaped.
            let mut kind = match finding.severity {
                Severity::Availability => format!("{} (availability)", finding.kind.as_str()),
                Severity::Error => finding.kind.as_str().to_owned(),
            };
            if finding.baselined.is_some() {
                kind.push_str(" (baselined)");
            }
            let _ = writeln!(
                out,
                "{} {} {} [{}{}]: {}",
                paint("1;31", &kind),
                printable(&finding.tool),
                printable(&finding.case),
                printable(&finding.class),
                if finding.location.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", printable(&finding.location))
                },
                printable(&finding.message)
            );
            if let (Some(expected), Some(actual)) = (&finding.expected, &finding.actual) {
                if expected != actual {
                    let _ = writeln!(
                        out,
                        "    expected {}\n    actual   {}",
                        // JSON text as it is (its escapes are JSON's, not doubled);
                        // escaped further only when it holds a character a terminal
                        // would act on.
                        visible(&expected.to_string()),
                        visible(&actual.to_string())
                    );
                }
            }
            if let Some(path) = &finding.reproducer {
                let _ = writeln!(
                    out,
                    "    reproduce: airlock check --replay {}",
                    printable(&path.display().to_string())
                );
            }
        }
        for c in self
            .contracts
            .iter()
            .filter(|c| c.reproducers_not_written > 0)
        {
            let _ = writeln!(
                out,
                "{}: and {} more reproducers not written (at most {} per variant class and finding kind)",
                c.tool,
                c.reproducers_not_written,
                crate::check::MAX_REPRODUCERS_PER_CLASS
            );
        }
        for (c, shown) in self.contracts.iter().zip(&shown) {
            out.push_str(&omitted_lines(&c.tool, shown, self.shown_per_class));
        }
        let mut table = Table::new(&[
            ("contract", Align::Left, 20),
            ("cases", Align::Right, 8),
            ("findings", Align::Right, 9),
            ("errors", Align::Right, 9),
        ]);
        for c in &self.contracts {
            table.row(vec![
                printable(&c.tool).into_owned(),
                c.cases.to_string(),
                c.findings.len().to_string(),
                c.contract_errors.len().to_string(),
            ]);
        }
        out.push_str(&table.text());
        let findings = self.findings().count();
        let errors = self.contract_errors().count();
        let conclusion = match self.conclusion() {
            Conclusion::Clean => paint("1;32", "clean"),
            Conclusion::Findings => paint("1;31", "findings"),
            Conclusion::ContractErrors => paint("1;31", "contract errors"),
        };
        let _ = writeln!(
            out,
            "{conclusion}: {} cases, {findings} findings{}, {errors} contract errors, seed {}, {:.2}s",
            self.cases(),
            self.baselined_note(),
            self.seed,
            self.elapsed.as_secs_f64()
        );
        out
    }

    /// Findings the baseline accepts.
    pub fn baselined(&self) -> usize {
        self.findings().filter(|f| f.baselined.is_some()).count()
    }

    /// ` (N baselined)` when the baseline accepts some findings, else nothing.
    fn baselined_note(&self) -> String {
        match self.baselined() {
            0 => String::new(),
            n => format!(" ({n} baselined)"),
        }
    }

    /// The JSON rendering: `{"seed", "elapsed_seconds", "findings_shown_per_class",
    /// "totals", "contracts": [...]}`; each contract lists the findings shown and counts
    /// the others in `findings_omitted` (`{class: {kind: n}}`).
    pub fn json(&self) -> String {
        let mut by_kind = BTreeMap::new();
        for f in self.findings().chain(self.contract_errors()) {
            *by_kind.entry(f.kind.as_str()).or_insert(0usize) += 1;
        }
        let mut by_severity = BTreeMap::new();
        for f in self.findings() {
            *by_severity.entry(f.severity.as_str()).or_insert(0usize) += 1;
        }
        let shown = self.shown();
        // Each contract as its derived shape, its lists cut to what is shown and the rest
        // counted per class and kind.
        let contracts: Vec<Value> = self
            .contracts
            .iter()
            .zip(&shown)
            .map(|(c, shown)| {
                let mut value = serde_json::to_value(c).unwrap_or_default();
                value["findings"] = json!(shown.findings);
                value["contract_errors"] = json!(shown.contract_errors);
                let mut omitted: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
                for ((class, kind), n) in &shown.omitted {
                    omitted.entry(class).or_default().insert(kind.as_str(), *n);
                }
                value["findings_omitted"] = json!(omitted);
                value
            })
            .collect();
        let doc = json!({
            "seed": self.seed,
            "elapsed_seconds": self.elapsed.as_secs_f64(),
            "findings_shown_per_class": self.shown_per_class,
            "totals": {
                "contracts": self.contracts.len(),
                "cases": self.cases(),
                "findings": self.findings().count(),
                "contract_errors": self.contract_errors().count(),
                "findings_omitted": shown.iter().map(Shown::omitted_count).sum::<usize>(),
                "by_kind": by_kind,
                "by_severity": by_severity,
            },
            "contracts": contracts,
        });
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn printable_escapes_every_character_the_guard_calls_invisible() {
        for c in [
            '\u{061C}',
            '\u{00AD}',
            '\u{180E}',
            '\u{E0041}',
            '\u{FE0F}',
            '\u{202E}',
            '\u{200B}',
            '\u{2066}',
            '\u{FEFF}',
            '\u{0007}',
            '\u{009B}',
        ] {
            let text = format!("a{c}b");
            let shown = printable(&text);
            assert!(!shown.contains(c), "{c:?} was not escaped: {shown}");
            assert_eq!(shown, format!("a\\u{{{:x}}}b", u32::from(c)));
        }
        assert_eq!(printable("plain é text"), "plain é text");
    }

    use super::*;

    /// A report whose one finding carries what a hostile adapter would print.
    fn hostile_report() -> Report {
        let hostile = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\r\u{202e}txt.exe \
                       <img src=x onerror=alert(1)> [click](https://evil.example) `code` | cell";
        let mut contract = ContractReport::new("review_status", None);
        contract.findings.push(Finding {
            tool: "review_status".into(),
            case: format!("fixture/{hostile}"),
            class: "fixture".into(),
            location: "/data".into(),
            kind: FindingKind::Protocol,
            severity: Severity::Error,
            message: format!("protocol violation: {hostile}"),
            expected: Some(json!({"outcome": "failure"})),
            actual: Some(json!({"outcome": hostile})),
            file: None,
            reproducer: None,
            baselined: None,
        });
        Report {
            seed: 0,
            contracts: vec![contract],
            elapsed: Duration::ZERO,
            shown_per_class: None,
        }
    }

    #[test]
    fn expected_and_actual_print_as_the_json_text_they_are() {
        let mut contract = ContractReport::new("review_status", None);
        contract.findings.push(Finding {
            expected: Some(json!({"state": "ok"})),
            actual: Some(json!("<html>say \"hi\"</html>")),
            ..Finding::on_adapter(
                "review_status",
                "x",
                FindingKind::Shape,
                "not an object".into(),
            )
        });
        let report = Report {
            seed: 0,
            contracts: vec![contract],
            elapsed: Duration::ZERO,
            shown_per_class: None,
        };
        let human = report.human(false);
        assert!(
            human.contains(r#"    actual   "<html>say \"hi\"</html>""#),
            "{human}"
        );
    }

    #[test]
    fn the_human_report_prints_no_control_or_bidi_character_from_the_adapter() {
        let human = hostile_report().human(false);
        for c in ['\u{1b}', '\u{7}', '\u{9b}', '\r', '\u{202e}'] {
            assert!(!human.contains(c), "{c:?} in {human}");
        }
        assert!(human.contains("\\u{1b}[2J"), "{human}");
        assert!(human.contains("\\u{202e}txt.exe"), "{human}");
        // A backslash is doubled, so the adapter cannot forge an escape.
        assert_eq!(printable("\\u{1b}"), "\\\\u{1b}");
        assert_eq!(printable("plain: ok"), "plain: ok");
    }

    #[test]
    fn the_markdown_report_renders_no_html_link_or_code_from_the_adapter() {
        let markdown = hostile_report().markdown();
        assert!(!markdown.contains("<img"), "{markdown}");
        assert!(!markdown.contains("](http"), "{markdown}");
        assert!(!markdown.contains(" `code`"), "{markdown}");
        assert!(!markdown.contains('\u{1b}'), "{markdown}");
        assert!(markdown.contains("&lt;img"), "{markdown}");
        let finding_row = markdown
            .lines()
            .find(|l| l.starts_with("| protocol"))
            .unwrap();
        // Six cells: the adapter's `|` cannot open a seventh.
        assert_eq!(finding_row.matches(" | ").count(), 5, "{finding_row}");
    }
}
