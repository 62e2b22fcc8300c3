//! `airlock admit`: judge one response with the guard.

use crate::cli::exit::Exit;
use airlock_guard::{Contract, Guard, Request};
use airlock_harness::corpus::{corpus_dir, read_request};
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};

/// Judge one raw response: the agent value on stdout (for an MCP tool contract, the
/// CallToolResult the agent gets), the operator diagnostic on stderr.
/// Exit 0 admitted (a success or a valid failure envelope), 1 rejected, 2 usage or
/// contract error.
#[derive(Debug, clap::Args)]
pub struct AdmitArgs {
    /// The contract folder (`schemas/<tool>`).
    #[arg(long)]
    contract: PathBuf,
    /// The request file; default: `NAME.request.json` beside the response, else the
    /// corpus's `request.json`.
    #[arg(long)]
    request: Option<PathBuf>,
    /// Print the audit record (one JSON line) on stderr too.
    #[arg(long)]
    audit: bool,
    /// The raw response file, or `-` for stdin (read up to the byte limit and no further).
    #[arg(default_value = "-")]
    response: String,
}

pub fn run(args: AdmitArgs) -> Result<Exit> {
    let contract = Contract::load(&args.contract)
        .with_context(|| format!("loading contract {}", args.contract.display()))?;
    let request = request_for(&args, &contract)?;
    let guard = Guard::new(contract);
    let admission = if args.response == "-" {
        guard.admit_reader(&request, std::io::stdin().lock())
    } else {
        // A folder opens on Unix and fails on the first read, which the guard would
        // judge a transport failure: the caller named the wrong thing.
        if std::fs::metadata(&args.response).is_ok_and(|m| m.is_dir()) {
            bail!(
                "{} is a folder: give a response file, or - for stdin",
                args.response
            );
        }
        let file = std::fs::File::open(&args.response)
            .with_context(|| format!("reading response {}", args.response))?;
        guard.admit_reader(&request, file)
    };
    if guard.contract().input().mcp().is_some() {
        outln!("{}", admission.agent().to_call_tool_result())?;
    } else {
        outln!("{}", admission.agent().to_json_string())?;
    }
    if let Some(diagnostic) = admission.diagnostic() {
        // The diagnostic may quote the response: `explained` escapes it for the terminal,
        // a line and a `because` line per cause, as the bindings give it.
        errln!("{}", diagnostic.explained());
    }
    if args.audit {
        errln!("{}", admission.audit().to_json_line());
    }
    Ok(if admission.is_admitted() {
        Exit::Success
    } else {
        Exit::Findings
    })
}

fn request_for(args: &AdmitArgs, contract: &Contract) -> Result<Request> {
    if let Some(path) = &args.request {
        return Ok(read_request(path)?);
    }
    if args.response != "-" {
        let response = Path::new(&args.response);
        let name = response.file_name().unwrap_or_default().to_string_lossy();
        let beside =
            response.with_file_name(format!("{}.request.json", name.trim_end_matches(".json")));
        if beside.is_file() {
            return Ok(read_request(&beside)?);
        }
    }
    let default = corpus_dir(contract)
        .map(|d| d.join("request.json"))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            anyhow!(
                "no request: pass --request FILE (no corpora/{}/request.json beside the contract)",
                contract.tool()
            )
        })?;
    Ok(read_request(&default)?)
}
