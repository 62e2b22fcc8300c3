//! Conformance against the shared external suites: JSONTestSuite for the strict parser,
//! the official JSON-Schema-Test-Suite for the schema stage, in every dialect the guard
//! accepts (draft-07, 2019-09, 2020-12). Every
//! expected deviation is listed with its reason; an unlisted failure, or a listed one
//! that no longer fails, fails the test.

use airlock_guard::{parse, CompiledSchema, Dialect, Resources, SchemaOptions};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::util::{find_testsuites, testsuites};

/// Depth used for the parsing suite: deep enough for every `y_` file, far below the
/// 100 000 brackets of `n_structure_100000_opening_arrays`.
const SUITE_MAX_DEPTH: usize = 512;

/// The `y_` files rejected on purpose.
const Y_REJECTED: [(&str, &str); 2] = [
    (
        "y_object_duplicated_key.json",
        "duplicate member names are rejected by design",
    ),
    (
        "y_object_duplicated_key_and_value.json",
        "duplicate member names are rejected by design, even with equal values",
    ),
];

/// Every implementation-defined (`i_`) file, decided.
const I_DECISIONS: [(&str, bool, &str); 35] = [
    (
        "i_number_double_huge_neg_exp.json",
        false,
        "underflows f64 to 0: the agent would read another value",
    ),
    ("i_number_huge_exp.json", false, "overflows f64"),
    ("i_number_neg_int_huge_exp.json", false, "overflows f64"),
    ("i_number_pos_double_huge_exp.json", false, "overflows f64"),
    ("i_number_real_neg_overflow.json", false, "overflows f64"),
    ("i_number_real_pos_overflow.json", false, "overflows f64"),
    ("i_number_real_underflow.json", false, "underflows f64 to 0"),
    (
        "i_number_too_big_neg_int.json",
        false,
        "integer beyond 64 bits: rejected rather than rounded",
    ),
    (
        "i_number_too_big_pos_int.json",
        false,
        "integer beyond 64 bits: rejected rather than rounded",
    ),
    (
        "i_number_very_big_negative_int.json",
        false,
        "integer beyond 64 bits: rejected rather than rounded",
    ),
    (
        "i_object_key_lone_2nd_surrogate.json",
        false,
        "lone surrogate escape",
    ),
    (
        "i_string_1st_surrogate_but_2nd_missing.json",
        false,
        "lone surrogate escape",
    ),
    (
        "i_string_1st_valid_surrogate_2nd_invalid.json",
        false,
        "lone surrogate escape",
    ),
    ("i_string_UTF-16LE_with_BOM.json", false, "UTF-8 only; BOM"),
    (
        "i_string_UTF-8_invalid_sequence.json",
        false,
        "invalid UTF-8",
    ),
    (
        "i_string_UTF8_surrogate_U+D800.json",
        false,
        "UTF-8-encoded surrogate is invalid UTF-8",
    ),
    (
        "i_string_incomplete_surrogate_and_escape_valid.json",
        false,
        "lone surrogate escape",
    ),
    (
        "i_string_incomplete_surrogate_pair.json",
        false,
        "lone surrogate escape",
    ),
    (
        "i_string_incomplete_surrogates_escape_valid.json",
        false,
        "lone surrogate escape",
    ),
    (
        "i_string_invalid_lonely_surrogate.json",
        false,
        "lone surrogate escape",
    ),
    (
        "i_string_invalid_surrogate.json",
        false,
        "lone surrogate escape",
    ),
    ("i_string_invalid_utf-8.json", false, "invalid UTF-8"),
    (
        "i_string_inverted_surrogates_U+1D11E.json",
        false,
        "low surrogate before high: two lone surrogates",
    ),
    ("i_string_iso_latin_1.json", false, "Latin-1 is not UTF-8"),
    (
        "i_string_lone_second_surrogate.json",
        false,
        "lone surrogate escape",
    ),
    (
        "i_string_lone_utf8_continuation_byte.json",
        false,
        "invalid UTF-8",
    ),
    (
        "i_string_not_in_unicode_range.json",
        false,
        "invalid UTF-8 (beyond U+10FFFF)",
    ),
    (
        "i_string_overlong_sequence_2_bytes.json",
        false,
        "overlong UTF-8",
    ),
    (
        "i_string_overlong_sequence_6_bytes.json",
        false,
        "overlong UTF-8",
    ),
    (
        "i_string_overlong_sequence_6_bytes_null.json",
        false,
        "overlong UTF-8",
    ),
    ("i_string_truncated-utf-8.json", false, "truncated UTF-8"),
    ("i_string_utf16BE_no_BOM.json", false, "UTF-16 is not UTF-8"),
    ("i_string_utf16LE_no_BOM.json", false, "UTF-16 is not UTF-8"),
    (
        "i_structure_500_nested_arrays.json",
        true,
        "within the suite's depth of 512; a contract's max_depth decides in production",
    ),
    (
        "i_structure_UTF-8_BOM_empty_object.json",
        false,
        "a byte-order mark is rejected",
    ),
];

#[test]
fn json_test_suite_parsing_is_decided_for_every_file() {
    let Some(dir) = testsuites("JSONTestSuite/test_parsing") else {
        return;
    };
    let decisions: BTreeMap<&str, bool> = I_DECISIONS.iter().map(|(f, ok, _)| (*f, *ok)).collect();
    let y_rejected: BTreeSet<&str> = Y_REJECTED.iter().map(|(f, _)| *f).collect();
    let mut wrong = Vec::new();
    let mut counted = [0usize; 3];
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let accepted = parse(&bytes, SUITE_MAX_DEPTH).is_ok();
        let expected = match name.as_bytes()[0] {
            b'y' => {
                counted[0] += 1;
                !y_rejected.contains(name.as_str())
            }
            b'n' => {
                counted[1] += 1;
                false
            }
            b'i' => {
                counted[2] += 1;
                match decisions.get(name.as_str()) {
                    Some(ok) => *ok,
                    None => {
                        wrong.push(format!("{name}: no decision in I_DECISIONS"));
                        continue;
                    }
                }
            }
            _ => continue,
        };
        if accepted != expected {
            wrong.push(format!(
                "{name}: accepted = {accepted}, expected {expected}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "JSONTestSuite disagreements:\n{}",
        wrong.join("\n")
    );
    assert!(
        counted[0] >= 90 && counted[1] >= 180 && counted[2] == I_DECISIONS.len(),
        "{counted:?}"
    );
    eprintln!(
        "JSONTestSuite: {} y_, {} n_, {} i_ files decided as expected",
        counted[0], counted[1], counted[2]
    );
}

#[test]
fn parser_survives_the_hundred_thousand_bracket_file_with_a_small_depth() {
    let Some(dir) = testsuites("JSONTestSuite/test_parsing") else {
        return;
    };
    let bytes = std::fs::read(dir.join("n_structure_100000_opening_arrays.json")).unwrap();
    assert!(parse(&bytes, 8).is_err());
    assert!(parse(&bytes, 1_000_000).is_err());
}

/// Tests of the JSON-Schema-Test-Suite Airlock fails on purpose in each dialect's folder
/// (`draft7/`, `draft2019-09/`, `draft2020-12/`; every entry fails in all three):
/// `file::group::test`.
const SCHEMA_SUITE_EXPECTED_FAILURES: &[(&str, &str)] = &[
    (
        "optional/format/unknown.json::unknown format::unknown formats ignore integers",
        UNKNOWN_FORMAT,
    ),
    (
        "optional/format/unknown.json::unknown format::unknown formats ignore floats",
        UNKNOWN_FORMAT,
    ),
    (
        "optional/format/unknown.json::unknown format::unknown formats ignore objects",
        UNKNOWN_FORMAT,
    ),
    (
        "optional/format/unknown.json::unknown format::unknown formats ignore arrays",
        UNKNOWN_FORMAT,
    ),
    (
        "optional/format/unknown.json::unknown format::unknown formats ignore booleans",
        UNKNOWN_FORMAT,
    ),
    (
        "optional/format/unknown.json::unknown format::unknown formats ignore nulls",
        UNKNOWN_FORMAT,
    ),
    (
        "optional/format/unknown.json::unknown format::unknown formats ignore strings",
        UNKNOWN_FORMAT,
    ),
];

/// Tests Airlock fails on purpose in one dialect's folder only: (folder, test, reason).
const DIALECT_EXPECTED_FAILURES: &[(&str, &str, &str)] = &[
    (
        "draft2019-09",
        "vocabulary.json::schema that uses custom metaschema with with no validation vocabulary::applicator vocabulary still works",
        CUSTOM_2019_09_META,
    ),
    (
        "draft2019-09",
        "vocabulary.json::schema that uses custom metaschema with with no validation vocabulary::no validation: valid number",
        CUSTOM_2019_09_META,
    ),
    (
        "draft2019-09",
        "vocabulary.json::schema that uses custom metaschema with with no validation vocabulary::no validation: invalid number, but it still validates",
        CUSTOM_2019_09_META,
    ),
    (
        "draft2019-09",
        "vocabulary.json::ignore unrecognized optional vocabulary::string value",
        CUSTOM_2019_09_META,
    ),
    (
        "draft2019-09",
        "vocabulary.json::ignore unrecognized optional vocabulary::number value",
        CUSTOM_2019_09_META,
    ),
];

/// Why the custom 2019-09 meta-schema tests fail.
const CUSTOM_2019_09_META: &str = "by design: a custom meta-schema declaring 2019-09 is a load \
    error (UnknownDialect). The validator honours a custom meta-schema's `$vocabulary` only by \
    reading it as an unknown draft, with 2020-12's keywords, where `$recursiveRef` and `items` \
    tuples would silently mean something else; custom 2020-12 and draft-07 meta-schemas are \
    accepted";

/// Why the unknown-format tests fail.
const UNKNOWN_FORMAT: &str = "by design: with format as an assertion, a schema naming a format \
    the validator does not know is a load error, not a silently ignored check";

/// The suite folders of the dialects the guard accepts, and their `$schema`: a test schema
/// without one is given its folder's (Airlock reads a schema without `$schema` as
/// 2020-12).
const DIALECTS: [(&str, Dialect); 3] = [
    ("draft7", Dialect::Draft7),
    ("draft2019-09", Dialect::Draft2019_09),
    ("draft2020-12", Dialect::Draft2020_12),
];

/// Serve `remotes/` from memory at `http://localhost:1234/`.
fn remotes(suite: &Path) -> Resources {
    let mut resources = Resources::new();
    let base = suite.join("remotes");
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let rel = path
                    .strip_prefix(&base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                resources.insert(format!("http://localhost:1234/{rel}"), doc);
            }
        }
    }
    resources
}

/// Run every test of the given suite files in `dialect`; returns (passed, failures by
/// id).
fn run_schema_suite(
    files: &[std::path::PathBuf],
    resources: &Resources,
    options: SchemaOptions,
    dialect: Dialect,
    prefix: &str,
) -> (usize, Vec<String>) {
    let mut passed = 0;
    let mut failures = Vec::new();
    for file in files {
        let name = format!("{prefix}{}", file.file_name().unwrap().to_string_lossy());
        let groups: Vec<Value> = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        for group in groups {
            let description = group["description"].as_str().unwrap_or_default();
            let mut schema = group["schema"].clone();
            if let Value::Object(map) = &mut schema {
                map.entry("$schema")
                    .or_insert_with(|| Value::from(dialect.uri()));
            }
            let compiled =
                CompiledSchema::compile_with(schema, b"", "json-schema:///", resources, options);
            if let (Ok(s), true) = (&compiled, group["schema"].is_object()) {
                // (A boolean schema has no `$schema`: it means the same in every dialect.)
                assert_eq!(s.dialect(), dialect, "{name}::{description}");
            }
            for test in group["tests"].as_array().unwrap() {
                let id = format!(
                    "{name}::{description}::{}",
                    test["description"].as_str().unwrap_or_default()
                );
                let expected = test["valid"].as_bool().unwrap();
                let Ok(s) = &compiled else {
                    failures.push(id);
                    continue;
                };
                // Both ways in: a `serde_json` value, and the raw bytes the guard parses
                // itself and validates in place.
                let bytes = serde_json::to_vec(&test["data"]).unwrap();
                let by_value = s.is_valid(&test["data"]) == expected;
                let by_bytes = s.validate_bytes(&bytes, 128).is_ok() == expected;
                match (by_value, by_bytes) {
                    (true, true) => passed += 1,
                    (false, _) => failures.push(id),
                    (true, false) => failures.push(format!("{id} [from bytes]")),
                }
            }
        }
    }
    (passed, failures)
}

fn json_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// Whether the failure `id` of the suite folder `folder` is listed.
fn is_expected_failure(folder: &str, id: &str) -> bool {
    SCHEMA_SUITE_EXPECTED_FAILURES
        .iter()
        .any(|(listed, _)| *listed == id)
        || DIALECT_EXPECTED_FAILURES
            .iter()
            .any(|(f, listed, _)| *f == folder && *listed == id)
}

fn check_against_expected(folder: &str, failures: &[String], passed: usize, what: &str) {
    let unexpected: Vec<&str> = failures
        .iter()
        .map(String::as_str)
        .filter(|f| !is_expected_failure(folder, f))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{what}: {} unexpected failures:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    eprintln!(
        "{what}: {passed} passed, {} expected failures",
        failures.len()
    );
}

/// The core tests of one dialect's folder (format as an annotation, as they are written).
fn core(suite: &Path, folder: &str, dialect: Dialect) -> (usize, Vec<String>) {
    run_schema_suite(
        &json_files(&suite.join("tests").join(folder)),
        &remotes(suite),
        SchemaOptions::default().assert_formats(false),
        dialect,
        "",
    )
}

/// The `optional/format` tests of one dialect's folder, with format asserted (the guard's
/// own setting).
fn optional_format(suite: &Path, folder: &str, dialect: Dialect) -> (usize, Vec<String>) {
    run_schema_suite(
        &json_files(&suite.join("tests").join(folder).join("optional/format")),
        &remotes(suite),
        SchemaOptions::default(),
        dialect,
        "optional/format/",
    )
}

/// The core tests of `folder` pass, at least `at_least` of them, bar the listed failures.
fn core_passes(folder: &str, dialect: Dialect, at_least: usize) {
    let Some(suite) = testsuites("JSON-Schema-Test-Suite") else {
        return;
    };
    let (passed, failures) = core(&suite, folder, dialect);
    assert!(passed >= at_least, "only {passed} {folder} core tests ran");
    check_against_expected(folder, &failures, passed, &format!("{folder} core"));
}

/// The `optional/format` tests of `folder` pass, at least `at_least` of them, bar the
/// listed failures.
fn optional_format_passes(folder: &str, dialect: Dialect, at_least: usize) {
    let Some(suite) = testsuites("JSON-Schema-Test-Suite") else {
        return;
    };
    let (passed, failures) = optional_format(&suite, folder, dialect);
    assert!(
        passed >= at_least,
        "only {passed} {folder} format tests ran"
    );
    check_against_expected(
        folder,
        &failures,
        passed,
        &format!("{folder} optional/format"),
    );
}

#[test]
fn json_schema_test_suite_core_draft2020_12_passes() {
    core_passes("draft2020-12", Dialect::Draft2020_12, 1000);
}

#[test]
fn json_schema_test_suite_core_draft2019_09_passes() {
    core_passes("draft2019-09", Dialect::Draft2019_09, 1000);
}

#[test]
fn json_schema_test_suite_core_draft7_passes() {
    core_passes("draft7", Dialect::Draft7, 900);
}

#[test]
fn json_schema_test_suite_optional_format_passes_with_format_assertion() {
    optional_format_passes("draft2020-12", Dialect::Draft2020_12, 500);
}

#[test]
fn json_schema_test_suite_optional_format_draft2019_09_passes_with_format_assertion() {
    optional_format_passes("draft2019-09", Dialect::Draft2019_09, 500);
}

#[test]
fn json_schema_test_suite_optional_format_draft7_passes_with_format_assertion() {
    optional_format_passes("draft7", Dialect::Draft7, 500);
}

#[test]
fn every_listed_schema_suite_failure_still_fails() {
    let Some(suite) = testsuites("JSON-Schema-Test-Suite") else {
        return;
    };
    let mut stale = Vec::new();
    for (folder, dialect) in DIALECTS {
        let mut failures = core(&suite, folder, dialect).1;
        failures.extend(optional_format(&suite, folder, dialect).1);
        let failing: BTreeSet<_> = failures.iter().map(String::as_str).collect();
        stale.extend(
            SCHEMA_SUITE_EXPECTED_FAILURES
                .iter()
                .map(|(id, _)| *id)
                .filter(|id| !failing.contains(id))
                .map(|id| format!("{folder}/{id}")),
        );
        stale.extend(
            DIALECT_EXPECTED_FAILURES
                .iter()
                .filter(|(f, id, _)| *f == folder && !failing.contains(id))
                .map(|(f, id, _)| format!("{f}/{id}")),
        );
    }
    for (folder, _, _) in DIALECT_EXPECTED_FAILURES {
        assert!(
            DIALECTS.iter().any(|(f, _)| f == folder),
            "{folder} is not a suite folder"
        );
    }
    assert!(
        stale.is_empty(),
        "listed as expected failures but now pass: {stale:?}"
    );
}

#[test]
fn conformance_suites_are_found_in_order_and_never_skipped_silently() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir_all(b.join("JSONTestSuite")).unwrap();
    let tried = [a.clone(), b.clone()];
    // Found in the first folder that holds it.
    assert_eq!(
        find_testsuites("JSONTestSuite", None, &tried, false),
        Ok(Some(b.join("JSONTestSuite")))
    );
    // Absent: an error naming the fix, even though another suite is present.
    let absent = find_testsuites("JSON-Schema-Test-Suite", None, &tried, false).unwrap_err();
    assert!(absent.contains("ci/testsuites.sh"), "{absent}");
    assert!(absent.contains(&a.display().to_string()), "{absent}");
    // Skipped only when asked.
    assert_eq!(
        find_testsuites("JSON-Schema-Test-Suite", None, &tried, true),
        Ok(None)
    );
    // A wrong AIRLOCK_TESTSUITES is an error, whatever else holds the suite.
    let wrong = find_testsuites("JSONTestSuite", Some(a.clone()), &tried, true).unwrap_err();
    assert!(wrong.contains("AIRLOCK_TESTSUITES"), "{wrong}");
    // A copy whose VERSIONS names other commits than testsuites/PINNED is passed over (as
    // ci/testsuites.sh does), and said why when nothing else holds the suite.
    std::fs::write(
        b.join("VERSIONS"),
        "JSONTestSuite nst/JSONTestSuite commit 0000000\n",
    )
    .unwrap();
    let other = find_testsuites("JSONTestSuite", None, &tried, false).unwrap_err();
    assert!(other.contains("does not name the pinned commit"), "{other}");
    assert!(find_testsuites("JSONTestSuite", Some(b.clone()), &tried, false).is_err());
    // The right commits: found.
    let pinned = std::fs::read_to_string(crate::util::root().join("testsuites/PINNED")).unwrap();
    std::fs::write(b.join("VERSIONS"), pinned).unwrap();
    assert_eq!(
        find_testsuites("JSONTestSuite", None, &tried, false),
        Ok(Some(b.join("JSONTestSuite")))
    );
}

#[test]
fn a_wrong_airlock_testsuites_fails_the_conformance_tests() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "conformance::json_schema_test_suite_core_draft2020_12_passes",
            "--exact",
        ])
        .env("AIRLOCK_TESTSUITES", "/nonexistent/airlock-testsuites")
        .output()
        .unwrap();
    assert!(!out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("AIRLOCK_TESTSUITES is set"), "{text}");
}
