"""airlock_guard: the Airlock guard for Python adapters.

Every raw tool response goes through ``Guard.admit`` (or the retry drivers ``Guard.call``
and, for asyncio, ``Guard.call_async``): byte limit, strict JSON parse, JSON Schema,
request binding, semantic checks, projection and audit record, all in Rust with the
interpreter detached. The agent gets ``Admission.agent``:
the projected success or one fixed failure value, never text from a rejected response.
The operator gets ``Admission.diagnostic`` and ``Admission.audit``, kept apart.

    >>> from airlock_guard import Guard
    >>> guard = Guard.load("schemas/review_status")
    >>> admission = guard.admit(request, raw_body)
    >>> send_to_agent(admission.agent)
    >>> log_for_operator(admission.audit_json)

See docs/python.md.
"""

from ._native import (
    TRANSPORT_ERRORS,
    Admission,
    AirlockError,
    CallOutcome,
    ContractError,
    Guard,
    Request,
    RequestError,
    RetryPolicy,
    TransportError,
    __version__,
)

__all__ = [
    "TRANSPORT_ERRORS",
    "Admission",
    "AirlockError",
    "CallOutcome",
    "ContractError",
    "Guard",
    "Request",
    "RequestError",
    "RetryPolicy",
    "TransportError",
    "__version__",
]
