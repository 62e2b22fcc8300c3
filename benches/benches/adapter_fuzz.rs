//! Inputs per second of adapter fuzzing in process (the worked crate's HTTP adapter
//! against the `ci_pipeline_status` guard, `check`'s oracle on each answer) beside the
//! baseline of the `admit` fuzz target (every shipped contract's guard on each input),
//! both as their seeded in-process loops run them. Issue 23's target: at least half the
//! `admit` target's rate.

use airlock_benches::root;
use airlock_harness::check::discover;
use airlock_harness::fuzz::{FuzzOptions, Fuzzer, Target};
use airlock_harness::replaying;
use airlock_harness::{AdapterFuzzer, RunOptions};
use ci_connector::CiConnector;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

/// Inputs per measured iteration.
const INPUTS: u64 = 2_000;

fn adapter_fuzz(c: &mut Criterion) {
    let dirs = discover(&root().join("schemas")).unwrap();
    let guard_fuzzer = Fuzzer::load(&dirs).unwrap();
    let contract = root().join("schemas/ci_pipeline_status");
    let adapter_fuzzer = AdapterFuzzer::load(std::slice::from_ref(&contract)).unwrap();
    let connector = CiConnector::new("http://127.0.0.1:9", &contract).unwrap();
    let mut group = c.benchmark_group("adapter_fuzz_inputs_per_second");
    group.throughput(Throughput::Elements(INPUTS));
    group.sample_size(10);
    group.bench_function("admit_target_baseline", |b| {
        let options = FuzzOptions {
            targets: vec![Target::Admit],
            runs: Some(INPUTS),
            ..FuzzOptions::default()
        };
        b.iter(|| {
            let report = guard_fuzzer.run(&options, &mut |_| {});
            assert!(report.finding.is_none());
        });
    });
    group.bench_function("http_adapter_in_process", |b| {
        let options = RunOptions::default().runs(INPUTS);
        b.iter(|| {
            let run = adapter_fuzzer.run(
                &mut replaying(|request, upstream| connector.judge().replay(request, upstream)),
                &options,
            );
            assert!(run.finding.is_none());
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(10));
    targets = adapter_fuzz
}
criterion_main!(benches);
