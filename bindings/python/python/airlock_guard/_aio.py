"""``Guard.call_async``: the retry driver of ``Guard.call`` for asyncio adapters.

The guard's own hooks do the judging: ``_judge_body`` and ``_judge_raised`` (the body or
the exception of one attempt, classified as ``Guard.call`` classifies them) and
``_stop_reason`` (``airlock_guard::Guard::stop_after``, the decision of the Rust driver),
so this loop stops exactly where ``call`` does. Only the waiting is Python's, and where a
body is judged: on the event loop's thread, but for one over ``OFF_LOOP_BYTES`` (judged in
the loop's default executor with the interpreter released, so the loop goes on meanwhile).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Callable

from ._native import CallOutcome, Guard, Request

#: A body this long or longer is judged off the event loop (about half a millisecond of
#: judging; a thread's hand-off costs tens of microseconds).
OFF_LOOP_BYTES = 64 * 1024


async def call_async(guard: Guard, request: Request, fetch: Callable[[int], Any]) -> CallOutcome:
    if not callable(fetch):
        raise TypeError(f"call_async(request, fetch): fetch is a function of the attempt number, not {type(fetch).__name__}")
    started = time.monotonic()
    attempts = []
    attempt = 1
    while True:
        try:
            body = fetch(attempt)
            if inspect.isawaitable(body):
                body = await body
        except Exception as error:  # noqa: BLE001 - classified; a caller's bug is raised again
            # Cancellation (asyncio.CancelledError) is a BaseException: it goes through.
            admission = guard._judge_raised(request, error, attempt)
        else:
            loop = _asyncio_loop() if _size(body) >= OFF_LOOP_BYTES else None
            if loop is not None:
                admission = await loop.run_in_executor(None, guard._judge_body, request, body, attempt)
            else:
                admission = guard._judge_body(request, body, attempt)
        attempts.append(admission)
        stop = guard._stop_reason(admission, attempt, time.monotonic() - started)
        if stop is not None:
            return CallOutcome._new(attempts, stop)
        attempt += 1


def _asyncio_loop():
    """The running asyncio loop; None under another event loop (trio): judged in place."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _size(body):
    """A body's size in bytes (a memoryview's items may be wider than one); 0 for what is
    not a body (refused by the guard's hook)."""
    if isinstance(body, memoryview):
        return body.nbytes
    if isinstance(body, (bytes, bytearray)):
        return len(body)
    return 0
