//! What the proxy's threads share: the client's outstanding requests by id, the drift
//! state, and the one place that writes to the client, the audit file and the log (every
//! answer to a guarded call goes out through the guard's value, never the server's bytes).

use airlock_guard::{
    jiff::Timestamp, AgentValue, AuditRecord, Guard, Request, TransportError, Verdict,
};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::Write;
use std::process::ChildStdin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::record::{Recorded, RecordedCall, Recorder};
use super::{Event, Mode, Unguarded, NOTE_CHARS, SERVER_EXITED};
use crate::base::report::printable;

/// What the pumps share.
pub(super) struct Shared {
    pub(super) guards: HashMap<String, Guard>,
    pub(super) unguarded: Unguarded,
    pub(super) mode: Mode,
    pub(super) recorder: Option<Recorder>,
    /// The server's stdin: the client pump forwards through it, the deadline sends
    /// `notifications/cancelled` through it; `None` once closed.
    pub(super) server: Mutex<Option<ChildStdin>>,
    pub(super) strict_drift: bool,
    /// `--max-message-bytes` + 1: a line this long is over the bound.
    pub(super) message_bound: usize,
    /// The largest `max_bytes` of the contracts + 1.
    pub(super) guarded_bound: usize,
    pub(super) state: Mutex<State>,
    pub(super) client: Mutex<Box<dyn Write + Send>>,
    pub(super) audit: Mutex<Option<Box<dyn Write + Send>>>,
    pub(super) audit_failed: AtomicBool,
    pub(super) log: Mutex<Box<dyn Write + Send>>,
    pub(super) events: Sender<Event>,
    pub(super) done: AtomicBool,
}

#[derive(Default)]
pub(super) struct State {
    /// The client's outstanding requests, by the JSON text of their id.
    pub(super) pending: HashMap<String, Pending>,
    /// Tools whose listed `outputSchema` differs from their contract's, as last listed.
    pub(super) drifted: BTreeSet<String>,
    /// Tool names listed since the first page of the current listing.
    pub(super) listed: BTreeSet<String>,
    /// Listed tools without a contract since the first page of the current listing, and
    /// the set last reported (reported once per change, not at every listing).
    pub(super) uncontracted: BTreeSet<String>,
    pub(super) uncontracted_reported: Option<BTreeSet<String>>,
    /// Ids of guarded calls that were cancelled, expired or answered: a late answer to
    /// one is dropped, and the client may not use one again (MCP: an id is never reused
    /// in a session), so a late answer can never reach another request raw.
    pub(super) tombstones: Tombstones,
}

/// A bounded set of retired ids (the oldest forgotten first).
#[derive(Default)]
pub(super) struct Tombstones {
    order: VecDeque<String>,
    set: HashSet<String>,
}

/// How many retired ids the proxy remembers.
const TOMBSTONES: usize = 65_536;

impl Tombstones {
    pub(super) fn insert(&mut self, key: String) {
        if self.set.insert(key.clone()) {
            self.order.push_back(key);
            if self.order.len() > TOMBSTONES {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }

    pub(super) fn contains(&self, key: &str) -> bool {
        self.set.contains(key)
    }
}

pub(super) enum Pending {
    /// A `tools/call` of a guarded tool.
    Call(Box<Call>),
    /// A guarded call whose answer came and is being judged (off the server's reader):
    /// its deadline still holds, and a second answer to it is dropped.
    Judging(Box<Call>),
    /// A `tools/call` passed unguarded.
    Unguarded,
    /// A `tools/list`; `first_page` when it had no cursor.
    List { first_page: bool },
    /// Any other request.
    Other,
}

/// How long the client's deadline answers wait for the cancellation to reach the server.
const CANCEL_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// A guarded call past its deadline (enforce mode): the cancellation for the server and
/// the failure for the client.
pub(super) struct Expired {
    cancel: Vec<u8>,
    id: Value,
    agent: AgentValue,
    modern: bool,
}

#[derive(Clone)]
pub(super) struct Call {
    pub(super) tool: String,
    pub(super) id: Value,
    pub(super) arguments: Map<String, Value>,
    pub(super) now: Timestamp,
    pub(super) deadline: Instant,
    /// The request carried the 2026-07-28 `_meta`: its result needs `resultType`.
    pub(super) modern: bool,
    /// Shadow mode: the deadline passed (audited); the server's answer still goes to the
    /// client when it comes.
    pub(super) expired: bool,
}

impl Call {
    pub(super) fn request(&self) -> Request {
        let mut request = Request::new(id_key(&self.id), self.now).with_jsonrpc_id(self.id.clone());
        request.tool = Some(self.tool.clone());
        request.params = self.arguments.clone();
        request
    }
}

/// The key of an id: its JSON text (`1` and `"1"` differ).
pub(super) fn id_key(id: &Value) -> String {
    id.to_string()
}

pub(super) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// At most [`NOTE_CHARS`] characters of `text`, escaped for a terminal.
pub(super) fn shown(text: &str) -> String {
    let cut: String = text.chars().take(NOTE_CHARS).collect();
    let more = if cut.len() < text.len() { "…" } else { "" };
    format!("{}{more}", printable(&cut))
}

impl Shared {
    pub(super) fn note(&self, text: &str) {
        let mut log = lock(&self.log);
        let _ = writeln!(log, "airlock mcp proxy: {text}");
        let _ = log.flush();
    }

    /// Write one message to the client; a failed write ends the session.
    pub(super) fn to_client(&self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.to_client_raw(&line);
    }

    pub(super) fn to_client_raw(&self, line: &[u8]) {
        let mut client = lock(&self.client);
        if client
            .write_all(line)
            .and_then(|()| client.flush())
            .is_err()
        {
            let _ = self.events.send(Event::ClientGone);
        }
    }

    pub(super) fn answer_error(&self, id: &Value, code: i64, message: &str) {
        self.to_client(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }

    pub(super) fn answer_result(&self, id: &Value, agent: &AgentValue, modern: bool) {
        let result = crate::base::shape::call_tool_result_for(agent, modern);
        self.to_client(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    pub(super) fn record(&self, audit: &AuditRecord) {
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

    /// Answer a guarded call with its admission, audited. The record is written first: a
    /// client that has its answer may close the session at once, and the proxy then exits.
    pub(super) fn conclude(
        &self,
        call: &Call,
        admission: &airlock_guard::Admission,
        line: Option<&[u8]>,
    ) {
        self.record(admission.audit());
        if let (Some(recorder), Some(line)) = (&self.recorder, line) {
            self.record_fixture(recorder, call, admission.audit().verdict(), line);
        }
        lock(&self.state).tombstones.insert(id_key(&call.id));
        match (self.mode, line) {
            (Mode::Shadow, Some(line)) => self.to_client_raw(&with_newline(line)),
            (Mode::Shadow, None) => self.answer_error(
                &call.id,
                -32603,
                "airlock: the MCP server's answer exceeded the proxy's bound",
            ),
            (Mode::Enforce, _) => self.answer_result(&call.id, admission.agent(), call.modern),
        }
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
        let shadow = if self.mode == Mode::Shadow {
            " (shadow: the client got the server's answer; enforce would have sent "
        } else {
            ""
        };
        let would = if shadow.is_empty() {
            String::new()
        } else {
            format!("{shadow}{})", admission.agent().to_json_string())
        };
        self.note(&format!(
            "{} call {}: {verdict}{detail}{would}",
            shown(&call.tool),
            shown(&id_key(&call.id)),
        ));
    }

    fn record_fixture(&self, recorder: &Recorder, call: &Call, verdict: Verdict, line: &[u8]) {
        let recorded = RecordedCall {
            tool: &call.tool,
            id: &call.id,
            arguments: &call.arguments,
            now: call.now,
        };
        match recorder.record(&recorded, verdict, line) {
            Ok(Recorded::Written(path)) => {
                if !verdict.is_admitted() {
                    self.note(&format!(
                        "recorded the refused answer as {} (review it: move it to accepted/ if it is honest and fix the contract, or to near_miss/)",
                        shown(&path.display().to_string())
                    ));
                }
            }
            Ok(Recorded::Full { first: true }) => self.note(&format!(
                "--record: tool {} reached its bound; its later answers are not recorded",
                shown(&call.tool)
            )),
            Ok(Recorded::Full { first: false }) => {}
            Err(e) => self.note(&format!(
                "--record: writing an answer of tool {}: {e}",
                shown(&call.tool)
            )),
        }
    }

    /// Write one line to the server; a failed write ends the session.
    pub(super) fn to_server(&self, line: &[u8]) -> bool {
        let mut server = lock(&self.server);
        let Some(stdin) = server.as_mut() else {
            return false;
        };
        if stdin.write_all(line).and_then(|()| stdin.flush()).is_err() {
            *server = None;
            drop(server);
            let _ = self.events.send(Event::ServerInputClosed);
            return false;
        }
        true
    }

    /// Close the server's stdin (asks it to exit).
    pub(super) fn close_server(&self) {
        lock(&self.server).take();
    }

    /// The fixed failure for a call the proxy will not forward.
    pub(super) fn refuse_call(&self, id: &Value, tool: &str, modern: bool, why: &str) {
        self.note(&format!(
            "refused a call to tool {} (id {}): {why}",
            shown(tool),
            shown(&id_key(id))
        ));
        self.answer_result(id, &AgentValue::invalid_response(tool, &id_key(id)), modern);
    }

    /// Guarded calls past their contract's retry deadline get the transport timeout: the
    /// server is sent `notifications/cancelled` for the call, the client the guard's
    /// failure, and the id becomes a tombstone (a late answer is dropped). In shadow mode
    /// the timeout is audited and the call stays outstanding: the client gets the
    /// server's answer whenever it comes. Returns what is left to do for each expired
    /// call, which the caller does from another thread ([`Shared::finish_expired`]: a
    /// server that stops reading must not stop the deadlines).
    #[must_use]
    pub(super) fn expire_calls(&self) -> Vec<Expired> {
        let mut cancels = Vec::new();
        let now = Instant::now();
        let shadow = self.mode == Mode::Shadow;
        let expired: Vec<Call> = {
            let mut state = lock(&self.state);
            // An answer being judged is past its deadline too when the judging outlasts
            // it (enforce: the client gets the timeout, the judged answer is dropped).
            // In shadow mode the server's answer came in time, and the client gets it
            // once judged.
            let keys: Vec<String> = state
                .pending
                .iter()
                .filter(|(_, p)| match p {
                    Pending::Call(c) => c.deadline <= now && !c.expired,
                    Pending::Judging(c) => c.deadline <= now && !shadow,
                    _ => false,
                })
                .map(|(k, _)| k.clone())
                .collect();
            let mut calls = Vec::new();
            for key in keys {
                if shadow {
                    if let Some(Pending::Call(call)) = state.pending.get_mut(&key) {
                        call.expired = true;
                        calls.push(Call::clone(call));
                    }
                } else if let Some(Pending::Call(call) | Pending::Judging(call)) =
                    state.pending.remove(&key)
                {
                    state.tombstones.insert(key);
                    calls.push(*call);
                }
            }
            calls
        };
        for call in expired {
            let guard = &self.guards[&call.tool];
            let admission = guard.admit_transport_error(&call.request(), TransportError::Timeout);
            self.note(&format!(
                "{} call {}: no answer within the contract's deadline ({:?}){}",
                shown(&call.tool),
                shown(&id_key(&call.id)),
                guard.contract().retry().deadline(),
                if shadow {
                    " (shadow: still waiting for the server's answer)"
                } else {
                    "; the server was sent notifications/cancelled"
                }
            ));
            self.record(admission.audit());
            if !shadow {
                let cancel = json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": call.id, "reason": "airlock: the contract's deadline passed"},
                });
                let mut line = cancel.to_string().into_bytes();
                line.push(b'\n');
                cancels.push(Expired {
                    cancel: line,
                    id: call.id.clone(),
                    agent: admission.agent().clone(),
                    modern: call.modern,
                });
            }
        }
        cancels
    }

    /// Tell the server the expired calls are cancelled, then give the client their
    /// failures: in that order, so that nothing the client sends next reaches the server
    /// before the cancellation. A server that does not read its stdin cannot hold the
    /// client's answers back for longer than [`CANCEL_WAIT`].
    pub(super) fn finish_expired(self: &Arc<Self>, expired: Vec<Expired>) {
        let cancels: Vec<Vec<u8>> = expired.iter().map(|e| e.cancel.clone()).collect();
        let (done, written) = std::sync::mpsc::channel();
        let shared = Arc::clone(self);
        std::thread::spawn(move || {
            for line in cancels {
                shared.to_server(&line);
            }
            let _ = done.send(());
        });
        let _ = written.recv_timeout(CANCEL_WAIT);
        for call in expired {
            self.answer_result(&call.id, &call.agent, call.modern);
        }
    }

    /// The server is gone: every pending request gets a JSON-RPC error (a guarded call's
    /// audit record says `connection_reset`).
    pub(super) fn answer_pending_server_exited(&self) {
        let pending: Vec<(String, Pending)> = lock(&self.state).pending.drain().collect();
        for (key, pending) in pending {
            let id: Value = serde_json::from_str(&key).unwrap_or(Value::Null);
            if let Pending::Call(call) | Pending::Judging(call) = &pending {
                let guard = &self.guards[&call.tool];
                let admission =
                    guard.admit_transport_error(&call.request(), TransportError::ConnectionReset);
                self.record(admission.audit());
            }
            self.answer_error(&id, -32603, SERVER_EXITED);
        }
    }

    /// Whether calls of `tool` are judged (a contract, and no drift under `--strict-drift`).
    pub(super) fn guarded(&self, tool: &str) -> Result<(), &'static str> {
        if !self.guards.contains_key(tool) {
            return Err("the tool has no contract");
        }
        if self.strict_drift
            && self.mode == Mode::Enforce
            && lock(&self.state).drifted.contains(tool)
        {
            return Err("its outputSchema differs from its contract (--strict-drift)");
        }
        Ok(())
    }
}

pub(super) fn with_newline(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + 1);
    out.extend_from_slice(line);
    out.push(b'\n');
    out
}
