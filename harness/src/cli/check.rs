//! `airlock check`: fixtures and adversarial cases through an adapter, judged against
//! the guard.

use crate::cli::exit::Exit;
use airlock_harness::check::report::{printable, Report, Severity};
use airlock_harness::check::{
    baseline_outcome, discard_empty, today, CheckOptions, Progress, Session, SessionError,
    SessionOptions, Shard, DEFAULT_RANDOM_CASES, MAX_RANDOM_CASES,
};
use airlock_harness::exec;
use anyhow::Result;
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
    /// Show every finding in the reports; by default each report shows the first 20 per
    /// contract, variant class and finding kind and counts the others (the conclusion
    /// and the exit code count every finding either way).
    #[arg(long)]
    all_findings: bool,
    /// No progress bar and no closing summary on stderr.
    #[arg(long)]
    quiet: bool,
    /// Seconds between progress lines when stderr is not a terminal (a CI log): contract,
    /// cases, findings, rate. On a terminal, a progress bar instead.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 10,
        value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..)
    )]
    progress: u64,
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
        discard_empty(&created);
    }
    result
}

/// The library's options of these arguments.
fn session_options(args: &CheckArgs) -> SessionOptions {
    SessionOptions {
        contracts: args.contracts.clone(),
        corpus: args.corpus.clone(),
        adapter_cmd: args.adapter_cmd.clone(),
        timeout: Duration::from_millis(args.timeout_ms),
        run: CheckOptions {
            seed: args.seed,
            random_cases: args.cases,
            reproducers: Some(args.reproducers.clone()),
            max_duration: args.max_duration,
            shard: args.shard,
        },
        replay: args.replay.clone(),
        output: args.output.clone(),
        reports: args.reports.iter().map(|(_, p)| p.clone()).collect(),
        baseline: args.baseline.clone(),
        write_baseline: args.write_baseline.clone(),
    }
}

fn check_run(args: CheckArgs, created: &mut Vec<PathBuf>) -> Result<Exit> {
    super::stop_on_signals("check")?;
    let session = Session::prepare(session_options(&args), created)?;
    let mut warn = |w: &str| errln!("airlock check: warning: {w}");
    let plan = session.plan(&mut warn)?;
    let result = match plan.contracts() {
        None => plan.run(&mut |_| {}),
        Some(total) => {
            let bar = progress_bar(args.quiet);
            // Off a terminal (a CI log), a line every `--progress` seconds instead.
            let mut log = (!args.quiet && bar.is_hidden())
                .then(|| ProgressLog::new(Duration::from_secs(args.progress)));
            let (mut contract, mut findings) = (0usize, 0usize);
            let mut tool_shown = String::new();
            bar.set_message("0 findings");
            let result = plan.run(&mut |p| match p {
                Progress::Contract(tool, n) => {
                    contract += 1;
                    tool_shown = printable(tool).into_owned();
                    bar.set_prefix(format!("contract {contract}/{total} {tool_shown}"));
                    bar.set_position(0);
                    bar.set_length(n as u64);
                }
                Progress::Case => {
                    bar.inc(1);
                    if let Some(log) = &mut log {
                        log.case(|cases, rate, elapsed| {
                            format!(
                                "airlock check: contract {contract}/{total} {tool_shown}, {cases} cases, {findings} findings, {rate:.0} cases/s, {elapsed:.0}s"
                            )
                        });
                    }
                }
                Progress::Findings(n) => {
                    findings += n;
                    bar.set_message(format!("{findings} findings"));
                }
            });
            bar.finish_and_clear();
            result
        }
    };
    let ran = match result {
        Ok(ran) => ran,
        // The run's only error: a reproducer that could not be written (exit 3).
        Err(SessionError::Run(e)) => {
            return Err(super::WriteError {
                what: e.path().display().to_string(),
                source: std::io::Error::other(e.to_string()),
            }
            .into())
        }
        Err(e) => return Err(e.into()),
    };
    if exec::stopping() {
        // SIGINT/SIGTERM arrived and killed the adapters under the run: the handler exits
        // 130/143 now; no report of a run cut short, no exit of ours first.
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let mut report = ran.report;
    if args.all_findings {
        report.show_every_finding();
    }
    let today = today();
    if let Some((path, toml)) = session.baseline_to_write(&report, today) {
        super::write_file(path, toml)?;
    }
    let applied = session.apply_baseline(&mut report, today);
    emit(&report, args.format, args.output.as_ref())?;
    let mut written: Vec<&PathBuf> = args.output.iter().collect();
    for (format, path) in &args.reports {
        emit(&report, *format, Some(path))?;
        written.push(path);
    }
    if !args.quiet {
        err!("{}", report.summary(&written));
        if let Some(files) = &ran.shrunk {
            let show = |p: &PathBuf| printable(&p.display().to_string()).into_owned();
            errln!(
                "airlock check: shrunk case written: {} (its body {}, the expected and actual answers {}); replay it with --replay",
                show(&files.case),
                show(&files.body),
                show(&files.answer)
            );
        }
    }
    let conclusion = report.conclusion_failing_on(match args.fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Availability => Severity::Availability,
    });
    let Some(applied) = applied else {
        return Ok(conclusion.into());
    };
    let outcome = baseline_outcome(&applied, conclusion, args.shard.is_some());
    for note in &outcome.notes {
        errln!("airlock check: {note}");
    }
    Ok(outcome.conclusion.into())
}

/// Progress as lines on a stderr that is not a terminal: one every `every`, none between.
struct ProgressLog {
    every: Duration,
    started: std::time::Instant,
    last: std::time::Instant,
    cases: u64,
}

impl ProgressLog {
    fn new(every: Duration) -> Self {
        let now = std::time::Instant::now();
        Self {
            every,
            started: now,
            last: now,
            cases: 0,
        }
    }

    /// One more case; a line (from `line(cases, rate, seconds)`) when one is due.
    fn case(&mut self, line: impl FnOnce(u64, f64, f64) -> String) {
        self.cases += 1;
        if self.last.elapsed() < self.every {
            return;
        }
        self.last = std::time::Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        errln!(
            "{}",
            line(self.cases, self.cases as f64 / elapsed.max(1e-9), elapsed)
        );
    }
}

/// The progress bar of a run of contracts: drawn on a terminal unless `--quiet`.
fn progress_bar(quiet: bool) -> ProgressBar {
    let bar = if std::io::stderr().is_terminal() && !quiet {
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
    bar
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
