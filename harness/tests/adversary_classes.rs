//! The adversary's byte-level, string, number, enum, pattern and time classes over the
//! shipped contracts: every case has the property its class name states, checked on the
//! raw bytes, with the strict parser, or with the reference guard.

use airlock_guard::{parse, ParseErrorKind, Stage};
use airlock_harness::cases::{Expectation, Upstream};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

use crate::adversary::*;
use crate::util::TOOLS;

#[test]
fn every_canary_is_planted_verbatim_in_the_body_an_adapter_could_echo() {
    for (tool, catalogue) in catalogues() {
        let mut planted = 0;
        for case in &catalogue.cases {
            // Random chains may mutate a canary after planting it.
            if case.class == "random_mutation" {
                continue;
            }
            let Upstream::Body(bytes) = &case.upstream else {
                assert!(case.canaries.is_empty(), "{tool}: {}", case.id);
                continue;
            };
            for token in &case.canaries {
                assert!(
                    bytes.windows(token.len()).any(|w| w == token.as_bytes()),
                    "{tool}: {} does not hold its canary {token}",
                    case.id
                );
                planted += 1;
            }
        }
        assert!(planted > 100, "{tool}: only {planted} canaries");
    }
}

#[test]
fn every_duplicate_member_case_fails_to_parse_on_a_duplicate_of_its_own_member_name() {
    for (tool, catalogue) in json_catalogues() {
        let mut escaped = 0;
        for (case, body) in catalogue.bodies("duplicate_member") {
            let error = parse(body, catalogue.max_depth())
                .expect_err(&format!("{tool}: {} parses", case.id));
            assert_eq!(
                error.kind(),
                &ParseErrorKind::DuplicateMember(member_name(&case.location)),
                "{tool}: {}",
                case.id
            );
            if suffix(case) == "escaped_key" {
                assert!(
                    body.windows(3).any(|w| w == br#""\u"#),
                    "{tool}: {} writes no escaped name",
                    case.id
                );
                escaped += 1;
            }
        }
        assert!(escaped > 0, "{tool}: no escaped-key duplicates");
    }
}

#[test]
fn every_oversize_body_exceeds_max_bytes_and_is_valid_json_once_trailing_whitespace_is_trimmed() {
    for (tool, catalogue) in catalogues() {
        let max_bytes = catalogue.guard.contract().limits().max_bytes;
        let mut n = 0;
        for (case, body) in catalogue.bodies("oversize") {
            assert!(body.len() as u64 > max_bytes, "{tool}: {}", case.id);
            if catalogue.kind() == "lines" {
                // A command's output followed by filler lines: its fixture, then more.
                let base = catalogue.origin_bytes(case);
                assert!(
                    !base.is_empty() && body.starts_with(base),
                    "{tool}: {}",
                    case.id
                );
                n += 1;
                continue;
            }
            let trimmed = body.trim_ascii_end();
            assert!(trimmed.len() as u64 <= max_bytes, "{tool}: {}", case.id);
            parse(trimmed, catalogue.max_depth())
                .unwrap_or_else(|e| panic!("{tool}: {}: {e}", case.id));
            n += 1;
        }
        assert!(n > 0, "{tool}: no oversize cases");
    }
}

#[test]
fn every_byte_level_case_built_to_be_rejected_is_rejected_by_the_guard_at_the_parse_stage() {
    for (tool, catalogue) in json_catalogues() {
        for class in ["raw_bytes", "bad_string_bytes", "number_edge"] {
            let mut n = 0;
            for (case, body) in catalogue.bodies(class) {
                if case.expect != Expectation::Reject {
                    continue;
                }
                let admission = catalogue.guard.admit(&case.request, body);
                assert_eq!(
                    admission.audit().stage(),
                    Stage::Parse,
                    "{tool}: {} ({:?})",
                    case.id,
                    admission.diagnostic().map(ToString::to_string)
                );
                n += 1;
            }
            assert!(n > 0, "{tool}: no {class} cases built to be rejected");
        }
    }
}

#[test]
fn string_bytes_and_number_edges_fail_to_parse_for_the_reason_their_name_gives() {
    for (tool, catalogue) in catalogues() {
        for (case, body) in catalogue.bodies("bad_string_bytes") {
            let kind = parse(body, catalogue.max_depth())
                .unwrap_err()
                .kind()
                .clone();
            let expected = match suffix(case) {
                "lone_surrogate"
                | "lone_low_surrogate"
                | "reversed_surrogate_pair"
                | "high_surrogate_then_text" => ParseErrorKind::LoneSurrogate,
                "invalid_utf8" => ParseErrorKind::InvalidUtf8,
                "control_character" => ParseErrorKind::ControlCharacterInString,
                other => panic!("{tool}: unknown bad_string_bytes variant {other}"),
            };
            assert_eq!(kind, expected, "{tool}: {}", case.id);
        }
        for (case, body) in catalogue.bodies("number_edge") {
            let text = suffix(case);
            let raw = [
                "1e400",
                "1e-400",
                "18446744073709551616",
                "01",
                "-0",
                "1.0",
                "NaN",
                "Infinity",
                "-Infinity",
            ];
            if !raw.contains(&text) {
                // A schema-driven neighbour at a numeric member: a number the strict
                // parser reads, for the schema to decide.
                let value = parse(body, catalogue.max_depth()).unwrap();
                assert!(
                    value.pointer(&case.location).is_some_and(Value::is_number),
                    "{tool}: {}",
                    case.id
                );
                assert_eq!(case.expect, Expectation::Reference, "{tool}: {}", case.id);
                continue;
            }
            let member = serde_json::to_string(&member_name(&case.location)).unwrap();
            let spliced = format!("{member}:{text}");
            assert!(
                body.windows(spliced.len()).any(|w| w == spliced.as_bytes()),
                "{tool}: {} does not hold {spliced}",
                case.id
            );
            let parsed = parse(body, catalogue.max_depth());
            let expected = match text {
                "1e400" => Some(ParseErrorKind::NumberOverflow),
                "1e-400" => Some(ParseErrorKind::NumberUnderflow),
                "18446744073709551616" => Some(ParseErrorKind::IntegerOutOfRange),
                "01" => Some(ParseErrorKind::InvalidNumber),
                "NaN" | "Infinity" | "-Infinity" => Some(ParseErrorKind::NonFiniteNumber),
                "-0" | "1.0" => None,
                other => panic!("{tool}: unknown number_edge variant {other}"),
            };
            assert_eq!(
                parsed.as_ref().err().map(|e| e.kind().clone()),
                expected,
                "{tool}: {}",
                case.id
            );
            assert_eq!(
                case.expect == Expectation::Reject,
                expected.is_some(),
                "{tool}: {}",
                case.id
            );
        }
    }
}

#[test]
fn raw_body_truncations_end_just_after_a_structural_byte_and_are_at_most_32_per_fixture() {
    for (tool, catalogue) in json_catalogues() {
        let mut per_fixture: BTreeMap<&str, usize> = BTreeMap::new();
        for (case, body) in catalogue.bodies("raw_bytes") {
            if suffix(case) != "truncated" {
                continue;
            }
            *per_fixture
                .entry(case.origin.as_deref().unwrap())
                .or_default() += 1;
            let whole = serde_json::to_vec(&catalogue.origin(case)).unwrap();
            assert!(
                whole.starts_with(body) && body.len() < whole.len(),
                "{tool}: {}",
                case.id
            );
            assert!(
                matches!(body.last(), Some(b'{' | b'[' | b',' | b':')),
                "{tool}: {}",
                case.id
            );
            assert_eq!(case.location, format!("byte:{}", body.len()));
            assert_eq!(
                parse(body, catalogue.max_depth()).unwrap_err().kind(),
                &ParseErrorKind::UnexpectedEnd,
                "{tool}: {}",
                case.id
            );
        }
        assert!(!per_fixture.is_empty(), "{tool}: no truncations");
        assert!(per_fixture.values().all(|n| *n <= 32), "{per_fixture:?}");
    }
}

#[test]
fn string_edges_past_max_length_are_exactly_one_and_ten_times_past_the_members_max_length() {
    let mut members = BTreeSet::new();
    for (tool, catalogue) in catalogues() {
        for (case, body) in catalogue.bodies("string_edge") {
            let factor = match suffix(case) {
                "one_past_max_length" => 1,
                "far_past_max_length" => 10,
                _ => continue,
            };
            let max = catalogue
                .schema_at(&case.location)
                .iter()
                .find_map(|s| s.get("maxLength").and_then(Value::as_u64))
                .unwrap_or_else(|| panic!("{tool}: {} has no maxLength", case.id));
            let len = string_at(case, body).chars().count() as u64;
            assert_eq!(len, max * factor + 1, "{tool}: {}", case.id);
            members.insert(format!("{tool}{}", case.location));
        }
    }
    for member in [
        "review_status/data/reviewed_by",
        "job_run_status/data/observed_at",
        "identity_lookup/data/subject",
    ] {
        assert!(
            members.contains(member),
            "{member} not pushed past maxLength"
        );
    }
}

#[test]
fn every_enum_neighbour_is_outside_the_members_enum_and_every_const_swap_changes_the_value() {
    for (tool, catalogue) in catalogues() {
        let (mut enums, mut consts) = (0, 0);
        for (case, body) in catalogue.bodies("enum_neighbour") {
            let schemas = catalogue.schema_at(&case.location);
            let value = string_at(case, body);
            let original = catalogue.origin(case).pointer(&case.location).cloned();
            assert_ne!(original, Some(Value::String(value.clone())), "{}", case.id);
            if suffix(case).starts_with("const") {
                assert!(
                    schemas.iter().any(|s| s.get("const").is_some()),
                    "{}",
                    case.id
                );
                consts += 1;
            } else {
                let allowed: Vec<&Value> = schemas
                    .iter()
                    .filter_map(|s| s.get("enum").and_then(Value::as_array))
                    .flatten()
                    .collect();
                assert!(!allowed.is_empty(), "{tool}: {} has no enum", case.id);
                assert!(
                    !allowed.contains(&&Value::String(value.clone())),
                    "{tool}: {} is {value:?}, inside the enum",
                    case.id
                );
                enums += 1;
            }
        }
        // An MCP tool's structuredContent names no tool: no constant to swap. A vendor
        // document's schema has no enum (the contract's enum is filled through a table)
        // and a command's output is text (lines-value varies enum members there).
        if catalogue.kind() == "vendor" || catalogue.kind() == "lines" {
            assert_eq!((enums, consts), (0, 0), "{tool}");
            continue;
        }
        assert!(
            enums > 0 && (consts > 0 || catalogue.is_mcp()),
            "{tool}: {enums} enum, {consts} const"
        );
    }
}

#[test]
fn the_tool_const_is_swapped_for_another_shipped_tools_name() {
    // An MCP tool's structuredContent names no tool, nor does a vendor document or a
    // command's output (the guard writes the tool into the envelope it builds).
    for (tool, catalogue) in catalogues()
        .into_iter()
        .filter(|(_, c)| c.kind() == "envelope")
    {
        let swapped: BTreeSet<String> = catalogue
            .bodies("enum_neighbour")
            .filter(|(c, _)| c.location == "/tool")
            .map(|(c, body)| string_at(c, body))
            .collect();
        assert!(
            swapped
                .iter()
                .any(|s| s != tool && TOOLS.contains(&s.as_str())),
            "{tool}: {swapped:?}"
        );
    }
}

#[test]
fn every_pattern_neighbour_is_one_character_away_from_the_original_at_an_end() {
    for (tool, catalogue) in json_catalogues() {
        let mut n = 0;
        for (case, body) in catalogue.bodies("pattern_neighbour") {
            assert!(
                catalogue
                    .schema_at(&case.location)
                    .iter()
                    .any(|s| s.get("pattern").is_some()),
                "{tool}: {} has no pattern",
                case.id
            );
            let value: Vec<char> = string_at(case, body).chars().collect();
            let original: Vec<char> = catalogue
                .origin(case)
                .pointer(&case.location)
                .and_then(Value::as_str)
                .unwrap()
                .chars()
                .collect();
            let one_away = match suffix(case) {
                "last_changed" => {
                    value.len() == original.len()
                        && value[..value.len() - 1] == original[..original.len() - 1]
                        && value.last() != original.last()
                }
                "appended" => value.len() == original.len() + 1 && value.starts_with(&original),
                "prefixed" => value.len() == original.len() + 1 && value.ends_with(&original),
                "trailing_newline" => {
                    value.starts_with(&original) && value[original.len()..] == ['\n']
                }
                "suffix_outside" => value == [&original[..], &['!']].concat(),
                "suffix_text" => value.starts_with(&original) && value.len() > original.len(),
                "leading_space" => value[1..] == original[..] && value[0] == ' ',
                "trailing_space" => {
                    value[..value.len() - 1] == original[..] && value.ends_with(&[' '])
                }
                "arabic_indic_digits"
                | "fullwidth_digits"
                | "fullwidth"
                | "kelvin_sign"
                | "ligature" => folded(&value) == folded(&original) && value != original,
                other => panic!("{tool}: unknown pattern_neighbour variant {other}"),
            };
            assert!(one_away, "{tool}: {} is {value:?}", case.id);
            n += 1;
        }
        let patterned = catalogue.schema().to_string().contains("\"pattern\"");
        assert!(n > 0 || !patterned, "{tool}: no pattern neighbours");
    }
}

/// What NFKC and a lax digit reader make of `text`: digits of other scripts and full-width
/// forms as ASCII, the Kelvin sign as `k`, the `fi` ligature as `fi`, all lower-cased.
fn folded(text: &[char]) -> String {
    let mut out = String::new();
    for &c in text {
        match c as u32 {
            0x0660..=0x0669 => out.push(char::from(b'0' + (c as u32 - 0x0660) as u8)),
            0xFF01..=0xFF5E => out.push(char::from_u32(c as u32 - 0xFF01 + 0x21).unwrap()),
            0x212A => out.push('k'),
            0xFB01 => out.push_str("fi"),
            _ => out.push(c),
        }
    }
    out.to_lowercase()
}

/// Date-time neighbours the schema's `format` rejects whatever the request.
const FORMAT_ALONE: [&str; 27] = [
    "no_offset",
    "space_separator",
    "month_13",
    "offset:+24:00",
    "offset:-24:00",
    "offset:+23:60",
    "day_past_month_end:11-31",
    "day_past_month_end:04-31",
    "day_past_month_end:02-29",
    "hour_24",
    "calendar:02-29:2100",
    "calendar:02-30",
    "calendar:06-31",
    "calendar:09-31",
    "calendar:day_00",
    "calendar:month_00",
    "calendar:three_digit_day",
    "calendar:three_digit_month",
    "calendar:slash_separators",
    "calendar:dot_separators",
    "calendar:basic_format",
    "calendar:minute_60",
    "calendar:offset_no_colon",
    "calendar:offset_hours_only",
    "calendar:one_digit_day",
    "calendar:one_digit_hour",
    "calendar:one_digit_month",
];

#[test]
fn date_time_neighbours_at_a_fresh_instant_are_rejected_by_the_guard_on_their_format_alone() {
    let catalogue = catalogue("job_run_status");
    let mut kinds = BTreeSet::new();
    for (case, body) in catalogue.bodies("date_time_neighbour") {
        assert!(
            catalogue
                .schema_at(&case.location)
                .iter()
                .any(|s| s.get("format").and_then(Value::as_str) == Some("date-time")),
            "{}",
            case.id
        );
        let value = string_at(case, body);
        let original = catalogue.origin(case).pointer(&case.location).cloned();
        assert_ne!(Some(Value::String(value.clone())), original, "{}", case.id);
        kinds.insert(suffix(case).to_owned());
        let admission = catalogue.guard.admit(&case.request, body);
        // The request's `now` follows the instant a lax parser reads (a day past the
        // month's end rolled over), so freshness never decides: the calendar does.
        let follows = ["calendar:", "day_past_month_end:", "hour_24"]
            .iter()
            .any(|p| suffix(case).starts_with(p));
        if follows && suffix(case) != "calendar:year_10000_by_offset" {
            assert_ne!(
                admission.audit().stage(),
                Stage::Checks,
                "{}: {:?}",
                case.id,
                admission.diagnostic()
            );
        }
        if FORMAT_ALONE.contains(&suffix(case)) {
            let diagnostic = admission.diagnostic().unwrap();
            assert_eq!(diagnostic.stage(), Stage::Schema, "{}", case.id);
            assert!(
                keywords(diagnostic).contains(&"format".to_owned()),
                "{}: {diagnostic}",
                case.id
            );
        }
        if suffix(case) == "leap_second" {
            assert!(value.ends_with("T23:59:60Z"), "{value}");
            assert_eq!(
                case.request.now.to_string(),
                format!("{}T23:59:59Z", &value[..10]),
                "the request is made a second before, so freshness does not decide"
            );
        }
    }
    let others = [
        "lowercase_t_z",
        "leap_second",
        "leap_second:12:00:60Z",
        "leap_second:23:58:60Z",
        "leap_second:23:59:60+01:00",
        "fraction_digits:10",
        "calendar:offset_minus_zero",
        "calendar:year_0000_by_offset",
        // Valid RFC 3339 in its own offset; in UTC past 9999, where no `now` reaches.
        "calendar:year_10000_by_offset",
    ];
    let all: BTreeSet<String> = FORMAT_ALONE
        .iter()
        .chain(&others)
        .map(|k| (*k).to_owned())
        .collect();
    // The one-digit fields apply when the base's field has one digit to drop.
    let kinds: BTreeSet<String> = kinds
        .into_iter()
        .chain(
            [
                "calendar:one_digit_day",
                "calendar:one_digit_hour",
                "calendar:one_digit_month",
            ]
            .map(String::from),
        )
        .collect();
    assert_eq!(kinds, all);
}
