//! `airlock init --vendor`: a `kind = "vendor"` contract from a vendor's own response
//! bodies. The vendor schema is open (a member the vendor adds rejects nothing) and tells
//! an error body from a success by a member only error bodies carry (`oneOf`, each branch
//! `not` requiring the other's member); every leaf of the successes is mapped into `data`,
//! whose schema is inferred and closed as an envelope scaffold's; error bodies get failure
//! rules.

use airlock_guard::Request;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::path::Path;

use super::contract::{bindings, envelope, manifest, request_id_pattern, toml_string};
use super::infer::{depth, infer, leaves_of};
use super::{
    agent_fields, pretty, read_given, read_near_misses, review_fields, values_in, write_plan,
    InitError, InitOptions, Plan, Scaffold, Written, A_SAMPLE_RESPONSE,
};
use crate::cases::escape_token;

/// Top-level members that mark a vendor's error body when some samples have one and
/// others do not, in the order tried.
const ERROR_MEMBERS: [&str; 7] = [
    "error",
    "errors",
    "message",
    "error_message",
    "error_description",
    "fault",
    "detail",
];

/// Strings in the vendor schema are bounded, but not by the samples: at least this long.
const VENDOR_STRING_MIN: u64 = 256;

/// One vendor sample: its file, its document, its size and its request.
struct VendorSample<'a> {
    path: &'a Path,
    document: Value,
    bytes: Vec<u8>,
    request: Request,
}

/// One member of `data`: its name, where it is in the vendor document, whether some
/// successes lack it, and whether it is a time normalised to UTC.
struct Mapped {
    field: String,
    from: String,
    optional: bool,
    time: bool,
}

/// Scaffold a vendor contract from `options.samples` (vendor response bodies).
pub(super) fn init_vendor(
    options: &InitOptions,
    request: &Request,
    scaffold: &mut Scaffold,
) -> Result<(), InitError> {
    let samples = read_vendor_samples(options, request)?;
    let error_member = error_member(&samples);
    let (errors, successes): (Vec<&VendorSample<'_>>, Vec<&VendorSample<'_>>) =
        samples.iter().partition(|s| {
            error_member
                .as_deref()
                .is_some_and(|m| s.document.get(m).is_some())
        });
    if successes.is_empty() {
        return Err(InitError::NoSuccess);
    }
    let documents: Vec<Value> = successes.iter().map(|s| s.document.clone()).collect();
    let mapping = mapping(&documents);
    if mapping.is_empty() {
        return Err(InitError::NoMembers);
    }
    for m in &mapping {
        let mut line = format!("/data/{}: mapped from {}", m.field, m.from);
        if m.time {
            line.push_str(", normalised to UTC (rfc3339_utc)");
        }
        if m.optional {
            line.push_str(", optional (some successes lack it)");
        }
        scaffold.inferred.push(line);
    }
    scaffold.review.push(format!(
        "the mapping names every leaf of the successes ({}): drop those the agent \
         does not need (unmapped members never reach it)",
        match mapping.len() {
            1 => "1 member".to_owned(),
            n => format!("{n} members"),
        }
    ));
    let data: Vec<Value> = documents.iter().map(|d| mapped(d, &mapping)).collect();
    let requests: Vec<Request> = successes.iter().map(|s| s.request.clone()).collect();
    let data_schema = infer(&data, "/data", scaffold);
    let fields = agent_fields(options, &data)?;
    let checks = bindings(&data, &requests, &fields, scaffold);
    review_fields(&data_schema, &fields, &checks, scaffold);

    let vendor_schema = vendor_schema(&documents, &errors, error_member.as_deref(), scaffold);
    let failures = failure_rules(&errors, error_member.as_deref(), scaffold);
    let largest = samples.iter().map(|s| s.bytes.len()).max().unwrap_or(0);
    let deepest = samples
        .iter()
        .map(|s| depth(&s.document))
        .max()
        .unwrap_or(1);
    let limits = super::limits_for(largest, deepest.max(2), scaffold);
    let id_pattern = request_id_pattern(samples.iter().map(|s| s.request.request_id.as_str()));
    let input = input_tables(&mapping, &failures);
    let manifest = manifest(&options.tool, &input, limits, &fields, &checks, &[]);
    let schema = envelope(&options.tool, data_schema, &id_pattern);
    let unlearned = read_near_misses(&options.tool, &options.near_misses, request, false)?;

    let mut accepted = Vec::new();
    for (kind, group) in [("sample", &successes), ("failure", &errors)] {
        for (n, sample) in group.iter().enumerate() {
            accepted.push(Written {
                name: format!("{kind}_{n:02}"),
                bytes: sample.bytes.clone(),
                request: &sample.request,
                sample: sample.path,
            });
        }
    }
    let cost = samples
        .iter()
        .map(|s| (s.bytes.len() as u64).saturating_mul(values_in(&s.document)))
        .fold(0, u64::saturating_add);
    let plan = Plan {
        files: vec![
            ("v1.schema.json", pretty(&schema)),
            ("vendor.v1.schema.json", pretty(&vendor_schema)),
            ("contract.toml", manifest.into_bytes()),
        ],
        accepted,
        rejected: Vec::new(),
        unlearned,
        cost,
    };
    write_plan(options, request, &plan, scaffold)
}

/// Read every sample (request files a glob named are skipped): strict JSON objects.
fn read_vendor_samples<'a>(
    options: &'a InitOptions,
    request: &Request,
) -> Result<Vec<VendorSample<'a>>, InitError> {
    let mut out = Vec::new();
    for sample in read_given(&options.samples, request, false, A_SAMPLE_RESPONSE) {
        let sample = sample?;
        let document = sample.json()?;
        if !document.is_object() {
            return Err(InitError::VendorNotAnObject {
                path: sample.path.clone(),
            });
        }
        out.push(VendorSample {
            path: sample.path,
            document,
            bytes: sample.bytes,
            request: sample.request,
        });
    }
    if out.is_empty() {
        return Err(InitError::NoSamples);
    }
    Ok(out)
}

/// The member that marks an error body: the first of [`ERROR_MEMBERS`] that some samples
/// have at the top level and others lack.
fn error_member(samples: &[VendorSample<'_>]) -> Option<String> {
    ERROR_MEMBERS.iter().find_map(|member| {
        let with = samples
            .iter()
            .filter(|s| s.document.get(*member).is_some())
            .count();
        (with > 0 && with < samples.len()).then(|| (*member).to_owned())
    })
}

/// Every leaf of the successes (arrays whole), first seen first, named by its path
/// (`/author/login` → `author_login`), each name once.
fn mapping(documents: &[Value]) -> Vec<Mapped> {
    let mut pointers: Vec<String> = Vec::new();
    for document in documents {
        for leaf in leaves_of(document, "") {
            if !leaf.is_empty() && !pointers.contains(&leaf) {
                pointers.push(leaf);
            }
        }
    }
    let mut out: Vec<Mapped> = Vec::new();
    for from in pointers {
        let values: Vec<&Value> = documents.iter().filter_map(|d| d.pointer(&from)).collect();
        let base = field_name(&from);
        let mut field = base.clone();
        let mut n = 2;
        while out.iter().any(|m| m.field == field) {
            field = format!("{base}_{n}");
            n += 1;
        }
        let time = !values.is_empty()
            && values.iter().all(|v| {
                v.as_str().is_some_and(|t| {
                    t.contains('T') && t.parse::<airlock_guard::jiff::Timestamp>().is_ok()
                })
            });
        out.push(Mapped {
            field,
            optional: values.len() != documents.len(),
            from,
            time,
        });
    }
    out
}

/// A member name for `data` from a pointer: its tokens joined with `_`, no `/`.
fn field_name(pointer: &str) -> String {
    let name = pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "_").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join("_");
    if name.is_empty() {
        "member".to_owned()
    } else {
        name
    }
}

/// The `data` the mapping builds from a success (times as they are: normalised to UTC they
/// are no longer, and keep their format).
fn mapped(document: &Value, mapping: &[Mapped]) -> Value {
    let mut data = Map::new();
    for m in mapping {
        if let Some(value) = document.pointer(&m.from) {
            data.insert(m.field.clone(), value.clone());
        }
    }
    Value::Object(data)
}

/// The vendor schema: the successes' shape opened, and when there are error bodies, a
/// `oneOf` of the success and the error shape, each refusing the other's marking member.
fn vendor_schema(
    documents: &[Value],
    errors: &[&VendorSample<'_>],
    error_member: Option<&str>,
    scaffold: &mut Scaffold,
) -> Value {
    // The vendor schema's own inference is not the contract's: its guesses are not listed.
    let mut scratch = Scaffold::default();
    let mut success = open(infer(documents, "", &mut scratch));
    let title = "The vendor's response body (scaffolded by airlock init from samples): open on \
                 purpose, as the vendor may add members; unmapped members never reach the agent";
    let (Some(member), false) = (error_member, errors.is_empty()) else {
        scaffold.inferred.push(
            "vendor schema: the successes' shape, open (a member the vendor adds is admitted \
             and never mapped)"
                .to_owned(),
        );
        let mut schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": title,
        });
        if let (Value::Object(out), Value::Object(inner)) = (&mut schema, success) {
            out.extend(inner);
        }
        return schema;
    };
    let values: Vec<Value> = errors
        .iter()
        .filter_map(|e| e.document.get(member).cloned())
        .collect();
    let mut error = json!({
        "type": "object",
        "required": [member],
        "properties": {member: open(infer(&values, "", &mut scratch))}
    });
    success["not"] = json!({"required": [member]});
    // An error body must not also carry a success's first required member: a document
    // with both is neither, so it is refused (as ci_pipeline_status refuses one).
    let first_required = success
        .get("required")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .cloned();
    if let Some(required) = &first_required {
        error["not"] = json!({"required": [required]});
    }
    scaffold.inferred.push(format!(
        "vendor schema: oneOf a success (open, without `{member}`) and an error body (with \
         `{member}`{}), as {} of {} samples carry `{member}`",
        first_required
            .as_ref()
            .and_then(Value::as_str)
            .map(|r| format!(", without `{r}`"))
            .unwrap_or_default(),
        errors.len(),
        errors.len() + documents.len()
    ));
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title,
        "oneOf": [success, error]
    })
}

/// A schema opened for a vendor: objects admit members they do not list, guessed value
/// sets become bounded strings, strings are bounded by at least [`VENDOR_STRING_MIN`].
fn open(mut schema: Value) -> Value {
    let mut stack = vec![&mut schema];
    while let Some(at) = stack.pop() {
        let Value::Object(map) = at else { continue };
        map.remove("additionalProperties");
        if let Some(Value::Array(values)) = map.get("enum") {
            if values.iter().all(Value::is_string) {
                map.remove("enum");
                map.insert("type".into(), json!("string"));
            }
        }
        if map.get("type") == Some(&json!("string")) {
            let bound = map
                .get("maxLength")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .max(VENDOR_STRING_MIN);
            map.insert("maxLength".into(), json!(bound));
        }
        for (key, value) in map.iter_mut() {
            match (key.as_str(), value) {
                ("properties", Value::Object(members)) => stack.extend(members.values_mut()),
                ("items", items) => stack.push(items),
                ("anyOf", Value::Array(branches)) => stack.extend(branches.iter_mut()),
                _ => {}
            }
        }
    }
    schema
}

/// A failure rule: the member tested, the value it must have (any, when `None`), the code.
type FailureRule = (String, Option<Value>, &'static str);

/// The failure rules for the error bodies: an error whose marking member says "not found"
/// (or 404) is `NOT_FOUND`, every other `UPSTREAM_UNAVAILABLE`.
fn failure_rules(
    errors: &[&VendorSample<'_>],
    error_member: Option<&str>,
    scaffold: &mut Scaffold,
) -> Vec<FailureRule> {
    let Some(member) = error_member.filter(|_| !errors.is_empty()) else {
        return Vec::new();
    };
    let at = format!("/{}", escape_token(member));
    let mut rules: Vec<FailureRule> = Vec::new();
    for error in errors {
        let Some(Value::String(text)) = error.document.get(member) else {
            continue;
        };
        let lower = text.to_ascii_lowercase();
        let not_found = lower.contains("not found") || lower.starts_with("404");
        let value = Some(Value::String(text.clone()));
        if not_found && !rules.iter().any(|(_, v, _)| *v == value) {
            rules.push((at.clone(), value, "NOT_FOUND"));
        }
    }
    rules.push((at.clone(), None, "UPSTREAM_UNAVAILABLE"));
    let named: Vec<String> = errors
        .iter()
        .map(|e| e.path.display().to_string())
        .collect();
    scaffold.inferred.push(format!(
        "failure rules: a body with {at} is a failure ({}{}), as in {}",
        rules
            .iter()
            .filter(|(_, v, _)| v.is_some())
            .map(|(_, v, code)| format!("{} → {code}, ", v.as_ref().unwrap_or(&Value::Null)))
            .collect::<String>(),
        "otherwise UPSTREAM_UNAVAILABLE",
        named.join(", ")
    ));
    scaffold.review.push(format!(
        "failure rules were guessed from {} error bodies: an error body is \
         UPSTREAM_UNAVAILABLE (retried) unless a rule says NOT_FOUND; say which errors are \
         NOT_FOUND or TOOL_ERROR (not retried)",
        errors.len()
    ));
    rules
}

/// The `[input]` tables: kind, vendor schema, mapping and failure rules.
fn input_tables(mapping: &[Mapped], failures: &[FailureRule]) -> String {
    let q = |text: &str| toml_string(text);
    let mut out = String::from("[input]\nkind = \"vendor\"\nschema = \"vendor.v1.schema.json\"\n");
    for m in mapping {
        let _ = write!(
            out,
            "\n[[input.map]]\nfield = {}\nfrom = {}\n",
            q(&m.field),
            q(&m.from)
        );
        if m.time {
            out.push_str("normalise = \"rfc3339_utc\"\n");
        }
        if m.optional {
            out.push_str("optional = true\n");
        }
    }
    for (at, equals, code) in failures {
        let _ = write!(out, "\n[[input.failure]]\nat = {}\n", q(at));
        if let Some(Value::String(text)) = equals {
            let _ = writeln!(out, "equals = {}", q(text));
        }
        let _ = writeln!(out, "code = {}", q(code));
    }
    out.push('\n');
    out
}
