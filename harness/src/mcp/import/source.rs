//! Where the tools come from: saved `tools/list` answers (whole JSON-RPC lines or bare
//! results, pages in order, their cursors chained) or a live stdio server spoken to by
//! hand. Every byte is read with a bound and parsed strictly; a server gets a timeout per
//! message and is killed (its whole process group) after a short grace.

use airlock_guard::{
    parse_within, read_limited, ParseError, ParseErrorKind, ReadError, MAX_DEPTH_CEILING,
};
use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use super::ImportError;

/// A saved answer, or a line from a server, is at most this long (64 MiB, the guard's
/// `MAX_BYTES_CEILING`).
pub const MAX_ANSWER_BYTES: u64 = airlock_guard::MAX_BYTES_CEILING;

/// At most this many `tools/list` pages are asked of a server (a server whose cursors
/// never end is an error, not a loop).
pub const MAX_PAGES: usize = 1000;

/// A `tools/list` read whole, every page counted, is at most this long: paging does not
/// multiply the bound of one answer. With [`MAX_LIST_VALUES`] it bounds what import
/// holds.
pub const MAX_LIST_BYTES: u64 = MAX_ANSWER_BYTES;

/// At most this many tools are listed, every page counted (real servers list tens,
/// the largest a few hundred).
pub const MAX_TOOLS: usize = 10_000;

/// At most this many JSON values (every member's value and item) in all pages: parsed
/// values take up to 72 bytes each, so this bounds what the list can take to about 300 MB
/// whatever its shape (a real server's list holds about 40 values a tool).
pub const MAX_LIST_VALUES: usize = 4_000_000;

/// Why bytes read from a file or a server are not (the rest of) a server's tool list;
/// the caller says which file or which request.
#[derive(Debug, thiserror::Error)]
enum ListError {
    /// More JSON values than [`MAX_LIST_VALUES`], every page counted.
    #[error(
        "more than {MAX_LIST_VALUES} JSON values (every page counted): not a server's tool list"
    )]
    TooManyValues,
    /// Not strict JSON (said without quoting the input).
    #[error("not strict JSON: {}", .0.masked_message())]
    NotJson(ParseError),
    /// Over [`MAX_LIST_BYTES`], every page counted.
    #[error(
        "the tools/list pages together are larger than {MAX_LIST_BYTES} bytes: not a \
         server's tool list"
    )]
    TooManyBytes,
    /// Over [`MAX_TOOLS`] tools, every page counted.
    #[error(
        "more than {MAX_TOOLS} tools listed: not imported (import a server's tools from a \
         list of at most {MAX_TOOLS})"
    )]
    TooManyTools,
    /// Not a JSON object.
    #[error("not a tools/list answer: expected a JSON object")]
    NotAnObject,
    /// A JSON-RPC request or notification.
    #[error(
        "a JSON-RPC request or notification, not the answer to tools/list (save the \
         server's response line)"
    )]
    Request,
    /// A JSON-RPC error answer (its `error` object).
    #[error("a JSON-RPC error answer, not a tools/list result: {}", rpc_error(.0))]
    RpcError(Value),
    /// A JSON-RPC message without a `result` object.
    #[error("a JSON-RPC message without a result object: not a tools/list answer")]
    NoResult,
    /// A result that is not an object.
    #[error("the tools/list result is not an object")]
    ResultNotObject,
    /// No `tools` member.
    #[error(
        "no \"tools\" member: not a tools/list answer (a JSON-RPC response line or its \
         result object)"
    )]
    NoTools,
    /// `tools` is not an array.
    #[error("\"tools\" is not an array")]
    ToolsNotArray,
    /// `nextCursor` is not a string.
    #[error("\"nextCursor\" is not a string")]
    CursorNotString,
}

/// What the pages read so far hold: their bytes and tools, and the values they leave of
/// [`MAX_LIST_VALUES`]; within [`MAX_LIST_BYTES`] and [`MAX_TOOLS`].
#[derive(Debug)]
struct Tally {
    bytes: u64,
    values_left: usize,
    tools: usize,
}

impl Tally {
    fn new() -> Self {
        Self {
            bytes: 0,
            values_left: MAX_LIST_VALUES,
            tools: 0,
        }
    }

    /// Strict-parse a page or message within the values the pages before it left: past
    /// them, an error before the values are built. The error says what the bytes are
    /// (`not strict JSON: …`, or more values than the bound).
    fn parse(&mut self, bytes: &[u8]) -> Result<Value, ListError> {
        parse_within(bytes, MAX_DEPTH_CEILING, &mut self.values_left).map_err(|e| match e.kind() {
            ParseErrorKind::TooManyValues { .. } => ListError::TooManyValues,
            _ => ListError::NotJson(e),
        })
    }

    /// Count a page of `bytes` bytes; an error past the bound.
    fn bytes(&mut self, bytes: usize) -> Result<(), ListError> {
        self.bytes = self.bytes.saturating_add(bytes as u64);
        if self.bytes > MAX_LIST_BYTES {
            return Err(ListError::TooManyBytes);
        }
        Ok(())
    }

    /// Count a page's tools; an error past the bound.
    fn tools(&mut self, tools: usize) -> Result<(), ListError> {
        self.tools = self.tools.saturating_add(tools);
        if self.tools > MAX_TOOLS {
            return Err(ListError::TooManyTools);
        }
        Ok(())
    }
}

/// The protocol version `initialize` offers.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// After stdin is closed a server has this long to exit before its process group is
/// killed.
const GRACE: Duration = Duration::from_secs(2);

/// The tools of a server, in `tools/list` order, and where they came from.
#[derive(Debug, Clone)]
pub struct ToolsList {
    /// Each tool object as listed.
    pub tools: Vec<Value>,
    /// Where they came from, for the contracts' header comment: the files, or the
    /// server's `serverInfo` (never the command line, which may hold secrets).
    pub origin: String,
}

/// Read the pages of a `tools/list` answer saved in `files`, in order.
///
/// # Errors
///
/// [`ImportError::Input`] naming the file: unreadable, over 64 MiB, not strict JSON (a
/// duplicate key too), not a `tools/list` answer (a JSON-RPC error, no `tools` array, a
/// `nextCursor` that is not a string), or pages whose cursors do not chain: a page with
/// `nextCursor` must be followed by another file, and only such a page may be.
pub fn read_files(files: &[PathBuf]) -> Result<ToolsList, ImportError> {
    if files.is_empty() {
        return Err(ImportError::Usage("no --tools-list file given".into()));
    }
    let mut tools = Vec::new();
    let mut tally = Tally::new();
    for (i, path) in files.iter().enumerate() {
        let bytes = read_file(path, MAX_LIST_BYTES - tally.bytes)?;
        tally
            .bytes(bytes.len())
            .map_err(|reason| input(path, reason))?;
        let value = tally.parse(&bytes).map_err(|reason| input(path, reason))?;
        drop(bytes);
        let page = page_of(value).map_err(|reason| input(path, reason))?;
        tally
            .tools(page.tools.len())
            .map_err(|reason| input(path, reason))?;
        tools.extend(page.tools);
        match (&page.next_cursor, files.get(i + 1)) {
            (Some(cursor), None) => {
                return Err(input(
                    path,
                    format!(
                        "this page has nextCursor {}: the pages after it are missing (save \
                         every page, following nextCursor, and name them in order)",
                        shown(cursor)
                    ),
                ))
            }
            (None, Some(next)) => {
                return Err(input(
                    next,
                    format!(
                        "{} has no nextCursor, so no page follows it: name only one \
                         tools/list answer, or its pages in order",
                        path.display()
                    ),
                ))
            }
            _ => {}
        }
    }
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    Ok(ToolsList {
        tools,
        origin: format!("the saved tools/list answer {}", names.join(", ")),
    })
}

/// Read `path`, at most `left` bytes (what the pages before it left of
/// [`MAX_LIST_BYTES`]).
fn read_file(path: &Path, left: u64) -> Result<Vec<u8>, ImportError> {
    let file = std::fs::File::open(path).map_err(|e| input(path, format!("cannot read: {e}")))?;
    read_limited(file, left).map_err(|e| match e {
        ReadError::TooLarge { .. } if left < MAX_LIST_BYTES => input(path, ListError::TooManyBytes),
        ReadError::TooLarge { .. } => input(
            path,
            format!("larger than {MAX_ANSWER_BYTES} bytes: not a tools/list answer"),
        ),
        ReadError::Io(e) => input(path, format!("cannot read: {e}")),
    })
}

fn input(path: &Path, reason: impl std::fmt::Display) -> ImportError {
    ImportError::Input {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

/// A string from a peer, quoted and cut for a message.
pub(crate) fn shown(text: &str) -> String {
    let head: String = text.chars().take(200).collect();
    if head.len() < text.len() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

/// JSON text from a peer, cut for a message (the binary escapes control characters).
fn cut(text: &str) -> String {
    let head: String = text.chars().take(200).collect();
    if head.len() < text.len() {
        format!("{head}…")
    } else {
        head
    }
}

/// One page of a `tools/list` answer.
#[derive(Debug)]
struct Page {
    tools: Vec<Value>,
    next_cursor: Option<String>,
}

/// A page from a whole JSON-RPC response (`{"jsonrpc","id","result"}`) or a bare result
/// (`{"tools": [...]}`).
fn page_of(value: Value) -> Result<Page, ListError> {
    let Value::Object(mut object) = value else {
        return Err(ListError::NotAnObject);
    };
    let result = if object.contains_key("jsonrpc") {
        if object.contains_key("method") {
            return Err(ListError::Request);
        }
        if let Some(error) = object.remove("error") {
            return Err(ListError::RpcError(error));
        }
        match object.remove("result") {
            Some(Value::Object(result)) => result,
            _ => return Err(ListError::NoResult),
        }
    } else {
        object
    };
    result_page(result)
}

fn result_page(mut result: Map<String, Value>) -> Result<Page, ListError> {
    let tools = match result.remove("tools") {
        None => return Err(ListError::NoTools),
        Some(Value::Array(tools)) => tools,
        Some(_) => return Err(ListError::ToolsNotArray),
    };
    let next_cursor = match result.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(cursor.clone()),
        Some(_) => return Err(ListError::CursorNotString),
    };
    Ok(Page { tools, next_cursor })
}

/// A JSON-RPC error object for a message: code and (cut) message.
fn rpc_error(error: &Value) -> String {
    let code = error.get("code").map_or("?".into(), Value::to_string);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    format!("code {code}, message {}", shown(message))
}

/// A live server: `sh -c CMD` over stdio, its stderr passed through.
///
/// # Errors
///
/// [`ImportError::Server`]: it could not be started, closed its output, sent something
/// that is not strict JSON or a line over 64 MiB, answered with a JSON-RPC error or
/// another id, did not answer within `timeout`, or paged without end.
pub fn read_server(command: &str, timeout: Duration) -> Result<ToolsList, ImportError> {
    let mut server = Server::start(command, timeout)?;
    let listed = server.list();
    server.stop();
    listed
}

/// A running server and the reader of its stdout.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Result<Vec<u8>, LineError>>,
    timeout: Duration,
    next_id: i64,
    /// Every line read, and the tools listed, within their bounds.
    tally: Tally,
}

fn server_error(reason: impl Into<String>) -> ImportError {
    ImportError::Server(reason.into())
}

impl Server {
    fn start(command: &str, timeout: Duration) -> Result<Self, ImportError> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| server_error(format!("could not start `sh -c`: {e}")))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        // One line waits at most: a server's lines are never held beyond the one read.
        let (tx, lines) = mpsc::sync_channel(0);
        if let Some(stdout) = stdout {
            thread::spawn(move || read_lines(stdout, &tx));
        }
        Ok(Self {
            child,
            stdin,
            lines,
            timeout,
            next_id: 1,
            tally: Tally::new(),
        })
    }

    fn list(&mut self) -> Result<ToolsList, ImportError> {
        let init = self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "airlock", "version": env!("CARGO_PKG_VERSION")},
            }),
        )?;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = cursor
                .as_ref()
                .map_or_else(|| json!({}), |c| json!({ "cursor": c }));
            let result = self.request("tools/list", params)?;
            let page = match result {
                Value::Object(result) => result_page(result),
                _ => Err(ListError::ResultNotObject),
            }
            .and_then(|page| self.tally.tools(page.tools.len()).map(|()| page))
            .map_err(|e| server_error(format!("tools/list: {e}")))?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => {
                    return Ok(ToolsList {
                        tools,
                        origin: format!("a live server ({})", server_info(&init)),
                    })
                }
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(server_error(format!(
                        "tools/list: nextCursor {} came twice: the pages loop",
                        shown(&next)
                    )))
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(server_error(format!(
            "tools/list: still a nextCursor after {MAX_PAGES} pages"
        )))
    }

    fn send(&mut self, message: &Value) -> Result<(), ImportError> {
        let mut line = serde_json::to_vec(message).map_err(|e| server_error(e.to_string()))?;
        line.push(b'\n');
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| server_error("its stdin is closed"))?;
        let written = stdin.write_all(&line).and_then(|()| stdin.flush());
        written.map_err(|e| {
            let status = self.exit_status();
            server_error(format!("writing to the server: {e}{status}"))
        })
    }

    /// Send a request and wait for its response, skipping the server's notifications
    /// and requests; the result, or the JSON-RPC error as an error.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, ImportError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Ok(line)) => line,
                Ok(Err(reason)) => return Err(server_error(format!("{method}: {reason}"))),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(server_error(format!(
                        "{method}: no answer within {:?} (--timeout)",
                        self.timeout
                    )))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(server_error(format!(
                        "{method}: the server closed its output before answering{}",
                        self.exit_status()
                    )))
                }
            };
            self.tally
                .bytes(line.len())
                .map_err(|e| server_error(format!("{method}: {e}")))?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let message = self.tally.parse(&line).map_err(|reason| {
                server_error(format!(
                    "{method}: the server wrote a line that is {reason}"
                ))
            })?;
            if message.get("method").is_some() {
                continue; // a notification or a request of the server's: not our answer
            }
            if message.get("id") != Some(&json!(id)) {
                return Err(server_error(format!(
                    "{method}: answered id {}, expected {id}",
                    message
                        .get("id")
                        .map_or_else(|| "(none)".into(), |v| cut(&v.to_string()))
                )));
            }
            if let Some(error) = message.get("error") {
                return Err(server_error(format!(
                    "{method}: JSON-RPC error: {}",
                    rpc_error(error)
                )));
            }
            drop(line);
            let Value::Object(mut message) = message else {
                return Err(server_error(format!(
                    "{method}: an answer that is not an object"
                )));
            };
            return message
                .remove("result")
                .ok_or_else(|| server_error(format!("{method}: an answer with no result")));
        }
    }

    fn exit_status(&mut self) -> String {
        thread::sleep(Duration::from_millis(50));
        match self.child.try_wait() {
            Ok(Some(status)) => format!(" (it exited: {status})"),
            _ => String::new(),
        }
    }

    /// Close stdin, give the server [`GRACE`] to exit, then kill its process group; reap.
    fn stop(mut self) {
        drop(self.stdin.take());
        let until = Instant::now() + GRACE;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                kill_group(self.child.id()); // whatever it left behind in its group
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `name version` of an `initialize` result's `serverInfo`.
fn server_info(init: &Value) -> String {
    let info = init.get("serverInfo");
    let field = |k: &str| info.and_then(|i| i.get(k)).and_then(Value::as_str);
    match (field("name"), field("version")) {
        (Some(name), Some(version)) => format!("serverInfo {} {}", shown(name), shown(version)),
        (Some(name), None) => format!("serverInfo {}", shown(name)),
        _ => "no serverInfo".into(),
    }
}

/// Kill a process group (the server's shell is its leader).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Why the server's stdout gave no further line.
#[derive(Debug, thiserror::Error)]
enum LineError {
    /// A line over [`MAX_ANSWER_BYTES`].
    #[error("the server wrote a line over {MAX_ANSWER_BYTES} bytes")]
    TooLong,
    /// Reading failed.
    #[error("reading the server's output: {0}")]
    Read(std::io::Error),
}

/// Lines of the server's stdout, each at most [`MAX_ANSWER_BYTES`]; ends at EOF, after
/// a read error or an over-long line (reported), or when nobody listens any more.
fn read_lines(stdout: impl Read, tx: &mpsc::SyncSender<Result<Vec<u8>, LineError>>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        match (&mut reader)
            .take(MAX_ANSWER_BYTES + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) => return,
            Ok(_) if line.len() as u64 > MAX_ANSWER_BYTES => {
                let _ = tx.send(Err(LineError::TooLong));
                return;
            }
            Ok(_) => {
                if tx.send(Ok(line)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(LineError::Read(e)));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_result_and_a_response_line_are_both_pages() {
        let bare = json!({"tools": [{"name": "a"}], "nextCursor": "p2"});
        let page = page_of(bare).unwrap();
        assert_eq!(page.tools.len(), 1);
        assert_eq!(page.next_cursor.as_deref(), Some("p2"));
        let line = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}});
        assert!(page_of(line).unwrap().next_cursor.is_none());
    }

    #[test]
    fn an_error_answer_a_request_and_a_missing_tools_array_are_not_pages() {
        let error =
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "nope"}});
        let e = page_of(error).unwrap_err();
        assert!(matches!(e, ListError::RpcError(_)), "{e}");
        assert!(e.to_string().contains("-32601"), "{e}");
        let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        assert!(matches!(page_of(request), Err(ListError::Request)));
        assert!(matches!(
            page_of(json!({"tool": []})),
            Err(ListError::NoTools)
        ));
        assert!(matches!(
            page_of(json!({"tools": [], "nextCursor": 3})),
            Err(ListError::CursorNotString)
        ));
    }
}
