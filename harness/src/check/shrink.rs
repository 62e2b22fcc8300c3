//! Shrinking a finding: the smallest body that keeps both the finding and the
//! reference's verdict.

use airlock_guard::{AgentValue, Guard, Request};
use serde_json::Value;
use std::time::Instant;

use super::judge::judge;
use super::report::FindingKind;
use crate::adapter::Adapter;
use crate::cases::{Case, Upstream};

/// Findings worth shrinking: those about the value, not about a process that died.
pub(super) const SHRINKABLE: [FindingKind; 4] = [
    FindingKind::Verdict,
    FindingKind::Value,
    FindingKind::Leak,
    FindingKind::Shape,
];

/// Findings shrunk per contract; later ones keep their full case.
pub(super) const MAX_SHRINKS: usize = 20;

/// Adapter calls one shrink may spend.
const SHRINK_BUDGET: usize = 300;

/// A shrunk case and what was said about it: kept so that a replay can write both.
#[derive(Debug, Clone)]
pub(crate) struct Shrunk {
    /// The smaller case (the original's id, class and request).
    pub case: Case,
    /// The reference's agent value for it.
    pub expected: Value,
    /// The adapter's answer to it, as a report shows it; `None` when it failed.
    pub actual: Option<Value>,
    /// Its findings (the kind shrunk for among them).
    pub findings: Vec<(FindingKind, String)>,
}

/// The smallest body (by removing byte ranges, halving the range each round) that still
/// makes the adapter produce a `kind` finding **and** gets the same verdict from the
/// reference: a shrunk case that the contract would now admit (or now reject) is a
/// different case, never reported as the same finding. `None` when nothing smaller keeps
/// both; else the smallest case with the reference's value, the adapter's answer and the
/// findings of that last trial.
pub(super) fn shrink(
    guard: &Guard,
    case: &Case,
    request: &Request,
    reference: &AgentValue,
    kind: FindingKind,
    deadline: Option<Instant>,
    adapter: &mut dyn Adapter,
) -> Option<Shrunk> {
    let Upstream::Body(original) = &case.upstream else {
        return None;
    };
    let rejected = |v: &AgentValue| v.error().is_some_and(|(code, _)| code.is_rejection());
    let verdict = rejected(reference);
    let mut best = original.clone();
    let mut smallest: Option<Shrunk> = None;
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
            let findings = judge(
                &trial,
                reference.agent(),
                &actual,
                crate::base::shape::Forms::of(guard.contract()),
            );
            if findings.iter().any(|(k, _)| *k == kind) {
                smallest = Some(Shrunk {
                    expected: reference.agent().to_json(),
                    actual: actual.as_ref().ok().map(crate::adapter::Answer::for_report),
                    findings,
                    case: trial,
                });
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
    // Set at each smaller body kept: the last one is the smallest.
    smallest
}

/// [`shrink`] outside a check run (adapter fuzzing): the case's own request, no
/// deadline, and only the kinds worth shrinking.
pub(crate) fn shrink_case(
    guard: &Guard,
    case: &Case,
    reference: &AgentValue,
    kind: FindingKind,
    adapter: &mut dyn Adapter,
) -> Option<Case> {
    if !SHRINKABLE.contains(&kind) {
        return None;
    }
    shrink(guard, case, &case.request, reference, kind, None, adapter).map(|s| s.case)
}
