//! Peak heap growth while the guard judges hostile bodies, against the 4096-byte limit of
//! the contract: memory is bounded by the limit, not by what the upstream sends. Then, by
//! the body's shape (`[0,…]`, `[{},…]`, an object of many members, deep nesting, long
//! strings), what parsing and validating an 8 MiB body costs as a multiple of the body
//! (target: at most 4× with the body itself counted). Then a schema-stage rejection of a
//! 20 MB body on a contract with the largest limit (64 MiB), against admitting a valid
//! body of the same size, with the size of its diagnostic. Run with
//! `cargo bench -p airlock-benches --bench memory`; it prints one line per input.

use airlock_benches::{
    bench_contract, bulk_body, bulk_body_with_extra_members, bulk_request, large_limit_contract,
};
use airlock_guard::{CompiledSchema, Guard, Resources, MAX_DEPTH_CEILING, MAX_EXPLAINED_BYTES};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Counts live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counters are
// only statistics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const HUNDRED_MB: u64 = 100 * 1024 * 1024;

/// What this run measured, by input: written to `target/criterion/memory/results.json`
/// for `bench-report`.
static RESULTS: Mutex<Vec<(String, Value)>> = Mutex::new(Vec::new());

fn record(name: String, measured: Value) {
    RESULTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((name, measured));
}

fn measure(name: &str, f: &mut dyn FnMut()) {
    let peak = peak_of(f);
    println!("memory: {name}: peak heap growth {peak} bytes (max_bytes = 4096)");
    record(name.to_owned(), json!({"peak": peak}));
}

/// Peak heap growth while `f` runs, in bytes.
fn peak_of(f: &mut dyn FnMut()) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - before
}

/// Bodies rejected at the schema stage (one error per item) by a contract allowing 64 MiB:
/// one within `MAX_EXPLAINED_BYTES` (explained), one of 20 MB (not explained), against
/// admitting the largest valid body (100 000 items, `maxItems`). The bodies are built
/// before measuring.
fn large_limit_rejection() {
    let guard = Guard::new(large_limit_contract());
    let request = bulk_request();
    let valid = bulk_body("bulk_status_large", 8_600_000);
    assert!(guard.admit(&request, &valid).is_admitted());
    let valid_peak = peak_of(&mut || drop(black_box(guard.admit(&request, &valid))));
    println!(
        "memory: valid_{}b_large_limit: peak heap growth {valid_peak} bytes ({:.2}x the body)",
        valid.len(),
        valid_peak as f64 / valid.len() as f64
    );
    record(
        "valid_large_limit".into(),
        json!({"peak": valid_peak, "body": valid.len()}),
    );
    for len in [200_000, 20_000_000] {
        let rejected = bulk_body_with_extra_members(len);
        let mut sizes = (0, 0, 0);
        let peak = peak_of(&mut || {
            let admission = guard.admit(&request, &rejected);
            let audit = admission.audit();
            sizes = (
                audit.diagnostic().map_or(0, |d| d.to_string().len()),
                audit.to_json_line().len(),
                audit.diagnostic().map_or(0, |d| d.causes().len()),
            );
            drop(black_box(admission));
        });
        println!(
            "memory: schema_rejection_{}b_large_limit: peak heap growth {peak} bytes \
             ({:.2}x the body); diagnostic {} bytes, audit line {} bytes, {} causes kept",
            rejected.len(),
            peak as f64 / rejected.len() as f64,
            sizes.0,
            sizes.1,
            sizes.2
        );
        record(
            format!("schema_rejection_{len}_large_limit"),
            json!({"peak": peak, "body": rejected.len(), "diagnostic": sizes.0,
                   "audit_line": sizes.1, "causes": sizes.2}),
        );
    }
}

/// Bodies of about `len` bytes in each shape the tape is sized for: one word per scalar
/// (`[0,…]`, two bytes a value, is the worst), two per container, three per string with
/// escapes.
fn shapes(len: usize) -> Vec<(&'static str, Vec<u8>)> {
    let repeat = |open: &str, item: &str, close: &str| {
        let n = (len - open.len() - close.len()) / (item.len() + 1);
        let mut body = Vec::with_capacity(len);
        body.extend_from_slice(open.as_bytes());
        for i in 0..n {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(item.as_bytes());
        }
        body.extend_from_slice(close.as_bytes());
        body
    };
    let mut members = Vec::with_capacity(len);
    members.push(b'{');
    let mut i = 0usize;
    while members.len() + 16 < len {
        if i > 0 {
            members.push(b',');
        }
        members.extend_from_slice(format!("\"{i:x}\":0").as_bytes());
        i += 1;
    }
    members.push(b'}');
    let depth = MAX_DEPTH_CEILING - 1;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let plain = format!("\"{}\"", "a".repeat(len - 2));
    let escaped = format!("\"{}\"", "\\n".repeat((len - 2) / 2));
    vec![
        ("zeros", repeat("[", "0", "]")),
        ("empty_objects", repeat("[", "{}", "]")),
        ("one_object_many_members", members),
        ("deep_nesting", repeat("[", &deep, "]")),
        ("escaped_names", repeat("[", "{\"\\u0061\":0}", "]")),
        ("short_escaped_strings", repeat("[", "\"\\n\"", "]")),
        ("long_plain_string", plain.into_bytes()),
        ("long_escaped_string", escaped.into_bytes()),
    ]
}

/// Parsing and validating bodies of every shape, as `airlock validate` does: admitted
/// under `true`, and rejected (explained: every item is an error of a failed `anyOf`
/// branch) by a schema wanting strings, for a body within `MAX_EXPLAINED_BYTES`.
fn by_shape() {
    let compile = |schema: serde_json::Value| {
        let bytes = serde_json::to_vec(&schema).expect("a schema serialises");
        CompiledSchema::compile(schema, &bytes, "airlock:///bench.json", &Resources::new())
            .expect("the bench schema compiles")
    };
    let any = compile(json!(true));
    for (name, body) in shapes(8 * 1024 * 1024) {
        assert!(
            any.validate_bytes(&body, MAX_DEPTH_CEILING).is_ok(),
            "{name}"
        );
        let peak = peak_of(&mut || {
            let _ = black_box(any.validate_bytes(&body, MAX_DEPTH_CEILING));
        });
        println!(
            "memory: shape_{name}_{}b: peak heap growth {peak} bytes ({:.2}x the body; \
             {:.2}x with the body)",
            body.len(),
            peak as f64 / body.len() as f64,
            (peak + body.len()) as f64 / body.len() as f64
        );
        record(
            format!("shape_{name}"),
            json!({"peak": peak, "body": body.len()}),
        );
    }
    let strings = compile(json!({"anyOf": [{"items": {"type": "string"}}, {"type": "object"}]}));
    for (name, body) in shapes(MAX_EXPLAINED_BYTES).into_iter().take(2) {
        assert!(
            strings.validate_bytes(&body, MAX_DEPTH_CEILING).is_err(),
            "{name}"
        );
        let mut shown = 0;
        let peak = peak_of(&mut || {
            shown = black_box(strings.validate_bytes(&body, MAX_DEPTH_CEILING))
                .err()
                .map_or(0, |d| d.to_string().len());
        });
        println!(
            "memory: explained_rejection_{name}_{}b: peak heap growth {peak} bytes \
             ({:.2}x the body); diagnostic {shown} bytes",
            body.len(),
            peak as f64 / body.len() as f64,
        );
        record(
            format!("explained_rejection_{name}"),
            json!({"peak": peak, "body": body.len(), "diagnostic": shown}),
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benchmarks; there is nothing to list.
    }
    let guard = Guard::new(bench_contract("bulk_status"));
    let request = bulk_request();
    let valid = bulk_body("bulk_status", 4096);
    measure("valid_4k_body", &mut || {
        drop(black_box(guard.admit(&request, &valid)))
    });
    measure("body_100mb_reader", &mut || {
        drop(black_box(guard.admit_reader(
            &request,
            std::io::repeat(b' ').take(HUNDRED_MB),
        )));
    });
    measure("brackets_10m_reader", &mut || {
        drop(black_box(guard.admit_reader(
            &request,
            std::io::repeat(b'[').take(10_000_000),
        )));
    });
    let brackets = vec![b'['; 4096];
    measure("brackets_4k_within_limit", &mut || {
        drop(black_box(guard.admit(&request, &brackets)))
    });
    by_shape();
    large_limit_rejection();
    let results: serde_json::Map<String, Value> = RESULTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .drain(..)
        .collect();
    let dir = airlock_benches::root().join("target/criterion/memory");
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        std::fs::write(
            dir.join("results.json"),
            serde_json::to_vec_pretty(&results).expect("results serialise"),
        )
    });
    if let Err(e) = written {
        eprintln!(
            "memory: writing {}: {e}",
            dir.join("results.json").display()
        );
        std::process::exit(1);
    }
}
