//! Out of process: [`ExecAdapter`] speaks the exec protocol to `sh -c CMD` in its own
//! process group, with a per-case timeout, bounded reads, and a restart after every crash,
//! hang or protocol violation; [`protocol`] is the other side (`airlock guard`).

use airlock_guard::Request;
use base64::Engine as _;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::ops::ControlFlow;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use crate::adapter::{Adapter, AdapterFailure, Answer};
use crate::cases::Upstream;

mod process;
pub mod protocol;

pub use process::{adopt_orphans, kill_all_adapters, reap_orphans, stopping};
use process::{forget, kill_group, live};

/// The longest answer line read from an external adapter; longer is a [`AdapterFailure::Flood`].
pub const MAX_ANSWER_LINE: usize = 1024 * 1024;

/// How many answer lines may wait unread before the adapter blocks on its pipe.
const QUEUED_LINES: usize = 16;

/// What the reader thread got of the adapter's next line.
enum Received {
    Text(Vec<u8>),
    Flood,
    Eof,
}

struct Running {
    child: Child,
    /// Case lines for the writer thread: the harness never blocks on a full pipe.
    writer: Option<mpsc::Sender<Vec<u8>>>,
    lines: Receiver<Received>,
    stderr_tail: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

/// An adapter in any language, over the exec protocol.
pub struct ExecAdapter {
    command: String,
    timeout: Duration,
    deadline: Option<Instant>,
    running: Option<Running>,
    next_case: u64,
    restarts: u32,
}

impl std::fmt::Debug for ExecAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecAdapter")
            .field("command", &self.command)
            .field("timeout", &self.timeout)
            .field("restarts", &self.restarts)
            .finish_non_exhaustive()
    }
}

impl ExecAdapter {
    /// An adapter run as `sh -c command`, each case answered within `timeout`. The
    /// process is started on the first case.
    pub fn new(command: impl Into<String>, timeout: Duration) -> Self {
        Self {
            command: command.into(),
            timeout,
            deadline: None,
            running: None,
            next_case: 0,
            restarts: 0,
        }
    }

    /// Wait for no answer past `at` (default: no bound), the end of the whole run: a
    /// wait cut short reads as a timeout, which the run does not count once it is past
    /// its bound.
    #[must_use]
    pub fn deadline(mut self, at: Instant) -> Self {
        self.deadline = Some(at);
        self
    }

    /// The per-case timeout, cut at the deadline.
    fn wait(&self) -> Duration {
        self.deadline.map_or(self.timeout, |at| {
            self.timeout
                .min(at.saturating_duration_since(Instant::now()))
        })
    }

    /// How often the adapter was restarted after a failure.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    fn start(&mut self) -> Result<&mut Running, AdapterFailure> {
        if self.running.is_none() {
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(&self.command)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            #[cfg(unix)]
            {
                use std::os::unix::process::CommandExt;
                command.process_group(0);
            }
            // Spawned and registered under the lock: a signal handler's kill either sees
            // this group or stops it from starting.
            let mut live = live();
            if live.stopping {
                return Err(AdapterFailure::Crash("airlock is stopping".into()));
            }
            let mut child = command.spawn().map_err(|e| {
                AdapterFailure::Crash(format!("could not start `sh -c {}`: {e}", self.command))
            })?;
            live.groups.push(child.id());
            drop(live);
            let stdin = child
                .stdin
                .take()
                .ok_or_else(|| AdapterFailure::Crash("no stdin".into()))?;
            let stdout = child
                .stdout
                .take()
                .ok_or_else(|| AdapterFailure::Crash("no stdout".into()))?;
            let stderr = child
                .stderr
                .take()
                .ok_or_else(|| AdapterFailure::Crash("no stderr".into()))?;
            let (tx, rx) = mpsc::sync_channel(QUEUED_LINES + WINDOW);
            thread::spawn(move || read_lines(stdout, &tx));
            let (writer, cases) = mpsc::channel::<Vec<u8>>();
            thread::spawn(move || write_lines(stdin, &cases));
            let stderr_tail = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let tail = std::sync::Arc::clone(&stderr_tail);
            thread::spawn(move || keep_tail(stderr, &tail));
            self.running = Some(Running {
                child,
                writer: Some(writer),
                lines: rx,
                stderr_tail,
            });
        }
        self.running
            .as_mut()
            .ok_or_else(|| AdapterFailure::Crash("adapter not running".into()))
    }

    /// Kill the whole process group and forget the process; the next case restarts it.
    fn kill(&mut self) -> String {
        let Some(mut running) = self.running.take() else {
            return String::new();
        };
        kill_group(running.child.id());
        let _ = running.child.kill();
        let status = running
            .child
            .wait()
            .map(|s| s.to_string())
            .unwrap_or_default();
        forget(running.child.id());
        self.restarts += 1;
        let tail = running
            .stderr_tail
            .lock()
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        let tail = tail.trim();
        if tail.is_empty() {
            status
        } else {
            format!(
                "{status}; stderr ends: {}",
                tail.lines().last().unwrap_or_default()
            )
        }
    }

    /// Send one case line; its case id.
    fn send(&mut self, request: &Request, upstream: &Upstream) -> Result<String, AdapterFailure> {
        let case_id = format!("c-{:06}", self.next_case);
        self.next_case += 1;
        let mut line = serde_json::json!({"case": case_id, "request": request});
        match upstream {
            Upstream::Body(bytes) => {
                line["response_b64"] =
                    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
            }
            Upstream::Transport(error) => {
                line["transport_error"] = Value::String(error.as_str().into())
            }
        }
        let mut text = line.to_string().into_bytes();
        text.push(b'\n');
        let running = self.start()?;
        // A closed writer means the adapter is gone; the answer wait reports it.
        if let Some(writer) = &running.writer {
            let _ = writer.send(text);
        }
        Ok(case_id)
    }

    /// Wait for the answer to `case_id`: the exact bytes of its `agent` member.
    fn receive(&mut self, case_id: &str) -> Result<Answer, AdapterFailure> {
        let timeout = self.wait();
        let running = self.start()?;
        let answer = match running.lines.recv_timeout(timeout) {
            Ok(Received::Text(answer)) => answer,
            Ok(Received::Flood) => return Err(AdapterFailure::Flood),
            Ok(Received::Eof) | Err(RecvTimeoutError::Disconnected) => {
                return Err(AdapterFailure::Crash("exited without answering".into()));
            }
            Err(RecvTimeoutError::Timeout) => return Err(AdapterFailure::Timeout),
        };
        read_answer_line(&answer, case_id).map(Answer::Bytes)
    }
    /// After a failure the stream is not trustworthy: kill, and add the exit status to
    /// a crash report.
    fn fail(&mut self, failure: AdapterFailure) -> AdapterFailure {
        let status = self.kill();
        match failure {
            AdapterFailure::Crash(what) if !status.is_empty() => {
                AdapterFailure::Crash(format!("{what} ({status})"))
            }
            other => other,
        }
    }
}

/// Cases an [`ExecAdapter`] keeps in flight before it waits for answers.
pub const WINDOW: usize = 64;

impl Adapter for ExecAdapter {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let result = self
            .send(request, upstream)
            .and_then(|id| self.receive(&id));
        result.map_err(|failure| self.fail(failure))
    }

    /// Pipelined: up to [`WINDOW`] cases in flight, answers read in order, each within the
    /// per-case timeout. After a failure the adapter is restarted and the cases that were
    /// in flight are sent again.
    fn answers(
        &mut self,
        cases: &[(&Request, &Upstream)],
        each: &mut dyn FnMut(usize, Result<Answer, AdapterFailure>) -> ControlFlow<()>,
    ) {
        let mut in_flight = std::collections::VecDeque::new();
        let mut next_send = 0;
        let mut next_read = 0;
        while next_read < cases.len() {
            let mut failed_send = None;
            while next_send < cases.len() && next_send - next_read < WINDOW {
                let (request, upstream) = cases[next_send];
                match self.send(request, upstream) {
                    Ok(id) => in_flight.push_back(id),
                    Err(failure) => {
                        failed_send = Some(failure);
                        break;
                    }
                }
                next_send += 1;
            }
            let result = match (failed_send, in_flight.pop_front()) {
                (Some(failure), _) => Err(failure),
                (None, Some(id)) => self.receive(&id),
                (None, None) => Err(AdapterFailure::Crash("no case in flight".into())),
            };
            let result = result.map_err(|failure| {
                in_flight.clear();
                next_send = next_read + 1;
                self.fail(failure)
            });
            let flow = each(next_read, result);
            next_read += 1;
            if flow.is_break() {
                if !in_flight.is_empty() {
                    // Answers still coming would be read as answers to later cases.
                    self.kill();
                }
                return;
            }
        }
    }

    fn finish(&mut self) -> Vec<AdapterFailure> {
        let Some(mut running) = self.running.take() else {
            return Vec::new();
        };
        let mut failures = Vec::new();
        running.writer.take();
        match running.lines.recv_timeout(self.wait()) {
            Ok(Received::Text(extra)) => failures.push(AdapterFailure::Protocol(format!(
                "output after the last case: {}",
                preview(&extra)
            ))),
            Ok(Received::Flood) => failures.push(AdapterFailure::Flood),
            Ok(Received::Eof) | Err(RecvTimeoutError::Disconnected) => {}
            Err(RecvTimeoutError::Timeout) => failures.push(AdapterFailure::Timeout),
        }
        kill_group(running.child.id());
        let _ = running.child.wait();
        forget(running.child.id());
        failures
    }
}

impl Drop for ExecAdapter {
    fn drop(&mut self) {
        if self.running.is_some() {
            let _ = self.kill();
        }
    }
}

/// One answer line of the exec protocol, `{"case": ID, "agent": VALUE}`, read without
/// decoding the agent value: its exact bytes are what the agent receives and are judged
/// with the strict reader. The line itself must have exactly these two members, once
/// each.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAnswerLine<'a> {
    case: String,
    #[serde(borrow)]
    agent: &'a serde_json::value::RawValue,
}

/// The agent bytes of the answer line to `case_id`.
fn read_answer_line(line: &[u8], case_id: &str) -> Result<Vec<u8>, AdapterFailure> {
    let parsed: RawAnswerLine<'_> = serde_json::from_slice(line).map_err(|e| {
        AdapterFailure::Protocol(format!(
            "answer must be one JSON object {{\"case\", \"agent\"}} ({}): {}",
            e.to_string().split(" at line").next().unwrap_or_default(),
            preview(line)
        ))
    })?;
    if parsed.case != case_id {
        return Err(AdapterFailure::Protocol(format!(
            "answer for case {:?} where {case_id:?} was expected (out of order, repeated or missing)",
            // The adapter's text: cut like every other quote of it.
            crate::base::report::clip(&parsed.case, 120)
        )));
    }
    Ok(parsed.agent.get().as_bytes().to_vec())
}

fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(120)]).into_owned();
    if bytes.len() > 120 {
        format!("{text}…")
    } else {
        text
    }
}

/// Read stdout line by line, never holding more than [`MAX_ANSWER_LINE`] bytes of one
/// line; a longer line is reported once and the reader stops.
fn read_lines(stdout: impl Read, tx: &mpsc::SyncSender<Received>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let mut limited = (&mut reader).take(MAX_ANSWER_LINE as u64 + 1);
        match limited.read_until(b'\n', &mut line) {
            Ok(0) => {
                let _ = tx.send(Received::Eof);
                return;
            }
            Ok(_) if line.last() == Some(&b'\n') => {
                line.pop();
                if tx.send(Received::Text(line)).is_err() {
                    return;
                }
            }
            Ok(_) if line.len() > MAX_ANSWER_LINE => {
                let _ = tx.send(Received::Flood);
                // Drain and discard the rest so the adapter is never blocked on its pipe
                // while it is being killed.
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                return;
            }
            Ok(_) => {
                // A last line without newline, then end of output.
                let _ = tx.send(Received::Text(line));
                let _ = tx.send(Received::Eof);
                return;
            }
            Err(_) => {
                let _ = tx.send(Received::Eof);
                return;
            }
        }
    }
}

/// Write case lines to the adapter's stdin until the channel closes or the pipe breaks;
/// closing the channel closes stdin.
fn write_lines(mut stdin: ChildStdin, cases: &Receiver<Vec<u8>>) {
    while let Ok(line) = cases.recv() {
        let mut batch = line;
        // Coalesce what is already queued into one write.
        while let Ok(more) = cases.try_recv() {
            batch.extend_from_slice(&more);
        }
        if stdin
            .write_all(&batch)
            .and_then(|()| stdin.flush())
            .is_err()
        {
            return;
        }
    }
}

/// Keep the last 4 KiB of stderr for crash reports; discard the rest.
fn keep_tail(stderr: impl Read, tail: &std::sync::Mutex<Vec<u8>>) {
    let mut reader = BufReader::new(stderr);
    let mut chunk = [0u8; 4096];
    while let Ok(n) = reader.read(&mut chunk) {
        if n == 0 {
            return;
        }
        if let Ok(mut t) = tail.lock() {
            t.extend_from_slice(&chunk[..n]);
            let excess = t.len().saturating_sub(4096);
            t.drain(..excess);
        }
    }
}
