//! `airlock check`: every case of every contract through the adapter under test, judged
//! against the reference (the guard configured by the same contract). Findings are data;
//! only a broken contract or corpus is an error.

use airlock_guard::{AgentValue, Contract, ErrorCode, Guard, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::adapter::{Adapter, AdapterFailure};
use crate::adversary;
use crate::answer::{raw_text, Answer};
use crate::cases::{Case, Expectation, Upstream};
use crate::corpus::{corpus_dir, Corpus};
use crate::report::{ContractReport, Finding, FindingKind, Report, Severity};
use crate::shape::closed_shape;

/// The default number of random cases per contract.
pub const DEFAULT_RANDOM_CASES: usize = 500;

/// The most random cases per contract: cases are generated before they run, so memory
/// grows with the count (about 1.5 KB a case); a larger count is cut to this one (the
/// command line refuses it).
pub const MAX_RANDOM_CASES: usize = 100_000;

/// Consecutive crashes, timeouts, floods or protocol violations after which an adapter
/// is given up on for a contract.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 5;

/// Reproducers written per contract, variant class and kind of (first) finding; the
/// others are counted in [`ContractReport::reproducers_not_written`].
pub const MAX_REPRODUCERS_PER_CLASS: usize = 5;

/// A contract or corpus that cannot be checked.
#[derive(Debug)]
pub struct CheckError {
    /// The folder or file at fault.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for CheckError {}

/// A contract with its corpus, ready to check.
#[derive(Debug, Clone)]
pub struct Subject {
    /// The reference guard.
    pub guard: Guard,
    /// The fixtures.
    pub corpus: Corpus,
}

impl Subject {
    /// Load the contract in `dir` and its corpus (`../../corpora/<tool>`).
    ///
    /// # Errors
    ///
    /// When either cannot be loaded.
    pub fn load(dir: &Path) -> Result<Self, CheckError> {
        let contract = Contract::load(dir).map_err(|e| CheckError {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let corpus_path = corpus_dir(&contract).ok_or_else(|| CheckError {
            path: dir.to_path_buf(),
            message: "cannot locate corpora/<tool> beside the contract".into(),
        })?;
        let corpus = Corpus::load(&corpus_path).map_err(|e| CheckError {
            path: e.path.clone(),
            message: e.message,
        })?;
        Ok(Self {
            guard: Guard::new(contract),
            corpus,
        })
    }
}

/// Every contract folder under `schemas` (each holding a `contract.toml`), sorted.
///
/// # Errors
///
/// When the folder cannot be read or holds no contract.
pub fn discover(schemas: &Path) -> Result<Vec<PathBuf>, CheckError> {
    let err = |message: String| CheckError {
        path: schemas.to_path_buf(),
        message,
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(schemas)
        .map_err(|e| err(e.to_string()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join(airlock_guard::MANIFEST).is_file())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(err("no contract folders (with contract.toml) found".into()));
    }
    Ok(dirs)
}

/// Options of a check run.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The seed of canaries and random cases.
    pub seed: u64,
    /// Random mutation cases per contract.
    pub random_cases: usize,
    /// Where reproducers are written (`<dir>/<tool>/…`); `None` writes none.
    pub reproducers: Option<PathBuf>,
    /// A bound on the whole run: cases not started by then are reported as not run, with
    /// a `timeout` finding. `None`: no bound.
    pub max_duration: Option<Duration>,
}

impl Default for CheckOptions {
    /// Seed 0, [`DEFAULT_RANDOM_CASES`], no reproducers, no overall bound.
    fn default() -> Self {
        Self {
            seed: 0,
            random_cases: DEFAULT_RANDOM_CASES,
            reproducers: None,
            max_duration: None,
        }
    }
}

/// What a run reports while it goes, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// A contract starts, with its number of cases.
    Contract(&'a str, usize),
    /// One more case done.
    Case,
}

/// A reproducer file: one case with everything needed to run it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reproducer {
    /// The contract folder.
    pub contract: PathBuf,
    /// The seed of the run that found it.
    pub seed: u64,
    /// The case.
    pub case: Case,
}

/// A check run from code: what an adapter crate calls in its own `#[test]`.
///
/// ```
/// use airlock_guard::{Contract, Guard};
/// use airlock_harness::adapter::GuardAdapter;
/// use airlock_harness::check::Check;
///
/// // An adapter crate would hand its own adapter here; the guard passes clean.
/// let mut adapter = GuardAdapter::new([Guard::new(Contract::load("../schemas/deploy_status")?)]);
/// let report = Check::contract("../schemas/deploy_status").seed(7).random_cases(100).run(&mut adapter)?;
/// report.assert_clean();
/// assert!(report.cases() > 500);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Check {
    dirs: Vec<PathBuf>,
    options: CheckOptions,
}

impl Check {
    /// A check of the contract in `dir` (`schemas/<tool>`, its corpus beside).
    pub fn contract(dir: impl Into<PathBuf>) -> Self {
        Self {
            dirs: vec![dir.into()],
            options: CheckOptions::default(),
        }
    }

    /// Also check the contract in `dir`.
    #[must_use]
    pub fn and_contract(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dirs.push(dir.into());
        self
    }

    /// The seed (default 0).
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.options.seed = seed;
        self
    }

    /// Random cases per contract (default [`DEFAULT_RANDOM_CASES`], at most
    /// [`MAX_RANDOM_CASES`]: more is cut to it).
    #[must_use]
    pub fn random_cases(mut self, n: usize) -> Self {
        self.options.random_cases = n.min(MAX_RANDOM_CASES);
        self
    }

    /// Stop starting cases after `bound` (default: no bound); what is left is reported
    /// as not run, with a `timeout` finding.
    #[must_use]
    pub fn max_duration(mut self, bound: Duration) -> Self {
        self.options.max_duration = Some(bound);
        self
    }

    /// Write reproducers of findings under `dir` (default: none).
    #[must_use]
    pub fn reproducers(mut self, dir: impl Into<PathBuf>) -> Self {
        self.options.reproducers = Some(dir.into());
        self
    }

    /// Run every case through `adapter`.
    ///
    /// # Errors
    ///
    /// When a contract or its corpus cannot be loaded, or a reproducer cannot be written.
    pub fn run(&self, adapter: &mut dyn Adapter) -> Result<Report, CheckError> {
        let subjects = self
            .dirs
            .iter()
            .map(|d| Subject::load(d))
            .collect::<Result<Vec<_>, _>>()?;
        run(&subjects, &self.options, adapter, &mut |_| {})
    }
}

/// Run every case of every subject through `adapter`.
///
/// # Errors
///
/// When a reproducer cannot be written (the error names the file).
pub fn run(
    subjects: &[Subject],
    options: &CheckOptions,
    adapter: &mut dyn Adapter,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Report, CheckError> {
    let start = Instant::now();
    let deadline = options.max_duration.map(|bound| start + bound);
    let mut contracts: Vec<ContractReport> = Vec::new();
    for subject in subjects {
        let cases = adversary::generate(
            subject.guard.contract(),
            &subject.corpus,
            options.seed,
            options.random_cases.min(MAX_RANDOM_CASES),
        );
        progress(Progress::Contract(
            subject.guard.contract().tool(),
            cases.len(),
        ));
        if deadline.is_some_and(|d| Instant::now() >= d) {
            let tool = subject.guard.contract().tool();
            let mut report = ContractReport::new(tool, subject.guard.contract().dir());
            report.not_run = cases.len();
            report
                .findings
                .push(out_of_time_finding(tool, options, cases.len()));
            contracts.push(report);
            continue;
        }
        contracts.push(run_cases(
            subject, &cases, options, deadline, adapter, progress,
        )?);
    }
    let mut closing = adapter.finish();
    if let (Some(last), false) = (contracts.last_mut(), closing.is_empty()) {
        for failure in closing.drain(..) {
            let (kind, message) = failure_kind(&failure);
            last.findings.push(Finding {
                tool: last.tool.clone(),
                case: "adapter/close".into(),
                class: "adapter".into(),
                location: String::new(),
                kind,
                severity: Severity::Error,
                message: format!("after the last case: {message}"),
                expected: None,
                actual: None,
                file: None,
                reproducer: None,
            });
        }
    }
    Ok(Report {
        seed: options.seed,
        contracts,
        elapsed: start.elapsed(),
    })
}

/// The finding of a contract whose remaining cases were cut by `--max-duration`.
fn out_of_time_finding(tool: &str, options: &CheckOptions, not_run: usize) -> Finding {
    let bound = options.max_duration.unwrap_or_default().as_secs_f64();
    Finding {
        tool: tool.to_owned(),
        case: "adapter/max-duration".into(),
        class: "adapter".into(),
        location: String::new(),
        kind: FindingKind::Timeout,
        severity: Severity::Error,
        message: format!(
            "the run reached its overall bound (--max-duration {bound}s): the remaining {not_run} cases of {tool} were not run"
        ),
        expected: None,
        actual: None,
        file: None,
        reproducer: None,
    }
}

/// Run exactly the case of a reproducer.
///
/// # Errors
///
/// When its contract cannot be loaded.
pub fn replay(reproducer: &Reproducer, adapter: &mut dyn Adapter) -> Result<Report, CheckError> {
    let subject = Subject::load(&reproducer.contract)?;
    let options = CheckOptions {
        seed: reproducer.seed,
        random_cases: 0,
        reproducers: None,
        max_duration: None,
    };
    let start = Instant::now();
    let report = run_cases(
        &subject,
        std::slice::from_ref(&reproducer.case),
        &options,
        None,
        adapter,
        &mut |_| {},
    )?;
    Ok(Report {
        seed: reproducer.seed,
        contracts: vec![report],
        elapsed: start.elapsed(),
    })
}

/// Cases handed to the adapter at once: lets an external adapter be pipelined.
const BATCH: usize = 256;

fn run_cases(
    subject: &Subject,
    cases: &[Case],
    options: &CheckOptions,
    deadline: Option<Instant>,
    adapter: &mut dyn Adapter,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ContractReport, CheckError> {
    let guard = &subject.guard;
    let tool = guard.contract().tool().to_owned();
    let mut report = ContractReport::new(&tool, guard.contract().dir());
    let mut consecutive = 0;
    let mut done = 0;
    let mut shrunk = 0;
    let mut reproducers_per_class: BTreeMap<(String, Option<FindingKind>), usize> = BTreeMap::new();
    let past_deadline = || deadline.is_some_and(|d| Instant::now() >= d);
    'batches: for batch in cases.chunks(BATCH) {
        // The reference first: construction errors never reach the adapter.
        let mut runnable = Vec::with_capacity(batch.len());
        for case in batch {
            let request = if case.request.tool.as_deref() == Some(tool.as_str()) {
                std::borrow::Cow::Borrowed(&case.request)
            } else {
                let mut request = case.request.clone();
                request.tool = Some(tool.clone());
                std::borrow::Cow::Owned(request)
            };
            let reference = match &case.upstream {
                Upstream::Body(bytes) => guard.admit(&request, bytes),
                Upstream::Transport(error) => guard.admit_transport_error(&request, *error),
            };
            match report.classes.get_mut(&case.class) {
                Some(stats) => stats.cases += 1,
                None => {
                    let stats = crate::report::ClassSummary {
                        cases: 1,
                        findings: 0,
                    };
                    report.classes.insert(case.class.clone(), stats);
                }
            }
            if let Some(message) = construction_disagrees(case, reference.is_admitted()) {
                let diagnostic = reference
                    .diagnostic()
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                report.contract_errors.push(Finding {
                    tool: tool.clone(),
                    case: case.id.clone(),
                    class: case.class.clone(),
                    location: case.location.clone(),
                    kind: FindingKind::Contract,
                    severity: Severity::Error,
                    message: format!("{message}{diagnostic}"),
                    expected: None,
                    actual: Some(reference.agent().to_json()),
                    file: case_file(subject, case),
                    reproducer: None,
                });
                progress(Progress::Case);
                done += 1;
                continue;
            }
            runnable.push((case, request, reference.into_parts().0));
        }
        let inputs: Vec<(&Request, &Upstream)> = runnable
            .iter()
            .map(|(c, r, _)| (&**r, &c.upstream))
            .collect();
        let mut given_up = false;
        let mut out_of_time = past_deadline();
        let mut pending: Vec<(usize, usize, Option<FindingKind>)> = Vec::new();
        adapter.answers(&inputs, &mut |index, actual| {
            if past_deadline() {
                // This answer may be the adapter's wait cut short by the bound: the case
                // counts as not run, never as the adapter's timeout.
                out_of_time = true;
                return ControlFlow::Break(());
            }
            let (case, _, reference) = &runnable[index];
            progress(Progress::Case);
            done += 1;
            let findings = judge(case, reference, &actual);
            // A protocol violation restarts the adapter as a crash does: it counts.
            if actual.is_err() {
                consecutive += 1;
            } else {
                consecutive = 0;
            }
            report.cases += 1;
            if !findings.is_empty() {
                // Reproducers are written after the batch, once the case is shrunk (the
                // adapter is busy answering the batch until then).
                pending.push((index, report.findings.len(), findings.first().map(|f| f.0)));
                let reproducer = None;
                let file = case_file(subject, case);
                let expected = reference.to_json();
                if let Some(stats) = report.classes.get_mut(&case.class) {
                    stats.findings += findings.len();
                }
                let reference_admits = reference
                    .error()
                    .is_none_or(|(code, _)| code != ErrorCode::InvalidResponse);
                for (kind, message) in findings {
                    report.findings.push(Finding {
                        tool: tool.clone(),
                        case: case.id.clone(),
                        class: case.class.clone(),
                        location: case.location.clone(),
                        kind,
                        severity: Severity::of(kind, reference_admits),
                        message,
                        expected: Some(expected.clone()),
                        actual: actual.as_ref().ok().map(Answer::for_report),
                        file: file.clone(),
                        reproducer: reproducer.clone(),
                    });
                }
            }
            if consecutive >= MAX_CONSECUTIVE_FAILURES {
                given_up = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        for (index, first_finding, kind) in pending {
            let (case, request, reference) = &runnable[index];
            // Past the cap (per class and kind) a finding gets no reproducer, and no
            // shrinking either.
            let write = options.reproducers.as_deref().filter(|_| {
                let count = reproducers_per_class
                    .entry((case.class.clone(), kind))
                    .or_default();
                *count += 1;
                *count <= MAX_REPRODUCERS_PER_CLASS
            });
            if options.reproducers.is_some() && write.is_none() {
                report.reproducers_not_written += 1;
            }
            let mut minimal = None;
            let shrinks = options.reproducers.is_none() || write.is_some();
            if let (Some(kind), true) = (kind, shrinks && shrunk < MAX_SHRINKS && !past_deadline())
            {
                if SHRINKABLE.contains(&kind) {
                    shrunk += 1;
                    minimal = shrink(guard, case, request, reference, kind, deadline, adapter);
                }
            }
            let written = minimal.as_ref().unwrap_or(case);
            let reproducer = match write {
                Some(dir) => Some(write_reproducer(
                    dir,
                    subject,
                    options.seed,
                    written,
                    request,
                )?),
                None => None,
            };
            for finding in &mut report.findings[first_finding..] {
                if finding.case != case.id {
                    break;
                }
                finding.reproducer.clone_from(&reproducer);
                if let (Some(small), Upstream::Body(original)) = (&minimal, &case.upstream) {
                    if let Upstream::Body(bytes) = &small.upstream {
                        finding.message.push_str(&format!(
                            " (shrunk from {} to {} bytes)",
                            original.len(),
                            bytes.len()
                        ));
                    }
                }
            }
        }
        if out_of_time {
            report.not_run = cases.len() - done;
            report
                .findings
                .push(out_of_time_finding(&tool, options, report.not_run));
            break 'batches;
        }
        if given_up {
            report.not_run = cases.len() - done;
            report.findings.push(Finding {
                tool: tool.clone(),
                case: "adapter/given-up".into(),
                class: "adapter".into(),
                location: String::new(),
                kind: report.findings.last().map_or(FindingKind::Crash, |f| f.kind),
                severity: Severity::Error,
                message: format!(
                    "{consecutive} consecutive crashes, timeouts, floods or protocol violations: the remaining {} cases of {tool} were not run",
                    report.not_run
                ),
                expected: None,
                actual: None,
                file: None,
                reproducer: None,
            });
            break 'batches;
        }
    }
    Ok(report)
}

/// Findings worth shrinking: those about the value, not about a process that died.
const SHRINKABLE: [FindingKind; 4] = [
    FindingKind::Verdict,
    FindingKind::Value,
    FindingKind::Leak,
    FindingKind::Shape,
];

/// Findings shrunk per contract; later ones keep their full case.
const MAX_SHRINKS: usize = 20;

/// Adapter calls one shrink may spend.
const SHRINK_BUDGET: usize = 300;

/// The smallest body (by removing byte ranges, halving the range each round) that still
/// makes the adapter produce a `kind` finding **and** gets the same verdict from the
/// reference: a shrunk case that the contract would now admit (or now reject) is a
/// different case, never reported as the same finding. `None` when nothing smaller keeps
/// both.
fn shrink(
    guard: &Guard,
    case: &Case,
    request: &Request,
    reference: &AgentValue,
    kind: FindingKind,
    deadline: Option<Instant>,
    adapter: &mut dyn Adapter,
) -> Option<Case> {
    let Upstream::Body(original) = &case.upstream else {
        return None;
    };
    let rejected = |v: &AgentValue| {
        v.error()
            .is_some_and(|(code, _)| code == ErrorCode::InvalidResponse)
    };
    let verdict = rejected(reference);
    let mut best = original.clone();
    let mut budget = SHRINK_BUDGET;
    let mut chunk = best.len() / 2;
    let in_time = || deadline.is_none_or(|d| Instant::now() < d);
    while chunk > 0 && budget > 0 && in_time() {
        let mut start = 0;
        let mut progressed = false;
        while start < best.len() && budget > 0 && in_time() {
            let end = (start + chunk).min(best.len());
            let mut candidate = best.clone();
            candidate.drain(start..end);
            budget -= 1;
            let reference = guard.admit(request, &candidate);
            if rejected(reference.agent()) != verdict {
                start += chunk;
                continue;
            }
            let mut trial = case.clone();
            trial.upstream = Upstream::Body(candidate.clone());
            let actual = adapter.answer(request, &trial.upstream);
            if judge(&trial, reference.agent(), &actual)
                .iter()
                .any(|(k, _)| *k == kind)
            {
                best = candidate;
                progressed = true;
            } else {
                start += chunk;
            }
        }
        if !progressed {
            chunk /= 2;
        }
    }
    (best.len() < original.len()).then(|| {
        let mut minimal = case.clone();
        minimal.upstream = Upstream::Body(best);
        minimal
    })
}

/// The file a case came from, for locating findings (the fixture, else the schema).
fn case_file(subject: &Subject, case: &Case) -> Option<PathBuf> {
    case.origin
        .as_ref()
        .and_then(|origin| subject.corpus.fixtures.iter().find(|f| &f.name == origin))
        .map(|f| f.path.clone())
        .or_else(|| {
            let contract = subject.guard.contract();
            contract
                .dir()
                .map(|d| d.join(format!("v{}.schema.json", contract.version())))
        })
}

/// Whether the reference contradicts what the case was built to be.
fn construction_disagrees(case: &Case, admitted: bool) -> Option<String> {
    // By the audit verdict: a valid upstream envelope saying INVALID_RESPONSE is admitted
    // evidence, though its agent value looks like a rejection.
    let rejected = !admitted;
    match case.expect {
        Expectation::Admit if rejected => Some(if case.class == "fixture" {
            "fixture must be admitted but its own contract rejects it".into()
        } else {
            "case built to be admitted is rejected by the contract".into()
        }),
        Expectation::Reject if !rejected => Some(if case.class == "fixture" {
            "fixture must be rejected but its own contract admits it".into()
        } else {
            "case built to be rejected is admitted by the contract".into()
        }),
        _ => None,
    }
}

fn failure_kind(failure: &AdapterFailure) -> (FindingKind, String) {
    match failure {
        AdapterFailure::Crash(what) => (FindingKind::Crash, format!("adapter crashed: {what}")),
        AdapterFailure::Timeout => (
            FindingKind::Timeout,
            "adapter did not answer in time".into(),
        ),
        AdapterFailure::Protocol(what) => {
            (FindingKind::Protocol, format!("protocol violation: {what}"))
        }
        AdapterFailure::Flood => (
            FindingKind::Flood,
            "adapter flooded its output (an answer line over the limit)".into(),
        ),
    }
}

/// The invariants of one case: shape, verdict, value, canaries. An answer given as bytes
/// is read strictly (what any JSON reader would see), and the leak oracle reads every
/// string literal of those bytes too, so a first duplicate member cannot hide a canary.
fn judge(
    case: &Case,
    reference: &AgentValue,
    actual: &Result<Answer, AdapterFailure>,
) -> Vec<(FindingKind, String)> {
    match actual {
        Ok(answer) => judge_answer(&case.canaries, reference, answer),
        Err(failure) => vec![failure_kind(failure)],
    }
}

/// The invariants of one answer: shape, verdict, value, and none of `canaries` (unless
/// the reference carries it).
pub(crate) fn judge_answer(
    canaries: &[String],
    reference: &AgentValue,
    answer: &Answer,
) -> Vec<(FindingKind, String)> {
    let mut findings = Vec::new();
    let read = answer.read();
    if !canaries.is_empty() {
        let expected = reference.to_json();
        let mut tokens = match &read {
            Ok(agent) => leaked(canaries, &expected, agent),
            Err(_) => Vec::new(),
        };
        if let Some(raw) = answer.raw() {
            for token in leaked_in_text(canaries, &expected, &raw_text(raw)) {
                if !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
        }
        for token in tokens {
            findings.push((
                FindingKind::Leak,
                format!("canary {token:?} from the rejected input reached the agent value"),
            ));
        }
    }
    let agent = match read {
        Ok(agent) => agent,
        Err(reason) => {
            findings.push((
                FindingKind::Shape,
                format!("the agent's bytes are not one unambiguous JSON value: {reason}"),
            ));
            return findings;
        }
    };
    let agent = agent.as_ref();
    let claim = match closed_shape(agent) {
        Ok(claim) => claim,
        Err(reason) => {
            findings.push((
                FindingKind::Shape,
                format!("agent value is not one of the two closed shapes: {reason}"),
            ));
            return findings;
        }
    };
    let reference_admits = reference
        .error()
        .is_none_or(|(code, _)| code != ErrorCode::InvalidResponse);
    let say = |admits: bool| if admits { "admitted" } else { "rejected" };
    if claim.admits() != reference_admits {
        findings.push((
            FindingKind::Verdict,
            format!(
                "adapter {} what the contract {}",
                say(claim.admits()),
                say(reference_admits)
            ),
        ));
    } else {
        if !same_value(agent, reference) {
            let expected = reference.to_json();
            findings.push((
                FindingKind::Value,
                format!(
                    "agent value differs from the reference: {}",
                    diff(&expected, agent)
                ),
            ));
        }
    }
    findings
}

/// Whether an adapter's agent value (already known to be a closed shape) equals the
/// reference's, member by member, without serialising the reference.
fn same_value(agent: &Value, reference: &AgentValue) -> bool {
    let text = |name: &str| agent.get(name).and_then(Value::as_str);
    if text("tool") != Some(reference.tool()) || text("request_id") != Some(reference.request_id())
    {
        return false;
    }
    match (reference.data(), reference.error()) {
        (Some(data), _) => agent
            .get("data")
            .and_then(Value::as_object)
            .is_some_and(|agent| data == agent),
        (None, Some((code, retryable))) => {
            let error = &agent["error"];
            error["code"].as_str() == Some(code.as_str())
                && error["retryable"].as_bool() == Some(retryable)
        }
        (None, None) => false,
    }
}

/// Canaries found in the agent value: verbatim, JSON-escaped, re-cased, or any 8+
/// character piece of one, in any string or member name; unless the reference itself
/// legitimately carries it.
pub fn leaked(canaries: &[String], expected: &Value, agent: &Value) -> Vec<String> {
    leaked_in_text(canaries, expected, &all_text(agent))
}

/// Canaries found in `agent_text` (lower-cased text, as [`all_text`] or
/// [`crate::answer::raw_text`] make it), unless the reference legitimately carries them.
fn leaked_in_text(canaries: &[String], expected: &Value, agent_text: &str) -> Vec<String> {
    let mut expected_text: Option<String> = None;
    canaries
        .iter()
        .filter(|token| {
            let token = token.to_lowercase();
            let windows: Vec<&str> = (0..=token.len().saturating_sub(8))
                .map(|i| &token[i..(i + 8).min(token.len())])
                .collect();
            let found = |text: &str| windows.iter().any(|w| text.contains(w));
            // The reference's text is only needed when the agent's holds a piece.
            found(agent_text) && !found(expected_text.get_or_insert_with(|| all_text(expected)))
        })
        .cloned()
        .collect()
}

/// Every string and member name of `value`, and its serialisation, lower-cased: escapes
/// are decoded in the strings and kept in the serialisation.
fn all_text(value: &Value) -> String {
    let mut out = value.to_string().to_lowercase();
    fn collect(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push('\u{1}');
                out.push_str(&s.to_lowercase());
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
            Value::Object(map) => {
                for (k, v) in map {
                    out.push('\u{1}');
                    out.push_str(&k.to_lowercase());
                    collect(v, out);
                }
            }
            _ => {}
        }
    }
    collect(value, &mut out);
    out
}

/// A short readable difference: the members that differ, by pointer.
pub fn diff(expected: &Value, actual: &Value) -> String {
    let mut out = Vec::new();
    diff_at(expected, actual, String::new(), &mut out);
    out.join("; ")
}

fn diff_at(expected: &Value, actual: &Value, at: String, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => diff_at(v, w, format!("{at}/{k}"), out),
                    None => out.push(format!("{at}/{k}: missing (expected {v})")),
                }
            }
            for (k, w) in b {
                if !a.contains_key(k) {
                    out.push(format!("{at}/{k}: unexpected {}", short(w)));
                }
            }
        }
        _ if expected == actual => {}
        _ => out.push(format!(
            "{}: expected {}, got {}",
            if at.is_empty() { "(root)" } else { &at },
            short(expected),
            short(actual)
        )),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text
    }
}

/// Write a reproducer (`<dir>/<tool>/<case>.case.json`, the body and the request
/// beside it); its path. The tool and the case id are made one safe file-name component
/// each, so nothing is written outside `dir`.
fn write_reproducer(
    dir: &Path,
    subject: &Subject,
    seed: u64,
    case: &Case,
    request: &airlock_guard::Request,
) -> Result<PathBuf, CheckError> {
    let contract = subject.guard.contract();
    let folder = reproducer_folder(dir, contract.tool());
    let failed = |path: &Path, e: &dyn fmt::Display| CheckError {
        path: path.to_path_buf(),
        message: format!("cannot write the reproducer: {e}"),
    };
    std::fs::create_dir_all(&folder).map_err(|e| failed(&folder, &e))?;
    let name = file_stem(&case.id);
    let mut case = case.clone();
    case.request = request.clone();
    let reproducer = Reproducer {
        contract: contract.dir().map(Path::to_path_buf).unwrap_or_default(),
        seed,
        case: case.clone(),
    };
    let write = |path: PathBuf, bytes: Result<Vec<u8>, serde_json::Error>| {
        let bytes = bytes.map_err(|e| failed(&path, &e))?;
        std::fs::write(&path, bytes).map_err(|e| failed(&path, &e))?;
        Ok::<_, CheckError>(path)
    };
    let path = write(
        folder.join(format!("{name}.case.json")),
        serde_json::to_vec_pretty(&reproducer),
    )?;
    if let Upstream::Body(bytes) = &case.upstream {
        write(folder.join(format!("{name}.json")), Ok(bytes.clone()))?;
    }
    write(
        folder.join(format!("{name}.request.json")),
        serde_json::to_vec_pretty(request),
    )?;
    Ok(path)
}

/// The folder of a tool's reproducers: always a direct child of `dir`, whatever the
/// tool's name holds.
fn reproducer_folder(dir: &Path, tool: &str) -> PathBuf {
    dir.join(crate::cases::file_component(tool))
}

/// A file-name-safe, unique stem for a case id.
fn file_stem(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    format!("{safe}-{:08x}", crate::cases::fnv1a(id.as_bytes()) as u32)
}

/// Sum of findings per kind, for summaries.
pub fn kinds(findings: &[Finding]) -> BTreeMap<FindingKind, usize> {
    let mut out = BTreeMap::new();
    for f in findings {
        *out.entry(f.kind).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducers_of_a_hostile_tool_name_stay_inside_the_reproducer_folder() {
        let dir = Path::new("/tmp/reproducers");
        for tool in ["../../outside", "..", "/etc", "a/../../b"] {
            assert_eq!(reproducer_folder(dir, tool).parent(), Some(dir), "{tool:?}");
        }
        assert_eq!(
            reproducer_folder(dir, "review_status"),
            dir.join("review_status")
        );
        for id in ["../../x", "fixture/a@accepted", ".."] {
            let stem = file_stem(id);
            assert!(
                !stem.contains('/') && !stem.starts_with('.'),
                "{id:?} -> {stem}"
            );
        }
    }
}
