//! Loading a standalone schema from a folder of 1 000 schemas against loading it from a
//! folder holding only what it references, in the same run: references are resolved
//! lazily (only the files a `$ref` names, each once), and a schema of another dialect is
//! refused before any sibling is read. Results and the command: BENCHMARKS.md.

use airlock_guard::load_schema_file;
use criterion::{criterion_group, Criterion};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A fresh folder under the system temp dir (removed first if a run left it behind).
fn fresh(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("airlock-bench-load-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp folder");
    dir
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("temp file");
}

/// `main.json` (2020-12, referencing `s1.json`), `old.json` (draft-04, a dialect the guard
/// refuses; draft-07 was refused too until contracts could use it), `s1.json`, and,
/// with `siblings`, 999 more schemas with `$id`s under 23 bases.
fn folder(name: &str, siblings: bool) -> PathBuf {
    let dir = fresh(name);
    let schema = |i: usize| {
        format!(
            r#"{{"$schema":"{DRAFT_2020_12}","$id":"https://bench.invalid/g{}/s{i}.json","type":"object","additionalProperties":false,"properties":{{"a{i}":{{"type":"string","maxLength":8}},"n":{{"type":"integer"}}}}}}"#,
            i % 23
        )
    };
    write(&dir, "s1.json", &schema(1));
    if siblings {
        for i in (0..1000).filter(|&i| i != 1) {
            write(&dir, &format!("s{i}.json"), &schema(i));
        }
    }
    write(
        &dir,
        "main.json",
        &format!(r#"{{"$schema":"{DRAFT_2020_12}","$ref":"s1.json"}}"#),
    );
    write(
        &dir,
        "old.json",
        r#"{"$schema":"http://json-schema.org/draft-04/schema#","$ref":"s1.json"}"#,
    );
    dir
}

fn load(c: &mut Criterion) {
    let crowded = folder("crowded", true);
    let alone = folder("alone", false);
    for dir in [&crowded, &alone] {
        assert!(load_schema_file(&dir.join("main.json")).is_ok());
        assert!(load_schema_file(&dir.join("old.json")).is_err());
    }
    let mut group = c.benchmark_group("load_schema_file");
    for (name, dir) in [("1000_files", &crowded), ("alone", &alone)] {
        let main = dir.join("main.json");
        group.bench_function(format!("valid_{name}"), |b| {
            b.iter(|| black_box(load_schema_file(black_box(&main)).is_ok()))
        });
        let old = dir.join("old.json");
        group.bench_function(format!("old_dialect_refused_{name}"), |b| {
            b.iter(|| black_box(load_schema_file(black_box(&old)).is_err()))
        });
    }
    group.finish();
    for dir in [crowded, alone] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An MCP contract (`/f<i>`) and an envelope contract (`/data/f<i>`) with `n` agent
/// fields, built in memory (the same checks as a load from disk).
fn contract_with_fields(n: usize, mcp: bool) -> airlock_guard::Contract {
    use airlock_guard::{Contract, InputKind, McpInput};
    let members: serde_json::Map<String, serde_json::Value> = (0..n)
        .map(|i| (format!("f{i}"), serde_json::json!({"type": "integer"})))
        .collect();
    let object = serde_json::json!({"type": "object", "properties": members});
    let (schema, prefix) = if mcp {
        (object, "")
    } else {
        (
            serde_json::json!({"type": "object", "properties": {"data": object}}),
            "/data",
        )
    };
    let mut builder = Contract::builder("wide", schema);
    if mcp {
        builder = builder.input(InputKind::Mcp(McpInput::default()));
    }
    for i in 0..n {
        builder = builder.agent_field(format!("{prefix}/f{i}"));
    }
    builder.build().expect("the wide contract builds")
}

/// Contract checks are near-linear in the number of agent fields: 8× the fields, about 8×
/// the time (the overlap check compared every pair: 64×). A 32 768-field MCP contract is
/// what `mcp import` writes for a tool whose schema has that many members.
fn fields(c: &mut Criterion) {
    let mut group = c.benchmark_group("contract_fields");
    for n in [4096, 32768] {
        for mcp in [true, false] {
            let kind = if mcp { "mcp" } else { "envelope" };
            group.bench_function(format!("{kind}_{n}"), |b| {
                b.iter(|| black_box(contract_with_fields(black_box(n), mcp)))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = load, fields
}

criterion::criterion_main!(benches);
