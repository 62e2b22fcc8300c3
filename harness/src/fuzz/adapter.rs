//! Differential fuzzing of an adapter: the fuzzer's bytes become a case (one of the
//! contract's fixtures or deterministic variants, then a chain of edits inside values, at
//! structural boundaries and on the request), the adapter answers it, and `check`'s own
//! oracle judges the answer against the guard's.
//!
//! The same decoder and oracle serve three drivers:
//! * a cargo-fuzz target in the adapter's crate ([`adapter`], coverage-guided, on stable
//!   with `--sanitizer none`, or ClusterFuzzLite unchanged);
//! * an in-process loop for `cargo test` ([`AdapterFuzzer::run`], seeded);
//! * `airlock fuzz --adapter-cmd` for any program over the exec protocol (black box, the
//!   guard's decision path as its feedback: [`AdapterFuzzer::judge`]'s signal).
//!
//! ```
//! use airlock_harness::{AdapterFuzzer, GuardAdapter, RunOptions};
//!
//! let fuzzer = AdapterFuzzer::load(&["../schemas/review_status".into()])?;
//! let mut correct = GuardAdapter::new(fuzzer.guards());
//! let run = fuzzer.run(&mut correct, &RunOptions::default().runs(200));
//! assert!(run.finding.is_none());
//! # Ok::<(), airlock_harness::CheckError>(())
//! ```

use airlock_guard::{Guard, InputKind};
use arbitrary::{Arbitrary, Unstructured};
use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use super::dictionary::{respell, Dictionary, CANARIES};
use super::spans::{encode, escape, line_starts, nth_key, pick, value_spans};
use super::Edit;
use crate::adapter::{Adapter, AdapterFailure, Answer};
use crate::adversary;
use crate::base::error::{CheckError, WriteFileError};
use crate::base::subject::Subject;
use crate::cases::{fnv1a, structural_boundaries, Case, Expectation, Rng, Upstream};
use crate::check::report::FindingKind;
use crate::check::{judge_case, Reproducer};

/// The most edits one input applies.
pub const MAX_EDITS: usize = 8;

/// One edit of an adapter fuzz input. Indexes are taken modulo what they index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdapterEdit {
    /// The n-th value of the body (a string's text, a number or literal, a line's value)
    /// replaced by a dictionary word.
    SetValue {
        /// Which value.
        value: u8,
        /// Which word.
        word: u16,
    },
    /// A dictionary word put inside the n-th value, at a character position.
    InsertInValue {
        /// Which value.
        value: u8,
        /// Where in it.
        at: u8,
        /// Which word.
        word: u16,
    },
    /// The n-th value in another spelling a lax reader takes for the same: a time's
    /// lower-case `t`, comma fraction or `T24:00:00`, text re-cased, full-width,
    /// percent-encoded, padded, a branch with or without `refs/heads/`.
    Respell {
        /// Which value.
        value: u8,
        /// Which spelling.
        how: u8,
    },
    /// Bytes carried by the input itself put inside the n-th value, unescaped: where a
    /// fuzzer's own dictionary (`-dict=`, written by `airlock fuzz --write-dict`) and its
    /// byte mutations reach the body.
    Raw {
        /// Which value.
        value: u8,
        /// Where in it.
        at: u8,
        /// The bytes (at most 32).
        bytes: Vec<u8>,
    },
    /// A dictionary word, as raw bytes, at a structural boundary of the body.
    Token {
        /// Which boundary.
        at: u16,
        /// Which word.
        word: u16,
    },
    /// A byte edit, as the `mutate` target makes them.
    Byte(Edit),
    /// A request parameter set to a dictionary word.
    SetParam {
        /// Which parameter.
        param: u8,
        /// Which word.
        word: u16,
    },
    /// A request parameter's JSON type changed: digits as a number, a number as a string.
    RetypeParam {
        /// Which parameter.
        param: u8,
    },
    /// The request's `now` moved, in minutes.
    MoveNow(i16),
}

/// A decoded fuzz input: which seed case, then the edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterInput {
    /// Which seed case (even: one the guard admits; odd: any).
    pub base: u16,
    /// The edits, in order (at most [`MAX_EDITS`]).
    pub edits: Vec<AdapterEdit>,
}

impl AdapterInput {
    /// Decode the fuzzer's bytes: the first two are the base (little-endian), then each
    /// edit a kind byte (value edits the most likely) and its fields. Every byte string
    /// decodes.
    pub fn decode(data: &[u8]) -> Self {
        let base = u16::from_le_bytes([
            data.first().copied().unwrap_or(0),
            data.get(1).copied().unwrap_or(0),
        ]);
        let mut u = Unstructured::new(data.get(2..).unwrap_or(&[]));
        let mut edits = Vec::new();
        while edits.len() < MAX_EDITS && !u.is_empty() {
            match decode_edit(&mut u) {
                Ok(edit) => edits.push(edit),
                Err(_) => break,
            }
        }
        Self { base, edits }
    }
}

fn decode_edit(u: &mut Unstructured<'_>) -> arbitrary::Result<AdapterEdit> {
    let kind = u8::arbitrary(u)?;
    Ok(match kind % 16 {
        0..=3 => AdapterEdit::SetValue {
            value: u.arbitrary()?,
            word: u.arbitrary()?,
        },
        4 | 5 => AdapterEdit::InsertInValue {
            value: u.arbitrary()?,
            at: u.arbitrary()?,
            word: u.arbitrary()?,
        },
        6 => {
            let value = u.arbitrary()?;
            let at = u.arbitrary()?;
            let len = usize::from(u8::arbitrary(u)? % 33);
            AdapterEdit::Raw {
                value,
                at,
                bytes: u.bytes(len.min(u.len()))?.to_vec(),
            }
        }
        7..=9 => AdapterEdit::Respell {
            value: u.arbitrary()?,
            how: u.arbitrary()?,
        },
        10 => AdapterEdit::Token {
            at: u.arbitrary()?,
            word: u.arbitrary()?,
        },
        11 => AdapterEdit::Byte(u.arbitrary()?),
        12 | 13 => AdapterEdit::SetParam {
            param: u.arbitrary()?,
            word: u.arbitrary()?,
        },
        14 => AdapterEdit::RetypeParam {
            param: u.arbitrary()?,
        },
        _ => AdapterEdit::MoveNow(u.arbitrary()?),
    })
}

/// A decoded case with the guard's admission, waiting for the adapter's answer.
pub(super) struct Prepared {
    subject: usize,
    pub(super) case: Case,
}

/// A seed case: a fixture or deterministic variant with a body, of one contract.
#[derive(Debug, Clone)]
struct Seed {
    subject: usize,
    /// The case; its body is [`Seed::body`]'s (left empty when built later).
    case: Case,
    body: super::SeedBody,
}

impl Seed {
    /// The case with its body, built when it is not held.
    fn case(&self) -> Case {
        let mut case = self.case.clone();
        case.upstream = Upstream::Body(self.body.bytes().into_owned());
        case
    }
}

/// The contracts under fuzz, their seed cases and dictionary.
#[derive(Debug)]
pub struct AdapterFuzzer {
    subjects: Vec<Subject>,
    seeds: Vec<Seed>,
    /// The seeds the guard admits: the neighbourhood where adapters normalise.
    admitted: Vec<usize>,
    dictionary: Dictionary,
}

/// An answer `check`'s oracle found wrong.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AdapterFinding {
    /// The case, as `check --replay` reads it.
    pub reproducer: Box<Reproducer>,
    /// What is wrong: the kind and the oracle's message, per finding.
    pub findings: Vec<(FindingKind, String)>,
}

impl fmt::Display for AdapterFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "case {}:", self.reproducer.case.id)?;
        for (kind, message) in &self.findings {
            let message = crate::base::report::printable(message);
            let cut = crate::base::report::clip(&message, 400);
            write!(f, "\n  {}: {cut}", kind.as_str())?;
        }
        Ok(())
    }
}

/// What the guard decided on an input, for a black-box fuzzer's corpus: inputs that reach
/// a new decision (admitted or not; a rejection's stage, keyword or check, schema location
/// and member) or a new answer shape are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Signal(pub u64);

/// An in-process fuzz run: [`RunOptions::default`], then the setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOptions {
    /// Seed of the input generator.
    pub seed: u64,
    /// Inputs to judge.
    pub runs: u64,
    /// The longest input, in bytes.
    pub max_len: usize,
}

impl Default for RunOptions {
    /// Seed 0, 10 000 inputs of up to 64 bytes (two bytes of base, up to eight edits).
    fn default() -> Self {
        Self {
            seed: 0,
            runs: 10_000,
            max_len: 64,
        }
    }
}

impl RunOptions {
    /// With this seed of the input generator.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Judging this many inputs.
    #[must_use]
    pub fn runs(mut self, runs: u64) -> Self {
        self.runs = runs;
        self
    }

    /// With inputs of at most this many bytes.
    #[must_use]
    pub fn max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len;
        self
    }
}

/// The end of an in-process run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Run {
    /// Inputs judged.
    pub runs: u64,
    /// The first finding, with the input that made it; the run stops there.
    pub finding: Option<(Vec<u8>, AdapterFinding)>,
}

impl AdapterFuzzer {
    /// Load the contracts in `dirs` with their corpora.
    ///
    /// # Errors
    ///
    /// When a contract or corpus cannot be loaded.
    pub fn load(dirs: &[PathBuf]) -> Result<Self, CheckError> {
        let subjects = dirs
            .iter()
            .map(|d| {
                let dir = std::fs::canonicalize(d).unwrap_or_else(|_| d.clone());
                Subject::load(&dir)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::new(subjects))
    }

    /// Fuzz against `subjects`: the seeds are every fixture and deterministic variant
    /// with a body.
    #[doc(hidden)]
    pub fn new(subjects: Vec<Subject>) -> Self {
        let mut seeds = Vec::new();
        for (i, subject) in subjects.iter().enumerate() {
            let tool = subject.guard.contract().tool().to_owned();
            let (cases, later) =
                adversary::generate_later(subject.guard.contract(), &subject.corpus, 0, 0);
            for mut case in cases {
                // The body is held once, in `body`.
                if let Some(body) = super::SeedBody::take(&mut case, &later) {
                    case.request.tool = Some(tool.clone());
                    seeds.push(Seed {
                        subject: i,
                        case,
                        body,
                    });
                }
            }
        }
        let admitted = seeds
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                // As `Fuzzer::new`: a body built later is not judged at load.
                if s.body.is_later() {
                    return false;
                }
                let guard = &subjects[s.subject].guard;
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    guard.admit(&s.case.request, &s.body.bytes()).is_admitted()
                }))
                .unwrap_or(false)
            })
            .map(|(i, _)| i)
            .collect();
        let dictionary = Dictionary::of(&subjects);
        Self {
            subjects,
            seeds,
            admitted,
            dictionary,
        }
    }

    /// The loaded contract whose folder is `dir`.
    pub(super) fn subject_of(&self, dir: &Path) -> Option<&Subject> {
        self.subjects
            .iter()
            .find(|s| s.guard.contract().dir() == Some(dir))
    }

    /// Ask `adapter` the first seed case: `Err` with the failure when it crashes, hangs
    /// or breaks the protocol (a command that does not start, or speaks no protocol).
    ///
    /// # Errors
    ///
    /// The adapter's failure (its `Display` words it as `check` does).
    pub fn first_answer(&self, adapter: &mut dyn Adapter) -> Result<(), AdapterFailure> {
        let Some(seed) = self.seeds.first() else {
            return Ok(());
        };
        let case = seed.case();
        adapter.answer(&case.request, &case.upstream).map(|_| ())
    }

    /// The bytes of the seeds' bodies held (not those built when used).
    #[cfg(test)]
    pub(super) fn held_bytes(&self) -> usize {
        self.seeds.iter().map(|s| s.body.held_len()).sum()
    }

    /// Whether there is anything to fuzz from: a fixture or variant with a body.
    pub fn has_seeds(&self) -> bool {
        !self.seeds.is_empty()
    }

    /// The contracts' guards (for a correct adapter to compare with).
    pub fn guards(&self) -> Vec<Guard> {
        self.subjects.iter().map(|s| s.guard.clone()).collect()
    }

    /// The dictionary the edits draw from.
    pub fn dictionary(&self) -> &Dictionary {
        &self.dictionary
    }

    /// One input per seed case, without edits: the start of a fuzzer's corpus. An odd
    /// base `2 i + 1` reaches seed `i`, so at most the first 32 768 seeds get one (an
    /// even base reaches the admitted ones among the rest).
    pub fn seed_inputs(&self) -> Vec<Vec<u8>> {
        (0..self.seeds.len().min(1 << 15))
            .filter_map(|i| u16::try_from(2 * i + 1).ok())
            .map(|base| base.to_le_bytes().to_vec())
            .collect()
    }

    /// Write [`seed_inputs`](Self::seed_inputs) into `dir` (created), one file per input
    /// named by its base (`seed-0001`); returns how many.
    ///
    /// # Errors
    ///
    /// The file or folder that could not be written, and why.
    pub fn write_seed_inputs(&self, dir: &Path) -> Result<usize, WriteFileError> {
        std::fs::create_dir_all(dir).map_err(WriteFileError::at(dir))?;
        let inputs = self.seed_inputs();
        for input in &inputs {
            let path = dir.join(format!(
                "seed-{:04x}",
                u16::from_le_bytes([input[0], input[1]])
            ));
            std::fs::write(&path, input).map_err(WriteFileError::at(&path))?;
        }
        Ok(inputs.len())
    }

    /// The case the fuzzer's bytes decode to, and the contract it belongs to.
    #[doc(hidden)]
    pub fn case(&self, data: &[u8]) -> Option<(&Subject, Case)> {
        let input = AdapterInput::decode(data);
        let base = usize::from(input.base);
        let index = match base % 2 {
            0 if !self.admitted.is_empty() => self.admitted[(base / 2) % self.admitted.len()],
            _ => (base / 2) % self.seeds.len().max(1),
        };
        let seed = self.seeds.get(index)?;
        let subject = &self.subjects[seed.subject];
        let mut case = seed.case.clone();
        let mut bytes = seed.body.bytes().into_owned();
        let lines = match subject.guard.contract().input() {
            InputKind::Lines(lines) => Some(lines.separator.as_str()),
            _ => None,
        };
        for edit in &input.edits {
            self.apply(edit, lines, &mut bytes, &mut case);
        }
        case.id = format!(
            "fuzz/{}/{:016x}",
            subject.guard.contract().tool(),
            fnv1a(data)
        );
        case.class = "fuzz".into();
        case.expect = Expectation::Reference;
        case.upstream = Upstream::Body(bytes);
        Some((subject, case))
    }

    fn apply(&self, edit: &AdapterEdit, lines: Option<&str>, bytes: &mut Vec<u8>, case: &mut Case) {
        // A canary the edit plants must not reach the agent.
        let word = |w: u16, canaries: &mut Vec<String>| {
            let word = self.dictionary.word(w);
            if CANARIES.contains(&word) && !canaries.iter().any(|c| c == word) {
                canaries.push(word.to_owned());
            }
            word.to_owned()
        };
        match edit {
            AdapterEdit::SetValue { value, word: w } => {
                let spans = value_spans(bytes, lines);
                if let Some(span) = pick(&spans, *value) {
                    let word = word(*w, &mut case.canaries);
                    // A line's value is raw text: no JSON quoting.
                    let text = if lines.is_some() {
                        word
                    } else {
                        encode(&word, span.quoted)
                    };
                    bytes.splice(span.start..span.end, text.into_bytes());
                }
            }
            AdapterEdit::InsertInValue { value, at, word: w } => {
                let spans = value_spans(bytes, lines);
                if let Some(span) = pick(&spans, *value) {
                    let inner = &bytes[span.start..span.end];
                    let cuts: Vec<usize> = (0..=inner.len())
                        .filter(|&i| i == inner.len() || (inner[i] & 0xc0) != 0x80)
                        .collect();
                    let cut = span.start + cuts[usize::from(*at) % cuts.len()];
                    let text = if span.quoted {
                        escape(&word(*w, &mut case.canaries))
                    } else {
                        word(*w, &mut case.canaries)
                    };
                    bytes.splice(cut..cut, text.into_bytes());
                }
            }
            AdapterEdit::Raw {
                value,
                at,
                bytes: raw,
            } => {
                let spans = value_spans(bytes, lines);
                if let Some(span) = pick(&spans, *value) {
                    let cut = span.start + usize::from(*at) % (span.end - span.start + 1);
                    bytes.splice(cut..cut, raw.iter().copied());
                }
            }
            AdapterEdit::Respell { value, how } => {
                let spans = value_spans(bytes, lines);
                let Some(span) = pick(&spans, *value) else {
                    return;
                };
                let Ok(raw) = std::str::from_utf8(&bytes[span.start..span.end]) else {
                    return;
                };
                let text = if span.quoted {
                    serde_json::from_str::<String>(&format!("\"{raw}\"")).ok()
                } else {
                    Some(raw.to_owned())
                };
                if let Some(new) = text.and_then(|t| respell(&t, *how)) {
                    let new = if span.quoted { escape(&new) } else { new };
                    bytes.splice(span.start..span.end, new.into_bytes());
                }
            }
            AdapterEdit::Token { at, word: w } => {
                let boundaries = match lines {
                    Some(_) => line_starts(bytes),
                    None => structural_boundaries(bytes),
                };
                let cut = match boundaries.len() {
                    0 => usize::from(*at) % (bytes.len() + 1),
                    n => boundaries[usize::from(*at) % n],
                };
                bytes.splice(cut..cut, word(*w, &mut case.canaries).into_bytes());
            }
            AdapterEdit::Byte(edit) => super::apply_edit(edit, bytes, &mut |from| {
                self.seeds
                    .get(usize::from(from) % self.seeds.len().max(1))
                    .map(|s| s.body.splice_source())
            }),
            AdapterEdit::SetParam { param, word: w } => {
                let params = &mut case.request.params;
                if let Some(name) = nth_key(params, *param) {
                    let text = word(*w, &mut case.canaries);
                    params.insert(name, Value::String(text));
                }
            }
            AdapterEdit::RetypeParam { param } => {
                let params = &mut case.request.params;
                if let Some(name) = nth_key(params, *param) {
                    let retyped = match &params[&name] {
                        Value::String(s) => serde_json::from_str::<serde_json::Number>(s)
                            .ok()
                            .map(Value::Number),
                        Value::Number(n) => Some(Value::String(n.to_string())),
                        _ => None,
                    };
                    if let Some(value) = retyped {
                        params.insert(name, value);
                    }
                }
            }
            AdapterEdit::MoveNow(minutes) => {
                let moved = airlock_guard::jiff::SignedDuration::from_mins(i64::from(*minutes));
                if let Ok(now) = case.request.now.checked_add(moved) {
                    case.request.now = now;
                }
            }
        }
    }

    /// Judge the adapter's answer to the case `data` decodes to, with `check`'s oracle:
    /// the guard's decision as a [`Signal`], or what is wrong.
    ///
    /// # Errors
    ///
    /// The finding, with its reproducer.
    pub fn judge(&self, adapter: &mut dyn Adapter, data: &[u8]) -> Result<Signal, AdapterFinding> {
        let Some(prepared) = self.prepare(data) else {
            return Ok(Signal(0));
        };
        // A panicking adapter is a finding with its reproducer, not a lost run.
        let actual = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            adapter.answer(&prepared.case.request, &prepared.case.upstream)
        }))
        .unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(AdapterFailure::Crash(format!(
                "the adapter panicked: {message}"
            )))
        });
        self.assess(&prepared, &actual)
    }

    /// The case of `data`, with the index of its contract.
    pub(super) fn prepare(&self, data: &[u8]) -> Option<Prepared> {
        let (subject, case) = self.case(data)?;
        let subject = self
            .subjects
            .iter()
            .position(|s| std::ptr::eq(s, subject))
            .unwrap_or_default();
        Some(Prepared { subject, case })
    }

    /// Judge an answer to a prepared case against the guard's admission of it (asked
    /// here, so that a pipelined adapter answers the cases after it meanwhile).
    pub(super) fn assess(
        &self,
        prepared: &Prepared,
        actual: &Result<Answer, AdapterFailure>,
    ) -> Result<Signal, AdapterFinding> {
        let Prepared { subject, case } = prepared;
        let subject = &self.subjects[*subject];
        let Upstream::Body(bytes) = &case.upstream else {
            return Ok(Signal(0));
        };
        let admission = subject.guard.admit(&case.request, bytes);
        let signal = signal(&admission, actual);
        let (reference, _) = admission.into_parts();
        let findings = judge_case(subject, case, &reference, actual);
        if findings.is_empty() {
            return Ok(signal);
        }
        Err(AdapterFinding {
            reproducer: Box::new(Reproducer {
                contract: subject
                    .guard
                    .contract()
                    .dir()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
                seed: 0,
                case: case.clone(),
            }),
            findings,
        })
    }

    /// Write the case `data` decodes to as a reproducer `<dir>/<tool>/<case>.case.json`
    /// (the body and request beside it), which `airlock check --replay` runs against
    /// any adapter: how a cargo-fuzz crash file of an adapter target becomes a case.
    /// `None` when `data` decodes to no case (there is no seed to start from).
    ///
    /// # Errors
    ///
    /// When a file cannot be written.
    pub fn write_case(&self, dir: &Path, data: &[u8]) -> Result<Option<PathBuf>, CheckError> {
        let Some((subject, case)) = self.case(data) else {
            return Ok(None);
        };
        crate::check::write_reproducer(dir, subject, 0, &case, &case.request).map(Some)
    }

    /// Judge `runs` generated inputs in turn, stopping at the first finding.
    pub fn run(&self, adapter: &mut dyn Adapter, options: &RunOptions) -> Run {
        let mut rng = Rng::new(options.seed, "adapter-fuzz");
        let mut data = Vec::with_capacity(options.max_len);
        for n in 0..options.runs {
            data.clear();
            let len = 2 + rng.below(options.max_len.saturating_sub(1).max(1));
            data.extend((0..len).map(|_| rng.next_u64() as u8));
            if let Err(finding) = self.judge(adapter, &data) {
                return Run {
                    runs: n + 1,
                    finding: Some((data, finding)),
                };
            }
        }
        Run {
            runs: options.runs,
            finding: None,
        }
    }
}

/// The cargo-fuzz entry: judge `adapter`'s answer to the case `data` decodes to and panic
/// on a finding, with the case id, what is wrong, and the reproducer (written under
/// `$AIRLOCK_FUZZ_REPRODUCERS` when set, else printed) that `airlock check --replay` runs.
///
/// ```no_run
/// # use airlock_harness::{AdapterFuzzer, GuardAdapter};
/// # let fuzzer = AdapterFuzzer::load(&["schemas/review_status".into()]).unwrap();
/// # let mut my_adapter = GuardAdapter::new(fuzzer.guards());
/// # let data: &[u8] = &[];
/// // In fuzz/fuzz_targets/my_adapter.rs, inside `fuzz_target!(|data: &[u8]| { … })`:
/// airlock_harness::fuzz_adapter(&fuzzer, &mut my_adapter, data);
/// ```
///
/// # Panics
///
/// On a finding: that is how a fuzzer learns of one.
pub fn adapter(fuzzer: &AdapterFuzzer, adapter: &mut dyn Adapter, data: &[u8]) {
    let Err(finding) = fuzzer.judge(adapter, data) else {
        return;
    };
    let written = std::env::var_os("AIRLOCK_FUZZ_REPRODUCERS")
        .map(|dir| write_finding(Path::new(&dir), &finding));
    let reproducer = match written {
        Some(Ok(path)) => format!(
            "reproducer: {}\n  replay: airlock check --replay {} --adapter-cmd '<your adapter>'",
            path.display(),
            path.display()
        ),
        Some(Err(e)) => format!("the reproducer could not be written: {e}"),
        None => format!(
            "reproducer (save as a .case.json file, set AIRLOCK_FUZZ_REPRODUCERS=DIR, or \
             write it from the crash file: airlock fuzz --contract DIR --replay CRASH \
             --for-adapter):\n{}",
            serde_json::to_string(&finding.reproducer).unwrap_or_default()
        ),
    };
    panic!("airlock: the adapter's answer is wrong on {finding}\n  {reproducer}");
}

/// Write `finding`'s reproducer as `<dir>/<tool>/<case>.case.json` (the body and request
/// beside it), as `check --reproducers` does; its path.
///
/// # Errors
///
/// When a file cannot be written.
pub fn write_finding(dir: &Path, finding: &AdapterFinding) -> Result<PathBuf, CheckError> {
    let subject = Subject::load(&finding.reproducer.contract)?;
    crate::check::write_reproducer(
        dir,
        &subject,
        finding.reproducer.seed,
        &finding.reproducer.case,
        &finding.reproducer.case.request,
    )
}

/// The guard's decision and the answer's shape, hashed.
fn signal(admission: &airlock_guard::Admission, actual: &Result<Answer, AdapterFailure>) -> Signal {
    let mut hasher = DefaultHasher::new();
    admission.is_admitted().hash(&mut hasher);
    if let Some(d) = admission.diagnostic() {
        d.stage().as_str().hash(&mut hasher);
        d.keyword().hash(&mut hasher);
        d.schema_path().hash(&mut hasher);
        // Which member (array positions aside): two checks on two fields differ.
        d.instance_path()
            .map(|p| p.replace(|c: char| c.is_ascii_digit(), ""))
            .hash(&mut hasher);
    }
    match actual {
        Ok(answer) => match answer.read() {
            Ok(value) => shape(&value, &mut hasher),
            Err(_) => "unreadable".hash(&mut hasher),
        },
        Err(failure) => crate::check::failure_kind(failure).0.hash(&mut hasher),
    }
    Signal(hasher.finish())
}

/// The shape of an answer: its member names and value types, not its text.
fn shape(value: &Value, hasher: &mut DefaultHasher) {
    match value {
        Value::Object(map) => {
            for (name, member) in map {
                name.hash(hasher);
                shape(member, hasher);
            }
        }
        Value::Array(items) => {
            items.len().min(4).hash(hasher);
            items.iter().take(4).for_each(|v| shape(v, hasher));
        }
        Value::String(_) => 's'.hash(hasher),
        Value::Number(_) => 'n'.hash(hasher),
        Value::Bool(b) => b.hash(hasher),
        Value::Null => 'z'.hash(hasher),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_string_decodes_and_edits_are_bounded() {
        let mut rng = Rng::new(1, "decode");
        for _ in 0..2000 {
            let len = rng.below(300);
            let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let input = AdapterInput::decode(&data);
            assert!(input.edits.len() <= MAX_EDITS);
        }
        assert_eq!(AdapterInput::decode(&[]).base, 0);
        assert_eq!(AdapterInput::decode(&[5, 1]).base, 261);
    }

    #[test]
    fn a_line_value_takes_a_word_as_raw_text() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/git_branch_head");
        let fuzzer = AdapterFuzzer::load(&[dir]).unwrap();
        let mut replaced = 0;
        for word in 0..64u16 {
            // Base 0 (an admitted seed), one SetValue of the first value.
            let [lo, hi] = word.to_le_bytes();
            let (_, case) = fuzzer.case(&[0, 0, 0, 0, lo, hi]).unwrap();
            let Upstream::Body(body) = &case.upstream else {
                unreachable!()
            };
            let text = String::from_utf8_lossy(body);
            let first = text.lines().next().unwrap();
            let (_, value) = first.split_once('=').unwrap();
            let expected = fuzzer.dictionary().word(word);
            if !expected.contains(['\n', '\r', '=']) {
                assert_eq!(value, expected, "{text}");
                replaced += 1;
            }
        }
        assert!(replaced > 32);
    }
}
