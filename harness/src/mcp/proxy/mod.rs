//! `airlock mcp proxy`: a stdio MCP proxy between a host (the client) and a server. Every
//! line passes unchanged except the answers to guarded `tools/call`s, which the client
//! only ever receives as a fresh result built by the guard; nothing from a rejected answer
//! reaches it. Lines are read under a bound: an over-long one is never held whole.

use airlock_guard::{Contract, Guard};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::io::{self, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

mod record;
mod relay;
mod state;

use record::Recorder;
pub use record::DEFAULT_RECORD_MAX;
use relay::{client_pump, server_pump};
use state::{Shared, State};

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

/// What the client receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The guard's result for every guarded call (default).
    #[default]
    Enforce,
    /// The server's own answers, unchanged: every guarded answer is still judged, audited
    /// and recorded exactly as in enforce, and what enforce would have changed is said on
    /// stderr and in the audit, so a team can measure its contracts on live traffic
    /// before enforcing them.
    Shadow,
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
    /// No contract at all, while calls of uncontracted tools are refused: every call
    /// would be refused.
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
            ProxyError::NoContract => write!(
                f,
                "no contract: give --contract DIR or --contracts DIR (or --unguarded pass to relay unguarded)"
            ),
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
pub struct SessionOutcome {
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

pub(crate) enum Event {
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
    mode: Mode,
    record: Option<(std::path::PathBuf, usize)>,
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
            .field("mode", &self.mode)
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
    /// A guard whose contract is not `kind = "mcp"`, two guards for one tool. (No guard
    /// at all is refused by [`Proxy::run`] unless uncontracted calls pass.)
    pub fn new(guards: Vec<Guard>) -> Result<Self, ProxyError> {
        let mut by_tool = HashMap::new();
        for guard in guards {
            Self::may_add(&by_tool, guard.contract())?;
            by_tool.insert(guard.contract().tool().to_owned(), guard);
        }
        Ok(Self {
            guards: by_tool,
            unguarded: Unguarded::default(),
            mode: Mode::default(),
            record: None,
            strict_drift: false,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES as usize,
            audit: None,
            log: Box::new(io::stderr()),
            events: mpsc::channel(),
        })
    }

    /// The proxy's rule for one more contract, beside those of `guards` (by tool): it is
    /// an MCP contract (`kind = "mcp"`) for a tool none of them has. [`Proxy::new`]
    /// applies it to each guard in turn; a caller loading contracts one by one can apply
    /// it as each loads.
    ///
    /// # Errors
    ///
    /// [`ProxyError::NotMcp`], [`ProxyError::DuplicateTool`].
    pub fn may_add<V>(guards: &HashMap<String, V>, contract: &Contract) -> Result<(), ProxyError> {
        let tool = contract.tool().to_owned();
        if contract.input().mcp().is_none() {
            return Err(ProxyError::NotMcp { tool });
        }
        if guards.contains_key(&tool) {
            return Err(ProxyError::DuplicateTool { tool });
        }
        Ok(())
    }

    /// Calls of tools without a contract (default [`Unguarded::Refuse`]).
    #[must_use]
    pub fn unguarded(mut self, unguarded: Unguarded) -> Self {
        self.unguarded = unguarded;
        self
    }

    /// What the client receives (default [`Mode::Enforce`]).
    #[must_use]
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Record every judged answer to a guarded call as a corpus fixture under
    /// `dir/<tool>/` (`accepted/` or `review/`, each with its `NAME.request.json`), at
    /// most `max_per_tool` per tool.
    #[must_use]
    pub fn record(mut self, dir: impl Into<std::path::PathBuf>, max_per_tool: usize) -> Self {
        self.record = Some((dir.into(), max_per_tool));
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
    /// When the server cannot be started; [`ProxyError::NoContract`] when there is no
    /// contract and uncontracted calls are refused.
    pub fn run<R, W>(
        self,
        mut server: Command,
        client_in: R,
        client_out: W,
    ) -> Result<SessionOutcome, ProxyError>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        if self.guards.is_empty() && self.unguarded == Unguarded::Refuse {
            return Err(ProxyError::NoContract);
        }
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
            mode: self.mode,
            recorder: self.record.map(|(dir, max)| Recorder::new(dir, max)),
            server: Mutex::new(Some(server_in)),
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
            thread::spawn(move || client_pump(&shared, client_in));
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
                    let expired = shared.expire_calls();
                    if !expired.is_empty() {
                        let shared = Arc::clone(&shared);
                        thread::spawn(move || shared.finish_expired(expired));
                    }
                }
            });
        }
        let ending = supervise(&shared, &events, &mut child);
        shared.done.store(true, Ordering::SeqCst);
        Ok(SessionOutcome {
            ending,
            audit_failed: shared.audit_failed.load(Ordering::SeqCst),
        })
    }
}

/// Wait for the first side to end and end the other: the server is always reaped.
fn supervise(shared: &Shared, events: &Receiver<Event>, child: &mut Child) -> Ending {
    let mut client_closed = false;
    let mut grace: Option<Instant> = None;
    let mut exited = false;
    loop {
        let event = match grace {
            // The server's own exit is watched too: a process it started may hold its
            // stdout open for ever, so the end of its stdout alone would never come.
            None => match events.recv_timeout(TICK) {
                Err(RecvTimeoutError::Timeout) => {
                    if !exited && matches!(child.try_wait(), Ok(Some(_))) {
                        exited = true;
                        // What it wrote before exiting is still read; its process group
                        // goes now, and with it whatever held the pipe.
                        kill(child);
                        grace = Some(Instant::now() + EXIT_GRACE);
                    }
                    continue;
                }
                other => other,
            },
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

#[cfg(test)]
mod tests {
    use super::state::lock;
    use super::*;
    use airlock_guard::{Contract, InputKind, McpInput};
    use serde_json::{json, Value};

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
    fn the_deadline_holds_while_an_answer_is_judged_and_other_answers_do_not_wait() {
        // 2^15 subschemas applied in place to each of 1 000 items: judging the answer
        // takes seconds in a debug build, a tenth of one in release; the deadline is
        // 100 ms.
        let depth = 15;
        let mut defs: serde_json::Map<String, Value> = (0..depth)
            .map(|i| {
                let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
                (format!("d{i}"), json!({"allOf": [next, next]}))
            })
            .collect();
        defs.insert(
            format!("d{depth}"),
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        );
        let schema = json!({"type": "object", "required": ["items"], "$defs": defs,
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/d0"}}}});
        let slow = Contract::builder("slow", schema)
            .input(InputKind::Mcp(McpInput::default()))
            .agent_field("/items")
            .limits(airlock_guard::Limits {
                max_bytes: 1 << 20,
                max_depth: 16,
            })
            .retry(airlock_guard::RetryPolicy::new(
                1,
                Duration::from_millis(100),
                Vec::new(),
            ))
            .build()
            .unwrap();
        let content = json!({"items": vec![json!({"a": "x"}); 1000]});
        let answer = |id: u32, content: &Value| {
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": content.to_string()}],
                "structuredContent": content, "isError": false}})
        };
        let dir = tempfile::tempdir().unwrap();
        let answers = dir.path().join("answers");
        std::fs::write(
            &answers,
            // The slow answer twice: the second is dropped, never a second answer.
            format!(
                "{}\n{}\n{}\n",
                answer(1, &content),
                answer(1, &content),
                answer(2, &json!({"n": 7}))
            ),
        )
        .unwrap();
        let client = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#,
            "\n",
        );
        let script = format!("read -r a; read -r b; cat '{}'", answers.display());
        let proxy = Proxy::new(vec![Guard::new(slow), guard("t")]).unwrap();
        let (out, log, _) = session(proxy, client, &script);
        let of = |id: u32| out.iter().find(|m| m["id"] == id).cloned().unwrap();
        // The slow answer's call got the deadline's failure, not the judged answer.
        assert_eq!(of(1)["result"]["isError"], true, "{out:?}");
        assert!(
            log.contains("slow call 1: no answer within the contract's deadline"),
            "{log}"
        );
        // The other answer, behind it on the server's stdout, was not held.
        assert_eq!(of(2)["result"]["structuredContent"], json!({"n": 7}));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(
            log.contains("dropped a second server response with id 1: the first is being judged")
                || log.contains("dropped a late server response with id 1"),
            "{log}"
        );
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
