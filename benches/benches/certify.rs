//! `certify` of a SchemaStore-sized schema: 400 `$defs` (objects of 3–8 members: enums,
//! anchored patterns, integer ranges, arrays and `$ref`s to later definitions,
//! `anyOf` string-or-null), generated deterministically, against a version with a
//! widened enum and a tightened limit reachable from the root, and against itself (the
//! proof). Target: under 2 s. Results and the command: BENCHMARKS.md.

use airlock_harness::certify::{certify_files, Class};
use criterion::{criterion_group, Criterion};
use serde_json::{json, Map, Value};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

/// Definitions in the generated schema.
const DEFINITIONS: usize = 400;

/// A deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The old version.
fn schema() -> Value {
    let mut rng = Rng(7);
    let mut defs = Map::new();
    for i in 0..DEFINITIONS {
        let mut properties = Map::new();
        let later = |rng: &mut Rng| {
            let span = (DEFINITIONS - i - 1) as u64;
            format!("#/$defs/d{}", i + 1 + rng.below(span) as usize)
        };
        for j in 0..3 + rng.below(6) {
            let last = i + 1 == DEFINITIONS;
            let member = match rng.below(10) {
                // The first member of each of the first definitions chains them, so the
                // edits below are reachable from the root.
                _ if j == 0 && !last && i < 40 => json!({"$ref": format!("#/$defs/d{}", i + 1)}),
                0..=1 if !last => json!({"$ref": later(&mut rng)}),
                2..=3 => {
                    json!({"enum": (0..2 + rng.below(5)).map(|v| format!("v{v}")).collect::<Vec<_>>()})
                }
                4 => json!({"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,31}$"}),
                5 => json!({"type": "integer", "minimum": 0, "maximum": 10 + rng.below(10_000)}),
                6 if !last => {
                    json!({"type": "array", "maxItems": 16, "items": {"$ref": later(&mut rng)}})
                }
                7 => json!({"anyOf": [{"type": "string", "maxLength": 64}, {"type": "null"}]}),
                _ => json!({"type": "boolean", "description": "a flag"}),
            };
            properties.insert(format!("p{j}"), member);
        }
        defs.insert(
            format!("d{i}"),
            json!({"type": "object", "additionalProperties": false, "required": ["p0"],
                   "properties": properties, "description": format!("definition {i}")}),
        );
    }
    json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#/$defs/d0", "$defs": defs})
}

/// The new version: an `enum` widened and a limit tightened in definitions the root
/// reaches, and a member added to one.
fn edited(old: &Value) -> Value {
    let mut new = old.clone();
    new["$defs"]["d3"]["properties"]["extra"] = json!({"type": "string", "maxLength": 8});
    new["$defs"]["d5"]["properties"]["p1"] = json!({"enum": ["v0", "v1", "added"]});
    new["$defs"]["d7"]["properties"]["p2"] = json!({"type": "integer", "minimum": 0, "maximum": 5});
    new
}

fn certify(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("airlock-bench-certify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp folder");
    let old = schema();
    let write = |name: &str, value: &Value| -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, value.to_string()).expect("temp file");
        path
    };
    let (old_path, new_path) = (write("old.json", &old), write("new.json", &edited(&old)));
    let certificate = certify_files(&old_path, &new_path, &[]).expect("the schemas load");
    assert_eq!(
        certificate.verdict,
        Class::Breaking,
        "{}",
        certificate.json()
    );
    let same = certify_files(&old_path, &old_path, &[]).expect("the schema loads");
    assert_eq!(same.verdict, Class::Compatible);
    let mut group = c.benchmark_group("certify_400_defs");
    group.bench_function("edited", |b| {
        b.iter(|| black_box(certify_files(&old_path, &new_path, &[]).map(|c| c.verdict)))
    });
    group.bench_function("itself", |b| {
        b.iter(|| black_box(certify_files(&old_path, &old_path, &[]).map(|c| c.verdict)))
    });
    group.finish();
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(10)).warm_up_time(Duration::from_secs(1));
    targets = certify
}

criterion::criterion_main!(benches);
