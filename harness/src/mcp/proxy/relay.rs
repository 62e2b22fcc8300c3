//! The two pumps: client → server (requests recorded, refused calls answered here) and
//! server → client (guarded answers judged, unknown answers dropped, `tools/list` compared
//! with the contracts). Server lines are read under a bound and never held whole past it.

use airlock_guard::jiff::Timestamp;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::io::{BufReader, Read};
use std::process::ChildStdout;
use std::sync::mpsc::{self, Receiver, SendError, SyncSender};
use std::sync::Mutex;
use std::thread;
use std::time::Instant;

use super::state::{id_key, lock, shown, with_newline, Call, Pending, Shared};
use super::{Event, Mode, Unguarded};
use crate::mcp::wire::{read_line_onto, scan, skip_line, skip_line_scanning, Line, StreamScan};

/// Client → server: requests are recorded, refused calls answered here, the rest
/// forwarded byte for byte.
pub(super) fn client_pump<R: Read>(shared: &Shared, client_in: R) {
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
                // A request the client waits on gets its answer now, not at its timeout.
                let mut scanner = StreamScan::default();
                scanner.feed(&buf);
                let went_on = matches!(skip_line_scanning(&mut reader, &mut scanner), Ok(true));
                refuse_dropped(
                    shared,
                    &scanner.members(),
                    -32600,
                    "airlock: the request exceeded --max-message-bytes",
                );
                if !went_on {
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
            if !shared.to_server(&buf) {
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
    // The supervisor learns first that the client closed: the server's exit that closing
    // its stdin causes is then the client's doing, not a crash (no race to exit 4).
    let _ = shared.events.send(Event::ClientEof);
    // Closing the server's stdin asks it to exit.
    shared.close_server();
}

/// One line from the client: `true` when it is forwarded.
fn from_client(shared: &Shared, line: &[u8]) -> bool {
    // Strictly: a member repeated (a second `id`, `method` or `name`) could be read one way
    // here and another way by the server, routing a guarded call around its guard.
    let Ok(Value::Object(message)) = airlock_guard::parse(line, CLIENT_MAX_DEPTH) else {
        shared.note(&format!(
            "dropped a client line that is not one strict JSON object ({} bytes)",
            line.len()
        ));
        refuse_dropped(
            shared,
            &scan(line),
            -32600,
            "airlock: the request is not one strict JSON object (a repeated member, a byte order mark, trailing bytes, invalid text): refused",
        );
        return false;
    };
    let method = message.get("method").and_then(Value::as_str);
    let params = message.get("params");
    match (method, message.get("id")) {
        (Some(method), Some(id)) => {
            let key = id_key(id);
            let (outstanding, retired) = {
                let state = lock(&shared.state);
                (
                    state.pending.contains_key(&key),
                    state.tombstones.contains(&key),
                )
            };
            if outstanding {
                shared.answer_error(
                    id,
                    -32600,
                    "airlock: the id is already used by an outstanding request",
                );
                return false;
            }
            if retired {
                // A late answer to the earlier call could otherwise reach this one raw.
                shared.answer_error(
                    id,
                    -32600,
                    "airlock: the id was used by an earlier request of this session that was answered, cancelled or timed out (MCP request ids are never reused)",
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
            // The client no longer expects an answer: a late one is then dropped.
            if let Some(id) = params.and_then(|p| p.get("requestId")) {
                let key = id_key(id);
                let mut state = lock(&shared.state);
                if state.pending.remove(&key).is_some() {
                    state.tombstones.insert(key);
                }
            }
        }
        (Some("tools/call"), None) => {
            // A call without an id has no answer to judge: the server never sees it
            // (unless nothing would be judged anyway).
            let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str);
            let passes = shared.mode == Mode::Shadow
                || (shared.unguarded == Unguarded::Pass
                    && tool.is_some_and(|t| !shared.guards.contains_key(t)));
            if !passes {
                shared.note(&format!(
                    "dropped a tools/call without an id (tool {}): its answer could not be judged",
                    shown(tool.unwrap_or("?"))
                ));
                return false;
            }
        }
        _ => {}
    }
    true
}

/// Deepest client message read (a JSON-RPC envelope around arguments).
const CLIENT_MAX_DEPTH: usize = 256;

/// A client request the proxy dropped gets a JSON-RPC error when its `id` can be found,
/// so the client does not wait for its own timeout.
fn refuse_dropped(shared: &Shared, members: &crate::mcp::wire::Routing, code: i64, message: &str) {
    if !members.method || members.answer || members.bad_id {
        return;
    }
    if let Some(id) = &members.id {
        shared.answer_error(id, code, message);
    }
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
    let shadow = shared.mode == Mode::Shadow;
    match shared.guarded(tool) {
        Ok(()) if shadow && params.and_then(|p| p.get("task")).is_some() => {
            shared.note(&format!(
                "shadow: a task-augmented call of tool {} (id {}) passes unjudged; enforce would refuse it",
                shown(tool),
                shown(&id_key(id))
            ));
            Some(Pending::Unguarded)
        }
        Ok(()) => {
            if params.and_then(|p| p.get("task")).is_some() {
                // Its result would come by `tasks/result`, outside the contract.
                shared.answer_error(
                    id,
                    -32602,
                    "airlock: a task-augmented call of a guarded tool is refused (its result would bypass the contract): call it without params.task",
                );
                return None;
            }
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
                expired: false,
            })))
        }
        Err(why) if shadow && shared.unguarded == Unguarded::Refuse => {
            shared.note(&format!(
                "shadow: passing a call to tool {} (id {}) unguarded; enforce would refuse it: {why}",
                shown(tool),
                shown(&id_key(id))
            ));
            Some(Pending::Unguarded)
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
pub(super) fn server_pump(shared: &Shared, server_out: ChildStdout) {
    let (jobs, work) = mpsc::sync_channel::<(Box<Call>, Vec<u8>)>(0);
    let work = Mutex::new(work);
    thread::scope(|scope| {
        let spawned = (0..JUDGES)
            .filter(|i| {
                thread::Builder::new()
                    .name(format!("airlock-judge-{i}"))
                    .spawn_scoped(scope, || judge_answers(shared, &work))
                    .is_ok()
            })
            .count();
        let judges = Judges {
            shared,
            jobs: (spawned > 0).then_some(jobs),
        };
        read_answers(shared, server_out, &judges);
        // The judges finish what they hold before the end of the server's stdout is
        // reported (and the calls still outstanding get the server-exited error).
    });
    let _ = shared.events.send(Event::ServerEof);
}

/// Guarded answers judged at once, each on its own thread beside the server's reader:
/// a costly answer holds up neither the other answers nor the deadlines (the deadline
/// ticker answers a call whose judging outlasts it). When every judge is busy, the
/// reader waits: the server's answers are not held in memory unjudged.
const JUDGES: usize = 4;

/// Where the server's reader hands a guarded answer to be judged.
struct Judges<'a> {
    shared: &'a Shared,
    /// `None` when no judge thread could be started: the reader judges itself.
    jobs: Option<SyncSender<(Box<Call>, Vec<u8>)>>,
}

impl Judges<'_> {
    fn judge(&self, call: Box<Call>, line: Vec<u8>) {
        match &self.jobs {
            Some(jobs) => {
                if let Err(SendError((call, line))) = jobs.send((call, line)) {
                    judged(self.shared, &call, &line);
                }
            }
            None => judged(self.shared, &call, &line),
        }
    }
}

/// A judge thread: answers, one at a time, until the reader is done.
fn judge_answers(shared: &Shared, work: &Mutex<Receiver<(Box<Call>, Vec<u8>)>>) {
    loop {
        let job = lock(work).recv();
        match job {
            Ok((call, line)) => judged(shared, &call, &line),
            Err(_) => return,
        }
    }
}

/// Judge the answer `line` to a guarded call and conclude the call, unless it ended
/// while it was judged (its deadline passed, it was cancelled, the server exited): the
/// client already has its answer then, and the judgement is dropped.
fn judged(shared: &Shared, call: &Call, line: &[u8]) {
    let admission = shared.guards[&call.tool].admit(&call.request(), line);
    let key = id_key(&call.id);
    let current = {
        let mut state = lock(&shared.state);
        match state.pending.remove(&key) {
            Some(Pending::Judging(_)) => {
                state.tombstones.insert(key);
                true
            }
            Some(other) => {
                state.pending.insert(key, other);
                false
            }
            None => false,
        }
    };
    if current {
        shared.conclude(call, &admission, Some(line));
    } else {
        shared.note(&format!(
            "{} call {}: its answer was judged after the call ended (deadline, cancellation or server exit); the judgement is dropped",
            shown(&call.tool),
            shown(&id_key(&call.id)),
        ));
    }
}

/// Read the server's lines until its stdout ends.
fn read_answers(shared: &Shared, server_out: ChildStdout, judges: &Judges<'_>) {
    let mut reader = BufReader::with_capacity(64 * 1024, server_out);
    let mut buf = Vec::new();
    let whole_bound = shared.guarded_bound.max(shared.message_bound);
    // In shadow mode an answer is forwarded as it came, so it is held whole (up to the
    // larger bound) even when its contract will refuse it as too large.
    let first_bound = match shared.mode {
        Mode::Enforce => shared.guarded_bound.min(shared.message_bound),
        Mode::Shadow => whole_bound,
    };
    loop {
        buf.clear();
        if buf.capacity() > 1024 * 1024 {
            buf = Vec::new();
        }
        let mut read = read_line_onto(&mut reader, &mut buf, first_bound);
        if read.as_ref().is_ok_and(|r| *r == Line::TooLong) {
            let whole_read = match oversized(shared, &buf) {
                Oversized::Judged => {
                    if !matches!(skip_line(&mut reader), Ok(true)) {
                        break;
                    }
                    continue;
                }
                Oversized::ReadOn => {
                    read = read_line_onto(&mut reader, &mut buf, whole_bound);
                    !read.as_ref().is_ok_and(|r| *r == Line::TooLong)
                }
                Oversized::Skip => false,
            };
            if !whole_read {
                // Too long to hold: skipped, its top-level members scanned on the way,
                // so that only the request it answers is concluded.
                if !skip_over_long(shared, &mut reader, &buf) {
                    break;
                }
                continue;
            }
        }
        match read {
            Err(_) => break,
            Ok(Line::Eof) if buf.is_empty() => break,
            _ => {}
        }
        if !buf.iter().all(u8::is_ascii_whitespace) {
            from_server(shared, &mut buf, judges);
        }
        if matches!(read, Ok(Line::Eof)) {
            break;
        }
    }
}

enum Oversized {
    /// The line answered a guarded call, which got its too-large rejection: skip it.
    Judged,
    /// The line may be another message: read on, up to `--max-message-bytes`.
    ReadOn,
    /// The prefix names no id and only guarded calls are outstanding: the line is not
    /// held past the contracts' bound; it is skipped, scanned for its id on the way.
    Skip,
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
    let mut state = lock(&shared.state);
    match &members.id {
        Some(id) if !members.bad_id => {
            let key = id_key(id);
            if !matches!(state.pending.get(&key), Some(Pending::Call(_))) {
                return Oversized::ReadOn;
            }
            let Some(Pending::Call(call)) = state.pending.remove(&key) else {
                return Oversized::ReadOn;
            };
            drop(state);
            judge_too_large(shared, &call, prefix);
            Oversized::Judged
        }
        // The id comes later (a response written `result` first). When only guarded calls
        // are outstanding, it can only answer one of them, which rejects it whatever it
        // says: not held at all (a server message whose `method` comes after more than the
        // contracts' bound is then dropped, with a note).
        // Nothing outstanding, or something else too: a notification or a server request
        // (its `method` after long `params`) or another answer; read on.
        _ => {
            // (A call being judged has had its answer: it is neither.)
            let calls = state
                .pending
                .values()
                .any(|p| matches!(p, Pending::Call(_)));
            let others = state
                .pending
                .values()
                .any(|p| !matches!(p, Pending::Call(_) | Pending::Judging(_)));
            if calls && !others {
                Oversized::Skip
            } else {
                Oversized::ReadOn
            }
        }
    }
}

/// A guarded call answered by a line longer than its contract allows: judged on the bytes
/// a bounded reader takes (the guard sees its limit + 1), so the audit digest is of those.
fn judge_too_large(shared: &Shared, call: &Call, prefix: &[u8]) {
    let guard = &shared.guards[&call.tool];
    let limit = usize::try_from(guard.contract().limits().max_bytes)
        .unwrap_or(usize::MAX)
        .saturating_add(1);
    let admission = guard.admit(&call.request(), &prefix[..prefix.len().min(limit)]);
    shared.conclude(call, &admission, None);
}

/// Skip the rest of a line too long to hold, of which `prefix` was stored, and conclude
/// the request it answers: a guarded call gets its too-large rejection, another request
/// the JSON-RPC error for an answer over `--max-message-bytes`. `false` when the stream
/// ended.
fn skip_over_long(shared: &Shared, reader: &mut impl std::io::BufRead, prefix: &[u8]) -> bool {
    let mut scanner = StreamScan::default();
    scanner.feed(prefix);
    let went_on = matches!(skip_line_scanning(reader, &mut scanner), Ok(true));
    let members = scanner.members();
    if members.method || members.bad_id {
        shared.note(&format!(
            "dropped a server message longer than {} bytes that could not be held (its `method` or `id` came after that)",
            prefix.len()
        ));
        return went_on;
    }
    let pending = members.id.as_ref().and_then(|id| {
        let mut state = lock(&shared.state);
        let key = id_key(id);
        match state.pending.remove(&key) {
            // A second answer to a call being judged.
            Some(judging @ Pending::Judging(_)) => {
                state.pending.insert(key, judging);
                None
            }
            other => other,
        }
    });
    match (pending, &members.id) {
        (Some(Pending::Call(call)), _) => judge_too_large(shared, &call, prefix),
        (Some(_), Some(id)) => {
            shared.note(&format!(
                "dropped a server line over {} bytes (--max-message-bytes)",
                shared.message_bound - 1
            ));
            shared.answer_error(
                id,
                -32603,
                "airlock: the MCP server's answer exceeded --max-message-bytes",
            );
        }
        _ => shared.note(&format!(
            "dropped a server line over {} bytes that answers no outstanding request",
            prefix.len()
        )),
    }
    went_on
}

/// One whole line from the server (taken from `buf` when it goes to be judged).
fn from_server(shared: &Shared, buf: &mut Vec<u8>, judges: &Judges<'_>) {
    let line = buf.as_slice();
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
    let (pending, retired) = {
        let mut state = lock(&shared.state);
        let key = id_key(&id);
        let pending = match state.pending.remove(&key) {
            // Judged off this thread; the call stays outstanding (its deadline holds)
            // until the judgement concludes it.
            Some(Pending::Call(call)) if !call.expired => {
                state
                    .pending
                    .insert(key.clone(), Pending::Judging(call.clone()));
                Some(Pending::Call(call))
            }
            Some(judging @ Pending::Judging(_)) => {
                state.pending.insert(key, judging);
                drop(state);
                shared.note(&format!(
                    "dropped a second server response with id {}: the first is being judged",
                    shown(&id_key(&id))
                ));
                return;
            }
            other => other,
        };
        (pending, state.tombstones.contains(&key))
    };
    match pending {
        None if retired => shared.note(&format!(
            "dropped a late server response with id {}: its call was answered, cancelled or past its deadline",
            shown(&id_key(&id))
        )),
        None => shared.note(&format!(
            "dropped a server response with id {} that answers no outstanding request",
            shown(&id_key(&id))
        )),
        Some(Pending::Call(call)) if call.expired => {
            // Shadow: the timeout is audited; the client waited for the server's answer.
            lock(&shared.state).tombstones.insert(id_key(&id));
            shared.to_client_raw(&with_newline(line));
        }
        Some(Pending::Call(call)) => judges.judge(call, std::mem::take(buf)),
        Some(Pending::Judging(_)) => {}
        Some(Pending::List { first_page }) => match tools_list(shared, line, first_page) {
            Some(message) => shared.answer_error(&id, -32603, &message),
            None => shared.to_client_raw(&with_newline(line)),
        },
        Some(Pending::Unguarded | Pending::Other) => shared.to_client_raw(&with_newline(line)),
    }
}

/// Compare a `tools/list` answer with the contracts; report drift. With `--strict-drift`
/// and a drifted tool in it, the error message that replaces the answer.
fn tools_list(shared: &Shared, line: &[u8], first_page: bool) -> Option<String> {
    // Strictly: with a member repeated (a second `outputSchema`), the client may read
    // another schema than the one compared here.
    let message = match airlock_guard::parse(line, CLIENT_MAX_DEPTH) {
        Ok(message) => message,
        Err(_) if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() => {
            shared.note("drift: the tools/list answer is not strict JSON (a repeated member?): it cannot be compared with the contracts");
            return shared
                .strict_drift
                .then(|| "airlock: the tools/list answer is not strict JSON".to_owned());
        }
        Err(_) => return None,
    };
    let result = message.get("result")?;
    let tools = result.get("tools").and_then(Value::as_array)?;
    let mut drifted_here = BTreeSet::new();
    let mut notes = Vec::new();
    {
        let mut state = lock(&shared.state);
        if first_page {
            state.listed.clear();
            state.uncontracted.clear();
        }
        let mut on_this_page = BTreeSet::new();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            state.listed.insert(name.to_owned());
            if !on_this_page.insert(name) {
                // Which listing a client keeps is its own choice: a tool listed twice
                // drifts whatever each listing says.
                notes.push(format!("drift: tool {} is listed twice", shown(name)));
                if shared.guards.contains_key(name) {
                    state.drifted.insert(name.to_owned());
                    drifted_here.insert(name.to_owned());
                }
                continue;
            }
            let Some(guard) = shared.guards.get(name) else {
                // Said once per change of the set, at the end of the listing.
                let published = tool.get("outputSchema").is_some_and(|s| !s.is_null());
                let label = if published {
                    name.to_owned()
                } else {
                    format!("{name} (no outputSchema)")
                };
                state.uncontracted.insert(label);
                continue;
            };
            let contract = guard.contract();
            if tool.get("outputSchema") == Some(contract.schema().document()) {
                state.drifted.remove(name);
            } else {
                let file = airlock_guard::version_file(contract.version());
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
            let uncontracted = std::mem::take(&mut state.uncontracted);
            if state.uncontracted_reported.as_ref() != Some(&uncontracted) {
                if !uncontracted.is_empty() {
                    let names: Vec<String> = uncontracted.iter().map(|n| shown(n)).collect();
                    let what = match shared.unguarded {
                        Unguarded::Refuse if shared.mode == Mode::Enforce => {
                            "their calls are refused"
                        }
                        _ => "their calls pass unjudged",
                    };
                    notes.push(format!(
                        "tools without a contract ({what}; said again only when this list changes): {}",
                        names.join(", ")
                    ));
                }
                state.uncontracted_reported = Some(uncontracted);
            }
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
