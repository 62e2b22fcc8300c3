//! `airlock init` learning from near misses: on the shipped contracts' own fixtures, the
//! scaffold admits every accepted fixture and rejects every near miss.

use airlock_guard::{Contract, Guard};
use airlock_harness::adapter::GuardAdapter;
use airlock_harness::check::Check;
use airlock_harness::corpus::{Corpus, Expect, FixtureKind};
use airlock_harness::init::{init, InitOptions};
use std::path::PathBuf;

use crate::util::{contract_dir, root, TOOLS};

fn fixtures(tool: &str, folder: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("corpora").join(tool).join(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".request.json"))
        .collect();
    out.sort();
    out
}

#[test]
fn init_from_the_shipped_fixtures_admits_every_accepted_one_and_rejects_every_near_miss() {
    let tmp = tempfile::tempdir().unwrap();
    for tool in TOOLS {
        let shipped = Contract::load(contract_dir(tool)).unwrap();
        if shipped.input().as_str() != "envelope" {
            continue; // init scaffolds envelope contracts (not MCP, vendor or lines ones)
        }
        let options = InitOptions {
            tool: tool.to_owned(),
            samples: fixtures(tool, "accepted"),
            request: Some(root().join("corpora").join(tool).join("request.json")),
            agent_fields: Vec::new(),
            out: tmp.path().to_path_buf(),
            near_misses: fixtures(tool, "near_miss"),
        };
        let scaffold = init(&options).unwrap_or_else(|e| panic!("{tool}: {e}"));
        let contract = Contract::load(&scaffold.contract).unwrap();
        let guard = Guard::new(contract.clone());
        // Judged with the shipped corpus's own requests (overrides included).
        let corpus = Corpus::load(&root().join("corpora").join(tool)).unwrap();
        for fixture in &corpus.fixtures {
            if !matches!(fixture.kind, FixtureKind::Accepted | FixtureKind::NearMiss) {
                continue;
            }
            let admitted = guard.admit(&fixture.request, &fixture.bytes).is_admitted();
            assert_eq!(
                admitted,
                fixture.expect == Expect::Accept,
                "{tool}: {} ({:?})\n{}",
                fixture.name,
                fixture.kind,
                scaffold.inferred.join("\n")
            );
        }
        // Every given near miss was written (none was left admitted).
        assert!(
            !scaffold.review.iter().any(|r| r.starts_with("near miss")),
            "{tool}: {:?}",
            scaffold.review
        );
        // The scaffold's own corpus is consistent with it: check is clean.
        let mut adapter = GuardAdapter::new([Guard::new(contract)]);
        Check::contract(&scaffold.contract)
            .random_cases(50)
            .run(&mut adapter)
            .unwrap_or_else(|e| panic!("{tool}: {e}"))
            .assert_clean();
    }
}

#[test]
fn a_near_miss_nothing_explains_is_reported_and_not_written() {
    let tmp = tempfile::tempdir().unwrap();
    let sample = tmp.path().join("sample.json");
    std::fs::write(&sample, br#"{"state": "ok", "count": 3}"#).unwrap();
    // The sample itself as a response: identical in every dimension, nothing to learn.
    let near = tmp.path().join("same_as_sample.json");
    std::fs::write(
        &near,
        br#"{"tool": "probe", "request_id": "req.Sample0001", "outcome": "success",
             "data": {"state": "ok", "count": 3}}"#,
    )
    .unwrap();
    let options = InitOptions {
        tool: "probe".into(),
        samples: vec![sample],
        request: None,
        agent_fields: Vec::new(),
        out: tmp.path().join("out"),
        near_misses: vec![near],
    };
    let scaffold = init(&options).unwrap();
    assert!(scaffold
        .review
        .iter()
        .any(|r| r.contains("near miss same_as_sample is admitted")));
    assert!(!scaffold
        .corpus
        .join("near_miss/same_as_sample.json")
        .exists());
}
