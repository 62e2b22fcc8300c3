//! `airlock mcp proxy` (being built).

use airlock_harness::exit::Exit;
use anyhow::Result;

/// (being built)
#[derive(Debug, clap::Args)]
pub struct ProxyArgs {}

pub fn run(_args: ProxyArgs) -> Result<Exit> {
    anyhow::bail!("airlock mcp proxy is being built")
}
