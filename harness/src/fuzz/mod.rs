//! Fuzzing the guard. The invariants every input must keep live here, shared by the
//! cargo-fuzz targets in `fuzz/` (libFuzzer, coverage-guided, overnight) and the
//! in-process `airlock fuzz` command (stable Rust, seeded, for CI smoke runs).
//!
//! Three targets:
//! * `parse` — the strict parser against `serde_json` on the same bytes: equal values,
//!   or a rejection for a documented reason.
//! * `admit` — the guard of every contract on the same bytes: a closed agent value, the
//!   fixed failure on rejection, only the response's own agent fields on admission,
//!   validation in place agreeing with validation of the `serde_json` value, an audit
//!   record that digests exactly the bytes read.
//! * `mutate` — structure-aware: a [`Chain`] of edits applied to one of the adversary's
//!   deterministic variants (fixtures with duplicated members, swapped types, edge
//!   strings …), judged by that variant's own contract and request, with the `admit`
//!   invariants.
//! * `answer` — the harness's reader of adapters' answers: a seed's reference agent value,
//!   re-written by an [`AnswerChain`] (whitespace, duplicate members, canaries, BOM, lone
//!   surrogates …) as an adapter might hand it to its agent. Whenever `check` judges the
//!   bytes clean, a first-duplicate-wins and a last-duplicate-wins JSON reader both read
//!   exactly the reference; whitespace alone never makes a finding.
//!
//! ```
//! use airlock_harness::fuzz::{FuzzOptions, Fuzzer, Target};
//!
//! let fuzzer = Fuzzer::load(&["../schemas/review_status".into()])?;
//! let options = FuzzOptions { runs: Some(200), ..FuzzOptions::default() };
//! let report = fuzzer.run(&options, &mut |_| {});
//! assert!(report.finding.is_none(), "{:?}", report.finding);
//! assert_eq!(report.runs, 200);
//! # Ok::<(), airlock_harness::CheckError>(())
//! ```

use airlock_guard::{
    parse, sha256_hex, Guard, InputKind, Mapping, Normalise, ParseErrorKind, Pointer, Request,
    Sha256Digest, Stage,
};
use arbitrary::{Arbitrary, Unstructured};
use serde_json::{Map, Value};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::adversary;
use crate::base::error::{CheckError, WriteFileError};
use crate::base::subject::Subject;
use crate::cases::{structural_boundaries, Rng};

pub use answer::{AnswerChain, AnswerEdit, ANSWER_CANARY};
pub(crate) use seeds::SeedBody;

/// The depth the `parse` target parses at: below `serde_json`'s own limit of 128, so a
/// depth rejection is always ours and documented.
pub const PARSE_DEPTH: usize = 64;

/// A fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The strict parser against `serde_json`.
    Parse,
    /// The guard of every contract on arbitrary bytes.
    Admit,
    /// Edit chains on the adversary's variants, each under its own contract.
    Mutate,
    /// Edit chains on reference agent values, judged by check's answer reader.
    Answer,
}

impl Target {
    /// Every target, in order.
    pub const ALL: [Target; 4] = [Target::Parse, Target::Admit, Target::Mutate, Target::Answer];

    /// The target's name (also its cargo-fuzz target name).
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Parse => "parse",
            Target::Admit => "admit",
            Target::Mutate => "mutate",
            Target::Answer => "answer",
        }
    }
}

impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Target::ALL
            .into_iter()
            .find(|t| t.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Target::ALL.iter().map(|t| t.as_str()).collect();
                format!("unknown target {name:?}: one of {}", names.join(", "))
            })
    }
}

impl Target {
    /// The targets a saved input is judged with: the one its file name starts with
    /// (`admit-…`, as [`artifact_path`] names them), else every target.
    pub fn for_file(name: &str) -> Vec<Target> {
        Target::ALL
            .into_iter()
            .find(|t| name.starts_with(&format!("{t}-")))
            .map_or_else(|| Target::ALL.to_vec(), |t| vec![t])
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An invariant that did not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which invariant (`parser_disagrees`, `not_fixed_failure`, `panic`, …).
    pub invariant: &'static str,
    /// What was seen, for the operator (it may quote the input).
    pub detail: String,
}

impl Violation {
    fn new(invariant: &'static str, detail: impl Into<String>) -> Self {
        Self {
            invariant,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.invariant, self.detail)
    }
}

macro_rules! ensure {
    ($cond:expr, $invariant:literal, $($detail:tt)+) => {
        if !$cond {
            return Err(Violation::new($invariant, format!($($detail)+)));
        }
    };
}

// After `ensure!`, which the target modules use.
pub mod adapter;
mod answer;
mod black_box;
mod dictionary;
mod invariants;
mod seeds;
mod spans;

pub use black_box::{BlackBoxOptions, BlackBoxProgress, BlackBoxReport};
pub use dictionary::Dictionary;
pub use invariants::{check_admission, check_parse};

/// One edit of a [`Chain`]. Positions are taken modulo the body's length.
#[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
pub enum Edit {
    /// Replace the byte at a position.
    Set(u16, u8),
    /// Insert a byte.
    Insert(u16, u8),
    /// Remove up to `len` bytes.
    Remove(u16, u8),
    /// Cut the body short.
    Truncate(u16),
    /// Repeat a run of bytes in place.
    Repeat(u16, u8),
    /// Insert a token that matters to JSON or to the contracts.
    Token(u16, u8),
    /// Insert a run of another variant's bytes.
    Splice {
        /// Which variant.
        from: u16,
        /// Where in it.
        at: u16,
        /// How many bytes.
        len: u8,
        /// Where in this body.
        to: u16,
    },
}

/// Tokens an edit can insert: JSON structure, escapes, numbers at the edges, names and
/// values the contracts care about.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\",
    b"\\u0000",
    b"\\ud800",
    b"\\u00e9",
    b"null",
    b"true",
    b"false",
    b"-0",
    b"1e400",
    b"18446744073709551616",
    b"1e-400",
    b"1.0",
    b"\"outcome\":\"success\"",
    b"\"outcome\":\"failure\"",
    b"\"data\":{}",
    b"\"error\":{\"code\":\"NOT_FOUND\",\"retryable\":true}",
    b"\"admin_override\":true",
    b"\"request_id\":\"req.J7q94MkP\"",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc0\x80",
    b"\n",
    b"/*",
    b"\r\n",
    b"\x1b[31m",
    b"=",
];

/// A structure-aware input: a base variant and the edits applied to it.
#[derive(Debug, Clone, PartialEq, Eq, Arbitrary)]
pub struct Chain {
    /// Which seed variant.
    pub base: u16,
    /// The edits, in order.
    pub edits: Vec<Edit>,
}

/// A body to judge: which guard, the request, the bytes.
#[derive(Debug, Clone)]
struct Seed {
    guard: usize,
    request: Request,
    bytes: SeedBody,
    /// For a body built later: its guard's agent value, found the first time the
    /// `answer` target asks (the target reads nothing else of the body).
    reference: std::sync::OnceLock<airlock_guard::AgentValue>,
}

/// The guards under fuzz and the seed bodies of the `mutate` target.
#[derive(Debug)]
pub struct Fuzzer {
    guards: Vec<(Guard, Request)>,
    seeds: Vec<Seed>,
    /// The seeds their guard admits: half the chains start from one of these, so edits
    /// explore the neighbourhood of valid responses, not only of rejected ones.
    admitted: Vec<usize>,
}

/// What a fuzz run does.
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// The targets, taken in turn.
    pub targets: Vec<Target>,
    /// Seed of the input generator: the same seed gives the same inputs.
    pub seed: u64,
    /// Stop after this many inputs.
    pub runs: Option<u64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// The longest input generated.
    pub max_len: usize,
    /// Judge only the inputs of this part (input number `n` belongs to part
    /// `n mod N + 1`): N jobs with the same seed and runs judge together exactly the
    /// inputs of one unsharded run. `runs` counts the inputs of the whole run.
    pub shard: Option<crate::check::Shard>,
}

impl Default for FuzzOptions {
    /// Every target, seed 0, 10 000 runs, inputs up to 4 KiB.
    fn default() -> Self {
        Self {
            targets: Target::ALL.to_vec(),
            seed: 0,
            runs: Some(10_000),
            duration: None,
            max_len: 4096,
            shard: None,
        }
    }
}

/// What judges one input of a target.
pub type Judge<'a> = dyn FnMut(Target, &[u8]) -> Result<(), Violation> + 'a;

/// An input that broke an invariant.
#[derive(Debug, Clone)]
pub struct InvariantFinding {
    /// The target.
    pub target: Target,
    /// The input as the target reads it (raw bytes for `parse` and `admit`; the chain's
    /// raw bytes for `mutate`).
    pub input: Vec<u8>,
    /// The invariant and what was seen.
    pub violation: Violation,
}

/// The end of a run.
#[derive(Debug, Clone)]
pub struct FuzzReport {
    /// Inputs judged.
    pub runs: u64,
    /// Inputs judged per target, in [`Target::ALL`] order.
    pub per_target: [u64; 4],
    /// Wall time.
    pub elapsed: Duration,
    /// The first input that broke an invariant; the run stops there.
    pub finding: Option<InvariantFinding>,
}

impl Fuzzer {
    /// Load the contracts in `dirs` with their corpora.
    ///
    /// # Errors
    ///
    /// When a contract or corpus cannot be loaded.
    pub fn load(dirs: &[PathBuf]) -> Result<Self, CheckError> {
        let subjects = dirs
            .iter()
            .map(|d| Subject::load(d))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::new(&subjects))
    }

    /// Fuzz the guards of `subjects`; the seeds are every fixture and the adversary's
    /// deterministic variants with a body (those sized from a large `max_bytes` built
    /// when used: [`SeedBody`]).
    pub fn new(subjects: &[Subject]) -> Self {
        let mut guards = Vec::new();
        let mut seeds = Vec::new();
        for (i, subject) in subjects.iter().enumerate() {
            guards.push((subject.guard.clone(), subject.corpus.request.clone()));
            let (cases, later) =
                adversary::generate_later(subject.guard.contract(), &subject.corpus, 0, 0);
            for mut case in cases {
                if let Some(bytes) = SeedBody::take(&mut case, &later) {
                    seeds.push(Seed {
                        guard: i,
                        request: case.request,
                        bytes,
                        reference: std::sync::OnceLock::new(),
                    });
                }
            }
        }
        let admitted = seeds
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                // A body built later is never among them: judging each at load would
                // build them all (seconds, gigabytes at a time before), and those sized at
                // the limit and past it are not the neighbourhood of valid responses.
                if s.bytes.is_later() {
                    return false;
                }
                // A guard that panics here (a custom check) is the fuzz run's finding to
                // report, not a reason to fail loading.
                let guard = &guards[s.guard].0;
                catch_unwind(AssertUnwindSafe(|| {
                    guard.admit(&s.request, &s.bytes.bytes()).is_admitted()
                }))
                .unwrap_or(false)
            })
            .map(|(i, _)| i)
            .collect();
        Self {
            guards,
            seeds,
            admitted,
        }
    }

    /// The seed bodies (for writing a cargo-fuzz corpus), each large one built when the
    /// iterator reaches it.
    pub fn seed_bodies(&self) -> impl Iterator<Item = std::borrow::Cow<'_, [u8]>> {
        self.seeds.iter().map(|s| s.bytes.bytes())
    }

    /// The `admit` target: every guard, with its default request, on `bytes`.
    ///
    /// # Errors
    ///
    /// The first [`Violation`].
    pub fn check_admit(&self, bytes: &[u8]) -> Result<(), Violation> {
        self.guards
            .iter()
            .try_for_each(|(guard, request)| check_admission(guard, request, bytes))
    }

    /// Apply `chain` to its base variant: the guard it belongs to, its request, the body.
    fn apply(&self, chain: &Chain) -> Option<(&Guard, &Request, Vec<u8>)> {
        let base = usize::from(chain.base);
        let index = match base % 2 {
            0 if !self.admitted.is_empty() => self.admitted[(base / 2) % self.admitted.len()],
            _ => base % self.seeds.len().max(1),
        };
        let seed = self.seeds.get(index)?;
        let mut bytes = seed.bytes.bytes().into_owned();
        for edit in &chain.edits {
            apply_edit(edit, &mut bytes, &mut |from| {
                Some(
                    self.seeds[usize::from(from) % self.seeds.len()]
                        .bytes
                        .splice_source(),
                )
            });
        }
        let (guard, _) = &self.guards[seed.guard];
        Some((guard, &seed.request, bytes))
    }

    /// The body a `mutate` input stands for: its contract's tool and the edited bytes.
    pub fn mutate_body(&self, input: &[u8]) -> Option<(&str, Vec<u8>)> {
        let chain = Chain::arbitrary_take_rest(Unstructured::new(input)).ok()?;
        let (guard, _, bytes) = self.apply(&chain)?;
        Some((guard.contract().tool(), bytes))
    }

    /// The guard and request a `mutate` input is judged with, and its body.
    pub fn mutate_case(&self, input: &[u8]) -> Option<(&Guard, &Request, Vec<u8>)> {
        let chain = Chain::arbitrary_take_rest(Unstructured::new(input)).ok()?;
        self.apply(&chain)
    }

    /// The `mutate` target: read a [`Chain`] from `input` and judge its body.
    ///
    /// # Errors
    ///
    /// The [`Violation`].
    pub fn check_mutate(&self, input: &[u8]) -> Result<(), Violation> {
        match self.mutate_case(input) {
            Some((guard, request, bytes)) => check_admission(guard, request, &bytes),
            None => Ok(()),
        }
    }

    /// Judge one input with one target; a panic is a violation too.
    ///
    /// # Errors
    ///
    /// The [`Violation`].
    pub fn check(&self, target: Target, input: &[u8]) -> Result<(), Violation> {
        let outcome = catch_unwind(AssertUnwindSafe(|| match target {
            Target::Parse => check_parse(input),
            Target::Admit => self.check_admit(input),
            Target::Mutate => self.check_mutate(input),
            Target::Answer => self.check_answer(input),
        }));
        outcome.unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Violation::new("panic", message))
        })
    }

    /// Generate inputs and judge them until a limit or the first finding. `tick` is
    /// called after every input with the number judged so far.
    pub fn run(&self, options: &FuzzOptions, tick: &mut dyn FnMut(u64)) -> FuzzReport {
        self.run_with(options, tick, &mut |target, input| {
            self.check(target, input)
        })
    }

    /// [`Fuzzer::run`] with another judge (to test the loop itself).
    pub fn run_with(
        &self,
        options: &FuzzOptions,
        tick: &mut dyn FnMut(u64),
        judge: &mut Judge<'_>,
    ) -> FuzzReport {
        let started = Instant::now();
        let mut rng = Rng::new(options.seed, "fuzz");
        let mut report = FuzzReport {
            runs: 0,
            per_target: [0; 4],
            elapsed: Duration::ZERO,
            finding: None,
        };
        let targets = if options.targets.is_empty() {
            Target::ALL.to_vec()
        } else {
            options.targets.clone()
        };
        let mut noise = Vec::new();
        // Inputs generated, this part's or not: `runs` bounds the whole sequence.
        let mut generated: u64 = 0;
        loop {
            let done = options.runs.is_some_and(|runs| generated >= runs)
                || options.duration.is_some_and(|d| started.elapsed() >= d)
                || (options.runs.is_none() && options.duration.is_none());
            if done {
                break;
            }
            let target = targets[(generated % targets.len() as u64) as usize];
            let input = self.input(target, &mut rng, &mut noise, options.max_len);
            let mine = options.shard.is_none_or(|shard| shard.holds_run(generated));
            generated += 1;
            if !mine {
                continue;
            }
            report.runs += 1;
            report.per_target[Target::ALL.iter().position(|t| *t == target).unwrap_or(0)] += 1;
            if let Err(violation) = judge(target, &input) {
                report.finding = Some(InvariantFinding {
                    target,
                    input,
                    violation,
                });
                break;
            }
            tick(report.runs);
        }
        report.elapsed = started.elapsed();
        report
    }

    /// The next input of `target`: a chain's raw bytes for `mutate`; for the byte
    /// targets, mostly a mutated seed, sometimes plain noise.
    fn input(&self, target: Target, rng: &mut Rng, noise: &mut Vec<u8>, max_len: usize) -> Vec<u8> {
        noise.clear();
        let len = 8 + rng.below(64);
        noise.extend((0..len).map(|_| (rng.next_u64() & 0xff) as u8));
        if matches!(target, Target::Mutate | Target::Answer) || self.seeds.is_empty() {
            return noise.clone();
        }
        if rng.below(8) == 0 {
            noise.truncate(max_len);
            return noise.clone();
        }
        let chain = Chain::arbitrary_take_rest(Unstructured::new(noise)).unwrap_or(Chain {
            base: 0,
            edits: Vec::new(),
        });
        let mut bytes = self.apply(&chain).map(|(_, _, b)| b).unwrap_or_default();
        bytes.truncate(max_len);
        bytes
    }
}

/// The files a finding was saved to.
#[derive(Debug, Clone)]
pub struct SavedFinding {
    /// The input, as the target reads it (replay it with `--replay`).
    pub input: PathBuf,
    /// For a `mutate` finding: the tool and the body its chain stands for.
    pub body: Option<(String, PathBuf)>,
}

impl Fuzzer {
    /// Write every seed body into `dir` (created), named by its digest: the starting
    /// corpus of the cargo-fuzz targets. How many were written.
    ///
    /// # Errors
    ///
    /// The file or folder that could not be written, and why.
    pub fn write_corpus(&self, dir: &Path) -> Result<usize, WriteFileError> {
        std::fs::create_dir_all(dir).map_err(WriteFileError::at(dir))?;
        let mut written = 0;
        for body in self.seed_bodies() {
            let path = dir.join(&sha256_hex(&body)[..16]);
            std::fs::write(&path, &body).map_err(WriteFileError::at(&path))?;
            written += 1;
        }
        Ok(written)
    }

    /// Save `finding` under `dir` (created): its input at [`artifact_path`], and for a
    /// `mutate` finding the body its chain stands for at [`body_path`].
    ///
    /// # Errors
    ///
    /// The file or folder that could not be written, and why.
    pub fn save_finding(
        &self,
        dir: &Path,
        finding: &InvariantFinding,
    ) -> Result<SavedFinding, WriteFileError> {
        std::fs::create_dir_all(dir).map_err(WriteFileError::at(dir))?;
        let input = artifact_path(dir, finding);
        std::fs::write(&input, &finding.input).map_err(WriteFileError::at(&input))?;
        let mut body = None;
        if finding.target == Target::Mutate {
            if let Some((tool, bytes)) = self.mutate_body(&finding.input) {
                // The chain's bytes replay the finding; the body is what to read. Named
                // without a target prefix: replaying it never reads it as a chain.
                let path = body_path(dir, tool, &bytes);
                std::fs::write(&path, bytes).map_err(WriteFileError::at(&path))?;
                body = Some((tool.to_owned(), path));
            }
        }
        Ok(SavedFinding { input, body })
    }
}

/// Where `airlock fuzz` writes the body a `mutate` finding's chain stands for:
/// `DIR/body-<sha256 prefix>.<tool>.json`, the tool made one safe file-name component.
pub fn body_path(dir: &Path, tool: &str, body: &[u8]) -> PathBuf {
    let digest = sha256_hex(body);
    let tool = crate::cases::file_component(tool);
    dir.join(format!("body-{}.{tool}.json", &digest[..16]))
}

/// Where `airlock fuzz` writes a finding's input: `DIR/<target>-<sha256 prefix>`.
pub fn artifact_path(dir: &Path, finding: &InvariantFinding) -> PathBuf {
    let digest = sha256_hex(&finding.input);
    dir.join(format!("{}-{}", finding.target, &digest[..16]))
}

/// Apply one byte edit to `bytes`; `other(from)` is the body a [`Edit::Splice`] takes a
/// run of bytes from.
pub(crate) fn apply_edit<'a>(
    edit: &Edit,
    bytes: &mut Vec<u8>,
    other: &mut dyn FnMut(u16) -> Option<&'a [u8]>,
) {
    let at = |pos: u16, len: usize| usize::from(pos) % (len + 1);
    match *edit {
        Edit::Set(pos, byte) if !bytes.is_empty() => {
            let i = usize::from(pos) % bytes.len();
            bytes[i] = byte;
        }
        Edit::Set(..) => {}
        Edit::Insert(pos, byte) => bytes.insert(at(pos, bytes.len()), byte),
        Edit::Remove(pos, len) => {
            let start = at(pos, bytes.len());
            let end = (start + usize::from(len).max(1)).min(bytes.len());
            bytes.drain(start..end);
        }
        Edit::Truncate(pos) => bytes.truncate(at(pos, bytes.len())),
        Edit::Repeat(pos, len) => {
            let start = at(pos, bytes.len());
            let end = (start + usize::from(len)).min(bytes.len());
            let run = bytes[start..end].to_vec();
            bytes.splice(end..end, run);
        }
        Edit::Token(pos, which) => {
            // At a structural boundary (after `{`, `,`, `:` …): the result is
            // more often still JSON, so later stages are reached.
            let token = TOKENS[usize::from(which) % TOKENS.len()];
            let boundaries = structural_boundaries(bytes);
            let i = match boundaries.len() {
                0 => at(pos, bytes.len()),
                n => boundaries[usize::from(pos) % n],
            };
            bytes.splice(i..i, token.iter().copied());
        }
        Edit::Splice {
            from,
            at: src,
            len,
            to,
        } => {
            let Some(other) = other(from) else {
                return;
            };
            let start = at(src, other.len());
            let end = (start + usize::from(len)).min(other.len());
            let i = at(to, bytes.len());
            bytes.splice(i..i, other[start..end].iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::invariants::mapped_only;
    use super::seeds::SPLICE_REACH;
    use super::*;
    use crate::cases::Upstream;

    #[test]
    fn agent_data_not_from_the_mapping_is_a_violation() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let load = |tool: &str| airlock_guard::Contract::load(root.join("schemas").join(tool));
        let vendor = load("ci_pipeline_status").unwrap();
        let body =
            std::fs::read(root.join("corpora/ci_pipeline_status/accepted/running_compact.json"))
                .unwrap();
        let check = |input: &InputKind, body: &[u8], data: &[(&str, Value)]| {
            mapped_only(input, body, data.iter().map(|(k, v)| (*k, v))).map_err(|v| v.invariant)
        };
        let ok = [
            ("pipeline_id", Value::from(46)),
            ("state", Value::from("running")),
            ("observed_at", Value::from("2026-12-03T07:32:35.169Z")),
        ];
        assert_eq!(check(vendor.input(), &body, &ok), Ok(()));
        for (data, invariant) in [
            (
                ("pipeline_id", Value::from(47)),
                "agent_value_not_from_the_mapping",
            ),
            (
                ("state", Value::from("succeeded")),
                "agent_value_not_from_the_mapping",
            ),
            (("web_url", Value::from("x")), "agent_member_not_mapped"),
        ] {
            assert_eq!(check(vendor.input(), &body, &[data]), Err(invariant));
        }
        let lines = load("git_branch_head").unwrap();
        let body = b"ref=refs/heads/main\nobjectname=ab\ncommitterdate=2026-12-03T08:00:00+01:00\n";
        let time = ("committed_at", Value::from("2026-12-03T07:00:00Z"));
        assert_eq!(check(lines.input(), body, &[time]), Ok(()));
        let later = ("committed_at", Value::from("2026-12-03T08:00:00Z"));
        assert_eq!(
            check(lines.input(), body, &[later]),
            Err("agent_value_not_from_the_mapping")
        );
        for (written, utc) in [
            ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
            ("0001-01-01T00:30:00+00:30", "0001-01-01T00:00:00Z"),
        ] {
            let body = format!("ref=refs/heads/main\nobjectname=ab\ncommitterdate={written}\n");
            let time = ("committed_at", Value::from(utc));
            assert_eq!(
                check(lines.input(), body.as_bytes(), &[time]),
                Ok(()),
                "{written}"
            );
        }
        let other = ("commit", Value::from("ab "));
        assert_eq!(
            check(lines.input(), body, &[other]),
            Err("agent_value_not_from_the_mapping")
        );
    }

    /// Both fuzzers keep a seed sized from a large `max_bytes` as how to build it, not as
    /// its bytes (contracts at 1 MiB: a tenth of the bytes held at most; at 8 MiB, the
    /// nine contracts of the memory MCP server held 3.9 GB before), and build exactly the
    /// bodies of the adversary's cases, in order.
    #[test]
    fn seeds_sized_from_a_large_limit_are_built_when_used() {
        let tmp = tempfile::tempdir().unwrap();
        let subjects: Vec<Subject> = ["review_status", "change_review"]
            .iter()
            .map(|tool| {
                let (dir, corpus) = crate::adversary::tests::at_limit(tmp.path(), tool, 1 << 20);
                Subject::load_with_corpus(&dir, Some(&corpus)).unwrap()
            })
            .collect();
        let eager: Vec<Vec<u8>> = subjects
            .iter()
            .flat_map(|s| adversary::generate(s.guard.contract(), &s.corpus, 0, 0))
            .filter_map(|case| match case.upstream {
                Upstream::Body(bytes) => Some(bytes),
                Upstream::Transport(_) => None,
            })
            .collect();
        let all: usize = eager.iter().map(Vec::len).sum();
        assert!(all > 20 << 20, "{all} bytes in all");

        let fuzzer = Fuzzer::new(&subjects);
        let held: usize = fuzzer.seeds.iter().map(|s| s.bytes.held_len()).sum();
        assert!(held < all / 10, "Fuzzer: {held} of {all} bytes held");
        let built: Vec<Vec<u8>> = fuzzer.seed_bodies().map(|b| b.into_owned()).collect();
        assert_eq!(built.len(), eager.len());
        assert!(built == eager, "Fuzzer: a seed built differs");
        // A splice from a seed built later reads the start kept of it: the bytes the whole
        // body gives, at the farthest offset and length too.
        let later: Vec<_> = fuzzer
            .seeds
            .iter()
            .zip(&eager)
            .filter(|(s, _)| s.bytes.is_later())
            .collect();
        assert!(!later.is_empty());
        for (seed, whole) in later {
            assert!(whole.len() > SPLICE_REACH);
            for (at, len) in [(0, 255), (u16::MAX, u8::MAX), (40_000, 7), (u16::MAX, 0)] {
                let edit = Edit::Splice {
                    from: 0,
                    at,
                    len,
                    to: 1,
                };
                let (mut a, mut b) = (b"{}".to_vec(), b"{}".to_vec());
                apply_edit(&edit, &mut a, &mut |_| Some(whole.as_slice()));
                apply_edit(&edit, &mut b, &mut |_| Some(seed.bytes.splice_source()));
                assert_eq!(a, b, "at {at}, len {len}");
            }
            assert_eq!(seed.bytes.held_len(), SPLICE_REACH);
        }

        // The answer target judges a seed built later once and keeps its agent value.
        let index = fuzzer
            .seeds
            .iter()
            .position(|s| s.bytes.is_later())
            .unwrap();
        let input = u16::try_from(index).unwrap().to_le_bytes();
        let chain = AnswerChain::arbitrary_take_rest(Unstructured::new(&input)).unwrap();
        assert_eq!(usize::from(chain.base), index);
        fuzzer.check_answer(&input).unwrap();
        let seed = &fuzzer.seeds[index];
        let judged = fuzzer.guards[seed.guard]
            .0
            .admit(&seed.request, &seed.bytes.bytes());
        assert_eq!(seed.reference.get(), Some(judged.agent()));

        let adapter = adapter::AdapterFuzzer::new(subjects);
        let held = adapter.held_bytes();
        assert!(held < all / 10, "AdapterFuzzer: {held} of {all} bytes held");
        // Seed input `2 i + 1` (no edits) is seed `i`'s case.
        let inputs = adapter.seed_inputs();
        assert_eq!(inputs.len(), eager.len());
        for (input, body) in inputs.iter().zip(&eager) {
            let (_, case) = adapter.case(input).unwrap();
            let Upstream::Body(bytes) = &case.upstream else {
                panic!("{}: no body", case.id);
            };
            assert!(bytes == body, "AdapterFuzzer: seed {input:?} differs");
        }
    }

    #[test]
    fn the_body_artifact_of_a_hostile_tool_name_stays_inside_the_artifacts_folder() {
        let dir = Path::new("/tmp/artifacts");
        for tool in ["../../outside", "..", "/etc/x", "a/../../b"] {
            assert_eq!(body_path(dir, tool, b"{}").parent(), Some(dir), "{tool:?}");
        }
    }
}
