"""Parity with the Rust guard: every shipped contract's accepted and near-miss fixtures give,
through the Python binding, the same agent value bytes, verdict and audit record as
`airlock admit` (the Rust guard run by the binary)."""

import subprocess

import pytest

from airlock_guard import Guard, Request

from conftest import ROOT, fixture_request, shipped_contracts, shipped_fixtures

FIXTURES = shipped_fixtures()
_GUARDS = {}


def guard_for(contract):
    if contract not in _GUARDS:
        _GUARDS[contract] = Guard.load(contract)
    return _GUARDS[contract]


def test_every_shipped_contract_has_fixtures_in_the_parity_run():
    covered = {contract for contract, _ in FIXTURES}
    assert covered == set(shipped_contracts())
    assert len(shipped_contracts()) >= 9


@pytest.mark.parametrize(
    "contract,fixture",
    FIXTURES,
    ids=[f"{c.name}/{f.parent.name}/{f.name}" for c, f in FIXTURES],
)
def test_fixture_gives_the_rust_guards_agent_bytes_verdict_and_audit(airlock_bin, contract, fixture):
    rust = subprocess.run(
        [airlock_bin, "admit", "--audit", "--contract", str(contract), str(fixture)],
        capture_output=True,
        cwd=ROOT,
    )
    assert rust.returncode in (0, 1), rust.stderr.decode(errors="replace")
    rust_agent = rust.stdout.rstrip(b"\n")
    rust_audit = rust.stderr.decode().rstrip("\n").split("\n")[-1]

    guard = guard_for(contract)
    request = Request.from_json(fixture_request(fixture).read_bytes())
    admission = guard.admit(request, fixture.read_bytes())

    agent = admission.call_tool_result_json if guard.is_mcp else admission.agent_json
    assert agent == rust_agent
    assert admission.admitted == (rust.returncode == 0)
    assert admission.audit_json == rust_audit
    # The corpus's own promise: accepted fixtures are admitted, near misses are not.
    assert admission.admitted == (fixture.parent.name == "accepted")
    if admission.admitted:
        assert admission.diagnostic is None or admission.verdict == "upstream_failure"
    else:
        assert admission.failure_code in ("INVALID_RESPONSE", "OUTCOME_UNVERIFIED")
        assert admission.diagnostic
