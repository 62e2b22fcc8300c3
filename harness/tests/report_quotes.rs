//! What a report quotes of an adapter's answers: cut, whatever their size (a finding's
//! message, the values it shows, a protocol error's quote of a case id), in `check` and in
//! `fuzz`.

use serde_json::Value;
use std::process::Output;

use crate::util::{airlock, root};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: stderr {}", stderr(out)))
}

/// What an adapter answers is quoted in a report, cut: a finding's message, the values it
/// shows and a protocol error's quote of a case id stay small whatever the answer's size
/// (found in review: 433 MB of report and 4 GB of memory for one `check` of an adapter
/// answering 900 KB lines; 7 MB on stderr from `fuzz` for one long case id).
#[test]
fn a_report_quotes_huge_answers_cut() {
    let bloated = |mode: &str| {
        format!(
            "python3 {} {mode}",
            root().join("harness/tests/adapters/bloated.py").display()
        )
    };
    let check = |mode: &str, format: &str| {
        airlock(
            &[
                "check",
                "--contract",
                "schemas/review_status",
                "--cases",
                "10",
                "--format",
                format,
                "--adapter-cmd",
                &bloated(mode),
            ],
            b"",
        )
    };
    // Every case answered with 20 KB: the 400-odd findings shown (of 3,000) keep their
    // message and values cut. Uncut, each would show 60 KB.
    let out = check("value", "human");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("bytes of JSON in all, cut"),
        "{stdout:.2000}"
    );
    assert!(stdout.contains("; and "), "{stdout:.2000}");
    let longest = stdout.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 4 * 1024, "a line of {longest} bytes");
    assert!(
        out.stdout.len() < 2 << 20,
        "{} bytes of report",
        out.stdout.len()
    );
    let report = json_report(&check("value", "json"));
    let finding = &report["contracts"][0]["findings"][0];
    assert!(
        finding["message"].as_str().unwrap().len() < 4 * 1024,
        "{finding}"
    );
    assert!(
        finding["actual"].as_str().unwrap().len() < 4 * 1024,
        "{finding}"
    );

    // A case id of 100,000 characters: the protocol error quotes 120 bytes of it.
    let out = check("case", "human");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        out.stdout.len() < 64 * 1024,
        "{} bytes of report",
        out.stdout.len()
    );
    let out = airlock(
        &[
            "fuzz",
            "--contract",
            "schemas/review_status",
            "--runs",
            "10",
            "--adapter-cmd",
            &bloated("case"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("answer for case"), "{}", stderr(&out));
    assert!(
        out.stderr.len() < 4096,
        "{} bytes on stderr",
        out.stderr.len()
    );
}
