//! Near-miss file names that say how the near miss differs (`extra_property_admin_override`,
//! `status_not_in_enum`, `missing_request_id`, `pr_not_equal_to_param`): short, file-safe
//! ASCII, and unique in their folder (`-2`, `-3` on a clash).

use std::collections::BTreeSet;

use crate::cases::Case;

/// Longest name part taken from a member name or a variant's suffix, in characters.
const PART_MAX: usize = 32;

/// Longest name, before a clash's `-N`.
const NAME_MAX: usize = 80;

/// The near-miss names taken in one folder.
#[derive(Debug, Default)]
pub(super) struct Names {
    taken: BTreeSet<String>,
}

impl Names {
    /// `stem`, or `stem-2`, `stem-3`… when it is taken; taken from now on.
    pub(super) fn take(&mut self, stem: &str) -> String {
        let mut name = stem.to_owned();
        let mut n = 2;
        while !self.taken.insert(name.clone()) {
            name = format!("{stem}-{n}");
            n += 1;
        }
        name
    }
}

/// The name of an adversary variant as a near miss: what it does to which member, from
/// its class, where it was applied and its variant suffix.
pub(super) fn near_miss_name(case: &Case) -> String {
    let member = member_of(&case.location);
    let suffix = suffix_of(&case.id);
    let class = safe(&case.class);
    let joined = |parts: &[&str]| {
        parts
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("_")
    };
    let name = match case.class.as_str() {
        // The extra member's name (`admin_override`), or `canary` for a canary's.
        "extra_property" => joined(&["extra_property", &suffix]),
        "missing_member" => joined(&["missing", &member]),
        "enum_neighbour" if suffix.starts_with("const") => joined(&[&member, "not_const"]),
        "enum_neighbour" => joined(&[&member, "not_in_enum"]),
        "binding_mismatch" if suffix.starts_with("in_param") => joined(&[&member, "not_in_param"]),
        "binding_mismatch" => joined(&[&member, "not_equal_to_param"]),
        "request_id_mismatch" => "request_id_of_another_request".to_owned(),
        "type_swap" => joined(&[&member, "as", &suffix]),
        "duplicate_member" => joined(&["duplicate", &member]),
        // Raw number text: its sign and point said in words (`-0` is not `0`).
        "number_edge" => {
            let raw = case.id.split_once('#').map_or("", |(_, s)| s);
            let spelled = safe(&raw.replace('-', "minus").replace('.', "dot"));
            joined(&[&member, "as", &spelled])
        }
        "string_edge"
        | "pattern_neighbour"
        | "date_time_neighbour"
        | "array_edge"
        | "freshness" => joined(&[&member, &suffix]),
        _ => joined(&[&class, &member, &suffix]),
    };
    let name: String = name.chars().take(NAME_MAX).collect();
    let name = name.trim_end_matches('_');
    if name.is_empty() {
        class
    } else {
        name.to_owned()
    }
}

/// The member a location names: the last token of a JSON pointer, file-safe; nothing for
/// a byte offset or the whole body.
fn member_of(location: &str) -> String {
    if !location.starts_with('/') {
        return String::new();
    }
    let last = location.rsplit('/').next().unwrap_or_default();
    if last.chars().all(|c| c.is_ascii_digit()) && !last.is_empty() {
        // An array item: its array's name says more than its index.
        let parent = &location[..location.len() - last.len() - 1];
        let array = member_of(parent);
        return if array.is_empty() {
            format!("item_{last}")
        } else {
            format!("{array}_item")
        };
    }
    safe(&last.replace("~1", "/").replace("~0", "~"))
}

/// The variant's suffix (after `#` in its id, without a `~N` clash counter), file-safe.
fn suffix_of(id: &str) -> String {
    let Some((_, suffix)) = id.split_once('#') else {
        return String::new();
    };
    let suffix = suffix.rsplit_once('~').map_or(suffix, |(s, n)| {
        if n.chars().all(|c| c.is_ascii_digit()) {
            s
        } else {
            suffix
        }
    });
    safe(suffix)
}

/// `text` as a name part: ASCII letters and digits kept, runs of anything else one `_`,
/// none leading or trailing, at most [`PART_MAX`] characters.
fn safe(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out: String = out.chars().take(PART_MAX).collect();
    out.trim_end_matches('_').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(class: &str, location: &str, suffix: &str) -> Case {
        let now = "2026-12-06T10:00:00Z".parse().unwrap();
        Case {
            id: format!("{class}/sample_00{location}#{suffix}"),
            class: class.to_owned(),
            location: location.to_owned(),
            origin: Some("sample_00".to_owned()),
            request: airlock_guard::Request::new("req.Sample0001", now),
            upstream: crate::cases::Upstream::Body(Vec::new()),
            canaries: Vec::new(),
            expect: crate::cases::Expectation::Reject,
        }
    }

    #[test]
    fn a_variant_is_named_after_what_it_changes_where() {
        for (class, location, suffix, name) in [
            (
                "extra_property",
                "/data/admin_override",
                "admin_override",
                "extra_property_admin_override",
            ),
            (
                "extra_property",
                "/data/zqabc",
                "canary",
                "extra_property_canary",
            ),
            ("missing_member", "/request_id", "", "missing_request_id"),
            (
                "enum_neighbour",
                "/data/status",
                "recased",
                "status_not_in_enum",
            ),
            ("enum_neighbour", "/tool", "const:other", "tool_not_const"),
            (
                "binding_mismatch",
                "/data/pr",
                "equals_param:pr",
                "pr_not_equal_to_param",
            ),
            (
                "binding_mismatch",
                "/data/repo",
                "in_param:repos",
                "repo_not_in_param",
            ),
            ("type_swap", "/data/count", "null", "count_as_null"),
            ("number_edge", "/data/count", "-0", "count_as_minus0"),
            ("number_edge", "/data/count", "1.0", "count_as_1dot0"),
            ("raw_bytes", "", "bom", "raw_bytes_bom"),
            (
                "lines-stray-line",
                "/ref",
                "banner:before",
                "lines_stray_line_ref_banner_before",
            ),
        ] {
            assert_eq!(near_miss_name(&case(class, location, suffix)), name);
        }
    }

    #[test]
    fn a_taken_name_gets_a_counter() {
        let mut names = Names::default();
        assert_eq!(names.take("missing_pr"), "missing_pr");
        assert_eq!(names.take("missing_pr"), "missing_pr-2");
        assert_eq!(names.take("missing_pr"), "missing_pr-3");
    }

    #[test]
    fn parts_are_file_safe_ascii() {
        assert_eq!(safe("a\u{202e}b c--d"), "a_b_c_d");
        assert_eq!(safe("__x__"), "x");
        assert_eq!(member_of("/data/reviews/0"), "reviews_item");
        assert_eq!(member_of("/data/a~1b"), "a_b");
        assert_eq!(member_of("byte:7"), "");
        assert_eq!(
            suffix_of("extra_property/sample_00/data/x#admin_override~2"),
            "admin_override"
        );
    }
}
