"""Type stubs of the compiled part of airlock_guard (PyO3). See docs/python.md."""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from os import PathLike
from typing import Any, Final, Literal, Optional, Union, final

__version__: Final[str]
TRANSPORT_ERRORS: Final[list[str]]
"""The transport error kinds: 'timeout', 'connection_reset', 'unreachable'."""

TransportKind = Literal["timeout", "connection_reset", "unreachable"]
Verdict = Literal["admitted", "upstream_failure", "transport_failure", "rejected"]
StopReason = Literal["settled", "not_retryable", "attempts_exhausted", "deadline_passed", "other"]
Body = Union[bytes, bytearray, memoryview]
RequestLike = Union["Request", Mapping[str, Any]]
StrPath = Union[str, PathLike[str]]

class AirlockError(Exception):
    """The base of every error airlock_guard raises."""

class ContractError(AirlockError):
    """A contract folder did not load; the message names the file."""

class RequestError(AirlockError):
    """A request is not a request object (unknown member, missing request_id or now, now not RFC 3339)."""

class TransportError(AirlockError):
    """Raised by a Guard.call fetch function: the upstream failed before a body arrived.

    Its one argument is the kind: 'timeout', 'connection_reset' or 'unreachable'.
    """

    def __init__(self, kind: TransportKind, /) -> None: ...

@final
class Request:
    """The request a raw response answers, read exactly as airlock reads a request.json."""

    def __init__(
        self,
        request_id: Optional[str],
        now: str,
        params: Optional[dict[str, Any]] = None,
        tool: Optional[str] = None,
        jsonrpc_id: Union[str, int, None] = None,
    ) -> None: ...
    @staticmethod
    def from_dict(value: Mapping[str, Any]) -> Request:
        """A request from a dict such as {"request_id": ..., "params": {...}, "now": "..."}."""
    @staticmethod
    def from_json(text: Union[str, Body]) -> Request:
        """A request from JSON text, as in a corpus's request.json."""
    @property
    def request_id(self) -> str: ...
    @property
    def tool(self) -> Optional[str]: ...
    @property
    def now(self) -> str:
        """now, normalised to UTC (RFC 3339)."""
    @property
    def params(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...

@final
class RetryPolicy:
    """The contract's retry policy ([retry] in contract.toml)."""

    @property
    def max_attempts(self) -> int: ...
    @property
    def deadline(self) -> float:
        """No attempt starts after this many seconds."""
    @property
    def retryable(self) -> list[str]:
        """The failure codes worth another attempt."""
    def is_retryable(self, code: str) -> bool: ...

@final
class Admission:
    """The judgement of one response.

    agent / agent_json are all the agent may be given; diagnostic and audit are for the
    operator and may quote the response.
    """

    @property
    def admitted(self) -> bool:
        """A success, or a valid failure envelope."""
    @property
    def verdict(self) -> Verdict: ...
    @property
    def stage(self) -> str:
        """The stage that decided: 'limits', 'parse', 'schema', 'binding', 'checks', ..."""
    @property
    def agent(self) -> dict[str, Any]:
        """The agent value: {"tool", "request_id", "outcome", "data" | "error"}."""
    @property
    def agent_json(self) -> bytes:
        """The agent value as the exact JSON bytes of the Rust guard's to_json_string."""
    @property
    def call_tool_result(self) -> Optional[dict[str, Any]]:
        """For an MCP tool contract, the CallToolResult the agent is given; else None."""
    @property
    def call_tool_result_json(self) -> Optional[bytes]: ...
    @property
    def failure_code(self) -> Optional[str]:
        """'INVALID_RESPONSE', 'NOT_FOUND', 'UPSTREAM_UNAVAILABLE', ...; None for a success."""
    @property
    def retryable(self) -> Optional[bool]: ...
    @property
    def diagnostic(self) -> Optional[str]:
        """The operator diagnostic (may quote the response); never part of the agent value."""
    @property
    def diagnostic_masked(self) -> Optional[str]:
        """The diagnostic without the instance values it quotes."""
    @property
    def audit(self) -> dict[str, Any]: ...
    @property
    def audit_json(self) -> str:
        """The audit record as one JSON line."""
    @property
    def attempt(self) -> Optional[int]:
        """The attempt number under Guard.call; None for Guard.admit."""

@final
class CallOutcome:
    """The result of Guard.call."""

    @property
    def admission(self) -> Admission:
        """The last attempt's admission: what the agent is given."""
    @property
    def attempts(self) -> list[Admission]: ...
    @property
    def stop_reason(self) -> StopReason: ...

@final
class Guard:
    """The runtime boundary for one contract: load once, share between threads."""

    @staticmethod
    def load(
        path: StrPath,
        *,
        adapter: Optional[tuple[str, str]] = None,
        endpoint: Optional[str] = None,
    ) -> Guard:
        """Load a contract folder; raises ContractError naming the file."""
    @staticmethod
    def load_all(
        paths: Sequence[StrPath],
        *,
        adapter: Optional[tuple[str, str]] = None,
        endpoint: Optional[str] = None,
    ) -> dict[str, Guard]:
        """Load several contract folders: tool name -> guard."""
    @property
    def tool(self) -> str: ...
    @property
    def contract_version(self) -> int: ...
    @property
    def max_bytes(self) -> int:
        """Read at most max_bytes + 1 bytes of a body before admit."""
    @property
    def is_mcp(self) -> bool: ...
    @property
    def retry_policy(self) -> RetryPolicy: ...
    def admit(self, request: RequestLike, raw: Body) -> Admission:
        """Judge a raw response; the interpreter is released while judging."""
    def admit_transport_error(self, request: RequestLike, kind: TransportKind) -> Admission:
        """The agent's view of a transport failure."""
    def should_retry(self, admission: Admission, attempt: int, elapsed: float = 0.0) -> bool:
        """Whether Guard.call's driver would make another attempt."""
    def call(self, request: RequestLike, fetch: Callable[[int], Body]) -> CallOutcome:
        """Call the upstream under the contract's retry policy, judging every attempt.

        fetch(attempt) returns the body, or raises: TransportError(kind), TimeoutError,
        ConnectionRefusedError or a DNS failure, any other OSError (connection_reset); a
        urllib.error.URLError is judged by the socket error it wraps; an
        urllib.error.HTTPError's body is judged as the answer. The exceptions of httpx,
        requests and aiohttp are read as docs/python.md tabulates them (a timeout, a
        refused connection, a dropped one; raise_for_status's error: its response's body
        is judged). Any other exception stops the call and is raised again."""
    async def call_async(
        self, request: RequestLike, fetch: Callable[[int], Union[Awaitable[Body], Body]]
    ) -> CallOutcome:
        """Guard.call for asyncio: fetch(attempt) is a coroutine function (or a plain one);
        every attempt is judged and classified as under call, and it stops where call
        stops. A bad request raises RequestError when call_async is called."""
