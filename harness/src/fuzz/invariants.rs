//! The invariants of the `parse` and `admit` targets (and so of `mutate`): the strict
//! parser against `serde_json`, and what the guard's answer on any bytes must be — a
//! closed agent value, the fixed failure on rejection, only the response's own agent
//! fields (for vendor and lines contracts, only mapped values), an audit record that
//! digests exactly the bytes read.

use super::*;

/// The `parse` target: the strict parser and `serde_json` read `bytes` alike, or the
/// parser rejects for a documented reason (duplicates, numbers it will not round, depth).
///
/// # Errors
///
/// The [`Violation`].
pub fn check_parse(bytes: &[u8]) -> Result<(), Violation> {
    let theirs = serde_json::from_slice::<Value>(bytes);
    match parse(bytes, PARSE_DEPTH) {
        Ok(ours) => {
            let Ok(theirs) = theirs else {
                return Err(Violation::new(
                    "parser_accepts_invalid_json",
                    "the strict parser accepted what serde_json rejects",
                ));
            };
            ensure!(
                ours == theirs,
                "parser_disagrees",
                "the strict parser read {ours}, serde_json {theirs}"
            );
        }
        Err(error) => {
            let documented = matches!(
                error.kind(),
                ParseErrorKind::DuplicateMember(_)
                    | ParseErrorKind::IntegerOutOfRange
                    | ParseErrorKind::NumberUnderflow
                    | ParseErrorKind::TooDeep { .. }
            );
            ensure!(
                theirs.is_err() || documented,
                "parser_rejects_valid_json",
                "serde_json accepts what the strict parser rejects with {error}"
            );
        }
    }
    Ok(())
}

/// The `admit` invariants for one guard, request and body.
///
/// # Errors
///
/// The [`Violation`].
pub fn check_admission(guard: &Guard, request: &Request, bytes: &[u8]) -> Result<(), Violation> {
    let contract = guard.contract();
    let admission = guard.admit(request, bytes);
    let agent = admission.agent();
    let audit = admission.audit();
    ensure!(
        agent.tool() == contract.tool() && agent.request_id() == request.request_id,
        "agent_identity",
        "agent value names {:?}/{:?}",
        agent.tool(),
        agent.request_id()
    );
    // The audit digests exactly the bytes read: the body, or the limit plus one byte.
    let read = usize::try_from(contract.limits().max_bytes.saturating_add(1))
        .map_or(bytes, |limit| &bytes[..bytes.len().min(limit)]);
    ensure!(
        audit.raw_len() == Some(read.len() as u64)
            && audit.raw_sha256().map(|d| d.to_string()) == Some(sha256_hex(read)),
        "audit_digest",
        "audit records {:?} bytes, digest {:?}; {} bytes were read",
        audit.raw_len(),
        audit.raw_sha256().map(|d: Sha256Digest| d.to_string()),
        read.len()
    );
    if !admission.is_admitted() {
        check_rejection(guard, request, &admission)?;
    }
    let mcp = contract.input().mcp().is_some();
    if let Some(data) = agent.data() {
        // A vendor document's or a command's output: every member of the agent's data
        // is a mapped member's own value, normalised as declared; nothing else.
        mapped_only(contract.input(), read, data.iter())?;
    }
    let judged = judged_value(contract, bytes, read);
    check_judged(contract, agent, judged.as_ref(), mcp)?;
    if mcp {
        // The CallToolResult the agent gets carries exactly the closed envelope.
        let result = agent.to_call_tool_result();
        let read =
            crate::base::shape::call_tool_result(&result, contract.tool(), agent.request_id())
                .map_err(|e| e.to_string());
        ensure!(
            read.as_ref() == Ok(&agent.to_json()),
            "call_tool_result_not_the_value",
            "the agent's CallToolResult {result} reads as {read:?}, the agent value is {}",
            agent.to_json_string()
        );
    }
    if admission.is_admitted() {
        ensure!(
            audit.stage() == Stage::Projection && audit.diagnostic().is_none(),
            "admitted_with_diagnostic",
            "admitted at {} with a diagnostic",
            audit.stage()
        );
    }
    Ok(())
}

/// What a rejection must give the agent: an MCP server's JSON-RPC error the transport
/// failure (retryable per policy), any other the guard's fixed failure, with a
/// diagnostic.
fn check_rejection(
    guard: &Guard,
    request: &Request,
    admission: &airlock_guard::Admission,
) -> Result<(), Violation> {
    let contract = guard.contract();
    let (agent, audit) = (admission.agent(), admission.audit());
    if audit.stage() == Stage::Transport {
        // An MCP server's JSON-RPC error: the transport failure, retryable per policy.
        let policy = contract
            .retry()
            .is_retryable(airlock_guard::ErrorCode::UpstreamUnavailable);
        ensure!(
            contract.input().mcp().is_some()
                && agent.error() == Some((airlock_guard::ErrorCode::UpstreamUnavailable, policy)),
            "not_transport_failure",
            "a transport rejection gave the agent {}",
            agent.to_json_string()
        );
        return Ok(());
    }
    let (code, retryable) = guard.unverified();
    ensure!(
        agent.tool() == contract.tool()
            && agent.request_id() == request.request_id
            && agent.error() == Some((code, retryable)),
        "not_fixed_failure",
        "a rejection ({}) gave the agent {}",
        audit.stage(),
        agent.to_json_string()
    );
    ensure!(
        admission.diagnostic().is_some(),
        "rejection_without_diagnostic",
        "rejected at {} with no diagnostic",
        audit.stage()
    );
    Ok(())
}

/// What the schema judges: the body, or an MCP message's structuredContent (written
/// out again to be judged in place too), with its bytes when they were read whole. A
/// vendor document or a command's output is not what the contract schema judges (the
/// envelope the guard builds from it is): `None`, as for bytes that do not parse.
fn judged_value(
    contract: &airlock_guard::Contract,
    bytes: &[u8],
    read: &[u8],
) -> Option<(Value, Option<Vec<u8>>)> {
    let depth = contract.limits().max_depth;
    let mcp = contract.input().mcp().is_some();
    let mapped = matches!(contract.input(), InputKind::Vendor(_) | InputKind::Lines(_));
    match parse(bytes, depth) {
        _ if mapped => None,
        Ok(value) if !mcp => {
            let whole = (read.len() == bytes.len()).then(|| bytes.to_vec());
            Some((value, whole))
        }
        Ok(value) => value
            .pointer(airlock_guard::STRUCTURED_CONTENT)
            .cloned()
            .map(|s| {
                let text = serde_json::to_vec(&s).ok();
                (s, text)
            }),
        Err(_) => None,
    }
}

/// The judged value: validated in place as on the value, and the agent's `data` exactly
/// its agent fields.
fn check_judged(
    contract: &airlock_guard::Contract,
    agent: &airlock_guard::AgentValue,
    judged: Option<&(Value, Option<Vec<u8>>)>,
    mcp: bool,
) -> Result<(), Violation> {
    let depth = contract.limits().max_depth;
    if let Some((value, Some(text))) = judged {
        let in_place = contract.schema().validate_bytes(text, depth);
        let by_value = contract.schema().validate(value);
        ensure!(
            in_place == by_value,
            "validators_disagree",
            "in place: {:?}; on the value: {:?}",
            in_place.as_ref().err().map(ToString::to_string),
            by_value.as_ref().err().map(ToString::to_string)
        );
    }
    if let (Some((value, _)), Some(data)) = (judged, agent.data()) {
        // The agent's `data` is exactly the agent fields the response carries, each
        // the response's own value, in the contract's order.
        let expected = expected_data(contract.agent_fields(), value, !mcp);
        let got: Vec<(&str, &Value)> = data.iter().collect();
        let want: Vec<(&str, &Value)> = expected.iter().map(|(k, v)| (k.as_str(), v)).collect();
        ensure!(
            got == want,
            "agent_data_not_the_fields",
            "the agent got {}, the response's agent fields are {}",
            Value::Object(data.to_map()),
            Value::Object(expected.clone())
        );
    }
    Ok(())
}

/// The `mapped_only` invariant: every member of the agent's `data` (from a vendor
/// document or a command's output, `body` as read) is filled by a mapping, and is the
/// value at its source, normalised as declared. Read independently of the guard: the
/// document with [`parse`], a command's output by finding the key's line in the text.
pub(super) fn mapped_only<'v>(
    input: &InputKind,
    body: &[u8],
    data: impl IntoIterator<Item = (&'v str, &'v Value)>,
) -> Result<(), Violation> {
    let (map, identity): (&[Mapping], Vec<Mapping>) = match input {
        InputKind::Vendor(vendor) => (&vendor.map, Vec::new()),
        InputKind::Lines(lines) if lines.map.is_empty() => (
            &[],
            lines
                .keys
                .iter()
                .filter_map(|k| {
                    Some(Mapping {
                        field: k.clone(),
                        from: Pointer::parse(&format!("/{}", crate::cases::escape_token(k)))
                            .ok()?,
                        normalise: Normalise::None,
                        optional: false,
                    })
                })
                .collect(),
        ),
        InputKind::Lines(lines) => (&lines.map, Vec::new()),
        _ => return Ok(()),
    };
    let map = if identity.is_empty() { map } else { &identity };
    let source = |mapping: &Mapping| -> Option<Value> {
        match input {
            InputKind::Lines(lines) => {
                let text = std::str::from_utf8(body).ok()?;
                let key = mapping.from.tokens().first()?;
                let ending = match lines.line_ending {
                    airlock_guard::LineEnding::Lf => "\n",
                    airlock_guard::LineEnding::CrLf => "\r\n",
                };
                let prefix = format!("{key}{}", lines.separator);
                text.split(ending)
                    .find_map(|line| line.strip_prefix(&prefix))
                    .map(|v| Value::String(v.to_owned()))
            }
            _ => mapping
                .from
                .resolve(&parse(body, usize::MAX).ok()?)
                .cloned(),
        }
    };
    for (name, value) in data {
        let Some(mapping) = map.iter().find(|m| m.field == name) else {
            return Err(Violation::new(
                "agent_member_not_mapped",
                format!("the agent's data has {name:?}, which no mapping fills"),
            ));
        };
        let found = source(mapping);
        let text = found.as_ref().and_then(Value::as_str);
        let same_time = |a: &str, b: &Value| {
            let t = |s: &str| utc_civil(s);
            t(a).is_some() && t(a) == b.as_str().and_then(t)
        };
        let derived = match &mapping.normalise {
            Normalise::None => found.as_ref() == Some(value),
            Normalise::IntegerFromString => {
                text.is_some_and(|t| value.as_i64().is_some_and(|n| n.to_string() == t))
            }
            Normalise::Lowercase => {
                text.is_some_and(|t| value.as_str() == Some(t.to_ascii_lowercase().as_str()))
            }
            Normalise::Table(table) => text.and_then(|t| table.get(t)) == Some(value),
            Normalise::Rfc3339Utc => text.is_some_and(|t| same_time(t, value)),
            Normalise::Rfc3339FromEpochSeconds => found
                .as_ref()
                .and_then(Value::as_i64)
                .and_then(|n| {
                    let epoch = airlock_guard::jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
                    epoch
                        .checked_add(airlock_guard::jiff::SignedDuration::from_secs(n))
                        .ok()
                })
                .is_some_and(|t| value.as_str().and_then(utc_civil) == Some(t)),
            _ => false,
        };
        ensure!(
            derived,
            "agent_value_not_from_the_mapping",
            "the agent's data.{name} is {value}, its source {} holds {}",
            mapping.from,
            found.map_or_else(|| "nothing".to_owned(), |v| v.to_string())
        );
    }
    Ok(())
}

/// The UTC civil time `text` names, from jiff's own RFC 3339 reader and a civil
/// subtraction of its offset (jiff's `Timestamp` stops a day short of 9999-12-31, which
/// the guard admits). `None` when `text` names no time with a numeric offset.
fn utc_civil(text: &str) -> Option<airlock_guard::jiff::civil::DateTime> {
    use airlock_guard::jiff::{fmt::temporal::Pieces, tz::Offset};
    let pieces = Pieces::parse(text).ok()?;
    let local = pieces.date().to_datetime(pieces.time()?);
    let offset = pieces.to_numeric_offset()?;
    local.checked_sub(offset.duration_since(Offset::UTC)).ok()
}

/// What the agent's `data` must be for `response`: each agent field present, at its
/// place below `/data` (an envelope's `/data/x` is the agent's `x`; `under_data` is false
/// for an MCP tool's structuredContent), in the contract's order. Written independently of
/// the guard's projection, on the `serde_json` value.
fn expected_data(fields: &[Pointer], response: &Value, under_data: bool) -> Map<String, Value> {
    let mut data = Map::new();
    for field in fields {
        let Some(found) = field.resolve(response) else {
            continue;
        };
        let tokens = match field.tokens() {
            [first, rest @ ..] if under_data && first == "data" && !rest.is_empty() => rest,
            all => all,
        };
        let Some((last, parents)) = tokens.split_last() else {
            continue;
        };
        let mut at = &mut data;
        for token in parents {
            let entry = at
                .entry(token.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            match entry {
                Value::Object(next) => at = next,
                _ => return data,
            }
        }
        at.insert(last.clone(), found.clone());
    }
    data
}
