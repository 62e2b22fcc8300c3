//! `airlock guard`: serve the exec protocol with the guard, as a sidecar.

use airlock_guard::{Contract, Guard};
use airlock_harness::check::discover;
use airlock_harness::exit::Exit;
use airlock_harness::protocol::serve;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Serve the exec protocol (JSON Lines on stdin/stdout) with the guard until stdin
/// closes. Cases are routed to a contract by their request's `tool`.
#[derive(Debug, clap::Args)]
pub struct GuardArgs {
    /// A contract folder (repeatable); default: every contract under ./schemas.
    #[arg(long = "contract")]
    contracts: Vec<PathBuf>,
}

pub fn run(args: GuardArgs) -> Result<Exit> {
    let dirs = if args.contracts.is_empty() {
        discover(&PathBuf::from("schemas"))?
    } else {
        args.contracts
    };
    let guards = dirs
        .iter()
        .map(|dir| {
            Contract::load(dir)
                .map(Guard::new)
                .with_context(|| format!("loading contract {}", dir.display()))
        })
        .collect::<Result<Vec<_>>>()?;
    let stats = serve(&guards, std::io::stdin().lock(), std::io::stdout().lock())
        .context("serving the exec protocol")?;
    if stats.malformed > 0 {
        eprintln!(
            "airlock guard: {} malformed line(s) answered with an error",
            stats.malformed
        );
    }
    Ok(Exit::Success)
}
