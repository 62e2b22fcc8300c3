//! `airlock check`: fixtures and adversarial cases through an adapter, judged against
//! the guard.

use airlock_harness::adapter::{Adapter, ExecAdapter, GuardAdapter};
use airlock_harness::check::{
    discover, replay, run, CheckOptions, Progress, Reproducer, Subject, DEFAULT_RANDOM_CASES,
};
use airlock_harness::exit::Exit;
use airlock_harness::report::{Report, Severity};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// Report formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// One line per finding and a summary table (colour on a terminal).
    Human,
    /// The documented JSON shape.
    Json,
    /// JUnit XML: a testsuite per contract, a testcase per variant class.
    Junit,
    /// SARIF 2.1.0, findings located in fixture or schema files.
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
/// findings, 2 usage, contract or fixture error, 3 internal error.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A contract folder (repeatable); default: every contract under ./schemas.
    #[arg(long = "contract")]
    contracts: Vec<PathBuf>,
    /// The adapter under test, run as `sh -c CMD` over the exec protocol; default: the
    /// guard itself, in process.
    #[arg(long)]
    adapter_cmd: Option<String>,
    /// Seed of canaries and random cases: the same seed gives the same cases.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Random mutation cases per contract, on top of every fixture and deterministic variant.
    #[arg(long, default_value_t = DEFAULT_RANDOM_CASES)]
    cases: usize,
    /// Per-case timeout for an external adapter.
    #[arg(long, default_value_t = 5000)]
    timeout_ms: u64,
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
}

pub fn run_check(args: CheckArgs) -> Result<Exit> {
    let timeout = Duration::from_millis(args.timeout_ms.max(1));
    let report = if let Some(path) = &args.replay {
        let text = std::fs::read(path)
            .with_context(|| format!("reading reproducer {}", path.display()))?;
        let reproducer: Reproducer = serde_json::from_slice(&text)
            .with_context(|| format!("{} is not a reproducer", path.display()))?;
        let mut adapter: Box<dyn Adapter> = match &args.adapter_cmd {
            Some(cmd) => Box::new(ExecAdapter::new(cmd, timeout)),
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
        let subjects = dirs
            .iter()
            .map(|d| Subject::load(d))
            .collect::<Result<Vec<_>, _>>()?;
        let options = CheckOptions {
            seed: args.seed,
            random_cases: args.cases,
            reproducers: Some(args.reproducers.clone()),
        };
        let mut adapter: Box<dyn Adapter> = match &args.adapter_cmd {
            Some(cmd) => Box::new(ExecAdapter::new(cmd, timeout)),
            None => Box::new(GuardAdapter::new(subjects.iter().map(|s| s.guard.clone()))),
        };
        let bar = if std::io::stderr().is_terminal() {
            ProgressBar::new(0)
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{prefix:>16} [{bar:30}] {pos}/{len} {per_sec}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let report = run(&subjects, &options, adapter.as_mut(), &mut |p| match p {
            Progress::Contract(tool, n) => {
                bar.set_prefix(tool.to_owned());
                bar.set_position(0);
                bar.set_length(n as u64);
            }
            Progress::Case => bar.inc(1),
        });
        bar.finish_and_clear();
        report
    };
    emit(&report, args.format, args.output.as_ref())?;
    Ok(report.exit_failing_on(match args.fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Availability => Severity::Availability,
    }))
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
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("writing report {}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(())
}
