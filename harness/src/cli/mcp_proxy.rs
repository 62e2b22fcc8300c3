//! `airlock mcp proxy`: the stdio MCP proxy a host launches in place of the server.

use crate::cli::exit::Exit;
use airlock_guard::{Contract, Guard};
use airlock_harness::mcp::proxy::{
    Ending, Mode, Proxy, ProxyError, Unguarded, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_RECORD_MAX,
    MAX_MESSAGE_BYTES_CEILING,
};
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::PathBuf;

/// Launch SERVER_CMD and relay MCP (JSON-RPC lines) between it and this process's
/// stdin/stdout. Answers to `tools/call`s of contracted tools are judged by the tool's
/// contract: the client receives a fresh result (admitted) or the fixed failure
/// (`isError: true`), never the server's bytes. Exit 0 when the client closes stdin or
/// stops reading, 2 on a contract or usage error or a server that cannot be started, 3
/// when the audit file could not be written, 4 when the server exited while the client
/// was connected, 130/143 on SIGINT/SIGTERM (the server is killed first).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 the client closed stdin or stopped reading; 2 usage or \
contract error, or the server cannot be started; 3 the audit file could not be written; 4 the \
server exited while the client was connected; 130/143 SIGINT/SIGTERM (the server killed \
first). Reference: docs/mcp.md"
)]
pub struct ProxyArgs {
    /// A contract folder of an MCP tool (`[input] kind = "mcp"`); repeatable, one per tool.
    #[arg(long = "contract", value_name = "DIR")]
    contract: Vec<PathBuf>,
    /// A folder of contract folders (such as `schemas`, where `airlock mcp import` writes):
    /// every MCP contract in it (other kinds are skipped); repeatable.
    #[arg(long = "contracts", value_name = "DIR")]
    contracts: Vec<PathBuf>,
    /// enforce: the client gets the guard's result for guarded calls (default). shadow:
    /// the client gets the server's own answers; every guarded answer is still judged,
    /// audited and recorded, and what enforce would have changed is said on stderr.
    #[arg(long, value_enum, default_value_t = ModeArg::Enforce)]
    mode: ModeArg,
    /// Record every judged answer of a guarded call as a corpus fixture:
    /// DIR/TOOL/accepted/ (admitted) or DIR/TOOL/review/ (refused), each with its
    /// NAME.request.json; `airlock check` then runs on DIR/TOOL as the tool's corpus.
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// At most N recorded answers per tool in one session.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RECORD_MAX)]
    record_max: usize,
    /// A call of a tool with no contract: refused with the fixed failure (default), or
    /// passed unchanged (one stderr line per call).
    #[arg(long, value_enum, default_value_t = UnguardedArg::Refuse)]
    unguarded: UnguardedArg,
    /// Refuse the calls of a tool whose listed outputSchema differs from its contract, and
    /// answer that tools/list with a JSON-RPC error.
    #[arg(long)]
    strict_drift: bool,
    /// Append every guarded call's audit record (JSON lines) to FILE.
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// The bound on a line that answers no guarded call, in bytes (default 16 MiB, at most
    /// 1 GiB); answers to guarded calls are bounded by their contract's max_bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_MESSAGE_BYTES,
          value_parser = clap::value_parser!(u64).range(1..=MAX_MESSAGE_BYTES_CEILING))]
    max_message_bytes: u64,
    /// The MCP server: program and arguments, after `--` (run directly, no shell).
    #[arg(last = true, required = true, value_name = "SERVER_CMD")]
    server: Vec<OsString>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ModeArg {
    Enforce,
    Shadow,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum UnguardedArg {
    Refuse,
    Pass,
}

pub fn run(args: ProxyArgs) -> Result<Exit> {
    let mut dirs = args.contract.clone();
    for root in &args.contracts {
        dirs.extend(mcp_contracts_in(root)?);
    }
    if dirs.is_empty() && matches!(args.unguarded, UnguardedArg::Refuse) {
        anyhow::bail!(
            "usage: no contract: give --contract DIR or --contracts DIR (every call would be refused), or --unguarded pass to relay without guarding"
        );
    }
    // Each contract as it loads: the proxy's own rule (MCP contracts only, one per
    // tool), said with the folders.
    let mut folders = std::collections::HashMap::new();
    let guards = dirs
        .iter()
        .map(|dir| {
            let contract = Contract::load(dir)
                .with_context(|| format!("loading contract {}", dir.display()))?;
            Proxy::may_add(&folders, &contract).map_err(|e| match e {
                ProxyError::NotMcp { .. } => anyhow::anyhow!(
                    "contract {}: its input kind is not \"mcp\": the proxy judges MCP tools/call answers only (set `[input] kind = \"mcp\"` in its contract.toml)",
                    dir.display()
                ),
                ProxyError::DuplicateTool { tool } => anyhow::anyhow!(
                    "contracts {} and {}: two contracts for the tool {tool}; give one per tool",
                    folders.get(&tool).map_or_else(String::new, |d: &&PathBuf| d.display().to_string()),
                    dir.display(),
                ),
                other => other.into(),
            })?;
            folders.insert(contract.tool().to_owned(), dir);
            Ok(Guard::new(contract))
        })
        .collect::<Result<Vec<_>>>()?;
    let proxy = Proxy::new(guards)?;
    let mut proxy = proxy
        .unguarded(match args.unguarded {
            UnguardedArg::Refuse => Unguarded::Refuse,
            UnguardedArg::Pass => Unguarded::Pass,
        })
        .strict_drift(args.strict_drift)
        .mode(match args.mode {
            ModeArg::Enforce => Mode::Enforce,
            ModeArg::Shadow => Mode::Shadow,
        })
        .max_message_bytes(args.max_message_bytes);
    if let Some(dir) = &args.record {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the --record folder {}", dir.display()))?;
        proxy = proxy.record(dir, args.record_max);
    }
    if let Some(path) = &args.audit {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening the audit file {}", path.display()))?;
        proxy = proxy.audit(file);
    }
    stop_on_signals(&proxy)?;
    let (program, rest) = args.server.split_first().context("no server command")?;
    let mut server = std::process::Command::new(program);
    server.args(rest);
    // A process the server started and that left its group (`setsid`) is re-parented to
    // the proxy when the server dies, and killed with it at every way out.
    if let Err(e) = airlock_harness::exec::adopt_orphans() {
        errln!("airlock mcp proxy: warning: cannot adopt the server's orphaned processes: {e}");
    }
    let outcome = proxy.run(server, std::io::stdin(), std::io::stdout());
    airlock_harness::exec::reap_orphans();
    let outcome = outcome?;
    if outcome.audit_failed {
        // Said again at the end, whatever ended the session: records are missing.
        errln!(
            "airlock mcp proxy: the audit file could not be written: this session's audit is incomplete"
        );
    }
    Ok(match outcome.ending {
        Ending::Stopped(signal_hook::consts::SIGINT) => Exit::Interrupted,
        Ending::Stopped(_) => Exit::Terminated,
        // A lost audit outranks the server's exit: the operator must learn of it.
        _ if outcome.audit_failed => Exit::Internal,
        Ending::ServerExited => {
            errln!("airlock mcp proxy: the MCP server exited; pending requests were answered with an error");
            Exit::ServerExited
        }
        _ => Exit::Success,
    })
}

/// The MCP contract folders in `root` (its subfolders with a `contract.toml` whose
/// `[input] kind` is `mcp`), sorted; a subfolder that does not load is an error.
fn mcp_contracts_in(root: &std::path::Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(root)
        .with_context(|| format!("reading the --contracts folder {}", root.display()))?;
    let mut found = Vec::new();
    for entry in entries {
        let dir = entry
            .with_context(|| format!("reading the --contracts folder {}", root.display()))?
            .path();
        if dir.is_dir() && dir.join(airlock_guard::MANIFEST).is_file() {
            let contract = Contract::load(&dir)
                .with_context(|| format!("loading contract {}", dir.display()))?;
            if contract.input().mcp().is_some() {
                found.push(dir);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// SIGINT/SIGTERM stop the session: the server's process group is killed first.
#[cfg(unix)]
fn stop_on_signals(proxy: &Proxy) -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing the SIGINT/SIGTERM handler")?;
    let stop = proxy.stop_handle();
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            stop.stop(signal);
        }
    });
    Ok(())
}

#[cfg(not(unix))]
fn stop_on_signals(_proxy: &Proxy) -> Result<()> {
    Ok(())
}
