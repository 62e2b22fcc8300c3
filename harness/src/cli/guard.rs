//! `airlock guard`: serve the exec protocol with the guard, as a sidecar.

use crate::cli::exit::Exit;
use airlock_guard::{Contract, Guard};
use airlock_harness::check::discover;
use airlock_harness::exec::protocol::serve;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Serve the exec protocol (JSON Lines on stdin/stdout) with the guard until stdin
/// closes. Cases are routed to a contract by their request's `tool`. Exit 0 when stdin
/// ends, 2 on a contract error, 3 when stdout is closed or cannot be written (serving
/// stops at the first failed write; the rest of the input is not read).
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
    let stats = serve(&guards, std::io::stdin().lock(), protocol_output()?).map_err(|source| {
        super::WriteError {
            what: "the exec protocol (stdin/stdout)".into(),
            source,
        }
    })?;
    if stats.malformed > 0 {
        errln!(
            "airlock guard: {} malformed line(s) answered with an error",
            stats.malformed
        );
    }
    Ok(Exit::Success)
}

/// Stdout for the protocol stream: a duplicate of the descriptor, written without
/// Rust's stdout buffer (which would swallow a closed descriptor's errors), so that the
/// first failed write ends serving.
///
/// A stdout closed before the start (`airlock guard >&-`) was replaced by `/dev/null`,
/// opened read-write, by Rust's runtime: every answer would vanish, so that is refused
/// too (a shell's `>/dev/null` opens it write-only and is served).
#[cfg(unix)]
fn protocol_output() -> Result<std::fs::File, super::WriteError> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let closed = |source| super::WriteError {
        what: "stdout".into(),
        source,
    };
    let fd = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(closed)?;
    let file = std::fs::File::from(fd);
    let dev_null = file.metadata().is_ok_and(|m| {
        m.file_type().is_char_device()
            && m.rdev() == std::fs::metadata("/dev/null").map_or(u64::MAX, |n| n.rdev())
    });
    let read_write =
        rustix::fs::fcntl_getfl(&file).is_ok_and(|flags| flags.contains(rustix::fs::OFlags::RDWR));
    if dev_null && read_write {
        return Err(closed(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "stdout is closed: the answers would be lost",
        )));
    }
    Ok(file)
}

#[cfg(not(unix))]
fn protocol_output() -> Result<std::io::Stdout, super::WriteError> {
    Ok(std::io::stdout())
}
