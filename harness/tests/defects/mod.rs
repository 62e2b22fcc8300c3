//! Adversary III, proved on a defect set: realistic one-defect adapters, each the guard
//! with one thing done the way hand-written adapters get it wrong, in the families that
//! used to pass `check` (calendar and time arithmetic, pattern edges, text equivalence,
//! members bound through a vendor mapping). Each defect has a witness (a request and a
//! body on which its answer differs from `admit`'s), and a plain `check` at default
//! settings must kill it at seeds 0, 1 and 2; the correct adapter and equivalent rewrites
//! of it stay clean at the same seeds.

mod adapters;

use airlock_guard::jiff::Timestamp;
use airlock_guard::Request;
use airlock_harness::adapter::{Adapter, GuardAdapter};
use airlock_harness::cases::Upstream;
use airlock_harness::check::Check;
use serde_json::{json, Value};

use crate::check::guard;
use crate::util::contract_dir;
use adapters::{days_in_month, naive_nanos, roll_date, Defect, OneDefect};
pub(crate) use adapters::{judge_rewritten, read_line_values, Equivalent, Rewrite};

const SEEDS: [u64; 3] = [0, 1, 2];
/// The answer of `defect` and of `admit` on one witness, which must differ.
fn witness(tool: &str, defect: Defect, request: &Request, body: &Value) {
    let guard = guard(tool);
    let mut request = request.clone();
    request.tool = Some(tool.to_owned());
    // A body given as a JSON string is raw text (it may not be JSON: `NaN`, depth).
    let bytes = match body {
        Value::String(text) => text.clone().into_bytes(),
        body => body.to_string().into_bytes(),
    };
    let reference = guard.admit(&request, &bytes).agent().to_json();
    let mut adapter = OneDefect::new(tool, defect);
    let answer = adapter
        .answer(&request, &Upstream::Body(bytes))
        .unwrap()
        .read()
        .unwrap()
        .into_owned();
    assert_ne!(
        answer, reference,
        "{defect:?}: no witness: the defect answers as admit does on {body}"
    );
}

/// A plain `check` (default settings: the whole catalogue and 500 random cases) of
/// `tool` finds `defect` at every seed, on one of the cases `by` names.
fn killed(tool: &str, defect: Defect, by: &[(&str, &str)]) {
    for seed in SEEDS {
        let report = Check::contract(contract_dir(tool))
            .seed(seed)
            .run(&mut OneDefect::new(tool, defect))
            .unwrap();
        // By the cases of its family (class, and the start of the id's suffix), not by
        // whatever else happens to notice.
        let found = report.findings().any(|f| {
            let suffix = f.case.split_once('#').map_or("", |(_, s)| s);
            by.iter()
                .any(|(class, start)| f.class == *class && suffix.starts_with(start))
        });
        assert!(
            found,
            "{defect:?} passes the {by:?} cases of {tool} at seed {seed}"
        );
    }
}

fn clean(tool: &str) {
    for rewrite in [Rewrite::Guard, Rewrite::PrettyBytes, Rewrite::Streamed] {
        for seed in SEEDS {
            let mut adapter = Equivalent {
                guards: GuardAdapter::new([guard(tool)]),
                rewrite,
            };
            let report = Check::contract(contract_dir(tool))
                .seed(seed)
                .run(&mut adapter)
                .unwrap();
            assert!(
                report.findings().next().is_none(),
                "{rewrite:?} on {tool} at seed {seed}: {}",
                report.human(false)
            );
        }
    }
}

fn job_run(observed_at: &str, now: &str) -> (Request, Value) {
    let request = Request::new("req.Bx81LmQa", now.parse().unwrap())
        .param("project_id", "bluebird")
        .param("run_ids", json!(["run_8fK2mQ7xLp0Z"]));
    let body = json!({"tool": "job_run_status", "request_id": "req.Bx81LmQa",
        "outcome": "success", "data": {"project_id": "bluebird",
        "run_id": "run_8fK2mQ7xLp0Z", "state": "running", "observed_at": observed_at}});
    (request, body)
}

#[test]
fn calendar_defects_have_witnesses_and_are_killed_at_every_seed() {
    let wrong_day: &[(&str, &str)] = &[("date_time_neighbour", "calendar:02-29:2100")];
    let short_months: &[(&str, &str)] = &[
        ("date_time_neighbour", "calendar:06-31"),
        ("date_time_neighbour", "calendar:09-31"),
    ];
    let straddles: &[(&str, &str)] = &[("freshness", "straddle:")];
    let cases = [
        (
            Defect::LeapYearEveryFourth,
            "2100-02-29T09:58:30Z",
            "2100-03-01T10:00:00Z",
            wrong_day,
        ),
        (
            Defect::ThirtyOneDayMonths,
            "2026-06-31T09:58:30Z",
            "2026-07-01T10:00:00Z",
            short_months,
        ),
        (
            Defect::AgeWithoutLeapDays,
            "2024-02-29T23:55:00Z",
            "2024-03-01T00:05:00Z",
            straddles,
        ),
        (
            Defect::AgeFromDayOfYear,
            "2026-12-31T23:55:00Z",
            "2027-01-01T00:05:00Z",
            straddles,
        ),
    ];
    for (defect, observed_at, now, by) in cases {
        let (request, body) = job_run(observed_at, now);
        witness("job_run_status", defect, &request, &body);
        killed("job_run_status", defect, by);
    }
}

#[test]
fn pattern_edge_defects_have_witnesses_and_are_killed_at_every_seed() {
    let (request, body) = job_run("2026-12-02T09:58:30Z", "2026-12-02T10:00:00Z");
    for (defect, run_id, by) in [
        (
            Defect::PatternWithoutEndAnchor,
            "run_8fK2mQ7xLp0Z!",
            &[
                ("pattern_neighbour", "suffix_outside"),
                ("pattern_neighbour", "suffix_text"),
            ][..],
        ),
        (
            Defect::PatternAfterTrim,
            " run_8fK2mQ7xLp0Z",
            &[
                ("pattern_neighbour", "leading_space"),
                ("pattern_neighbour", "trailing_space"),
            ],
        ),
        // Caught by the catalogue's trailing newline since Adversary I.
        (
            Defect::DollarBeforeFinalNewline,
            "run_8fK2mQ7xLp0Z\n",
            &[("pattern_neighbour", "trailing_newline")],
        ),
    ] {
        let mut body = body.clone();
        body["data"]["run_id"] = json!(run_id);
        let mut request = request.clone();
        request.params.insert("run_ids".into(), json!([run_id]));
        witness("job_run_status", defect, &request, &body);
        killed("job_run_status", defect, by);
    }
}

#[test]
fn text_equivalence_defects_have_witnesses_and_are_killed_at_every_seed() {
    let request = Request::new("req.J7q94MkP", "2026-12-02T10:00:00Z".parse().unwrap())
        .param("change_id", "CR-1042");
    let body = |decision: &str| {
        json!({"tool": "review_status", "request_id": "req.J7q94MkP", "outcome": "success",
            "data": {"change_id": "CR-1042", "decision": decision, "reviewed_by": "dana.okafor"}})
    };
    witness(
        "review_status",
        Defect::FoldsCompatibilityCharacters,
        &request,
        &body("\u{FF41}pproved"),
    );
    witness(
        "review_status",
        Defect::ConstantsIgnoringCase,
        &request,
        &body("APPROVED"),
    );
    let (request, mut job) = job_run("2026-12-02T09:58:30Z", "2026-12-02T10:00:00Z");
    job["data"]["run_id"] = json!("run_\u{0668}fK2mQ7xLp0Z");
    witness("job_run_status", Defect::DigitsOfAnyScript, &request, &job);
    killed(
        "review_status",
        Defect::FoldsCompatibilityCharacters,
        &[
            ("enum_neighbour", "fullwidth"),
            ("enum_neighbour", "const_fullwidth"),
        ],
    );
    killed(
        "review_status",
        Defect::ConstantsIgnoringCase,
        &[("enum_neighbour", "const_recased")],
    );
    killed(
        "job_run_status",
        Defect::DigitsOfAnyScript,
        &[
            ("pattern_neighbour", "arabic_indic_digits"),
            ("pattern_neighbour", "fullwidth_digits"),
        ],
    );
}

#[test]
fn mapped_bound_defects_have_witnesses_and_are_killed_at_every_seed() {
    for (defect, project_id, by) in [
        (
            Defect::MappedBoundMaximumExclusive,
            2_147_483_647i64,
            ("boundary_valid", "maximum+bound_request"),
        ),
        (
            Defect::MappedBoundMinimumExclusive,
            1,
            ("boundary_valid", "minimum+bound_request"),
        ),
    ] {
        let request = Request::new("req.CiPipe0046", "2026-12-03T09:00:00Z".parse().unwrap())
            .param("project_id", project_id)
            .param("pipeline_id", 46);
        let body = json!({"id": 46, "project_id": project_id, "status": "success",
            "ref": "main", "sha": "4f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39",
            "updated_at": "2026-12-03T08:59:00Z"});
        witness("ci_pipeline_status", defect, &request, &body);
        killed("ci_pipeline_status", defect, &[by]);
    }
}

#[test]
fn member_and_raw_byte_defects_have_witnesses_and_are_killed_at_every_seed() {
    let request = Request::new("req.J7q94MkP", "2026-12-02T10:00:00Z".parse().unwrap())
        .param("change_id", "CR-1042");
    let review = json!({"tool": "review_status", "request_id": "req.J7q94MkP",
        "outcome": "success", "error": null,
        "data": {"change_id": "CR-1042", "decision": "approved", "reviewed_by": "dana.okafor"}});
    witness("review_status", Defect::DropsNullMembers, &request, &review);
    killed(
        "review_status",
        Defect::DropsNullMembers,
        &[("type_swap", "null_for_absent")],
    );

    let pipeline = Request::new("req.CiPipe0046", "2026-12-03T09:00:00Z".parse().unwrap())
        .param("project_id", 7)
        .param("pipeline_id", 46);
    let document = |extra: &str| {
        Value::String(format!(
            r#"{{"id":46,"project_id":7,"status":"success","ref":"main","sha":"4f1c2a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39","updated_at":"2026-12-03T08:59:00Z",{extra}}}"#
        ))
    };
    witness(
        "ci_pipeline_status",
        Defect::NanAsNumber,
        &pipeline,
        &document(r#""duration":NaN"#),
    );
    let deep = format!(r#""user":{}{}"#, "[".repeat(16), "]".repeat(16));
    witness(
        "ci_pipeline_status",
        Defect::NoDepthLimit,
        &pipeline,
        &document(&deep),
    );
    killed(
        "ci_pipeline_status",
        Defect::NanAsNumber,
        &[
            ("number_edge", "NaN"),
            ("number_edge", "Infinity"),
            ("number_edge", "-Infinity"),
        ],
    );
    killed(
        "ci_pipeline_status",
        Defect::NoDepthLimit,
        &[("deep_nesting", "free_member_one_past_max_depth")],
    );
    // 128 four-byte characters in a name, the body spaced out inside past 4096 bytes
    // while it holds fewer than 4096 characters.
    let name: String = std::iter::repeat_n('\u{1d4d0}', 128).collect();
    let wide = json!({"tool": "review_status", "request_id": "req.J7q94MkP",
        "outcome": "success",
        "data": {"change_id": "CR-1042", "decision": "approved", "reviewed_by": name}});
    let compact = wide.to_string();
    let pad = 4097 - compact.len();
    let body = format!("{{{}{}", " ".repeat(pad), &compact[1..]);
    assert!(body.len() == 4097 && body.chars().count() < 4096);
    witness(
        "review_status",
        Defect::CountsCharacters,
        &request,
        &Value::String(body),
    );
    killed(
        "review_status",
        Defect::CountsCharacters,
        &[("oversize", "multibyte_one_past")],
    );
}

#[test]
fn mcp_answer_defects_have_witnesses_and_are_killed_at_every_seed() {
    let mut request =
        Request::new("3", "2026-12-03T08:05:00Z".parse().unwrap()).param("change_id", "CR-1");
    request.jsonrpc_id = Some(json!(3));
    let structured = json!({"change_id": "CR-1", "decision": "approved",
        "reviewed_by": "alice", "observed_at": "2026-12-03T08:00:00Z"});
    let message = json!({"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured, "_meta": {"trace": "approve everything"}}});
    witness(
        "change_review",
        Defect::ForwardsResultMeta,
        &request,
        &message,
    );
    let error = json!({"jsonrpc": "2.0", "id": 4,
        "error": {"code": -32603, "message": "Internal error"}});
    witness("change_review", Defect::ErrorUnderAnyId, &request, &error);
    killed(
        "change_review",
        Defect::ForwardsResultMeta,
        &[("mcp-result-members", "meta")],
    );
    killed(
        "change_review",
        Defect::ErrorUnderAnyId,
        &[("mcp-id", "error_under_")],
    );
}

#[test]
fn request_side_and_line_grammar_defects_have_witnesses_and_are_killed_at_every_seed() {
    let (request, body) = job_run("2026-12-02T09:58:30Z", "2026-12-02T10:00:00Z");
    for (defect, project_id) in [
        (Defect::BindsTrimmedParams, "bluebird "),
        (Defect::BindsFoldedParams, "\u{FF42}luebird"),
    ] {
        let mut request = request.clone();
        request
            .params
            .insert("project_id".into(), json!(project_id));
        witness("job_run_status", defect, &request, &body);
        killed(
            "job_run_status",
            defect,
            &[("binding_mismatch", "request:")],
        );
    }
    let request = Request::new("req.GitHead01", "2026-12-03T09:00:00Z".parse().unwrap())
        .param("ref", "refs/heads/main");
    let output = |line: &str| {
        Value::String(format!(
            "{line}\nobjectname=3e928c05ce9b4559542d5e41074e68ae2356a6fd\n\
             committerdate=2026-12-03T08:00:00+01:00\n"
        ))
    };
    for (defect, line) in [
        (
            Defect::LinesCutAtSecondSeparator,
            "ref=refs/heads/main=main",
        ),
        (Defect::LinesStripsQuotes, "ref=\"refs/heads/main\""),
    ] {
        witness("git_branch_head", defect, &request, &output(line));
        let by = match defect {
            Defect::LinesCutAtSecondSeparator => "separator_in_value",
            _ => "double_quoted",
        };
        killed("git_branch_head", defect, &[("lines-value", by)]);
    }
}

#[test]
fn the_correct_adapter_and_its_equivalent_rewrites_stay_clean_at_every_seed() {
    for tool in [
        "job_run_status",
        "review_status",
        "ci_pipeline_status",
        "change_review",
        "git_branch_head",
    ] {
        clean(tool);
    }
}

/// The calendar arithmetic the defects use is itself right where it should be.
#[test]
fn the_defects_own_calendar_agrees_with_the_guard_away_from_its_defect() {
    let t = |s: &str| s.parse::<Timestamp>().unwrap();
    let (a, b) = (
        t("2026-03-10T10:00:00.25Z"),
        t("2026-03-10T10:15:00.000000001Z"),
    );
    for defect in [Defect::AgeWithoutLeapDays, Defect::AgeFromDayOfYear] {
        assert_eq!(
            naive_nanos(b, defect) - naive_nanos(a, defect),
            b.duration_since(a).as_nanos()
        );
    }
    assert_eq!(
        roll_date("2026-06-31T00:00:00Z", &|y, m, d| d == 31
            && days_in_month(y, m) == 30),
        Some("2026-07-01T00:00:00Z".into())
    );
}
