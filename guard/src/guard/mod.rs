//! The pipeline: limits → parse → decode → schema → binding → checks → projection →
//! audit, in that order, for every body. The agent value is made in exactly two places: the
//! projection of an admitted response and the fixed failure.

use std::io::Read;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::audit::{bounded, AdapterInfo, AuditRecord, Diagnostic, Sha256Digest, Stage, Verdict};
use crate::binding::{bind, bind_params};
use crate::checks::CustomCheck;
use crate::contract::Contract;
use crate::doc::Node;
use crate::limits::{read_limited, ReadError};
use crate::mcp::STRUCTURED_CONTENT;
use crate::projection::{AgentValue, ErrorCode, Projection};
use crate::request::Request;
use crate::retry::TransportError;

mod call;
mod decode;

pub use call::RetryOutcome;
use decode::{decode, with_reparsed, Decoded};

/// What the stages made of a body: the agent's value, the verdict, and the operator's
/// diagnostic when an admitted answer still has one (a JSON-RPC error).
type Judgement = (AgentValue, Verdict, Option<Diagnostic>);

/// The runtime boundary for one contract. Build it once, share it (`Send + Sync`), and
/// call [`Guard::admit`] on every raw response.
///
/// ```
/// use airlock_guard::{Contract, Guard, Request};
///
/// let guard = Guard::new(Contract::load("../schemas/review_status")?);
/// let request = Request::new("req.J7q94MkP", "2026-12-02T10:00:00Z".parse()?)
///     .param("change_id", "CR-1042");
/// let body = br#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success",
///   "data":{"change_id":"CR-1042","decision":"approved","reviewed_by":"Ada"}}"#;
/// let admission = guard.admit(&request, body);
/// assert!(admission.is_admitted());
/// assert_eq!(admission.agent().data().unwrap()["decision"], "approved");
///
/// // One member too many: the agent gets the fixed failure, the operator the reason.
/// let hostile = br#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success",
///   "data":{"change_id":"CR-1042","decision":"approved","reviewed_by":"Ada","admin_override":true}}"#;
/// let admission = guard.admit(&request, hostile);
/// assert_eq!(
///     admission.agent().to_json_string(),
///     r#"{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}"#
/// );
/// println!("{}", admission.audit().to_json_line());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Guard {
    contract: Contract,
    tool: Arc<str>,
    schema_sha256: Arc<str>,
    vendor_schema_sha256: Option<Arc<str>>,
    projection: Arc<Projection>,
    /// The projection of an MCP tool error's fields (`[input] error_fields`).
    error_projection: Option<Arc<Projection>>,
    adapter: Option<Arc<AdapterInfo>>,
    endpoint: Option<Arc<str>>,
    custom: Vec<Arc<dyn CustomCheck>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("contract", &self.contract.tool())
            .field("adapter", &self.adapter)
            .field("endpoint", &self.endpoint)
            .field("custom_checks", &self.custom.len())
            .finish()
    }
}

/// Builds a [`Guard`] with audit identity and custom checks.
#[derive(Debug)]
pub struct GuardBuilder {
    guard: Guard,
}

impl GuardBuilder {
    /// Name and version of the adapter, recorded in every audit record (default: none).
    #[must_use]
    pub fn adapter(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.guard.adapter = Some(Arc::new(AdapterInfo {
            name: name.into(),
            version: version.into(),
        }));
        self
    }

    /// The upstream endpoint, recorded in every audit record (default: none).
    #[must_use]
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.guard.endpoint = Some(Arc::from(endpoint.into()));
        self
    }

    /// Add a custom semantic check, run after the contract's own (default: none).
    #[must_use]
    pub fn check(mut self, check: impl CustomCheck + 'static) -> Self {
        self.guard.custom.push(Arc::new(check));
        self
    }

    /// The guard.
    pub fn build(self) -> Guard {
        self.guard
    }
}

/// The judgement of one response: what the agent gets and what the operator logs.
#[derive(Debug, Clone)]
pub struct Admission {
    agent: AgentValue,
    audit: AuditRecord,
}

impl Admission {
    /// The value for the agent: the projection or a fixed failure.
    pub fn agent(&self) -> &AgentValue {
        &self.agent
    }

    /// The operator's record, with the diagnostic of a rejection.
    pub fn audit(&self) -> &AuditRecord {
        &self.audit
    }

    /// The rejection diagnostic, if any.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        self.audit.diagnostic()
    }

    /// Whether the response was admitted (a success, or a valid failure envelope).
    pub fn is_admitted(&self) -> bool {
        self.audit.verdict().is_admitted()
    }

    /// Split into the agent value and the audit record.
    pub fn into_parts(self) -> (AgentValue, AuditRecord) {
        (self.agent, self.audit)
    }

    /// Number this admission as attempt `attempt` (from 1) of a retry driver: its audit
    /// record carries the number. [`Guard::call`] does it for its attempts; a driver of
    /// its own (the Node binding's `call`, which awaits JavaScript between attempts) calls
    /// this.
    pub fn set_attempt(&mut self, attempt: u32) {
        self.audit.attempt = Some(attempt);
    }
}

impl Guard {
    /// A guard for `contract` with no adapter identity and no custom checks.
    pub fn new(contract: Contract) -> Self {
        Self {
            tool: Arc::from(contract.tool()),
            schema_sha256: Arc::from(contract.schema().sha256()),
            vendor_schema_sha256: contract.vendor_schema().map(|s| Arc::from(s.sha256())),
            projection: Arc::new(Projection::new(
                contract.agent_fields(),
                contract.input().mcp().is_none(),
            )),
            error_projection: contract
                .input()
                .mcp()
                .filter(|mcp| !mcp.error_fields.is_empty())
                .map(|mcp| Arc::new(Projection::new(&mcp.error_fields, false))),
            contract,
            adapter: None,
            endpoint: None,
            custom: Vec::new(),
        }
    }

    /// Start configuring a guard for `contract`.
    pub fn builder(contract: Contract) -> GuardBuilder {
        GuardBuilder {
            guard: Self::new(contract),
        }
    }

    /// The contract.
    pub fn contract(&self) -> &Contract {
        &self.contract
    }

    /// Judge a raw response body to `request`.
    pub fn admit(&self, request: &Request, body: &[u8]) -> Admission {
        let max_bytes = self.contract.limits().max_bytes;
        if body.len() as u64 > max_bytes {
            // Judged on the bytes a reader would have taken: the limit plus one.
            let read = usize::try_from(max_bytes + 1).unwrap_or(usize::MAX);
            return self.too_large(request, &body[..read]);
        }
        let mut audit = self.record(request, Stage::Limits);
        audit.raw_sha256 = Some(Sha256Digest::of(body));
        audit.raw_len = Some(body.len() as u64);
        self.judge(request, body, audit)
    }

    /// Judge a response read from `reader`: at most `max_bytes` are read; one byte more
    /// rejects without reading the rest. A read error is a transport failure.
    pub fn admit_reader<R: Read>(&self, request: &Request, reader: R) -> Admission {
        let max_bytes = self.contract.limits().max_bytes;
        match read_limited(reader, max_bytes) {
            Ok(body) => self.admit(request, &body),
            Err(ReadError::TooLarge { read }) => self.too_large(request, &read),
            Err(ReadError::Io(error)) => {
                self.admit_transport_error(request, TransportError::from_io(&error))
            }
        }
    }

    /// The agent's view of a transport failure: `UPSTREAM_UNAVAILABLE`, retryable as the
    /// policy says.
    pub fn admit_transport_error(&self, request: &Request, error: TransportError) -> Admission {
        let mut audit = self.record(request, Stage::Transport);
        audit.verdict = Verdict::TransportFailure;
        audit.diagnostic = Some(Diagnostic::new(
            Stage::Transport,
            error.as_str(),
            format!("transport failure: {error}"),
            format!("transport failure: {error}"),
        ));
        let (code, retryable) = match self.contract.input().mcp() {
            // The call reached a tool with side effects: its effect is unknown.
            Some(mcp) if !mcp.read_only => mcp.unverified(),
            _ => {
                let code = ErrorCode::UpstreamUnavailable;
                (code, self.contract.retry().is_retryable(code))
            }
        };
        Admission {
            agent: AgentValue::failure(&self.tool, &audit.request_id, code, retryable),
            audit,
        }
    }

    /// Reject an over-size body; the audit digests the `max_bytes + 1` bytes read.
    fn too_large(&self, request: &Request, read: &[u8]) -> Admission {
        let max_bytes = self.contract.limits().max_bytes;
        let mut audit = self.record(request, Stage::Limits);
        audit.raw_sha256 = Some(Sha256Digest::of(read));
        audit.raw_len = Some(read.len() as u64);
        let message = format!("body exceeds max_bytes = {max_bytes}");
        let diagnostic = Diagnostic::new(Stage::Limits, "max_bytes", message.clone(), message)
            .with_byte_offset(usize::try_from(max_bytes).unwrap_or(usize::MAX));
        self.rejected(audit, diagnostic)
    }

    fn record(&self, request: &Request, stage: Stage) -> AuditRecord {
        AuditRecord {
            tool: Arc::clone(&self.tool),
            contract_version: self.contract.version(),
            schema_sha256: Arc::clone(&self.schema_sha256),
            vendor_schema_sha256: self.vendor_schema_sha256.clone(),
            adapter: self.adapter.clone(),
            endpoint: self.endpoint.clone(),
            request_id: Arc::from(request.request_id.as_str()),
            attempt: None,
            stage,
            verdict: Verdict::Rejected,
            diagnostic: None,
            raw_sha256: None,
            raw_len: None,
        }
    }

    /// The admission of a rejected body: the diagnostic in the audit, the fixed failure
    /// for the agent.
    fn rejected(&self, mut audit: AuditRecord, diagnostic: Diagnostic) -> Admission {
        audit.stage = diagnostic.stage();
        audit.verdict = Verdict::Rejected;
        audit.diagnostic = Some(diagnostic);
        let (code, retryable) = self.unverified();
        Admission {
            agent: AgentValue::failure(&self.tool, &audit.request_id, code, retryable),
            audit,
        }
    }

    /// The failure a response that could not be verified becomes: `INVALID_RESPONSE`,
    /// or for an MCP tool with side effects `OUTCOME_UNVERIFIED` (see
    /// [`McpInput::unverified`](crate::mcp::McpInput::unverified)).
    pub fn unverified(&self) -> (ErrorCode, bool) {
        self.contract
            .input()
            .mcp()
            .map_or((ErrorCode::InvalidResponse, false), |mcp| mcp.unverified())
    }

    /// Stages 2 to 6 on a body already within the byte limit.
    fn judge(&self, request: &Request, body: &[u8], audit: AuditRecord) -> Admission {
        match self.evaluate(request, &audit.request_id, body) {
            Ok((agent, verdict, diagnostic)) => Admission {
                agent,
                audit: AuditRecord {
                    stage: diagnostic
                        .as_ref()
                        .map_or(Stage::Projection, Diagnostic::stage),
                    verdict,
                    diagnostic,
                    ..audit
                },
            },
            Err(diagnostic) => self.rejected(audit, diagnostic),
        }
    }

    fn evaluate(
        &self,
        request: &Request,
        request_id: &Arc<str>,
        body: &[u8],
    ) -> Result<Judgement, Diagnostic> {
        self.check_request_tool(request)?;
        let contract = &self.contract;
        let mut parsed = None;
        let max_depth = contract.limits().max_depth;
        match decode(contract.input(), max_depth, request, body, &mut parsed)? {
            Decoded::Envelope(doc) => self.judge_envelope(request, request_id, doc, body.len()),
            Decoded::Mapped(data) => self.judge_built_envelope(request, request_id, data),
            Decoded::Structured(structured) => {
                self.judge_structured(request, request_id, structured, body.len())
            }
            Decoded::Failure { code, structured } => {
                let retryable = contract.retry().is_retryable(code);
                let agent =
                    self.upstream_failure(request_id, code, retryable, structured, body.len());
                Ok((agent, Verdict::UpstreamFailure, None))
            }
            Decoded::RpcError(diagnostic) => {
                let code = ErrorCode::UpstreamUnavailable;
                let retryable = contract.retry().is_retryable(code);
                let agent = AgentValue::failure(&self.tool, request_id, code, retryable);
                Ok((agent, Verdict::TransportFailure, Some(diagnostic)))
            }
        }
    }

    /// A request that names a tool names this contract's.
    fn check_request_tool(&self, request: &Request) -> Result<(), Diagnostic> {
        let contract = &self.contract;
        match request.tool.as_deref().filter(|t| *t != contract.tool()) {
            None => Ok(()),
            Some(tool) => Err(Diagnostic::new(
                Stage::Request,
                "tool",
                format!(
                    "the request is for {tool:?}, this contract is {:?}",
                    contract.tool()
                ),
                "the request is for another tool",
            )),
        }
    }

    /// Stages 3 to 6 on an envelope, as it arrived or as the guard built it (`len` bytes).
    fn judge_envelope(
        &self,
        request: &Request,
        request_id: &Arc<str>,
        doc: Node<'_>,
        len: usize,
    ) -> Result<Judgement, Diagnostic> {
        self.contract.schema().judge_doc(doc, len)?;
        bind(request, doc, self.contract.checks())?;
        self.semantic_checks(request, doc)?;
        self.project(request_id, doc)
    }

    /// The envelope the guard builds around `data` mapped from a vendor document or a
    /// command's output, judged like an upstream envelope by the later stages.
    fn judge_built_envelope(
        &self,
        request: &Request,
        request_id: &Arc<str>,
        data: Map<String, Value>,
    ) -> Result<Judgement, Diagnostic> {
        let envelope = serde_json::json!({
            "tool": &*self.tool,
            "request_id": &**request_id,
            "outcome": "success",
            "data": data,
        });
        // Wrapping `data` adds one level.
        let max_depth = self.contract.limits().max_depth.saturating_add(1);
        with_reparsed(&envelope, max_depth, |doc, len| {
            self.judge_envelope(request, request_id, doc, len)
        })
    }

    /// The envelope pipeline's own stages on an MCP result's `structuredContent`, its
    /// diagnostics reported under [`STRUCTURED_CONTENT`].
    fn judge_structured(
        &self,
        request: &Request,
        request_id: &Arc<str>,
        structured: Node<'_>,
        len: usize,
    ) -> Result<Judgement, Diagnostic> {
        let contract = &self.contract;
        let under = |d: Diagnostic| d.under(STRUCTURED_CONTENT);
        contract
            .schema()
            .judge_doc(structured, len)
            .map_err(under)?;
        bind_params(request, structured, contract.checks()).map_err(under)?;
        self.semantic_checks(request, structured).map_err(under)?;
        let data = self.projection.project(structured);
        Ok((
            AgentValue::success(&self.tool, request_id, data),
            Verdict::Admitted,
            None,
        ))
    }

    /// A failure the upstream declared: the fixed failure with its code, and — for an MCP
    /// tool's own error, when the contract has an error schema that the error's
    /// `structuredContent` honours — the projected error fields as `error.details`. An
    /// error the schema refuses still is the tool's error: the agent gets the code alone.
    fn upstream_failure(
        &self,
        request_id: &Arc<str>,
        code: ErrorCode,
        retryable: bool,
        structured: Option<Node<'_>>,
        len: usize,
    ) -> AgentValue {
        let plain = || AgentValue::failure(&self.tool, request_id, code, retryable);
        let (Some(schema), Some(projection), Some(structured)) = (
            self.contract.error_schema(),
            self.error_projection.as_deref(),
            structured.filter(|s| s.is_object()),
        ) else {
            return plain();
        };
        if schema.judge_doc(structured, len).is_err() {
            return plain();
        }
        let details = projection.project(structured);
        AgentValue::tool_failure(&self.tool, request_id, code, retryable, details)
    }

    /// Stage 5: the contract's semantic checks, then the custom ones, on `doc`.
    fn semantic_checks(&self, request: &Request, doc: Node<'_>) -> Result<(), Diagnostic> {
        for check in self
            .contract
            .checks()
            .iter()
            .filter(|c| c.stage() == Stage::Checks)
        {
            check.run_doc(request, doc)?;
        }
        if !self.custom.is_empty() {
            // Custom checks read `serde_json` values: only guards that have some pay for
            // the copy.
            let value = doc.to_value();
            for check in &self.custom {
                check
                    .check(request, &value)
                    .map_err(|f| f.into_diagnostic(check.name()))?;
            }
        }
        Ok(())
    }

    /// Stage 6: the agent value of an admitted envelope.
    fn project(&self, request_id: &Arc<str>, doc: Node<'_>) -> Result<Judgement, Diagnostic> {
        let tool = &self.tool;
        match doc.get("outcome").and_then(Node::as_str) {
            Some("success") => {
                let data = self.projection.project(doc);
                Ok((
                    AgentValue::success(tool, request_id, data),
                    Verdict::Admitted,
                    None,
                ))
            }
            Some("failure") => {
                let wire = doc.get("error").and_then(|error| error.get("code"));
                let code = wire
                    .and_then(Node::as_str)
                    .and_then(ErrorCode::envelope_from_wire)
                    .ok_or_else(|| {
                        let shown = wire.map_or_else(|| "null".to_owned(), |w| bounded(&w));
                        Diagnostic::new(
                            Stage::Projection,
                            "error_code",
                            format!(
                                "failure code {shown} is not one of {:?}",
                                ErrorCode::ENVELOPE.map(ErrorCode::as_str)
                            ),
                            "failure code is outside the closed set",
                        )
                        .with_instance_path("/error/code")
                    })?;
                let retryable = self.contract.retry().is_retryable(code);
                Ok((
                    AgentValue::failure(tool, request_id, code, retryable),
                    Verdict::UpstreamFailure,
                    None,
                ))
            }
            _ => Err(Diagnostic::new(
                Stage::Projection,
                "outcome",
                "the response is not an envelope: `outcome` is neither \"success\" nor \"failure\"",
                "the response is not an envelope",
            )
            .with_instance_path("/outcome")),
        }
    }
}
