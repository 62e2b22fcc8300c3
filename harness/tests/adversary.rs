//! The adversary's catalogue over the shipped contracts: every class is produced, and
//! every case has the property its class states (checked on the raw bytes, with the
//! strict parser, or with the reference guard); the guard passes clean on all of it.

use airlock_guard::{parse, CheckSpec, ErrorCode, Guard, Stage, STRUCTURED_CONTENT};
use airlock_harness::adapter::GuardAdapter;
use airlock_harness::adversary::{applies, generate, instance_source, schemas_at, CLASSES};
use airlock_harness::cases::{Case, Upstream};
use airlock_harness::check::{Check, Subject};
use airlock_harness::corpus::Corpus;
use serde_json::Value;
use std::collections::BTreeSet;

use crate::util::{contract_dir, TOOLS};

/// The seed and random case count every test here generates with.
pub(crate) const SEED: u64 = 3;
pub(crate) const RANDOM: usize = 100;

pub(crate) struct Catalogue {
    pub(crate) guard: Guard,
    pub(crate) corpus: Corpus,
    pub(crate) cases: Vec<Case>,
}

pub(crate) fn catalogue(tool: &str) -> Catalogue {
    let subject = Subject::load(&contract_dir(tool)).unwrap();
    let cases = generate(subject.guard.contract(), &subject.corpus, SEED, RANDOM);
    Catalogue {
        guard: subject.guard,
        corpus: subject.corpus,
        cases,
    }
}

/// Every shipped contract's catalogue.
pub(crate) fn catalogues() -> Vec<(&'static str, Catalogue)> {
    TOOLS.iter().map(|t| (*t, catalogue(t))).collect()
}

/// The catalogues of the shipped contracts whose bodies are JSON (a command's output is
/// text: the JSON classes do not run on it, its lines-* classes do).
pub(crate) fn json_catalogues() -> Vec<(&'static str, Catalogue)> {
    catalogues()
        .into_iter()
        .filter(|(_, c)| c.kind() != "lines")
        .collect()
}

impl Catalogue {
    /// Cases of `class` with a body.
    pub(crate) fn bodies<'a>(
        &'a self,
        class: &'a str,
    ) -> impl Iterator<Item = (&'a Case, &'a [u8])> {
        self.cases
            .iter()
            .filter(move |c| c.class == class)
            .filter_map(|c| match &c.upstream {
                Upstream::Body(bytes) => Some((c, bytes.as_slice())),
                Upstream::Transport(_) => None,
            })
    }

    /// The bytes of the accepted fixture (or generated instance) a case was derived from.
    pub(crate) fn origin_bytes(&self, case: &Case) -> &[u8] {
        let name = case.origin.as_deref().unwrap();
        if let Some(fixture) = self.corpus.fixtures.iter().find(|f| f.name == name) {
            return &fixture.bytes;
        }
        let base = self
            .cases
            .iter()
            .find(|c| c.class == "generated" && c.origin.as_deref() == Some(name))
            .unwrap();
        let Upstream::Body(bytes) = &base.upstream else {
            unreachable!()
        };
        bytes
    }

    /// The parsed accepted fixture a case was derived from.
    pub(crate) fn origin(&self, case: &Case) -> Value {
        let name = case.origin.as_deref().unwrap();
        if let Some(fixture) = self.corpus.fixtures.iter().find(|f| f.name == name) {
            return parse(&fixture.bytes, usize::MAX).unwrap();
        }
        // An instance generated from the schema: its own `generated` case holds it.
        let base = self
            .cases
            .iter()
            .find(|c| c.class == "generated" && c.origin.as_deref() == Some(name))
            .unwrap();
        let Upstream::Body(bytes) = &base.upstream else {
            unreachable!()
        };
        parse(bytes, usize::MAX).unwrap()
    }

    pub(crate) fn max_depth(&self) -> usize {
        self.guard.contract().limits().max_depth
    }

    pub(crate) fn schema(&self) -> &Value {
        self.guard.contract().schema().document()
    }

    /// The contract's input kind.
    pub(crate) fn kind(&self) -> &'static str {
        self.guard.contract().input().as_str()
    }

    /// Whether the contract is an MCP tool contract (its bodies JSON-RPC messages).
    pub(crate) fn is_mcp(&self) -> bool {
        self.guard.contract().input().mcp().is_some()
    }

    /// The schemas that apply at a case's location (inside structuredContent for an MCP
    /// tool).
    pub(crate) fn schema_at(&self, location: &str) -> Vec<&Value> {
        schemas_at(self.guard.contract(), self.judged_location(location))
    }

    /// A case's location in the value the schema judges.
    pub(crate) fn judged_location<'l>(&self, location: &'l str) -> &'l str {
        if self.is_mcp() {
            location
                .strip_prefix(STRUCTURED_CONTENT)
                .unwrap_or(location)
        } else {
            location
        }
    }

    /// The value the schema judges in a parsed body: itself, or an MCP message's
    /// structuredContent.
    pub(crate) fn judged<'v>(&self, body: &'v Value) -> &'v Value {
        if self.is_mcp() {
            body.pointer(STRUCTURED_CONTENT).unwrap()
        } else {
            body
        }
    }
}

/// The input kind of the shipped contract `tool` (`envelope`, `mcp`, `vendor`, `lines`).
pub(crate) fn report_kind(tool: &str) -> &'static str {
    airlock_guard::Contract::load(contract_dir(tool))
        .unwrap()
        .input()
        .as_str()
}

/// The part of a case id after `#`.
pub(crate) fn suffix(case: &Case) -> &str {
    case.id.split_once('#').map_or("", |(_, s)| s)
}

/// The last reference token of a JSON pointer, unescaped.
pub(crate) fn member_name(pointer: &str) -> String {
    pointer
        .rsplit('/')
        .next()
        .unwrap()
        .replace("~1", "/")
        .replace("~0", "~")
}

/// The string at the case's location in its (parseable) body.
pub(crate) fn string_at(case: &Case, body: &[u8]) -> String {
    let value = parse(body, usize::MAX).unwrap_or_else(|e| panic!("{}: {e}", case.id));
    value
        .pointer(&case.location)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{}: no string at {}", case.id, case.location))
        .to_owned()
}

#[test]
fn every_class_of_the_catalogue_is_generated_for_some_shipped_contract_and_no_other() {
    let listed: BTreeSet<&str> = CLASSES.iter().map(|(name, _)| *name).collect();
    assert_eq!(listed.len(), CLASSES.len(), "a class is listed twice");
    let mut seen = BTreeSet::new();
    for (tool, catalogue) in catalogues() {
        for case in &catalogue.cases {
            assert!(
                listed.contains(case.class.as_str()),
                "{tool}: {} has an unlisted class",
                case.id
            );
            seen.insert(case.class.clone());
        }
    }
    // No shipped contract has an array; array_edge is checked on the bench contract below.
    let missing: Vec<_> = listed
        .iter()
        .filter(|c| !seen.contains(**c) && **c != "array_edge")
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

#[test]
fn arrays_grow_one_past_max_items_and_far_past_the_byte_limit() {
    let guard = Guard::new(
        airlock_guard::Contract::load(crate::util::root().join("benches/contracts/bulk_status"))
            .unwrap(),
    );
    let contract = guard.contract();
    let request =
        airlock_guard::Request::new("req.BenchRun1", "2026-12-02T10:00:00Z".parse().unwrap())
            .param("batch_id", "batch_bench");
    let base = serde_json::json!({"tool": "bulk_status", "request_id": "req.BenchRun1", "outcome": "success",
        "data": {"batch_id": "batch_bench", "total": 1, "items": [{"id": "item_1", "state": "done", "score": 0.5, "observed_at": "2026-12-02T09:00:00Z"}]}});
    assert!(guard
        .admit(&request, base.to_string().as_bytes())
        .is_admitted());
    let dir = tempfile::tempdir().unwrap();
    for sub in ["accepted", "near_miss"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    std::fs::write(
        dir.path().join("request.json"),
        serde_json::to_vec(&request).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.path().join("accepted/one_item.json"), base.to_string()).unwrap();
    let corpus = Corpus::load(dir.path()).unwrap();
    let cases: Vec<Case> = generate(contract, &corpus, 0, 0)
        .into_iter()
        .filter(|c| c.class == "array_edge" && c.origin.as_deref() == Some("one_item"))
        .collect();
    let suffixes: BTreeSet<&str> = cases.iter().map(suffix).collect();
    assert_eq!(
        suffixes,
        BTreeSet::from(["very_large"]),
        "maxItems 100000 is past what one_past_max_items builds"
    );
    // The same schema with maxItems 3: one past it is 4 items, otherwise valid.
    let mut schema = contract.schema().document().clone();
    schema["$defs"]["success"]["properties"]["data"]["properties"]["items"]["maxItems"] =
        serde_json::json!(3);
    let small = airlock_guard::Contract::builder("bulk_status", schema)
        .limits(contract.limits())
        .build()
        .unwrap();
    let one_past: Vec<Case> = generate(&small, &corpus, 0, 0)
        .into_iter()
        .filter(|c| c.class == "array_edge" && suffix(c) == "one_past_max_items")
        .collect();
    assert_eq!(one_past.len(), 1);
    let Upstream::Body(bytes) = &one_past[0].upstream else {
        unreachable!()
    };
    let grown: Value = serde_json::from_slice(bytes).unwrap();
    assert_eq!(grown["data"]["items"].as_array().unwrap().len(), 4);
    let admission = Guard::new(small).admit(&one_past[0].request, bytes);
    assert_eq!(
        admission.diagnostic().unwrap().causes()[0].keyword(),
        "maxItems"
    );
    for case in &cases {
        let Upstream::Body(bytes) = &case.upstream else {
            unreachable!()
        };
        assert!(
            bytes.len() > 2 * 4096,
            "{} stays within the byte limit",
            case.id
        );
        assert!(!guard.admit(&case.request, bytes).is_admitted());
    }
}

#[test]
fn case_ids_are_unique_and_the_same_seed_gives_the_same_cases() {
    for (tool, catalogue) in catalogues() {
        let ids: BTreeSet<&str> = catalogue.cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), catalogue.cases.len(), "{tool}: repeated ids");
        let again = generate(catalogue.guard.contract(), &catalogue.corpus, SEED, RANDOM);
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            serde_json::to_string(&catalogue.cases).unwrap(),
            "{tool}"
        );
    }
}

#[test]
fn the_deterministic_catalogue_of_every_shipped_contract_stays_under_twelve_thousand_cases() {
    // It grows with accepted fixtures times members; the largest shipped contract
    // (package_vulnerabilities, 11 accepted fixtures, numeric members) has about 10 100.
    for (tool, catalogue) in catalogues() {
        let n = catalogue.cases.len() - RANDOM;
        assert!(n < 12_000, "{tool}: {n} deterministic cases");
    }
}

/// The keywords of a diagnostic and all its causes.
pub(crate) fn keywords(diagnostic: &airlock_guard::Diagnostic) -> Vec<String> {
    let mut out = vec![diagnostic.keyword().to_owned()];
    for cause in diagnostic.causes() {
        out.extend(keywords(cause));
    }
    out
}

#[test]
fn upstream_failures_are_six_failure_envelopes_answering_the_default_request() {
    // An MCP message is no envelope: its failures are mcp-is-error and mcp-jsonrpc-error.
    // Only an envelope upstream writes failure envelopes.
    for (tool, catalogue) in catalogues()
        .into_iter()
        .filter(|(_, c)| c.kind() == "envelope")
    {
        let mut pairs = BTreeSet::new();
        for (case, body) in catalogue.bodies("upstream_failure") {
            assert!(case.origin.is_none(), "{}", case.id);
            let mut default = catalogue.corpus.request.clone();
            default.tool = Some(tool.to_owned());
            assert_eq!(
                case.request, default,
                "the default request, naming its tool"
            );
            let envelope = parse(body, catalogue.max_depth()).unwrap();
            assert_eq!(envelope["tool"], tool);
            assert_eq!(
                envelope["request_id"],
                catalogue.corpus.request.request_id.as_str()
            );
            assert_eq!(envelope["outcome"], "failure");
            let code = ErrorCode::from_wire(envelope["error"]["code"].as_str().unwrap()).unwrap();
            let claimed = envelope["error"]["retryable"].as_bool().unwrap();
            pairs.insert((code.as_str(), claimed));
            let agent = catalogue.guard.admit(&case.request, body).into_parts().0;
            let policy = catalogue.guard.contract().retry().is_retryable(code);
            assert_eq!(agent.error(), Some((code, policy)), "{tool}: {}", case.id);
        }
        assert_eq!(pairs.len(), 6, "{tool}: {pairs:?}");
    }
}

#[test]
fn the_guard_in_process_passes_clean_on_the_whole_catalogue_of_each_shipped_contract() {
    for tool in TOOLS {
        let guard = Subject::load(&contract_dir(tool)).unwrap().guard;
        let report = Check::contract(contract_dir(tool))
            .seed(SEED)
            .random_cases(RANDOM)
            .run(&mut GuardAdapter::new([guard]))
            .unwrap();
        report.assert_clean();
        let contract = &report.contracts[0];
        let kind = report_kind(tool);
        for (class, _) in CLASSES {
            if contract.classes.contains_key(*class) {
                continue;
            }
            // The kind's own classes run on its contracts only, the envelope-only ones on
            // envelopes only, a command's output gets its lines-* classes and few others.
            if !applies(class, kind) {
                continue;
            }
            // A vendor document's schema has no enum here (the contract's `state` enum is
            // filled through a table: vendor-coerce varies it).
            if kind == "vendor" && *class == "enum_neighbour" {
                continue;
            }
            // Classes a contract has nothing for (no date-time member, no array, no
            // pattern) are absent.
            assert!(
                [
                    "pattern_neighbour",
                    "date_time_neighbour",
                    "freshness",
                    "array_edge",
                    "boundary_valid"
                ]
                .contains(class),
                "{tool}: no {class} cases"
            );
        }
    }
}

/// One line per deterministic case: id, then the reference's stage and diagnostic (or the
/// agent value when admitted). Snapshotted per contract and class, so a schema edit that
/// changes why something is rejected — or admits it — shows in review.
fn diagnostic_lines(catalogue: &Catalogue, class: &str) -> String {
    let mut out = String::new();
    for case in catalogue.cases.iter().filter(|c| c.class == class) {
        let admission = match &case.upstream {
            Upstream::Body(bytes) => catalogue.guard.admit(&case.request, bytes),
            Upstream::Transport(e) => catalogue.guard.admit_transport_error(&case.request, *e),
        };
        let verdict = match admission.diagnostic() {
            Some(d) if admission.is_admitted() => format!("{:?}: {d}", admission.audit().verdict()),
            Some(d) => {
                let cause = d
                    .causes()
                    .first()
                    .map(|c| format!(" | because {c}"))
                    .unwrap_or_default();
                format!("rejected: {d}{cause}")
            }
            None => format!(
                "{:?}: {}",
                admission.audit().verdict(),
                admission.agent().to_json_string()
            ),
        };
        out.push_str(&format!("{}\n    {verdict}\n", case.id));
    }
    out
}

#[test]
fn the_reference_diagnostic_of_every_deterministic_case_is_snapshotted_per_contract_and_class() {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(crate::util::root().join("snapshots/variants"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for tool in TOOLS {
            let subject = Subject::load(&contract_dir(tool)).unwrap();
            let cases = generate(subject.guard.contract(), &subject.corpus, 0, 0);
            let catalogue = Catalogue {
                guard: subject.guard,
                corpus: subject.corpus,
                cases,
            };
            let classes: BTreeSet<&str> =
                catalogue.cases.iter().map(|c| c.class.as_str()).collect();
            for class in classes {
                insta::assert_snapshot!(
                    format!("{tool}__{class}"),
                    diagnostic_lines(&catalogue, class)
                );
            }
        }
    });
}

#[test]
fn instances_generated_from_the_schema_are_admitted_deterministic_and_cover_both_envelopes() {
    for tool in TOOLS {
        let subject = Subject::load(&contract_dir(tool)).unwrap();
        let contract = subject.guard.contract();
        let request = &subject.corpus.request;
        let instances = airlock_harness::adversary::valid_instances(contract, request, 1, 12);
        assert!(
            instances.len() >= 6,
            "{tool}: only {} instances",
            instances.len()
        );
        let kind = contract.input().as_str();
        for instance in &instances {
            // An MCP tool's instance is its structuredContent, judged inside a response;
            // a vendor contract's and a command's are written back as the mapping's source.
            let body = match instance_source(contract, request, instance).unwrap() {
                Value::String(text) if kind == "lines" => text.into_bytes(),
                body => body.to_string().into_bytes(),
            };
            let admission = subject.guard.admit(request, &body);
            assert!(
                admission.is_admitted(),
                "{tool}: {instance} ({:?})",
                admission.diagnostic()
            );
        }
        let outcomes: BTreeSet<&str> = instances
            .iter()
            .filter_map(|i| i["outcome"].as_str())
            .collect();
        // The guard builds a vendor contract's or a command's envelope: always a success.
        if kind == "envelope" {
            assert_eq!(outcomes, BTreeSet::from(["success", "failure"]), "{tool}");
        }
        assert_eq!(
            instances,
            airlock_harness::adversary::valid_instances(contract, request, 1, 12)
        );
        assert_ne!(
            instances,
            airlock_harness::adversary::valid_instances(contract, request, 2, 12)
        );
    }
}

#[test]
fn every_re_encoding_is_admitted_with_exactly_its_origins_agent_value() {
    for (tool, catalogue) in json_catalogues() {
        let mut n = 0;
        for (case, body) in catalogue.bodies("reencoding") {
            let origin = serde_json::to_vec(&catalogue.origin(case)).unwrap();
            let expected = catalogue.guard.admit(&case.request, &origin);
            let actual = catalogue.guard.admit(&case.request, body);
            assert!(actual.is_admitted(), "{tool}: {}", case.id);
            assert_ne!(body, origin.as_slice(), "{tool}: {} changes bytes", case.id);
            // Equal as values: a nested agent object keeps the upstream's member order.
            assert_eq!(
                actual.agent().to_json(),
                expected.agent().to_json(),
                "{tool}: {}",
                case.id
            );
            // The same value to any reader, not only to the guard (an MCP message's text
            // block is written as its structuredContent is: compared by what it says).
            let (body, origin) = (
                serde_json::from_slice::<Value>(body).unwrap(),
                serde_json::from_slice::<Value>(&origin).unwrap(),
            );
            assert_eq!(catalogue.judged(&body), catalogue.judged(&origin));
            if let Some(text) = body.pointer("/result/content/0/text") {
                let said: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
                assert_eq!(&said, catalogue.judged(&body), "{tool}: {}", case.id);
            }
            n += 1;
        }
        assert!(n >= 8, "{tool}: {n} re-encodings");
    }
}

#[test]
fn a_bound_neighbour_changes_the_request_parameter_and_the_response_alike() {
    let (mut n, mut vendor) = (0, 0);
    for (tool, catalogue) in catalogues() {
        for case in catalogue
            .cases
            .iter()
            .filter(|c| suffix(c).ends_with("+bound_request"))
        {
            let Upstream::Body(body) = &case.upstream else {
                unreachable!()
            };
            let value = parse(body, usize::MAX).unwrap();
            let location = catalogue.judged_location(&case.location);
            let field = catalogue.judged(&value).pointer(location).unwrap();
            let contract = catalogue.guard.contract();
            let bound = contract.checks().iter().any(|check| {
                bound_at(contract, check.field().as_str()) == location
                    && match check {
                        CheckSpec::EqualsParam { param, .. } => {
                            case.request.params.get(param) == Some(field)
                        }
                        CheckSpec::InParam { param, .. } => case
                            .request
                            .params
                            .get(param)
                            .and_then(Value::as_array)
                            .is_some_and(|items| items.contains(field)),
                        _ => false,
                    }
            });
            assert!(bound, "{tool}: {} does not bind {field}", case.id);
            // The binding stage passes: whatever the reference decides, it decides at
            // the schema.
            let admission = catalogue.guard.admit(&case.request, body);
            assert_ne!(
                admission.audit().stage(),
                Stage::Binding,
                "{tool}: {}",
                case.id
            );
            n += 1;
            if tool == "ci_pipeline_status" {
                vendor += 1;
            }
        }
    }
    assert!(n > 0, "no bound neighbours");
    // A vendor document's member bound through its mapping (`/project_id` fills
    // `/data/project_id`) gets its bound cases too (they were never made).
    assert!(vendor > 0, "no bound neighbours in the vendor contract");
}

/// Where the body holds the member a check on `field` binds: the field itself, or in a
/// vendor document the member its mapping takes as it is.
fn bound_at(contract: &airlock_guard::Contract, field: &str) -> String {
    match contract.input() {
        airlock_guard::InputKind::Vendor(vendor) => vendor
            .map
            .iter()
            .find(|m| format!("/data/{}", m.field) == field)
            .map_or_else(|| field.to_owned(), |m| m.from.as_str().to_owned()),
        _ => field.to_owned(),
    }
}
