//! `airlock init`: a first contract from real sample responses. The envelope is the
//! closed Draft 2020-12 one of the shipped contracts; the `data` schema is inferred from
//! the samples (types, small value sets as `enum`, `format` where every sample has one,
//! bounds with headroom, `required` = present in every sample, every object closed);
//! binding checks are proposed where a value equals a request parameter; the samples
//! become accepted fixtures and the adversary's deterministic variants, each confirmed
//! rejected, the near misses. Near misses the user gives (`--near-miss`) teach what the
//! samples cannot show (`learn.rs`): each one the scaffold still admits names a bound, a
//! shape, a condition or a freshness window, kept only when the guard then rejects it and
//! still admits every sample. What was guessed is listed for review. `--vendor` and
//! `--lines` scaffold the other raw inputs (`vendor.rs`, `lines.rs`); near misses are
//! named after how they differ (`names.rs`).

mod contract;
mod error;
mod given;
mod infer;
mod learn;
mod lines;
mod names;
mod shape;
mod vendor;

use airlock_guard::{
    parse, Contract, Guard, Limits, Request, MAX_BYTES_CEILING, MAX_DEPTH_CEILING,
};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

use crate::adversary::generate;
use crate::cases::{file_component, Upstream};
use crate::corpus::Corpus;
use contract::{bindings, envelope, fresh_specs, manifest, request_id_pattern, trial_guard};
use given::{learn_from_near_misses, read_near_misses, Learning, NearMiss};
use infer::{depth, infer, leaves_of, schema_of};

/// What `airlock init` is given.
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The tool name (`[A-Za-z0-9_.-]{1,128}`).
    pub tool: String,
    /// Sample responses: envelopes (`{"tool", "request_id", "outcome", "data"}`) or the
    /// `data` objects alone; with [`InitInput::Vendor`] vendor bodies, with
    /// [`InitInput::Lines`] a command's outputs.
    pub samples: Vec<PathBuf>,
    /// The request the samples answer; default: `req.Sample0001`, no parameters, now.
    pub request: Option<PathBuf>,
    /// The agent fields; default: every leaf member of `data`.
    pub agent_fields: Vec<String>,
    /// The folder that receives `schemas/<tool>/` and `corpora/<tool>/`.
    pub out: PathBuf,
    /// Responses that must be rejected: each answers `NAME.request.json` beside it, else
    /// the request. Those the samples' scaffold admits are learned from (envelope
    /// contracts); all that end up rejected become near-miss fixtures.
    pub near_misses: Vec<PathBuf>,
    /// What the samples are, and so which contract is scaffolded.
    pub input: InitInput,
}

/// What `init`'s samples are: the kind of contract it scaffolds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum InitInput {
    /// Envelopes or `data` objects: an envelope contract.
    #[default]
    Envelope,
    /// A vendor's own response bodies (successes and error bodies): a `kind = "vendor"`
    /// contract with an open vendor schema, a mapping and failure rules.
    Vendor,
    /// A command's output (text, one `key=value` or `key: value` per line): a
    /// `kind = "lines"` contract with a line grammar and a mapping.
    Lines,
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
    check_tool_name(&options.tool)?;
    let request = match &options.request {
        Some(path) => crate::corpus::read_request(path)?,
        None => Request::new("req.Sample0001", airlock_guard::jiff::Timestamp::now()),
    };
    if options.samples.is_empty() {
        return Err(InitError::NoSamples);
    }
    let mut scaffold = Scaffold::default();
    match options.input {
        InitInput::Envelope => init_envelope(options, &request, &mut scaffold)?,
        InitInput::Vendor => vendor::init_vendor(options, &request, &mut scaffold)?,
        InitInput::Lines => lines::init_lines(options, &request, &mut scaffold)?,
    }
    Ok(scaffold)
}

/// Scaffold an envelope contract: the samples are envelopes or `data` objects.
fn init_envelope(
    options: &InitOptions,
    request: &Request,
    scaffold: &mut Scaffold,
) -> Result<(), InitError> {
    let samples = read_samples(options, request)?;
    if samples.data.is_empty() {
        return Err(InitError::NoSuccess);
    }
    scaffold.review.extend(samples.retagged.iter().cloned());
    let data = &samples.data;
    let data_schema = infer(data, "/data", scaffold);
    let fields = agent_fields(options, data)?;
    if fields.is_empty()
        || data
            .iter()
            .all(|d| d.as_object().is_some_and(Map::is_empty))
    {
        return Err(InitError::NoMembers);
    }
    let checks = bindings(data, &samples.requests, &fields, scaffold);
    review_fields(&data_schema, &fields, &checks, scaffold);
    let accepted = accepted_fixtures(&options.tool, &samples);
    let limits = limits_of(&accepted, &samples, scaffold);
    let given = read_near_misses(&options.tool, &options.near_misses, request, true)?;
    let accepted_bodies: Vec<(Vec<u8>, &Request)> = accepted
        .iter()
        .map(|(_, body, r)| (serde_json::to_vec(body).unwrap_or_default(), *r))
        .collect();
    let nows: Vec<_> = samples.requests.iter().map(|r| r.now).collect();
    let id_pattern = request_id_pattern(
        samples
            .requests
            .iter()
            .chain(&samples.failure_requests)
            .map(|r| r.request_id.as_str()),
    );
    let trial = |schema: &Value, fresh: &[learn::FreshBounds]| {
        trial_guard(
            &options.tool,
            (schema, &id_pattern),
            limits,
            &fields,
            &checks,
            fresh,
            data,
            &nows,
        )
    };
    let learned = learn_from_near_misses(
        given,
        data_schema,
        &Learning {
            data,
            nows: &nows,
            accepted_bodies: &accepted_bodies,
            trial: &trial,
        },
        scaffold,
    )?;
    let fresh_checks = fresh_specs(&learned.fresh, data, &nows);
    let manifest = manifest(&options.tool, "", limits, &fields, &checks, &fresh_checks);
    let schema = envelope(&options.tool, learned.data_schema, &id_pattern);
    let cost = accepted
        .iter()
        .zip(&accepted_bodies)
        .map(|((_, body, _), (bytes, _))| (bytes.len() as u64).saturating_mul(values_in(body)))
        .fold(0, u64::saturating_add);
    let sample_paths = samples.data_paths.iter().chain(&samples.failure_paths);
    let plan = Plan {
        files: vec![
            ("v1.schema.json", pretty(&schema)),
            ("contract.toml", manifest.into_bytes()),
        ],
        accepted: accepted
            .iter()
            .zip(sample_paths)
            .map(|((name, body, r), path)| Written {
                name: name.clone(),
                bytes: pretty(body),
                request: r,
                sample: path,
            })
            .collect(),
        rejected: learned.rejected,
        unlearned: Vec::new(),
        cost,
    };
    write_plan(options, request, &plan, scaffold)
}

/// What a scaffold writes: the contract folder's files, the accepted fixtures, the given
/// near misses known rejected and those still to be judged by the contract written (not
/// learned from: written when it rejects them, left for review when not), and what the
/// adversary's variants of the samples cost (their size times their values).
struct Plan<'a> {
    files: Vec<(&'static str, Vec<u8>)>,
    accepted: Vec<Written<'a>>,
    rejected: Vec<NearMiss>,
    unlearned: Vec<NearMiss>,
    cost: u64,
}

/// An accepted fixture to write: its name and bytes, its request, the sample it is.
struct Written<'a> {
    name: String,
    bytes: Vec<u8>,
    request: &'a Request,
    sample: &'a Path,
}

/// Write `plan` under `options.out` (staged, confirmed, moved into place whole).
fn write_plan(
    options: &InitOptions,
    request: &Request,
    plan: &Plan<'_>,
    scaffold: &mut Scaffold,
) -> Result<(), InitError> {
    let contract_dir = options.out.join("schemas").join(&options.tool);
    let corpus_dir = options.out.join("corpora").join(&options.tool);
    refuse_existing(&[&contract_dir, &corpus_dir])?;
    // Written into hidden folders beside the targets, moved into place only when whole:
    // a failure leaves nothing behind (no half contract for `check` to trip on). Each is
    // created exclusively under a random name (never through a file or link already
    // there) and removed when dropped unless moved into place.
    let (staged_contract, staged_corpus) = (
        stage(&options.tool, &contract_dir)?,
        stage(&options.tool, &corpus_dir)?,
    );
    let staging = Staging {
        contract: staged_contract.path(),
        corpus: staged_corpus.path(),
        request,
    };
    let outcome = fill_stage(&staging, plan, scaffold)
        .and_then(|()| place(&staging, &contract_dir, &corpus_dir));
    // Dropping the staging folders removes whatever is left of them (nothing once moved).
    drop((staged_contract, staged_corpus));
    outcome?;
    scaffold.contract = contract_dir;
    scaffold.corpus = corpus_dir;
    Ok(())
}

/// Init never overwrites a contract: none of `dirs` may exist.
fn refuse_existing(dirs: &[&PathBuf]) -> Result<(), InitError> {
    for dir in dirs {
        if dir.exists() {
            return Err(InitError::Exists {
                path: dir.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Fill the staging folders: the contract and fixtures written, every sample confirmed
/// admitted by the scaffold's guard, the given near misses not learned from judged, then
/// the adversary's near misses.
fn fill_stage(
    staging: &Staging<'_>,
    plan: &Plan<'_>,
    scaffold: &mut Scaffold,
) -> Result<(), InitError> {
    let mut names = write_fixtures(staging, plan, scaffold)?;
    let contract = Contract::load(staging.contract).map_err(InitError::Inferred)?;
    let guard = Guard::new(contract.clone());
    for near in &plan.unlearned {
        if guard.admit(&near.request, &near.bytes).is_admitted() {
            scaffold.review.push(format!(
                "near miss {} is admitted (it was not written): init learns from near misses \
                 for envelope contracts only; tighten the contract by hand",
                near.name
            ));
        } else {
            write_near_miss(staging, &mut names, &near.name, &near.bytes, &near.request)?;
            scaffold.near_misses += 1;
        }
    }
    let corpus = Corpus::load(staging.corpus)?;
    confirm_samples(&guard, &corpus, &plan.accepted)?;
    // Near misses: the adversary's deterministic variants of the samples that the new
    // contract rejects, a few per class.
    adversary_near_misses(
        staging, &contract, &corpus, &guard, plan.cost, &mut names, scaffold,
    )
}

/// Move the staged folders into place, the contract first (removed again when the corpus
/// cannot follow).
fn place(staging: &Staging<'_>, contract_dir: &Path, corpus_dir: &Path) -> Result<(), InitError> {
    std::fs::rename(staging.contract, contract_dir).map_err(write_error(contract_dir))?;
    std::fs::rename(staging.corpus, corpus_dir).map_err(|source| {
        let _ = std::fs::remove_dir_all(contract_dir);
        InitError::Write {
            path: corpus_dir.to_path_buf(),
            source,
        }
    })
}

/// The samples read: the successes' `data` objects and the failure envelopes, each with
/// its request and file, in the order given.
struct Samples<'a> {
    data: Vec<Value>,
    requests: Vec<Request>,
    data_paths: Vec<&'a Path>,
    failures: Vec<Value>,
    failure_requests: Vec<Request>,
    failure_paths: Vec<&'a Path>,
    /// Samples whose envelope names another tool, one review line each.
    retagged: Vec<String>,
    /// The largest sample in bytes, as read.
    largest: usize,
    /// The deepest sample's depth.
    deepest: usize,
}

/// A sample's kind: the success's data object or a failure envelope.
enum Sample {
    Data(Value),
    Failure(Value),
}

/// Whether `tool` can name a contract (its folder and fixtures).
fn check_tool_name(tool: &str) -> Result<(), InitError> {
    if !airlock_guard::is_tool_name(tool) {
        return Err(InitError::ToolName {
            tool: tool.to_owned(),
        });
    }
    Ok(())
}

/// Read every sample (request files a glob named are skipped: each is read beside its
/// sample), noting those that name another tool.
fn read_samples<'a>(options: &'a InitOptions, request: &Request) -> Result<Samples<'a>, InitError> {
    let mut samples = Samples {
        data: Vec::new(),
        requests: Vec::new(),
        data_paths: Vec::new(),
        failures: Vec::new(),
        failure_requests: Vec::new(),
        failure_paths: Vec::new(),
        retagged: Vec::new(),
        largest: 0,
        deepest: 1,
    };
    for sample in read_given(&options.samples, request, false, A_SAMPLE_RESPONSE) {
        let sample = sample?;
        samples.largest = samples.largest.max(sample.bytes.len());
        let value = sample.json()?;
        let (path, own) = (sample.path, sample.request);
        samples.deepest = samples.deepest.max(depth(&value));
        if let Some(other) = value
            .get("tool")
            .and_then(Value::as_str)
            .filter(|t| *t != options.tool)
        {
            samples.retagged.push(format!(
                "{}: its envelope names tool {other:?}; its fixture names {:?}",
                path.display(),
                options.tool
            ));
        }
        match sample_kind(path, value)? {
            Sample::Data(data) => {
                samples.data.push(data);
                samples.data_paths.push(path);
                samples.requests.push(own);
            }
            Sample::Failure(failure) => {
                samples.failures.push(failure);
                samples.failure_paths.push(path);
                samples.failure_requests.push(own);
            }
        }
    }
    Ok(samples)
}

/// What a sample is: an envelope's outcome decides, and an object without one is the
/// `data` object alone.
fn sample_kind(path: &Path, value: Value) -> Result<Sample, InitError> {
    match value.get("outcome").and_then(Value::as_str) {
        Some("success") => match value.get("data") {
            Some(d @ Value::Object(_)) => Ok(Sample::Data(d.clone())),
            _ => Err(InitError::NoData {
                path: path.to_path_buf(),
            }),
        },
        Some("failure") => Ok(Sample::Failure(value)),
        _ if value.is_object() => Ok(Sample::Data(value)),
        _ => Err(InitError::NotAnObject {
            path: path.to_path_buf(),
        }),
    }
}

/// The agent fields: those given, each a member of some sample's data, else every leaf
/// of the samples' data in first-seen order.
fn agent_fields(options: &InitOptions, data: &[Value]) -> Result<Vec<String>, InitError> {
    if options.agent_fields.is_empty() {
        let mut leaves = Vec::new();
        for d in data {
            for leaf in leaves_of(d, "/data") {
                if !leaves.contains(&leaf) {
                    leaves.push(leaf);
                }
            }
        }
        return Ok(leaves);
    }
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
    Ok(options.agent_fields.clone())
}

/// Review lines for agent fields: free text without a binding check, times without a
/// freshness check, numbers without an upper bound.
fn review_fields(
    data_schema: &Value,
    fields: &[String],
    checks: &[(&'static str, String, String)],
    scaffold: &mut Scaffold,
) {
    for field in fields {
        let schema = schema_of(data_schema, field);
        let free = schema.is_some_and(|s| {
            s.get("type") == Some(&json!("string"))
                && s.get("enum").is_none()
                && s.get("format").is_none()
                && s.get("pattern").is_none()
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
        let bound = checks.iter().any(|(_, f, _)| f == field);
        let number = schema.is_some_and(|s| {
            matches!(
                s.get("type").and_then(Value::as_str),
                Some("integer" | "number")
            )
        });
        if number && !bound && schema.is_some_and(|s| s.get("maximum").is_none()) {
            scaffold.review.push(format!(
                "{field} is a number with no upper bound: give it a `maximum` (what value would be absurd?)"
            ));
        }
    }
}

/// An accepted fixture: its name, its envelope, its request.
type Accepted<'r> = (String, Value, &'r Request);

/// The accepted fixtures: each success wrapped in the tool's envelope (`sample_NN`), then
/// each failure retagged with the tool and its request id (`failure_NN`).
fn accepted_fixtures<'r>(tool: &str, samples: &'r Samples<'_>) -> Vec<Accepted<'r>> {
    samples
        .data
        .iter()
        .zip(&samples.requests)
        .enumerate()
        .map(|(n, (d, r))| {
            let body = json!({"tool": tool, "request_id": r.request_id,
                              "outcome": "success", "data": d});
            (format!("sample_{n:02}"), body, r)
        })
        .chain(
            samples
                .failures
                .iter()
                .zip(&samples.failure_requests)
                .enumerate()
                .map(|(n, (f, r))| {
                    let mut body = f.clone();
                    body["tool"] = json!(tool);
                    body["request_id"] = json!(r.request_id);
                    (format!("failure_{n:02}"), body, r)
                }),
        )
        .collect()
}

/// The limits: 4 × the largest sample as written (pretty-printed fixtures must fit), at
/// least 4096; the deepest sample + 4; both under the ceilings.
fn limits_of(accepted: &[Accepted<'_>], samples: &Samples<'_>, scaffold: &mut Scaffold) -> Limits {
    // The fixtures are written pretty-printed: the limit must hold them as written.
    let largest = accepted
        .iter()
        .map(|(_, body, _)| pretty(body).len())
        .fold(samples.largest, usize::max);
    limits_for(largest, samples.deepest, scaffold)
}

/// The limits for samples of `largest` bytes as written and `deepest` levels: 4 × the
/// largest, at least 4096; the deepest + 4; both under the ceilings.
fn limits_for(largest: usize, deepest: usize, scaffold: &mut Scaffold) -> Limits {
    let max_bytes = (largest.max(1024) * 4).next_multiple_of(1024).max(4096) as u64;
    let max_bytes = max_bytes.min(MAX_BYTES_CEILING);
    let max_depth = (deepest + 4).min(MAX_DEPTH_CEILING);
    scaffold.inferred.push(format!(
        "limits: max_bytes {max_bytes} (4 × the largest sample as written, at least 4096), max_depth {max_depth} (the deepest sample + 4)"
    ));
    Limits {
        max_bytes,
        max_depth,
    }
}

/// A hidden staging folder beside `dir`, created exclusively under a random name.
fn stage(tool: &str, dir: &Path) -> Result<tempfile::TempDir, InitError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(write_error(parent))?;
    tempfile::Builder::new()
        .prefix(&format!(".{tool}.airlock-init-"))
        .tempdir_in(parent)
        .map_err(write_error(parent))
}

/// The staging folders and the request fixtures answer unless they carry their own.
struct Staging<'a> {
    contract: &'a Path,
    corpus: &'a Path,
    request: &'a Request,
}

/// Write a file, its folder first.
fn write_staged(path: &Path, bytes: &[u8]) -> Result<(), InitError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(write_error(parent))?;
    }
    std::fs::write(path, bytes).map_err(write_error(path))
}

/// Write the contract's files and the corpus (request, accepted fixtures, rejected given
/// near misses), each fixture's own request beside it when it differs; the near-miss
/// names taken.
fn write_fixtures(
    staging: &Staging<'_>,
    plan: &Plan<'_>,
    scaffold: &mut Scaffold,
) -> Result<names::Names, InitError> {
    let (stage_contract, stage_corpus, request) =
        (staging.contract, staging.corpus, staging.request);
    for (name, bytes) in &plan.files {
        write_staged(&stage_contract.join(name), bytes)?;
    }
    write_staged(
        &stage_corpus.join("request.json"),
        &pretty(&serde_json::to_value(request).unwrap_or_default()),
    )?;
    for fixture in &plan.accepted {
        let name = &fixture.name;
        write_staged(
            &stage_corpus.join(format!("accepted/{name}.json")),
            &fixture.bytes,
        )?;
        if *fixture.request != *request {
            write_staged(
                &stage_corpus.join(format!("accepted/{name}.request.json")),
                &pretty(&serde_json::to_value(fixture.request).unwrap_or_default()),
            )?;
        }
        scaffold.accepted += 1;
    }
    let mut names = names::Names::default();
    for near in &plan.rejected {
        write_near_miss(staging, &mut names, &near.name, &near.bytes, &near.request)?;
        scaffold.near_misses += 1;
    }
    Ok(names)
}

/// Write a near miss under a name not yet taken (`NAME-2`, `NAME-3` on a clash), its
/// request beside it when it is not the corpus's.
fn write_near_miss(
    staging: &Staging<'_>,
    names: &mut names::Names,
    name: &str,
    bytes: &[u8],
    own: &Request,
) -> Result<(), InitError> {
    let stem = names.take(&file_component(name));
    write_staged(
        &staging.corpus.join(format!("near_miss/{stem}.json")),
        bytes,
    )?;
    let mut own = own.clone();
    own.tool = None;
    if own != *staging.request {
        write_staged(
            &staging
                .corpus
                .join(format!("near_miss/{stem}.request.json")),
            &pretty(&serde_json::to_value(&own).unwrap_or_default()),
        )?;
    }
    Ok(())
}

/// Every sample must be admitted by the scaffold (a failure sample with an unknown code,
/// say, is not): else nothing is left behind, and the error names the sample's file.
fn confirm_samples(
    guard: &Guard,
    corpus: &Corpus,
    accepted: &[Written<'_>],
) -> Result<(), InitError> {
    for fixture in &corpus.fixtures {
        let admission = guard.admit(&fixture.request, &fixture.bytes);
        if admission.is_admitted() != (fixture.expect == crate::corpus::Expect::Accept) {
            let sample = accepted
                .iter()
                .find(|w| w.name == fixture.name)
                .map_or_else(|| PathBuf::from(&fixture.name), |w| w.sample.to_path_buf());
            return Err(InitError::Unfit {
                sample,
                diagnostic: admission.diagnostic().cloned(),
            });
        }
    }
    Ok(())
}

/// Near misses from the adversary's deterministic variants the guard rejects, each named
/// after how it differs ([`names::near_miss_name`]): at most two per class and
/// [`NEAR_MISS_MAX`] in all, bodies up to 64 KiB; none when the samples cost more than
/// [`CATALOGUE_BUDGET`] (left for review).
fn adversary_near_misses(
    staging: &Staging<'_>,
    contract: &Contract,
    corpus: &Corpus,
    guard: &Guard,
    cost: u64,
    names: &mut names::Names,
    scaffold: &mut Scaffold,
) -> Result<(), InitError> {
    let mut per_class: std::collections::BTreeMap<String, usize> = Default::default();
    let given_count = scaffold.near_misses;
    let variants = if cost <= CATALOGUE_BUDGET {
        generate(contract, corpus, 0, 0)
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
        if *taken >= 2 || bytes.len() > 64 * 1024 || guard.admit(&case.request, bytes).is_admitted()
        {
            continue;
        }
        *taken += 1;
        let name = names::near_miss_name(&case);
        write_near_miss(staging, names, &name, bytes, &case.request)?;
        scaffold.near_misses += 1;
    }
    Ok(())
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

/// One file a user gave (a sample or a near miss): its path, its fixture name, the request
/// it answers and its bytes.
struct Given<'a> {
    path: &'a PathBuf,
    name: String,
    request: Request,
    bytes: Vec<u8>,
}

impl Given<'_> {
    /// The file as strict JSON (duplicate members refused, nesting bounded).
    fn json(&self) -> Result<Value, InitError> {
        parse(&self.bytes, MAX_DEPTH_CEILING).map_err(|error| InitError::NotJson {
            path: self.path.clone(),
            error,
        })
    }
}

/// What a sample file must be, for the error when it is larger.
const A_SAMPLE_RESPONSE: &str = "a sample is a response, at most 64 MiB";

/// Read each of `paths` in turn, at most 64 MiB (`what` says what the file is, for the
/// error), with its own request (`NAME.request.json` beside it, else `request`). Request
/// files a glob named are skipped: each is read beside its sample. With `raw`, the name
/// drops any extension (a command's output `main.txt` is `main`), else only `.json`.
fn read_given<'a, 'r>(
    paths: &'a [PathBuf],
    request: &'r Request,
    raw: bool,
    what: &'static str,
) -> impl Iterator<Item = Result<Given<'a>, InitError>> + use<'a, 'r> {
    paths
        .iter()
        .filter(|path| !crate::corpus::fixture_name(path).ends_with(".request"))
        .map(move |path| {
            let name = if raw {
                raw_name(path)
            } else {
                crate::corpus::fixture_name(path)
            };
            let request = own_request_as(path, &name, request)?;
            let bytes = crate::corpus::read_bounded(path, MAX_BYTES_CEILING, what)?;
            Ok(Given {
                path,
                name,
                request,
                bytes,
            })
        })
}

/// The name of a raw input's file (a command's output, a vendor body): without `.json`,
/// or without its other extension (`main.txt` → `main`).
fn raw_name(path: &Path) -> String {
    match (path.extension(), path.file_stem()) {
        (Some(extension), Some(stem)) if extension != "json" => stem.to_string_lossy().into_owned(),
        _ => crate::corpus::fixture_name(path),
    }
}

/// The request the file at `path` named `name` answers: `name.request.json` beside it,
/// else `request`.
fn own_request_as(path: &Path, name: &str, request: &Request) -> Result<Request, InitError> {
    let own = path.with_file_name(format!("{name}.request.json"));
    if own.is_file() {
        Ok(crate::corpus::read_request(&own)?)
    } else {
        Ok(request.clone())
    }
}
