//! `airlock init`: a first contract from real sample responses. The envelope is the
//! closed Draft 2020-12 one of the shipped contracts; the `data` schema is inferred from
//! the samples (types, small value sets as `enum`, `format` where every sample has one,
//! bounds with headroom, `required` = present in every sample, every object closed);
//! binding checks are proposed where a value equals a request parameter; the samples
//! become accepted fixtures and the adversary's deterministic variants, each confirmed
//! rejected, the near misses. Near misses the user gives (`--near-miss`) teach what the
//! samples cannot show (`learn.rs`): each one the scaffold still admits names a bound, a
//! shape, a condition or a freshness window, kept only when the guard then rejects it and
//! still admits every sample. What was guessed is listed for review.

mod error;
mod infer;
mod learn;

use airlock_guard::jiff::{SignedDuration, Timestamp};
use airlock_guard::{
    parse, CheckSpec, Contract, Guard, Limits, Pointer, Request, MAX_BYTES_CEILING,
    MAX_DEPTH_CEILING,
};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::adversary::generate;
use crate::cases::{file_component, Upstream};
use crate::corpus::Corpus;
use infer::{depth, infer, leaves_of, schema_of};

/// What `airlock init` is given.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The tool name (`[A-Za-z0-9_.-]{1,128}`).
    pub tool: String,
    /// Sample responses: envelopes (`{"tool", "request_id", "outcome", "data"}`) or the
    /// `data` objects alone.
    pub samples: Vec<PathBuf>,
    /// The request the samples answer; default: `req.Sample0001`, no parameters, now.
    pub request: Option<PathBuf>,
    /// The agent fields; default: every leaf member of `data`.
    pub agent_fields: Vec<String>,
    /// The folder that receives `schemas/<tool>/` and `corpora/<tool>/`.
    pub out: PathBuf,
    /// Responses that must be rejected: each answers `NAME.request.json` beside it, else
    /// the request. Those the samples' scaffold admits are learned from; all that end up
    /// rejected become near-miss fixtures.
    pub near_misses: Vec<PathBuf>,
}

/// What `airlock init` wrote and what a person should review.
#[derive(Debug, Clone, Default)]
pub struct Scaffold {
    /// The contract folder written.
    pub contract: PathBuf,
    /// The corpus folder written.
    pub corpus: PathBuf,
    /// What was inferred, one line each.
    pub inferred: Vec<String>,
    /// What to review, one line each.
    pub review: Vec<String>,
    /// Accepted and near-miss fixtures written.
    pub accepted: usize,
    /// Near-miss fixtures written.
    pub near_misses: usize,
}

/// Near-miss fixtures written, at most (one or two per variant class).
const NEAR_MISS_MAX: usize = 40;

/// The adversary's variants of a sample cost about its size times the number of its
/// values (a variant of the whole body per value and class): past this product, summed
/// over the samples, `init` takes no near misses from them, so that it stays linear in
/// its samples (10 000 members in 148 KB would be gigabytes of variants). The inference
/// and the given `--near-miss` files are unaffected; `airlock check` still runs the whole
/// catalogue on the contract.
const CATALOGUE_BUDGET: u64 = 2 << 20;

pub use error::InitError;

fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> InitError + '_ {
    move |source| InitError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Scaffold a contract from `options`.
///
/// # Errors
///
/// [`InitError`] naming the file at fault (an input, or [`InitError::Write`]); either
/// way nothing is written.
pub fn init(options: &InitOptions) -> Result<Scaffold, InitError> {
    if !airlock_guard::is_tool_name(&options.tool) {
        return Err(InitError::ToolName {
            tool: options.tool.clone(),
        });
    }
    let request = match &options.request {
        Some(path) => crate::corpus::read_request(path)?,
        None => Request::new("req.Sample0001", airlock_guard::jiff::Timestamp::now()),
    };
    let mut data = Vec::new();
    let mut requests = Vec::new();
    let mut failures = Vec::new();
    let mut failure_requests = Vec::new();
    // Where each sample came from: successes, then failures (the order of `accepted`).
    let (mut data_paths, mut failure_paths): (Vec<&Path>, Vec<&Path>) = (Vec::new(), Vec::new());
    let mut retagged = Vec::new();
    let mut largest = 0usize;
    let mut deepest = 1usize;
    for path in &options.samples {
        let name = crate::corpus::fixture_name(path);
        if name.ends_with(".request") {
            continue; // a request file given by a glob: read beside its sample
        }
        let own = own_request(path, &request)?;
        let bytes = crate::corpus::read_bounded(
            path,
            MAX_BYTES_CEILING,
            "a sample is a response, at most 64 MiB",
        )?;
        largest = largest.max(bytes.len());
        let value = parse(&bytes, MAX_DEPTH_CEILING).map_err(|error| InitError::NotJson {
            path: path.clone(),
            error,
        })?;
        deepest = deepest.max(depth(&value));
        if let Some(other) = value
            .get("tool")
            .and_then(Value::as_str)
            .filter(|t| *t != options.tool)
        {
            retagged.push(format!(
                "{}: its envelope names tool {other:?}; its fixture names {:?}",
                path.display(),
                options.tool
            ));
        }
        match value.get("outcome").and_then(Value::as_str) {
            Some("success") => match value.get("data") {
                Some(d @ Value::Object(_)) => {
                    data.push(d.clone());
                    data_paths.push(path);
                    requests.push(own);
                }
                _ => return Err(InitError::NoData { path: path.clone() }),
            },
            Some("failure") => {
                failures.push(value);
                failure_paths.push(path);
                failure_requests.push(own);
            }
            _ if value.is_object() => {
                data.push(value);
                data_paths.push(path);
                requests.push(own);
            }
            _ => return Err(InitError::NotAnObject { path: path.clone() }),
        }
    }
    if data.is_empty() {
        return Err(InitError::NoSuccess);
    }
    let mut scaffold = Scaffold::default();
    scaffold.review.extend(retagged);
    let data_schema = infer(&data, "/data", &mut scaffold);
    let fields = if options.agent_fields.is_empty() {
        let mut leaves = Vec::new();
        for d in &data {
            for leaf in leaves_of(d, "/data") {
                if !leaves.contains(&leaf) {
                    leaves.push(leaf);
                }
            }
        }
        leaves
    } else {
        for field in &options.agent_fields {
            let found = field.starts_with("/data/")
                && data
                    .iter()
                    .any(|d| json!({ "data": d }).pointer(field).is_some());
            if !found {
                return Err(InitError::AgentField {
                    field: field.clone(),
                    example: leaves_of(&data[0], "/data")
                        .first()
                        .map_or("name", |l| l.trim_start_matches("/data/"))
                        .to_owned(),
                });
            }
        }
        options.agent_fields.clone()
    };
    if fields.is_empty()
        || data
            .iter()
            .all(|d| d.as_object().is_some_and(Map::is_empty))
    {
        return Err(InitError::NoMembers);
    }
    let checks = bindings(&data, &requests, &fields, &mut scaffold);
    for field in &fields {
        let schema = schema_of(&data_schema, field);
        let free = schema.is_some_and(|s| {
            s.get("type") == Some(&json!("string"))
                && s.get("enum").is_none()
                && s.get("format").is_none()
        });
        if free && !checks.iter().any(|(_, f, _)| f == field) {
            scaffold.review.push(format!(
                "{field} is free text handed to the agent: constrain it (`enum`, `pattern`, `format`) or keep it knowingly"
            ));
        }
        if schema.is_some_and(|s| s.get("format") == Some(&json!("date-time"))) {
            scaffold.review.push(format!(
                "{field} is a time: consider a `fresh` check (how old may the evidence be?)"
            ));
        }
    }
    let accepted: Vec<(String, Value, &Request)> = data
        .iter()
        .zip(&requests)
        .enumerate()
        .map(|(n, (d, r))| {
            let body = json!({"tool": options.tool, "request_id": r.request_id,
                              "outcome": "success", "data": d});
            (format!("sample_{n:02}"), body, r)
        })
        .chain(
            failures
                .iter()
                .zip(&failure_requests)
                .enumerate()
                .map(|(n, (f, r))| {
                    let mut body = f.clone();
                    body["tool"] = json!(options.tool);
                    body["request_id"] = json!(r.request_id);
                    (format!("failure_{n:02}"), body, r)
                }),
        )
        .collect();
    // The fixtures are written pretty-printed: the limit must hold them as written.
    let largest = accepted
        .iter()
        .map(|(_, body, _)| pretty(body).len())
        .fold(largest, usize::max);
    let max_bytes = (largest.max(1024) * 4).next_multiple_of(1024).max(4096) as u64;
    let max_bytes = max_bytes.min(MAX_BYTES_CEILING);
    let max_depth = (deepest + 4).min(MAX_DEPTH_CEILING);
    scaffold.inferred.push(format!(
        "limits: max_bytes {max_bytes} (4 × the largest sample as written, at least 4096), max_depth {max_depth} (the deepest sample + 4)"
    ));

    let limits = Limits {
        max_bytes,
        max_depth,
    };
    let mut data_schema = data_schema;
    let mut fresh: Vec<learn::FreshBounds> = Vec::new();
    let given = read_near_misses(&options.near_misses, &request)?;
    let accepted_bodies: Vec<(Vec<u8>, &Request)> = accepted
        .iter()
        .map(|(_, body, r)| (serde_json::to_vec(body).unwrap_or_default(), *r))
        .collect();
    let nows: Vec<_> = requests.iter().map(|r| r.now).collect();
    let trial = |schema: &Value, fresh: &[learn::FreshBounds]| {
        trial_guard(
            &options.tool,
            schema,
            limits,
            &fields,
            &checks,
            fresh,
            &data,
            &nows,
        )
    };
    let mut rejected_near_misses = Vec::new();
    for near in given {
        let guard = trial(&data_schema, &fresh)?;
        if !guard.admit(&near.request, &near.bytes).is_admitted() {
            rejected_near_misses.push(near);
            continue;
        }
        let ours = parse(&near.bytes, MAX_DEPTH_CEILING).ok().and_then(|v| {
            match v.get("outcome").and_then(Value::as_str) {
                Some("success") => v.get("data").cloned(),
                Some(_) => None,
                None => v.is_object().then_some(v),
            }
        });
        let learned = ours.and_then(|ours| {
            learn::candidates(&data, &nows, &ours, near.request.now, &data_schema)
                .into_iter()
                .find_map(|candidate| {
                    let (mut schema, mut bounds) = (data_schema.clone(), fresh.clone());
                    candidate.apply(&mut schema, &mut bounds);
                    let guard = trial(&schema, &bounds).ok()?;
                    let samples_kept = accepted_bodies
                        .iter()
                        .all(|(body, r)| guard.admit(r, body).is_admitted());
                    (samples_kept && !guard.admit(&near.request, &near.bytes).is_admitted())
                        .then_some((candidate, schema, bounds))
                })
        });
        match learned {
            Some((candidate, schema, bounds)) => {
                scaffold.inferred.push(format!(
                    "{}: learned from near miss {}",
                    candidate.describe(),
                    near.name
                ));
                data_schema = schema;
                fresh = bounds;
                rejected_near_misses.push(near);
            }
            None => scaffold.review.push(format!(
                "near miss {} is admitted and nothing learned from it rejects it (it was not \
                 written): tighten the contract by hand",
                near.name
            )),
        }
    }
    let fresh_checks = fresh_specs(&fresh, &data, &nows);

    let contract_dir = options.out.join("schemas").join(&options.tool);
    let corpus_dir = options.out.join("corpora").join(&options.tool);
    for dir in [&contract_dir, &corpus_dir] {
        if dir.exists() {
            return Err(InitError::Exists { path: dir.clone() });
        }
    }
    // Written into hidden folders beside the targets, moved into place only when whole:
    // a failure leaves nothing behind (no half contract for `check` to trip on). Each is
    // created exclusively under a random name (never through a file or link already
    // there) and removed when dropped unless moved into place.
    let stage = |dir: &Path| -> Result<tempfile::TempDir, InitError> {
        let parent = dir.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(write_error(parent))?;
        tempfile::Builder::new()
            .prefix(&format!(".{}.airlock-init-", options.tool))
            .tempdir_in(parent)
            .map_err(write_error(parent))
    };
    let (staged_contract, staged_corpus) = (stage(&contract_dir)?, stage(&corpus_dir)?);
    let (stage_contract, stage_corpus) = (
        staged_contract.path().to_path_buf(),
        staged_corpus.path().to_path_buf(),
    );
    let outcome = (|| -> Result<(), InitError> {
        let write = |path: &Path, bytes: &[u8]| -> Result<(), InitError> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(write_error(parent))?;
            }
            std::fs::write(path, bytes).map_err(write_error(path))
        };
        let schema = envelope(&options.tool, data_schema);
        write(&stage_contract.join("v1.schema.json"), &pretty(&schema))?;
        write(
            &stage_contract.join("contract.toml"),
            manifest(
                &options.tool,
                max_bytes,
                max_depth,
                &fields,
                &checks,
                &fresh_checks,
            )
            .as_bytes(),
        )?;
        write(
            &stage_corpus.join("request.json"),
            &pretty(&serde_json::to_value(&request).unwrap_or_default()),
        )?;
        for (name, body, own) in &accepted {
            write(
                &stage_corpus.join(format!("accepted/{name}.json")),
                &pretty(body),
            )?;
            if **own != request {
                write(
                    &stage_corpus.join(format!("accepted/{name}.request.json")),
                    &pretty(&serde_json::to_value(own).unwrap_or_default()),
                )?;
            }
            scaffold.accepted += 1;
        }
        for near in &rejected_near_misses {
            let stem = file_component(&near.name);
            write(
                &stage_corpus.join(format!("near_miss/{stem}.json")),
                &near.bytes,
            )?;
            if near.request != request {
                write(
                    &stage_corpus.join(format!("near_miss/{stem}.request.json")),
                    &pretty(&serde_json::to_value(&near.request).unwrap_or_default()),
                )?;
            }
            scaffold.near_misses += 1;
        }
        // Near misses: the adversary's deterministic variants of the samples that the new
        // contract rejects, a few per class.
        let contract = Contract::load(&stage_contract).map_err(InitError::Inferred)?;
        let corpus = Corpus::load(&stage_corpus)?;
        let guard = Guard::new(contract.clone());
        // Every sample must be admitted by the scaffold (a failure sample with an unknown
        // code, say, is not): else nothing is left behind.
        for fixture in &corpus.fixtures {
            let admission = guard.admit(&fixture.request, &fixture.bytes);
            if admission.is_admitted() != (fixture.expect == crate::corpus::Expect::Accept) {
                let source = data_paths
                    .iter()
                    .chain(&failure_paths)
                    .zip(&accepted)
                    .find(|(_, (name, _, _))| *name == fixture.name)
                    .map_or_else(|| PathBuf::from(&fixture.name), |(p, _)| p.to_path_buf());
                return Err(InitError::Unfit {
                    sample: source,
                    diagnostic: admission.diagnostic().cloned(),
                });
            }
        }
        let mut per_class: std::collections::BTreeMap<String, usize> = Default::default();
        let given_count = scaffold.near_misses;
        let cost: u64 = accepted
            .iter()
            .zip(&accepted_bodies)
            .map(|((_, body, _), (bytes, _))| (bytes.len() as u64).saturating_mul(values_in(body)))
            .fold(0, u64::saturating_add);
        let variants = if cost <= CATALOGUE_BUDGET {
            generate(&contract, &corpus, 0, 0)
        } else {
            scaffold.review.push(format!(
                "no near misses were taken from the adversary's variants: the samples are \
                 too large for them (size times values {cost}, more than {CATALOGUE_BUDGET}); \
                 pass small rejected responses with --near-miss, and run `airlock check`"
            ));
            Vec::new()
        };
        for case in variants {
            if scaffold.near_misses - given_count >= NEAR_MISS_MAX || case.class == "fixture" {
                continue;
            }
            let Upstream::Body(bytes) = &case.upstream else {
                continue;
            };
            let taken = per_class.entry(case.class.clone()).or_default();
            if *taken >= 2
                || bytes.len() > 64 * 1024
                || guard.admit(&case.request, bytes).is_admitted()
            {
                continue;
            }
            *taken += 1;
            let stem = file_component(&format!("{}_{}", case.class, scaffold.near_misses));
            write(&stage_corpus.join(format!("near_miss/{stem}.json")), bytes)?;
            let mut own = case.request.clone();
            own.tool = None;
            if own != request {
                write(
                    &stage_corpus.join(format!("near_miss/{stem}.request.json")),
                    &pretty(&serde_json::to_value(&own).unwrap_or_default()),
                )?;
            }
            scaffold.near_misses += 1;
        }
        Ok(())
    })();
    let outcome = outcome.and_then(|()| {
        std::fs::rename(&stage_contract, &contract_dir).map_err(write_error(&contract_dir))?;
        std::fs::rename(&stage_corpus, &corpus_dir).map_err(|source| {
            let _ = std::fs::remove_dir_all(&contract_dir);
            InitError::Write {
                path: corpus_dir.clone(),
                source,
            }
        })
    });
    // Dropping the staging folders removes whatever is left of them (nothing once moved).
    drop((staged_contract, staged_corpus));
    outcome?;
    scaffold.contract = contract_dir;
    scaffold.corpus = corpus_dir;
    Ok(scaffold)
}

/// How many values `value` holds, itself included.
fn values_in(value: &Value) -> u64 {
    let mut count = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        count += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => stack.extend(members.values()),
            _ => {}
        }
    }
    count
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
    text.push(b'\n');
    text
}

/// Binding checks: a string field equal, in every sample, to a string parameter
/// (`equals_param`) or held by an array parameter (`in_param`). (kind, field, param).
fn bindings(
    data: &[Value],
    requests: &[Request],
    fields: &[String],
    scaffold: &mut Scaffold,
) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    let Some(first) = requests.first() else {
        return out;
    };
    for field in fields {
        let pointer = field.trim_start_matches("/data");
        let values: Vec<&Value> = data.iter().filter_map(|d| d.pointer(pointer)).collect();
        if values.len() != data.len() || !values.iter().all(|v| v.is_string()) {
            continue;
        }
        for param in first.params.keys() {
            let given = |i: usize| requests[i].params.get(param);
            let kind = if values.iter().enumerate().all(|(i, v)| given(i) == Some(*v)) {
                "equals_param"
            } else if values.iter().enumerate().all(|(i, v)| {
                given(i)
                    .and_then(Value::as_array)
                    .is_some_and(|items| items.contains(v))
            }) {
                "in_param"
            } else {
                continue;
            };
            scaffold.inferred.push(format!(
                "{field}: {kind} {param} (every sample matches the request)"
            ));
            out.push((kind, field.clone(), param.clone()));
            break;
        }
    }
    out
}

/// The closed envelope with `data` as the success payload.
fn envelope(tool: &str, data: Value) -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("{tool} response, version 1 (scaffolded by airlock init: review it)"),
        "oneOf": [{"$ref": "#/$defs/success"}, {"$ref": "#/$defs/failure"}],
        "$defs": {
            "tool": {"const": tool},
            "request_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.]{7,63}$"},
            "success": {
                "type": "object",
                "additionalProperties": false,
                "required": ["tool", "request_id", "outcome", "data"],
                "properties": {
                    "tool": {"$ref": "#/$defs/tool"},
                    "request_id": {"$ref": "#/$defs/request_id"},
                    "outcome": {"const": "success"},
                    "data": {"$ref": "#/$defs/data"}
                }
            },
            "failure": {
                "type": "object",
                "additionalProperties": false,
                "required": ["tool", "request_id", "outcome", "error"],
                "properties": {
                    "tool": {"$ref": "#/$defs/tool"},
                    "request_id": {"$ref": "#/$defs/request_id"},
                    "outcome": {"const": "failure"},
                    "error": {"$ref": "#/$defs/error"}
                }
            },
            "error": {
                "type": "object",
                "additionalProperties": false,
                "required": ["code", "retryable"],
                "properties": {
                    "code": {"enum": ["NOT_FOUND", "UPSTREAM_UNAVAILABLE", "INVALID_RESPONSE"]},
                    "retryable": {"type": "boolean"}
                }
            },
            "data": data
        }
    })
}

fn manifest(
    tool: &str,
    max_bytes: u64,
    max_depth: usize,
    fields: &[String],
    checks: &[(&'static str, String, String)],
    fresh: &[(String, SignedDuration, SignedDuration)],
) -> String {
    // TOML strings, never Rust debug escapes (`\u{202e}` is not TOML): a member name may
    // hold any character a sample's JSON holds.
    let q = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let mut out = format!(
        "# Scaffolded by `airlock init` from sample responses: review every line.\n\
         tool = {}\nversion = 1\n\n[limits]\nmax_bytes = {max_bytes}\nmax_depth = {max_depth}\n\n\
         [agent]\nfields = [{}]\n",
        q(tool),
        fields.iter().map(|f| q(f)).collect::<Vec<_>>().join(", ")
    );
    for (kind, field, param) in checks {
        let _ = write!(
            out,
            "\n[[checks]]\nkind = {}\nfield = {}\nparam = {}\n",
            q(kind),
            q(field),
            q(param)
        );
    }
    for (field, max_age, max_skew) in fresh {
        let _ = write!(
            out,
            "\n[[checks]]\nkind = \"fresh\"\nfield = {}\nmax_age = {}\nmax_skew = {}\n",
            q(field),
            q(&duration_text(*max_age)),
            q(&duration_text(*max_skew))
        );
    }
    out.push_str(
        "\n[retry]\nmax_attempts = 3\ndeadline = \"10s\"\nretryable = [\"UPSTREAM_UNAVAILABLE\"]\n",
    );
    out
}

/// A near miss the user gave: its name, bytes and the request it answers.
struct NearMiss {
    name: String,
    bytes: Vec<u8>,
    request: Request,
}

/// The request a sample or near miss answers: `NAME.request.json` beside it, else `request`.
fn own_request(path: &Path, request: &Request) -> Result<Request, InitError> {
    let name = crate::corpus::fixture_name(path);
    let own = path.with_file_name(format!("{name}.request.json"));
    if own.is_file() {
        Ok(crate::corpus::read_request(&own)?)
    } else {
        Ok(request.clone())
    }
}

fn read_near_misses(paths: &[PathBuf], request: &Request) -> Result<Vec<NearMiss>, InitError> {
    let mut out = Vec::new();
    for path in paths {
        let name = crate::corpus::fixture_name(path);
        if name.ends_with(".request") {
            continue; // a request file given by a glob
        }
        let bytes = crate::corpus::read_bounded(
            path,
            MAX_BYTES_CEILING,
            "a near miss is a response, at most 64 MiB",
        )?;
        let request = own_request(path, request)?;
        out.push(NearMiss {
            name,
            bytes,
            request,
        });
    }
    Ok(out)
}

/// A guard for the scaffold as it stands (in memory): the envelope around `data_schema`,
/// the binding checks and the learned freshness windows.
#[allow(clippy::too_many_arguments)]
fn trial_guard(
    tool: &str,
    data_schema: &Value,
    limits: Limits,
    fields: &[String],
    checks: &[(&'static str, String, String)],
    fresh: &[learn::FreshBounds],
    data: &[Value],
    nows: &[Timestamp],
) -> Result<Guard, InitError> {
    let mut builder = Contract::builder(tool, envelope(tool, data_schema.clone())).limits(limits);
    for field in fields {
        builder = builder.agent_field(field.clone());
    }
    let pointer = |f: &str| {
        Pointer::parse(f).map_err(|reason| InitError::ScaffoldField {
            field: f.to_owned(),
            reason,
        })
    };
    for (kind, field, param) in checks {
        let (field, param) = (pointer(field)?, param.clone());
        builder = builder.check(if *kind == "equals_param" {
            CheckSpec::EqualsParam { field, param }
        } else {
            CheckSpec::InParam { field, param }
        });
    }
    for (field, max_age, max_skew) in fresh_specs(fresh, data, nows) {
        builder = builder.check(CheckSpec::Fresh {
            field: pointer(&field)?,
            max_age,
            max_skew,
        });
    }
    builder.build().map(Guard::new).map_err(InitError::Scaffold)
}

/// The learned windows with their unlearned side filled in: an age of whole hours past the
/// oldest sample (at least a day), a skew of whole minutes past the furthest ahead (at
/// least a minute).
fn fresh_specs(
    fresh: &[learn::FreshBounds],
    data: &[Value],
    nows: &[Timestamp],
) -> Vec<(String, SignedDuration, SignedDuration)> {
    fresh
        .iter()
        .map(|bounds| {
            let pointer = bounds.field.trim_start_matches("/data");
            let ages: Vec<SignedDuration> = data
                .iter()
                .zip(nows)
                .filter_map(|(d, now)| {
                    let time: Timestamp = d.pointer(pointer)?.as_str()?.parse().ok()?;
                    Some(now.duration_since(time))
                })
                .collect();
            let up = |d: SignedDuration, unit: i64, least: i64| {
                let secs = d.as_secs().max(0);
                SignedDuration::from_secs(((secs / unit) + 1).max(least) * unit)
            };
            let oldest = ages.iter().max().copied().unwrap_or_default();
            let ahead = ages.iter().min().map(|a| -*a).unwrap_or_default();
            (
                bounds.field.clone(),
                bounds.max_age.unwrap_or_else(|| up(oldest, 3600, 24)),
                bounds.max_skew.unwrap_or_else(|| up(ahead, 60, 1)),
            )
        })
        .collect()
}

/// A duration as contracts write it: `1h 5m`, `15m`, `45s`, `250ms`.
fn duration_text(duration: SignedDuration) -> String {
    let mut secs = duration.as_secs();
    let millis = duration.subsec_millis();
    let mut parts = Vec::new();
    for (unit, name) in [(3600, "h"), (60, "m"), (1, "s")] {
        if secs >= unit {
            parts.push(format!("{}{name}", secs / unit));
            secs %= unit;
        }
    }
    if millis > 0 {
        parts.push(format!("{millis}ms"));
    }
    if parts.is_empty() {
        "0s".to_owned()
    } else {
        parts.join(" ")
    }
}
