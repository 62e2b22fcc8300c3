//! The exec protocol (docs/exec-protocol.md), the adapter's side: `airlock check
//! --adapter-cmd "ci-connector --exec-protocol"` sends one case line per case (the request
//! and the upstream's bytes or transport error) and reads one answer line back. The
//! bytes go through [`Judge::replay`], the path the HTTP and command adapters take.

use airlock_guard::{Request, TransportError};
use base64::Engine as _;
use serde::Deserialize;
use std::io::{self, BufRead, Read, Write};

use crate::{ConnectorError, Judge};

/// The longest case line read: a body far past any contract's limit, base64, still fits.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// One case from the harness.
#[derive(Debug, Deserialize)]
struct CaseLine {
    case: String,
    request: Request,
    #[serde(default)]
    response_b64: Option<String>,
    #[serde(default)]
    transport_error: Option<TransportError>,
}

/// Why serving stopped early.
#[derive(Debug)]
pub enum ServeError {
    /// Reading the cases or writing the answers failed.
    Io(io::Error),
    /// A line that is not a case this adapter serves (the harness and the adapter
    /// disagree on the protocol): `line` is its 1-based number.
    Protocol {
        /// The line number.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// An audit record could not be written.
    Audit(io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Io(e) => write!(f, "exec protocol I/O: {e}"),
            ServeError::Protocol { line, reason } => write!(f, "case line {line}: {reason}"),
            ServeError::Audit(e) => write!(f, "writing the audit record: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Answer every case line of `input` on `output`, in order, flushing each answer; the
/// judge is chosen by the request's `tool` (or the only one when it names none).
///
/// # Errors
///
/// I/O errors, a line that is not a case (the protocol is broken: stop rather than
/// guess), an audit record that could not be written.
pub fn serve(
    judges: &[&Judge],
    mut input: impl BufRead,
    mut output: impl Write,
) -> Result<u64, ServeError> {
    let mut answered = 0;
    let mut number = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        number += 1;
        // Bounded: at most MAX_LINE + 1 bytes of one line are held.
        let read = Read::by_ref(&mut input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(ServeError::Io)?;
        if read == 0 {
            return Ok(answered);
        }
        let protocol = |reason: String| ServeError::Protocol {
            line: number,
            reason,
        };
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE {
            return Err(protocol(format!("longer than {MAX_LINE} bytes")));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let case: CaseLine =
            serde_json::from_slice(&line).map_err(|e| protocol(format!("not a case line: {e}")))?;
        let judge = match &case.request.tool {
            Some(tool) => judges.iter().find(|j| j.guard().contract().tool() == tool),
            None if judges.len() == 1 => judges.first(),
            None => None,
        }
        .ok_or_else(|| {
            protocol(format!(
                "no contract served for tool {:?}",
                case.request.tool
            ))
        })?;
        let body;
        let upstream = match (&case.response_b64, case.transport_error) {
            (Some(b64), None) => {
                body = base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| protocol(format!("response_b64: {e}")))?;
                Ok(body.as_slice())
            }
            (None, Some(error)) => Err(error),
            _ => {
                return Err(protocol(
                    "exactly one of response_b64 and transport_error".into(),
                ))
            }
        };
        let admission = judge.replay(&case.request, upstream).map_err(|e| match e {
            ConnectorError::Audit(e) => ServeError::Audit(e),
            other => protocol(other.to_string()),
        })?;
        let answer = serde_json::json!({"case": case.case, "agent": admission.agent().to_json()});
        serde_json::to_writer(&mut output, &answer).map_err(|e| ServeError::Io(e.into()))?;
        output.write_all(b"\n").map_err(ServeError::Io)?;
        output.flush().map_err(ServeError::Io)?;
        answered += 1;
    }
}
