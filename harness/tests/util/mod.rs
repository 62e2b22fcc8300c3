//! Helpers shared by the harness's integration tests.

use airlock_guard::{Contract, Guard};
use airlock_harness::corpus::{corpus_dir, Corpus};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shipped example contracts.
pub const TOOLS: [&str; 9] = [
    "review_status",
    "job_run_status",
    "deploy_status",
    "identity_lookup",
    "quota_usage",
    "package_vulnerabilities",
    "change_review",
    "ci_pipeline_status",
    "git_branch_head",
];

/// A shipped contract's folder.
pub fn contract_dir(tool: &str) -> PathBuf {
    root().join("schemas").join(tool)
}

/// A shipped contract's guard and corpus.
pub fn load(tool: &str) -> (Guard, Corpus) {
    let contract = Contract::load(contract_dir(tool)).unwrap();
    let corpus = Corpus::load(&corpus_dir(&contract).unwrap()).unwrap();
    (Guard::new(contract), corpus)
}

/// Copy the shipped contract `tool` and its corpus under `into` (`schemas/<tool>`,
/// `corpora/<tool>`, the layout contracts find their corpus by); the contract's folder.
pub fn copy_shipped(tool: &str, into: &std::path::Path) -> PathBuf {
    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy_tree(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let dir = into.join("schemas").join(tool);
    copy_tree(&contract_dir(tool), &dir);
    copy_tree(
        &root().join("corpora").join(tool),
        &into.join("corpora").join(tool),
    );
    dir
}

/// Run `airlock` with `args`, feeding `stdin`.
/// `PATH` with the folder of the `airlock` under test first: for scripts and documents
/// that call `airlock` by name.
pub fn path_with_airlock() -> std::ffi::OsString {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_airlock"))
        .parent()
        .unwrap()
        .to_owned();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).unwrap()
}

pub fn airlock(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_airlock"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A command that does not read its input may exit before it is written.
    if let Err(e) = input.write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    drop(input);
    child.wait_with_output().unwrap()
}
