//! `airlock check`: every case of every contract through the adapter under test, judged
//! against the reference (the guard configured by the same contract). Findings are data;
//! only a broken contract or corpus is an error.

use airlock_guard::{AgentValue, Request};
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::adapter::{Adapter, AdapterFailure, Answer};
use crate::adversary::{self, LaterBodies};
pub use crate::base::error::CheckError;
use crate::base::report::{bounded_value, clip, MAX_MESSAGE_CHARS};
pub use crate::base::subject::{discover, Subject};
use crate::cases::{Case, Expectation, Upstream};
use report::{ContractReport, Finding, FindingKind, Report, Severity};

mod baseline;
mod clean;
mod judge;
pub mod report;
mod reproduce;
mod session;
mod shrink;

pub use baseline::{
    Applied, Baseline, BaselineError, Entry as BaselineEntry, PLACEHOLDER_REASON, WRITTEN_DAYS,
};
pub use clean::default_reproducer_dir;
use judge::judge;
pub(crate) use judge::judge_answer;
pub use judge::{diff, leaked};
pub use reproduce::{replay, replay_beside, Reproducer, ShrunkFiles};
pub(crate) use reproduce::{write_reproducer, write_reproducer_file, Kept};
pub use session::{
    baseline_outcome, discard_empty, today, BaselineOutcome, Ran, Session, SessionError,
    SessionOptions,
};
pub(crate) use shrink::shrink_case;
use shrink::{shrink, MAX_SHRINKS, SHRINKABLE};

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

/// Findings a report shows in full per contract, variant class and finding kind; the
/// others are counted (`findings_omitted`), unless every finding is asked for
/// ([`Report::show_every_finding`], `--all-findings`). Display only: the conclusion
/// counts every finding.
pub const MAX_FINDINGS_SHOWN_PER_CLASS: usize = 20;

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
    /// Run only this part of the cases (`--shard K/N`); `None`: all of them.
    pub shard: Option<Shard>,
}

/// One part of a run split across CI jobs: part `index` (1-based) of `count`. The cases
/// are partitioned by a digest of their contract and case id, so the parts of one seed
/// hold together exactly the cases of the unsharded run, each once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// Part `index` (from 1) of `count`; `None` unless 1 ≤ `index` ≤ `count` (a zero
    /// count would make every case's part a division by zero).
    pub fn new(index: u32, count: u32) -> Option<Self> {
        (index >= 1 && index <= count).then_some(Self { index, count })
    }

    /// Which part, from 1.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many parts.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether the case `id` of the contract `tool` belongs to this part.
    pub fn holds(&self, tool: &str, id: &str) -> bool {
        let key = format!("{tool}\u{0}{id}");
        crate::cases::fnv1a(key.as_bytes()) % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// Whether run number `n` (from 0) belongs to this part (for sequences such as fuzz
    /// inputs).
    pub fn holds_run(&self, n: u64) -> bool {
        n % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `K/N`, 1 ≤ K ≤ N.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parsed = text.split_once('/').and_then(|(k, n)| {
            Some((k.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?))
        });
        match parsed {
            Some((index, count)) if index >= 1 && index <= count => Ok(Shard { index, count }),
            _ => Err(format!(
                "{text:?}: expected K/N with 1 <= K <= N, such as 2/4"
            )),
        }
    }
}

impl Default for CheckOptions {
    /// Seed 0, [`DEFAULT_RANDOM_CASES`], no reproducers, no overall bound.
    fn default() -> Self {
        Self {
            seed: 0,
            random_cases: DEFAULT_RANDOM_CASES,
            reproducers: None,
            max_duration: None,
            shard: None,
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
    /// The case just done drew findings (this many).
    Findings(usize),
}

/// A check run from code: what an adapter crate calls in its own `#[test]`.
///
/// ```
/// use airlock_guard::{Contract, Guard};
/// use airlock_harness::{Check, GuardAdapter};
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

    /// Run only the cases of `shard` (default: all).
    #[must_use]
    pub fn shard(mut self, shard: Shard) -> Self {
        self.options.shard = Some(shard);
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
        // The bodies sized from `max_bytes` are built batch by batch, as their cases run.
        let (mut cases, later) = adversary::generate_later(
            subject.guard.contract(),
            &subject.corpus,
            options.seed,
            options.random_cases.min(MAX_RANDOM_CASES),
        );
        if let Some(shard) = options.shard {
            let tool = subject.guard.contract().tool();
            cases.retain(|case| shard.holds(tool, &case.id));
        }
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
            subject, &cases, &later, options, deadline, adapter, progress,
        )?);
    }
    let mut closing = adapter.finish();
    if let (Some(last), false) = (contracts.last_mut(), closing.is_empty()) {
        for failure in closing.drain(..) {
            let (kind, message) = failure_kind(&failure);
            let message = format!("after the last case: {message}");
            let finding = Finding::on_adapter(&last.tool, "close", kind, message);
            last.findings.push(finding);
        }
    }
    Ok(Report {
        seed: options.seed,
        contracts,
        elapsed: start.elapsed(),
        shown_per_class: Some(MAX_FINDINGS_SHOWN_PER_CLASS),
    })
}

/// The finding of a contract whose remaining cases were cut by `--max-duration`.
fn out_of_time_finding(tool: &str, options: &CheckOptions, not_run: usize) -> Finding {
    let bound = options.max_duration.unwrap_or_default().as_secs_f64();
    let message = format!(
        "the run reached its overall bound (--max-duration {bound}s): the remaining {not_run} cases of {tool} were not run"
    );
    Finding::on_adapter(tool, "max-duration", FindingKind::Timeout, message)
}

/// Cases handed to the adapter at once: lets an external adapter be pipelined.
const BATCH: usize = 256;

/// A case ready for the adapter: the case, its request (naming the tool) and the
/// reference's agent value.
type Runnable<'c> = (&'c Case, std::borrow::Cow<'c, Request>, AgentValue);

/// Counters of one contract's run.
#[derive(Default)]
struct RunState {
    /// Cases done (judged or refused as contract errors).
    done: usize,
    /// Consecutive crashes, timeouts, floods or protocol violations.
    consecutive: u32,
    /// Findings shrunk so far.
    shrunk: usize,
    /// Reproducers written per (class, kind of first finding).
    reproducers: BTreeMap<(String, Option<FindingKind>), usize>,
}

pub(crate) fn run_cases(
    subject: &Subject,
    cases: &[Case],
    later: &LaterBodies,
    options: &CheckOptions,
    deadline: Option<Instant>,
    adapter: &mut dyn Adapter,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<ContractReport, CheckError> {
    let guard = &subject.guard;
    let tool = guard.contract().tool().to_owned();
    let mut report = ContractReport::new(&tool, guard.contract().dir());
    let mut state = RunState::default();
    let past_deadline = || deadline.is_some_and(|d| Instant::now() >= d);
    for batch in later.batches(cases, BATCH) {
        // A case whose body is built later runs alone: one such body is held at a time.
        let built = later.built(batch);
        let batch = built.as_deref().unwrap_or(batch);
        let runnable = reference_first(subject, batch, &mut report, &mut state, progress);
        let inputs: Vec<(&Request, &Upstream)> = runnable
            .iter()
            .map(|(c, r, _)| (&**r, &c.upstream))
            .collect();
        let mut given_up = false;
        let mut out_of_time = past_deadline();
        // (index in the batch, its first finding, the kind of that finding)
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
            state.done += 1;
            report.cases += 1;
            let findings = judge(
                case,
                reference,
                &actual,
                crate::base::shape::Forms::of(guard.contract()),
            );
            // A protocol violation restarts the adapter as a crash does: it counts.
            state.consecutive = if actual.is_err() {
                state.consecutive + 1
            } else {
                0
            };
            if !findings.is_empty() {
                // Reproducers are written after the batch, once the case is shrunk (the
                // adapter is busy answering the batch until then).
                progress(Progress::Findings(findings.len()));
                pending.push((index, report.findings.len(), findings.first().map(|f| f.0)));
                record(subject, &mut report, case, reference, &actual, findings);
            }
            if state.consecutive >= MAX_CONSECUTIVE_FAILURES {
                given_up = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        for (index, first_finding, kind) in pending {
            let (case, request, reference) = &runnable[index];
            let target = Unreproduced {
                case,
                request,
                reference,
                first_finding,
                kind,
                later: later.build_of(&case.id),
            };
            reproduce(
                subject,
                options,
                deadline,
                adapter,
                &mut report,
                &mut state,
                &target,
            )?;
        }
        if out_of_time || given_up {
            report.not_run = cases.len() - state.done;
            let finding = if out_of_time {
                out_of_time_finding(&tool, options, report.not_run)
            } else {
                given_up_finding(&report, state.consecutive)
            };
            report.findings.push(finding);
            break;
        }
    }
    Ok(report)
}

/// Judge `batch` with the reference first: a case that contradicts what it was built to
/// be is a contract error and never reaches the adapter. The cases that do.
fn reference_first<'c>(
    subject: &Subject,
    batch: &'c [Case],
    report: &mut ContractReport,
    state: &mut RunState,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Vec<Runnable<'c>> {
    let guard = &subject.guard;
    let tool = guard.contract().tool();
    let mut runnable = Vec::with_capacity(batch.len());
    for case in batch {
        let request = if case.request.tool.as_deref() == Some(tool) {
            std::borrow::Cow::Borrowed(&case.request)
        } else {
            let mut request = case.request.clone();
            request.tool = Some(tool.to_owned());
            std::borrow::Cow::Owned(request)
        };
        let reference = match &case.upstream {
            Upstream::Body(bytes) => guard.admit(&request, bytes),
            Upstream::Transport(error) => guard.admit_transport_error(&request, *error),
        };
        report.classes.entry(case.class.clone()).or_default().cases += 1;
        if let Some(message) = construction_disagrees(case, reference.is_admitted()) {
            let diagnostic = reference
                .diagnostic()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            let message = format!("{message}{diagnostic}");
            report.contract_errors.push(Finding {
                actual: Some(bounded_value(reference.agent().to_json())),
                file: case_file(subject, case),
                ..Finding::on_case(tool, case, FindingKind::Contract, Severity::Error, message)
            });
            progress(Progress::Case);
            state.done += 1;
            continue;
        }
        runnable.push((case, request, reference.into_parts().0));
    }
    runnable
}

/// Record the findings of one case.
fn record(
    subject: &Subject,
    report: &mut ContractReport,
    case: &Case,
    reference: &AgentValue,
    actual: &Result<Answer, AdapterFailure>,
    findings: Vec<(FindingKind, String)>,
) {
    let file = case_file(subject, case);
    // Both values bounded: each finding of the case keeps a copy until the report is out.
    let expected = bounded_value(reference.to_json());
    if let Some(stats) = report.classes.get_mut(&case.class) {
        stats.findings += findings.len();
    }
    let reference_admits = reference
        .error()
        .is_none_or(|(code, _)| !code.is_rejection());
    let actual = actual
        .as_ref()
        .ok()
        .map(|answer| bounded_value(answer.for_report()));
    for (kind, message) in findings {
        let severity = Severity::of(kind, reference_admits);
        report.findings.push(Finding {
            expected: Some(expected.clone()),
            actual: actual.clone(),
            file: file.clone(),
            ..Finding::on_case(&report.tool, case, kind, severity, message)
        });
    }
}

/// A case with findings, waiting for its reproducer.
struct Unreproduced<'a> {
    case: &'a Case,
    request: &'a Request,
    reference: &'a AgentValue,
    /// Its first finding in the report.
    first_finding: usize,
    /// The kind of that finding.
    kind: Option<FindingKind>,
    /// How its body is built, when it is one built later.
    later: Option<adversary::Later>,
}

/// Shrink a case with findings and write its reproducer, within the caps; its findings
/// get the reproducer's path and the shrunk size.
fn reproduce(
    subject: &Subject,
    options: &CheckOptions,
    deadline: Option<Instant>,
    adapter: &mut dyn Adapter,
    report: &mut ContractReport,
    state: &mut RunState,
    pending: &Unreproduced<'_>,
) -> Result<(), CheckError> {
    let Unreproduced {
        case,
        request,
        reference,
        first_finding,
        kind,
        ref later,
    } = *pending;
    // Past the cap (per class and kind) a finding gets no reproducer, and no shrinking
    // either. A run without a reproducer folder keeps those within the cap in the report
    // instead (for `assert_clean` and a replay to write).
    let within_cap = {
        let count = state
            .reproducers
            .entry((case.class.clone(), kind))
            .or_default();
        *count += 1;
        *count <= MAX_REPRODUCERS_PER_CLASS
    };
    let write = options.reproducers.as_deref().filter(|_| within_cap);
    if options.reproducers.is_some() && write.is_none() {
        report.reproducers_not_written += 1;
    }
    let mut minimal = None;
    let in_time = deadline.is_none_or(|d| Instant::now() < d);
    if let (Some(kind), true) = (kind, within_cap && state.shrunk < MAX_SHRINKS && in_time) {
        if SHRINKABLE.contains(&kind) {
            state.shrunk += 1;
            let guard = &subject.guard;
            minimal = shrink(guard, case, request, reference, kind, deadline, adapter);
        }
    }
    let written = minimal.as_ref().map_or(case, |m| &m.case);
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
    if options.reproducers.is_none() && within_cap {
        let contract = subject.guard.contract();
        let mut kept_case = written.clone();
        kept_case.request = request.clone();
        // A large body that was not shrunk is built again when it is written, not held.
        let rebuild = later.clone().filter(|_| minimal.is_none());
        if rebuild.is_some() {
            kept_case.upstream = Upstream::Body(Vec::new());
        }
        let body_len = |c: &Case| match &c.upstream {
            Upstream::Body(bytes) => bytes.len(),
            Upstream::Transport(_) => 0,
        };
        report.kept.push(Kept {
            tool: contract.tool().to_owned(),
            shrunk: minimal.as_ref().map(|m| reproduce::ShrunkAnswer {
                original_bytes: body_len(case),
                shrunk_bytes: body_len(&m.case),
                // Cut as the report's findings are.
                expected: bounded_value(m.expected.clone()),
                actual: m.actual.clone().map(bounded_value),
                findings: m
                    .findings
                    .iter()
                    .map(|(kind, message)| reproduce::ShrunkFinding {
                        kind: *kind,
                        message: clip(message, MAX_MESSAGE_CHARS).into_owned(),
                    })
                    .collect(),
            }),
            reproducer: Reproducer {
                contract: contract.dir().map(Path::to_path_buf).unwrap_or_default(),
                seed: options.seed,
                case: kept_case,
            },
            rebuild: rebuild.map(reproduce::Rebuild),
        });
    }
    for finding in &mut report.findings[first_finding..] {
        if finding.case != case.id {
            break;
        }
        finding.reproducer.clone_from(&reproducer);
        if let (Some(small), Upstream::Body(original)) = (&minimal, &case.upstream) {
            if let Upstream::Body(bytes) = &small.case.upstream {
                finding.message.push_str(&format!(
                    " (shrunk from {} to {} bytes)",
                    original.len(),
                    bytes.len()
                ));
            }
        }
    }
    Ok(())
}

/// The finding of a contract whose adapter was given up on.
fn given_up_finding(report: &ContractReport, consecutive: u32) -> Finding {
    let tool = &report.tool;
    let kind = report
        .findings
        .last()
        .map_or(FindingKind::Crash, |f| f.kind);
    let message = format!(
        "{consecutive} consecutive crashes, timeouts, floods or protocol violations: the remaining {} cases of {tool} were not run",
        report.not_run
    );
    Finding::on_adapter(tool, "given-up", kind, message)
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
                .map(|d| d.join(airlock_guard::version_file(contract.version())))
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

/// `check`'s oracle on one case of `subject`: what is wrong with `actual` against the
/// reference's agent value.
pub(crate) fn judge_case(
    subject: &Subject,
    case: &Case,
    reference: &AgentValue,
    actual: &Result<Answer, AdapterFailure>,
) -> Vec<(FindingKind, String)> {
    judge(
        case,
        reference,
        actual,
        crate::base::shape::Forms::of(subject.guard.contract()),
    )
}

pub(crate) fn failure_kind(failure: &AdapterFailure) -> (FindingKind, String) {
    let kind = match failure {
        AdapterFailure::Crash(_) => FindingKind::Crash,
        AdapterFailure::Timeout => FindingKind::Timeout,
        AdapterFailure::Protocol(_) => FindingKind::Protocol,
        AdapterFailure::Flood => FindingKind::Flood,
    };
    (kind, failure.to_string())
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
mod shard_tests {
    use super::Shard;

    #[test]
    fn a_shard_is_built_only_within_its_count() {
        // Was a public struct literal: `Shard { index: 0, count: 0 }` divided by zero.
        assert_eq!(Shard::new(0, 0), None);
        assert_eq!(Shard::new(0, 3), None);
        assert_eq!(Shard::new(4, 3), None);
        let shard = Shard::new(2, 3).unwrap();
        assert_eq!((shard.index(), shard.count()), (2, 3));
        assert!((0..30).filter(|n| shard.holds_run(*n)).count() == 10);
        assert_eq!("0/0".parse::<Shard>().ok(), None);
    }
}
