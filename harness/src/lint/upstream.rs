//! Lint of `[input]` (vendor and lines contracts): what the loader cannot refuse but lets
//! through to runtime — a pointer an open vendor schema does not describe, a table value
//! the contract schema refuses, a line bound left to its default or never reached.
//! Findings name `contract.toml`, at the manifest's own line.

use airlock_guard::{Contract, InputKind, LinesInput, Mapping, Normalise, Pointer};
use serde_json::Value;
use std::path::Path;

use super::{severity, LintFinding};
use crate::schema::schema_at;

/// The findings on the `[input]` of `contract`, whose manifest is `manifest`.
pub(super) fn lint_input(contract: &Contract, manifest: &Path) -> Vec<LintFinding> {
    let text = super::contract_text(manifest).unwrap_or_default();
    let mut out = Findings {
        file: manifest,
        text: &text,
        found: Vec::new(),
    };
    let map: &[Mapping] = match contract.input() {
        InputKind::Vendor(vendor) => {
            if let Some(schema) = contract.vendor_schema() {
                let pointers = vendor
                    .map
                    .iter()
                    .map(|m| ("from", &m.from))
                    .chain(vendor.failure.iter().map(|rule| ("at", &rule.at)));
                for (key, pointer) in pointers {
                    undescribed(
                        &mut out,
                        schema.document(),
                        &vendor.schema_file,
                        key,
                        pointer,
                    );
                }
            }
            &vendor.map
        }
        InputKind::Lines(lines) => {
            line_bounds(&mut out, lines, contract.limits().max_bytes);
            &lines.map
        }
        _ => &[],
    };
    for mapping in map {
        table_values(&mut out, contract.schema().document(), mapping);
    }
    out.found
}

struct Findings<'a> {
    file: &'a Path,
    text: &'a str,
    found: Vec<LintFinding>,
}

impl Findings<'_> {
    /// A finding at the first manifest line holding `needle` (line 0 when none does).
    fn flag(&mut self, rule: &'static str, pointer: &str, needle: &str, message: String) {
        let (line, column) = self
            .text
            .lines()
            .enumerate()
            .find_map(|(n, l)| l.find(needle).map(|c| (n + 1, l[..c].chars().count() + 1)))
            .unwrap_or((0, 0));
        self.found.push(LintFinding {
            rule,
            severity: severity(rule),
            file: self.file.to_path_buf(),
            pointer: pointer.to_owned(),
            line,
            column,
            message,
            allowed: None,
        });
    }
}

/// A line grammar's bounds: `max_line_bytes` written out (the default, 4096, was chosen
/// for no command in particular) and below `[limits] max_bytes` (else the output's limit
/// is reached first and the line bound never is). The count of lines needs no bound: it
/// is the number of declared keys, each exactly once, no other line.
fn line_bounds(out: &mut Findings<'_>, lines: &LinesInput, max_bytes: u64) {
    let written = toml::from_str::<toml::Value>(out.text)
        .ok()
        .and_then(|m| m.get("input")?.get("max_line_bytes").cloned())
        .is_some();
    if !written {
        out.flag(
            "line-bound-default",
            "/input/max_line_bytes",
            "[input]",
            format!(
                "the line grammar does not set `max_line_bytes`: the default ({}) applies; \
                 write the longest line the command prints",
                lines.max_line_bytes
            ),
        );
    }
    if u64::try_from(lines.max_line_bytes).is_ok_and(|n| n >= max_bytes) {
        out.flag(
            "line-bound-unreachable",
            "/input/max_line_bytes",
            if written { "max_line_bytes" } else { "[input]" },
            format!(
                "`max_line_bytes` ({}) is not below `[limits] max_bytes` ({max_bytes}): the \
                 output's limit is reached first, so no line is ever held to the line bound; \
                 lower it to the longest line the command prints",
                lines.max_line_bytes
            ),
        );
    }
}

/// A mapped `from` or a failure rule's `at` that the vendor schema does not describe: the
/// loader accepts it (an open object can hold any member), but the vendor schema promises
/// nothing about it — a typo (`/mesage`) passes, and certify sees no change there.
fn undescribed(out: &mut Findings<'_>, vendor: &Value, file: &str, key: &str, pointer: &Pointer) {
    if !schema_at(vendor, pointer.as_str()).is_empty() {
        return;
    }
    out.flag(
        "vendor-pointer-undescribed",
        pointer.as_str(),
        &format!("{key} = \"{}\"", pointer.as_str()),
        format!(
            "`{key} = \"{pointer}\"`: {file} does not describe {pointer} (no `properties` \
             entry leads there; an open object admits it with any value or not at all): \
             check the spelling, and declare the member in the vendor schema"
        ),
    );
}

/// Each value of a mapping's table judged by the contract schema at `data`'s member: a
/// value it refuses makes every response carrying that key a rejection at runtime.
fn table_values(out: &mut Findings<'_>, root: &Value, mapping: &Mapping) {
    let Normalise::Table(table) = &mapping.normalise else {
        return;
    };
    let members: Vec<&Value> = schema_at(root, "/data")
        .into_iter()
        .filter_map(|s| s.get("properties")?.get(&mapping.field))
        .collect();
    let validators: Vec<jsonschema::Validator> = members
        .iter()
        .filter_map(|member| validator(root, member))
        .collect();
    if validators.is_empty() || validators.len() != members.len() {
        return; // not located, or not judged standalone: runtime decides
    }
    for (key, value) in table {
        if validators.iter().any(|v| v.is_valid(value)) {
            continue;
        }
        out.flag(
            "table-value-refused",
            &format!("/data/{}", mapping.field),
            &format!("field = \"{}\"", mapping.field),
            format!(
                "the table of data.{} maps {key:?} to {value}, which the contract schema \
                 refuses there: every response with {key:?} would be rejected at runtime",
                mapping.field
            ),
        );
    }
}

/// A validator of `member` (a subschema of `root`) on its own: the root's `$schema` and
/// definitions beside it, so its local references still resolve.
fn validator(root: &Value, member: &Value) -> Option<jsonschema::Validator> {
    let Some(object) = member.as_object() else {
        return jsonschema::options().build(member).ok(); // `true` or `false`
    };
    let mut schema = object.clone();
    for key in ["$schema", "$defs", "definitions"] {
        if let Some(v) = root.get(key) {
            schema.entry(key).or_insert_with(|| v.clone());
        }
    }
    jsonschema::options()
        .should_validate_formats(true)
        .build(&Value::Object(schema))
        .ok()
}
