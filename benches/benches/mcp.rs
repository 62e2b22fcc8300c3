//! MCP results under `text = "consistent"` (what `mcp import` writes for most tools):
//! a hostile result of many members and a long text block that equals none of them,
//! against an honest result of the same size whose text block is the JSON of its
//! `structuredContent`. Comparing each block with each member once cost their product
//! (a 1 MiB message, 50 000 members against 260 000 items: about 10¹⁰ steps).
//! Results and the command: BENCHMARKS.md.

use airlock_guard::{Contract, Guard, Limits, McpInput, Request, TextRule};
use criterion::{criterion_group, Criterion};
use std::hint::black_box;
use std::time::Duration;

fn contract() -> Contract {
    let schema = serde_json::json!({"type": "object"});
    Contract::builder("bulk", schema)
        .limits(Limits {
            max_bytes: 8 * 1024 * 1024,
            max_depth: 8,
        })
        .input(airlock_guard::InputKind::Mcp(McpInput {
            text: TextRule::Consistent,
            read_only: true,
            ..McpInput::default()
        }))
        .agent_field("/a0")
        .build()
        .expect("bench contract builds")
}

fn message(structured: &str, text: &str) -> Vec<u8> {
    let text = serde_json::to_string(text).expect("a string");
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":{text}}}],"structuredContent":{structured}}}}}"#
    )
    .into_bytes()
}

/// About `len` bytes: `members` empty arrays and a text block of zeros (hostile), or the
/// same members and the block their JSON (honest).
fn bodies(len: usize) -> (Vec<u8>, Vec<u8>) {
    let members = len / 16;
    let structured = format!(
        "{{{}}}",
        (0..members)
            .map(|i| format!(r#""a{i}":[]"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let items = len / 4;
    let zeros = format!("[{}0]", "0,".repeat(items - 1));
    (
        message(&structured, &zeros),
        message(&structured, &structured),
    )
}

fn consistent_text(c: &mut Criterion) {
    let guard = Guard::new(contract());
    let request =
        Request::new("r", "2026-12-02T10:00:00Z".parse().expect("a time")).with_jsonrpc_id(7);
    let mut group = c.benchmark_group("consistent_text");
    group.sample_size(10);
    for (name, len) in [("256kb", 256 * 1024), ("1mb", 1024 * 1024)] {
        let (hostile, honest) = bodies(len);
        assert!(guard.admit(&request, &honest).is_admitted());
        assert!(!guard.admit(&request, &hostile).is_admitted());
        group.bench_function(format!("honest_{name}"), |b| {
            b.iter(|| black_box(guard.admit(&request, black_box(&honest))))
        });
        group.bench_function(format!("hostile_{name}"), |b| {
            b.iter(|| black_box(guard.admit(&request, black_box(&hostile))))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = consistent_text
}

criterion::criterion_main!(benches);
