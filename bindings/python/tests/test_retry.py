"""Guard.call mirrors airlock_guard::Guard::call: every attempt judged afresh under the
contract's retry policy; transport failures are raised by the fetch function."""

import socket
import urllib.error

import pytest

from airlock_guard import Guard, TransportError

from conftest import CORPORA, SCHEMAS

ACCEPTED = CORPORA / "review_status" / "accepted"


@pytest.fixture
def guard():
    return Guard.load(SCHEMAS / "review_status")


def test_a_transport_error_then_a_success_settles_on_the_second_attempt(guard, review_request):
    body = (ACCEPTED / "success_approved_compact.json").read_bytes()
    seen = []

    def fetch(attempt):
        seen.append(attempt)
        if attempt == 1:
            raise TransportError("timeout")
        return body

    outcome = guard.call(review_request, fetch)
    assert seen == [1, 2]
    assert outcome.stop_reason == "settled"
    assert [a.attempt for a in outcome.attempts] == [1, 2]
    assert [a.verdict for a in outcome.attempts] == ["transport_failure", "admitted"]
    assert outcome.attempts[0].failure_code == "UPSTREAM_UNAVAILABLE" and outcome.attempts[0].retryable
    assert outcome.admission.agent == guard.admit(review_request, body).agent


@pytest.mark.parametrize(
    "error,kind",
    [
        (TimeoutError("slow"), "timeout"),
        (socket.timeout("slow"), "timeout"),
        (ConnectionRefusedError(), "unreachable"),
        (urllib.error.URLError(ConnectionRefusedError()), "unreachable"),
        (urllib.error.URLError(socket.gaierror(-2, "Name or service not known")), "unreachable"),
        (urllib.error.URLError(TimeoutError()), "timeout"),
        (ConnectionResetError(), "connection_reset"),
        (TransportError("connection_reset"), "connection_reset"),
    ],
)
def test_a_transport_failure_is_retried_until_the_attempts_are_used_up(guard, review_request, error, kind):
    def fetch(attempt):
        raise error

    outcome = guard.call(review_request, fetch)
    assert outcome.stop_reason == "attempts_exhausted"
    assert len(outcome.attempts) == guard.retry_policy.max_attempts == 3
    assert {a.audit["diagnostic"]["keyword"] for a in outcome.attempts} == {kind}
    assert outcome.admission.agent["error"] == {"code": "UPSTREAM_UNAVAILABLE", "retryable": True}


def test_a_rejection_is_not_retried(guard, review_request):
    calls = []

    def fetch(attempt):
        calls.append(attempt)
        return b'{"tool":"review_status"}'

    outcome = guard.call(review_request, fetch)
    assert (calls, outcome.stop_reason) == ([1], "not_retryable")
    assert outcome.admission.failure_code == "INVALID_RESPONSE"


def test_a_retryable_failure_envelope_is_retried_and_the_last_one_given(guard, review_request):
    body = (ACCEPTED / "failure_upstream_unavailable_pretty.json").read_bytes()
    outcome = guard.call(review_request, lambda attempt: body)
    assert outcome.stop_reason == "attempts_exhausted" and len(outcome.attempts) == 3
    assert outcome.admission.verdict == "upstream_failure"


def test_an_exception_that_is_not_a_transport_failure_stops_the_call_and_is_raised(guard, review_request):
    calls = []

    def fetch(attempt):
        calls.append(attempt)
        raise KeyError("a bug in the adapter")

    with pytest.raises(KeyError):
        guard.call(review_request, fetch)
    assert calls == [1]
    with pytest.raises(TypeError):
        guard.call(review_request, lambda attempt: "not bytes")
    with pytest.raises(ValueError):
        guard.call(review_request, lambda attempt: (_ for _ in ()).throw(TransportError("lost")))


def test_should_retry_mirrors_the_driver(guard, review_request):
    failed = guard.admit_transport_error(review_request, "unreachable")
    assert failed.verdict == "transport_failure" and failed.retryable
    assert guard.should_retry(failed, 1)
    assert guard.should_retry(failed, 2, elapsed=9.9)
    assert not guard.should_retry(failed, 3)
    assert not guard.should_retry(failed, 1, elapsed=10.0)
    rejected = guard.admit(review_request, b"{}")
    assert not guard.should_retry(rejected, 1)
    with pytest.raises(ValueError):
        guard.admit_transport_error(review_request, "lost")


def test_an_http_error_is_an_answer_whose_body_is_judged(guard, review_request):
    """urlopen raises HTTPError for a 4xx or 5xx status; the service's failure envelope is
    in its body, as the worked adapter reads it. Not an outage, and not retried."""
    import io

    def http_error(body):
        return urllib.error.HTTPError("http://127.0.0.1/reviews/CR-1042", 404, "Not Found", {}, io.BytesIO(body))

    envelope = (ACCEPTED / "failure_not_found.json").read_bytes()
    calls = []

    def fetch(attempt):
        calls.append(attempt)
        raise http_error(envelope)

    outcome = guard.call(review_request, fetch)
    assert calls == [1]
    assert outcome.admission.verdict == "upstream_failure"
    assert outcome.admission.agent == guard.admit(review_request, envelope).agent
    page = guard.call(review_request, lambda attempt: (_ for _ in ()).throw(http_error(b"<html>Bad gateway</html>")))
    assert (len(page.attempts), page.admission.failure_code) == (1, "INVALID_RESPONSE")
    # Only max_bytes + 1 bytes of an error's body are read, as of any body.
    huge = guard.call(review_request, lambda attempt: (_ for _ in ()).throw(http_error(b" " * (50 * 1024 * 1024))))
    assert huge.admission.audit["raw_len"] == guard.max_bytes + 1


def test_a_wrapped_socket_error_is_followed_a_few_links_and_a_cycle_ends(guard, review_request):
    # A reason chain that loops (or runs 50,000 deep) once crashed the interpreter.
    looped = OSError("x")
    looped.reason = looped
    deep = OSError("bottom")
    for _ in range(50_000):
        deep = urllib.error.URLError(deep)
    for error in [looped, deep]:
        outcome = guard.call(review_request, lambda attempt: (_ for _ in ()).throw(error))
        assert outcome.admission.agent["error"] == {"code": "UPSTREAM_UNAVAILABLE", "retryable": True}
        assert outcome.attempts[0].audit["diagnostic"]["keyword"] == "connection_reset"


def test_a_url_that_cannot_be_fetched_is_the_callers_bug_not_an_outage(guard, review_request):
    calls = []

    def fetch(attempt):
        calls.append(attempt)
        raise urllib.error.URLError("unknown url type: htp")

    with pytest.raises(urllib.error.URLError):
        guard.call(review_request, fetch)
    assert calls == [1]


def test_fetch_may_return_any_bytes_like_body_and_a_bad_kind_is_named(guard, review_request):
    body = (ACCEPTED / "success_approved_compact.json").read_bytes()
    for raw in [bytearray(body), memoryview(body), memoryview(b"xx" + body)[2:]]:
        assert guard.call(review_request, lambda attempt, raw=raw: raw).admission.admitted
    with pytest.raises(ValueError, match=r"TransportError\(5\)"):
        guard.call(review_request, lambda attempt: (_ for _ in ()).throw(TransportError(5)))


def test_an_http_error_whose_body_stops_coming_is_a_transport_failure(guard, review_request):
    class Stalled:
        def read(self, n=-1):
            raise TimeoutError("the body stopped coming")

        def close(self):
            pass

    def fetch(attempt):
        raise urllib.error.HTTPError("http://127.0.0.1/reviews/CR-1042", 503, "Unavailable", {}, Stalled())

    outcome = guard.call(review_request, fetch)
    assert len(outcome.attempts) == guard.retry_policy.max_attempts
    assert {a.audit["diagnostic"]["keyword"] for a in outcome.attempts} == {"timeout"}


def test_a_memoryview_of_any_format_is_its_bytes(guard, review_request):
    import array

    body = (ACCEPTED / "success_approved_compact.json").read_bytes()
    for raw in [memoryview(body).cast("b"), memoryview(array.array("b", body))]:
        assert guard.admit(review_request, raw).admitted
        assert guard.call(review_request, lambda attempt, raw=raw: raw).admission.admitted
