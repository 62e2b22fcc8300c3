//! The files and folders a user names: a folder where a file belongs, a misnamed or empty
//! corpus folder, and every file read with a bound (`/dev/zero`, a sparse file past it):
//! a clear error naming it, exit 2, never the machine's memory.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::{airlock, contract_dir, copy_shipped, root};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn admit_on_a_folder_is_a_usage_error_not_a_transport_failure() {
    let out = airlock(
        &[
            "admit",
            "--contract",
            "schemas/review_status",
            "corpora/review_status/accepted",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a folder"), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "no agent value is printed");
}

#[test]
fn a_misnamed_corpus_folder_is_an_error_naming_it_and_the_expected_names() {
    for misnamed in ["acceptd", "near-miss"] {
        let dir = tempfile::tempdir().unwrap();
        let contract = copy_shipped("review_status", dir.path());
        let corpus = dir.path().join("corpora/review_status");
        std::fs::create_dir(corpus.join(misnamed)).unwrap();
        let out = airlock(
            &[
                "check",
                "--contract",
                contract.to_str().unwrap(),
                "--cases",
                "0",
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(misnamed), "{err}");
        for expected in ["request.json", "accepted", "near_miss", "historical"] {
            assert!(err.contains(expected), "{expected} missing from {err}");
        }
    }
}

#[test]
fn a_corpus_without_fixtures_runs_with_a_warning_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let contract = copy_shipped("review_status", dir.path());
    let corpus = dir.path().join("corpora/review_status");
    for folder in ["accepted", "near_miss", "historical"] {
        std::fs::remove_dir_all(corpus.join(folder)).unwrap();
    }
    let reproducers = dir.path().join("reproducers");
    let out = airlock(
        &[
            "check",
            "--contract",
            contract.to_str().unwrap(),
            "--cases",
            "10",
            "--reproducers",
            reproducers.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("warning") && stderr(&out).contains("no fixtures"),
        "{}",
        stderr(&out)
    );
}

/// A file the user names is read with a bound: `/dev/zero` (endless, size 0 in its
/// metadata) as a baseline, an init sample, a near miss, a request, a reproducer to replay,
/// a fuzz input or a schema file is a clear error (exit 2), never the machine's memory.
#[test]
fn user_named_inputs_are_read_with_a_bound() {
    let dir = tempfile::tempdir().unwrap();
    let contract = contract_dir("review_status");
    let sample = root().join("corpora/review_status/accepted");
    let sample = std::fs::read_dir(&sample)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| !p.to_string_lossy().ends_with(".request.json"))
        .unwrap();
    let out_dir = dir.path().join("out");
    let (contract, sample, out) = (
        contract.display().to_string(),
        sample.display().to_string(),
        out_dir.display().to_string(),
    );
    let init = |extra: &[&str]| -> Vec<String> {
        ["init", "t"]
            .iter()
            .chain(extra)
            .chain(&["--out", out.as_str()])
            .map(|a| (*a).to_owned())
            .collect()
    };
    let runs: Vec<Vec<String>> = vec![
        ["check", "--contract", &contract, "--baseline", "/dev/zero"]
            .map(str::to_owned)
            .to_vec(),
        init(&["--sample", "/dev/zero"]),
        init(&["--sample", &sample, "--near-miss", "/dev/zero"]),
        init(&["--sample", &sample, "--request", "/dev/zero"]),
        ["check", "--replay", "/dev/zero"]
            .map(str::to_owned)
            .to_vec(),
        ["validate", "--schema", "/dev/zero", &sample]
            .map(str::to_owned)
            .to_vec(),
        ["certify", "/dev/zero", "/dev/zero"]
            .map(str::to_owned)
            .to_vec(),
        ["fuzz", "--contract", &contract, "--replay", "/dev/zero"]
            .map(str::to_owned)
            .to_vec(),
        [
            "fuzz",
            "--contract",
            &contract,
            "--for-adapter",
            "--replay",
            "/dev/zero",
            "--artifacts",
            &out,
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for args in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = Instant::now();
        let out = airlock(&args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("/dev/zero") && stderr.contains("larger than"),
            "{args:?}: {stderr}"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "{args:?}");
    }
    assert!(!out_dir.join("schemas/t").exists());
}

/// A fixture is read with a bound too: a file of 128 MiB and a byte in `accepted/`
/// (sparse: it costs the disk nothing) is an error naming it, not 128 MiB held per fixture
/// and judged; so is a historical folder's `expect.toml` of more than 16 MiB.
#[test]
fn a_corpus_file_larger_than_its_bound_is_an_error_naming_it() {
    use airlock_harness::corpus::{MAX_CASE_FILE_BYTES, MAX_REQUEST_BYTES};
    let corpus = Path::new("corpora/review_status");
    for (file, len) in [
        (corpus.join("accepted/huge.json"), MAX_CASE_FILE_BYTES),
        (corpus.join("historical/1/expect.toml"), MAX_REQUEST_BYTES),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let contract = copy_shipped("review_status", dir.path());
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.path().join(&file))
            .unwrap()
            .set_len(len + 1)
            .unwrap();
        let out = airlock(
            &["check", "--contract", &contract.display().to_string()],
            b"",
        );
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(
            text.contains(&*name) && text.contains(&format!("larger than {len} bytes")),
            "{text}"
        );
    }
}
