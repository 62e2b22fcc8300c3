//! `--record DIR`: each judged answer to a guarded call is written as a corpus fixture
//! (`DIR/<tool>/accepted/` when the guard admitted it, `DIR/<tool>/review/` when it did
//! not), with its own `NAME.request.json` (the call's arguments, JSON-RPC id and time), so
//! that `airlock check --corpus DIR/<tool>` replays real traffic unchanged. Every file is
//! created exclusively (never through a file or link already there); a tool's recording
//! stops at its count bound.

use airlock_guard::Verdict;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The default bound on the answers recorded per tool in one session.
pub const DEFAULT_RECORD_MAX: usize = 100;

/// Where and how much a session records.
#[derive(Debug)]
pub(super) struct Recorder {
    dir: PathBuf,
    max_per_tool: usize,
    /// A session stamp in every file name, so that sessions never collide.
    stamp: String,
    counts: std::sync::Mutex<HashMap<String, usize>>,
}

/// The call an answer answers, as a fixture's request says it.
pub(super) struct RecordedCall<'a> {
    pub(super) tool: &'a str,
    pub(super) id: &'a Value,
    pub(super) arguments: &'a Map<String, Value>,
    pub(super) now: airlock_guard::jiff::Timestamp,
}

/// What became of one answer.
pub(super) enum Recorded {
    Written(PathBuf),
    /// The tool's bound was reached (said once).
    Full {
        first: bool,
    },
}

impl Recorder {
    pub(super) fn new(dir: PathBuf, max_per_tool: usize) -> Self {
        let now = airlock_guard::jiff::Timestamp::now();
        let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
        Self {
            dir,
            max_per_tool,
            stamp: format!("{stamp}-{}", std::process::id()),
            counts: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Record `line`, the answer to `call` the guard judged `verdict`.
    pub(super) fn record(
        &self,
        call: &RecordedCall<'_>,
        verdict: Verdict,
        line: &[u8],
    ) -> std::io::Result<Recorded> {
        let n = {
            let mut counts = self
                .counts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let n = counts.entry(call.tool.to_owned()).or_insert(0);
            *n += 1;
            *n
        };
        if n > self.max_per_tool {
            return Ok(Recorded::Full {
                first: n == self.max_per_tool + 1,
            });
        }
        let corpus = self.dir.join(call.tool);
        let sub = if verdict.is_admitted() {
            "accepted"
        } else {
            "review"
        };
        let folder = corpus.join(sub);
        std::fs::create_dir_all(&folder)?;
        let request = json!({
            "tool": call.tool,
            "jsonrpc_id": call.id,
            "params": Value::Object(call.arguments.clone()),
            "now": call.now.to_string(),
        });
        let mut request_text = serde_json::to_string_pretty(&request).unwrap_or_default();
        request_text.push('\n');
        // The corpus's default request: the first call's (each fixture has its own too).
        write_new(&corpus.join("request.json"), request_text.as_bytes())?;
        for (i, name) in (0..100).map(|i| (i, self.name(n, i))) {
            let fixture = folder.join(format!("{name}.json"));
            let mut answer = line.to_vec();
            answer.push(b'\n');
            match create_new(&fixture) {
                Ok(mut file) => {
                    file.write_all(&answer)?;
                    let overrides = folder.join(format!("{name}.request.json"));
                    write_new(&overrides, request_text.as_bytes())?;
                    return Ok(Recorded::Written(fixture));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && i < 99 => {}
                Err(e) => return Err(e),
            }
        }
        unreachable!("the loop returns")
    }

    fn name(&self, n: usize, attempt: usize) -> String {
        if attempt == 0 {
            format!("{}-{n:04}", self.stamp)
        } else {
            format!("{}-{n:04}-{attempt}", self.stamp)
        }
    }
}

/// A new file at `path`, never one already there (nor through a link).
fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Write `path` when nothing is there; an existing file is kept.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match create_new(path) {
        Ok(mut file) => file.write_all(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
