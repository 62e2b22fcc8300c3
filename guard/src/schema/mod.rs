//! Stage 3: JSON Schema (Draft 2020-12, 2019-09 or draft-07), compiled once per contract:
//! `format` asserted in every dialect, unknown formats refused at load, patterns on the
//! linear-time `regex` engine, and no retrieval except the contract's own files.

use jsonschema::json::Json;
use jsonschema::{PatternOptions, Validator};
use serde_json::Value;
use std::fmt;

use crate::audit::{sha256_hex, Diagnostic, Stage};
use crate::doc::{Doc, Node};
use crate::parse::{parse_doc, ParseError};
use crate::pointer::Pointer;
use crate::resources::{LocalRetriever, Resources};

mod budget;
pub use budget::{MAX_IN_PLACE, MAX_IN_PLACE_DEPTH, MAX_REFERENCES};
mod cycles;
use cycles::{in_place_check, in_place_check_across, InPlace};
pub use cycles::{in_place_ref_cycle, in_place_ref_cycle_across};
mod diagnose;
mod dialect;
mod shape;

pub use diagnose::MAX_EXPLAINED_BYTES;
use diagnose::{diagnose, unexplained};
pub use dialect::{Dialect, DRAFT_07, DRAFT_2019_09, DRAFT_2020_12};
pub(crate) use shape::can_contain;
use shape::check_patterns;
pub use shape::MAX_PATTERN_POSITIONS;

/// Why a schema could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaError {
    /// `$schema` names a dialect other than draft-07, 2019-09 and 2020-12 that is not one
    /// of the contract's own files declaring 2020-12 or draft-07.
    UnknownDialect(String),
    /// A `pattern` (or `patternProperties` key) the linear-time engine cannot compile,
    /// typically a backtracking feature such as a look-around or a back-reference.
    Pattern {
        /// The pattern as written.
        pattern: String,
        /// The engine's reason.
        reason: String,
    },
    /// A `pattern` (or `patternProperties` key) that compiles to more than the `regex`
    /// engine's size limit (`^\w{1,5000}$`: `\w` is Unicode-aware, and each repetition
    /// is a copy of it).
    PatternTooBig {
        /// The pattern as written.
        pattern: String,
        /// The size limit, in bytes of compiled program.
        limit: usize,
    },
    /// A `pattern` (or `patternProperties` key) whose counted repetitions, expanded, hold
    /// more than [`MAX_PATTERN_POSITIONS`] characters and classes (`^(b{1,300}){1,100}$`
    /// holds 30 000): the engine never backtracks, but when it falls back from its lazy
    /// DFA its time per byte of a string grows with that size.
    PatternTooCostly {
        /// The pattern as written.
        pattern: String,
        /// Its expanded size (saturating).
        positions: u64,
    },
    /// A reference cycle that applies schemas to the same value without ever stepping into
    /// a member or an item: it would admit any value. The locations it passes through,
    /// first and last the same (`#/$defs/a`, `#/$defs/b`, `#/$defs/a`).
    RefCycle(Vec<String>),
    /// A subschema applies more than [`MAX_IN_PLACE`] subschemas to
    /// one value, references expanded (nested `allOf`s of repeated `$ref`s grow
    /// exponentially): validating one value would take exponential time.
    TooMuchWork {
        /// The subschema, as a JSON pointer fragment (`#/$defs/d0`).
        at: String,
        /// How many subschemas it applies to one value (saturating).
        count: u64,
    },
    /// A subschema whose longest chain of subschemas applied in place (a `$ref` to a
    /// `$ref` to …) is longer than [`MAX_IN_PLACE_DEPTH`]: the validator would recurse that
    /// deep for every value.
    TooDeep {
        /// The subschema, as a JSON pointer fragment.
        at: String,
        /// The chain's length.
        depth: u64,
    },
    /// More references than [`MAX_REFERENCES`] (across the contract's files): compiling
    /// chains of them takes quadratic time.
    TooManyReferences(usize),
    /// The schema is not valid under its dialect's meta-schema, names an unknown format, or references a
    /// resource outside its contract.
    Invalid(String),
}

impl From<InPlace> for SchemaError {
    fn from(found: InPlace) -> Self {
        match found {
            InPlace::Cycle(cycle) => SchemaError::RefCycle(cycle),
            InPlace::TooMuchWork { at, count } => SchemaError::TooMuchWork { at, count },
            InPlace::TooDeep { at, depth } => SchemaError::TooDeep { at, depth },
            InPlace::TooManyReferences(count) => SchemaError::TooManyReferences(count),
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchemaError::UnknownDialect(uri) => write!(
                f,
                "$schema {uri:?} is not supported: contracts use {:?}, {:?} or {:?} \
                 (a schema without $schema is Draft 2020-12)",
                Dialect::Draft2020_12.uri(),
                Dialect::Draft2019_09.uri(),
                Dialect::Draft7.uri(),
            ),
            SchemaError::Pattern { pattern, reason } => write!(
                f,
                "pattern `{pattern}` needs a backtracking regex engine or is invalid \
                 (patterns run on the linear-time `regex` engine): {reason}"
            ),
            SchemaError::TooMuchWork { at, count } => {
                write!(
                f,
                "{at} applies {} subschemas to every value it judges (its `allOf`/`anyOf`/`oneOf` \
                 branches and `$ref`s, expanded), more than {}: validation would take \
                 exponential time; reference a shared definition once instead of repeating it \
                 in nested branches",
                if *count == u64::MAX { "too many".to_owned() } else { count.to_string() },
                budget::MAX_IN_PLACE
            )
            }
            SchemaError::TooDeep { at, depth } => write!(
                f,
                "{at} applies a chain of {depth} subschemas in place, one inside the other \
                 (`$ref`s to `$ref`s, nested branches), longer than {}: the validator would \
                 recurse that deep for every value; reference the last definition directly",
                budget::MAX_IN_PLACE_DEPTH
            ),
            SchemaError::TooManyReferences(count) => write!(
                f,
                "the schema holds {count} references (`$ref`, `$dynamicRef`, \
                 `$recursiveRef`), more than {}: compiling chains of them takes time \
                 quadratic in their length",
                budget::MAX_REFERENCES
            ),
            SchemaError::PatternTooBig { pattern, limit } => write!(
                f,
                "pattern `{pattern}` compiles to more than the `regex` engine's size limit \
                 ({limit} bytes): bound its repetitions, or use an ASCII class such as \
                 `[A-Za-z0-9_]` (or `(?-u:\\w)`) in place of the Unicode-aware `\\w`"
            ),
            SchemaError::PatternTooCostly { pattern, positions } => write!(
                f,
                "pattern `{pattern}` expands to {} characters and classes, more than \
                 {MAX_PATTERN_POSITIONS}: a string could cost it that many steps a byte; \
                 bound the string with `maxLength` and the pattern's repetitions with \
                 `*`/`+` or small counts, never a counted group inside a counted group",
                if *positions == u64::MAX {
                    "too many".to_owned()
                } else {
                    positions.to_string()
                },
            ),
            SchemaError::RefCycle(cycle) => write!(
                f,
                "reference cycle {} applies to the same value forever without stepping into \
                 a member or an item, so it admits any value: make the recursion go through \
                 `properties`, `items` or another keyword that applies to a child value",
                cycle.join(" → ")
            ),
            SchemaError::Invalid(reason) => write!(f, "invalid schema: {reason}"),
        }
    }
}

impl std::error::Error for SchemaError {}

/// How a schema is compiled. Contracts always use the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaOptions {
    assert_formats: bool,
}

impl Default for SchemaOptions {
    /// `format` is an assertion.
    fn default() -> Self {
        Self {
            assert_formats: true,
        }
    }
}

impl SchemaOptions {
    /// Whether `format` is an assertion (default `true`, in every dialect). `false` gives
    /// the annotation-only behaviour the Draft 2019-09 and 2020-12 specifications default
    /// to; the conformance suite's core files are written for it.
    #[must_use]
    pub fn assert_formats(mut self, yes: bool) -> Self {
        self.assert_formats = yes;
        self
    }
}

/// A compiled schema and the digest of the document it came from.
pub struct CompiledSchema {
    /// For `serde_json` values, and for the diagnostic of a rejection.
    validator: Validator,
    /// For the guard's own parsed documents: the same schema, the same options.
    doc_validator: Validator<Doc>,
    dialect: Dialect,
    document: Value,
    sha256: String,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("dialect", &self.dialect)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Whether an instance this schema admits can hold a member or item at `pointer`
    /// (a conservative reading: `false` only where every branch rules it out — a closed
    /// object without it, a non-container type).
    pub fn can_contain(&self, pointer: &Pointer) -> bool {
        can_contain(self.document(), pointer.tokens())
    }

    /// Compile `document` (the bytes it was read from are digested as `source`), with
    /// `base_uri` for documents without `$id`, resolving references only in `resources`.
    ///
    /// # Errors
    ///
    /// [`SchemaError`] for an unknown `$schema`, a pattern the `regex` engine refuses, a
    /// document that is not valid under its dialect (meta-validation), an unknown `format`,
    /// or a reference outside `resources`.
    pub fn compile(
        document: Value,
        source: &[u8],
        base_uri: &str,
        resources: &Resources,
    ) -> Result<Self, SchemaError> {
        Self::compile_with(
            document,
            source,
            base_uri,
            resources,
            SchemaOptions::default(),
        )
    }

    /// [`CompiledSchema::compile`] with explicit [`SchemaOptions`].
    ///
    /// # Errors
    ///
    /// As [`CompiledSchema::compile`].
    pub fn compile_with(
        document: Value,
        source: &[u8],
        base_uri: &str,
        resources: &Resources,
        options: SchemaOptions,
    ) -> Result<Self, SchemaError> {
        // The dialect first: a schema of another draft is refused before any other file
        // is read.
        resources.note_id(&document);
        let dialect = match document.get("$schema") {
            None => Dialect::Draft2020_12,
            Some(uri) => {
                let uri = uri.as_str().unwrap_or_default();
                // A dialect of its own, or a meta-schema among the contract's own files
                // that declares 2020-12 or draft-07. (Not 2019-09: the validator reads a
                // custom meta-schema's `$vocabulary` only as an unknown draft, with
                // 2020-12's keywords, so `$recursiveRef` and `items` tuples would not mean
                // what 2019-09 says.)
                Dialect::from_uri(uri)
                    .or_else(|| {
                        let meta = resources.fetch(uri).ok().flatten()?;
                        meta.get("$schema")
                            .and_then(Value::as_str)
                            .and_then(Dialect::from_uri)
                            .filter(|d| *d != Dialect::Draft2019_09)
                    })
                    .ok_or_else(|| SchemaError::UnknownDialect(uri.to_owned()))?
            }
        };
        check_patterns(&document)?;
        let file_name = base_uri.rsplit('/').next().filter(|n| !n.is_empty());
        if let Some(found) = in_place_check(&document, file_name, dialect) {
            return Err(found.into());
        }
        // Across the contract's files: those a reference names, read as the build would.
        let directory = &base_uri[..base_uri.rfind('/').map_or(0, |i| i + 1)];
        let mut fetch = |name: &str| {
            resources
                .fetch(&format!("{directory}{name}"))
                .ok()
                .flatten()
        };
        if let Some(found) = in_place_check_across(
            &document,
            file_name.unwrap_or_default(),
            dialect,
            &mut fetch,
        ) {
            return Err(found.into());
        }
        let validator = Self::build(&document, dialect, base_uri, resources, options)?;
        let doc_validator = Self::build(&document, dialect, base_uri, resources, options)?;
        Ok(Self {
            validator,
            doc_validator,
            dialect,
            document,
            sha256: sha256_hex(source),
        })
    }

    /// A validator for the representation `F`, with the options every Airlock schema is
    /// compiled with.
    fn build<F: Json>(
        document: &Value,
        dialect: Dialect,
        base_uri: &str,
        resources: &Resources,
        options: SchemaOptions,
    ) -> Result<Validator<F>, SchemaError> {
        let mut builder = jsonschema::options_for::<F>()
            .should_validate_formats(options.assert_formats)
            .should_ignore_unknown_formats(false)
            .with_pattern_options(PatternOptions::regex())
            .with_retriever(LocalRetriever(resources.clone()))
            .with_base_uri(base_uri);
        // Explicit for a dialect's own URI, and for a contract-local meta-schema declaring
        // draft-07 (which has no vocabularies): the validator would read that as an
        // unknown draft, with 2020-12's keywords. A local meta-schema declaring 2020-12 is
        // left to the validator, which reads its `$vocabulary` from it.
        let own_uri = document
            .get("$schema")
            .and_then(Value::as_str)
            .is_none_or(|uri| Dialect::from_uri(uri).is_some());
        if own_uri || dialect == Dialect::Draft7 {
            builder = builder.with_draft(dialect.draft());
        }
        builder
            .build(document)
            .map_err(|e| SchemaError::Invalid(e.to_string()))
    }

    /// The dialect the schema is compiled in.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The schema document.
    pub fn document(&self) -> &Value {
        &self.document
    }

    /// SHA-256 (hex) of the schema's source bytes.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// Strict-parse `bytes` (at most `max_depth` containers deep) and validate them: the
    /// guard's stages 2 and 3, without a contract.
    ///
    /// # Errors
    ///
    /// The [`Diagnostic`] of the parse error (stage `parse`, with its byte offset) or of
    /// the first schema violation.
    pub fn validate_bytes(&self, bytes: &[u8], max_depth: usize) -> Result<(), Diagnostic> {
        let doc = parse_doc(bytes, max_depth).map_err(ParseError::into_diagnostic)?;
        self.validate_doc(doc.root())
    }

    /// Validate the guard's parsed document in place. A rejection is explained from the
    /// document too: an error shows an excerpt of its value, built only when read.
    pub(crate) fn validate_doc(&self, doc: Node<'_>) -> Result<(), Diagnostic> {
        if self.doc_validator.is_valid(doc) {
            return Ok(());
        }
        match self.doc_validator.validate(doc) {
            Err(error) => Err(diagnose(&error)),
            // The validity check and the explaining pass are one validator; should they
            // ever disagree, the response stays rejected.
            Ok(()) => Err(unexplained()),
        }
    }

    /// [`CompiledSchema::validate_doc`] for the guard: a rejected body of more than
    /// [`MAX_EXPLAINED_BYTES`] is not explained. Explaining keeps every error of every
    /// failed `oneOf`/`anyOf` branch (one per bad item of a large array), a few hundred
    /// bytes each.
    pub(crate) fn judge_doc(&self, doc: Node<'_>, body_len: usize) -> Result<(), Diagnostic> {
        if body_len <= MAX_EXPLAINED_BYTES {
            return self.validate_doc(doc);
        }
        if self.doc_validator.is_valid(doc) {
            return Ok(());
        }
        let message = format!(
            "the response is invalid under the schema; at {body_len} bytes it is not \
             explained (rejections are explained up to {MAX_EXPLAINED_BYTES} bytes, to keep \
             their memory near the body's size): `airlock validate` on the body says why"
        );
        Err(Diagnostic::new(
            Stage::Schema,
            "schema",
            message.clone(),
            message,
        ))
    }

    /// Validate `instance`; on failure, the operator diagnostic of the most relevant
    /// error (the branch of a `oneOf` that got furthest is kept as causes).
    ///
    /// # Errors
    ///
    /// The [`Diagnostic`] of the first schema violation.
    pub fn validate(&self, instance: &Value) -> Result<(), Diagnostic> {
        // The boolean check is the fast path; errors are built only for a rejection.
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        match self.validator.validate(instance) {
            Err(error) => Err(diagnose(&error)),
            Ok(()) => Err(unexplained()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compile(schema: Value) -> Result<CompiledSchema, SchemaError> {
        let bytes = serde_json::to_vec(&schema).unwrap();
        CompiledSchema::compile(
            schema,
            &bytes,
            "airlock:///test.schema.json",
            &Resources::new(),
        )
    }

    #[test]
    fn format_is_asserted() {
        let s = compile(json!({"type": "string", "format": "date-time"})).unwrap();
        assert!(s.is_valid(&json!("2026-12-02T10:00:00Z")));
        assert!(!s.is_valid(&json!("2026-12-02 10:00:00")));
        let d = s.validate(&json!("yesterday")).unwrap_err();
        assert_eq!(d.keyword(), "format");
    }

    #[test]
    fn unknown_format_is_a_load_error() {
        assert!(matches!(
            compile(json!({"type": "string", "format": "made-up"})),
            Err(SchemaError::Invalid(_))
        ));
    }

    #[test]
    fn backtracking_pattern_is_a_load_error_naming_the_pattern() {
        let err = compile(json!({"properties": {"a": {"pattern": "^(a)\\1$"}}})).unwrap_err();
        assert!(matches!(&err, SchemaError::Pattern { pattern, .. } if pattern == "^(a)\\1$"));
        assert!(err.to_string().contains("^(a)\\1$"));
        assert!(compile(json!({"pattern": "^(?=a)"})).is_err());
    }

    #[test]
    fn pattern_inside_const_is_data_not_a_pattern() {
        assert!(compile(json!({"const": {"pattern": "(?=x)"}})).is_ok());
    }

    #[test]
    fn remote_ref_is_a_load_error() {
        let err = compile(json!({"$ref": "https://example.com/schema.json"})).unwrap_err();
        assert!(err.to_string().contains("refused"), "{err}");
    }

    #[test]
    fn other_dialects_are_load_errors_naming_the_three_accepted() {
        for uri in [
            "http://json-schema.org/draft-04/schema#",
            "http://json-schema.org/draft-06/schema#",
            "https://json-schema.org/draft-07/schema#",
            "http://json-schema.org/schema#",
            "https://example.com/meta.json",
        ] {
            let err = compile(json!({"$schema": uri})).unwrap_err();
            assert!(
                matches!(&err, SchemaError::UnknownDialect(u) if u == uri),
                "{err:?}"
            );
            let text = err.to_string();
            for accepted in Dialect::ALL {
                assert!(text.contains(accepted.uri()), "{text}");
            }
        }
    }

    #[test]
    fn the_three_dialects_are_accepted_and_no_schema_is_2020_12() {
        let cases = [
            ("http://json-schema.org/draft-07/schema#", Dialect::Draft7),
            ("http://json-schema.org/draft-07/schema", Dialect::Draft7),
            (
                "https://json-schema.org/draft/2019-09/schema",
                Dialect::Draft2019_09,
            ),
            (
                "https://json-schema.org/draft/2019-09/schema#",
                Dialect::Draft2019_09,
            ),
            (DRAFT_2020_12, Dialect::Draft2020_12),
        ];
        for (uri, dialect) in cases {
            let s = compile(json!({"$schema": uri, "type": "string"})).unwrap();
            assert_eq!(s.dialect(), dialect, "{uri}");
        }
        assert_eq!(compile(json!({})).unwrap().dialect(), Dialect::Draft2020_12);
    }

    #[test]
    fn format_is_asserted_in_every_dialect() {
        for dialect in Dialect::ALL {
            let s = compile(json!({"$schema": dialect.uri(), "format": "date-time"})).unwrap();
            assert!(s.is_valid(&json!("2026-12-02T10:00:00Z")), "{dialect}");
            assert!(!s.is_valid(&json!("2026-12-02 10:00:00")), "{dialect}");
            assert!(s.validate_bytes(b"\"tomorrow\"", 8).is_err(), "{dialect}");
            let unknown = json!({"$schema": dialect.uri(), "format": "made-up"});
            assert!(
                matches!(compile(unknown), Err(SchemaError::Invalid(_))),
                "{dialect}"
            );
        }
    }

    #[test]
    fn remote_refs_and_backtracking_patterns_are_refused_in_every_dialect() {
        for dialect in Dialect::ALL {
            let remote = json!({"$schema": dialect.uri(), "$ref": "https://example.com/s.json"});
            let err = compile(remote).unwrap_err();
            assert!(err.to_string().contains("refused"), "{dialect}: {err}");
            let pattern = json!({"$schema": dialect.uri(), "pattern": "^(a)\\1$"});
            assert!(
                matches!(compile(pattern), Err(SchemaError::Pattern { .. })),
                "{dialect}"
            );
        }
    }

    #[test]
    fn a_contract_local_meta_schema_gives_the_dialect_it_declares() {
        let local = |declared: &str| {
            let mut resources = Resources::new();
            resources.insert(
                "airlock:///meta.json",
                json!({"$schema": declared, "$id": "airlock:///meta.json"}),
            );
            resources
        };
        let compile_with = |schema: Value, resources: &Resources| {
            CompiledSchema::compile(schema, b"{}", "airlock:///main.json", resources)
        };
        for dialect in [Dialect::Draft7, Dialect::Draft2020_12] {
            let schema = json!({"$schema": "airlock:///meta.json", "format": "date-time"});
            let s = compile_with(schema, &local(dialect.uri())).unwrap();
            assert_eq!(s.dialect(), dialect);
            assert!(!s.is_valid(&json!("yesterday")), "{dialect}");
        }
        // Read in draft-07's own rules: a tuple.
        let schema = json!({"$schema": "airlock:///meta.json",
            "items": [{"type": "string"}], "additionalItems": false});
        let s = compile_with(schema, &local(Dialect::Draft7.uri())).unwrap();
        assert!(s.is_valid(&json!(["a"])));
        assert!(!s.is_valid(&json!(["a", "b"])));
        // Refused: an unknown dialect, and 2019-09 (whose custom meta-schemas the validator
        // would read with 2020-12's keywords).
        for refused in ["http://json-schema.org/draft-04/schema#", DRAFT_2019_09] {
            let schema = json!({"$schema": "airlock:///meta.json"});
            let err = compile_with(schema, &local(refused));
            assert!(
                matches!(err, Err(SchemaError::UnknownDialect(_))),
                "{err:?}"
            );
        }
    }

    #[test]
    fn draft_07_keeps_its_own_semantics() {
        let draft7 = "http://json-schema.org/draft-07/schema#";
        // Tuples are `items` arrays, closed by `additionalItems`.
        let tuple = compile(json!({"$schema": draft7,
            "items": [{"type": "integer"}, {"type": "string"}], "additionalItems": false}))
        .unwrap();
        assert!(tuple.is_valid(&json!([1, "a"])));
        assert!(!tuple.is_valid(&json!([1, "a", null])));
        assert!(tuple.validate_bytes(b"[1, \"a\", null]", 8).is_err());
        // A `$ref` makes its siblings ignored.
        let sibling = compile(json!({"$schema": draft7,
            "definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "maxLength": 1}))
        .unwrap();
        assert!(sibling.is_valid(&json!("long")));
        assert!(!sibling.is_valid(&json!(1)));
        // An in-place cycle through `definitions` is a load error.
        let cycle = json!({"$schema": draft7,
            "definitions": {"a": {"anyOf": [{"$ref": "#/definitions/a"}]}}});
        assert!(matches!(compile(cycle), Err(SchemaError::RefCycle(_))));
    }

    #[test]
    fn meta_invalid_schema_is_a_load_error() {
        assert!(compile(json!({"type": "strng"})).is_err());
        assert!(compile(json!({"minLength": -1})).is_err());
    }

    #[test]
    fn local_resources_are_served_from_memory() {
        let mut resources = Resources::new();
        resources.insert(
            "airlock:///common.json",
            json!({"$defs": {"id": {"type": "string"}}}),
        );
        let schema = json!({"$ref": "common.json#/$defs/id"});
        let s = CompiledSchema::compile(schema, b"{}", "airlock:///main.json", &resources).unwrap();
        assert!(s.is_valid(&json!("x")));
        assert!(!s.is_valid(&json!(1)));
    }

    #[test]
    fn one_of_failure_keeps_the_branch_that_got_furthest_as_cause() {
        let s = compile(json!({"oneOf": [
            {"type": "object", "properties": {"ok": {"const": true}, "data": {"type": "object", "additionalProperties": false}}, "required": ["ok"]},
            {"type": "object", "properties": {"ok": {"const": false}}, "required": ["ok", "error"]}
        ]}))
        .unwrap();
        let d = s
            .validate(&json!({"ok": true, "data": {"admin_override": true}}))
            .unwrap_err();
        assert_eq!(d.keyword(), "oneOf");
        assert_eq!(d.causes()[0].keyword(), "additionalProperties");
        assert_eq!(d.causes()[0].instance_path(), Some("/data"));
    }

    #[test]
    fn a_success_with_an_extra_top_level_member_is_explained_by_the_success_branch() {
        let s = compile(json!({"oneOf": [
            {"type": "object", "additionalProperties": false, "required": ["outcome", "data"],
             "properties": {"outcome": {"const": "success"}, "data": {"type": "object"}}},
            {"type": "object", "additionalProperties": false, "required": ["outcome", "error"],
             "properties": {"outcome": {"const": "failure"}, "error": {"type": "object"}}}
        ]}))
        .unwrap();
        let d = s
            .validate(&json!({"outcome": "success", "data": {}, "admin_override": true}))
            .unwrap_err();
        assert_eq!(d.causes().len(), 1, "{:?}", d.causes());
        assert_eq!(d.causes()[0].keyword(), "additionalProperties");
        assert!(d.causes()[0].message().contains("admin_override"));
        // A failure with a stray member is still explained by the failure branch.
        let d = s
            .validate(&json!({"outcome": "failure", "error": {}, "data": {}}))
            .unwrap_err();
        assert_eq!(d.causes().len(), 1, "{:?}", d.causes());
        assert!(d.causes()[0].message().contains("'data' was unexpected"));
    }

    #[test]
    fn a_pattern_past_the_regex_size_limit_is_refused_for_its_size_not_for_backtracking() {
        let err = compile(json!({"pattern": "^\\w{1,5000}$"})).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, SchemaError::PatternTooBig { .. }), "{err:?}");
        assert!(text.contains("size limit"), "{text}");
        assert!(!text.contains("backtracking"), "{text}");
    }

    #[test]
    fn a_pattern_whose_expanded_size_passes_the_bound_is_refused_at_load() {
        // Nested counted groups: 30 000 and 5 000 positions (7.5 s and 0.3 s on one string).
        for pattern in [
            "^(b{1,300}){1,100}$",
            "^(b{1,100}){1,50}$",
            "^(?:ab{2}){3000}$",
        ] {
            let err = compile(json!({"pattern": pattern})).unwrap_err();
            assert!(
                matches!(err, SchemaError::PatternTooCostly { .. }),
                "{pattern}: {err:?}"
            );
            assert!(err.to_string().contains("maxLength"), "{err}");
            let err = compile(json!({"patternProperties": {pattern: true}})).unwrap_err();
            assert!(
                matches!(err, SchemaError::PatternTooCostly { .. }),
                "{err:?}"
            );
        }
        // What honest schemas write loads: Unicode classes count once, `*`/`+` once or
        // twice, a length bound of a thousand characters is a thousand.
        for pattern in [
            "^\\w{1,64}$",
            "^[a-zA-Z0-9._%+-]{1,64}@[a-zA-Z0-9.-]{1,255}\\.[a-zA-Z]{2,63}$",
            "^.{0,1000}$",
            "^[\\s\\S]{0,4096}$",
            "^(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}$",
            "^(a+)+$",
        ] {
            assert!(compile(json!({"pattern": pattern})).is_ok(), "{pattern}");
        }
        assert!(compile(json!({"pattern": "^.{0,4097}$"})).is_err());
    }

    #[test]
    fn can_contain_follows_refs_and_composition_and_respects_closed_objects() {
        let root = json!({
            "oneOf": [{"$ref": "#/$defs/ok"}],
            "$defs": {"ok": {"type": "object", "additionalProperties": false,
                "properties": {"data": {"allOf": [{"properties": {"subject": {}}}], "unevaluatedProperties": false}}}}
        });
        let t = |p: &str| crate::pointer::Pointer::parse(p).unwrap().tokens().to_vec();
        assert!(can_contain(&root, &t("/data/subject")));
        assert!(!can_contain(&root, &t("/data/subjekt")));
        assert!(!can_contain(&root, &t("/dta/subject")));
        assert!(can_contain(&json!({}), &t("/anything/at/all")));
    }

    /// Every level reaches the next twice (a `$ref` beside keywords that refuse the
    /// member is read again as draft-07 would; two `allOf` branches): walked anew at each
    /// path, 2^64 and 2^30 steps; answered once per level now.
    #[test]
    fn can_contain_answers_each_subschema_once() {
        let t = |p: &str| crate::pointer::Pointer::parse(p).unwrap().tokens().to_vec();
        let mut defs = serde_json::Map::new();
        for i in 0..64 {
            defs.insert(
                format!("d{i}"),
                json!({"$ref": format!("#/$defs/d{}", i + 1), "additionalProperties": false}),
            );
        }
        defs.insert("d64".into(), json!({}));
        let beside = json!({"$ref": "#/$defs/d0", "$defs": defs});
        assert!(can_contain(&beside, &t("/data/x")));
        let mut defs = serde_json::Map::new();
        // 30 levels of two hops each (the branch, then its target): within the 64 hops
        // past which the walk stays permissive.
        for i in 0..30 {
            let next = format!("#/$defs/d{}", i + 1);
            defs.insert(
                format!("d{i}"),
                json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(
            "d30".into(),
            json!({"type": "object", "properties": {"data": {}}, "additionalProperties": false}),
        );
        let doubled = json!({"$ref": "#/$defs/d0", "$defs": defs});
        assert!(can_contain(&doubled, &t("/data")));
        assert!(!can_contain(&doubled, &t("/other")));
    }

    #[test]
    fn can_contain_reads_each_applicator_by_what_it_means() {
        let t = |p: &str| crate::pointer::Pointer::parse(p).unwrap().tokens().to_vec();
        let closed = json!({"type": "object", "additionalProperties": false});
        let open = json!({"type": "object"});
        let under =
            |keyword: &str, branches: Value| json!({"properties": {"data": {keyword: branches}}});
        // anyOf / oneOf: one branch that leaves the object open is enough (was refused:
        // "names a member the schema cannot contain").
        for keyword in ["anyOf", "oneOf"] {
            let root = under(keyword, json!([closed, open]));
            assert!(can_contain(&root, &t("/data/x")), "{keyword}");
            let root = under(keyword, json!([closed, closed]));
            assert!(!can_contain(&root, &t("/data/x")), "{keyword}");
        }
        // allOf: every branch applies, so any one closing the object rules it out.
        assert!(!can_contain(
            &under("allOf", json!([closed, open])),
            &t("/data/x")
        ));
        assert!(can_contain(
            &under("allOf", json!([open, open])),
            &t("/data/x")
        ));
        // if/then/else: either path.
        let root = json!({"properties": {"data": {"if": {"required": ["k"]}, "then": closed, "else": open}}});
        assert!(can_contain(&root, &t("/data/x")));
        let root = json!({"properties": {"data": {"if": {"required": ["k"]}, "then": closed, "else": closed}}});
        assert!(!can_contain(&root, &t("/data/x")));
        let root = json!({"properties": {"data": {"if": {"required": ["k"]}, "then": closed}}});
        assert!(
            can_contain(&root, &t("/data/x")),
            "no else: that path is free"
        );
        // A branch that declares the member admits it even where another is closed.
        let named = json!({"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": false});
        assert!(can_contain(
            &under("anyOf", json!([closed, named])),
            &t("/data/x")
        ));
        assert!(!can_contain(
            &under("allOf", json!([closed, named])),
            &t("/data/x")
        ));
        // A $ref applies with its siblings: a closed target rules a member out.
        let root = json!({"$defs": {"c": closed}, "properties": {"data": {"$ref": "#/$defs/c", "properties": {"x": {}}}}});
        assert!(!can_contain(&root, &t("/data/x")));
        // Siblings a draft-07 `$ref` ignores do not rule out what the target allows.
        let root = json!({"$defs": {"o": {"properties": {"x": {}}}}, "properties": {"data": {"$ref": "#/$defs/o", "additionalProperties": false}}});
        assert!(can_contain(&root, &t("/data/x")));
    }
}
