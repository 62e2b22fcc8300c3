//! The process exit codes of `airlock`, one enum for every command: the binary's, not
//! the library's (the library says what a run concluded, [`Conclusion`]).

use airlock_harness::Conclusion;

/// How `airlock` ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: all good (`admit`: admitted; `validate`: all valid; `check`: no findings).
    Success = 0,
    /// 1: the input was judged and failed (`admit`: rejected; `validate`: an instance is
    /// invalid; `check`: findings).
    Findings = 1,
    /// 2: bad usage, a broken contract or fixture, a missing file.
    Usage = 2,
    /// 3: Airlock itself failed, or could not write its output (a full disk,
    /// `/dev/full`; `guard`: stdout closed). A closed stdout of any other command (`|
    /// head`) is not a failure: the output stops, the exit code is the work's.
    Internal = 3,
    /// 4: `mcp proxy`: the MCP server exited (or closed its stdout) while the client was
    /// still connected; every pending request was answered with a JSON-RPC error.
    ServerExited = 4,
    /// 130 (128 + SIGINT): `check` (or `mcp proxy`) was interrupted; its adapters (the
    /// server) were killed first.
    Interrupted = 130,
    /// 143 (128 + SIGTERM): `check` (or `mcp proxy`) was terminated; its adapters (the
    /// server) were killed first.
    Terminated = 143,
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit as u8)
    }
}

impl From<Conclusion> for Exit {
    /// 0 clean, 1 findings, 2 contract errors.
    fn from(conclusion: Conclusion) -> Self {
        match conclusion {
            Conclusion::Clean => Exit::Success,
            Conclusion::Findings => Exit::Findings,
            Conclusion::ContractErrors => Exit::Usage,
        }
    }
}
