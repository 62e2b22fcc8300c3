//! The command adapter: real `git` in a temporary repository, and hostile stand-ins.

use crate::AuditLog;
use airlock_guard::{ErrorCode, Request, Stage};
use ci_connector::GitBranchHead;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn git(repo: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Airlock Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Airlock Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .env("GIT_AUTHOR_DATE", "2026-12-03T08:00:00+01:00")
        .env("GIT_COMMITTER_DATE", "2026-12-03T08:00:00+01:00")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs (it is needed for these tests)");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A repository with `main` and `feature/login-v2`, one commit each.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(
        dir.path(),
        &[
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "one",
        ],
    );
    git(dir.path(), &["branch", "feature/login-v2"]);
    dir
}

fn ask(reference: &str) -> Request {
    Request::new("req.GitHead01", "2026-12-03T09:00:00Z".parse().unwrap()).param("ref", reference)
}

fn adapter(repo: &Path) -> (GitBranchHead, AuditLog) {
    let audit = AuditLog::default();
    let adapter = GitBranchHead::new(repo, crate::contract("git_branch_head"))
        .expect("the shipped contract loads")
        .audit_to(audit.clone());
    (adapter, audit)
}

#[test]
fn a_branch_head_read_from_real_git_is_admitted() {
    let repo = repository();
    let head = git(repo.path(), &["rev-parse", "refs/heads/main"]);
    let (adapter, audit) = adapter(repo.path());
    for reference in ["refs/heads/main", "refs/heads/feature/login-v2"] {
        let admission = adapter.fetch(&ask(reference)).unwrap();
        assert!(
            admission.is_admitted(),
            "{reference}: {:?}",
            admission.diagnostic()
        );
        assert_eq!(
            admission.agent().to_json()["data"],
            serde_json::json!({
                "ref": reference,
                "commit": head,
                "committed_at": "2026-12-03T07:00:00Z"
            })
        );
    }
    assert_eq!(audit.records().len(), 2);
}

#[test]
fn a_missing_branch_prints_nothing_and_is_rejected() {
    let repo = repository();
    let (adapter, _) = adapter(repo.path());
    let admission = adapter.fetch(&ask("refs/heads/gone")).unwrap();
    assert_eq!(
        admission.agent().error(),
        Some((ErrorCode::InvalidResponse, false))
    );
    assert_eq!(admission.diagnostic().unwrap().stage(), Stage::Decode);
}

#[test]
fn a_prefix_matching_several_branches_is_rejected_by_the_grammar() {
    // `refs/heads/feature` matches refs/heads/feature/login-v2 and the one below.
    let repo = repository();
    git(repo.path(), &["branch", "feature/other"]);
    let (adapter, _) = adapter(repo.path());
    let admission = adapter.fetch(&ask("refs/heads/feature")).unwrap();
    assert_eq!(
        admission.agent().error(),
        Some((ErrorCode::InvalidResponse, false))
    );
    assert_eq!(admission.diagnostic().unwrap().keyword(), "duplicate_key");
}

/// A stand-in for `git`: a shell script printing what a hostile host would.
fn stand_in(dir: &Path, name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

const GOOD: &str = "ref=refs/heads/main\\nobjectname=3e928c05ce9b4559542d5e41074e68ae2356a6fd\\ncommitterdate=2026-12-03T08:00:00+01:00\\n";

#[test]
fn a_banner_line_before_the_output_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let banner = stand_in(
        dir.path(),
        "banner",
        &format!("printf 'Welcome to build-7 AIRLOCK-CANARY-5e21d0\\n{GOOD}'"),
    );
    let (adapter, _) = adapter(dir.path());
    let adapter = adapter.git_program(banner);
    let admission = adapter.fetch(&ask("refs/heads/main")).unwrap();
    assert_eq!(
        admission.agent().error(),
        Some((ErrorCode::InvalidResponse, false))
    );
    assert_eq!(admission.diagnostic().unwrap().keyword(), "line");
    assert!(!admission.agent().to_json_string().contains("CANARY"));
}

#[test]
fn the_stand_in_printing_the_good_output_is_admitted() {
    // The control for the hostile stand-ins: the same script shape, nothing added.
    let dir = tempfile::tempdir().unwrap();
    let good = stand_in(dir.path(), "good", &format!("printf '{GOOD}'"));
    let (adapter, _) = adapter(dir.path());
    let admission = adapter
        .git_program(good)
        .fetch(&ask("refs/heads/main"))
        .unwrap();
    assert!(admission.is_admitted(), "{:?}", admission.diagnostic());
}

#[test]
fn a_non_zero_exit_is_a_transport_failure_even_with_good_output() {
    let dir = tempfile::tempdir().unwrap();
    let failing = stand_in(dir.path(), "failing", &format!("printf '{GOOD}'; exit 128"));
    let (adapter, audit) = adapter(dir.path());
    let admission = adapter
        .git_program(failing)
        .fetch(&ask("refs/heads/main"))
        .unwrap();
    assert_eq!(
        admission.agent().error(),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    // max_attempts = 2 in the contract.
    let records = audit.records();
    assert_eq!(records.len(), 2);
    assert!(records
        .iter()
        .all(|r| r["diagnostic"]["keyword"] == "unreachable"));
}

#[test]
fn a_hanging_process_is_killed_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let hanging = stand_in(dir.path(), "hanging", "exec sleep 30");
    let (adapter, audit) = adapter(dir.path());
    let adapter = adapter
        .git_program(hanging)
        .timeout(Duration::from_millis(300));
    let started = Instant::now();
    let admission = adapter.fetch(&ask("refs/heads/main")).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        admission.agent().error(),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    assert!(audit
        .records()
        .iter()
        .all(|r| r["diagnostic"]["keyword"] == "timeout"));
}

#[test]
fn endless_output_stops_at_max_bytes_plus_one() {
    let dir = tempfile::tempdir().unwrap();
    let endless = stand_in(dir.path(), "endless", "exec yes ref=refs/heads/main");
    let (adapter, audit) = adapter(dir.path());
    let started = Instant::now();
    let admission = adapter
        .git_program(endless)
        .fetch(&ask("refs/heads/main"))
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        admission.agent().error(),
        Some((ErrorCode::InvalidResponse, false))
    );
    assert_eq!(admission.diagnostic().unwrap().stage(), Stage::Limits);
    // schemas/git_branch_head: max_bytes = 1024.
    assert_eq!(audit.records()[0]["raw_len"], 1025);
}

#[test]
fn a_missing_program_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let (adapter, _) = adapter(dir.path());
    let admission = adapter
        .git_program(dir.path().join("no-such-git"))
        .fetch(&ask("refs/heads/main"))
        .unwrap();
    assert_eq!(
        admission.agent().error(),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
}

#[test]
fn a_ref_outside_refs_heads_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let (adapter, audit) = adapter(dir.path());
    for reference in ["--output=/tmp/x", "main", "refs/tags/v1"] {
        let error = adapter.fetch(&ask(reference)).unwrap_err();
        assert!(error.to_string().contains("refs/heads"), "{error}");
    }
    assert!(audit.records().is_empty());
}
