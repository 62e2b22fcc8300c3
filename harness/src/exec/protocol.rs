//! The exec protocol of DESIGN.md: JSON Lines over stdin/stdout, one case line in, one
//! answer line out, in order. `serve` is the guard's side (`airlock guard`).

use airlock_guard::{Guard, Request, TransportError};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{self, BufRead, Read, Write};

/// Harness → adapter: one case.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseLine {
    /// The case id, echoed in the answer.
    pub case: String,
    /// The outstanding request (with `tool`).
    pub request: Request,
    /// The raw response, base64 (standard alphabet, padded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_b64: Option<String>,
    /// Or: the transport failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_error: Option<TransportError>,
}

/// Adapter → harness: the agent value for one case.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerLine {
    /// The case id it answers.
    pub case: String,
    /// Exactly what the agent would be given.
    pub agent: Value,
}

/// The longest case line `serve` reads: a body far past any contract's limit still fits,
/// and a longer line is answered with a protocol error instead of being buffered.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// How a serve loop went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeStats {
    /// Cases answered with an agent value.
    pub answered: u64,
    /// Lines that were not case lines (answered with `{"case":…,"error":…}`).
    pub malformed: u64,
}

/// Serve the exec protocol with `guards` (routed by the request's `tool`; with one guard
/// a request without `tool` goes to it) until `input` ends: every line gets exactly one
/// answer line, in order. Output is flushed whenever no further input is already
/// buffered, so a lock-step client never waits and a pipelining one is not slowed.
///
/// A line that is not a case (bad JSON, a request that is not one, both or neither of
/// `response_b64`/`transport_error`, invalid base64, over [`MAX_LINE`]) is answered with
/// `{"case": <id or null>, "error": "<reason>"}` and the loop goes on.
///
/// # Errors
///
/// Only I/O errors on `input` or `output`.
pub fn serve<R: Read, W: Write>(guards: &[Guard], input: R, output: W) -> io::Result<ServeStats> {
    let mut input = io::BufReader::with_capacity(64 * 1024, input);
    let mut output = io::BufWriter::new(output);
    let mut stats = ServeStats::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let (read, complete) = read_line(&mut input, &mut line)?;
        if read == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) && complete {
            continue;
        }
        let answer = if complete {
            answer(guards, &line)
        } else {
            Err((None, format!("line longer than {MAX_LINE} bytes")))
        };
        match answer {
            Ok(answer) => {
                serde_json::to_writer(&mut output, &answer)?;
                stats.answered += 1;
            }
            Err((case, reason)) => {
                let error = serde_json::json!({"case": case, "error": reason});
                serde_json::to_writer(&mut output, &error)?;
                stats.malformed += 1;
            }
        }
        output.write_all(b"\n")?;
        // Never block on input while an answer sits unflushed: flush unless the next
        // case line is already buffered.
        if !has_full_line(input.buffer()) {
            output.flush()?;
        }
    }
    output.flush()?;
    Ok(stats)
}

fn has_full_line(buffered: &[u8]) -> bool {
    buffered.contains(&b'\n')
}

/// Read one line (without its newline) of at most [`MAX_LINE`] bytes; a longer line is
/// consumed to its end and reported as incomplete.
fn read_line<R: BufRead>(input: &mut R, line: &mut Vec<u8>) -> io::Result<(usize, bool)> {
    let mut total = 0;
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            return Ok((total, line.len() <= MAX_LINE));
        }
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => (&buffer[..i], Some(i + 1)),
            None => (buffer, None),
        };
        if line.len() <= MAX_LINE {
            let room = MAX_LINE + 1 - line.len();
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        let used = done.unwrap_or(chunk.len());
        total += used;
        input.consume(used);
        if done.is_some() {
            return Ok((total, line.len() <= MAX_LINE));
        }
    }
}

type LineError = (Option<String>, String);

/// Base64 as the protocol writes it: the standard alphabet, padded (an unpadded or
/// non-canonical encoding is refused, as every other departure from the line's form).
const PADDED: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireCanonical),
);

/// The deepest case line read (a request's params nest inside it).
const LINE_MAX_DEPTH: usize = 256;

fn answer(guards: &[Guard], line: &[u8]) -> Result<AnswerLine, LineError> {
    // As strict as the guard: a repeated member (a second `response_b64`) would be read
    // one way here and another way by a lenient client.
    let value: Value = airlock_guard::parse(line, LINE_MAX_DEPTH)
        .map_err(|e| (None, format!("not strict JSON: {e}")))?;
    if !value.is_object() {
        return Err((None, "a case line is a JSON object".into()));
    }
    let case_id = value.get("case").and_then(Value::as_str).map(str::to_owned);
    let case: CaseLine = serde_json::from_value(value)
        .map_err(|e| (case_id.clone(), format!("not a case line: {e}")))?;
    let guard = match &case.request.tool {
        Some(tool) => guards.iter().find(|g| g.contract().tool() == tool),
        None if guards.len() == 1 => guards.first(),
        None => None,
    }
    .ok_or_else(|| {
        (
            case_id.clone(),
            match &case.request.tool {
                Some(tool) => format!("no contract served for tool {tool:?}"),
                None => "the request names no tool and several contracts are served".into(),
            },
        )
    })?;
    let admission = match (&case.response_b64, case.transport_error) {
        (Some(b64), None) => {
            let body = PADDED
                .decode(b64)
                .map_err(|e| (case_id.clone(), format!("response_b64 is not base64: {e}")))?;
            guard.admit(&case.request, &body)
        }
        (None, Some(error)) => guard.admit_transport_error(&case.request, error),
        _ => {
            return Err((
                case_id,
                "a case has exactly one of response_b64 and transport_error".into(),
            ))
        }
    };
    Ok(AnswerLine {
        case: case.case,
        agent: admission.agent().to_json(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_guard::Contract;

    fn guard() -> Guard {
        Guard::new(
            Contract::load(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../schemas/review_status"
            ))
            .unwrap(),
        )
    }

    #[test]
    fn case_lines_are_read_as_strictly_as_the_guard_reads() {
        let req = r#"{"tool":"review_status","request_id":"r","now":"2026-12-02T10:00:00Z"}"#;
        let b64 = base64::engine::general_purpose::STANDARD.encode(b"{}");
        let unpadded = b64.trim_end_matches('=');
        assert_ne!(unpadded, b64);
        for line in [
            format!(r#"["c1",{req},"{b64}",null]"#),
            format!(r#"{{"case":"c1","request":{req},"response_b64":"{unpadded}"}}"#),
            format!(
                r#"{{"case":"c1","request":{req},"response_b64":"{b64}","response_b64":"{b64}"}}"#
            ),
            format!(
                r#"{{"case":"c1","request":{},"response_b64":"{b64}"}}"#,
                req.replace("Z\"", "+25:00\"")
            ),
        ] {
            let mut out = Vec::new();
            let stats = serve(&[guard()], format!("{line}\n").as_bytes(), &mut out).unwrap();
            assert_eq!((stats.answered, stats.malformed), (0, 1), "{line}");
        }
    }

    #[test]
    fn every_line_gets_one_answer_in_order_even_when_malformed() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(
            br#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success","data":{"change_id":"CR-1042","decision":"approved","reviewed_by":"Ada"}}"#,
        );
        let req = r#"{"tool":"review_status","request_id":"req.J7q94MkP","params":{"change_id":"CR-1042"},"now":"2026-12-02T10:00:00Z"}"#;
        let input = format!(
            "{{\"case\":\"c1\",\"request\":{req},\"response_b64\":\"{b64}\"}}\nnot json\n{{\"case\":\"c3\",\"request\":{req},\"transport_error\":\"timeout\"}}\n"
        );
        let mut out = Vec::new();
        let stats = serve(&[guard()], input.as_bytes(), &mut out).unwrap();
        assert_eq!(
            stats,
            ServeStats {
                answered: 2,
                malformed: 1
            }
        );
        let lines: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["case"], "c1");
        assert_eq!(lines[0]["agent"]["outcome"], "success");
        assert_eq!(lines[1]["case"], Value::Null);
        assert_eq!(lines[2]["agent"]["error"]["code"], "UPSTREAM_UNAVAILABLE");
        assert_eq!(lines[2]["agent"]["error"]["retryable"], true);
    }

    #[test]
    fn a_case_for_an_unserved_tool_is_answered_with_the_tool_name_not_debug_text() {
        let req = r#"{"tool":"nope","request_id":"req.J7q94MkP","params":{},"now":"2026-12-02T10:00:00Z"}"#;
        let input =
            format!("{{\"case\":\"c1\",\"request\":{req},\"transport_error\":\"timeout\"}}\n");
        let mut out = Vec::new();
        serve(&[guard()], input.as_bytes(), &mut out).unwrap();
        let line: Value = serde_json::from_slice(out.trim_ascii_end()).unwrap();
        assert_eq!(line["error"], "no contract served for tool \"nope\"");
    }
}
