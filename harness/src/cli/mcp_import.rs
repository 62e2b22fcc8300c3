//! `airlock mcp import` (being built).

use airlock_harness::exit::Exit;
use anyhow::Result;

/// (being built)
#[derive(Debug, clap::Args)]
pub struct ImportArgs {}

pub fn run(_args: ImportArgs) -> Result<Exit> {
    anyhow::bail!("airlock mcp import is being built")
}
