//! What a contract's fields may name, checked when a contract is made (loaded or built):
//! agent fields, the members a vendor or command-output contract fills, and the fields of
//! its checks, each against the schema; agent fields that overlap or repeat; an MCP
//! contract's agent fields against its output schema's `required`.

use serde_json::Value;

use super::error::{invalid, ContractError};
use crate::checks::CheckSpec;
use crate::input::InputKind;
use crate::pointer::Pointer;
use crate::schema::can_contain;

/// Every field the contract names can be held by the schema `root` (skipped for an older
/// version, `check_fields` false: members added since are simply absent), and the agent
/// fields are well-formed for the input kind.
pub(crate) fn check(
    check_fields: bool,
    root: &Value,
    input: &InputKind,
    agent_fields: &[Pointer],
    checks: &[CheckSpec],
) -> Result<(), ContractError> {
    if input.mcp().is_some() {
        mcp_fields(check_fields, root, agent_fields)?;
    }
    for (i, field) in agent_fields.iter().enumerate() {
        if check_fields && !can_contain(root, field.tokens()) {
            return Err(invalid(
                format!("agent.fields[{i}]"),
                format!("{field} names a member the schema cannot contain"),
            ));
        }
        if input.mcp().is_some() {
            continue; // one member each, distinct: checked above
        }
        if field.tokens() == ["data"] {
            return Err(invalid(
                format!("agent.fields[{i}]"),
                format!(
                    "{:?} would hand the agent the whole data object (as data.data): \
                     name its members, such as /data/<member>",
                    field.as_str()
                ),
            ));
        }
        if field.tokens().is_empty() || field.agent_tokens().is_empty() {
            return Err(invalid(
                format!("agent.fields[{i}]"),
                format!("{field:?} would hand the agent a whole envelope, not a field"),
            ));
        }
    }
    if input.mcp().is_none() {
        overlapping_fields(agent_fields)?;
    }
    let filled: Vec<String> = match &input {
        InputKind::Lines(lines) if lines.map.is_empty() => lines.keys.clone(),
        other => other
            .mapped_fields()
            .into_iter()
            .map(str::to_owned)
            .collect(),
    };
    for field in filled {
        if check_fields && !can_contain(root, &["data".to_owned(), field.clone()]) {
            return Err(invalid(
                "input.map",
                format!("data.{field} is filled from the source but the schema cannot contain it"),
            ));
        }
    }
    for (i, check) in checks.iter().enumerate() {
        if check_fields && !can_contain(root, check.field().tokens()) {
            return Err(invalid(
                format!("checks[{i}].field"),
                format!("{} names a member the schema cannot contain", check.field()),
            ));
        }
    }
    Ok(())
}

/// No agent field contains another (`/data/a` and `/data/a/b`), nor is named twice. Sorted
/// by their tokens, a field that contains others comes right before the first of them, so
/// neighbours are enough: near-linear in the number of fields (every pair was compared).
fn overlapping_fields(fields: &[Pointer]) -> Result<(), ContractError> {
    let mut order: Vec<usize> = (0..fields.len()).collect();
    order.sort_by(|&a, &b| fields[a].agent_tokens().cmp(fields[b].agent_tokens()));
    for pair in order.windows(2) {
        let (a, b) = (&fields[pair[0]], &fields[pair[1]]);
        if b.agent_tokens().starts_with(a.agent_tokens()) {
            // Reported at the later of the two, as the manifest reads.
            let (i, field, other) = if pair[1] > pair[0] {
                (pair[1], b, a)
            } else {
                (pair[0], a, b)
            };
            return Err(invalid(
                format!("agent.fields[{i}]"),
                format!("{field} overlaps {other}: an agent field may not contain another"),
            ));
        }
    }
    Ok(())
}

/// The agent fields of an MCP tool contract are members of `structuredContent` (`/name`),
/// each once, and include every member the output schema requires at its root: the fresh
/// `structuredContent` the agent gets still honours the schema the server published, so a
/// client that validates it (the official SDKs do) accepts it.
fn mcp_fields(check_fields: bool, root: &Value, fields: &[Pointer]) -> Result<(), ContractError> {
    let mut seen = std::collections::HashSet::new();
    for (i, field) in fields.iter().enumerate() {
        if field.tokens().len() != 1 {
            return Err(invalid(
                format!("agent.fields[{i}]"),
                format!(
                    "{field:?} is not a member of structuredContent: an MCP tool contract's \
                     agent fields are its top-level members, such as /state"
                ),
            ));
        }
        if !seen.insert(field.as_str()) {
            return Err(invalid(
                format!("agent.fields[{i}]"),
                format!("{field} is named twice"),
            ));
        }
    }
    let required = root
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    for name in required {
        if check_fields && !fields.iter().any(|f| f.tokens()[0] == name) {
            return Err(invalid(
                "agent.fields",
                format!(
                    "the output schema requires {name:?} but it is not an agent field: the \
                     agent's structuredContent would not honour the schema the server \
                     publishes (add \"/{name}\")"
                ),
            ));
        }
    }
    Ok(())
}
