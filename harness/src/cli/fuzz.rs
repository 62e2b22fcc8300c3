//! `airlock fuzz`: the guard's fuzz targets in process, on stable Rust.

use crate::cli::exit::Exit;
use airlock_harness::check::discover;
use airlock_harness::check::report::printable;
use airlock_harness::fuzz::adapter::{write_finding, AdapterFuzzer};
use airlock_harness::fuzz::{BlackBoxOptions, BlackBoxReport, FuzzOptions, Fuzzer, Target};
use airlock_harness::{exec, ExecAdapter};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Fuzz the guard in process with the invariants of the cargo-fuzz targets in `fuzz/`
/// (`parse`, `admit`, `mutate`, `answer`): seeded, deterministic, no nightly needed. Exit 0 no
/// finding, 1 a finding (its input is written under --artifacts), 2 usage or contract
/// error.
#[derive(Debug, clap::Args)]
pub struct FuzzArgs {
    /// A contract folder (repeatable); default: every contract under ./schemas.
    #[arg(long = "contract")]
    contracts: Vec<PathBuf>,
    /// A target (repeatable): parse, admit, mutate or answer; default: all, in turn.
    #[arg(long = "target", value_parser = |t: &str| t.parse::<Target>())]
    targets: Vec<Target>,
    /// Seed of the input generator: the same seed gives the same inputs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Stop after this many inputs [default: 10000 unless --duration is given].
    #[arg(long)]
    runs: Option<u64>,
    /// Stop after this long, such as `30s` or `8h`.
    #[arg(long, value_parser = duration)]
    duration: Option<Duration>,
    /// Judge part K of N of the inputs (`--shard 2/4`): N jobs with the same seed and
    /// --runs judge together exactly the inputs of one unsharded run.
    #[arg(long, value_name = "K/N", value_parser = |s: &str| s.parse::<airlock_harness::check::Shard>())]
    shard: Option<airlock_harness::check::Shard>,
    /// Longest input generated, in bytes.
    #[arg(long, default_value_t = 4096)]
    max_len: usize,
    /// No progress on stderr.
    #[arg(long)]
    quiet: bool,
    /// Where the input of a finding is written.
    #[arg(long, default_value = "target/airlock/fuzz")]
    artifacts: PathBuf,
    /// Judge these files (artifacts, corpus files) instead of generating inputs; with
    /// --for-adapter, turn them into `check` reproducers.
    #[arg(long, num_args = 1.., conflicts_with_all = ["seed", "runs", "duration", "write_corpus"])]
    replay: Vec<PathBuf>,
    /// Write every seed body (fixtures and deterministic variants) into this folder, the
    /// starting corpus of the cargo-fuzz targets, and exit. With --for-adapter: the seed
    /// inputs of an adapter fuzz target (`airlock_harness::fuzz_adapter`).
    #[arg(long, conflicts_with_all = ["replay", "adapter_cmd"])]
    write_corpus: Option<PathBuf>,
    /// With --write-corpus: write an adapter fuzz target's seed inputs. With --replay:
    /// the files are inputs of an adapter fuzz target (a cargo-fuzz crash file): write
    /// the case each decodes to under --artifacts as a `.case.json` reproducer, which
    /// `airlock check --replay` runs against the adapter.
    #[arg(long)]
    for_adapter: bool,
    /// Write the contracts' fuzz dictionary (libFuzzer `-dict=` format) to this file,
    /// and exit.
    #[arg(long, conflicts_with_all = ["replay", "write_corpus", "adapter_cmd"])]
    write_dict: Option<PathBuf>,
    /// Fuzz this adapter (a command speaking the exec protocol) against the guard:
    /// differential, black box, the guard's decision path as feedback. Exit 1 on a
    /// finding (its shrunk reproducer written under --artifacts).
    #[arg(long, conflicts_with_all = ["replay", "targets", "shard"])]
    adapter_cmd: Option<String>,
    /// With --adapter-cmd: the corpus folder, read at the start (a run resumes from it)
    /// and kept: every input that reached a new decision or answer shape is written
    /// into it.
    #[arg(long, requires = "adapter_cmd")]
    corpus: Option<PathBuf>,
    /// With --adapter-cmd: per-input timeout for the adapter (at least 1).
    #[arg(
        long,
        default_value_t = 5000,
        value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..)
    )]
    timeout_ms: u64,
    /// Seconds between progress lines (inputs, rate, elapsed) when stderr is not a
    /// terminal; on a terminal one line is rewritten in place. None with --quiet.
    #[arg(
        long = "progress",
        alias = "progress-every",
        value_name = "SECONDS",
        default_value_t = 10,
        value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..)
    )]
    progress: u64,
}

/// The inputs to judge: `--runs`, else 10 000 unless `--duration` bounds the run.
fn runs(args: &FuzzArgs) -> Option<u64> {
    args.runs.or(args.duration.is_none().then_some(10_000))
}

pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    let duration = airlock_guard::parse_duration(text).map_err(|e| e.to_string())?;
    Duration::try_from(duration).map_err(|e| format!("{text:?}: {e}"))
}

pub fn run(args: FuzzArgs) -> Result<Exit> {
    let dirs = if args.contracts.is_empty() {
        discover(&PathBuf::from("schemas"))?
    } else {
        args.contracts.clone()
    };
    if args.adapter_cmd.is_some() || args.write_dict.is_some() || args.for_adapter {
        return adapter_fuzz(&args, &dirs);
    }
    let fuzzer = Fuzzer::load(&dirs)?;
    if let Some(dir) = &args.write_corpus {
        return write_corpus(&fuzzer, dir);
    }
    if !args.replay.is_empty() {
        return replay(&fuzzer, &args.replay, &args.targets);
    }
    let options = FuzzOptions {
        targets: args.targets.clone(),
        seed: args.seed,
        runs: runs(&args),
        duration: args.duration,
        max_len: args.max_len,
        shard: args.shard,
    };
    let bar = if std::io::stderr().is_terminal() && !args.quiet {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("fuzz {spinner} {pos} inputs, {per_sec} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    // Off a terminal (a CI log) a line every --progress seconds instead of the bar.
    let lines = !std::io::stderr().is_terminal() && !args.quiet;
    let every = Duration::from_secs(args.progress);
    let started = std::time::Instant::now();
    let mut last = started;
    let report = fuzzer.run(&options, &mut |n| {
        if n % 256 != 0 {
            return;
        }
        bar.set_position(n);
        if lines && last.elapsed() >= every {
            last = std::time::Instant::now();
            let seconds = started.elapsed().as_secs_f64();
            errln!(
                "fuzz: {n} inputs, {:.0}/s, {seconds:.0}s",
                n as f64 / seconds.max(1e-9)
            );
        }
    });
    bar.finish_and_clear();
    let seconds = report.elapsed.as_secs_f64().max(1e-9);
    let per_target: Vec<String> = Target::ALL
        .iter()
        .zip(report.per_target)
        .filter(|(_, n)| *n > 0)
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    let summary = format!(
        "{} inputs ({}) in {:.2}s, {:.0}/s, seed {}",
        report.runs,
        per_target.join(", "),
        seconds,
        report.runs as f64 / seconds,
        args.seed
    );
    let Some(finding) = report.finding else {
        outln!("fuzz: no finding: {summary}")?;
        return Ok(Exit::Success);
    };
    let saved = fuzzer
        .save_finding(&args.artifacts, &finding)
        .map_err(write_error)?;
    let path = saved.input;
    if let Some((tool, body_path)) = saved.body {
        outln!("fuzz: the body judged by {tool}: {}", body_path.display())?;
    }
    outln!(
        "fuzz: FINDING in target {}: {}\n  input: {}\n  replay: airlock fuzz --target {} --replay {}\n  {summary}",
        finding.target,
        printable(&finding.violation.to_string()),
        path.display(),
        finding.target,
        path.display()
    )?;
    Ok(Exit::Findings)
}

/// The adapter side: `--write-dict`, `--write-corpus --for-adapter`, `--adapter-cmd`.
fn adapter_fuzz(args: &FuzzArgs, dirs: &[PathBuf]) -> Result<Exit> {
    let fuzzer = AdapterFuzzer::load(dirs)?;
    if let Some(path) = &args.write_dict {
        return write_adapter_dict(&fuzzer, path);
    }
    if let Some(dir) = &args.write_corpus {
        let written = fuzzer.write_seed_inputs(dir).map_err(write_error)?;
        outln!(
            "fuzz: wrote {written} adapter seed inputs to {}",
            dir.display()
        )?;
        return Ok(Exit::Success);
    }
    if !args.replay.is_empty() {
        return adapter_cases(&fuzzer, &args.replay, &args.artifacts);
    }
    let Some(command) = &args.adapter_cmd else {
        anyhow::bail!("--for-adapter needs --write-corpus or --replay");
    };
    fuzz_adapter(args, &fuzzer, command)
}

/// `--write-dict`: the contracts' dictionary in libFuzzer's format.
fn write_adapter_dict(fuzzer: &AdapterFuzzer, path: &Path) -> Result<Exit> {
    let dict = fuzzer.dictionary().libfuzzer();
    super::write_file(path, &dict)?;
    outln!(
        "fuzz: wrote {} words to {}",
        dict.lines().filter(|l| l.starts_with('"')).count(),
        path.display()
    )?;
    Ok(Exit::Success)
}

/// `--adapter-cmd`: the black-box run, its progress on stderr and its outcome printed.
fn fuzz_adapter(args: &FuzzArgs, fuzzer: &AdapterFuzzer, command: &str) -> Result<Exit> {
    if let Err(e) = exec::adopt_orphans() {
        errln!("airlock fuzz: warning: cannot adopt the adapter's orphaned processes: {e}");
    }
    super::stop_on_signals("fuzz")?;
    let mut exec = ExecAdapter::new(command, Duration::from_millis(args.timeout_ms));
    // An adapter that cannot answer a seed is a usage error (a mistyped command), not a
    // finding of the night.
    if let Err(failure) = fuzzer.first_answer(&mut exec) {
        anyhow::bail!("the adapter {command:?} does not answer the first seed case: {failure}");
    }
    let options = BlackBoxOptions {
        seed: args.seed,
        runs: runs(args),
        duration: args.duration,
        corpus: args.corpus.clone(),
        max_len: args.max_len.min(1024),
        ..BlackBoxOptions::default()
    };
    let terminal = std::io::stderr().is_terminal() && !args.quiet;
    let every = Duration::from_secs(args.progress);
    let mut last = std::time::Instant::now();
    let report = fuzzer.black_box(&mut exec, &options, &mut |p| {
        let line = format!(
            "fuzz: {} inputs, {:.0}/s, corpus {}, {} decisions, {:.0}s",
            p.runs,
            p.runs as f64 / p.elapsed.as_secs_f64().max(1e-9),
            p.corpus,
            p.signals,
            p.elapsed.as_secs_f64()
        );
        if terminal {
            err!("\r{line}");
        } else if !args.quiet && last.elapsed() >= every {
            errln!("{line}");
            last = std::time::Instant::now();
        }
    })?;
    if terminal {
        errln!();
    }
    print_black_box(args, command, report)
}

/// Print a black-box run's outcome: no finding, what the adapter did after its last
/// input, or the finding and its reproducer (printed before it is written).
fn print_black_box(args: &FuzzArgs, command: &str, report: BlackBoxReport) -> Result<Exit> {
    let p = report.progress;
    let summary = format!(
        "{} inputs in {:.2}s, {:.0}/s, corpus {} ({} resumed), {} decisions, seed {}",
        p.runs,
        p.elapsed.as_secs_f64(),
        p.runs as f64 / p.elapsed.as_secs_f64().max(1e-9),
        p.corpus,
        report.resumed,
        p.signals,
        args.seed
    );
    let Some((_, finding)) = report.finding else {
        // What the adapter does after its last input (output nobody asked for, a crash on
        // close) is a finding too, as in `check`.
        if report.closing.is_empty() {
            outln!("fuzz: no finding: {summary}")?;
            return Ok(Exit::Success);
        }
        for (kind, message) in &report.closing {
            outln!(
                "fuzz: FINDING ({}): after the last input: {}",
                kind.as_str(),
                printable(message)
            )?;
        }
        outln!("  {summary}")?;
        return Ok(Exit::Findings);
    };
    // The finding is printed before its file is written: an unwritable folder never
    // loses a night's finding.
    outln!("fuzz: FINDING: the adapter's answer is wrong on {finding}\n  {summary}")?;
    match write_finding(&args.artifacts, &finding) {
        Ok(path) => outln!(
            "  reproducer: {}\n  replay: airlock check --replay {} --adapter-cmd {}",
            path.display(),
            path.display(),
            shell_quote(command)
        )?,
        Err(e) => {
            outln!(
                "  the reproducer (not written: {e}):\n{}",
                serde_json::to_string(&finding.reproducer).unwrap_or_default()
            )?;
            return Err(e.into());
        }
    }
    Ok(Exit::Findings)
}

/// Write the case each adapter fuzz input in `files` decodes to as a reproducer.
fn adapter_cases(fuzzer: &AdapterFuzzer, files: &[PathBuf], artifacts: &Path) -> Result<Exit> {
    for path in files {
        let input = read_input(path)?;
        match fuzzer.write_case(artifacts, &input)? {
            Some(case) => outln!(
                "{}: case written to {}\n  replay: airlock check --replay {} --adapter-cmd '<your adapter>'",
                path.display(),
                case.display(),
                case.display()
            )?,
            None => anyhow::bail!(
                "{}: the contracts have no fixture or variant with a body to decode it against",
                path.display()
            ),
        }
    }
    Ok(Exit::Success)
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn write_corpus(fuzzer: &Fuzzer, dir: &Path) -> Result<Exit> {
    let written = fuzzer.write_corpus(dir).map_err(write_error)?;
    outln!("fuzz: wrote {written} seed inputs to {}", dir.display())?;
    Ok(Exit::Success)
}

/// A file that could not be written: exit 3, naming it.
fn write_error(e: airlock_harness::WriteFileError) -> super::WriteError {
    super::WriteError {
        what: e.path.display().to_string(),
        source: e.source,
    }
}

/// A fuzz input the user named, read whole up to the bound of any case file: `/dev/zero`
/// is an error, not an endless read; a pipe (`--replay <(…)`) is read to its end.
fn read_input(path: &Path) -> Result<Vec<u8>> {
    Ok(airlock_harness::corpus::read_bounded(
        path,
        airlock_harness::corpus::MAX_CASE_FILE_BYTES,
        "a fuzz input is one body or one decoded case",
    )?)
}

/// Judge files; the target comes from `--target`, else from the artifact's name
/// (`admit-…`), else every target.
fn replay(fuzzer: &Fuzzer, files: &[PathBuf], targets: &[Target]) -> Result<Exit> {
    let mut exit = Exit::Success;
    for path in files {
        let input = read_input(path)?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let targets: Vec<Target> = if targets.is_empty() {
            Target::for_file(&name)
        } else {
            targets.to_vec()
        };
        for target in targets {
            match fuzzer.check(target, &input) {
                Ok(()) => outln!("{}: {target}: ok", path.display())?,
                Err(violation) => {
                    let violation = violation.to_string();
                    outln!("{}: {target}: {}", path.display(), printable(&violation))?;
                    exit = Exit::Findings;
                }
            }
        }
    }
    Ok(exit)
}
