//! The `answer` target: the harness's reader of adapters' answers. A seed's reference
//! agent value is re-written by an [`AnswerChain`] (white space, duplicate members,
//! canaries, BOM, lone surrogates …) as an adapter might hand it to its agent; whenever
//! `check` judges the bytes clean, a first-duplicate-wins and a last-duplicate-wins JSON
//! reader both read exactly the reference, and white space alone is never a finding.

use airlock_guard::AgentValue;
use arbitrary::{Arbitrary, Unstructured};
use serde_json::{Map, Value};
use std::fmt;

use super::{Fuzzer, Violation};
use crate::base::shape::Forms;
use crate::cases::structural_boundaries;

/// The canary the `answer` target's tokens carry.
pub const ANSWER_CANARY: &str = "zqanswercanary01";

/// Tokens an [`AnswerEdit`] inserts at a structural boundary of an agent value. The
/// first [`MEANING_PRESERVING`] are white space: inserting them never changes the value.
const ANSWER_TOKENS: &[&[u8]] = &[
    b" ",
    b"\t",
    b"\r\n",
    b"\n",
    b"\"code\":\"zqanswercanary01\",",
    b",\"code\":\"zqanswercanary01\"",
    b"\"message\":\"zqanswercanary01\",",
    b",\"message\":\"\\u007aqanswercanary01\"",
    b"\"error\":{\"code\":\"zqanswercanary01\",\"retryable\":false},",
    b"\"zqanswercanary01\":1,",
    b"\"data\":{\"note\":\"zqanswercanary01\"},",
    b"\"outcome\":\"success\",",
    b"\xef\xbb\xbf",
    b"\"\\ud800\"",
    b"{}",
    b",",
    b"\"",
    b"\x00",
];

/// How many of [`ANSWER_TOKENS`] are white space.
const MEANING_PRESERVING: usize = 4;

/// One edit of an agent value's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
pub enum AnswerEdit {
    /// Insert the token `.1` at structural boundary `.0`.
    Token(u16, u8),
    /// Copy the bytes between two structural boundaries to a third (duplicates a member
    /// when the range is one).
    Copy(u16, u16, u16),
    /// Remove the bytes between two structural boundaries.
    Remove(u16, u16),
}

/// An `answer` input: a seed's reference agent value and the edits applied to its bytes.
#[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
pub struct AnswerChain {
    /// Which seed (its reference agent value is the base).
    pub base: u16,
    /// The edits, in order.
    pub edits: Vec<AnswerEdit>,
}

impl Fuzzer {
    /// The `answer` target: read an [`AnswerChain`] from `input`, apply it to the
    /// reference agent value of its seed, and judge the bytes as `check` judges an
    /// adapter's answer.
    ///
    /// # Errors
    ///
    /// The [`Violation`].
    pub fn check_answer(&self, input: &[u8]) -> Result<(), Violation> {
        self.check_answer_with(input, &crate::check::judge_answer)
    }

    /// [`Fuzzer::check_answer`] with another answer judge (to test the invariant).
    pub(super) fn check_answer_with(
        &self,
        input: &[u8],
        judge: &AnswerJudge,
    ) -> Result<(), Violation> {
        let Ok(chain) = AnswerChain::arbitrary_take_rest(Unstructured::new(input)) else {
            return Ok(());
        };
        let Some(seed) = self
            .seeds
            .get(usize::from(chain.base) % self.seeds.len().max(1))
        else {
            return Ok(());
        };
        let (guard, _) = &self.guards[seed.guard];
        let admission;
        let reference = if seed.bytes.is_later() {
            // Built and judged once: megabytes, where the reference is its projection.
            seed.reference.get_or_init(|| {
                guard
                    .admit(&seed.request, &seed.bytes.bytes())
                    .agent()
                    .clone()
            })
        } else {
            admission = guard.admit(&seed.request, &seed.bytes.bytes());
            admission.agent()
        };
        let original = answer_bytes(guard, reference);
        let (bytes, preserving) = apply_answer_edits(&original, &chain.edits);
        let findings = judge(
            &[ANSWER_CANARY.to_owned()],
            reference,
            &crate::adapter::Answer::Bytes(bytes.clone()),
            Forms::of(guard.contract()),
        );
        if !findings.is_empty() {
            ensure!(
                !preserving,
                "whitespace_is_a_finding",
                "white space alone made findings: {findings:?} on {}",
                String::from_utf8_lossy(&bytes)
            );
            return Ok(());
        }
        let expected: Value = serde_json::from_slice(&original)
            .map_err(|e| Violation::new("reference_not_json", e.to_string()))?;
        let last = serde_json::from_slice::<Value>(&bytes).ok();
        let first = serde_json::from_slice::<FirstWins>(&bytes)
            .ok()
            .map(|f| f.0);
        ensure!(
            last.as_ref() == Some(&expected) && first.as_ref() == Some(&expected),
            "answer_read_differently",
            "judged clean, but JSON readers see {last:?} (last duplicate wins) and {first:?} \
             (first wins) where the reference is {expected}"
        );
        Ok(())
    }
}

/// What judges an answer: the canaries, the reference, the answer; the findings.
type AnswerJudge = dyn Fn(
    &[String],
    &AgentValue,
    &crate::adapter::Answer,
    Forms,
) -> Vec<(crate::check::report::FindingKind, String)>;

/// The bytes an adapter answers with when it answers exactly the reference: the closed
/// envelope, or for an MCP tool contract the fresh `CallToolResult` (the envelope form is
/// fuzzed on the envelope contracts).
fn answer_bytes(guard: &airlock_guard::Guard, reference: &AgentValue) -> Vec<u8> {
    match Forms::of(guard.contract()) {
        Forms::Envelope => reference.to_json_string().into_bytes(),
        Forms::EnvelopeOrCallToolResult => reference.to_call_tool_result().to_string().into_bytes(),
    }
}

/// Apply `edits` to `bytes`; the result and whether only white space was inserted.
fn apply_answer_edits(bytes: &[u8], edits: &[AnswerEdit]) -> (Vec<u8>, bool) {
    let mut bytes = bytes.to_vec();
    let mut preserving = true;
    for edit in edits {
        let boundaries = structural_boundaries(&bytes);
        if boundaries.is_empty() {
            break;
        }
        let at = |i: u16| boundaries[usize::from(i) % boundaries.len()];
        match *edit {
            AnswerEdit::Token(pos, which) => {
                let which = usize::from(which) % ANSWER_TOKENS.len();
                preserving &= which < MEANING_PRESERVING;
                let i = at(pos);
                bytes.splice(i..i, ANSWER_TOKENS[which].iter().copied());
            }
            AnswerEdit::Copy(from, to, dest) => {
                let (start, end) = (at(from).min(at(to)), at(from).max(at(to)));
                let run = bytes[start..end].to_vec();
                preserving &= run.is_empty();
                let i = at(dest);
                bytes.splice(i..i, run);
            }
            AnswerEdit::Remove(from, to) => {
                let (start, end) = (at(from).min(at(to)), at(from).max(at(to)));
                preserving &= start == end;
                bytes.drain(start..end);
            }
        }
    }
    (bytes, preserving)
}

/// A JSON value read so that the first of duplicate members wins (serde_json keeps the
/// last): the reading of a different agent's parser.
struct FirstWins(Value);

impl<'de> serde::Deserialize<'de> for FirstWins {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(FirstWinsVisitor)
            .map(FirstWins)
    }
}

struct FirstWinsVisitor;

impl<'de> serde::de::Visitor<'de> for FirstWinsVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let FirstWins(value) = map.next_value()?;
            out.entry(key).or_insert(value);
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(FirstWins(value)) = seq.next_element()? {
            out.push(value);
        }
        Ok(Value::Array(out))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fuzz::{FuzzOptions, FuzzReport, Target};

    fn fuzzer() -> Fuzzer {
        Fuzzer::load(&["../schemas/review_status".into()]).unwrap()
    }

    fn answer_run(fuzzer: &Fuzzer, judge: &AnswerJudge) -> FuzzReport {
        let options = FuzzOptions {
            targets: vec![Target::Answer],
            seed: 5,
            runs: Some(3000),
            ..FuzzOptions::default()
        };
        fuzzer.run_with(&options, &mut |_| {}, &mut |_, input| {
            fuzzer.check_answer_with(input, judge)
        })
    }

    #[test]
    fn the_answer_reader_keeps_the_answer_invariant() {
        let report = answer_run(&fuzzer(), &crate::check::judge_answer);
        assert!(report.finding.is_none(), "{:?}", report.finding);
    }

    #[test]
    fn the_call_tool_result_reader_keeps_the_answer_invariant() {
        let fuzzer = Fuzzer::load(&["../schemas/change_review".into()]).unwrap();
        let report = answer_run(&fuzzer, &crate::check::judge_answer);
        assert!(report.finding.is_none(), "{:?}", report.finding);
        assert!(report.runs > 0);
    }

    #[test]
    fn a_reader_that_keeps_the_last_duplicate_breaks_the_answer_invariant() {
        // The harness before it read answers strictly: serde_json, equal to the reference.
        let lenient: &AnswerJudge = &|_, reference, answer, _| {
            let bytes = answer.raw().unwrap_or_default();
            match serde_json::from_slice::<Value>(bytes) {
                Ok(value) if value == reference.to_json() => Vec::new(),
                _ => vec![(crate::check::report::FindingKind::Value, "differs".into())],
            }
        };
        let finding = answer_run(&fuzzer(), lenient).finding.expect("a violation");
        assert_eq!(finding.violation.invariant, "answer_read_differently");
    }

    #[test]
    fn white_space_between_tokens_is_never_an_answer_finding() {
        let fuzzer = fuzzer();
        for base in 0..fuzzer.seeds.len() as u16 {
            let edits = (0..12)
                .map(|i| AnswerEdit::Token(i * 7, (i % MEANING_PRESERVING as u16) as u8))
                .collect();
            let chain = AnswerChain { base, edits };
            let seed = &fuzzer.seeds[usize::from(base)];
            let guard = &fuzzer.guards[seed.guard].0;
            let reference = guard.admit(&seed.request, &seed.bytes.bytes());
            let original = answer_bytes(guard, reference.agent());
            let (bytes, preserving) = apply_answer_edits(&original, &chain.edits);
            assert!(preserving && bytes.len() > original.len());
            let findings = crate::check::judge_answer(
                &[ANSWER_CANARY.into()],
                reference.agent(),
                &crate::adapter::Answer::Bytes(bytes),
                Forms::of(guard.contract()),
            );
            assert!(findings.is_empty(), "{findings:?}");
        }
    }
}
