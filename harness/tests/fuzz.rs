//! The fuzz targets' invariants and the in-process fuzz loop.

use airlock_guard::{CheckFailure, Contract, CustomCheck, Guard, Request};
use airlock_harness::fuzz::adapter::AdapterFuzzer;
use airlock_harness::fuzz::{check_admission, check_parse, FuzzOptions, Fuzzer, Target, Violation};
use serde_json::Value;

use crate::util::{airlock, contract_dir, load, root, TOOLS};

fn fuzzer() -> Fuzzer {
    let dirs: Vec<_> = TOOLS.iter().map(|t| contract_dir(t)).collect();
    Fuzzer::load(&dirs).unwrap()
}

#[test]
fn a_seeded_run_on_the_shipped_contracts_is_clean_and_shares_the_targets() {
    let options = FuzzOptions {
        seed: 3,
        runs: Some(1500),
        ..FuzzOptions::default()
    };
    let report = fuzzer().run(&options, &mut |_| {});
    assert!(report.finding.is_none(), "{:?}", report.finding);
    assert_eq!(report.runs, 1500);
    assert_eq!(report.per_target, [375, 375, 375, 375]);
}

#[test]
fn every_fixture_and_variant_keeps_the_invariants() {
    let fuzzer = fuzzer();
    let mut seen = 0;
    for body in fuzzer.seed_bodies() {
        check_parse(&body).unwrap();
        fuzzer.check_admit(&body).unwrap();
        seen += 1;
    }
    assert!(
        seen > 300,
        "the seeds are the fixtures and the deterministic variants: {seen}"
    );
}

#[test]
fn mutate_inputs_reach_admission_and_every_kind_of_rejection() {
    let fuzzer = fuzzer();
    // xorshift64: the inputs only need to be arbitrary and the same every run.
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut admitted, mut stages) = (0, std::collections::BTreeSet::new());
    for _ in 0..600 {
        let len = 8 + (next() % 64) as usize;
        let input: Vec<u8> = (0..len).map(|_| (next() & 0xff) as u8).collect();
        let Some((guard, request, body)) = fuzzer.mutate_case(&input) else {
            continue;
        };
        let admission = guard.admit(request, &body);
        if admission.is_admitted() {
            admitted += 1;
        } else {
            stages.insert(admission.audit().stage());
        }
        fuzzer.check(Target::Mutate, &input).unwrap();
    }
    assert!(
        admitted > 20,
        "edited variants are still admitted sometimes: {admitted}"
    );
    assert!(
        stages.len() >= 4,
        "rejections at several stages: {stages:?}"
    );
}

#[test]
fn the_loop_stops_at_the_first_violation_with_its_input() {
    let fuzzer = fuzzer();
    let options = FuzzOptions {
        targets: vec![Target::Admit],
        runs: Some(10_000),
        ..FuzzOptions::default()
    };
    let mut judged = 0;
    let report = fuzzer.run_with(&options, &mut |_| {}, &mut |target, input| {
        judged += 1;
        assert_eq!(target, Target::Admit);
        if input.contains(&b'[') {
            return Err(Violation {
                invariant: "test",
                detail: "a bracket".into(),
            });
        }
        Ok(())
    });
    let finding = report.finding.expect("some generated body has a bracket");
    assert!(finding.input.contains(&b'['));
    assert_eq!(finding.violation.invariant, "test");
    assert_eq!(report.runs, judged);
    assert!(report.runs < 10_000);
}

#[test]
fn parser_differential_accepts_the_documented_refusals_only() {
    check_parse(br#"{"a":1,"a":2}"#).unwrap();
    check_parse(b"18446744073709551616").unwrap();
    check_parse(&[b'['; 100]).unwrap();
    check_parse(b"[1, 2,]").unwrap();
    check_parse(br#"{"a":"\u00e9","b":[true,null,-0.5e3]}"#).unwrap();
}

struct Panics;

impl CustomCheck for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    fn check(&self, _: &Request, _: &Value) -> Result<(), CheckFailure> {
        panic!("a custom check fell over")
    }
}

#[test]
fn a_panic_while_judging_is_a_violation_not_a_crash() {
    let (_, corpus) = load("review_status");
    let contract = Contract::load(contract_dir("review_status")).unwrap();
    let guard = Guard::builder(contract).check(Panics).build();
    let fixture = corpus
        .fixtures
        .iter()
        .find(|f| f.path.to_string_lossy().contains("accepted/success"))
        .unwrap()
        .clone();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_admission(&guard, &fixture.request, &fixture.bytes)
    }));
    assert!(
        outcome.is_err(),
        "check_admission itself lets the panic through"
    );
    // The fuzzer wraps every judgement.
    let subject = airlock_harness::check::Subject { guard, corpus };
    let fuzzer = Fuzzer::new(std::slice::from_ref(&subject));
    let violation = fuzzer.check(Target::Admit, &fixture.bytes).unwrap_err();
    assert_eq!(violation.invariant, "panic");
    assert!(violation.detail.contains("fell over"));
}

#[test]
fn cli_fuzz_runs_writes_a_corpus_and_replays() {
    let out = airlock(&["fuzz", "--runs", "300", "--seed", "5"], b"");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("fuzz: no finding: 300 inputs"), "{stdout}");

    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let out = airlock(&["fuzz", "--write-corpus", corpus.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0));
    let files: Vec<_> = std::fs::read_dir(&corpus).unwrap().collect();
    assert!(files.len() > 300);

    let input = dir.path().join("admit-manual");
    std::fs::write(&input, br#"{"tool":"review_status","outcome":"success"}"#).unwrap();
    let out = airlock(&["fuzz", "--replay", input.to_str().unwrap()], b"");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("admit: ok"),
        "the target comes from the name: {stdout}"
    );

    let out = airlock(&["fuzz", "--duration", "soon"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_shards_of_a_fuzz_run_judge_exactly_its_inputs_each_once() {
    use airlock_harness::check::Shard;
    let fuzzer = fuzzer();
    let inputs = |shard: Option<Shard>| {
        let options = FuzzOptions {
            seed: 9,
            runs: Some(400),
            shard,
            ..FuzzOptions::default()
        };
        let mut seen = Vec::new();
        let report = fuzzer.run_with(&options, &mut |_| {}, &mut |target, input| {
            seen.push((target.as_str(), input.to_vec()));
            Ok(())
        });
        assert_eq!(report.runs as usize, seen.len());
        seen
    };
    let whole = inputs(None);
    assert_eq!(whole.len(), 400);
    let mut parts: Vec<_> = (1..=3)
        .flat_map(|index| inputs(Shard::new(index, 3)))
        .collect();
    assert_eq!(parts.len(), whole.len(), "no input twice, none left out");
    let mut whole = whole;
    whole.sort();
    parts.sort();
    assert!(parts == whole, "the parts are the inputs of the whole run");
}

/// `airlock fuzz --adapter-cmd`: a leaking adapter over the exec protocol is found, its
/// shrunk reproducer written and replayed by `check --replay` (exit 1 both times); the
/// correct adapter runs clean, and a second run resumes from the corpus folder.
#[test]
fn cli_fuzz_of_an_exec_adapter_finds_writes_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let artifacts = dir.path().join("reproducers");
    let naive = format!(
        "python3 {}",
        root().join("docs/examples/naive_adapter.py").display()
    );
    let contract = root().join("schemas/review_status");
    let contract = contract.to_str().unwrap();
    let out = airlock(
        &[
            "fuzz",
            "--contract",
            contract,
            "--adapter-cmd",
            &naive,
            "--runs",
            "2000",
            "--artifacts",
            artifacts.to_str().unwrap(),
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("fuzz: FINDING"), "{stdout}");
    let reproducer = case_file(&artifacts.join("review_status"));
    let out = airlock(
        &[
            "check",
            "--replay",
            reproducer.to_str().unwrap(),
            "--adapter-cmd",
            &naive,
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // A command that does not start is a usage error, not a finding.
    let out = airlock(
        &[
            "fuzz",
            "--contract",
            contract,
            "--adapter-cmd",
            "/nonexistent/adapter",
            "--runs",
            "10",
        ],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not answer the first seed case"));

    let guard = format!(
        "{} guard --contract {contract}",
        env!("CARGO_BIN_EXE_airlock")
    );
    let corpus = dir.path().join("corpus");
    let run = || {
        airlock(
            &[
                "fuzz",
                "--contract",
                contract,
                "--adapter-cmd",
                &guard,
                // Past the first pass over the seeds (3 082), into mutations.
                "--runs",
                "6000",
                "--corpus",
                corpus.to_str().unwrap(),
            ],
            b"",
        )
    };
    let first = run();
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert_eq!(first.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("(0 resumed)"), "{stdout}");
    let kept = std::fs::read_dir(&corpus).unwrap().count();
    assert!(kept > 0, "no input kept: {stdout}");
    let second = run();
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(stdout.contains(&format!("({kept} resumed)")), "{stdout}");
}

#[test]
fn cli_turns_an_adapter_fuzz_input_into_a_case_check_replays() {
    let dir = tempfile::tempdir().unwrap();
    let contract = root().join("schemas/review_status");
    let contract = contract.to_str().unwrap();
    // What libFuzzer leaves behind for an adapter target: the raw input bytes.
    let crash = dir.path().join("crash-0123");
    std::fs::write(&crash, [7, 0, 11, b'A', b'B', b'C', b'D']).unwrap();
    let artifacts = dir.path().join("cases");
    let out = airlock(
        &[
            "fuzz",
            "--contract",
            contract,
            "--replay",
            crash.to_str().unwrap(),
            "--for-adapter",
            "--artifacts",
            artifacts.to_str().unwrap(),
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let case = case_file(&artifacts.join("review_status"));
    assert!(stdout.contains("airlock check --replay"), "{stdout}");
    // It is the case the fuzz entry judged for these bytes.
    let reproducer: Value = serde_json::from_slice(&std::fs::read(&case).unwrap()).unwrap();
    let fuzzer = AdapterFuzzer::load(&[root().join("schemas/review_status")]).unwrap();
    let (_, decoded) = fuzzer.case(&std::fs::read(&crash).unwrap()).unwrap();
    assert_eq!(
        reproducer["case"]["id"],
        decoded.id.as_str(),
        "{reproducer}"
    );
    assert_eq!(reproducer["case"]["class"], "fuzz", "{reproducer}");
    // The guard itself answers the decoded case as the guard does: clean.
    let guard = format!(
        "{} guard --contract {contract}",
        env!("CARGO_BIN_EXE_airlock")
    );
    let out = airlock(
        &[
            "check",
            "--replay",
            case.to_str().unwrap(),
            "--adapter-cmd",
            &guard,
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("clean: 1 cases"), "{stdout}");

    // Without --write-corpus or --replay, --for-adapter has nothing to act on.
    let out = airlock(&["fuzz", "--contract", contract, "--for-adapter"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn cli_fuzz_reports_what_an_adapter_writes_after_its_last_input() {
    let contract = root().join("schemas/review_status");
    let contract = contract.to_str().unwrap();
    // The guard, then a line nobody asked for once its input closes.
    let chatty = format!(
        "{} guard --contract {contract}; echo 'one more thing'",
        env!("CARGO_BIN_EXE_airlock")
    );
    let out = airlock(
        &[
            "fuzz",
            "--contract",
            contract,
            "--adapter-cmd",
            &chatty,
            "--runs",
            "300",
        ],
        b"",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("after the last input") && stdout.contains("one more thing"),
        "{stdout}"
    );
}

/// The one `.case.json` reproducer in `dir`.
fn case_file(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".case.json"))
        .expect("a .case.json reproducer")
}
