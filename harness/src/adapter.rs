//! Adapters under test. In process: anything implementing [`Adapter`] (the guard itself,
//! or an adapter crate's own code). Out of process: [`ExecAdapter`] speaks the exec
//! protocol to `sh -c CMD` in its own process group, with a per-case timeout, bounded
//! reads, and a restart after every crash, hang or protocol violation.

use airlock_guard::{Guard, Request};
use base64::Engine as _;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::ops::ControlFlow;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use crate::cases::Upstream;

/// Why an adapter gave no agent value for a case: each is a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdapterFailure {
    /// It died (or panicked, in process).
    Crash(String),
    /// It did not answer within the per-case timeout.
    Timeout,
    /// It answered with something that is not a protocol line for this case.
    Protocol(String),
    /// It wrote a line longer than the harness reads.
    Flood,
}

/// An adapter under test: given the request and what the upstream did, the agent value.
///
/// ```
/// use airlock_harness::adapter::{Adapter, AdapterFailure};
/// use airlock_harness::cases::Upstream;
/// use airlock_guard::{Guard, Request};
/// use serde_json::Value;
///
/// /// An adapter crate's adapter: its own code around the guard.
/// struct MyAdapter(Guard);
///
/// impl Adapter for MyAdapter {
///     fn agent_value(&mut self, request: &Request, upstream: &Upstream) -> Result<Value, AdapterFailure> {
///         Ok(match upstream {
///             Upstream::Body(bytes) => self.0.admit(request, bytes).agent().to_json(),
///             Upstream::Transport(e) => self.0.admit_transport_error(request, *e).agent().to_json(),
///         })
///     }
/// }
/// ```
pub trait Adapter {
    /// The agent value for one case.
    ///
    /// # Errors
    ///
    /// When the adapter crashed, hung or broke the protocol.
    fn agent_value(
        &mut self,
        request: &Request,
        upstream: &Upstream,
    ) -> Result<Value, AdapterFailure>;

    /// The agent values for several cases, handed to `each` in order with the case's
    /// index, until `each` breaks. The default asks one by one; an adapter across a pipe
    /// overrides it to keep several cases in flight.
    fn agent_values(
        &mut self,
        cases: &[(&Request, &Upstream)],
        each: &mut dyn FnMut(usize, Result<Value, AdapterFailure>) -> ControlFlow<()>,
    ) {
        for (index, (request, upstream)) in cases.iter().enumerate() {
            if each(index, self.agent_value(request, upstream)).is_break() {
                return;
            }
        }
    }

    /// Called after the last case: report anything the adapter did after it (extra
    /// output, a crash on close). Default: nothing.
    fn finish(&mut self) -> Vec<AdapterFailure> {
        Vec::new()
    }
}

/// The guard as the adapter under test: one guard per contract, routed by the request's
/// `tool` (or the only contract when the request names none).
#[derive(Debug)]
pub struct GuardAdapter {
    guards: HashMap<String, Guard>,
}

impl GuardAdapter {
    /// An adapter serving these guards.
    pub fn new(guards: impl IntoIterator<Item = Guard>) -> Self {
        Self {
            guards: guards
                .into_iter()
                .map(|g| (g.contract().tool().to_owned(), g))
                .collect(),
        }
    }

    /// The guard for `request`.
    pub fn route(&self, request: &Request) -> Option<&Guard> {
        match &request.tool {
            Some(tool) => self.guards.get(tool),
            None if self.guards.len() == 1 => self.guards.values().next(),
            None => None,
        }
    }
}

impl Adapter for GuardAdapter {
    fn agent_value(
        &mut self,
        request: &Request,
        upstream: &Upstream,
    ) -> Result<Value, AdapterFailure> {
        let guard = self.route(request).ok_or_else(|| {
            AdapterFailure::Protocol(match &request.tool {
                Some(tool) => format!("no contract for tool {tool:?}"),
                None => "the request names no tool and several contracts are served".into(),
            })
        })?;
        Ok(match upstream {
            Upstream::Body(bytes) => guard.admit(request, bytes).agent().to_json(),
            Upstream::Transport(error) => guard
                .admit_transport_error(request, *error)
                .agent()
                .to_json(),
        })
    }
}

/// The longest answer line read from an external adapter; longer is a [`AdapterFailure::Flood`].
pub const MAX_ANSWER_LINE: usize = 1024 * 1024;

/// How many answer lines may wait unread before the adapter blocks on its pipe.
const QUEUED_LINES: usize = 16;

enum Line {
    Text(Vec<u8>),
    Flood,
    Eof,
}

struct Running {
    child: Child,
    /// Case lines for the writer thread: the harness never blocks on a full pipe.
    writer: Option<mpsc::Sender<Vec<u8>>>,
    lines: Receiver<Line>,
    stderr_tail: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

/// An adapter in any language, over the exec protocol.
pub struct ExecAdapter {
    command: String,
    timeout: Duration,
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
            running: None,
            next_case: 0,
            restarts: 0,
        }
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
            let mut child = command.spawn().map_err(|e| {
                AdapterFailure::Crash(format!("could not start `sh -c {}`: {e}", self.command))
            })?;
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
        #[cfg(unix)]
        if let Some(pid) = rustix::process::Pid::from_raw(running.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = running.child.kill();
        let status = running
            .child
            .wait()
            .map(|s| s.to_string())
            .unwrap_or_default();
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

    /// Wait for the answer to `case_id`.
    fn receive(&mut self, case_id: &str) -> Result<Value, AdapterFailure> {
        let timeout = self.timeout;
        let running = self.start()?;
        let answer = match running.lines.recv_timeout(timeout) {
            Ok(Line::Text(answer)) => answer,
            Ok(Line::Flood) => return Err(AdapterFailure::Flood),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {
                return Err(AdapterFailure::Crash("exited without answering".into()));
            }
            Err(RecvTimeoutError::Timeout) => return Err(AdapterFailure::Timeout),
        };
        let parsed: Value = serde_json::from_slice(&answer).map_err(|_| {
            AdapterFailure::Protocol(format!("answer is not JSON: {}", preview(&answer)))
        })?;
        let echoed = parsed.get("case").and_then(Value::as_str);
        if echoed != Some(case_id) {
            return Err(AdapterFailure::Protocol(format!(
                "answer for case {echoed:?} where {case_id:?} was expected (out of order, repeated or missing)"
            )));
        }
        let keys: Vec<&str> = parsed
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        match parsed.get("agent") {
            Some(agent) if keys.len() == 2 => Ok(agent.clone()),
            _ => Err(AdapterFailure::Protocol(format!(
                "answer must be {{\"case\", \"agent\"}}, found members {keys:?}"
            ))),
        }
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
    fn agent_value(
        &mut self,
        request: &Request,
        upstream: &Upstream,
    ) -> Result<Value, AdapterFailure> {
        let result = self
            .send(request, upstream)
            .and_then(|id| self.receive(&id));
        result.map_err(|failure| self.fail(failure))
    }

    /// Pipelined: up to [`WINDOW`] cases in flight, answers read in order, each within the
    /// per-case timeout. After a failure the adapter is restarted and the cases that were
    /// in flight are sent again.
    fn agent_values(
        &mut self,
        cases: &[(&Request, &Upstream)],
        each: &mut dyn FnMut(usize, Result<Value, AdapterFailure>) -> ControlFlow<()>,
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
        match running.lines.recv_timeout(self.timeout) {
            Ok(Line::Text(extra)) => failures.push(AdapterFailure::Protocol(format!(
                "output after the last case: {}",
                preview(&extra)
            ))),
            Ok(Line::Flood) => failures.push(AdapterFailure::Flood),
            Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => {}
            Err(RecvTimeoutError::Timeout) => failures.push(AdapterFailure::Timeout),
        }
        #[cfg(unix)]
        if let Some(pid) = rustix::process::Pid::from_raw(running.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = running.child.wait();
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
fn read_lines(stdout: impl Read, tx: &mpsc::SyncSender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let mut limited = (&mut reader).take(MAX_ANSWER_LINE as u64 + 1);
        match limited.read_until(b'\n', &mut line) {
            Ok(0) => {
                let _ = tx.send(Line::Eof);
                return;
            }
            Ok(_) if line.last() == Some(&b'\n') => {
                line.pop();
                if tx.send(Line::Text(line)).is_err() {
                    return;
                }
            }
            Ok(_) if line.len() > MAX_ANSWER_LINE => {
                let _ = tx.send(Line::Flood);
                // Drain and discard the rest so the adapter is never blocked on its pipe
                // while it is being killed.
                let _ = std::io::copy(&mut reader, &mut std::io::sink());
                return;
            }
            Ok(_) => {
                // A last line without newline, then end of output.
                let _ = tx.send(Line::Text(line));
                let _ = tx.send(Line::Eof);
                return;
            }
            Err(_) => {
                let _ = tx.send(Line::Eof);
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
