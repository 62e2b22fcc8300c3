//! `airlock check`: fixtures and adversarial cases through an adapter, judged against
//! the guard.

use crate::cli::exit::Exit;
use airlock_harness::check::report::{printable, Report, Severity};
use airlock_harness::check::Baseline;
use airlock_harness::check::{
    discover, replay, run, CheckOptions, Progress, Reproducer, Shard, Subject,
    DEFAULT_RANDOM_CASES, MAX_RANDOM_CASES,
};
use airlock_harness::exec;
use airlock_harness::{Adapter, ExecAdapter, GuardAdapter};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Report formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// One line per finding and a summary table (colour on a terminal).
    Human,
    /// The documented JSON shape.
    Json,
    /// JUnit XML: a testsuite per contract, a testcase per case with findings (classname
    /// the contract) and one per variant class for the rest.
    Junit,
    /// SARIF 2.1.0: rules per finding kind, findings located in fixture or schema files
    /// with regions and stable fingerprints.
    Sarif,
    /// A summary for a pull-request comment.
    Markdown,
}

/// The least severity that fails a run.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FailOn {
    /// Only findings of severity `error`.
    Error,
    /// Findings of severity `availability` too (every finding).
    Availability,
}

/// Prove an adapter rejects what it must, admits what it must with exactly the agent
/// fields, and never lets rejected bytes reach the agent. Exit 0 no findings, 1
/// findings, 2 usage, contract or fixture error, 3 internal error or a report that
/// could not be written, 130 / 143 stopped by SIGINT / SIGTERM (adapters killed first).
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A contract folder (repeatable); default: every contract under ./schemas.
    #[arg(long = "contract")]
    contracts: Vec<PathBuf>,
    /// The corpus folder of the (one) contract; default: `corpora/<tool>` beside its
    /// `schemas/<tool>`.
    #[arg(long, requires = "contracts")]
    corpus: Option<PathBuf>,
    /// The adapter under test, run as `sh -c CMD` over the exec protocol; default: the
    /// guard itself, in process.
    #[arg(long)]
    adapter_cmd: Option<String>,
    /// Seed of canaries and random cases: the same seed gives the same cases.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Random mutation cases per contract, on top of every fixture and deterministic
    /// variant (at most 100000: cases are generated before they run).
    #[arg(
        long,
        default_value_t = DEFAULT_RANDOM_CASES,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=MAX_RANDOM_CASES as u64)
    )]
    cases: usize,
    /// Per-case timeout for an external adapter (at least 1).
    #[arg(
        long,
        default_value_t = 5000,
        value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..)
    )]
    timeout_ms: u64,
    /// A bound on the whole run, such as `90s` or `10m`: cases not started by then are
    /// reported as not run, with a `timeout` finding [default: no bound].
    #[arg(long, value_parser = super::fuzz::duration)]
    max_duration: Option<Duration>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Write the report here instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Where reproducers of findings are written.
    #[arg(long, default_value = "target/airlock/reproducers")]
    reproducers: PathBuf,
    /// Which findings fail the run: `availability` (default) fails on every finding;
    /// `error` reports findings where the adapter rejected what the contract admits
    /// (severity `availability`) without failing on them.
    #[arg(long, value_enum, default_value_t = FailOn::Availability)]
    fail_on: FailOn,
    /// Re-run exactly the case of a reproducer (`*.case.json`).
    #[arg(long, conflicts_with_all = ["contracts", "seed", "cases"])]
    replay: Option<PathBuf>,
    /// Also write the report in FORMAT to PATH (repeatable, such as
    /// `--report sarif=airlock.sarif --report junit=junit.xml`): every report of one run.
    #[arg(long = "report", value_name = "FORMAT=PATH", value_parser = report_spec)]
    reports: Vec<(Format, PathBuf)>,
    /// No progress bar and no closing summary on stderr.
    #[arg(long)]
    quiet: bool,
    /// Accepted findings (TOML `[[finding]]` entries matched by contract, class, location
    /// and kind, each with a reason and an expiry date): reported as baselined, not
    /// failing the run; an expired entry fails it, an unmatched one is reported as stale.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write the findings of this run as a starting baseline (placeholder reasons, expiry
    /// 90 days out).
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Run part K of N (`--shard 2/4`): N jobs with the same seed run together exactly
    /// the cases of one unsharded run (partitioned by contract and case id).
    #[arg(long, value_name = "K/N", value_parser = |s: &str| s.parse::<Shard>())]
    shard: Option<Shard>,
}

/// `FORMAT=PATH` of `--report`.
fn report_spec(text: &str) -> Result<(Format, PathBuf), String> {
    super::format_and_path(text)
}

pub fn run_check(args: CheckArgs) -> Result<Exit> {
    let mut created = Vec::new();
    let result = check_run(args, &mut created);
    if result.is_err() {
        // A run that failed after the writability check leaves no empty report behind
        // (files that were there before are never removed).
        for path in created {
            if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    result
}

/// A file's device and inode.
type FileId = (u64, u64);

/// The same file, whatever the path (a hard link, `..`, a symbolic link): device and
/// inode on Unix, the canonical path elsewhere.
fn file_identity(path: &std::path::Path) -> Option<FileId> {
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

fn check_run(args: CheckArgs, created: &mut Vec<PathBuf>) -> Result<Exit> {
    super::stop_on_signals("check")?;
    let baseline = match &args.baseline {
        Some(path) => Some(Baseline::load(path)?),
        None => None,
    };
    let timeout = Duration::from_millis(args.timeout_ms);
    if args.write_baseline.is_some() && args.shard.is_some() {
        anyhow::bail!(
            "--write-baseline with --shard would hold only this shard's findings: write the baseline from an unsharded run"
        );
    }
    // Paths the user named are checked before the run, not after it, and no two outputs
    // may be one file (the second would overwrite the first).
    let outputs: Vec<(&str, &PathBuf)> = args
        .output
        .iter()
        .map(|p| ("--output", p))
        .chain(args.reports.iter().map(|(_, p)| ("--report", p)))
        .chain(args.write_baseline.iter().map(|p| ("--write-baseline", p)))
        .collect();
    let mut seen: Vec<(&str, PathBuf, Option<FileId>)> = Vec::new();
    for (flag, path) in &outputs {
        let existed = std::fs::symlink_metadata(path).is_ok();
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot write {flag} {}", path.display()))?;
        if !existed {
            created.push(path.to_path_buf());
        }
        let same = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let identity = file_identity(path);
        if let Some((other, _, _)) = seen
            .iter()
            .find(|(_, p, id)| *p == same || (identity.is_some() && *id == identity))
        {
            anyhow::bail!(
                "{other} and {flag} both name {} (the same file): give each report its own file",
                path.display()
            );
        }
        seen.push((flag, same, identity));
    }
    let report = if let Some(path) = &args.replay {
        let text = std::fs::read(path)
            .with_context(|| format!("reading reproducer {}", path.display()))?;
        let reproducer: Reproducer = serde_json::from_slice(&text)
            .with_context(|| format!("{} is not a reproducer", path.display()))?;
        let mut adapter: Box<dyn Adapter> = match &args.adapter_cmd {
            Some(cmd) => Box::new(exec_adapter(cmd, timeout, None)),
            None => Box::new(GuardAdapter::new([
                Subject::load(&reproducer.contract)?.guard
            ])),
        };
        replay(&reproducer, adapter.as_mut())?
    } else {
        let dirs = if args.contracts.is_empty() {
            discover(&PathBuf::from("schemas"))?
        } else {
            args.contracts.clone()
        };
        if args.corpus.is_some() && dirs.len() != 1 {
            anyhow::bail!("--corpus names the corpus of one contract: give exactly one --contract");
        }
        let subjects = dirs
            .iter()
            .map(|d| Subject::load_with_corpus(d, args.corpus.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        for subject in subjects.iter().filter(|s| s.corpus.fixtures.is_empty()) {
            errln!(
                "airlock check: warning: {} has no fixtures (accepted/, near_miss/, historical/<version>/): only generated cases are run",
                subject.corpus.dir.display()
            );
        }
        std::fs::create_dir_all(&args.reproducers).with_context(|| {
            format!(
                "cannot create the reproducer folder {} (--reproducers)",
                args.reproducers.display()
            )
        })?;
        let options = CheckOptions {
            seed: args.seed,
            random_cases: args.cases,
            reproducers: Some(args.reproducers.clone()),
            max_duration: args.max_duration,
            shard: args.shard,
        };
        let mut adapter: Box<dyn Adapter> = match &args.adapter_cmd {
            Some(cmd) => Box::new(exec_adapter(cmd, timeout, args.max_duration)),
            None => Box::new(GuardAdapter::new(subjects.iter().map(|s| s.guard.clone()))),
        };
        let bar = if std::io::stderr().is_terminal() && !args.quiet {
            ProgressBar::new(0)
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} cases, {msg}, {rate}")
                .map(|style| {
                    style.with_key(
                        "rate",
                        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = write!(w, "{:.0}/s", state.per_sec());
                        },
                    )
                })
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let (mut contract, mut findings) = (0usize, 0usize);
        let total = subjects.len();
        bar.set_message("0 findings");
        let report = run(&subjects, &options, adapter.as_mut(), &mut |p| match p {
            Progress::Contract(tool, n) => {
                contract += 1;
                bar.set_prefix(format!("contract {contract}/{total} {}", printable(tool)));
                bar.set_position(0);
                bar.set_length(n as u64);
            }
            Progress::Case => bar.inc(1),
            Progress::Findings(n) => {
                findings += n;
                bar.set_message(format!("{findings} findings"));
            }
        });
        bar.finish_and_clear();
        // The run's only error: a reproducer that could not be written (exit 3).
        report.map_err(|e| super::WriteError {
            what: e.path().display().to_string(),
            source: std::io::Error::other(e.to_string()),
        })?
    };
    if exec::stopping() {
        // SIGINT/SIGTERM arrived and killed the adapters under the run: the handler exits
        // 130/143 now; no report of a run cut short, no exit of ours first.
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let mut report = report;
    let today = airlock_guard::jiff::tz::Offset::UTC
        .to_datetime(airlock_guard::jiff::Timestamp::now())
        .date();
    if let Some(path) = &args.write_baseline {
        super::write_file(
            path,
            Baseline::of(&report, today, baseline.as_ref()).to_toml(),
        )?;
    }
    let applied = baseline.map(|b| b.apply(&mut report, today));
    emit(&report, args.format, args.output.as_ref())?;
    let mut written: Vec<&PathBuf> = args.output.iter().collect();
    for (format, path) in &args.reports {
        emit(&report, *format, Some(path))?;
        written.push(path);
    }
    if !args.quiet {
        err!("{}", report.summary(&written));
    }
    let exit: Exit = report
        .verdict_failing_on(match args.fail_on {
            FailOn::Error => Severity::Error,
            FailOn::Availability => Severity::Availability,
        })
        .into();
    let Some(applied) = applied else {
        return Ok(exit);
    };
    let describe = |e: &airlock_harness::check::BaselineEntry| {
        format!("{} {} [{} {}]", e.contract, e.kind, e.class, e.location)
    };
    if applied.matched > 0 {
        errln!("airlock check: {} findings baselined", applied.matched);
    }
    if args.shard.is_some() {
        // The other shards' findings are not in this run: an entry matching nothing here
        // may match there.
        if !applied.stale.is_empty() {
            errln!(
                "airlock check: {} baseline entries matched nothing in this shard (staleness is judged by an unsharded run)",
                applied.stale.len()
            );
        }
    } else {
        for entry in &applied.stale {
            errln!(
                "airlock check: stale baseline entry (matches no finding; remove it): {}",
                printable(&describe(entry))
            );
        }
    }
    for entry in &applied.expired {
        errln!(
            "airlock check: baseline entry expired on {} (fix the finding or renew the entry): {}",
            entry.expires,
            printable(&describe(entry))
        );
    }
    Ok(if applied.expired.is_empty() || exit != Exit::Success {
        exit
    } else {
        Exit::Findings
    })
}

fn emit(report: &Report, format: Format, output: Option<&PathBuf>) -> Result<()> {
    let colour = output.is_none()
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none();
    let text = match format {
        Format::Human => report.human(colour),
        Format::Json => report.json(),
        Format::Junit => report.junit(),
        Format::Sarif => report.sarif(),
        Format::Markdown => report.markdown(),
    };
    match output {
        Some(path) => super::write_file(path, text)?,
        None => super::print(&text)?,
    }
    Ok(())
}

/// An exec adapter whose waits end with the run's bound; on Linux this process adopts
/// the adapters' orphans so that a descendant that left the group is killed too.
fn exec_adapter(command: &str, timeout: Duration, bound: Option<Duration>) -> ExecAdapter {
    if let Err(e) = exec::adopt_orphans() {
        errln!("airlock check: warning: cannot adopt the adapter's orphaned processes: {e}");
    }
    let adapter = ExecAdapter::new(command, timeout);
    match bound {
        Some(bound) => adapter.deadline(Instant::now() + bound),
        None => adapter,
    }
}
