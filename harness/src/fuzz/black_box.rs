//! The black-box driver of adapter fuzzing (`airlock fuzz --adapter-cmd`): no coverage
//! from the adapter, so the guard's decision on each input and the shape of the answer
//! are the feedback. An input that reaches a new [`Signal`] joins the corpus (and its
//! folder, so a later run resumes from it); a finding is shrunk and written as a
//! reproducer `airlock check --replay` runs.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::adapter::{AdapterFinding, AdapterFuzzer, Prepared, Signal};
use crate::adapter::Adapter;
use crate::base::error::CheckError;
use crate::cases::{fnv1a, Rng, Upstream};
use crate::check::report::FindingKind;
use crate::check::shrink_case;

/// A black-box run.
#[derive(Debug, Clone)]
pub struct BlackBoxOptions {
    /// Seed of the mutations.
    pub seed: u64,
    /// Stop after this many inputs.
    pub runs: Option<u64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// The corpus folder: read at the start, and every input with a new signal is
    /// written into it.
    pub corpus: Option<PathBuf>,
    /// The longest input, in bytes.
    pub max_len: usize,
    /// Inputs handed to the adapter at once (an exec adapter keeps them in flight).
    pub batch: usize,
}

impl Default for BlackBoxOptions {
    /// Seed 0, 10 000 inputs, no corpus folder, inputs up to 64 bytes, batches of 256 (as
    /// `check` hands cases to an adapter).
    fn default() -> Self {
        Self {
            seed: 0,
            runs: Some(10_000),
            duration: None,
            corpus: None,
            max_len: 64,
            batch: 256,
        }
    }
}

/// Where a black-box run stands.
#[derive(Debug, Clone, Copy)]
pub struct BlackBoxProgress {
    /// Inputs judged.
    pub runs: u64,
    /// Inputs in the corpus.
    pub corpus: usize,
    /// Distinct signals seen.
    pub signals: usize,
    /// Time since the start.
    pub elapsed: Duration,
}

/// The end of a black-box run.
#[derive(Debug)]
pub struct BlackBoxReport {
    /// Where it stopped.
    pub progress: BlackBoxProgress,
    /// Inputs the corpus folder held at the start.
    pub resumed: usize,
    /// The first finding (its body shrunk), with the input that made it.
    pub finding: Option<(Vec<u8>, AdapterFinding)>,
    /// After a run without a finding: what the adapter did after its last input (output
    /// nobody asked for, a crash on close), as `check` reports it.
    pub closing: Vec<(FindingKind, String)>,
}

/// The corpus of a black-box run: its inputs (the first `first_pass` as read at the
/// start), and the signals seen.
struct Pool {
    corpus: Vec<Vec<u8>>,
    first_pass: usize,
    signals: HashSet<Signal>,
}

impl Pool {
    /// The next `size` inputs after `runs`: the first pass judges the corpus as it is;
    /// then mutations of it.
    fn inputs(&self, runs: u64, size: usize, rng: &mut Rng, max_len: usize) -> Vec<Vec<u8>> {
        (0..size)
            .map(|i| {
                let n = usize::try_from(runs)
                    .unwrap_or(usize::MAX)
                    .saturating_add(i);
                match self.corpus.get(n).filter(|_| n < self.first_pass) {
                    Some(input) => input.clone(),
                    None => mutate(&self.corpus, rng, max_len),
                }
            })
            .collect()
    }
}

impl AdapterFuzzer {
    /// Fuzz `adapter` as a black box until `options` says stop or a finding.
    /// `progress` is called after every batch.
    ///
    /// # Errors
    ///
    /// When the corpus folder cannot be read or written (the error names it).
    #[doc(hidden)]
    pub fn black_box(
        &self,
        adapter: &mut dyn Adapter,
        options: &BlackBoxOptions,
        progress: &mut dyn FnMut(&BlackBoxProgress),
    ) -> Result<BlackBoxReport, CheckError> {
        let start = Instant::now();
        if !self.has_seeds() {
            return Err(CheckError::NoContracts {
                dir: options.corpus.clone().unwrap_or_default(),
                reason: "no fixture or variant with a body to fuzz from".into(),
            });
        }
        let mut corpus = self.seed_inputs();
        let resumed = match &options.corpus {
            Some(dir) => {
                let saved = read_corpus(dir, options.max_len)?;
                let n = saved.len();
                corpus.extend(saved);
                n
            }
            None => 0,
        };
        let mut pool = Pool {
            first_pass: corpus.len(),
            corpus,
            signals: HashSet::new(),
        };
        let mut rng = Rng::new(options.seed, "black-box");
        let mut runs = 0u64;
        let done = |runs: u64| {
            options.runs.is_some_and(|r| runs >= r)
                || options.duration.is_some_and(|d| start.elapsed() >= d)
        };
        let mut finding = None;
        while !done(runs) && finding.is_none() {
            let left = options.runs.map_or(u64::MAX, |r| r - runs);
            let size = usize::try_from(left)
                .unwrap_or(usize::MAX)
                .min(options.batch.max(1));
            let inputs = pool.inputs(runs, size, &mut rng, options.max_len);
            // The first `first_pass` inputs are the corpus as read: they are not written
            // again; only a mutation that reaches a new decision or shape joins it.
            let batch_start = runs;
            runs += size as u64;
            if let Some((input, found)) =
                self.judge_batch(adapter, &inputs, batch_start, &mut pool, options)?
            {
                let found = self.alone(adapter, &inputs[input], found);
                let found = self.shrunk(adapter, found);
                finding = Some((inputs[input].clone(), found));
            }
            progress(&BlackBoxProgress {
                runs,
                corpus: pool.corpus.len(),
                signals: pool.signals.len(),
                elapsed: start.elapsed(),
            });
        }
        let closing = if finding.is_none() {
            adapter
                .finish()
                .iter()
                .map(crate::check::failure_kind)
                .collect()
        } else {
            Vec::new()
        };
        Ok(BlackBoxReport {
            closing,
            progress: BlackBoxProgress {
                runs,
                corpus: pool.corpus.len(),
                signals: pool.signals.len(),
                elapsed: start.elapsed(),
            },
            resumed,
            finding,
        })
    }

    /// One batch through the adapter, each answer judged as it arrives (while the
    /// adapter works on the cases still in flight): a mutation reaching a new signal
    /// joins the corpus (and its folder); the first finding ends the batch, with the
    /// index of its input.
    fn judge_batch(
        &self,
        adapter: &mut dyn Adapter,
        inputs: &[Vec<u8>],
        batch_start: u64,
        pool: &mut Pool,
        options: &BlackBoxOptions,
    ) -> Result<Option<(usize, AdapterFinding)>, CheckError> {
        let prepared: Vec<(usize, Prepared)> = inputs
            .iter()
            .enumerate()
            .filter_map(|(i, data)| Some((i, self.prepare(data)?)))
            .collect();
        let cases: Vec<_> = prepared
            .iter()
            .map(|(_, p)| (&p.case.request, &p.case.upstream))
            .collect();
        let mut failed = None;
        let mut saving = Ok(());
        adapter.answers(&cases, &mut |index, actual| {
            let Some((input, case)) = prepared.get(index) else {
                return ControlFlow::Continue(());
            };
            let input = *input;
            match self.assess(case, &actual) {
                Ok(signal) => {
                    let mutated =
                        batch_start.saturating_add(input as u64) >= pool.first_pass as u64;
                    if pool.signals.insert(signal) && signal != Signal(0) && mutated {
                        let data = &inputs[input];
                        if let Some(dir) = &options.corpus {
                            saving = save(dir, data);
                            if saving.is_err() {
                                return ControlFlow::Break(());
                            }
                        }
                        pool.corpus.push(data.clone());
                    }
                    ControlFlow::Continue(())
                }
                Err(found) => {
                    failed = Some((input, found));
                    ControlFlow::Break(())
                }
            }
        });
        saving?;
        Ok(failed)
    }

    /// A crash, timeout or protocol finding, asked again with its case alone: an adapter
    /// across a pipe may have died on an earlier case still in flight. The finding the
    /// case gives alone, or `found` with a note when it gives none.
    fn alone(
        &self,
        adapter: &mut dyn Adapter,
        data: &[u8],
        mut found: AdapterFinding,
    ) -> AdapterFinding {
        let process = found.findings.iter().all(|(kind, _)| {
            !matches!(
                kind,
                FindingKind::Verdict | FindingKind::Value | FindingKind::Leak | FindingKind::Shape
            )
        });
        if !process {
            return found;
        }
        match self.judge(adapter, data) {
            Err(again) => again,
            Ok(_) => {
                for (_, message) in &mut found.findings {
                    message.push_str(
                        " (the case alone was answered: the failure may belong to a case before it)",
                    );
                }
                found
            }
        }
    }

    /// `found` with its body shrunk as `check` shrinks: the same verdict of the guard,
    /// the same kind of finding.
    fn shrunk(&self, adapter: &mut dyn Adapter, mut found: AdapterFinding) -> AdapterFinding {
        let Some(subject) = self.subject_of(&found.reproducer.contract) else {
            return found;
        };
        let case = &found.reproducer.case;
        let Upstream::Body(bytes) = &case.upstream else {
            return found;
        };
        let reference = subject.guard.admit(&case.request, bytes).into_parts().0;
        if let Some(kind) = found.findings.first().map(|f| f.0) {
            if let Some(small) = shrink_case(&subject.guard, case, &reference, kind, adapter) {
                found.reproducer.case = small;
            }
        }
        found
    }
}

/// A mutation of a corpus input: a byte changed, bytes appended (new edits), a cut, or
/// the head of one input with the tail of another.
fn mutate(corpus: &[Vec<u8>], rng: &mut Rng, max_len: usize) -> Vec<u8> {
    let mut data = corpus[rng.below(corpus.len())].clone();
    for _ in 0..=rng.below(4) {
        match rng.below(5) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.next_u64() as u8;
            }
            1 => {
                let n = 1 + rng.below(8);
                data.extend((0..n).map(|_| rng.next_u64() as u8));
            }
            2 if data.len() > 2 => data.truncate(2 + rng.below(data.len() - 2)),
            3 => {
                let other = &corpus[rng.below(corpus.len())];
                if other.len() > 2 {
                    let from = 2 + rng.below(other.len() - 2);
                    data.extend_from_slice(&other[from..]);
                }
            }
            _ if data.len() >= 2 => {
                let base = rng.next_u64().to_le_bytes();
                data[..2].copy_from_slice(&base[..2]);
            }
            _ => data.push(rng.next_u64() as u8),
        }
    }
    data.truncate(max_len.max(2));
    data
}

/// The inputs saved in a corpus folder (created when missing): its files, hidden ones
/// and any longer than `max_len` aside (an input never grows past it).
fn read_corpus(dir: &Path, max_len: usize) -> Result<Vec<Vec<u8>>, CheckError> {
    let failed = |e: std::io::Error| CheckError::Reproducer {
        path: dir.to_path_buf(),
        reason: format!("cannot read the corpus folder: {e}"),
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(failed)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let hidden = p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            let small =
                std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= max_len as u64);
            !hidden && small
        })
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).map_err(failed))
        .collect()
}

/// Save an input into the corpus folder, named by its content.
fn save(dir: &Path, data: &[u8]) -> Result<(), CheckError> {
    let path = dir.join(format!("{:016x}", fnv1a(data)));
    std::fs::write(&path, data).map_err(|e| CheckError::Reproducer {
        path,
        reason: format!("cannot write into the corpus folder: {e}"),
    })
}
