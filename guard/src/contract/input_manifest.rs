//! `[input]` of `contract.toml`, read and checked into an [`InputKind`]: which keys each
//! kind takes, and what each key may hold. Nothing here runs on a response.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::{invalid, ContractError};
use super::file_names::check_vendor_file_name;
use crate::input::{InputKind, MAX_LINE_BYTES_CEILING};
use crate::mcp::{ContentKind, McpInput, TextRule};
use crate::pointer::Pointer;
use crate::projection::ErrorCode;
use crate::schema::CompiledSchema;
use crate::upstream::{FailureRule, LineEnding, LinesInput, Mapping, Normalise, VendorInput};

/// `[input]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct InputManifest {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<TextRule>,
    #[serde(default)]
    allow_content: Option<Vec<ContentKind>>,
    #[serde(default)]
    tool_error: Option<String>,
    #[serde(default)]
    read_only: Option<bool>,
    #[serde(default)]
    idempotent: Option<bool>,
    #[serde(default)]
    error_schema: Option<String>,
    #[serde(default)]
    error_fields: Option<Vec<String>>,
    #[serde(default)]
    schema: Option<String>,
    #[serde(default)]
    map: Option<Vec<MapManifest>>,
    #[serde(default)]
    failure: Option<Vec<FailureManifest>>,
    #[serde(default)]
    separator: Option<String>,
    #[serde(default)]
    line_ending: Option<String>,
    #[serde(default)]
    max_line_bytes: Option<usize>,
    #[serde(default)]
    keys: Option<Vec<String>>,
}

/// `[[input.map]]`
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MapManifest {
    field: String,
    from: String,
    #[serde(default)]
    normalise: Option<String>,
    #[serde(default)]
    table: Option<Map<String, Value>>,
    #[serde(default)]
    optional: bool,
}

/// `[[input.failure]]`
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FailureManifest {
    at: String,
    #[serde(default)]
    equals: Option<toml::Value>,
    code: String,
}

/// Which manifest keys each kind uses.
const KEYS: [(&str, &[&str]); 4] = [
    ("envelope", &[]),
    (
        "mcp",
        &[
            "text",
            "allow_content",
            "tool_error",
            "read_only",
            "idempotent",
            "error_schema",
            "error_fields",
        ],
    ),
    ("vendor", &["schema", "map", "failure"]),
    (
        "lines",
        &["separator", "line_ending", "max_line_bytes", "keys", "map"],
    ),
];

/// The manifest's `[input]`, checked. A vendor input's schema is compiled by `compile`
/// from its file, or from `vendor_file` when given (another vendor schema in place of the
/// one the manifest names, which only a vendor contract can take).
pub(crate) fn input_kind(
    input: InputManifest,
    vendor_file: Option<&str>,
    compile: impl FnOnce(&str) -> Result<CompiledSchema, ContractError>,
) -> Result<InputKind, ContractError> {
    let kind = input.kind.clone().unwrap_or_else(|| "envelope".into());
    check_kind_and_keys(&input, &kind, vendor_file)?;
    match kind.as_str() {
        "mcp" => mcp_input(input).map(InputKind::Mcp),
        "vendor" => vendor_input(input, vendor_file, compile).map(InputKind::Vendor),
        "lines" => lines_input(input).map(InputKind::Lines),
        _ => Ok(InputKind::Envelope),
    }
}

/// `kind` is one of the four, another vendor schema is given to a vendor contract only,
/// and every key set belongs to `kind`.
fn check_kind_and_keys(
    input: &InputManifest,
    kind: &str,
    vendor_file: Option<&str>,
) -> Result<(), ContractError> {
    let Some((_, allowed)) = KEYS.iter().find(|(k, _)| *k == kind) else {
        return Err(invalid(
            "input.kind",
            format!(
                "{kind:?} is not an input kind: use \"envelope\" (the default), \"mcp\", \
                 \"vendor\" or \"lines\""
            ),
        ));
    };
    if let (Some(file), false) = (vendor_file, kind == "vendor") {
        return Err(invalid(
            "input.schema",
            format!(
                "another vendor schema ({file:?}) applies to `kind = \"vendor\"` contracts \
                 only, not {kind:?}"
            ),
        ));
    }
    let set = [
        ("text", input.text.is_some()),
        ("allow_content", input.allow_content.is_some()),
        ("tool_error", input.tool_error.is_some()),
        ("read_only", input.read_only.is_some()),
        ("idempotent", input.idempotent.is_some()),
        ("error_schema", input.error_schema.is_some()),
        ("error_fields", input.error_fields.is_some()),
        ("schema", input.schema.is_some()),
        ("map", input.map.is_some()),
        ("failure", input.failure.is_some()),
        ("separator", input.separator.is_some()),
        ("line_ending", input.line_ending.is_some()),
        ("max_line_bytes", input.max_line_bytes.is_some()),
        ("keys", input.keys.is_some()),
    ];
    if let Some((key, _)) = set.iter().find(|(key, on)| *on && !allowed.contains(key)) {
        let owners: Vec<&str> = KEYS
            .iter()
            .filter(|(_, keys)| keys.contains(key))
            .map(|(k, _)| *k)
            .collect();
        return Err(invalid(
            format!("input.{key}"),
            format!(
                "applies to `kind = {}` contracts only, not {kind:?}",
                owners
                    .iter()
                    .map(|k| format!("\"{k}\""))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
    Ok(())
}

/// `kind = "mcp"`: the defaults of MCP for what is not set; error fields only with an
/// error schema, and an error schema only with error fields.
fn mcp_input(input: InputManifest) -> Result<McpInput, ContractError> {
    let defaults = McpInput::default();
    let tool_error = match input.tool_error {
        None => defaults.tool_error,
        Some(code) => failure_code("input.tool_error", &code)?,
    };
    let error_fields = error_fields(input.error_fields.unwrap_or_default())?;
    match (&input.error_schema, error_fields.is_empty()) {
        (Some(file), false) => check_error_schema_name(file)?,
        (None, false) => {
            return Err(invalid(
                "input.error_fields",
                "error fields are judged by an error schema: name it with `error_schema`",
            ))
        }
        (Some(_), true) => {
            return Err(invalid(
                "input.error_schema",
                "an error schema without `error_fields` forwards nothing: list the members of the error's structuredContent the agent may see",
            ))
        }
        (None, true) => {}
    }
    Ok(McpInput {
        text: input.text.unwrap_or(defaults.text),
        error_schema: input.error_schema,
        error_fields,
        allow_content: input.allow_content.unwrap_or_default(),
        tool_error,
        read_only: input.read_only.unwrap_or(defaults.read_only),
        idempotent: input.idempotent.unwrap_or(defaults.idempotent),
    })
}

/// `error_fields`: each a top-level member of the error's `structuredContent` (`/name`).
fn error_fields(fields: Vec<String>) -> Result<Vec<Pointer>, ContractError> {
    fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let at = format!("input.error_fields[{i}]");
            let pointer = Pointer::parse(f).map_err(|e| invalid(&at, e.to_string()))?;
            if pointer.tokens().len() != 1 {
                return Err(invalid(
                    at,
                    format!(
                        "{f} is not a top-level member of the error's structuredContent \
                         (`/name`)"
                    ),
                ));
            }
            Ok(pointer)
        })
        .collect()
}

/// `kind = "vendor"`: a vendor schema file (or `vendor_file` in its place), at least one
/// mapping, the failure rules; the schema compiled last.
fn vendor_input(
    input: InputManifest,
    vendor_file: Option<&str>,
    compile: impl FnOnce(&str) -> Result<CompiledSchema, ContractError>,
) -> Result<VendorInput, ContractError> {
    let schema_file = input.schema.ok_or_else(|| {
        invalid(
            "input.schema",
            "a vendor contract names its vendor schema file (such as \
             \"vendor.v1.schema.json\" in the contract folder)",
        )
    })?;
    check_vendor_file_name(&schema_file)?;
    let schema_file = match vendor_file {
        Some(file) => {
            check_vendor_file_name(file)?;
            file.to_owned()
        }
        None => schema_file,
    };
    let map = mappings(input.map.unwrap_or_default(), None)?;
    if map.is_empty() {
        return Err(invalid(
            "input.map",
            "a vendor contract maps at least one member ([[input.map]])",
        ));
    }
    let failure = failure_rules(input.failure.unwrap_or_default())?;
    let schema = Arc::new(compile(&schema_file)?);
    Ok(VendorInput {
        schema_file,
        map,
        failure,
        schema,
    })
}

/// `[[input.failure]]`: a pointer, the value it may have to equal, a failure code.
fn failure_rules(rules: Vec<FailureManifest>) -> Result<Vec<FailureRule>, ContractError> {
    rules
        .into_iter()
        .enumerate()
        .map(|(i, rule)| {
            let at = Pointer::parse(&rule.at)
                .map_err(|e| invalid(format!("input.failure[{i}].at"), e.to_string()))?;
            let equals = rule
                .equals
                .map(|v| {
                    serde_json::to_value(v)
                        .map_err(|e| invalid(format!("input.failure[{i}].equals"), e.to_string()))
                })
                .transpose()?;
            let code = failure_code(&format!("input.failure[{i}].code"), &rule.code)?;
            Ok(FailureRule { at, equals, code })
        })
        .collect()
}

/// `kind = "lines"`: the grammar (separator, line bound, keys, line ending) and the
/// mappings, each `from` a declared key.
fn lines_input(input: InputManifest) -> Result<LinesInput, ContractError> {
    let separator = input.separator.unwrap_or_else(|| "=".into());
    if separator != "=" && separator != ": " {
        return Err(invalid(
            "input.separator",
            format!("{separator:?} is not \"=\" (key=value) or \": \" (key: value)"),
        ));
    }
    let max_line_bytes = input.max_line_bytes.unwrap_or(4096);
    if !(1..=MAX_LINE_BYTES_CEILING).contains(&max_line_bytes) {
        return Err(invalid(
            "input.max_line_bytes",
            format!("{max_line_bytes} is out of range: 1 to {MAX_LINE_BYTES_CEILING}"),
        ));
    }
    let keys = input.keys.unwrap_or_default();
    check_line_keys(&keys, &separator)?;
    // Read as a string so that a wrong ending is quoted escaped (`"\r"`), never
    // printed raw into the operator's terminal.
    let line_ending = match input.line_ending.as_deref() {
        None | Some("\n") => LineEnding::Lf,
        Some("\r\n") => LineEnding::CrLf,
        Some(other) => {
            return Err(invalid(
                "input.line_ending",
                format!("{other:?} is not \"\\n\" or \"\\r\\n\""),
            ))
        }
    };
    let map = mappings(input.map.unwrap_or_default(), Some(&keys))?;
    Ok(LinesInput {
        separator,
        line_ending,
        max_line_bytes,
        keys,
        map,
    })
}

/// A line grammar declares its keys: each 1 to 128 bytes, no white space, control
/// character or separator, each once.
fn check_line_keys(keys: &[String], separator: &str) -> Result<(), ContractError> {
    if keys.is_empty() {
        return Err(invalid("input.keys", "a line grammar declares its keys"));
    }
    for (i, key) in keys.iter().enumerate() {
        let bad = key.is_empty()
            || key.len() > 128
            || key.contains(separator.trim())
            || key.chars().any(|c| c.is_control() || c.is_whitespace());
        if bad {
            return Err(invalid(
                format!("input.keys[{i}]"),
                format!(
                    "{key:?} is not a key: 1 to 128 bytes, no white space, control \
                     character or separator"
                ),
            ));
        }
        if keys[..i].contains(key) {
            return Err(invalid(
                format!("input.keys[{i}]"),
                format!("{key:?} is declared twice"),
            ));
        }
    }
    Ok(())
}

/// An error schema's file name: a `.json` file in the contract folder, not a version's.
fn check_error_schema_name(file: &str) -> Result<(), ContractError> {
    check_vendor_file_name(file).map_err(|_| {
        invalid(
            "input.error_schema",
            format!(
                "{file:?} is not a .json file name in the contract folder (other than \
                 v<N>.schema.json), such as \"error.schema.json\""
            ),
        )
    })
}

fn failure_code(location: &str, code: &str) -> Result<ErrorCode, ContractError> {
    ErrorCode::from_wire(code)
        .filter(|c| !c.is_rejection())
        .ok_or_else(|| {
            invalid(
                location,
                format!(
                    "{code:?} is not NOT_FOUND, UPSTREAM_UNAVAILABLE or TOOL_ERROR (the codes \
                     an upstream failure may become)"
                ),
            )
        })
}

/// The mappings; for a line grammar, each `from` must be `/<declared key>`.
fn mappings(map: Vec<MapManifest>, keys: Option<&[String]>) -> Result<Vec<Mapping>, ContractError> {
    let mut out: Vec<Mapping> = Vec::new();
    for (i, m) in map.into_iter().enumerate() {
        let at = |key: &str| format!("input.map[{i}].{key}");
        if m.field.is_empty() || m.field.contains('/') || out.iter().any(|o| o.field == m.field) {
            return Err(invalid(
                at("field"),
                format!(
                    "{:?} is not a new member name of data (no `/`, each once)",
                    m.field
                ),
            ));
        }
        let from = Pointer::parse(&m.from).map_err(|e| invalid(at("from"), e.to_string()))?;
        if let Some(keys) = keys {
            let declared = matches!(from.tokens(), [key] if keys.contains(key));
            if !declared {
                return Err(invalid(
                    at("from"),
                    format!("{:?} is not /<a declared key>", m.from),
                ));
            }
        }
        let normalise = match (m.normalise.as_deref(), m.table) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    at("table"),
                    "one normalisation per member: `normalise` or `table`, not both",
                ))
            }
            (None, Some(table)) => {
                if table.is_empty() {
                    return Err(invalid(at("table"), "an empty table maps nothing"));
                }
                Normalise::Table(table)
            }
            (None, None) => Normalise::None,
            (Some("integer_from_string"), None) => Normalise::IntegerFromString,
            (Some("lowercase"), None) => Normalise::Lowercase,
            (Some("rfc3339_utc"), None) => Normalise::Rfc3339Utc,
            (Some("rfc3339_from_epoch_seconds"), None) => Normalise::Rfc3339FromEpochSeconds,
            (Some(other), None) => {
                return Err(invalid(
                    at("normalise"),
                    format!(
                        "{other:?} is not a normalisation: integer_from_string, lowercase, \
                         rfc3339_utc, rfc3339_from_epoch_seconds (or a `table`)"
                    ),
                ))
            }
        };
        out.push(Mapping {
            field: m.field,
            from,
            normalise,
            optional: m.optional,
        });
    }
    Ok(out)
}
