//! `airlock_guard._native`: the guard for Python adapters. Every judgement runs in Rust with
//! the interpreter detached; Python sees the agent value, the audit record and the operator
//! diagnostic as separate attributes, and never a byte of a rejected body in the first.
//!
//! The Python package `airlock_guard` (python/airlock_guard) re-exports this module.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

mod admission;
mod guard;
mod request;

pyo3::create_exception!(
    airlock_guard,
    AirlockError,
    PyException,
    "The base of every error airlock_guard raises."
);
pyo3::create_exception!(
    airlock_guard,
    ContractError,
    AirlockError,
    "A contract folder did not load; the message names the file."
);
pyo3::create_exception!(
    airlock_guard,
    RequestError,
    AirlockError,
    "A request is not a request object (unknown member, missing `request_id` or `now`, `now` not RFC 3339)."
);
pyo3::create_exception!(
    airlock_guard,
    TransportError,
    AirlockError,
    "Raised by a `Guard.call` fetch function: the upstream call failed before a body arrived. \
     Its one argument is the kind: 'timeout', 'connection_reset' or 'unreachable'."
);

/// `json.loads(text)`: the agent value and audit record as Python objects, read from the
/// exact JSON the Rust guard wrote.
pub(crate) fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.getattr("loads")?.call1((text,))
}

/// The bytes of `raw` (`bytes` borrowed as they are; `bytearray` and `memoryview` copied
/// once).
pub(crate) fn body_bytes<'a>(raw: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, [u8]>> {
    if let Ok(bytes) = raw.cast::<PyBytes>() {
        return Ok(std::borrow::Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(bytes) = raw.cast::<pyo3::types::PyByteArray>() {
        return Ok(std::borrow::Cow::Owned(bytes.to_vec()));
    }
    if raw.is_instance_of::<pyo3::types::PyMemoryView>() {
        // A view of bytes is copied once; a view of another format (`cast('b')`, an
        // array's) through `bytes(view)`, which takes its raw memory.
        if let Ok(buffer) = pyo3::buffer::PyBuffer::<u8>::get(raw) {
            return Ok(std::borrow::Cow::Owned(buffer.to_vec(raw.py())?));
        }
        let copy = raw.py().get_type::<PyBytes>().call1((raw,))?;
        return Ok(std::borrow::Cow::Owned(
            copy.cast::<PyBytes>()?.as_bytes().to_vec(),
        ));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "a response body is bytes, bytearray or memoryview, not {}",
        raw.get_type().name()?
    )))
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("AirlockError", py.get_type::<AirlockError>())?;
    m.add("ContractError", py.get_type::<ContractError>())?;
    m.add("RequestError", py.get_type::<RequestError>())?;
    m.add("TransportError", py.get_type::<TransportError>())?;
    m.add_class::<guard::Guard>()?;
    m.add_class::<request::Request>()?;
    m.add_class::<admission::Admission>()?;
    m.add_class::<admission::CallOutcome>()?;
    m.add_class::<admission::RetryPolicy>()?;
    m.add("TRANSPORT_ERRORS", transport_kinds())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

fn transport_kinds() -> Vec<&'static str> {
    airlock_guard::TransportError::ALL
        .iter()
        .map(|t| t.as_str())
        .collect()
}
