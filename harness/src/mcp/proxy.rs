//! `airlock mcp proxy`: a stdio MCP proxy between a host (the client) and a server. Every
//! line passes unchanged except the answers to guarded `tools/call`s, which the client
//! only ever receives as a fresh result built by the guard; nothing from a rejected answer
//! reaches it. Lines are read under a bound: an over-long one is never held whole.

use airlock_guard::{
    jiff::Timestamp, AgentValue, AuditRecord, Guard, Request, TransportError, Verdict,
};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::wire::{read_line_onto, scan, skip_line, Line};
use crate::report::printable;

/// The default bound on a line that answers no guarded call (`--max-message-bytes`).
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 16 * 1024 * 1024;

/// The largest `--max-message-bytes`.
pub const MAX_MESSAGE_BYTES_CEILING: u64 = 1024 * 1024 * 1024;

/// How long the server may take to exit after its stdin is closed before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How often outstanding calls are checked against their deadline.
const TICK: Duration = Duration::from_millis(50);

/// The JSON-RPC error a pending request gets when the server is gone.
const SERVER_EXITED: &str = "airlock: the MCP server exited";

/// The longest stderr note (a rejection's diagnostic, a name quoted from the wire).
const NOTE_CHARS: usize = 400;

/// What the proxy does with a `tools/call` of a tool that has no contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unguarded {
    /// Answer the client with the fixed failure; the server never sees the call (default).
    #[default]
    Refuse,
    /// Forward the call and pass its answer unchanged (one stderr line per call).
    Pass,
}

/// Why a proxy could not be set up or started.
#[derive(Debug)]
#[non_exhaustive]
pub enum ProxyError {
    /// A contract whose input kind is not `mcp`.
    NotMcp {
        /// The contract's tool.
        tool: String,
    },
    /// Two contracts for one tool name.
    DuplicateTool {
        /// The tool.
        tool: String,
    },
    /// No contract at all.
    NoContract,
    /// The server could not be started.
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyError::NotMcp { tool } => write!(
                f,
                "contract {tool}: its input kind is not \"mcp\" (set `[input] kind = \"mcp\"` in its contract.toml; the proxy judges MCP tools/call answers only)"
            ),
            ProxyError::DuplicateTool { tool } => {
                write!(f, "two contracts for the tool {tool}: give one per tool")
            }
            ProxyError::NoContract => write!(f, "no contract: give at least one --contract"),
            ProxyError::Spawn { program, .. } => write!(f, "starting the MCP server {program}"),
        }
    }
}

impl std::error::Error for ProxyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProxyError::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// How a proxy session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ending {
    /// The client closed its side (stdin EOF); the server was closed, then killed if it
    /// did not exit within about 2 s.
    ClientClosed,
    /// The client stopped reading (its stdout closed); the server was killed.
    ClientGone,
    /// The server exited (or closed its stdout) while the client was still connected; every
    /// pending request was answered with a JSON-RPC error.
    ServerExited,
    /// Stopped from outside ([`StopHandle::stop`], SIGINT/SIGTERM); the server was killed.
    Stopped(i32),
}

/// What a session did, besides how it ended.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// How it ended.
    pub ending: Ending,
    /// An audit record could not be written (the rest of the session went on without).
    pub audit_failed: bool,
}

/// Stops a running session from another thread (a signal handler).
#[derive(Debug, Clone)]
pub struct StopHandle(Sender<Event>);

impl StopHandle {
    /// End the session: the server is killed and [`Proxy::run`] returns
    /// [`Ending::Stopped`] with `signal`.
    pub fn stop(&self, signal: i32) {
        let _ = self.0.send(Event::Stop(signal));
    }
}

enum Event {
    ClientEof,
    ClientGone,
    ServerInputClosed,
    ServerEof,
    Stop(i32),
}

/// A stdio MCP proxy guarding the tools of its contracts.
pub struct Proxy {
    guards: HashMap<String, Guard>,
    unguarded: Unguarded,
    strict_drift: bool,
    max_message_bytes: usize,
    audit: Option<Box<dyn Write + Send>>,
    log: Box<dyn Write + Send>,
    events: (Sender<Event>, Receiver<Event>),
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("tools", &self.guards.keys().collect::<BTreeSet<_>>())
            .field("unguarded", &self.unguarded)
            .field("strict_drift", &self.strict_drift)
            .field("max_message_bytes", &self.max_message_bytes)
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A proxy guarding the tools of `guards`.
    ///
    /// # Errors
    ///
    /// A guard whose contract is not `kind = "mcp"`, two guards for one tool, no guard.
    pub fn new(guards: Vec<Guard>) -> Result<Self, ProxyError> {
        if guards.is_empty() {
            return Err(ProxyError::NoContract);
        }
        let mut by_tool = HashMap::new();
        for guard in guards {
            let tool = guard.contract().tool().to_owned();
            if guard.contract().input().mcp().is_none() {
                return Err(ProxyError::NotMcp { tool });
            }
            if by_tool.insert(tool.clone(), guard).is_some() {
                return Err(ProxyError::DuplicateTool { tool });
            }
        }
        Ok(Self {
            guards: by_tool,
            unguarded: Unguarded::default(),
            strict_drift: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES as usize,
            audit: None,
            log: Box::new(io::stderr()),
            events: mpsc::channel(),
        })
    }

    /// Calls of tools without a contract (default [`Unguarded::Refuse`]).
    #[must_use]
    pub fn unguarded(mut self, unguarded: Unguarded) -> Self {
        self.unguarded = unguarded;
        self
    }

    /// Refuse the calls of a tool whose listed `outputSchema` differs from its contract,
    /// and answer such a `tools/list` with a JSON-RPC error (default off: reported only).
    #[must_use]
    pub fn strict_drift(mut self, yes: bool) -> Self {
        self.strict_drift = yes;
        self
    }

    /// The bound on a line that answers no guarded call, either way (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`]); an answer to a guarded call is bounded by its
    /// contract's `max_bytes`.
    #[must_use]
    pub fn max_message_bytes(mut self, bytes: u64) -> Self {
        self.max_message_bytes =
            usize::try_from(bytes.clamp(1, MAX_MESSAGE_BYTES_CEILING)).unwrap_or(usize::MAX / 2);
        self
    }

    /// Where every guarded call's audit record goes, one JSON line each, flushed per line
    /// (default: nowhere).
    #[must_use]
    pub fn audit(mut self, sink: impl Write + Send + 'static) -> Self {
        self.audit = Some(Box::new(sink));
        self
    }

    /// Where the proxy's notes go, one line each (default: stderr).
    #[must_use]
    pub fn log(mut self, sink: impl Write + Send + 'static) -> Self {
        self.log = Box::new(sink);
        self
    }

    /// A handle that stops [`Proxy::run`] from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(self.events.0.clone())
    }

    /// Start `server` (its stdin and stdout piped to the proxy, its stderr inherited, in its
    /// own process group) and relay between it and the client until one side ends.
    ///
    /// The thread reading `client_in` is not waited for when the server ends first: it
    /// ends with the client's stream (or the process).
    ///
    /// # Errors
    ///
    /// When the server cannot be started.
    pub fn run<R, W>(
        self,
        mut server: Command,
        client_in: R,
        client_out: W,
    ) -> Result<Outcome, ProxyError>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        server
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut server, 0);
        let mut child = server.spawn().map_err(|source| ProxyError::Spawn {
            program: server.get_program().to_string_lossy().into_owned(),
            source,
        })?;
        let (server_in, server_out) = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => (stdin, stdout),
            _ => unreachable!("both were piped"),
        };
        let (sender, events) = self.events;
        let guarded_bound = self
            .guards
            .values()
            .map(|g| usize::try_from(g.contract().limits().max_bytes).unwrap_or(usize::MAX / 2))
            .max()
            .unwrap_or(0)
            + 1;
        let shared = Arc::new(Shared {
            guards: self.guards,
            unguarded: self.unguarded,
            strict_drift: self.strict_drift,
            message_bound: self.max_message_bytes.saturating_add(1),
            guarded_bound,
            state: Mutex::new(State::default()),
            client: Mutex::new(Box::new(client_out)),
            audit: Mutex::new(self.audit),
            audit_failed: AtomicBool::new(false),
            log: Mutex::new(self.log),
            events: sender,
            done: AtomicBool::new(false),
        });
        {
            let shared = Arc::clone(&shared);
            thread::spawn(move || client_pump(&shared, client_in, server_in));
        }
        {
            let shared = Arc::clone(&shared);
            thread::spawn(move || server_pump(&shared, server_out));
        }
        {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                while !shared.done.load(Ordering::SeqCst) {
                    thread::sleep(TICK);
                    shared.expire_calls();
                }
            });
        }
        let ending = supervise(&shared, &events, &mut child);
        shared.done.store(true, Ordering::SeqCst);
        Ok(Outcome {
            ending,
            audit_failed: shared.audit_failed.load(Ordering::SeqCst),
        })
    }
}

/// Wait for the first side to end and end the other: the server is always reaped.
fn supervise(shared: &Shared, events: &Receiver<Event>, child: &mut Child) -> Ending {
    let mut client_closed = false;
    let mut grace: Option<Instant> = None;
    loop {
        let event = match grace {
            None => events.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(deadline) => {
                events.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            }
        };
        match event {
            Ok(Event::ClientEof) => {
                client_closed = true;
                grace.get_or_insert_with(|| Instant::now() + EXIT_GRACE);
            }
            Ok(Event::ServerInputClosed) => {
                // The server no longer reads: nothing more can reach it.
                kill(child);
                grace.get_or_insert_with(|| Instant::now() + EXIT_GRACE);
            }
            Ok(Event::ServerEof) => {
                shared.answer_pending_server_exited();
                // The server's own exit, or a kill after the grace period; either way its
                // process group goes too (what it started and left behind).
                let _ = wait_for(child, EXIT_GRACE);
                kill(child);
                return if client_closed {
                    Ending::ClientClosed
                } else {
                    Ending::ServerExited
                };
            }
            Ok(Event::ClientGone) => {
                kill(child);
                return Ending::ClientGone;
            }
            Ok(Event::Stop(signal)) => {
                kill(child);
                return Ending::Stopped(signal);
            }
            Err(RecvTimeoutError::Timeout) => {
                // The grace period passed and the server still holds its stdout open. Its
                // stdout is not waited for: a descendant that left its process group may
                // hold it for ever.
                kill(child);
                shared.answer_pending_server_exited();
                return if client_closed {
                    Ending::ClientClosed
                } else {
                    Ending::ServerExited
                };
            }
            Err(RecvTimeoutError::Disconnected) => {
                kill(child);
                return Ending::ClientClosed;
            }
        }
    }
}

/// Wait up to `limit` for the server to exit.
fn wait_for(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
            _ => return None,
        }
    }
}

/// Kill the server's process group (the server and whatever it started) and reap it.
fn kill(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// What the pumps share.
struct Shared {
    guards: HashMap<String, Guard>,
    unguarded: Unguarded,
    strict_drift: bool,
    /// `--max-message-bytes` + 1: a line this long is over the bound.
    message_bound: usize,
    /// The largest `max_bytes` of the contracts + 1.
    guarded_bound: usize,
    state: Mutex<State>,
    client: Mutex<Box<dyn Write + Send>>,
    audit: Mutex<Option<Box<dyn Write + Send>>>,
    audit_failed: AtomicBool,
    log: Mutex<Box<dyn Write + Send>>,
    events: Sender<Event>,
    done: AtomicBool,
}

#[derive(Default)]
struct State {
    /// The client's outstanding requests, by the JSON text of their id.
    pending: HashMap<String, Pending>,
    /// Tools whose listed `outputSchema` differs from their contract's, as last listed.
    drifted: BTreeSet<String>,
    /// Tool names listed since the first page of the current listing.
    listed: BTreeSet<String>,
}

enum Pending {
    /// A `tools/call` of a guarded tool.
    Call(Box<Call>),
    /// A `tools/call` passed unguarded.
    Unguarded,
    /// A `tools/list`; `first_page` when it had no cursor.
    List { first_page: bool },
    /// Any other request.
    Other,
}

struct Call {
    tool: String,
    id: Value,
    arguments: Map<String, Value>,
    now: Timestamp,
    deadline: Instant,
    /// The request carried the 2026-07-28 `_meta`: its result needs `resultType`.
    modern: bool,
}

impl Call {
    fn request(&self) -> Request {
        let mut request = Request::new(id_key(&self.id), self.now).with_jsonrpc_id(self.id.clone());
        request.tool = Some(self.tool.clone());
        request.params = self.arguments.clone();
        request
    }
}

/// The key of an id: its JSON text (`1` and `"1"` differ).
fn id_key(id: &Value) -> String {
    id.to_string()
}

fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// At most [`NOTE_CHARS`] characters of `text`, escaped for a terminal.
fn shown(text: &str) -> String {
    let cut: String = text.chars().take(NOTE_CHARS).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{}{more}", printable(&cut))
}

impl Shared {
    fn note(&self, text: &str) {
        let mut log = lock(&self.log);
        let _ = writeln!(log, "airlock mcp proxy: {text}");
        let _ = log.flush();
    }

    /// Write one message to the client; a failed write ends the session.
    fn to_client(&self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.to_client_raw(&line);
    }

    fn to_client_raw(&self, line: &[u8]) {
        let mut client = lock(&self.client);
        if client
            .write_all(line)
            .and_then(|()| client.flush())
            .is_err()
        {
            let _ = self.events.send(Event::ClientGone);
        }
    }

    fn answer_error(&self, id: &Value, code: i64, message: &str) {
        self.to_client(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }

    fn answer_result(&self, id: &Value, agent: &AgentValue, modern: bool) {
        let mut result = agent.to_call_tool_result();
        if modern {
            if let Value::Object(members) = &mut result {
                members.insert("resultType".into(), "complete".into());
            }
        }
        self.to_client(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn record(&self, audit: &AuditRecord) {
        let mut sink = lock(&self.audit);
        if let Some(out) = sink.as_mut() {
            let mut line = audit.to_json_line();
            line.push('\n');
            if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
                *sink = None;
                drop(sink);
                self.audit_failed.store(true, Ordering::SeqCst);
                self.note(&format!(
                    "writing the audit file: {e}; no more audit records are written"
                ));
            }
        }
    }

    /// Answer a guarded call with its admission, audited.
    fn conclude(&self, call: &Call, admission: &airlock_guard::Admission) {
        self.answer_result(&call.id, admission.agent(), call.modern);
        self.record(admission.audit());
        let verdict = match admission.audit().verdict() {
            Verdict::Admitted => return,
            Verdict::Rejected => "rejected",
            Verdict::UpstreamFailure => "the server reported a tool error",
            Verdict::TransportFailure => "the server reported a failure",
        };
        let detail = admission
            .diagnostic()
            .map(|d| format!(": {}", shown(&d.masked().to_string())))
            .unwrap_or_default();
        self.note(&format!(
            "{} call {}: {verdict}{detail}",
            shown(&call.tool),
            shown(&id_key(&call.id)),
        ));
    }

    /// The fixed failure for a call the proxy will not forward.
    fn refuse_call(&self, id: &Value, tool: &str, modern: bool, why: &str) {
        self.note(&format!(
            "refused a call to tool {} (id {}): {why}",
            shown(tool),
            shown(&id_key(id))
        ));
        self.answer_result(id, &AgentValue::invalid_response(tool, &id_key(id)), modern);
    }

    /// Guarded calls past their contract's retry deadline get the transport timeout.
    fn expire_calls(&self) {
        let now = Instant::now();
        let expired: Vec<Box<Call>> = {
            let mut state = lock(&self.state);
            let keys: Vec<String> = state
                .pending
                .iter()
                .filter(|(_, p)| matches!(p, Pending::Call(c) if c.deadline <= now))
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter()
                .filter_map(|k| match state.pending.remove(k) {
                    Some(Pending::Call(call)) => Some(call),
                    _ => None,
                })
                .collect()
        };
        for call in expired {
            let guard = &self.guards[&call.tool];
            let admission = guard.admit_transport_error(&call.request(), TransportError::Timeout);
            self.note(&format!(
                "{} call {}: no answer within the contract's deadline ({:?})",
                shown(&call.tool),
                shown(&id_key(&call.id)),
                guard.contract().retry().deadline()
            ));
            self.answer_result(&call.id, admission.agent(), call.modern);
            self.record(admission.audit());
        }
    }

    /// The server is gone: every pending request gets a JSON-RPC error (a guarded call's
    /// audit record says `connection_reset`).
    fn answer_pending_server_exited(&self) {
        let pending: Vec<(String, Pending)> = lock(&self.state).pending.drain().collect();
        for (key, pending) in pending {
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            if let Pending::Call(call) = &pending {
                let guard = &self.guards[&call.tool];
                let admission =
                    guard.admit_transport_error(&call.request(), TransportError::ConnectionReset);
                self.record(admission.audit());
            }
            self.answer_error(&id, -32603, SERVER_EXITED);
        }
    }

    /// Whether calls of `tool` are judged (a contract, and no drift under `--strict-drift`).
    fn guarded(&self, tool: &str) -> Result<(), &'static str> {
        if !self.guards.contains_key(tool) {
            return Err("the tool has no contract");
        }
        if self.strict_drift && lock(&self.state).drifted.contains(tool) {
            return Err("its outputSchema differs from its contract (--strict-drift)");
        }
        Ok(())
    }
}

/// Client → server: requests are recorded, refused calls answered here, the rest
/// forwarded byte for byte.
fn client_pump<R: Read>(shared: &Shared, client_in: R, mut server_in: ChildStdin) {
    let mut reader = BufReader::with_capacity(64 * 1024, client_in);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let read = read_line_onto(&mut reader, &mut buf, shared.message_bound);
        match read {
            Err(_) => break,
            Ok(Line::Eof) if buf.is_empty() => break,
            Ok(Line::TooLong) => {
                shared.note(&format!(
                    "dropped a client line over {} bytes (--max-message-bytes)",
                    shared.message_bound - 1
                ));
                if !matches!(skip_line(&mut reader), Ok(true)) {
                    break;
                }
                continue;
            }
            Ok(Line::Complete | Line::Eof) => {}
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if from_client(shared, &buf) {
            buf.push(b'\n');
            if server_in
                .write_all(&buf)
                .and_then(|()| server_in.flush())
                .is_err()
            {
                let _ = shared.events.send(Event::ServerInputClosed);
                return;
            }
        }
        if buf.capacity() > 1024 * 1024 {
            buf = Vec::new();
        }
        if matches!(read, Ok(Line::Eof)) {
            break;
        }
    }
    // Closing the server's stdin asks it to exit.
    drop(server_in);
    let _ = shared.events.send(Event::ClientEof);
}

/// One line from the client: `true` when it is forwarded.
fn from_client(shared: &Shared, line: &[u8]) -> bool {
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(line) else {
        shared.note(&format!(
            "dropped a client line that is not a JSON object ({} bytes)",
            line.len()
        ));
        return false;
    };
    let method = message.get("method").and_then(Value::as_str);
    let params = message.get("params");
    match (method, message.get("id")) {
        (Some(method), Some(id)) => {
            let key = id_key(id);
            if lock(&shared.state).pending.contains_key(&key) {
                shared.answer_error(
                    id,
                    -32600,
                    "airlock: the id is already used by an outstanding request",
                );
                return false;
            }
            let pending = match method {
                "tools/call" => match call_of(shared, id, params) {
                    Some(pending) => pending,
                    None => return false,
                },
                "tools/list" => Pending::List {
                    first_page: params.and_then(|p| p.get("cursor")).is_none(),
                },
                _ => Pending::Other,
            };
            lock(&shared.state).pending.insert(key, pending);
        }
        (Some("notifications/cancelled"), None) => {
            // The client no longer expects an answer: a late one is then unknown.
            if let Some(id) = params.and_then(|p| p.get("requestId")) {
                lock(&shared.state).pending.remove(&id_key(id));
            }
        }
        _ => {}
    }
    true
}

/// The pending entry of a `tools/call` to forward, or `None` when the proxy answered it.
fn call_of(shared: &Shared, id: &Value, params: Option<&Value>) -> Option<Pending> {
    let modern = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .is_some();
    let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
        shared.answer_error(
            id,
            -32602,
            "airlock: tools/call needs params.name, a string",
        );
        return None;
    };
    match shared.guarded(tool) {
        Ok(()) => {
            if !(id.is_string() || id.is_i64() || id.is_u64()) {
                shared.answer_error(
                    id,
                    -32600,
                    "airlock: a request id must be a string or an integer",
                );
                return None;
            }
            let arguments = match params.and_then(|p| p.get("arguments")) {
                Some(Value::Object(arguments)) => arguments.clone(),
                _ => Map::new(),
            };
            let deadline = Instant::now() + shared.guards[tool].contract().retry().deadline();
            Some(Pending::Call(Box::new(Call {
                tool: tool.to_owned(),
                id: id.clone(),
                arguments,
                now: Timestamp::now(),
                deadline,
                modern,
            })))
        }
        Err(why) if shared.unguarded == Unguarded::Refuse || shared.guards.contains_key(tool) => {
            shared.refuse_call(id, tool, modern, why);
            None
        }
        Err(why) => {
            shared.note(&format!(
                "passing a call to tool {} (id {}) unguarded: {why} (--unguarded pass)",
                shown(tool),
                shown(&id_key(id))
            ));
            Some(Pending::Unguarded)
        }
    }
}

/// Server → client: answers to guarded calls judged, unknown answers dropped, `tools/list`
/// compared with the contracts, the rest passed byte for byte.
fn server_pump(shared: &Shared, server_out: ChildStdout) {
    let mut reader = BufReader::with_capacity(64 * 1024, server_out);
    let mut buf = Vec::new();
    let first_bound = shared.guarded_bound.min(shared.message_bound);
    let whole_bound = shared.guarded_bound.max(shared.message_bound);
    loop {
        buf.clear();
        if buf.capacity() > 1024 * 1024 {
            buf = Vec::new();
        }
        let mut read = read_line_onto(&mut reader, &mut buf, first_bound);
        if read.as_ref().is_ok_and(|r| *r == Line::TooLong) {
            match oversized(shared, &buf) {
                Oversized::Judged => {
                    if !matches!(skip_line(&mut reader), Ok(true)) {
                        break;
                    }
                    continue;
                }
                Oversized::ReadOn => {
                    read = read_line_onto(&mut reader, &mut buf, whole_bound);
                    if read.as_ref().is_ok_and(|r| *r == Line::TooLong) {
                        over_message_bound(shared, &buf);
                        if !matches!(skip_line(&mut reader), Ok(true)) {
                            break;
                        }
                        continue;
                    }
                }
            }
        }
        match read {
            Err(_) => break,
            Ok(Line::Eof) if buf.is_empty() => break,
            _ => {}
        }
        if !buf.iter().all(u8::is_ascii_whitespace) {
            from_server(shared, &buf);
        }
        if matches!(read, Ok(Line::Eof)) {
            break;
        }
    }
    let _ = shared.events.send(Event::ServerEof);
}

enum Oversized {
    /// The line answered guarded calls, which got their too-large rejection: skip it.
    Judged,
    /// The line may be another message: read on, up to `--max-message-bytes`.
    ReadOn,
}

/// A server line longer than every contract's `max_bytes`, of which `prefix` was read.
fn oversized(shared: &Shared, prefix: &[u8]) -> Oversized {
    if prefix.len() < shared.guarded_bound {
        // Cut by --max-message-bytes, below the contracts' bound: read on to that bound.
        return Oversized::ReadOn;
    }
    let members = scan(prefix);
    if members.method && !members.answer {
        return Oversized::ReadOn;
    }
    let calls: Vec<Box<Call>> = {
        let mut state = lock(&shared.state);
        match &members.id {
            Some(id) if !members.bad_id => {
                let key = id_key(id);
                match state.pending.get(&key) {
                    Some(Pending::Call(_)) => match state.pending.remove(&key) {
                        Some(Pending::Call(call)) => vec![call],
                        _ => Vec::new(),
                    },
                    _ => return Oversized::ReadOn,
                }
            }
            // The id is not in the prefix: it may answer any guarded call.
            _ => {
                let keys: Vec<String> = state
                    .pending
                    .iter()
                    .filter(|(_, p)| matches!(p, Pending::Call(_)))
                    .map(|(k, _)| k.clone())
                    .collect();
                if keys.is_empty() {
                    return Oversized::ReadOn;
                }
                keys.iter()
                    .filter_map(|k| match state.pending.remove(k) {
                        Some(Pending::Call(call)) => Some(call),
                        _ => None,
                    })
                    .collect()
            }
        }
    };
    for call in &calls {
        // Judged on the bytes a bounded reader takes: the guard sees its limit + 1.
        let admission = shared.guards[&call.tool].admit(&call.request(), prefix);
        shared.conclude(call, &admission);
    }
    Oversized::Judged
}

/// A server line over `--max-message-bytes`: dropped; a request it answers gets an error.
fn over_message_bound(shared: &Shared, prefix: &[u8]) {
    shared.note(&format!(
        "dropped a server line over {} bytes (--max-message-bytes)",
        shared.message_bound - 1
    ));
    let members = scan(prefix);
    if members.method || members.bad_id {
        return;
    }
    if let Some(id) = members.id {
        let pending = lock(&shared.state).pending.remove(&id_key(&id));
        if pending.is_some() {
            shared.answer_error(
                &id,
                -32603,
                "airlock: the MCP server's answer exceeded --max-message-bytes",
            );
        }
    }
}

/// One whole line from the server.
fn from_server(shared: &Shared, line: &[u8]) {
    if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err() {
        shared.note(&format!(
            "dropped a server line that is not JSON ({} bytes)",
            line.len()
        ));
        return;
    }
    let members = scan(line);
    if !members.complete || members.bad_id || (members.method && members.answer) {
        shared.note(&format!(
            "dropped a server message with an ambiguous id or role ({} bytes)",
            line.len()
        ));
        return;
    }
    if members.method {
        // A request or notification of the server's own: its ids are its own space.
        shared.to_client_raw(&with_newline(line));
        return;
    }
    let Some(id) = members.id else {
        shared.note("dropped a server message that is neither a request nor a response");
        return;
    };
    let pending = lock(&shared.state).pending.remove(&id_key(&id));
    match pending {
        None => shared.note(&format!(
            "dropped a server response with id {} that answers no outstanding request",
            shown(&id_key(&id))
        )),
        Some(Pending::Call(call)) => {
            let admission = shared.guards[&call.tool].admit(&call.request(), line);
            shared.conclude(&call, &admission);
        }
        Some(Pending::List { first_page }) => match tools_list(shared, line, first_page) {
            Some(message) => shared.answer_error(&id, -32603, &message),
            None => shared.to_client_raw(&with_newline(line)),
        },
        Some(Pending::Unguarded | Pending::Other) => shared.to_client_raw(&with_newline(line)),
    }
}

fn with_newline(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + 1);
    out.extend_from_slice(line);
    out.push(b'\n');
    out
}

/// Compare a `tools/list` answer with the contracts; report drift. With `--strict-drift`
/// and a drifted tool in it, the error message that replaces the answer.
fn tools_list(shared: &Shared, line: &[u8], first_page: bool) -> Option<String> {
    let Ok(message) = serde_json::from_slice::<Value>(line) else {
        return None;
    };
    let result = message.get("result")?;
    let tools = result.get("tools").and_then(Value::as_array)?;
    let mut drifted_here = BTreeSet::new();
    let mut notes = Vec::new();
    {
        let mut state = lock(&shared.state);
        if first_page {
            state.listed.clear();
        }
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            state.listed.insert(name.to_owned());
            let Some(guard) = shared.guards.get(name) else {
                notes.push(format!("drift: tool {} has no contract", shown(name)));
                continue;
            };
            let contract = guard.contract();
            if tool.get("outputSchema") == Some(contract.schema().document()) {
                state.drifted.remove(name);
            } else {
                let file = format!("v{}.schema.json", contract.version());
                let path = contract
                    .dir()
                    .map_or_else(|| file.clone(), |d| d.join(&file).display().to_string());
                notes.push(format!(
                    "drift: tool {name}: outputSchema differs from {}",
                    shown(&path)
                ));
                state.drifted.insert(name.to_owned());
                drifted_here.insert(name.to_owned());
            }
        }
        if result.get("nextCursor").is_none() {
            for tool in shared.guards.keys() {
                if !state.listed.contains(tool) {
                    notes.push(format!(
                        "drift: contract {tool}: the server no longer lists it"
                    ));
                }
            }
            state.listed.clear();
        }
    }
    for note in notes {
        shared.note(&note);
    }
    if shared.strict_drift && !drifted_here.is_empty() {
        let names: Vec<&str> = drifted_here.iter().map(String::as_str).collect();
        return Some(format!(
            "airlock: outputSchema drift for tools: {}",
            names.join(", ")
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use airlock_guard::{Contract, InputKind, McpInput};

    /// A writer the test reads afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            lock(&self.0).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn lines(&self) -> Vec<Value> {
            String::from_utf8(lock(&self.0).clone())
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        }
        fn text(&self) -> String {
            String::from_utf8(lock(&self.0).clone()).unwrap()
        }
    }

    fn guard(tool: &str) -> Guard {
        let schema = json!({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false});
        let contract = Contract::builder(tool, schema)
            .input(InputKind::Mcp(McpInput::default()))
            .agent_field("/n")
            .build()
            .unwrap();
        Guard::new(contract)
    }

    /// The proxy over `client` lines and an `sh -c SCRIPT` server; the client's output,
    /// the log, and how it ended.
    fn session(proxy: Proxy, client: &str, script: &str) -> (Vec<Value>, String, Ending) {
        let out = Shared::default();
        let log = Shared::default();
        let mut server = Command::new("sh");
        server.args(["-c", script]);
        let outcome = proxy
            .log(log.clone())
            .run(server, io::Cursor::new(client.to_owned()), out.clone())
            .unwrap();
        (out.lines(), log.text(), outcome.ending)
    }

    #[test]
    fn envelope_contracts_and_duplicate_tools_are_refused() {
        let envelope = Contract::builder("t", json!({"type":"object"}))
            .build()
            .unwrap();
        assert!(matches!(
            Proxy::new(vec![Guard::new(envelope)]),
            Err(ProxyError::NotMcp { .. })
        ));
        assert!(matches!(
            Proxy::new(vec![guard("t"), guard("t")]),
            Err(ProxyError::DuplicateTool { .. })
        ));
    }

    #[test]
    fn a_guarded_answer_is_rebuilt_and_an_uncontracted_call_refused_in_process() {
        let client = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            "\n",
        );
        let script = r#"read -r line; printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"n\": 7}"}],"structuredContent":{"n":7},"isError":false}}'"#;
        let (out, log, ending) = session(Proxy::new(vec![guard("t")]).unwrap(), client, script);
        assert_eq!(ending, Ending::ClientClosed);
        assert_eq!(out[0]["id"], 1);
        assert_eq!(out[0]["result"]["isError"], true);
        assert_eq!(out[1]["id"], 2);
        assert_eq!(
            out[1]["result"],
            json!({"content":[{"type":"text","text":"{\"n\":7}"}],"structuredContent":{"n":7},"isError":false,"resultType":"complete"})
        );
        assert!(log.contains("refused a call to tool other"), "{log}");
    }

    #[test]
    fn a_server_that_exits_leaves_no_request_unanswered() {
        let client = concat!(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t"}}"#,
            "\n",
        );
        let out = Shared::default();
        let mut server = Command::new("sh");
        server.args(["-c", "read -r line; exit 3"]);
        // The client stays connected (a reader that never ends would block; this one
        // waits until the server is gone).
        let (tx, rx) = mpsc::channel::<()>();
        struct Held(io::Cursor<String>, Receiver<()>);
        impl Read for Held {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.read(buf)?;
                if n == 0 {
                    let _ = self.1.recv();
                }
                Ok(n)
            }
        }
        let outcome = Proxy::new(vec![guard("t")])
            .unwrap()
            .log(io::sink())
            .run(
                server,
                Held(io::Cursor::new(client.to_owned()), rx),
                out.clone(),
            )
            .unwrap();
        drop(tx);
        assert_eq!(outcome.ending, Ending::ServerExited);
        assert_eq!(
            out.lines(),
            [json!({"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":SERVER_EXITED}})]
        );
    }
}
