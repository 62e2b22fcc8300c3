//! `Request`: the outstanding request a response is judged against, built from keyword
//! arguments, a dict or JSON, and always read by the guard's own strict reader.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::RequestError;

/// The request a raw response answers: `request_id`, `params`, `now` (RFC 3339), and for
/// an MCP call `jsonrpc_id`. Read exactly as `airlock` reads a `request.json`.
#[pyclass(frozen, module = "airlock_guard")]
#[derive(Debug, Clone)]
pub struct Request {
    pub(crate) inner: airlock_guard::Request,
}

#[pymethods]
impl Request {
    /// `Request(request_id, now, params=None, tool=None, jsonrpc_id=None)`.
    #[new]
    #[pyo3(signature = (request_id, now, params = None, tool = None, jsonrpc_id = None))]
    fn new(
        py: Python<'_>,
        request_id: Option<String>,
        now: String,
        params: Option<Bound<'_, PyDict>>,
        tool: Option<String>,
        jsonrpc_id: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let dict = PyDict::new(py);
        if let Some(tool) = tool {
            dict.set_item("tool", tool)?;
        }
        if let Some(id) = request_id {
            dict.set_item("request_id", id)?;
        }
        if let Some(id) = jsonrpc_id {
            dict.set_item("jsonrpc_id", id)?;
        }
        if let Some(params) = params {
            dict.set_item("params", params)?;
        }
        dict.set_item("now", now)?;
        Self::from_dict(&dict)
    }

    /// A request from a dict such as `{"request_id": …, "params": {…}, "now": "…"}`.
    ///
    /// Raises `RequestError` for an unknown member, a missing `request_id` or `now`, or a
    /// `now` that is not RFC 3339 with an offset.
    #[staticmethod]
    fn from_dict(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = value.py();
        let value = if value.is_instance_of::<PyDict>() {
            value.clone()
        } else if value.is_instance(&py.import("collections.abc")?.getattr("Mapping")?)? {
            // A mappingproxy, a UserDict, any Mapping: read as the dict of its items.
            py.get_type::<PyDict>().call1((value,))?
        } else if value.is_instance_of::<PyString>()
            || value.is_instance_of::<pyo3::types::PyBytes>()
        {
            return Err(RequestError::new_err(
                "a request is a dict or a Request, not JSON text: read text with Request.from_json(text)",
            ));
        } else {
            return Err(RequestError::new_err(format!(
                "a request is a dict ({{\"request_id\", \"params\", \"now\"}}) or a Request, not {}",
                value.get_type().name()?
            )));
        };
        let kwargs = PyDict::new(py);
        kwargs.set_item("allow_nan", false)?;
        let text = py
            .import("json")?
            .getattr("dumps")?
            .call((value,), Some(&kwargs))
            .map_err(|e| {
                RequestError::new_err(format!(
                    "the request is not JSON: {e} (`now` is RFC 3339 text, such as datetime.isoformat() of an aware datetime)"
                ))
            })?;
        Self::parse(text.cast::<PyString>()?.to_str()?.as_bytes())
    }

    /// A request from JSON text (`str` or `bytes`), as in a corpus's `request.json`.
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(s) = text.cast::<PyString>() {
            return Self::parse(s.to_str()?.as_bytes());
        }
        Self::parse(&crate::body_bytes(text)?)
    }

    /// The JSON-RPC id or request id the response must echo.
    #[getter]
    fn request_id(&self) -> &str {
        &self.inner.request_id
    }

    /// The tool the request was sent to, if it says.
    #[getter]
    fn tool(&self) -> Option<&str> {
        self.inner.tool.as_deref()
    }

    /// `now`, normalised to UTC (RFC 3339).
    #[getter]
    fn now(&self) -> String {
        self.inner.now.to_string()
    }

    /// The parameters, as a new dict.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::json_loads(
            py,
            &serde_json::Value::Object(self.inner.params.clone()).to_string(),
        )
    }

    /// The request as JSON text.
    fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).expect("a request serialises")
    }

    fn __repr__(&self) -> String {
        format!("Request({})", self.to_json())
    }
}

impl Request {
    fn parse(bytes: &[u8]) -> PyResult<Self> {
        airlock_guard::Request::from_json(bytes)
            .map(|inner| Self { inner })
            .map_err(|e| RequestError::new_err(format!("not a request: {e}")))
    }

    /// A `Request`, or a mapping read as one.
    pub(crate) fn extract(value: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(request) = value.cast::<Request>() {
            return Ok(request.get().clone());
        }
        Self::from_dict(value)
    }
}
