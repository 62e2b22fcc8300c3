//! One `airlock check` invocation as a library call: the files it claims before the run
//! (no two outputs one file), the subjects or the reproducer it runs, the adapter it
//! runs them through, and what a baseline makes of the conclusion. The binary only prints
//! (and picks the exit code).

use airlock_guard::jiff::civil::Date;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::report::{printable, Conclusion, Report};
use super::{
    discover, replay_beside, run, Applied, Baseline, BaselineEntry, CheckError, CheckOptions,
    Progress, Reproducer, ShrunkFiles, Subject,
};
use crate::adapter::{Adapter, GuardAdapter};
use crate::exec::{self, ExecAdapter};

/// What one `airlock check` invocation was asked to do, as plain options.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Contract folders; empty: every contract under `./schemas`.
    pub contracts: Vec<PathBuf>,
    /// The corpus folder of the (one) contract; `None`: found beside the contract.
    pub corpus: Option<PathBuf>,
    /// The adapter under test as a shell command; `None`: the guard, in process.
    pub adapter_cmd: Option<String>,
    /// Per-case timeout of an external adapter.
    pub timeout: Duration,
    /// The run's options (its `reproducers` folder is created before the run).
    pub run: CheckOptions,
    /// Re-run exactly the case of this reproducer instead of the contracts' cases.
    pub replay: Option<PathBuf>,
    /// The report file (`--output`).
    pub output: Option<PathBuf>,
    /// Further report files (`--report`).
    pub reports: Vec<PathBuf>,
    /// Accepted findings (`--baseline`).
    pub baseline: Option<PathBuf>,
    /// Where this run's findings are written as a baseline (`--write-baseline`).
    pub write_baseline: Option<PathBuf>,
}

/// Why an `airlock check` invocation cannot run, or its run failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionError {
    /// The baseline file does not load.
    Baseline(super::BaselineError),
    /// `--write-baseline` with `--shard`.
    ShardedBaseline,
    /// An output file cannot be opened for writing.
    Unwritable {
        /// The flag that named it.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Two outputs name the same file.
    SameFile {
        /// The flag that named it first.
        first: &'static str,
        /// The flag that named it again.
        second: &'static str,
        /// The file, as the second flag names it.
        path: PathBuf,
    },
    /// The reproducer cannot be read, or is larger than any reproducer `check` writes
    /// ([`MAX_CASE_FILE_BYTES`](crate::corpus::MAX_CASE_FILE_BYTES)).
    ReadReproducer(crate::corpus::BoundedReadError),
    /// The file is not a reproducer.
    NotAReproducer {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// `--corpus` with other than one contract.
    CorpusOfOne,
    /// The reproducer folder cannot be created.
    ReproducerFolder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A contract, its corpus or the contracts folder does not load.
    Check(CheckError),
    /// The run's only error: a reproducer that could not be written.
    Run(CheckError),
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Baseline(e) => e.fmt(f),
            SessionError::ShardedBaseline => f.write_str(
                "--write-baseline with --shard would hold only this shard's findings: write the baseline from an unsharded run",
            ),
            SessionError::Unwritable { flag, path, .. } => {
                write!(f, "cannot write {flag} {}", path.display())
            }
            SessionError::SameFile {
                first,
                second,
                path,
            } => write!(
                f,
                "{first} and {second} both name {} (the same file): give each report its own file",
                path.display()
            ),
            SessionError::ReadReproducer(e) => write!(f, "reading reproducer {e}"),
            SessionError::NotAReproducer { path, .. } => {
                write!(f, "{} is not a reproducer", path.display())
            }
            SessionError::CorpusOfOne => f.write_str(
                "--corpus names the corpus of one contract: give exactly one --contract",
            ),
            SessionError::ReproducerFolder { path, .. } => write!(
                f,
                "cannot create the reproducer folder {} (--reproducers)",
                path.display()
            ),
            SessionError::Check(e) | SessionError::Run(e) => e.fmt(f),
        }
    }
}

/// The cause is kept as a `source` where the message names only the file (as the CLI's
/// context did): an error chain prints each piece once.
impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Unwritable { source, .. }
            | SessionError::ReproducerFolder { source, .. } => Some(source),
            SessionError::NotAReproducer { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<CheckError> for SessionError {
    fn from(e: CheckError) -> Self {
        SessionError::Check(e)
    }
}

/// An invocation whose outputs are claimed and whose baseline is loaded, ready to run.
#[derive(Debug)]
pub struct Session {
    options: SessionOptions,
    baseline: Option<Baseline>,
}

impl Session {
    /// Load the baseline and claim every output file before the run (each is opened for
    /// appending; files this creates are pushed to `created`, even when a later one
    /// fails, so that a failed run can remove the empty ones: [`discard_empty`]).
    ///
    /// # Errors
    ///
    /// A baseline that does not load, `--write-baseline` with `--shard`, an output that
    /// cannot be written, two outputs naming one file.
    pub fn prepare(
        options: SessionOptions,
        created: &mut Vec<PathBuf>,
    ) -> Result<Self, SessionError> {
        let baseline = match &options.baseline {
            Some(path) => Some(Baseline::load(path).map_err(SessionError::Baseline)?),
            None => None,
        };
        if options.write_baseline.is_some() && options.run.shard.is_some() {
            return Err(SessionError::ShardedBaseline);
        }
        claim_outputs(&options, created)?;
        Ok(Session { options, baseline })
    }

    /// Load what the run runs and start its adapter: the reproducer, or the contracts
    /// (their reproducer folder created). `warn` hears each warning as it arises
    /// (contracts without fixtures, orphans that cannot be adopted).
    ///
    /// # Errors
    ///
    /// A reproducer, contract or corpus that does not load, `--corpus` with other than
    /// one contract, a reproducer folder that cannot be created.
    pub fn plan(&self, warn: &mut dyn FnMut(&str)) -> Result<Plan<'_>, SessionError> {
        match &self.options.replay {
            Some(path) => self.plan_replay(path, warn),
            None => self.plan_contracts(warn),
        }
    }

    /// The contracts to run (named, else every one under `./schemas`) with their corpora,
    /// a warning for each without fixtures.
    fn subjects(&self, warn: &mut dyn FnMut(&str)) -> Result<Vec<Subject>, SessionError> {
        let dirs = if self.options.contracts.is_empty() {
            discover(&PathBuf::from("schemas"))?
        } else {
            self.options.contracts.clone()
        };
        if self.options.corpus.is_some() && dirs.len() != 1 {
            return Err(SessionError::CorpusOfOne);
        }
        let subjects = dirs
            .iter()
            .map(|d| Subject::load_with_corpus(d, self.options.corpus.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        for subject in subjects.iter().filter(|s| s.corpus.fixtures.is_empty()) {
            warn(&format!(
                "{} has no fixtures (accepted/, near_miss/, historical/<version>/): only generated cases are run",
                subject.corpus.dir.display()
            ));
        }
        Ok(subjects)
    }

    /// `--replay`: the reproducer, and the adapter (the guard of the reproducer's
    /// contract when no command is given).
    fn plan_replay(
        &self,
        path: &Path,
        warn: &mut dyn FnMut(&str),
    ) -> Result<Plan<'_>, SessionError> {
        let text = crate::corpus::read_bounded(
            path,
            crate::corpus::MAX_CASE_FILE_BYTES,
            "a reproducer holds one case (`airlock check` writes them)",
        )
        .map_err(SessionError::ReadReproducer)?;
        let reproducer: Reproducer =
            serde_json::from_slice(&text).map_err(|source| SessionError::NotAReproducer {
                path: path.to_path_buf(),
                source,
            })?;
        let adapter: Box<dyn Adapter> = match &self.options.adapter_cmd {
            Some(cmd) => Box::new(exec_adapter(cmd, self.options.timeout, None, warn)),
            None => Box::new(GuardAdapter::new([
                Subject::load(&reproducer.contract)?.guard
            ])),
        };
        Ok(Plan {
            work: Work::Replay(Box::new(reproducer), path.to_path_buf()),
            adapter,
            options: &self.options.run,
        })
    }

    /// The contracts, their reproducer folder created, and the adapter (the contracts'
    /// own guards when no command is given).
    fn plan_contracts(&self, warn: &mut dyn FnMut(&str)) -> Result<Plan<'_>, SessionError> {
        let subjects = self.subjects(warn)?;
        if let Some(dir) = &self.options.run.reproducers {
            std::fs::create_dir_all(dir).map_err(|source| SessionError::ReproducerFolder {
                path: dir.clone(),
                source,
            })?;
        }
        let adapter: Box<dyn Adapter> = match &self.options.adapter_cmd {
            Some(cmd) => Box::new(exec_adapter(
                cmd,
                self.options.timeout,
                self.options.run.max_duration,
                warn,
            )),
            None => Box::new(GuardAdapter::new(subjects.iter().map(|s| s.guard.clone()))),
        };
        Ok(Plan {
            work: Work::Contracts(subjects),
            adapter,
            options: &self.options.run,
        })
    }

    /// The baseline to write of `report` (`--write-baseline`), with its file, dated
    /// `today` and keeping the reasons of the loaded baseline.
    pub fn baseline_to_write(&self, report: &Report, today: Date) -> Option<(&Path, String)> {
        let path = self.options.write_baseline.as_deref()?;
        Some((
            path,
            Baseline::of(report, today, self.baseline.as_ref()).to_toml(),
        ))
    }

    /// Apply the loaded baseline to `report` (findings it matches are marked baselined).
    pub fn apply_baseline(&self, report: &mut Report, today: Date) -> Option<Applied> {
        self.baseline.as_ref().map(|b| b.apply(report, today))
    }
}

/// What a [`Session`] runs, loaded, with its adapter started.
pub struct Plan<'a> {
    work: Work,
    adapter: Box<dyn Adapter>,
    options: &'a CheckOptions,
}

/// The reproducer's one case (and its file), or every case of the contracts.
enum Work {
    Replay(Box<Reproducer>, PathBuf),
    Contracts(Vec<Subject>),
}

impl fmt::Debug for Plan<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan")
            .field("contracts", &self.contracts())
            .finish_non_exhaustive()
    }
}

impl Plan<'_> {
    /// The contracts the run goes through; `None` for a replay (one case, no progress).
    pub fn contracts(&self) -> Option<usize> {
        match &self.work {
            Work::Replay(..) => None,
            Work::Contracts(subjects) => Some(subjects.len()),
        }
    }

    /// Run the cases through the adapter; `progress` follows a run of the contracts. A
    /// replay whose finding was shrunk writes the shrunk case beside the reproducer
    /// ([`Ran::shrunk`]).
    ///
    /// # Errors
    ///
    /// A replayed reproducer's contract that does not load; [`SessionError::Run`]: a
    /// reproducer of the run (or a replay's shrunk case) that could not be written.
    pub fn run(mut self, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Ran, SessionError> {
        match &self.work {
            Work::Replay(reproducer, path) => {
                let (report, shrunk) = replay_beside(reproducer, path, self.adapter.as_mut())
                    .map_err(|e| match e {
                        // The shrunk case could not be written (exit 3, as a reproducer).
                        CheckError::Reproducer { .. } => SessionError::Run(e),
                        e => SessionError::Check(e),
                    })?;
                Ok(Ran { report, shrunk })
            }
            Work::Contracts(subjects) => {
                run(subjects, self.options, self.adapter.as_mut(), progress)
                    .map(|report| Ran {
                        report,
                        shrunk: None,
                    })
                    .map_err(SessionError::Run)
            }
        }
    }
}

/// What a `Plan` ran.
#[derive(Debug)]
#[non_exhaustive]
pub struct Ran {
    /// The report.
    pub report: Report,
    /// The files a replay wrote beside its reproducer when its finding was shrunk.
    pub shrunk: Option<ShrunkFiles>,
}

/// Today's date in UTC, the date baselines expire by.
pub fn today() -> Date {
    airlock_guard::jiff::tz::Offset::UTC
        .to_datetime(airlock_guard::jiff::Timestamp::now())
        .date()
}

/// Open every output for appending, in flag order (`--output`, `--report`,
/// `--write-baseline`), refusing two that are one file (the second would overwrite the
/// first).
fn claim_outputs(options: &SessionOptions, created: &mut Vec<PathBuf>) -> Result<(), SessionError> {
    let outputs: Vec<(&'static str, &PathBuf)> = options
        .output
        .iter()
        .map(|p| ("--output", p))
        .chain(options.reports.iter().map(|p| ("--report", p)))
        .chain(
            options
                .write_baseline
                .iter()
                .map(|p| ("--write-baseline", p)),
        )
        .collect();
    let mut seen: Vec<(&'static str, PathBuf, Option<FileId>)> = Vec::new();
    for (flag, path) in outputs {
        let existed = std::fs::symlink_metadata(path).is_ok();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| SessionError::Unwritable {
                flag,
                path: path.clone(),
                source,
            })?;
        if !existed {
            created.push(path.to_path_buf());
        }
        let same = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let identity = file_identity(path);
        if let Some((other, _, _)) = seen
            .iter()
            .find(|(_, p, id)| *p == same || (identity.is_some() && *id == identity))
        {
            return Err(SessionError::SameFile {
                first: other,
                second: flag,
                path: path.clone(),
            });
        }
        seen.push((flag, same, identity));
    }
    Ok(())
}

/// Remove the files of `created` that are still empty: a run that failed after its
/// outputs were claimed leaves no empty report behind (files that were there before are
/// never in `created`).
pub fn discard_empty(created: &[PathBuf]) {
    for path in created {
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A file's device and inode.
type FileId = (u64, u64);

/// The same file, whatever the path (a hard link, `..`, a symbolic link): device and
/// inode on Unix, the canonical path elsewhere.
fn file_identity(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// An exec adapter whose waits end with the run's bound; on Linux this process adopts
/// the adapters' orphans so that a descendant that left the group is killed too.
fn exec_adapter(
    command: &str,
    timeout: Duration,
    bound: Option<Duration>,
    warn: &mut dyn FnMut(&str),
) -> ExecAdapter {
    if let Err(e) = exec::adopt_orphans() {
        warn(&format!(
            "cannot adopt the adapter's orphaned processes: {e}"
        ));
    }
    let adapter = ExecAdapter::new(command, timeout);
    match bound {
        Some(bound) => adapter.deadline(Instant::now() + bound),
        None => adapter,
    }
}

/// What a baseline makes of a run: the conclusion and the notes for the operator, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineOutcome {
    /// The conclusion: an expired entry fails a run that would have been clean.
    pub conclusion: Conclusion,
    /// Matched findings, stale entries (one count in a shard) and expired entries.
    pub notes: Vec<String>,
}

/// Judge an applied baseline: `conclusion` is the run's conclusion without it, `sharded` whether this
/// run is one shard (whose stale entries may match in another shard).
pub fn baseline_outcome(
    applied: &Applied,
    conclusion: Conclusion,
    sharded: bool,
) -> BaselineOutcome {
    let describe =
        |e: &BaselineEntry| format!("{} {} [{} {}]", e.contract, e.kind, e.class, e.location);
    let mut notes = Vec::new();
    if applied.matched > 0 {
        notes.push(format!("{} findings baselined", applied.matched));
    }
    if sharded {
        // The other shards' findings are not in this run: an entry matching nothing here
        // may match there.
        if !applied.stale.is_empty() {
            notes.push(format!(
                "{} baseline entries matched nothing in this shard (staleness is judged by an unsharded run)",
                applied.stale.len()
            ));
        }
    } else {
        for entry in &applied.stale {
            notes.push(format!(
                "stale baseline entry (matches no finding; remove it): {}",
                printable(&describe(entry))
            ));
        }
    }
    for entry in &applied.expired {
        notes.push(format!(
            "baseline entry expired on {} (fix the finding or renew the entry): {}",
            entry.expires,
            printable(&describe(entry))
        ));
    }
    let conclusion = if applied.expired.is_empty() || conclusion != Conclusion::Clean {
        conclusion
    } else {
        Conclusion::Findings
    };
    BaselineOutcome { conclusion, notes }
}
