//! Arguments of each subcommand, and how each runs. Only this layer prints, and it
//! prints through [`print()`]: a closed stdout ends the output quietly, any other write
//! error is a [`WriteError`] (exit 3).

use std::fmt;
use std::io::{self, Write};

/// `println!` through [`print()`]: `outln!("…", args)?`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::print(&format!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!` that never panics: a closed or broken stderr loses the note, never the
/// exit code the work decided (`eprintln!` panics there, and the panic became exit 3).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` that never panics (see [`errln!`]).
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

pub mod admit;
pub mod certify;
pub mod check;
pub mod exit;
pub mod fuzz;
pub mod guard;
pub mod init;
pub mod lint;
pub mod mcp;
pub mod mcp_import;
pub mod mcp_proxy;
pub mod mutate;
pub mod validate;

/// Output that could not be written (a full disk, `/dev/full`, an unwritable report
/// file): Airlock's own failure to deliver its result, exit 3, never "usage".
#[derive(Debug)]
pub struct WriteError {
    /// What was being written: `stdout`, or the file's path.
    pub what: String,
    /// Why it failed.
    pub source: io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "writing {}: {}", self.what, self.source)
    }
}

/// The I/O error is part of the message, so it is not a `source` as well: an error chain
/// printed whole would say it twice.
impl std::error::Error for WriteError {}

/// Write `text` to stdout and flush. A closed stdout (its reader went away, as with
/// `| head -1`) is not an error: the rest of the output is dropped and the command ends
/// with the exit code its work decided.
///
/// # Errors
///
/// Any other write error (`/dev/full`).
pub fn print(text: &str) -> Result<(), WriteError> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(WriteError {
            what: "stdout".into(),
            source,
        }),
    }
}

/// Write a whole file, naming it in the error.
///
/// # Errors
///
/// When it cannot be written.
pub fn write_file(path: &std::path::Path, bytes: impl AsRef<[u8]>) -> Result<(), WriteError> {
    std::fs::write(path, bytes).map_err(|source| WriteError {
        what: path.display().to_string(),
        source,
    })
}

/// `FORMAT=PATH` of a `--report` flag, the format one of `F`'s values.
pub(crate) fn format_and_path<F: clap::ValueEnum>(
    text: &str,
) -> Result<(F, std::path::PathBuf), String> {
    let (format, path) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected FORMAT=PATH, such as json=report.json"))?;
    let format = F::from_str(format, true).map_err(|_| {
        let names: Vec<String> = F::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_owned()))
            .collect();
        format!("{format:?} is not a format here: {}", names.join(", "))
    })?;
    if path.is_empty() {
        return Err(format!("{text:?}: the path is empty"));
    }
    Ok((format, std::path::PathBuf::from(path)))
}

/// On SIGINT or SIGTERM: kill every adapter's process group and adopted descendant, then
/// exit 130 or 143 without a report. `command` names the subcommand in the note.
#[cfg(unix)]
pub(crate) fn stop_on_signals(command: &'static str) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use signal_hook::consts::{SIGINT, SIGTERM};
    use std::io::Write as _;
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing the SIGINT/SIGTERM handler")?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            airlock_harness::exec::kill_all_adapters();
            let (exit, name) = if signal == SIGINT {
                (crate::cli::exit::Exit::Interrupted, "SIGINT")
            } else {
                (crate::cli::exit::Exit::Terminated, "SIGTERM")
            };
            // (A closed stderr must not stop the exit: no eprintln! panic here.)
            let _ = writeln!(
                std::io::stderr(),
                "airlock {command}: stopped by {name}; the adapters were killed"
            );
            std::process::exit(exit as i32);
        }
    });
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn stop_on_signals(_command: &'static str) -> anyhow::Result<()> {
    Ok(())
}
