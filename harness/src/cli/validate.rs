//! `airlock validate`: strict parse and schema on standalone files.

use crate::cli::exit::Exit;
use airlock_harness::validate::{InstanceVerdict, ValidateOptions, Validation, DEFAULT_MAX_DEPTH};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Strict parse plus JSON Schema (2020-12, 2019-09 or draft-07; format asserted) on each
/// instance: one line each, `PATH: valid` or `PATH: invalid: <stage>: <reason>`. Exit 0
/// all valid, 1 any invalid, 2 usage, schema or unreadable-file error.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The schema file; a file holding just `true` checks strict JSON only.
    #[arg(long)]
    schema: PathBuf,
    /// Largest instance accepted, in bytes (1 to 67108864, 64 MiB, the guard's
    /// MAX_BYTES_CEILING) [default: 67108864].
    #[arg(
        long,
        value_parser = clap::builder::RangedU64ValueParser::<u64>::new()
            .range(1..=airlock_guard::MAX_BYTES_CEILING)
    )]
    max_bytes: Option<u64>,
    /// Deepest nesting of arrays and objects accepted (1 to 512).
    #[arg(
        long,
        default_value_t = DEFAULT_MAX_DEPTH,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
            .range(1..=airlock_guard::MAX_DEPTH_CEILING as u64)
    )]
    max_depth: usize,
    /// Instance files.
    #[arg(required = true)]
    instances: Vec<PathBuf>,
}

pub fn run(args: ValidateArgs) -> Result<Exit> {
    let options = ValidateOptions {
        schema: args.schema,
        max_bytes: args.max_bytes,
        max_depth: args.max_depth,
    };
    // The error names the schema file itself.
    let validation = Validation::new(&options).context("loading the schema")?;
    let mut exit = Exit::Success;
    for path in &args.instances {
        let verdict = validation.instance(path);
        // The diagnostic may quote the instance: escaped for a terminal, as every report.
        let line = format!("{}: {verdict}", path.display());
        outln!("{}", airlock_harness::check::report::printable(&line))?;
        exit = match (&verdict, exit) {
            (InstanceVerdict::Unreadable(_), _) | (_, Exit::Usage) => Exit::Usage,
            (InstanceVerdict::Invalid(_), _) => Exit::Findings,
            (InstanceVerdict::Valid, exit) => exit,
        };
    }
    Ok(exit)
}
