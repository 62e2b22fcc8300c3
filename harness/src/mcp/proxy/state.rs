//! What the proxy's threads share: the client's outstanding requests by id, the drift
//! state, and the one place that writes to the client, the audit file and the log (every
//! answer to a guarded call goes out through the guard's value, never the server's bytes).

use airlock_guard::{
    jiff::Timestamp, AgentValue, AuditRecord, Guard, Request, TransportError, Verdict,
};
use serde_json::{json, Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::{Event, Unguarded, NOTE_CHARS, SERVER_EXITED};
use crate::report::printable;

/// What the pumps share.
pub(super) struct Shared {
    pub(super) guards: HashMap<String, Guard>,
    pub(super) unguarded: Unguarded,
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
}

pub(super) enum Pending {
    /// A `tools/call` of a guarded tool.
    Call(Box<Call>),
    /// A `tools/call` passed unguarded.
    Unguarded,
    /// A `tools/list`; `first_page` when it had no cursor.
    List { first_page: bool },
    /// Any other request.
    Other,
}

pub(super) struct Call {
    pub(super) tool: String,
    pub(super) id: Value,
    pub(super) arguments: Map<String, Value>,
    pub(super) now: Timestamp,
    pub(super) deadline: Instant,
    /// The request carried the 2026-07-28 `_meta`: its result needs `resultType`.
    pub(super) modern: bool,
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
        let mut result = agent.to_call_tool_result();
        if modern {
            if let Value::Object(members) = &mut result {
                members.insert("resultType".into(), "complete".into());
            }
        }
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
    pub(super) fn conclude(&self, call: &Call, admission: &airlock_guard::Admission) {
        self.record(admission.audit());
        self.answer_result(&call.id, admission.agent(), call.modern);
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
    pub(super) fn refuse_call(&self, id: &Value, tool: &str, modern: bool, why: &str) {
        self.note(&format!(
            "refused a call to tool {} (id {}): {why}",
            shown(tool),
            shown(&id_key(id))
        ));
        self.answer_result(id, &AgentValue::invalid_response(tool, &id_key(id)), modern);
    }

    /// Guarded calls past their contract's retry deadline get the transport timeout.
    pub(super) fn expire_calls(&self) {
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
            self.record(admission.audit());
            self.answer_result(&call.id, admission.agent(), call.modern);
        }
    }

    /// The server is gone: every pending request gets a JSON-RPC error (a guarded call's
    /// audit record says `connection_reset`).
    pub(super) fn answer_pending_server_exited(&self) {
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
    pub(super) fn guarded(&self, tool: &str) -> Result<(), &'static str> {
        if !self.guards.contains_key(tool) {
            return Err("the tool has no contract");
        }
        if self.strict_drift && lock(&self.state).drifted.contains(tool) {
            return Err("its outputSchema differs from its contract (--strict-drift)");
        }
        Ok(())
    }
}
