//! Cases per second of `airlock check` on all shipped contracts: in process, and over the
//! exec protocol against `airlock guard`, beside the baseline of the guard's own `admit`
//! on the same cases. The protocol bench needs `target/release/airlock`
//! (`cargo build --release -p airlock-harness`); without it, it is skipped with a note.

use airlock_benches::root;
use airlock_harness::adversary::generate;
use airlock_harness::cases::Upstream;
use airlock_harness::check::{discover, run, CheckOptions, Subject};
use airlock_harness::{ExecAdapter, GuardAdapter};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

fn subjects() -> Vec<Subject> {
    discover(&root().join("schemas"))
        .unwrap()
        .iter()
        .map(|d| Subject::load(d).unwrap())
        .collect()
}

fn check(c: &mut Criterion) {
    let subjects = subjects();
    let options = CheckOptions {
        seed: 0,
        random_cases: 500,
        reproducers: None,
        max_duration: None,
        shard: None,
    };
    let cases: Vec<_> = subjects
        .iter()
        .map(|s| {
            generate(
                s.guard.contract(),
                &s.corpus,
                options.seed,
                options.random_cases,
            )
        })
        .collect();
    let total: usize = cases.iter().map(Vec::len).sum();
    let mut generation = c.benchmark_group("variants_generated_per_second");
    generation.throughput(Throughput::Elements(total as u64));
    generation.bench_function("adversary_generate_all_contracts", |b| {
        b.iter(|| {
            for s in &subjects {
                black_box(generate(
                    s.guard.contract(),
                    &s.corpus,
                    options.seed,
                    options.random_cases,
                ));
            }
        });
    });
    generation.finish();
    let mut group = c.benchmark_group("check_cases_per_second");
    group.throughput(Throughput::Elements(total as u64));
    group.bench_function("baseline_guard_admit_only", |b| {
        b.iter(|| {
            for (subject, cases) in subjects.iter().zip(&cases) {
                for case in cases {
                    match &case.upstream {
                        Upstream::Body(bytes) => {
                            black_box(subject.guard.admit(&case.request, bytes))
                        }
                        Upstream::Transport(e) => {
                            black_box(subject.guard.admit_transport_error(&case.request, *e))
                        }
                    };
                }
            }
        });
    });
    group.bench_function("check_in_process", |b| {
        let mut adapter = GuardAdapter::new(subjects.iter().map(|s| s.guard.clone()));
        b.iter(|| {
            let report = run(&subjects, &options, &mut adapter, &mut |_| {}).unwrap();
            assert_eq!(report.cases(), total);
            black_box(report)
        });
    });
    let binary = root().join("target/release/airlock");
    if binary.is_file() {
        let command = format!("cd {} && {} guard", root().display(), binary.display());
        group.bench_function("check_exec_protocol_airlock_guard", |b| {
            b.iter(|| {
                let mut adapter = ExecAdapter::new(&command, Duration::from_secs(5));
                let report = run(&subjects, &options, &mut adapter, &mut |_| {}).unwrap();
                assert_eq!(report.findings().count(), 0);
                black_box(report)
            });
        });
    } else {
        eprintln!(
            "note: {} not built; the exec-protocol bench is skipped",
            binary.display()
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(1));
    targets = check
}
criterion_main!(benches);
