//! `airlock mcp import`: one contract per MCP tool with an outputSchema, from saved
//! `tools/list` answers or a live stdio server.

use crate::cli::exit::Exit;
use airlock_harness::check::report::printable;
use airlock_harness::mcp::import::{
    import, read_files, read_server, ImportError, ImportOptions, Outcome,
};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

/// Write a contract folder (contract.toml, v1.schema.json = the outputSchema as
/// published) and a corpus skeleton for each tool with an outputSchema; on re-import a
/// changed schema becomes the next version, certified against the last. Exit 0 done, 1 a
/// tool needs attention (refused or skipped, an update that does not load, is breaking or
/// could not be certified), 2 bad input or a failed server, 3 a write failure.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["tools_list", "server_cmd"])))]
pub struct ImportArgs {
    /// Saved tools/list answers (the JSON-RPC response line or its result object); several
    /// files are its pages, in order.
    #[arg(long = "tools-list", value_name = "FILE", num_args = 1..)]
    tools_list: Vec<PathBuf>,
    /// A stdio MCP server to ask (`sh -c CMD`): initialize, then tools/list through every
    /// page. Its stderr passes through.
    #[arg(long, value_name = "CMD")]
    server_cmd: Option<String>,
    /// How long to wait for each of the server's answers, such as `30s`.
    #[arg(long, value_parser = super::fuzz::duration, default_value = "30s")]
    timeout: Duration,
    /// The folder receiving one contract folder per tool.
    #[arg(long, default_value = "schemas")]
    out: PathBuf,
    /// The folder receiving one corpus folder per tool [default: `corpora` beside --out].
    #[arg(long)]
    corpora: Option<PathBuf>,
}

pub fn run(args: ImportArgs) -> Result<Exit> {
    let list = match &args.server_cmd {
        Some(command) => read_server(command, args.timeout),
        None => read_files(&args.tools_list),
    }
    .map_err(error)?;
    let mut options = ImportOptions::new(&args.out);
    if let Some(corpora) = &args.corpora {
        options = options.corpora(corpora);
    }
    let tools = import(&list, &options).map_err(error)?;
    let mut text = String::new();
    for tool in &tools {
        let name = printable(&tool.name);
        match &tool.outcome {
            Outcome::Imported { contract, corpus } => text.push_str(&format!(
                "imported  {name}: {} (v1), corpus {}\n",
                contract.display(),
                corpus.display()
            )),
            Outcome::Updated {
                contract,
                from,
                to,
                load_error,
                certificate,
            } => {
                text.push_str(&format!(
                    "updated   {name}: {} v{from} -> v{to}\n",
                    contract.display()
                ));
                if let Some(e) = load_error {
                    let e = e.to_string();
                    text.push_str(&format!("  v{to} does not load: {}\n", printable(&e)));
                }
                match certificate {
                    Ok(c) => {
                        for line in
                            super::certify::human(c, &format!("v{from}"), &format!("v{to}")).lines()
                        {
                            text.push_str(&format!("  {}\n", printable(line)));
                        }
                    }
                    Err(e) => {
                        let e = e.to_string();
                        text.push_str(&format!("  certify: {}\n", printable(&e)));
                    }
                }
            }
            Outcome::Unchanged { contract, version } => text.push_str(&format!(
                "unchanged {name}: {} (v{version})\n",
                contract.display()
            )),
            Outcome::Skipped { reason } => {
                text.push_str(&format!("skipped   {name}: {}\n", printable(reason)));
            }
            Outcome::NoOutputSchema => text.push_str(&format!(
                "skipped   {name}: no outputSchema: cannot be guarded; the proxy refuses its \
                 calls unless --unguarded pass\n"
            )),
            Outcome::Refused { reason } => {
                text.push_str(&format!("refused   {name}: {}\n", printable(reason)));
            }
        }
        for finding in &tool.lint {
            text.push_str(&format!("  lint: {}\n", printable(&finding.to_string())));
        }
        for choice in &tool.choices {
            text.push_str(&format!("  chose: {}\n", printable(choice)));
        }
        for note in &tool.notes {
            text.push_str(&format!("  review: {}\n", printable(note)));
        }
    }
    let count = |word: &str| tools.iter().filter(|t| t.outcome.as_str() == word).count();
    text.push_str(&format!(
        "import: {} tools: {} imported, {} updated, {} unchanged, {} without outputSchema, {} skipped, {} refused\n",
        tools.len(),
        count("imported"),
        count("updated"),
        count("unchanged"),
        count("no-output-schema"),
        count("skipped"),
        count("refused"),
    ));
    super::print(&text)?;
    Ok(if tools.iter().any(|t| t.needs_attention()) {
        Exit::Findings
    } else {
        Exit::Success
    })
}

/// A write failure is Airlock's (exit 3); anything else is the input's (exit 2).
fn error(e: ImportError) -> anyhow::Error {
    match e {
        ImportError::Write { path, source } => super::WriteError {
            what: path.display().to_string(),
            source,
        }
        .into(),
        other => anyhow::Error::msg(other.to_string()),
    }
}
