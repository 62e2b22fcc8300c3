//! `airlock init`: scaffold a contract from sample responses.

use crate::cli::exit::Exit;
use airlock_harness::check::report::printable;
use airlock_harness::init::{init, InitError, InitInput, InitOptions};
use anyhow::Result;
use std::path::PathBuf;

/// Scaffold a contract from real sample responses (with `--vendor`, a vendor's own
/// bodies; with `--lines`, a command's outputs): a closed Draft 2020-12 envelope whose
/// `data` schema is inferred from the samples, a manifest with limits and agent fields,
/// proposed binding checks, the samples as accepted fixtures and the adversary's
/// variants (each confirmed rejected) as near misses. Prints what it inferred and what
/// to review. Exit 0, 2 on a usage error or a sample it cannot read, 3 when a file or
/// folder cannot be written (nothing is left behind).
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The tool name (`[A-Za-z0-9_.-]{1,128}`).
    tool: String,
    /// A sample response (repeatable): an envelope, or the `data` object alone.
    #[arg(long = "sample", required = true)]
    samples: Vec<PathBuf>,
    /// The request the samples answer; default: `req.Sample0001`, no parameters, now.
    #[arg(long)]
    request: Option<PathBuf>,
    /// An agent field (repeatable); default: every leaf member of `data`.
    #[arg(long = "agent-field")]
    agent_fields: Vec<String>,
    /// Where `schemas/<tool>/` and `corpora/<tool>/` are written (never overwritten).
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// A response that must be rejected (repeatable; `NAME.request.json` beside it is its
    /// request): what the samples cannot show is learned from it.
    #[arg(long = "near-miss")]
    near_misses: Vec<PathBuf>,
    /// The samples are a vendor's own response bodies (successes and error bodies):
    /// scaffold a `kind = "vendor"` contract (an open vendor schema telling error bodies
    /// from successes, a mapping of every leaf, failure rules).
    #[arg(long, conflicts_with = "lines")]
    vendor: bool,
    /// The samples are a command's outputs (`key=value` or `key: value` lines): scaffold a
    /// `kind = "lines"` contract (the line grammar, a mapping, a pattern per value).
    #[arg(long)]
    lines: bool,
}

pub fn run(args: InitArgs) -> Result<Exit> {
    let options = InitOptions {
        tool: args.tool,
        samples: args.samples,
        request: args.request,
        agent_fields: args.agent_fields,
        out: args.out,
        near_misses: args.near_misses,
        input: if args.vendor {
            InitInput::Vendor
        } else if args.lines {
            InitInput::Lines
        } else {
            InitInput::Envelope
        },
    };
    let scaffold = init(&options).map_err(|e| match e {
        // A write failure is Airlock's own (exit 3), not a usage error.
        InitError::Write { path, source } => anyhow::Error::new(super::WriteError {
            what: path.display().to_string(),
            source,
        }),
        other => anyhow::Error::new(other),
    })?;
    outln!(
        "airlock init: wrote {} and {} ({} accepted, {} near-miss fixtures)",
        scaffold.contract.display(),
        scaffold.corpus.display(),
        scaffold.accepted,
        scaffold.near_misses
    )?;
    outln!("inferred:")?;
    for line in &scaffold.inferred {
        outln!("  {}", printable(line))?;
    }
    outln!("review:")?;
    for line in &scaffold.review {
        outln!("  {}", printable(line))?;
    }
    outln!(
        "next: airlock lint --contract {0} && airlock check --contract {0}",
        scaffold.contract.display()
    )?;
    Ok(Exit::Success)
}
