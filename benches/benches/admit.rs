//! `admit` against the baseline `serde_json::from_slice::<Value>` + `jsonschema` `is_valid`
//! on the same bytes, in the same run; and hostile bodies against a valid 4 KB one.
//! Results and the command: BENCHMARKS.md. Memory under hostile input: `benches/memory.rs`.

use airlock_benches::{
    bench_contract, bulk_body, bulk_body_with_extra_members, bulk_request, first_success_fixture,
    fixture_request, large_limit_contract, shipped_contract,
};
use airlock_guard::{Contract, Guard, Request};
use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use serde_json::Value;
use std::hint::black_box;
use std::io::Read;
use std::time::Duration;

fn baseline_validator(contract: &Contract) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(contract.schema().document())
        .expect("schema compiles")
}

fn fixture_cases() -> Vec<(String, Contract, Request, Vec<u8>)> {
    let root = airlock_benches::root();
    let mut cases = Vec::new();
    for tool in [
        "review_status",
        "job_run_status",
        "deploy_status",
        "identity_lookup",
    ] {
        let dir = root.join("corpora").join(tool);
        let (path, body) = first_success_fixture(&dir).expect("a success fixture");
        let request = fixture_request(&dir, &path);
        cases.push((tool.to_owned(), shipped_contract(tool), request, body));
    }
    let large = bench_contract("bulk_status_large");
    cases.push((
        "bulk_1mb".to_owned(),
        large,
        bulk_request(),
        bulk_body("bulk_status_large", 1_000_000),
    ));
    cases
}

fn admit_vs_baseline(c: &mut Criterion) {
    let mut group = c.benchmark_group("admit_vs_baseline");
    for (name, contract, request, body) in fixture_cases() {
        let guard = Guard::new(contract.clone());
        assert!(
            guard.admit(&request, &body).is_admitted(),
            "{name} must be admitted"
        );
        let validator = baseline_validator(&contract);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::new("guard_admit", &name), &body, |b, body| {
            b.iter(|| black_box(guard.admit(&request, black_box(body))));
        });
        group.bench_with_input(
            BenchmarkId::new("baseline_serde_json_jsonschema", &name),
            &body,
            |b, body| {
                b.iter(|| {
                    let value: Value = serde_json::from_slice(black_box(body)).unwrap();
                    black_box(validator.is_valid(&value))
                });
            },
        );
    }
    group.finish();
}

fn parse_vs_serde_json(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse_vs_serde_json");
    for (name, contract, _, body) in fixture_cases() {
        let depth = contract.limits().max_depth;
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::new("strict_parse", &name), &body, |b, body| {
            b.iter(|| black_box(airlock_guard::parse(black_box(body), depth).unwrap()));
        });
        group.bench_with_input(
            BenchmarkId::new("serde_json_from_slice", &name),
            &body,
            |b, body| {
                b.iter(|| black_box(serde_json::from_slice::<Value>(black_box(body)).unwrap()));
            },
        );
    }
    group.finish();
}

const HUNDRED_MB: u64 = 100 * 1024 * 1024;

fn hostile(c: &mut Criterion) {
    let contract = bench_contract("bulk_status");
    let guard = Guard::new(contract);
    let request = bulk_request();
    let valid = bulk_body("bulk_status", 4096);
    assert!(valid.len() > 3900 && guard.admit(&request, &valid).is_admitted());
    let flood = vec![b' '; HUNDRED_MB as usize];
    let brackets = vec![b'['; 10_000_000];
    let mut group = c.benchmark_group("hostile_vs_valid_4k");
    group.bench_function("valid_4k_body", |b| {
        b.iter(|| black_box(guard.admit(&request, black_box(&valid))))
    });
    group.bench_function("body_100mb_slice", |b| {
        b.iter(|| black_box(guard.admit(&request, black_box(&flood))))
    });
    group.bench_function("body_100mb_reader", |b| {
        b.iter(|| black_box(guard.admit_reader(&request, std::io::repeat(b' ').take(HUNDRED_MB))))
    });
    group.bench_function("brackets_10m_slice", |b| {
        b.iter(|| black_box(guard.admit(&request, black_box(&brackets))))
    });
    group.bench_function("brackets_10m_reader", |b| {
        b.iter(|| black_box(guard.admit_reader(&request, std::io::repeat(b'[').take(10_000_000))))
    });
    group.bench_function("brackets_4k_within_limit", |b| {
        b.iter(|| black_box(guard.admit(&request, black_box(&brackets[..4096]))))
    });
    group.finish();
}

/// Schema-stage rejections (one error per item) on a contract allowing 64 MiB, against
/// admitting the valid body each was made from: about 200 KB (explained, within
/// `MAX_EXPLAINED_BYTES`) and 2 MB (past it: not explained). (Peak memory:
/// `benches/memory.rs`.)
fn large_limit_rejection(c: &mut Criterion) {
    let guard = Guard::new(large_limit_contract());
    let request = bulk_request();
    let mut group = c.benchmark_group("large_limit_rejection");
    group.sample_size(10);
    for (name, len) in [("200kb", 200_000), ("2mb", 2_000_000)] {
        let valid = bulk_body("bulk_status_large", len);
        let rejected = bulk_body_with_extra_members(len);
        assert!(guard.admit(&request, &valid).is_admitted());
        assert!(!guard.admit(&request, &rejected).is_admitted());
        group.bench_function(format!("valid_{name}"), |b| {
            b.iter(|| black_box(guard.admit(&request, black_box(&valid))))
        });
        group.bench_function(format!("schema_rejection_{name}"), |b| {
            b.iter(|| black_box(guard.admit(&request, black_box(&rejected))))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = admit_vs_baseline, parse_vs_serde_json, hostile, large_limit_rejection
}

criterion::criterion_main!(benches);
