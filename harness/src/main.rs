//! `airlock`: parse the command line and dispatch. Every subcommand lives in `cli/`.

mod cli;

use crate::cli::exit::Exit;
use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// Airlock: contracts between untrusted tool output and AI agents.
///
/// Exit codes: 0 success; 1 rejected / invalid / findings; 2 usage, contract or fixture
/// error; 3 internal error or output that could not be written; 4 `mcp proxy`: the MCP
/// server exited; 130 / 143 `check` or `mcp proxy` stopped by SIGINT / SIGTERM. A closed
/// stdout (`| head`) only ends the output.
#[derive(Debug, Parser)]
#[command(name = "airlock", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run fixtures and adversarial cases through an adapter, judged against the guard.
    Check(cli::check::CheckArgs),
    /// Judge one raw response with the guard of a contract.
    Admit(cli::admit::AdmitArgs),
    /// Serve the exec protocol with the guard (a sidecar for adapters in any language).
    Guard(cli::guard::GuardArgs),
    /// Write the adversary's variants of a contract as raw files plus a manifest.
    Mutate(cli::mutate::MutateArgs),
    /// Strict parse and JSON Schema on standalone files.
    Validate(cli::validate::ValidateArgs),
    /// Fuzz the guard in process with the invariants of the cargo-fuzz targets.
    Fuzz(cli::fuzz::FuzzArgs),
    /// Lint contracts' schemas for what a guard should not let through.
    Lint(cli::lint::LintArgs),
    /// Certify a schema version change: classified changes, witnesses, fixture replay.
    Certify(cli::certify::CertifyArgs),
    /// Scaffold a contract from sample responses.
    Init(cli::init::InitArgs),
    /// MCP servers: import their tools as contracts, or guard them as a stdio proxy.
    Mcp(cli::mcp::McpArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A panic is Airlock's own failure, never the input's: exit 3, distinct from findings
    // (1) and from bad usage or contracts (2).
    let outcome = std::panic::catch_unwind(|| match cli.command {
        Command::Check(args) => cli::check::run_check(args),
        Command::Admit(args) => cli::admit::run(args),
        Command::Guard(args) => cli::guard::run(args),
        Command::Mutate(args) => cli::mutate::run(args),
        Command::Validate(args) => cli::validate::run(args),
        Command::Fuzz(args) => cli::fuzz::run(args),
        Command::Lint(args) => cli::lint::run(args),
        Command::Certify(args) => cli::certify::run(args),
        Command::Init(args) => cli::init::run(args),
        Command::Mcp(args) => cli::mcp::run(args),
    });
    match outcome {
        Ok(Ok(exit)) => exit.into(),
        Ok(Err(error)) => {
            // Errors may quote a hostile file or adapter: escaped for the terminal.
            let message = format!("{error:#}");
            // Line breaks of multi-line messages (a TOML error's excerpt) are kept.
            let lines: Vec<String> = message
                .split('\n')
                .map(|line| airlock_harness::check::report::printable(line).into_owned())
                .collect();
            // A closed stderr only loses the message (eprintln! would panic on it).
            let _ = writeln!(std::io::stderr(), "airlock: error: {}", lines.join("\n"));
            if error.chain().any(|e| e.is::<cli::WriteError>()) {
                Exit::Internal.into()
            } else {
                Exit::Usage.into()
            }
        }
        Err(_) => {
            let _ = writeln!(
                std::io::stderr(),
                "airlock: internal error (a bug in airlock; please report it with the command line)"
            );
            Exit::Internal.into()
        }
    }
}
