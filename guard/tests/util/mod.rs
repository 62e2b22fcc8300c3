//! Helpers shared by the guard's integration tests.

pub mod generators;

use airlock_guard::{Contract, Guard, Request};
use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shipped example contracts.
pub const TOOLS: [&str; 4] = [
    "review_status",
    "job_run_status",
    "deploy_status",
    "identity_lookup",
];

/// A shipped contract.
pub fn contract(tool: &str) -> Contract {
    Contract::load(root().join("schemas").join(tool)).unwrap()
}

/// A guard and the default request of every shipped contract, loaded once.
pub fn guards() -> &'static [(Guard, Request)] {
    static GUARDS: std::sync::OnceLock<Vec<(Guard, Request)>> = std::sync::OnceLock::new();
    GUARDS.get_or_init(|| {
        TOOLS
            .iter()
            .map(|t| (Guard::new(contract(t)), request(t)))
            .collect()
    })
}

/// The default request of a shipped contract.
pub fn request(tool: &str) -> Request {
    let path = root().join("corpora").join(tool).join("request.json");
    Request::from_json(&std::fs::read(path).unwrap()).unwrap()
}

/// The accepted success fixtures of a shipped contract that use the default request.
pub fn accepted_successes(tool: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root().join("corpora").join(tool).join("accepted");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let override_file = path.with_file_name(name.replace(".json", ".request.json"));
        if name.ends_with(".request.json") || !name.starts_with("success") || override_file.exists()
        {
            continue;
        }
        out.push((name, std::fs::read(&path).unwrap()));
    }
    out.sort();
    out
}
/// `../shared/testsuites` (or `$AIRLOCK_TESTSUITES`), if present. When absent the caller
/// skips with a message, unless `AIRLOCK_REQUIRE_TESTSUITES` is set (as CI does), in
/// which case absence is a failure.
pub fn testsuites(name: &str) -> Option<PathBuf> {
    let base = std::env::var_os("AIRLOCK_TESTSUITES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/testsuites"));
    let dir = base.join(name);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("AIRLOCK_REQUIRE_TESTSUITES").is_none(),
        "{} is required (AIRLOCK_REQUIRE_TESTSUITES is set) but absent",
        dir.display()
    );
    eprintln!(
        "skipping: {} not found (set AIRLOCK_TESTSUITES to its folder)",
        dir.display()
    );
    None
}
