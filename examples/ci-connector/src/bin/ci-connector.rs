//! `ci-connector`: the worked adapter crate's binary.
//!
//! ```text
//! ci-connector --exec-protocol [--schemas DIR] [--audit FILE]
//! ci-connector pipeline BASE_URL PROJECT_ID PIPELINE_ID [--schemas DIR] [--audit FILE]
//! ci-connector branch REPO REF [--schemas DIR] [--audit FILE]
//! ```
//!
//! `--exec-protocol` serves `airlock check --adapter-cmd` on stdin/stdout with the
//! `ci_pipeline_status` and `git_branch_head` contracts; `pipeline` and `branch` ask the
//! real upstream once and print the agent value. `--schemas` is the folder holding the two
//! contract folders (default: this repository's `schemas/`); `--audit` appends the audit
//! records (JSON lines) to FILE (default: discarded under `--exec-protocol`, stderr
//! otherwise).
//!
//! Exit codes: 0 answered, 2 usage or a broken case line or request, 3 an audit record
//! that could not be written or I/O.

use airlock_guard::{jiff::Timestamp, Request};
use ci_connector::{exec, CiConnector, ConnectorError, GitBranchHead, Judge};
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: ci-connector --exec-protocol [--schemas DIR] [--audit FILE]
       ci-connector pipeline BASE_URL PROJECT_ID PIPELINE_ID [--schemas DIR] [--audit FILE]
       ci-connector branch REPO REF [--schemas DIR] [--audit FILE]";

fn main() -> ExitCode {
    let mut positional = Vec::new();
    let mut schemas = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas"));
    let mut audit: Option<PathBuf> = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--schemas") => match args.next() {
                Some(dir) => schemas = dir.into(),
                None => return usage("--schemas needs a folder"),
            },
            Some("--audit") => match args.next() {
                Some(file) => audit = Some(file.into()),
                None => return usage("--audit needs a file"),
            },
            Some("-h" | "--help") => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            Some(flag) if flag.starts_with('-') && flag != "--exec-protocol" => {
                return usage(&format!("unknown option {flag}"))
            }
            _ => positional.push(arg),
        }
    }
    let words: Vec<&str> = positional.iter().filter_map(|a| a.to_str()).collect();
    if words.len() != positional.len() {
        return usage("arguments must be UTF-8");
    }
    let exec_mode = words.first() == Some(&"--exec-protocol");
    let sink = || -> io::Result<Box<dyn Write + Send>> {
        Ok(match &audit {
            Some(file) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(file)?,
            ),
            None if exec_mode => Box::new(io::sink()),
            None => Box::new(io::stderr()),
        })
    };
    let result = match (words.as_slice(), sink()) {
        (_, Err(e)) => {
            eprintln!("ci-connector: opening the audit file: {e}");
            return ExitCode::from(3);
        }
        (["--exec-protocol"], Ok(sink)) => return serve(&schemas, sink),
        (["pipeline", base, project, pipeline], Ok(sink)) => {
            let (Ok(project), Ok(pipeline)) = (project.parse::<u64>(), pipeline.parse::<u64>())
            else {
                return usage("PROJECT_ID and PIPELINE_ID are positive integers");
            };
            let request = Request::new(request_id(), Timestamp::now())
                .param("project_id", project)
                .param("pipeline_id", pipeline);
            CiConnector::new(base, schemas.join("ci_pipeline_status"))
                .and_then(|c| c.audit_to(sink).fetch(&request))
                .map(|a| println!("{}", a.agent().to_json_string()))
        }
        (["branch", repo, reference], Ok(sink)) => {
            let request =
                Request::new(request_id(), Timestamp::now()).param("ref", reference.to_string());
            GitBranchHead::new(repo, schemas.join("git_branch_head"))
                .and_then(|g| g.audit_to(sink).fetch(&request))
                .map(|a| println!("{}", a.agent().to_json_string()))
        }
        _ => return usage("expected --exec-protocol, pipeline or branch"),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ (ConnectorError::Contract(_) | ConnectorError::BadRequest(_))) => {
            eprintln!("ci-connector: {e}");
            ExitCode::from(2)
        }
        Err(e @ ConnectorError::Audit(_)) => {
            eprintln!("ci-connector: {e}");
            ExitCode::from(3)
        }
    }
}

fn serve(schemas: &std::path::Path, audit: Box<dyn Write + Send>) -> ExitCode {
    // One audit writer shared by both judges, in the order records are written.
    let shared = std::sync::Arc::new(std::sync::Mutex::new(audit));
    let writer = || Box::new(Shared(std::sync::Arc::clone(&shared))) as Box<dyn Write + Send>;
    let judges =
        Judge::load(&schemas.join("ci_pipeline_status"), None, writer()).and_then(|pipeline| {
            Ok((
                pipeline,
                Judge::load(&schemas.join("git_branch_head"), None, writer())?,
            ))
        });
    let (pipeline, branch) = match judges {
        Ok(judges) => judges,
        Err(e) => {
            eprintln!("ci-connector: {e} (--schemas names the folder holding ci_pipeline_status/ and git_branch_head/)");
            return ExitCode::from(2);
        }
    };
    match exec::serve(
        &[&pipeline, &branch],
        io::stdin().lock(),
        io::stdout().lock(),
    ) {
        Ok(_) => ExitCode::SUCCESS,
        // The harness stopped reading: nothing left to answer.
        Err(exec::ServeError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e @ exec::ServeError::Protocol { .. }) => {
            eprintln!("ci-connector: exec protocol: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("ci-connector: {e}");
            ExitCode::from(3)
        }
    }
}

/// A writer shared by several judges.
struct Shared(std::sync::Arc<std::sync::Mutex<Box<dyn Write + Send>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).flush()
    }
}

/// A request id the contracts' pattern admits, unique enough for one run.
fn request_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("req.cli{nanos:x}")
}

fn usage(reason: &str) -> ExitCode {
    eprintln!("ci-connector: {reason}\n{USAGE}");
    ExitCode::from(2)
}
