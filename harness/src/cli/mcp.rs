//! `airlock mcp`: MCP tool contracts from a server's `tools/list`, and the stdio proxy.

use crate::cli::exit::Exit;
use anyhow::Result;

/// MCP servers: import their tools as contracts, or guard them as a stdio proxy.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, clap::Subcommand)]
enum McpCommand {
    /// Write one contract per tool with an outputSchema, from a saved `tools/list` answer or
    /// a live server.
    Import(super::mcp_import::ImportArgs),
    /// A stdio MCP proxy: `tools/call` results judged by the tools' contracts.
    Proxy(super::mcp_proxy::ProxyArgs),
}

pub fn run(args: McpArgs) -> Result<Exit> {
    match args.command {
        McpCommand::Import(args) => super::mcp_import::run(args),
        McpCommand::Proxy(args) => super::mcp_proxy::run(args),
    }
}
