//! Adapter fuzzing of both adapters, in process: the smoke run of what
//! `fuzz/fuzz_targets/` runs overnight under libFuzzer (the same decoder, the same
//! oracle), and the committed dictionaries kept equal to what `airlock fuzz --write-dict`
//! writes.

use airlock_harness::{AdapterFuzzer, RunOptions};
use ci_connector::{CiConnector, GitBranchHead};

use airlock_harness::replaying;

/// Inputs per adapter in the smoke run.
const RUNS: u64 = 5_000;

#[test]
fn the_http_adapter_fuzzes_clean() {
    let tool = "ci_pipeline_status";
    let connector = CiConnector::new("http://127.0.0.1:9", crate::contract(tool)).unwrap();
    let fuzzer = AdapterFuzzer::load(&[crate::contract(tool)]).unwrap();
    let options = RunOptions::default().runs(RUNS);
    let run = fuzzer.run(
        &mut replaying(|request, upstream| connector.judge().replay(request, upstream)),
        &options,
    );
    assert!(run.finding.is_none(), "{}", run.finding.unwrap().1);
    assert_eq!(run.runs, RUNS);
}

#[test]
fn the_command_adapter_fuzzes_clean() {
    let tool = "git_branch_head";
    let repo = tempfile::tempdir().unwrap();
    let head = GitBranchHead::new(repo.path(), crate::contract(tool)).unwrap();
    let fuzzer = AdapterFuzzer::load(&[crate::contract(tool)]).unwrap();
    let options = RunOptions::default().runs(RUNS);
    let run = fuzzer.run(
        &mut replaying(|request, upstream| head.judge().replay(request, upstream)),
        &options,
    );
    assert!(run.finding.is_none(), "{}", run.finding.unwrap().1);
    assert_eq!(run.runs, RUNS);
}

#[test]
fn the_committed_dictionaries_are_the_contracts_own() {
    for (file, tool) in [
        ("http.dict", "ci_pipeline_status"),
        ("command.dict", "git_branch_head"),
    ] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz")
            .join(file);
        let committed = std::fs::read_to_string(&path).unwrap();
        let fuzzer = AdapterFuzzer::load(&[crate::contract(tool)]).unwrap();
        assert_eq!(
            committed,
            fuzzer.dictionary().libfuzzer(),
            "{file} is stale: airlock fuzz --contract schemas/{tool} --write-dict examples/ci-connector/fuzz/{file}"
        );
    }
}
