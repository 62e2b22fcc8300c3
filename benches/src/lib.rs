//! Shared pieces of Airlock's criterion benchmarks: the bench-only contracts and bodies.

pub mod report;

use airlock_guard::{Contract, Request};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A bench-only contract from `benches/contracts/`.
///
/// # Panics
///
/// When the contract does not load (a broken checkout).
pub fn bench_contract(tool: &str) -> Contract {
    Contract::load(root().join("benches/contracts").join(tool)).expect("bench contract loads")
}

/// A shipped contract from `schemas/`.
///
/// # Panics
///
/// When the contract does not load.
pub fn shipped_contract(tool: &str) -> Contract {
    Contract::load(root().join("schemas").join(tool)).expect("shipped contract loads")
}

/// The request every bulk body answers.
///
/// # Panics
///
/// Never (the literal is valid).
pub fn bulk_request() -> Request {
    Request::new(
        "req.BenchRun1",
        "2026-12-02T10:00:00Z".parse().expect("valid time"),
    )
    .param("batch_id", "batch_bench")
}

/// A valid `bulk_status`-shaped body of at most `max_len` bytes (as many items as fit).
pub fn bulk_body(tool: &str, max_len: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"tool":"{tool}","request_id":"req.BenchRun1","outcome":"success","data":{{"batch_id":"batch_bench","total":"#
    );
    let mut items = String::new();
    let mut count = 0;
    loop {
        let mut item = String::new();
        let sep = if count == 0 { "" } else { "," };
        let state = ["queued", "running", "done", "failed"][count % 4];
        let _ = write!(
            item,
            r#"{sep}{{"id":"item_{count}","state":"{state}","score":0.{:03},"observed_at":"2026-12-02T09:{:02}:{:02}Z"}}"#,
            count % 1000,
            count % 60,
            (count * 7) % 60
        );
        let total = format!("{count}");
        if head.len() + total.len() + 10 + items.len() + item.len() + 3 > max_len {
            break;
        }
        items.push_str(&item);
        count += 1;
    }
    format!(r#"{head}{count},"items":[{items}]}}}}"#).into_bytes()
}

/// The first accepted fixture of `dir` (a `corpora/<tool>/` folder) whose name starts
/// with `success`, as `(path, bytes)`.
pub fn first_success_fixture(dir: &Path) -> Option<(PathBuf, Vec<u8>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("accepted"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with("success")
                && name.ends_with(".json")
                && !name.ends_with(".request.json")
        })
        .collect();
    files.sort();
    let path = files.into_iter().next()?;
    let bytes = std::fs::read(&path).ok()?;
    Some((path, bytes))
}

/// The request a fixture answers: its `<name>.request.json` when present, else the
/// folder's `request.json`.
///
/// # Panics
///
/// When neither file is a valid request (a broken checkout).
pub fn fixture_request(dir: &Path, fixture: &Path) -> Request {
    let name = fixture.file_name().unwrap_or_default().to_string_lossy();
    let own = fixture.with_file_name(name.replace(".json", ".request.json"));
    let path = if own.exists() {
        own
    } else {
        dir.join("request.json")
    };
    Request::from_json(&std::fs::read(&path).expect("request file reads"))
        .expect("request file is valid")
}

/// `bulk_status_large` with the largest byte limit any contract may have
/// ([`airlock_guard::MAX_BYTES_CEILING`], 64 MiB): for rejections of very large bodies.
///
/// # Panics
///
/// When the bench contract's schema does not load (a broken checkout).
pub fn large_limit_contract() -> Contract {
    let path = root().join("benches/contracts/bulk_status_large/v1.schema.json");
    let schema = serde_json::from_slice(&std::fs::read(path).expect("bench schema readable"))
        .expect("bench schema is JSON");
    Contract::builder("bulk_status_large", schema)
        .limits(airlock_guard::Limits {
            max_bytes: airlock_guard::MAX_BYTES_CEILING,
            max_depth: 8,
        })
        .agent_field("/data/batch_id")
        .agent_field("/data/total")
        .build()
        .expect("bench contract builds")
}

/// A `bulk_status_large` body of about `len` bytes in which every item carries one
/// member the schema does not allow: a schema-stage rejection with one error per item.
pub fn bulk_body_with_extra_members(len: usize) -> Vec<u8> {
    let body = String::from_utf8(bulk_body("bulk_status_large", len)).unwrap_or_default();
    body.replace(r#""state":"#, r#""extra":1,"state":"#)
        .into_bytes()
}
