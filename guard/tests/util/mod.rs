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
/// The folder `name` of the pinned conformance suites (`testsuites/PINNED`): under
/// `$AIRLOCK_TESTSUITES` when it is set (a wrong one is a failure), else
/// `../shared/testsuites` beside the repository, else `target/testsuites` (where
/// `ci/testsuites.sh` fetches them). Absent suites fail the test, naming the fix, unless
/// `AIRLOCK_SKIP_CONFORMANCE=1`: then `None`, with one line on the real stderr (visible
/// without `--nocapture`).
pub fn testsuites(name: &str) -> Option<PathBuf> {
    let tried = [
        root().join("../shared/testsuites"),
        root().join("target/testsuites"),
    ];
    let skip = std::env::var("AIRLOCK_SKIP_CONFORMANCE").as_deref() == Ok("1");
    let env = std::env::var_os("AIRLOCK_TESTSUITES").map(PathBuf::from);
    match find_testsuites(name, env, &tried, skip) {
        Ok(Some(dir)) => Some(dir),
        Ok(None) => {
            // Written to the process's stderr, not through the test harness's capture.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "WARNING: conformance suite {name} SKIPPED (AIRLOCK_SKIP_CONFORMANCE=1)"
            );
            None
        }
        Err(message) => panic!("{message}"),
    }
}

/// Where the suite `name` is: under `env` when given (else an error), else in the first
/// of `tried` holding it; not found is an error naming the fix, or `None` when `skip`.
///
/// # Errors
///
/// What is wrong and how to fix it.
pub fn find_testsuites(
    name: &str,
    env: Option<PathBuf>,
    tried: &[PathBuf],
    skip: bool,
) -> Result<Option<PathBuf>, String> {
    if let Some(base) = env {
        let dir = base.join(name);
        return if dir.is_dir() {
            pinned_versions(&base).map(|()| Some(dir))
        } else {
            Err(format!(
                "AIRLOCK_TESTSUITES is set but {} is not a folder: point it at the folder \
                 holding JSON-Schema-Test-Suite and JSONTestSuite, or unset it",
                dir.display()
            ))
        };
    }
    // As ci/testsuites.sh: a folder counts when it holds the suite and its VERSIONS, if
    // any, names the pinned commits (a copy of other commits is passed over, said why).
    let mut passed_over = Vec::new();
    for base in tried {
        let dir = base.join(name);
        if !dir.is_dir() {
            continue;
        }
        match pinned_versions(base) {
            Ok(()) => return Ok(Some(dir)),
            Err(why) => passed_over.push(why),
        }
    }
    if skip {
        return Ok(None);
    }
    let tried: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    let passed_over = if passed_over.is_empty() {
        String::new()
    } else {
        format!(" ({})", passed_over.join("; "))
    };
    Err(format!(
        "conformance suite {name} not found (tried {}){passed_over}: run `ci/testsuites.sh` to \
         fetch the pinned suites, or set AIRLOCK_TESTSUITES to a folder holding them; \
         AIRLOCK_SKIP_CONFORMANCE=1 skips them with a warning",
        tried.join(", ")
    ))
}

/// The commits `testsuites/PINNED` pins.
fn pinned_commits() -> Vec<String> {
    let pinned = std::fs::read_to_string(root().join("testsuites/PINNED")).unwrap_or_default();
    pinned
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            (fields.len() == 3).then(|| fields[2].to_owned())
        })
        .collect()
}

/// A suite folder's `VERSIONS`, when it has one, names every pinned commit.
///
/// # Errors
///
/// The file and the commit it does not name.
pub fn pinned_versions(base: &std::path::Path) -> Result<(), String> {
    let path = base.join("VERSIONS");
    let Ok(versions) = std::fs::read_to_string(&path) else {
        return Ok(());
    };
    match pinned_commits().into_iter().find(|c| !versions.contains(c.as_str())) {
        None => Ok(()),
        Some(commit) => Err(format!(
            "{} does not name the pinned commit {commit} (testsuites/PINNED): another copy of the suites",
            path.display()
        )),
    }
}
