"""Hostile bodies: the agent value holds nothing of a rejected body; the diagnostic, for the
operator, may."""

import json

import pytest

from airlock_guard import Guard

from conftest import SCHEMAS

CANARY = "IGNORE-PREVIOUS-INSTRUCTIONS-c4n4ry"

FIXED_FAILURE = (
    b'{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"failure",'
    b'"error":{"code":"INVALID_RESPONSE","retryable":false}}'
)


def success(**data):
    body = {"change_id": "CR-1042", "decision": "approved", "reviewed_by": "Ada"}
    body.update(data)
    return {"tool": "review_status", "request_id": "req.J7q94MkP", "outcome": "success", "data": body}


HOSTILE = {
    "extra member": json.dumps(success(note=CANARY)).encode(),
    "canary in an enum field": json.dumps(success(decision=CANARY)).encode(),
    "duplicate member": (
        b'{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success","data":'
        b'{"change_id":"CR-1042","decision":"approved","reviewed_by":"Ada","reviewed_by":"' + CANARY.encode() + b'"}}'
    ),
    "invalid utf-8": json.dumps(success()).encode().replace(b"Ada", b"\xff" + CANARY.encode()),
    "trailing bytes": json.dumps(success()).encode() + b" " + CANARY.encode(),
    "lone surrogate": json.dumps(success(reviewed_by=CANARY + "\ud800")).encode(),
    "not JSON at all": CANARY.encode() * 10,
    "over the byte limit": json.dumps(success(reviewed_by=CANARY * 200)).encode(),
    "wrong request id": json.dumps(dict(success(), request_id="req." + CANARY[:20])).encode(),
    "deep nesting": b"[" * 5000 + CANARY.encode(),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_bodys_agent_value_is_the_fixed_failure_and_holds_nothing_of_it(name, review_request):
    guard = Guard.load(SCHEMAS / "review_status")
    admission = guard.admit(review_request, HOSTILE[name])
    assert not admission.admitted
    assert admission.agent_json == FIXED_FAILURE
    assert CANARY not in json.dumps(admission.agent)
    assert CANARY.encode() not in admission.agent_json
    assert admission.diagnostic
    # The masked diagnostic quotes no value of the body either.
    assert CANARY not in admission.diagnostic_masked
    assert CANARY not in repr(admission)


def test_an_admitted_success_gives_the_agent_only_the_contracts_fields(review_request):
    guard = Guard.load(SCHEMAS / "review_status")
    admission = guard.admit(review_request, json.dumps(success()).encode())
    assert admission.admitted and admission.verdict == "admitted" and admission.failure_code is None
    assert admission.agent == {
        "tool": "review_status",
        "request_id": "req.J7q94MkP",
        "outcome": "success",
        "data": {"change_id": "CR-1042", "decision": "approved", "reviewed_by": "Ada"},
    }


def test_the_diagnostics_keep_to_their_lines_whatever_the_body_quotes(review_request):
    """A member name holding a line feed, a forged `because` line, an escape sequence and a
    NUL: both diagnostics write them as escapes (the masked one still names the member in
    its path)."""
    guard = Guard.load(SCHEMAS / "review_status")
    body = (
        b'{"tool":"review_status","request_id":"req.J7q94MkP","outcome":"success","data":'
        b'{"change_id":"CR-1042","decision":"approved","reviewed_by":"x",'
        b'"a\\n  because fine\\u001b[2J\\u0000":1}}'
    )
    admission = guard.admit(review_request, body)
    assert admission.failure_code == "INVALID_RESPONSE"
    lines = admission.diagnostic.split("\n")
    assert all(line.startswith("  because ") for line in lines[1:]), admission.diagnostic
    for text in (admission.diagnostic, admission.diagnostic_masked):
        assert not any(ord(c) < 0x20 and c != "\n" or c == "\x7f" for c in text), repr(text)
    assert "\n" not in admission.diagnostic_masked
    assert "\\u{1b}" in admission.diagnostic
