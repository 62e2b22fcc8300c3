//! Adapter fuzzing finds what `check` misses: one-defect adapters that a plain `check` at
//! default settings passes, each with a witness (a request and body on which the defect
//! answers differently from `admit`), each found by the differential fuzz entry within a
//! fixed budget of inputs at a fixed seed; the correct adapter runs the same budget clean.

use airlock_guard::{Guard, InputKind, Request};
use airlock_harness::adapter::{Adapter, AdapterFailure, Answer, GuardAdapter};
use airlock_harness::cases::Upstream;
use airlock_harness::check::Check;
use airlock_harness::{AdapterFuzzer, RunOptions};

use crate::check::guard;
use crate::defects::{judge_rewritten, read_line_values, Equivalent, Rewrite};
use crate::util::{contract_dir, root};

/// The inputs the fuzz entry may spend on one defect.
const BUDGET: u64 = 100_000;

/// A defect of a hand-written adapter: text read the way a lax reader reads it.
#[derive(Clone, Copy, Debug)]
enum Subtle {
    /// Zero-width characters (U+200B–U+200D, U+2060, U+FEFF) dropped from text.
    StripsZeroWidth,
    /// A no-break space (U+00A0, U+202F) read as a space.
    NoBreakSpaceAsSpace,
    /// JSON escapes written in the text (`\u0041` as six characters) decoded again.
    DecodesEscapesTwice,
    /// HTML entities (`&amp;`, `&lt;`, `&gt;`, `&quot;`) decoded.
    DecodesEntities,
    /// Percent escapes (`%2F`, `%20`) decoded.
    DecodesPercent,
    /// A comma before a time's fraction read as its point.
    CommaFraction,
    /// Typographic hyphens and minus signs (U+2010–U+2012, U+2212) read as `-`.
    FoldsDashes,
    /// Typographic quotes (U+2018, U+2019, U+201C, U+201D) read as ASCII quotes.
    FoldsQuotes,
    /// `T24:00:00` read as the next day's midnight.
    HourTwentyFour,
}

impl Subtle {
    /// What the defect makes of one text (`None`: unchanged).
    fn read(self, text: &str) -> Option<String> {
        let b = text.as_bytes();
        let dated = b.len() >= 19 && b[4] == b'-' && b[7] == b'-' && b[13] == b':';
        let out = match self {
            Subtle::StripsZeroWidth => text
                .chars()
                .filter(|c| !matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}'))
                .collect(),
            Subtle::NoBreakSpaceAsSpace => text.replace(['\u{a0}', '\u{202f}'], " "),
            Subtle::DecodesEscapesTwice => unescape_again(text)?,
            Subtle::DecodesEntities => text
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&"),
            Subtle::DecodesPercent => text
                .replace("%2F", "/")
                .replace("%2f", "/")
                .replace("%20", " "),
            Subtle::CommaFraction if dated && b.get(19) == Some(&b',') => {
                format!("{}.{}", &text[..19], &text[20..])
            }
            Subtle::FoldsDashes => {
                text.replace(['\u{2010}', '\u{2011}', '\u{2012}', '\u{2212}'], "-")
            }
            Subtle::FoldsQuotes => text
                .replace(['\u{2018}', '\u{2019}'], "'")
                .replace(['\u{201c}', '\u{201d}'], "\""),
            Subtle::HourTwentyFour if dated && text.get(10..19) == Some("T24:00:00") => {
                let date: airlock_guard::jiff::civil::Date = text[..10].parse().ok()?;
                format!("{}T00:00:00{}", date.tomorrow().ok()?, &text[19..])
            }
            _ => return None,
        };
        (out != text).then_some(out)
    }
}

/// `text` with each `\uXXXX` it spells read as the character.
fn unescape_again(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let hex = rest.get(at + 2..at + 6)?;
        match u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            Some(c) => out.push(c),
            None => out.push_str(&rest[at..at + 6]),
        }
        rest = &rest[at + 6..];
    }
    out.push_str(rest);
    Some(out)
}

/// The guard with one defect in how the adapter reads the upstream's text first.
struct Lax {
    guards: GuardAdapter,
    defect: Subtle,
}

impl Lax {
    fn new(tool: &str, defect: Subtle) -> Self {
        Self {
            guards: GuardAdapter::new([guard(tool)]),
            defect,
        }
    }
}

impl Adapter for Lax {
    fn answer(&mut self, request: &Request, upstream: &Upstream) -> Result<Answer, AdapterFailure> {
        let Upstream::Body(bytes) = upstream else {
            return self.guards.answer(request, upstream);
        };
        let guard = self.guards.route(request).expect("one contract");
        let defect = self.defect;
        Ok(match guard.contract().input() {
            InputKind::Lines(lines) => read_lines(guard, request, bytes, &lines.separator, defect),
            _ => judge_rewritten(guard, request, bytes, false, &|_, text| defect.read(text)),
        })
    }
}

/// A command's output with each line's value read by the defect, then judged.
fn read_lines(
    guard: &Guard,
    request: &Request,
    bytes: &[u8],
    separator: &str,
    defect: Subtle,
) -> Answer {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return guard.admit(request, bytes).agent().to_json().into();
    };
    let read = read_line_values(text, separator, &|value| defect.read(value));
    guard
        .admit(request, read.as_bytes())
        .agent()
        .to_json()
        .into()
}

/// The defect answers the fixture `fixture` of `tool`, with `from` written as `to`,
/// differently from `admit`.
fn witness(tool: &str, defect: Subtle, fixture: &str, from: &str, to: &str) {
    let path = root()
        .join("corpora")
        .join(tool)
        .join("accepted")
        .join(fixture);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{fixture}: no {from:?}");
    let body = text.replacen(from, to, 1).into_bytes();
    let (_, corpus) = crate::util::load(tool);
    let mut request = corpus
        .fixtures
        .iter()
        .find(|f| f.name == fixture.trim_end_matches(".json"))
        .map(|f| f.request.clone())
        .unwrap();
    request.tool = Some(tool.to_owned());
    let reference = guard(tool).admit(&request, &body).agent().to_json();
    let answer = Lax::new(tool, defect)
        .answer(&request, &Upstream::Body(body))
        .unwrap()
        .read()
        .unwrap()
        .into_owned();
    assert_ne!(answer, reference, "{defect:?}: no witness in {fixture}");
}

/// What a plain `check` (default settings) of `tool` says of the defect (`Err`: it
/// already catches it), then how many inputs the fuzz entry needed at seed 0 (`Err`: not
/// within [`BUDGET`]). A finding's reproducer must replay under `check --replay`.
fn missed_by_check_found_by_fuzz(tool: &str, defect: Subtle) -> Result<u64, String> {
    let report = Check::contract(contract_dir(tool))
        .run(&mut Lax::new(tool, defect))
        .unwrap();
    if let Some(finding) = report.findings().next() {
        return Err(format!("check already catches it: {}", finding.message));
    }
    let fuzzer = AdapterFuzzer::load(&[contract_dir(tool)]).unwrap();
    let options = RunOptions::default().runs(BUDGET);
    let run = fuzzer.run(&mut Lax::new(tool, defect), &options);
    let Some((_, finding)) = run.finding else {
        return Err(format!("not found in {BUDGET} inputs"));
    };
    let replayed =
        airlock_harness::check::replay(&finding.reproducer, &mut Lax::new(tool, defect)).unwrap();
    if replayed.findings().count() == 0 {
        return Err(format!("the reproducer does not replay: {finding}"));
    }
    Ok(run.runs)
}

#[test]
fn fuzzing_finds_defects_check_misses() {
    let review = "success_approved_compact.json";
    let names = "success_rejected_members_reordered_utf8.json";
    let jobs = "success_failed_fractional_seconds.json";
    let time = "2026-12-02T09:59:59.250Z";
    let head = "main_captured.json";
    let cases = [
        (
            "review_status",
            Subtle::StripsZeroWidth,
            review,
            "CR-1042",
            "CR-10\\u200b42",
        ),
        (
            "review_status",
            Subtle::NoBreakSpaceAsSpace,
            names,
            "Łukasz Nowak",
            "Łukasz\u{a0}Nowak",
        ),
        (
            "review_status",
            Subtle::DecodesEscapesTwice,
            review,
            "dana.okafor",
            "dana\\\\u0041okafor",
        ),
        (
            "review_status",
            Subtle::DecodesEntities,
            review,
            "dana.okafor",
            "dana&amp;okafor",
        ),
        (
            "review_status",
            Subtle::FoldsDashes,
            review,
            "CR-1042",
            "CR\u{2010}1042",
        ),
        (
            "review_status",
            Subtle::FoldsQuotes,
            review,
            "dana.okafor",
            "dana\u{2019}okafor",
        ),
        (
            "job_run_status",
            Subtle::CommaFraction,
            jobs,
            time,
            "2026-12-02T09:59:59,250Z",
        ),
        (
            "git_branch_head",
            Subtle::DecodesPercent,
            head,
            "refs/heads/main",
            "refs%2Fheads%2Fmain",
        ),
        (
            "git_branch_head",
            Subtle::HourTwentyFour,
            head,
            "2026-12-03T08:00:00",
            "2026-12-02T24:00:00",
        ),
    ];
    let mut outcomes = Vec::new();
    for (tool, defect, fixture, from, to) in cases {
        witness(tool, defect, fixture, from, to);
        outcomes.push((defect, missed_by_check_found_by_fuzz(tool, defect)));
    }
    let failed: Vec<String> = outcomes
        .iter()
        .filter_map(|(d, o)| o.as_ref().err().map(|e| format!("{d:?}: {e}")))
        .collect();
    for (defect, outcome) in &outcomes {
        eprintln!("{defect:?}: {outcome:?}");
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The correct adapter written two other ways (the agent value pretty-printed, the body
/// judged from a reader) runs the same budget clean on every contract the defects use.
#[test]
fn the_correct_adapter_runs_the_same_budget_clean() {
    for tool in ["review_status", "job_run_status", "git_branch_head"] {
        let fuzzer = AdapterFuzzer::load(&[contract_dir(tool)]).unwrap();
        for rewrite in [Rewrite::PrettyBytes, Rewrite::Streamed] {
            let mut correct = Equivalent {
                guards: GuardAdapter::new([guard(tool)]),
                rewrite,
            };
            let options = RunOptions::default().runs(BUDGET);
            let run = fuzzer.run(&mut correct, &options);
            assert!(
                run.finding.is_none(),
                "{tool}: {:?}",
                run.finding.map(|f| f.1.to_string())
            );
            assert_eq!(run.runs, BUDGET);
        }
    }
}

/// A panicking adapter is a `crash` finding with a reproducer, not a lost run.
#[test]
fn a_panicking_adapter_is_a_crash_finding() {
    struct Panics;
    impl Adapter for Panics {
        fn answer(&mut self, _: &Request, _: &Upstream) -> Result<Answer, AdapterFailure> {
            panic!("the adapter's own bug")
        }
    }
    let fuzzer = AdapterFuzzer::load(&[contract_dir("review_status")]).unwrap();
    let run = fuzzer.run(&mut Panics, &RunOptions::default());
    let (_, finding) = run.finding.expect("a finding");
    assert_eq!(run.runs, 1);
    assert!(
        finding
            .to_string()
            .contains("the adapter panicked: the adapter's own bug"),
        "{finding}"
    );
    assert!(finding
        .reproducer
        .case
        .id
        .starts_with("fuzz/review_status/"));
}
