//! `Guard`: one contract's runtime boundary. `admit` judges with the interpreter detached;
//! `call` drives `airlock_guard::Guard::call` and attaches only to run the fetch function.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use airlock_guard::{Contract, StopReason, TransportError};
use pyo3::exceptions::{
    PyBlockingIOError, PyConnectionRefusedError, PyException, PyOSError, PyTimeoutError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::admission::{Admission, CallOutcome, RetryPolicy};
use crate::request::Request;
use crate::ContractError;

/// The runtime boundary for one contract. Load it once, share it between threads, and call
/// `admit` on every raw response.
#[pyclass(frozen, module = "airlock_guard")]
#[derive(Debug)]
pub struct Guard {
    inner: airlock_guard::Guard,
}

#[pymethods]
impl Guard {
    /// Load the contract folder `path` (`schemas/<tool>`). `adapter` is `(name, version)`
    /// and `endpoint` the upstream's address, both recorded in every audit record.
    ///
    /// Raises `ContractError` (its message names the file) when the contract does not load.
    #[staticmethod]
    #[pyo3(signature = (path, *, adapter = None, endpoint = None))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        adapter: Option<(String, String)>,
        endpoint: Option<String>,
    ) -> PyResult<Self> {
        let contract = py.detach(|| Contract::load(&path)).map_err(|e| {
            ContractError::new_err(format!("loading contract {}: {e}", path.display()))
        })?;
        let mut builder = airlock_guard::Guard::builder(contract);
        if let Some((name, version)) = adapter {
            builder = builder.adapter(name, version);
        }
        if let Some(endpoint) = endpoint {
            builder = builder.endpoint(endpoint);
        }
        Ok(Self {
            inner: builder.build(),
        })
    }

    /// Load several contract folders: a dict from tool name to guard. Two folders with one
    /// tool name are a `ContractError`.
    #[staticmethod]
    #[pyo3(signature = (paths, *, adapter = None, endpoint = None))]
    fn load_all(
        py: Python<'_>,
        paths: Vec<PathBuf>,
        adapter: Option<(String, String)>,
        endpoint: Option<String>,
    ) -> PyResult<BTreeMap<String, Guard>> {
        let mut guards = BTreeMap::new();
        let mut from = BTreeMap::new();
        for path in paths {
            let guard = Self::load(py, path.clone(), adapter.clone(), endpoint.clone())?;
            let tool = guard.inner.contract().tool().to_owned();
            if let Some(first) = from.insert(tool.clone(), path.clone()) {
                return Err(ContractError::new_err(format!(
                    "loading contract {}: tool {tool:?} is also the tool of {}",
                    path.display(),
                    first.display()
                )));
            }
            guards.insert(tool, guard);
        }
        Ok(guards)
    }

    /// The contract's tool name.
    #[getter]
    fn tool(&self) -> &str {
        self.inner.contract().tool()
    }

    /// The contract's current version.
    #[getter]
    fn contract_version(&self) -> u32 {
        self.inner.contract().version()
    }

    /// The byte limit: read at most `max_bytes + 1` bytes of a body before `admit`.
    #[getter]
    fn max_bytes(&self) -> u64 {
        self.inner.contract().limits().max_bytes
    }

    /// Whether this is an MCP tool contract (the agent is given `call_tool_result`).
    #[getter]
    fn is_mcp(&self) -> bool {
        self.inner.contract().input().mcp().is_some()
    }

    /// The contract's retry policy.
    #[getter]
    fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy {
            inner: self.inner.contract().retry().clone(),
        }
    }

    /// Judge the raw response `raw` (bytes) to `request` (a `Request` or a dict). Runs with
    /// the interpreter detached: other Python threads go on meanwhile.
    fn admit(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyAny>,
        raw: &Bound<'_, PyAny>,
    ) -> PyResult<Admission> {
        let request = Request::extract(request)?;
        let body = crate::body_bytes(raw)?;
        let body: &[u8] = &body;
        let inner = py.detach(|| self.inner.admit(&request.inner, body));
        Ok(self.admission(inner))
    }

    /// The agent's view of a transport failure (`kind`: `"timeout"`, `"connection_reset"`
    /// or `"unreachable"`): `UPSTREAM_UNAVAILABLE`, retryable as the policy says.
    fn admit_transport_error(&self, request: &Bound<'_, PyAny>, kind: &str) -> PyResult<Admission> {
        let request = Request::extract(request)?;
        let error = transport_kind(kind)?;
        Ok(self.admission(self.inner.admit_transport_error(&request.inner, error)))
    }

    /// Whether the driver of `Guard.call` would make another attempt after `admission`, the
    /// result of attempt number `attempt`, `elapsed` seconds after the first started: its
    /// failure is retryable by the policy, attempts remain, and the deadline has not passed.
    #[pyo3(signature = (admission, attempt, elapsed = 0.0))]
    fn should_retry(&self, admission: &Admission, attempt: u32, elapsed: f64) -> bool {
        self.stop_after(admission, attempt, elapsed).is_none()
    }

    /// Call the upstream under the contract's retry policy, judging every attempt afresh
    /// (`airlock_guard::Guard::call`). `fetch(attempt)` gets the 1-based attempt number and
    /// returns the raw body (bytes, bytearray or memoryview). It signals a transport failure
    /// by raising `TransportError(kind)`, `TimeoutError` (timeout), `ConnectionRefusedError`
    /// or a DNS failure (unreachable), or any other `OSError` (connection_reset); a
    /// `urllib.error.URLError` is judged by the socket error it wraps. An
    /// `urllib.error.HTTPError` is an answer: its body is judged, whatever the status. Any
    /// other exception (a `URLError` for a URL that cannot be fetched, a bug in `fetch`)
    /// stops the call and is raised again.
    fn call(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyAny>,
        fetch: Py<PyAny>,
    ) -> PyResult<CallOutcome> {
        let request = Request::extract(request)?;
        let max_bytes = self.inner.contract().limits().max_bytes;
        let mut raised: Option<PyErr> = None;
        let outcome = py.detach(|| {
            self.inner.call(&request.inner, |attempt| {
                if raised.is_some() {
                    // A programming error in fetch: no further calls; raised below.
                    return Err(TransportError::Unreachable);
                }
                Python::attach(|py| match fetch_once(py, &fetch, attempt, max_bytes) {
                    Ok(result) => result,
                    Err(error) => {
                        raised = Some(error);
                        Err(TransportError::Unreachable)
                    }
                })
            })
        });
        if let Some(error) = raised {
            return Err(error);
        }
        let stop_reason = stop_name(outcome.stop_reason());
        let attempts = outcome
            .attempts()
            .iter()
            .map(|a| {
                Py::new(
                    py,
                    Admission {
                        inner: a.clone(),
                        mcp: self.is_mcp(),
                    },
                )
            })
            .collect::<PyResult<_>>()?;
        Ok(CallOutcome {
            attempts,
            stop_reason,
        })
    }

    /// `call` for asyncio: `await guard.call_async(request, fetch)`, where `fetch(attempt)`
    /// is a coroutine function (an `httpx.AsyncClient` or `aiohttp` request) or a plain
    /// one. Every attempt is judged and classified as under `call`, and the driver stops
    /// where `call` stops. Written in Python (`airlock_guard._aio`) over the hooks below.
    fn call_async<'py>(
        slf: &Bound<'py, Self>,
        request: &Bound<'py, PyAny>,
        fetch: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        // The request is read now: a bad one raises here, not at the first attempt.
        let request = Py::new(py, Request::extract(request)?)?;
        py.import("airlock_guard._aio")?
            .getattr("call_async")?
            .call1((slf, request, fetch))
    }

    /// The asynchronous driver's hook: attempt `attempt`'s body judged.
    fn _judge_body(
        &self,
        py: Python<'_>,
        request: &Bound<'_, Request>,
        body: &Bound<'_, PyAny>,
        attempt: u32,
    ) -> PyResult<Admission> {
        let request = &request.get().inner;
        let body = returned_body(body)?;
        let body: &[u8] = &body;
        let mut inner = py.detach(|| self.inner.admit(request, body));
        inner.set_attempt(attempt);
        Ok(self.admission(inner))
    }

    /// The asynchronous driver's hook: attempt `attempt` raised `error`. The admission of
    /// the body or transport failure it stands for, or `error` raised again.
    fn _judge_raised(
        &self,
        py: Python<'_>,
        request: &Bound<'_, Request>,
        error: &Bound<'_, PyAny>,
        attempt: u32,
    ) -> PyResult<Admission> {
        let request = &request.get().inner;
        let error = PyErr::from_value(error.clone());
        let max_bytes = self.inner.contract().limits().max_bytes;
        let mut inner = match classify(py, error, max_bytes)? {
            Ok(body) => py.detach(|| self.inner.admit(request, &body)),
            Err(kind) => self.inner.admit_transport_error(request, kind),
        };
        inner.set_attempt(attempt);
        Ok(self.admission(inner))
    }

    /// The asynchronous driver's hook: `None` to try again after `admission`, else why the
    /// call stops (`CallOutcome.stop_reason`).
    fn _stop_reason(
        &self,
        admission: &Admission,
        attempt: u32,
        elapsed: f64,
    ) -> Option<&'static str> {
        self.stop_after(admission, attempt, elapsed).map(stop_name)
    }

    fn __repr__(&self) -> String {
        format!(
            "Guard(tool={:?}, contract_version={})",
            self.tool(),
            self.contract_version()
        )
    }
}

impl Guard {
    /// `airlock_guard::Guard::stop_after`, `elapsed` in seconds (a negative or non-finite
    /// one is past any deadline).
    fn stop_after(&self, admission: &Admission, attempt: u32, elapsed: f64) -> Option<StopReason> {
        self.inner.stop_after(&admission.inner, attempt, || {
            Duration::try_from_secs_f64(elapsed).unwrap_or(Duration::MAX)
        })
    }

    fn admission(&self, inner: airlock_guard::Admission) -> Admission {
        Admission {
            inner,
            mcp: self.is_mcp(),
        }
    }
}

/// `CallOutcome.stop_reason`'s words.
fn stop_name(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Settled => "settled",
        StopReason::NotRetryable => "not_retryable",
        StopReason::AttemptsExhausted => "attempts_exhausted",
        StopReason::DeadlinePassed => "deadline_passed",
        _ => "other",
    }
}

fn transport_kind(kind: &str) -> PyResult<TransportError> {
    TransportError::from_wire(kind).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{kind:?} is not a transport error kind (timeout, connection_reset, unreachable)"
        ))
    })
}

/// One call of `fetch`: `Ok(Ok(body))`, `Ok(Err(transport error))`, or `Err` for an
/// exception that is not a transport failure.
fn fetch_once(
    py: Python<'_>,
    fetch: &Py<PyAny>,
    attempt: u32,
    max_bytes: u64,
) -> PyResult<Result<Vec<u8>, TransportError>> {
    match fetch.call1(py, (attempt,)) {
        Ok(body) => Ok(Ok(returned_body(body.bind(py))?.into_owned())),
        Err(error) => classify(py, error, max_bytes),
    }
}

/// The body a fetch function returned; anything but bytes is the caller's bug.
fn returned_body<'a>(body: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, [u8]>> {
    crate::body_bytes(body).map_err(|error| {
        if error.is_instance_of::<PyTypeError>(body.py()) {
            let name = body
                .get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |n| n.to_string());
            PyTypeError::new_err(format!(
                "fetch returned {name}, not bytes, bytearray or memoryview"
            ))
        } else {
            error
        }
    })
}

/// How many `reason` links of a wrapped socket error are followed (a cycle stops there).
const REASON_LINKS: usize = 8;

/// What an exception raised by `fetch` stands for: the body of an HTTP error response, a
/// transport error (as `TransportError::from_io` reads an I/O error), or the exception
/// itself, raised again.
fn classify(
    py: Python<'_>,
    error: PyErr,
    max_bytes: u64,
) -> PyResult<Result<Vec<u8>, TransportError>> {
    // A KeyboardInterrupt, a SystemExit: not an attempt's failure, whatever was running.
    if !error.is_instance_of::<PyException>(py) {
        return Err(error);
    }
    if error.is_instance_of::<crate::TransportError>(py) {
        let value = error.value(py);
        let kind = value.getattr("args")?.get_item(0).ok();
        let wire = kind
            .as_ref()
            .and_then(|k| k.cast::<PyString>().ok())
            .and_then(|k| TransportError::from_wire(k.to_str().ok()?));
        return match wire {
            Some(kind) => Ok(Err(kind)),
            None => Err(PyValueError::new_err(format!(
                "TransportError({}): the kind is one of 'timeout', 'connection_reset', 'unreachable'",
                kind.map_or_else(|| Ok(String::new()), |k| k.repr().map(|r| r.to_string()))?
            ))),
        };
    }
    let value = error.value(py).clone().into_any();
    let meaning = client_error(&value);
    match meaning {
        Some(Meaning::Failed(kind)) => return Ok(Err(kind)),
        Some(Meaning::Answered) => return answered(&value, error, max_bytes),
        // (`client_error` resolves what a wrapper wraps: never `Wraps` here.)
        Some(Meaning::CallersBug | Meaning::Wraps(_)) => return callers(&value, error),
        None if !error.is_instance_of::<PyOSError>(py) => return callers(&value, error),
        None => {}
    }
    let urllib = py.import("urllib.error")?;
    let http_error = urllib.getattr("HTTPError")?;
    if value.is_instance(&http_error)? {
        // The server answered (urlopen raises for a 4xx or 5xx status): the status is not
        // trusted, the body is judged, as any other answer is.
        let limit = usize::try_from(max_bytes.saturating_add(1)).unwrap_or(usize::MAX);
        let read = value.call_method1("read", (limit,));
        // Best effort: the body is read (or not); a close that fails changes nothing judged.
        let _ = value.call_method0("close");
        return match read {
            Ok(body) => {
                let body = body
                    .cast::<PyBytes>()
                    .map(|b| b.as_bytes().to_vec())
                    .unwrap_or_default();
                // `read(n)` returns a body cut short without a word: what its
                // Content-Length still promised says so.
                let promised = value
                    .getattr("fp")
                    .and_then(|fp| fp.getattr("length"))
                    .and_then(|length| length.extract::<u64>())
                    .unwrap_or(0);
                if promised > 0 && (body.len() as u64) <= max_bytes {
                    return Ok(Err(TransportError::ConnectionReset));
                }
                Ok(Ok(body))
            }
            // The body stopped coming (a timeout, a reset, http.client's IncompleteRead): a
            // transport failure like any other. (Never another HTTPError's body: classified
            // once, not recursively.)
            Err(error)
                if !error.value(py).is_instance(&http_error)?
                    && (error.is_instance_of::<PyOSError>(py)
                        || matches!(client_error(error.value(py)), Some(Meaning::Failed(_)))) =>
            {
                classify(py, error, max_bytes)
            }
            // Interrupted while reading: not the answer's doing.
            Err(error) if !error.is_instance_of::<PyException>(py) => Err(error),
            // No body to read (an HTTPError made without one): an empty answer.
            Err(_) => Ok(Ok(Vec::new())),
        };
    }
    // urllib wraps the socket's error as URLError.reason: judge the innermost OSError.
    let url_error = urllib.getattr("URLError")?;
    let mut current = value.clone();
    for _ in 0..REASON_LINKS {
        match current.getattr("reason") {
            Ok(reason) if reason.is_instance_of::<PyOSError>() && !reason.is(&current) => {
                current = reason;
            }
            Ok(_) if current.is_instance(&url_error)? => {
                // A URLError whose reason is text ("unknown url type", "no host given"):
                // a URL that cannot be fetched is the caller's bug, not an outage.
                return callers(&value, error);
            }
            _ => break,
        }
    }
    Ok(Err(
        os_error_kind(&current).unwrap_or(TransportError::ConnectionReset)
    ))
}

/// The transport error a socket's `OSError` stands for (`TransportError::from_io`'s
/// reading): a timeout, a refused connection or a name that does not resolve
/// (unreachable), any other (connection_reset). `None` for an exception that is not an
/// `OSError`.
fn os_error_kind(error: &Bound<'_, PyAny>) -> Option<TransportError> {
    if !error.is_instance_of::<PyOSError>() {
        return None;
    }
    let socket = error.py().import("socket").ok()?;
    let is = |name: &str| {
        socket
            .getattr(name)
            .and_then(|class| error.is_instance(&class))
            .unwrap_or(false)
    };
    // socket.timeout is TimeoutError from Python 3.10; on 3.9 it is its own class.
    if error.is_instance_of::<PyTimeoutError>()
        || error.is_instance_of::<PyBlockingIOError>()
        || is("timeout")
    {
        return Some(TransportError::Timeout);
    }
    if error.is_instance_of::<PyConnectionRefusedError>() || is("gaierror") {
        return Some(TransportError::Unreachable);
    }
    Some(TransportError::ConnectionReset)
}

/// What an exception of an HTTP client library stands for.
#[derive(Debug, Clone, Copy)]
enum Meaning {
    /// No answer came: this transport failure.
    Failed(TransportError),
    /// The server answered with an error status and the client raised (`raise_for_status`):
    /// the response's body is judged, as any other answer is.
    Answered,
    /// Not a failure of the upstream (an invalid URL, a header the client refuses to
    /// send): raised again.
    CallersBug,
    /// The transport failure the exception it wraps stands for (its `__cause__`, else its
    /// `reason`, else its first argument: how aiohttp, urllib3 and requests wrap one), else
    /// this.
    Wraps(&'static Meaning),
}

const TIMEOUT: Meaning = Meaning::Failed(TransportError::Timeout);
const UNREACHABLE: Meaning = Meaning::Failed(TransportError::Unreachable);
const RESET: Meaning = Meaning::Failed(TransportError::ConnectionReset);

/// The exceptions of the HTTP clients (urllib's http.client, httpx, requests with urllib3,
/// aiohttp), read by the classes they are instances of (`__module__`, `__qualname__`):
/// the first rule that matches decides, so a class that is two things (requests'
/// `ConnectTimeout` is a `ConnectionError` and a `Timeout`; urllib3's `NewConnectionError`
/// a `ConnectTimeoutError`) is the first. Other exceptions of `CLIENT_MODULES` are
/// `CallersBug`s. What the upstream does is never the caller's: an answer that is not
/// HTTP, a body that does not decode, a redirect loop are transport failures.
#[rustfmt::skip]
const CLIENT_ERRORS: &[(&str, &str, Meaning)] = &[
    // urlopen's: a URL it cannot send, the connection misused; any other is an answer that
    // is not HTTP/1 (BadStatusLine, UnknownProtocol, LineTooLong, too many headers) or one
    // cut short (IncompleteRead; RemoteDisconnected is also a ConnectionResetError).
    ("http.client", "InvalidURL", Meaning::CallersBug),
    ("http.client", "ImproperConnectionState", Meaning::CallersBug),
    ("http.client", "NotConnected", Meaning::CallersBug),
    ("http.client", "HTTPException", RESET),
    ("httpx", "TimeoutException", TIMEOUT),
    ("httpx", "ConnectError", UNREACHABLE),
    ("httpx", "ProxyError", UNREACHABLE),
    ("httpx", "NetworkError", RESET),
    ("httpx", "RemoteProtocolError", RESET),
    ("httpx", "DecodingError", RESET),
    ("httpx", "TooManyRedirects", UNREACHABLE),
    ("httpx", "HTTPStatusError", Meaning::Answered),
    ("requests.exceptions", "Timeout", TIMEOUT),
    ("requests.exceptions", "ConnectionError", Meaning::Wraps(&UNREACHABLE)),
    ("requests.exceptions", "ChunkedEncodingError", RESET),
    ("requests.exceptions", "ContentDecodingError", RESET),
    ("requests.exceptions", "TooManyRedirects", UNREACHABLE),
    // urllib3's Retry gave up on an upstream that kept failing (a 503 after a 503).
    ("requests.exceptions", "RetryError", UNREACHABLE),
    ("requests.exceptions", "HTTPError", Meaning::Answered),
    // A header the caller gave; or one of the answer's (urllib3's, wrapped: two
    // Content-Lengths that disagree).
    ("requests.exceptions", "InvalidHeader", Meaning::Wraps(&Meaning::CallersBug)),
    // What requests wraps, and what `response.raw.read(n)` raises itself.
    ("urllib3.exceptions", "NewConnectionError", UNREACHABLE),
    ("urllib3.exceptions", "TimeoutError", TIMEOUT),
    ("urllib3.exceptions", "ProtocolError", RESET),
    ("urllib3.exceptions", "DecodeError", RESET),
    ("urllib3.exceptions", "InvalidHeader", RESET),
    ("urllib3.exceptions", "MaxRetryError", Meaning::Wraps(&UNREACHABLE)),
    ("aiohttp.client_exceptions", "ServerTimeoutError", TIMEOUT),
    ("aiohttp.client_exceptions", "ClientConnectorError", UNREACHABLE),
    ("aiohttp.client_exceptions", "ClientConnectionError", RESET),
    ("aiohttp.client_exceptions", "ClientPayloadError", RESET),
    ("aiohttp.client_exceptions", "TooManyRedirects", UNREACHABLE),
    // A redirect to where no request can go (`ftp:`, a URL that does not parse).
    ("aiohttp.client_exceptions", "RedirectClientError", UNREACHABLE),
    // raise_for_status's carries no body; one made from a response that is not HTTP wraps
    // the parser's error.
    ("aiohttp.client_exceptions", "ClientResponseError", Meaning::Wraps(&Meaning::CallersBug)),
    ("aiohttp.http_exceptions", "HttpProcessingError", RESET),
    // asyncio.wait_for's and a future's timeout: their own classes before Python 3.11.
    ("asyncio.exceptions", "TimeoutError", TIMEOUT),
    ("concurrent.futures._base", "TimeoutError", TIMEOUT),
];

/// The client libraries whose exceptions `CLIENT_ERRORS` reads.
const CLIENT_MODULES: &[&str] = &[
    "httpx",
    "requests.exceptions",
    "urllib3.exceptions",
    "aiohttp.client_exceptions",
    "aiohttp.http_exceptions",
];

/// How deep `Meaning::Wraps` looks (requests' error wraps urllib3's, which wraps the
/// socket's).
const WRAPPED_LINKS: usize = 4;

/// What `value` stands for if it is an exception of an HTTP client library (or asyncio's
/// old timeout), by `CLIENT_ERRORS`; `None` for any other exception.
fn client_error(value: &Bound<'_, PyAny>) -> Option<Meaning> {
    client_error_within(value, WRAPPED_LINKS)
}

fn client_error_within(value: &Bound<'_, PyAny>, links: usize) -> Option<Meaning> {
    let text = |class: &Bound<'_, pyo3::types::PyType>, name: &str| {
        let value = class.getattr(name).ok()?;
        Some(value.cast::<PyString>().ok()?.to_str().ok()?.to_owned())
    };
    let classes: Vec<(String, String)> = value
        .get_type()
        .mro()
        .iter()
        .filter_map(|class| {
            let class = class.cast_into::<pyo3::types::PyType>().ok()?;
            Some((text(&class, "__module__")?, text(&class, "__qualname__")?))
        })
        .collect();
    let is = |module: &str, name: &str| classes.iter().any(|(m, n)| m == module && n == name);
    match CLIENT_ERRORS.iter().find(|(m, n, _)| is(m, n)) {
        Some((_, _, Meaning::Wraps(otherwise))) => {
            let inner = wrapped(value).filter(|_| links > 0);
            let failed = inner
                .and_then(|inner| match client_error_within(&inner, links - 1) {
                    Some(Meaning::Failed(kind)) => Some(kind),
                    Some(_) => None,
                    // A socket's own error, as the urllib path reads it.
                    None => os_error_kind(&inner),
                })
                .map(Meaning::Failed);
            return Some(failed.unwrap_or(**otherwise));
        }
        Some((_, _, meaning)) => return Some(*meaning),
        None => {}
    }
    let from_client = classes
        .iter()
        .any(|(m, _)| CLIENT_MODULES.contains(&m.as_str()));
    from_client.then_some(Meaning::CallersBug)
}

/// The exception `value` wraps: its `__cause__`, its `reason` (urllib3's
/// `MaxRetryError`), or its first argument (requests' `ConnectionError`).
fn wrapped<'py>(value: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    let exception = |v: Bound<'py, PyAny>| {
        v.is_instance_of::<pyo3::exceptions::PyBaseException>()
            .then_some(v)
            .filter(|v| !v.is(value))
    };
    value
        .getattr("__cause__")
        .ok()
        .and_then(exception)
        .or_else(|| value.getattr("reason").ok().and_then(exception))
        .or_else(|| {
            let args = value.getattr("args").ok()?;
            args.get_item(0).ok().and_then(exception)
        })
}

/// Where a client follows the upstream's redirect: an error raised under one of these
/// frames (module, function) is the upstream's doing (a `Location` that is not a URL, or
/// one no request can go to), not the caller's.
const REDIRECT_FRAMES: &[(&str, &str)] = &[
    ("requests.sessions", "resolve_redirects"),
    ("urllib.request", "http_error_302"),
    ("httpx._client", "_build_redirect_request"),
];

/// The modules a client runs between its redirect code and the error: a frame of any
/// other module under the redirect (a hook, an override of the caller's) makes the error
/// the caller's.
const CLIENT_CODE: &[&str] = &[
    "requests",
    "urllib3",
    "urllib",
    "http",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "idna",
    "encodings",
    "socket",
    "ssl",
    "email",
    "ipaddress",
    "selectors",
    "contextlib",
    "codecs",
];

/// How many frames of a traceback `raised_while_redirecting` looks at.
const TRACEBACK_FRAMES: usize = 512;

/// An exception that is not a transport failure: the caller's, raised again, unless the
/// client raised it while following the upstream's redirect (`unreachable`): an error of a
/// URL that does not parse (a `ValueError`, a client's own or urllib's error) raised by
/// the client's code alone below its redirect code.
fn callers(value: &Bound<'_, PyAny>, error: PyErr) -> PyResult<Result<Vec<u8>, TransportError>> {
    let py = value.py();
    let of_a_url = value.is_instance_of::<PyValueError>()
        || client_error(value).is_some()
        || py
            .import("urllib.error")
            .and_then(|m| m.getattr("URLError"))
            .and_then(|class| value.is_instance(&class))
            .unwrap_or(false);
    // The error's own traceback (an exception fetched from a call has it there, not yet on
    // the object), else the object's.
    let traceback = error
        .traceback(py)
        .map(Bound::into_any)
        .or_else(|| value.getattr("__traceback__").ok());
    if of_a_url && traceback.is_some_and(raised_while_redirecting) {
        return Ok(Err(TransportError::Unreachable));
    }
    Err(error)
}

/// Whether the traceback `tb` passes through one of `REDIRECT_FRAMES` with only the
/// client's code (`CLIENT_CODE`) below it.
fn raised_while_redirecting(tb: Bound<'_, PyAny>) -> bool {
    let frame_of = |tb: &Bound<'_, PyAny>| -> Option<(String, String)> {
        let frame = tb.getattr("tb_frame").ok()?;
        let function = frame.getattr("f_code").ok()?.getattr("co_name").ok()?;
        let module = frame.getattr("f_globals").ok()?.get_item("__name__").ok()?;
        Some((
            module.cast::<PyString>().ok()?.to_str().ok()?.to_owned(),
            function.cast::<PyString>().ok()?.to_str().ok()?.to_owned(),
        ))
    };
    let of_client = |module: &str| {
        CLIENT_CODE
            .iter()
            .any(|c| module == *c || module.strip_prefix(c).is_some_and(|r| r.starts_with('.')))
    };
    let mut redirecting = false;
    let mut tb = Some(tb);
    for _ in 0..TRACEBACK_FRAMES {
        let Some(current) = tb.filter(|t| !t.is_none()) else {
            return redirecting;
        };
        match frame_of(&current) {
            Some((module, function)) if !redirecting => {
                redirecting = REDIRECT_FRAMES
                    .iter()
                    .any(|(m, f)| *m == module && *f == function);
            }
            Some((module, _)) if !of_client(&module) => return false,
            Some(_) => {}
            None if redirecting => return false,
            None => {}
        }
        tb = current.getattr("tb_next").ok();
    }
    false
}

/// The body of the error response an httpx `HTTPStatusError` or a requests `HTTPError`
/// carries, as the client already read it (at most `max_bytes + 1` bytes, which already
/// makes it too large). Nothing is read from the network here: a streamed response whose
/// body was not read is an empty answer (requests keeps `_content = False` then; httpx
/// has no `_content` and its `content` raises). An `HTTPError` the caller made without a
/// response is raised again.
fn answered(
    value: &Bound<'_, PyAny>,
    error: PyErr,
    max_bytes: u64,
) -> PyResult<Result<Vec<u8>, TransportError>> {
    let response = match value.getattr("response") {
        Ok(response) if !response.is_none() => response,
        _ => return Err(error),
    };
    let limit = usize::try_from(max_bytes.saturating_add(1)).unwrap_or(usize::MAX);
    let content = match response.getattr("_content") {
        Ok(read) => Some(read),
        Err(_) => response.getattr("content").ok(),
    };
    let body = content.and_then(|content| {
        let bytes = content.cast::<PyBytes>().ok()?.as_bytes();
        Some(bytes[..bytes.len().min(limit)].to_vec())
    });
    // Best effort, as for urllib's HTTPError: a streamed response not read holds its
    // connection until closed (an asynchronous one refuses a synchronous close: left).
    let _ = response.call_method0("close");
    Ok(Ok(body.unwrap_or_default()))
}
