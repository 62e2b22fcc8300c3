//! `airlock check` against both adapters, in process: the case's bytes go through the
//! adapters' own judging path (`Judge::replay` → `Judge::run`), as in production.

use airlock_harness::replaying;
use airlock_harness::Check;
use ci_connector::{CiConnector, GitBranchHead};

#[test]
fn check_is_clean_against_the_http_adapter() {
    let connector = CiConnector::new("http://127.0.0.1:9", crate::contract("ci_pipeline_status"))
        .expect("the shipped contract loads");
    let report = Check::contract(crate::contract("ci_pipeline_status"))
        .run(&mut replaying(|request, upstream| {
            connector.judge().replay(request, upstream)
        }))
        .expect("the check runs");
    report.assert_clean();
}

#[test]
fn check_is_clean_against_the_command_adapter() {
    let repo = tempfile::tempdir().unwrap();
    let adapter = GitBranchHead::new(repo.path(), crate::contract("git_branch_head"))
        .expect("the shipped contract loads");
    let report = Check::contract(crate::contract("git_branch_head"))
        .run(&mut replaying(|request, upstream| {
            adapter.judge().replay(request, upstream)
        }))
        .expect("the check runs");
    report.assert_clean();
}

#[test]
fn check_is_clean_against_the_binary_over_the_exec_protocol() {
    // What `.ci/run` and ci/adapter-crate.yml run: the built binary, both contracts.
    let schemas = crate::contract("ci_pipeline_status")
        .parent()
        .unwrap()
        .to_owned();
    let command = format!(
        "'{}' --exec-protocol --schemas '{}'",
        env!("CARGO_BIN_EXE_ci-connector"),
        schemas.display()
    );
    let mut adapter = airlock_harness::ExecAdapter::new(command, std::time::Duration::from_secs(5));
    let report = Check::contract(crate::contract("ci_pipeline_status"))
        .and_contract(crate::contract("git_branch_head"))
        .run(&mut adapter)
        .expect("the check runs");
    report.assert_clean();
}
