//! The command adapter: a local process's output, judged by a command-output contract.

use airlock_guard::{Admission, Request, TransportError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::{ConnectorError, Judge};

/// The `--format` of `git for-each-ref` the `git_branch_head` contract's grammar reads:
/// three `key=value` lines.
pub const FOR_EACH_REF_FORMAT: &str =
    "ref=%(refname)%0aobjectname=%(objectname)%0acommitterdate=%(committerdate:iso-strict)";

/// How long `git` may take when no timeout is set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A branch's head commit from `git for-each-ref` in a local repository, judged by the
/// `git_branch_head` contract.
///
/// `git` runs without a shell (`git -C REPO for-each-ref --format=… -- REF`), stdin
/// closed, stderr discarded, `LC_ALL=C`. Its stdout is read under the contract's limit (at
/// most `max_bytes + 1` bytes; past that the process is killed and the output rejected).
/// Past the timeout the process is killed: `timeout`. `git` missing or failing to start,
/// or a non-zero exit status: `unreachable`. A ref that matches several branches (a
/// prefix) prints every one: the grammar rejects the duplicated keys. Only the process
/// itself is killed: a program that leaves children holding its stdout (not `git`) would
/// need its own process group.
#[derive(Debug)]
pub struct GitBranchHead {
    repo: PathBuf,
    git: PathBuf,
    timeout: Duration,
    judge: Judge,
}

impl GitBranchHead {
    /// The adapter for the repository at `repo`, judged by the contract in
    /// `contract_dir`. Audit records are discarded until [`GitBranchHead::audit_to`].
    ///
    /// # Errors
    ///
    /// [`ConnectorError::Contract`] when the contract does not load.
    pub fn new(
        repo: impl Into<PathBuf>,
        contract_dir: impl AsRef<Path>,
    ) -> Result<Self, ConnectorError> {
        let repo = repo.into();
        let endpoint = format!("git:{}", repo.display());
        Ok(Self {
            judge: Judge::load(contract_dir.as_ref(), Some(&endpoint), Box::new(io::sink()))?,
            repo,
            git: PathBuf::from("git"),
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// Write one audit record (a JSON line) per attempt to `audit`.
    pub fn audit_to(mut self, audit: impl Write + Send + 'static) -> Self {
        self.judge.audit = std::sync::Mutex::new(Box::new(audit));
        self
    }

    /// Kill `git` after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Run this program instead of `git` from `PATH`.
    pub fn git_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.git = program.into();
        self
    }

    /// The judge (the guard and the audit writer).
    pub fn judge(&self) -> &Judge {
        &self.judge
    }

    /// Read the head of the branch `request.params.ref` names (`refs/heads/…`) and judge
    /// the output.
    ///
    /// # Errors
    ///
    /// A bad request (nothing run) or an audit record that could not be written.
    pub fn fetch(&self, request: &Request) -> Result<Admission, ConnectorError> {
        let reference = request
            .params
            .get("ref")
            .and_then(serde_json::Value::as_str)
            .filter(|r| r.starts_with("refs/heads/") && !r.chars().any(char::is_control))
            .ok_or_else(|| {
                ConnectorError::BadRequest(
                    "parameter \"ref\" must be a string refs/heads/BRANCH".into(),
                )
            })?;
        self.judge.run(request, |_attempt| self.attempt(reference))
    }

    /// One run of `git`: its stdout under the limit, or the transport error.
    fn attempt(&self, reference: &str) -> Result<Vec<u8>, TransportError> {
        let deadline = Instant::now() + self.timeout;
        let mut child = Command::new(&self.git)
            .arg("-C")
            .arg(&self.repo)
            .arg("for-each-ref")
            .arg(format!("--format={FOR_EACH_REF_FORMAT}"))
            .arg("--")
            .arg(reference)
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|_| TransportError::Unreachable)?;
        let Some(stdout) = child.stdout.take() else {
            kill(&mut child);
            return Err(TransportError::Unreachable);
        };
        // The read happens on its own thread so that the timeout holds even when the
        // process neither writes nor exits.
        let (sender, receiver) = mpsc::channel();
        let max_bytes = self.judge.max_bytes();
        std::thread::spawn(move || {
            let read = airlock_guard::read_limited(stdout, max_bytes);
            let _ = sender.send(read);
        });
        let remaining = deadline.saturating_duration_since(Instant::now());
        let body = match receiver.recv_timeout(remaining) {
            Ok(Ok(body)) => body,
            Ok(Err(airlock_guard::ReadError::TooLarge { read })) => {
                // Nothing past max_bytes + 1 is read; the process is not waited for.
                kill(&mut child);
                return Ok(read);
            }
            Ok(Err(airlock_guard::ReadError::Io(_))) => {
                kill(&mut child);
                return Err(TransportError::ConnectionReset);
            }
            Err(_) => {
                kill(&mut child);
                return Err(TransportError::Timeout);
            }
        };
        // The output ended; the exit status decides whether it is an answer.
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(body),
                Ok(Some(_)) | Err(_) => return Err(TransportError::Unreachable),
                Ok(None) if Instant::now() >= deadline => {
                    kill(&mut child);
                    return Err(TransportError::Timeout);
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}
