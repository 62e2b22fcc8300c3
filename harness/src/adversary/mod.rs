//! The adversary: cases derived from a contract's fixtures. Every fixture as it is; from
//! every accepted fixture the deterministic variants (extra, missing, swapped and
//! duplicated members, schema-driven string, enum, pattern and date-time neighbours,
//! number edges, broken string bytes, broken whole bodies, size and depth past the
//! limits, request-id and binding mismatches); once per contract the upstream failure
//! envelopes and the transport errors; then seeded random mutation chains.

use airlock_guard::{CheckSpec, Contract, InputKind, Normalise, Request, TransportError};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

use crate::cases::{canary, Case, Expectation, Upstream};
use crate::corpus::{Corpus, Expect, Fixture, FixtureKind};

mod binding;
mod boundary;
mod bytes;
mod generated;
mod limits;
mod lines;
mod mcp;
mod members;
mod neighbours;
mod random;
mod reencode;
mod shapes;
mod times;
mod trial;
mod vendor;
mod write;

/// Kept here for the modules that found it here first.
pub use crate::schema::schema_at;

pub use generated::{source as instance_source, valid_instances};
pub use write::{write_variants, MutateOptions, MutateOptionsError};

/// Every class the adversary produces, with what it does.
pub const CLASSES: &[(&str, &str)] = &[
    ("fixture", "every fixture of the corpus as it is"),
    ("generated", "valid instances generated from the schema itself, bound to the request and confirmed admitted by the guard; every derived class applies to them too"),
    ("extra_property", "an extra member in every object: canary name and value, admin_override, approved, role; a success that also carries error, a failure that also carries data"),
    ("missing_member", "every member of every object removed, one at a time"),
    ("type_swap", "every member's value swapped for null, a boolean, \"true\", a number, a numeric string, a string, an array, an object; every object wrapped in an array; every member the schema declares but the base leaves out, present as null (at most 64 per base)"),
    ("string_edge", "every string member empty, one and ten times past its maxLength (canary), with NUL appended, as injected instructions (canary), with a trailing newline; free strings one past maxLength and one below minLength in 1- to 4-byte characters; a date-time's fraction one digit past its maxLength"),
    ("enum_neighbour", "every enum value re-cased and space-prefixed, another member's enum value, \"unknown\"; const members swapped for another tool's name or constant, and re-cased; enum values and constants in spellings Unicode folding makes equal (full-width, Kelvin sign, ligature, digits of other scripts)"),
    ("pattern_neighbour", "every patterned string with its last character changed, a character appended, a character prefixed, a trailing newline; text after a valid value (no end anchor), a leading and a trailing space (matched after trimming), digits of other scripts and full-width letters"),
    ("date_time_neighbour", "every date-time without offset, with a space for T, with lower-case t and z, in month 13, at leap second 23:59:60Z; offsets +24:00, -24:00, +23:60; a day past its month's end (11-31, 04-31, 02-29 of a common year); leap seconds elsewhere (12:00:60Z, 23:58:60Z, 23:59:60+01:00); hour 24; ten fraction digits; calendar edges: Feb 29 2100, Feb 30, June 31, Sep 31, day 00, month 00, one- and three-digit fields, other separators, basic ISO 8601, minute 60, offsets +0100, +01, -00:00, offsets carrying the UTC year out of 0001-9999"),
    ("number_edge", "raw number text at every member, mapped or not: 1e400, -0, 2^64, 1.0, 1e-400, 01, NaN, Infinity, -Infinity; at numeric members: each bound one step past, exclusive bounds themselves, half a multipleOf step, the integer as 4.0 / 4e0 / 4E+0, -0.0, 2^53+1, 1e2"),
    ("bad_string_bytes", "raw bytes in every string member (canary): a lone high and a lone low surrogate escape, a reversed pair, a high surrogate before text, invalid UTF-8, a raw control character"),
    ("duplicate_member", "every member written twice, both orders, with a conflicting canary value, with the same value, and once with an escaped name"),
    ("array_edge", "every array one past its maxItems and far past max_bytes (repeating its last item), one below minItems, a repeated item under uniqueItems"),
    ("oversize", "a valid body padded with whitespace one byte and far past max_bytes; a multi-byte body one byte past max_bytes, far under it in characters"),
    ("exact_limit", "a valid body padded with whitespace to exactly max_bytes; the widest free string filled with 4-byte characters, then padded to exactly max_bytes"),
    ("deep_nesting", "nesting one past max_depth in place of a member, and as deep as max_bytes allows; at members no schema judges, nesting to max_depth (admitted) and one past it"),
    ("raw_bytes", "whole bodies broken: BOM, UTF-16LE, trailing garbage, two documents, truncated at structural boundaries, an HTML error page (canary), empty, a comment, single quotes, NaN"),
    ("request_id_mismatch", "a response answering another request id"),
    ("binding_mismatch", "a request whose parameters disagree with the response, one per binding check; near misses: the response's value re-cased, padded, a prefix or an extension of the parameter, in Unicode-equivalent spellings; the request's parameter re-cased, padded or Unicode-equivalent; the parameter missing, null, a number, an object, the wrong container"),
    ("freshness", "a request time that makes each fresh field just stale and just future, by a second, a millisecond, a microsecond and a nanosecond; the field 100 ns past the skew in 7 fraction digits; field and now straddling a month's end, the year's end, a leap day, 2100 and 2000"),
    ("reencoding", "every admitted body written again with the same meaning: white space (CRLF, tabs) between every token, every string \\u-escaped (surrogate pairs), \\/, members permuted, numbers in exponent form, all at once; the reference admits each with the same agent value"),
    ("boundary_valid", "values at the edges the schema allows: strings of exactly minLength/maxLength code points of 1-, 2-, 3- and 4-byte characters, white space only or around text; date-times with 0-9 fraction digits and offsets -23:59..+23:59; numbers at inclusive bounds, next to exclusive ones, on multipleOf steps; arrays of exactly minItems/maxItems; date-times whose fraction fills their maxLength; date-times on Feb 29 of 2024 and 2000, the first and last day of every month, midnight, the last second, years 0001 and 9999; bound members (in a vendor document, through an identity mapping) with the request following (their one-past neighbours go to string_edge, date_time_neighbour, number_edge, array_edge)"),
    ("upstream_failure", "a well-formed failure envelope for every error code, claiming retryable and not"),
    ("transport_error", "every transport error"),
    ("random_mutation", "seeded chains of byte and member mutations, half of them on top of another class's variant"),
    ("mcp-text-disagrees", "MCP: a text block whose JSON differs from structuredContent (a member's value changed, a member added, an integer re-spelled 1.0); the same value with members reordered, pretty or compact (admitted)"),
    ("mcp-text-instructions", "MCP: the text block replaced by injected instructions (canary), a second text block of instructions (canary)"),
    ("mcp-is-error", "MCP: isError true with an injected message (canary), with and without structuredContent (the upstream failure; no canary reaches the agent); isError \"true\", 1, null"),
    ("mcp-id", "MCP: the response's JSON-RPC id another number, the same number as a string (or a string id as a number), 7.0 for 7, null, missing; the id of another outstanding call; a JSON-RPC error under another id and under null"),
    ("mcp-result-members", "MCP: extra members (canary, admin_override) in the message, in result, in a text block; resultType \"task\" and \"input_required\"; both result and error; the members the shape allows, never the agent's: result _meta (canary; not an object; holding NaN; nested to max_depth and one past), a text block's annotations and _meta (canaries, holding NaN), content empty and missing, a second agreeing block, text written twice, the text's JSON with a member twice (the last agreeing), after a BOM, followed by more text, with a surrogate-pair escape"),
    ("mcp-content-kinds", "MCP: an image, audio, resource_link, resource block (canary) added (refused unless the contract allows the kind), a block of an unknown type"),
    ("mcp-structured-missing", "MCP: structuredContent missing while the text block carries the JSON; structuredContent null, an array, a string holding the JSON"),
    ("mcp-jsonrpc-error", "MCP: a JSON-RPC error (canary in message and data), judged a transport failure; malformed error objects (code a string or a fraction, message missing or not a string, an extra member, error null or an array); NaN in the error's data"),
    ("lines-stray-line", "lines: a login banner, a warning, a comment (canary each), a blank line, spaces, the separator alone (canary), before, between and after the declared lines"),
    ("lines-duplicate-key", "lines: every key written twice, the original first and last with a differing canary value, with the same value, again at the end"),
    ("lines-missing-key", "lines: every line removed, one at a time"),
    ("lines-unknown-key", "lines: a canary key and value; every key spelled with a Unicode look-alike, re-cased, with a space before the separator or a leading space, in place of the key and beside it (canary value)"),
    ("lines-line-ending", "lines: the other line ending everywhere and once, lone CR, a CR overwriting the value (canary), no final line ending, LF CR, the final line ending twice"),
    ("lines-whitespace", "lines: a space, tab, no-break space after every value, a space or ideographic space before it, a value of spaces"),
    ("lines-control", "lines: ANSI colour around a value, hidden text (canary), an OSC title (canary), NUL (and a canary after it), BEL, backspace overwriting a canary, DEL, C1 CSI, form feed, vertical tab; ESC first, NUL last"),
    ("lines-encoding", "lines: a BOM, UTF-16LE with and without its BOM, invalid UTF-8 in a value (a stray byte, an over-long /, an encoded surrogate, a character cut short, Latin-1)"),
    ("lines-long-line", "lines: every line exactly max_line_bytes long (the reference decides), one byte past, a 4-byte character crossing the limit"),
    ("lines-separator", "lines: the other separator (= or ': ') everywhere and per line, ' = ', ':' without space, doubled, none, a tab"),
    ("lines-value", "lines: every value a canary, injected instructions (canary), empty; by the mapping's normalisation: leading zero, + sign, fraction, exponent, hex, -0, past 2^53, non-ASCII digits; table keys re-cased, title-cased, a table value; upper case and non-ASCII letters for lower-casing; a value holding the separator or quoted, its Unicode-equivalent spellings; times as date-time neighbours, epoch seconds, git's default format, RFC 2822, offset without colon; by the contract schema: pattern and enum neighbours, one past maxLength"),
    ("vendor-unmapped", "vendor: every member no mapping or failure rule reads set to a canary (admitted by an open vendor schema; never in the agent value)"),
    ("vendor-near-name", "vendor: every mapped member's name re-cased, title-cased, padded, with a look-alike letter, as camelCase, in place of the member (the mapping fails closed) and beside it with a canary value; the member renamed to a canary name"),
    ("vendor-coerce", "vendor: every mapped value in a type a normalisation might coerce: an integer as a decimal or fraction string, raw 7.0 and 7e0; a table key upper-, title-cased, padded, or a table value; a time as epoch seconds (number, string, milliseconds) or with a space for T; an array holding the value (and a canary), an object holding it (and a canary), null, true"),
    ("vendor-failure", "vendor: every failure rule's member beside a document it does not match (its value, or a canary); where it matches, its value re-cased, upper-cased, padded, a prefix, with a canary, a number, null, an array; a failure document also carrying every mapped member (canaries)"),
];

/// The classes that run on envelope contracts only: their subject is the envelope (its
/// request_id, its failure shape), which an MCP message, a vendor document or a command's
/// output does not have.
pub const ENVELOPE_ONLY: &[&str] = &["request_id_mismatch", "upstream_failure"];

/// The classes that run on a `lines` contract (a command's output is text: the JSON
/// classes have nothing to vary in it); the `lines-*` classes run there only.
pub const LINES_CLASSES: &[&str] = &[
    "fixture",
    "generated",
    "oversize",
    "binding_mismatch",
    "freshness",
    "transport_error",
    "random_mutation",
];

/// Whether `class` runs on contracts whose input is `kind` (`envelope`, `mcp`, `vendor`,
/// `lines`): the prefixed classes on their own kind, [`ENVELOPE_ONLY`] on envelopes, a
/// `lines` contract only [`LINES_CLASSES`] and its own.
pub fn applies(class: &str, kind: &str) -> bool {
    for prefix in ["mcp", "vendor", "lines"] {
        if class.starts_with(&format!("{prefix}-")) {
            return kind == prefix;
        }
    }
    if ENVELOPE_ONLY.contains(&class) {
        return kind == "envelope";
    }
    kind != "lines" || LINES_CLASSES.contains(&class)
}

/// One variant class at work on one fixture: where its cases go, and the class and the
/// fixture every case it pushes is filed under (the MCP, vendor and command-output
/// variants each build on it).
struct Family<'b, 'c, 'f> {
    b: &'b mut Builder<'c>,
    fixture: &'f Fixture,
    class: &'static str,
}

impl Family<'_, '_, '_> {
    /// Canary `n` of the class's case at `location`.
    fn canary(&self, location: &str, n: u32) -> String {
        self.b.canary(self.class, &self.fixture.name, location, n)
    }

    /// A case of the class: `bytes` as the upstream's body answering `request`.
    fn push_body(
        &mut self,
        location: &str,
        suffix: &str,
        request: &Request,
        bytes: Vec<u8>,
        canaries: Vec<String>,
        expect: Expectation,
    ) {
        self.b.push(
            self.class,
            Some(&self.fixture.name),
            location,
            suffix,
            request,
            Upstream::Body(bytes),
            canaries,
            expect,
        );
    }

    /// A case of the class: `bytes` as the upstream's body answering the fixture's request.
    fn push(
        &mut self,
        location: &str,
        suffix: &str,
        bytes: impl Into<Vec<u8>>,
        canaries: Vec<String>,
        expect: Expectation,
    ) {
        let request = self.fixture.request.clone();
        self.push_body(location, suffix, &request, bytes.into(), canaries, expect);
    }

    /// [`Family::push`] of a large body, built when wanted ([`Builder::push_later`]).
    fn push_later(
        &mut self,
        location: &str,
        suffix: &str,
        build: impl Fn() -> Vec<u8> + Send + Sync + 'static,
        expect: Expectation,
    ) {
        let request = self.fixture.request.clone();
        self.b.push_later(
            self.class,
            Some(&self.fixture.name),
            location,
            suffix,
            &request,
            build,
            Vec::new(),
            expect,
        );
    }
}

/// A body built when it is wanted: [`Builder::push_later`]'s cases (shared: a random
/// chain that starts from one builds on it, a fuzzer's seed is one).
pub(crate) type Later = std::sync::Arc<dyn Fn() -> Vec<u8> + Send + Sync>;

/// The bodies of cases [`generate_later`] left empty, built when their case runs: the
/// bodies sized from `max_bytes` (padded to it and past it, arrays grown far past it).
/// With `max_bytes` at 8 MiB (what `mcp import` writes for an unbounded schema) each base
/// has some 40 MiB of them; built at once they held a gigabyte before the first case ran.
#[derive(Default)]
pub(crate) struct LaterBodies(HashMap<String, Later>);

impl LaterBodies {
    /// The body of case `id`, if it is one of these.
    pub(crate) fn body(&self, id: &str) -> Option<Vec<u8>> {
        self.0.get(id).map(|build| build())
    }

    /// How the body of case `id` is built, if it is one of these.
    pub(crate) fn build_of(&self, id: &str) -> Option<Later> {
        self.0.get(id).cloned()
    }

    /// `cases` in batches of at most `size`, each case whose body is one of these in a
    /// batch of its own: a batch then holds at most one such body once built.
    pub(crate) fn batches<'c>(
        &'c self,
        cases: &'c [Case],
        size: usize,
    ) -> impl Iterator<Item = &'c [Case]> + 'c {
        let mut rest = cases;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let later = |c: &Case| self.0.contains_key(&c.id);
            let len = if later(&rest[0]) {
                1
            } else {
                rest.iter()
                    .take(size.max(1))
                    .position(later)
                    .unwrap_or(rest.len().min(size.max(1)))
            };
            let (batch, tail) = rest.split_at(len);
            rest = tail;
            Some(batch)
        })
    }

    /// `cases` with their bodies built, when any of them is one of these (else `None`:
    /// use `cases` as they are).
    pub(crate) fn built(&self, cases: &[Case]) -> Option<Vec<Case>> {
        if !cases.iter().any(|c| self.0.contains_key(&c.id)) {
            return None;
        }
        Some(
            cases
                .iter()
                .map(|case| match self.body(&case.id) {
                    Some(body) => Case {
                        upstream: Upstream::Body(body),
                        ..case.clone()
                    },
                    None => case.clone(),
                })
                .collect(),
        )
    }
}

struct Builder<'a> {
    seed: u64,
    contract: &'a Contract,
    cases: Vec<Case>,
    ids: BTreeSet<String>,
    /// `Some` while bodies sized from `max_bytes` are left to build later
    /// ([`generate_later`]); `None` builds them at once.
    later: Option<LaterBodies>,
    /// For an MCP contract, while a class works on `structuredContent`: the message of the
    /// fixture it came from. Every body pushed meanwhile is wrapped back into it (its text
    /// block agreeing), every pointer shifted under `/result/structuredContent`.
    wrap: Option<Value>,
}

impl<'a> Builder<'a> {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        class: &str,
        origin: Option<&str>,
        location: &str,
        suffix: &str,
        request: &Request,
        upstream: Upstream,
        canaries: Vec<String>,
        expect: Expectation,
    ) {
        let (location, upstream) = match (&self.wrap, upstream) {
            (Some(message), Upstream::Body(raw)) => (
                mcp::shift(location),
                Upstream::Body(mcp::wrap_raw(message, &raw)),
            ),
            (_, upstream) => (location.to_owned(), upstream),
        };
        if expect == Expectation::Admit {
            // A valid case must fit the limit as sent (an MCP variant is measured with the
            // message wrapped around it, not as structuredContent alone).
            if let Upstream::Body(body) = &upstream {
                if body.len() as u64 > self.contract.limits().max_bytes {
                    return;
                }
            }
        }
        let location = location.as_str();
        let mut id = format!("{class}/{}{location}", origin.unwrap_or("-"));
        if !suffix.is_empty() {
            id.push('#');
            id.push_str(suffix);
        }
        let mut unique = id.clone();
        let mut n = 2;
        while !self.ids.insert(unique.clone()) {
            unique = format!("{id}~{n}");
            n += 1;
        }
        self.cases.push(Case {
            id: unique,
            class: class.to_owned(),
            location: location.to_owned(),
            origin: origin.map(str::to_owned),
            request: {
                // Cases carry the tool, as the exec protocol sends it; a call to an MCP
                // tool carries its JSON-RPC id.
                let mut request = request.clone();
                request.tool = Some(self.contract.tool().to_owned());
                if self.is_mcp() && request.jsonrpc_id.is_none() {
                    request.jsonrpc_id = Some(Value::String(request.request_id.clone()));
                }
                request
            },
            upstream,
            canaries,
            expect,
        });
    }

    /// A case whose body is large (sized from `max_bytes`): built by `build` now, or when
    /// the case runs ([`generate_later`]); the same bytes either way. Never a case that
    /// must be admitted (those are measured against the limit as they are pushed).
    #[allow(clippy::too_many_arguments)]
    fn push_later(
        &mut self,
        class: &str,
        origin: Option<&str>,
        location: &str,
        suffix: &str,
        request: &Request,
        build: impl Fn() -> Vec<u8> + Send + Sync + 'static,
        canaries: Vec<String>,
        expect: Expectation,
    ) {
        debug_assert!(
            expect != Expectation::Admit,
            "{class}: a later body is never one to admit"
        );
        if self.later.is_none() || expect == Expectation::Admit {
            let body = Upstream::Body(build());
            return self.push(
                class, origin, location, suffix, request, body, canaries, expect,
            );
        }
        // As `push` does with a body: wrapped into the MCP message, the location shifted
        // under it; the empty placeholder goes in unwrapped.
        let wrap = self.wrap.take();
        let (location, build): (String, Later) = match &wrap {
            Some(message) => {
                let message = message.clone();
                let build = move || mcp::wrap_raw(&message, &build());
                (mcp::shift(location), std::sync::Arc::new(build))
            }
            None => (location.to_owned(), std::sync::Arc::new(build)),
        };
        let pushed = self.cases.len();
        let body = Upstream::Body(Vec::new());
        self.push(
            class, origin, &location, suffix, request, body, canaries, expect,
        );
        self.wrap = wrap;
        if let (Some(case), Some(later)) = (self.cases.get(pushed), &mut self.later) {
            later.0.insert(case.id.clone(), build);
        }
    }

    /// Whether the contract is an MCP tool contract (its bodies are JSON-RPC messages).
    fn is_mcp(&self) -> bool {
        self.contract.input().mcp().is_some()
    }

    /// Whether the upstream speaks the envelope itself.
    fn is_envelope(&self) -> bool {
        matches!(self.contract.input(), InputKind::Envelope)
    }

    /// The subschemas that judge the member at `location` of the body the classes vary
    /// (see [`schemas_at`]).
    fn schemas_at(&self, location: &str) -> Vec<&'a Value> {
        schemas_at(self.contract, location)
    }

    /// Where the body the classes vary holds the envelope member at `field` (a check's
    /// pointer): the pointer itself, or for a vendor contract the source of the mapping
    /// that fills it (`None` when no mapping does).
    fn source_of(&self, field: &str) -> Option<String> {
        self.source_where(field, |_| true)
    }

    /// Like [`Builder::source_of`], for a mapping that takes the member as it is (no
    /// normalisation) only: where the body holds the value the envelope's `field` gets.
    fn taken_as_is_from(&self, field: &str) -> Option<String> {
        self.source_where(field, |m| m.normalise == Normalise::None)
    }

    fn source_where(
        &self,
        field: &str,
        keep: impl Fn(&airlock_guard::Mapping) -> bool,
    ) -> Option<String> {
        let InputKind::Vendor(vendor) = self.contract.input() else {
            return Some(field.to_owned());
        };
        let name = field.strip_prefix("/data/")?;
        vendor
            .map
            .iter()
            .find(|m| crate::cases::escape_token(&m.field) == name)
            .filter(|m| keep(m))
            .map(|m| m.from.as_str().to_owned())
    }

    fn canary(&self, class: &str, origin: &str, location: &str, n: u32) -> String {
        canary(
            self.seed,
            &format!("{}/{class}/{origin}{location}", self.contract.tool()),
            n,
        )
    }
}

/// The subschemas that judge the member at `location` of the body the classes vary: the
/// contract's schema (an envelope, an MCP tool's structuredContent), or for a vendor
/// contract the vendor schema, and where a mapping takes the member as it is (no
/// normalisation), the contract schema's member it fills too.
pub fn schemas_at<'a>(contract: &'a Contract, location: &str) -> Vec<&'a Value> {
    let InputKind::Vendor(vendor) = contract.input() else {
        return schema_at(contract.schema().document(), location);
    };
    let mut out = contract
        .vendor_schema()
        .map(|s| schema_at(s.document(), location))
        .unwrap_or_default();
    for mapping in &vendor.map {
        if mapping.from.as_str() == location && mapping.normalise == Normalise::None {
            let field = format!("/data/{}", crate::cases::escape_token(&mapping.field));
            out.extend(schema_at(contract.schema().document(), &field));
        }
    }
    out
}

/// All cases for `contract` with its `corpus`: fixtures, deterministic variants, and
/// `random` seeded mutation chains. The same inputs give the same cases, in order.
pub fn generate(contract: &Contract, corpus: &Corpus, seed: u64, random: usize) -> Vec<Case> {
    build(contract, corpus, seed, random, None).0
}

/// [`generate`]'s cases, but, for a contract whose `max_bytes` is [`LATER_FROM`] or more,
/// the bodies sized from it left empty and built when their case runs, from the
/// [`LaterBodies`]: the same cases, in the same order, with the same bytes once built.
pub(crate) fn generate_later(
    contract: &Contract,
    corpus: &Corpus,
    seed: u64,
    random: usize,
) -> (Vec<Case>, LaterBodies) {
    // Below that limit every body is small: built at once, as `generate` does.
    let later = (contract.limits().max_bytes >= LATER_FROM).then(LaterBodies::default);
    let (cases, later) = build(contract, corpus, seed, random, later);
    (cases, later.unwrap_or_default())
}

/// The byte limit from which [`generate_later`] leaves bodies to build later: 256 KiB.
/// Below it a base's bodies sized from the limit come to a few megabytes at most.
const LATER_FROM: u64 = 256 * 1024;

fn build(
    contract: &Contract,
    corpus: &Corpus,
    seed: u64,
    random: usize,
    later: Option<LaterBodies>,
) -> (Vec<Case>, Option<LaterBodies>) {
    let mut b = Builder {
        seed,
        contract,
        cases: Vec::new(),
        ids: BTreeSet::new(),
        later,
        wrap: None,
    };
    for fixture in &corpus.fixtures {
        let expect = match (fixture.kind, fixture.expect) {
            (_, Expect::Accept) => Expectation::Admit,
            (_, Expect::Reject) => Expectation::Reject,
        };
        let location = match fixture.kind {
            FixtureKind::Historical { version } => format!("@historical/{version}"),
            kind => format!("@{kind}"),
        };
        b.push(
            "fixture",
            Some(&fixture.name),
            &location,
            "",
            &fixture.request,
            Upstream::Body(fixture.bytes.clone()),
            Vec::new(),
            expect,
        );
    }
    // A command's output is text: its base is the text itself (a JSON string).
    let lines = matches!(contract.input(), InputKind::Lines(_));
    let accepted: Vec<(&Fixture, Value)> = corpus
        .fixtures
        .iter()
        .filter(|f| f.kind == FixtureKind::Accepted)
        .filter_map(|f| {
            if lines {
                return std::str::from_utf8(&f.bytes)
                    .ok()
                    .map(|t| (f, Value::String(t.to_owned())));
            }
            airlock_guard::parse(&f.bytes, usize::MAX)
                .ok()
                .map(|v| (f, v))
        })
        .collect();
    for (fixture, value) in &accepted {
        derived(&mut b, fixture, value);
    }
    if b.is_envelope() {
        random::upstream_failures(&mut b, corpus);
    }
    for error in TransportError::ALL {
        b.push(
            "transport_error",
            None,
            "",
            error.as_str(),
            &corpus.request,
            Upstream::Transport(error),
            Vec::new(),
            Expectation::Transport,
        );
    }
    let values = generated::valid_instances(contract, &corpus.request, seed, GENERATED);
    for (n, value) in values.iter().enumerate() {
        // The instance as the upstream writes it: for an MCP contract the message around
        // structuredContent, for a vendor document or a command's output the source the
        // mapping reads it from.
        let Some(value) = &generated::source(contract, &corpus.request, value) else {
            continue;
        };
        let fixture = Fixture {
            kind: FixtureKind::Accepted,
            path: std::path::PathBuf::new(),
            name: format!("generated_{n}"),
            bytes: body_bytes(value),
            request: corpus.request.clone(),
            expect: Expect::Accept,
        };
        b.push(
            "generated",
            Some(&fixture.name),
            "",
            "",
            &fixture.request,
            Upstream::Body(fixture.bytes.clone()),
            Vec::new(),
            Expectation::Admit,
        );
        derived(&mut b, &fixture, value);
    }
    random::random_mutations(&mut b, &accepted, random);
    (b.cases, b.later)
}

/// `bytes` padded with white space to `len`, built when wanted ([`Builder::push_later`]);
/// the builds of one body share its bytes.
fn padded(
    bytes: &std::sync::Arc<[u8]>,
    len: usize,
) -> impl Fn() -> Vec<u8> + Send + Sync + 'static {
    let bytes = std::sync::Arc::clone(bytes);
    // `vec![b' '; len]` is one memset even in a debug build; `resize` filled byte by byte
    // (a fifth of a debug check of an 8 MiB contract).
    move || {
        let mut padded = vec![b' '; len];
        let kept = bytes.len().min(len);
        padded[..kept].copy_from_slice(&bytes[..kept]);
        padded
    }
}

/// Valid instances generated from the schema per contract (each also a base for every
/// derived class).
pub const GENERATED: usize = 3;

fn derived(b: &mut Builder<'_>, fixture: &Fixture, value: &Value) {
    match b.contract.input() {
        InputKind::Mcp(_) => mcp::derived(b, fixture, value),
        InputKind::Lines(_) => {
            if let Value::String(text) = value {
                lines::derived(b, fixture, text);
            }
        }
        InputKind::Vendor(_) => {
            classes(b, fixture, value, true);
            vendor::derived(b, fixture, value);
        }
        _ => classes(b, fixture, value, true),
    }
}

/// The bytes of a base value: a command's output (a JSON string) is its text, anything
/// else its compact JSON.
fn body_bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(text) => text.clone().into_bytes(),
        value => serde_json::to_vec(value).unwrap_or_default(),
    }
}

/// The classes on `value`: those about the value the schema judges (an envelope, or an
/// MCP tool's `structuredContent` wrapped back into its message by the [`Builder`]), and
/// when it is the `whole` body, size, depth and broken bytes too.
fn classes(b: &mut Builder<'_>, fixture: &Fixture, value: &Value, whole: bool) {
    shapes::shapes(b, fixture, value);
    members::extra_properties(b, fixture, value);
    members::member_variants(b, fixture, value);
    if whole {
        limits::size_and_depth(b, fixture, value);
    }
    binding::request_variants(b, fixture, value);
    neighbours::schema_neighbours(b, fixture, value);
    bytes::number_edges(b, fixture, value);
    bytes::bad_string_bytes(b, fixture, value);
    if whole {
        bytes::raw_bytes(b, fixture, value);
    }
    reencode::reencodings(b, fixture, value);
    boundary::boundaries(b, fixture, value);
}

/// `request` with every parameter bound to the member at `location` following its
/// change from `original` to `new` (an `equals_param` parameter set to it, an `in_param`
/// list holding it in place of `original`), so that the schema stage decides; `None`
/// when no check binds that member. In a vendor document the member a check binds is the
/// one its field is mapped from; a mapping that normalises is left out (the parameter
/// would have to follow the normalised value, which the mapping may refuse).
fn bind_along(
    b: &Builder<'_>,
    request: &Request,
    location: &str,
    original: &Value,
    new: &Value,
) -> Option<Request> {
    let mut bound = request.clone();
    let mut any = false;
    for check in b.contract.checks() {
        if b.taken_as_is_from(check.field().as_str()).as_deref() != Some(location) {
            continue;
        }
        match check {
            CheckSpec::EqualsParam { param, .. } => {
                bound.params.insert(param.clone(), new.clone());
                any = true;
            }
            CheckSpec::InParam { param, .. } => {
                if let Some(Value::Array(items)) = bound.params.get_mut(param) {
                    for item in items.iter_mut().filter(|i| *i == original) {
                        *item = new.clone();
                    }
                    any = true;
                }
            }
            _ => {}
        }
    }
    any.then_some(bound)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::base::subject::Subject;
    use std::path::Path;

    /// A copy of the shipped contract `tool` in `tmp` with `max_bytes` at `limit`: its
    /// folder (flat: the files are copied) and its corpus folder (read where it is).
    pub(crate) fn at_limit(
        tmp: &Path,
        tool: &str,
        limit: u64,
    ) -> (std::path::PathBuf, std::path::PathBuf) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = tmp.join(tool);
        std::fs::create_dir(&dir).unwrap();
        for file in std::fs::read_dir(root.join("schemas").join(tool)).unwrap() {
            let path = file.unwrap().path();
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
        let manifest = dir.join("contract.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("max_bytes = "))
            .unwrap()
            .to_owned();
        std::fs::write(
            &manifest,
            text.replace(&line, &format!("max_bytes = {limit}")),
        )
        .unwrap();
        (dir, root.join("corpora").join(tool))
    }

    fn held(cases: &[Case]) -> usize {
        cases
            .iter()
            .map(|c| match &c.upstream {
                Upstream::Body(bytes) => bytes.len(),
                Upstream::Transport(_) => 0,
            })
            .sum()
    }

    /// `check`'s cases are `generate`'s, byte for byte, once their later bodies are built
    /// (an envelope, a vendor, a `lines` and an MCP contract, each with `max_bytes` at
    /// 1 MiB; the MCP one with an array and a bounded free string, so that bodies are built
    /// inside the MCP message); until then they hold none of the bodies sized from
    /// `max_bytes`. Below 256 KiB nothing is left for later.
    #[test]
    fn later_bodies_are_the_same_cases_built_when_wanted() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let tmp = tempfile::tempdir().unwrap();
        let mut dirs = Vec::new();
        for tool in [
            "review_status",
            "ci_pipeline_status",
            "git_branch_head",
            "change_review",
        ] {
            dirs.push(at_limit(tmp.path(), tool, 1 << 20));
        }
        let mcp = dirs[3].0.clone();
        // An array and a bounded free string in structuredContent: their large cases
        // (array_edge, exact_limit#multibyte) are built inside the MCP message.
        let schema_file = mcp.join("v1.schema.json");
        let mut schema: Value =
            serde_json::from_slice(&std::fs::read(&schema_file).unwrap()).unwrap();
        schema["properties"]["labels"] =
            serde_json::json!({"type": "array", "items": {"type": "string"}, "maxItems": 3});
        schema["properties"]["reviewed_by"]["maxLength"] = 300.into();
        std::fs::write(&schema_file, schema.to_string()).unwrap();
        // The shipped review_status (4 KiB) leaves nothing for later.
        let small = Subject::load(&root.join("schemas/review_status")).unwrap();
        let (_, later) = generate_later(small.guard.contract(), &small.corpus, 7, 40);
        assert!(later.0.is_empty());
        for (dir, corpus) in dirs {
            let subject = Subject::load_with_corpus(&dir, Some(&corpus)).unwrap();
            let contract = subject.guard.contract();
            let eager = generate(contract, &subject.corpus, 7, 400);
            let (cases, later) = generate_later(contract, &subject.corpus, 7, 400);
            assert!(!later.0.is_empty(), "{}: no later body", dir.display());
            let built = later.built(&cases).unwrap();
            assert_eq!(eager.len(), built.len(), "{}", dir.display());
            for (a, b) in eager.iter().zip(&built) {
                assert_eq!(
                    serde_json::to_value(a).unwrap(),
                    serde_json::to_value(b).unwrap(),
                    "{}",
                    a.id
                );
            }
            // check's batches: every case once, in order; a later body alone in its batch.
            let batches: Vec<&[Case]> = later.batches(&cases, 256).collect();
            let ids = |cases: &[Case]| cases.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
            assert_eq!(ids(&batches.concat()), ids(&cases));
            for batch in &batches {
                assert!(batch.len() <= 256);
                let alone = batch.iter().any(|c| later.0.contains_key(&c.id));
                assert!(!alone || batch.len() == 1, "{}", batch[0].id);
            }
            let (now, all) = (held(&cases), held(&eager));
            assert!(
                now < all / 10,
                "{now} of {all} bytes held before any case runs"
            );
            if dir == mcp {
                // Built inside the MCP message, and random chains on a later body.
                let later_ids = || later.0.keys().map(String::as_str);
                for wanted in ["array_edge/", "exact_limit/", "random_mutation/"] {
                    assert!(
                        later_ids().any(|id| id.starts_with(wanted)
                            && (wanted == "random_mutation/"
                                || id.contains("/result/structuredContent"))),
                        "{wanted}: {:?}",
                        later_ids().collect::<Vec<_>>()
                    );
                }
                assert!(all > 30 << 20, "{all} bytes in all");
            }
        }
    }
}
