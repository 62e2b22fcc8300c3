//! `airlock guard`: serve the exec protocol with the guard, as a sidecar.

use airlock_guard::{Contract, Guard};
use airlock_harness::exit::Exit;
use airlock_harness::protocol::serve;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Serve the exec protocol (JSON Lines on stdin/stdout) with the guard of one contract,
/// until stdin closes.
#[derive(Debug, clap::Args)]
pub struct GuardArgs {
    /// The contract folder (`schemas/<tool>`).
    #[arg(long)]
    contract: PathBuf,
}

pub fn run(args: GuardArgs) -> Result<Exit> {
    let contract = Contract::load(&args.contract)
        .with_context(|| format!("loading contract {}", args.contract.display()))?;
    let guard = Guard::new(contract);
    let stats = serve(&guard, std::io::stdin().lock(), std::io::stdout().lock())
        .context("serving the exec protocol")?;
    if stats.malformed > 0 {
        eprintln!(
            "airlock guard: {} malformed line(s) answered with an error",
            stats.malformed
        );
    }
    Ok(Exit::Success)
}
