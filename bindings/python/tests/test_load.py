"""Loading contracts and reading requests: errors are typed and name what failed."""

import shutil

import pytest

import airlock_guard
from airlock_guard import AirlockError, ContractError, Guard, Request, RequestError

from conftest import CORPORA, SCHEMAS, shipped_contracts


def copy_contract(tmp_path, tool="review_status"):
    target = tmp_path / "schemas" / tool
    shutil.copytree(SCHEMAS / tool, target)
    return target


def test_a_missing_contract_folder_is_a_contract_error_naming_the_manifest(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(ContractError) as raised:
        Guard.load(missing)
    assert str(missing / "contract.toml") in str(raised.value)
    assert isinstance(raised.value, AirlockError)


def test_a_manifest_with_an_unknown_key_is_a_contract_error_naming_the_manifest(tmp_path):
    folder = copy_contract(tmp_path)
    manifest = folder / "contract.toml"
    manifest.write_text(manifest.read_text() + "\nsurprise = true\n")
    with pytest.raises(ContractError, match="contract.toml") as raised:
        Guard.load(folder)
    assert str(manifest) in str(raised.value)


def test_a_schema_that_is_not_json_is_a_contract_error_naming_the_schema_file(tmp_path):
    folder = copy_contract(tmp_path)
    (folder / "v2.schema.json").write_text('{"type": "object",,}')
    with pytest.raises(ContractError) as raised:
        Guard.load(folder)
    assert str(folder / "v2.schema.json") in str(raised.value)


def test_load_all_maps_every_shipped_tool_to_its_guard():
    guards = Guard.load_all([str(c) for c in shipped_contracts()])
    assert sorted(guards) == sorted(c.name for c in shipped_contracts())
    assert all(g.tool == tool for tool, g in guards.items())


def test_load_all_refuses_two_folders_for_one_tool(tmp_path):
    copy = copy_contract(tmp_path)
    with pytest.raises(ContractError, match="review_status"):
        Guard.load_all([SCHEMAS / "review_status", copy])


def test_guard_exposes_the_contracts_limits_and_retry_policy():
    guard = Guard.load(SCHEMAS / "review_status", adapter=("py-test", "1.0"), endpoint="https://x.invalid")
    assert (guard.tool, guard.contract_version, guard.max_bytes, guard.is_mcp) == ("review_status", 2, 4096, False)
    policy = guard.retry_policy
    assert (policy.max_attempts, policy.deadline, policy.retryable) == (3, 10.0, ["UPSTREAM_UNAVAILABLE"])
    assert policy.is_retryable("UPSTREAM_UNAVAILABLE")
    assert not policy.is_retryable("INVALID_RESPONSE")
    assert Guard.load(SCHEMAS / "change_review").is_mcp


def test_adapter_identity_and_endpoint_are_in_every_audit_record(review_request):
    guard = Guard.load(SCHEMAS / "review_status", adapter=("py-test", "1.0"), endpoint="https://x.invalid")
    body = (CORPORA / "review_status" / "accepted" / "success_approved_compact.json").read_bytes()
    audit = guard.admit(review_request, body).audit
    assert audit["adapter"] == {"name": "py-test", "version": "1.0"}
    assert audit["endpoint"] == "https://x.invalid"


@pytest.mark.parametrize(
    "bad",
    [
        {"request_id": "r", "now": "2026-12-02T10:00:00Z", "extra": 1},
        {"now": "2026-12-02T10:00:00Z"},
        {"request_id": "r"},
        {"request_id": "r", "now": "2026-12-02T10:00:00+25:00"},
        {"request_id": "r", "now": "2026-12-02T10:00:00Z", "params": {"x": float("nan")}},
    ],
)
def test_a_request_that_is_not_a_request_object_is_a_request_error(bad):
    with pytest.raises(RequestError):
        Request.from_dict(bad)
    guard = Guard.load(SCHEMAS / "review_status")
    with pytest.raises(RequestError):
        guard.admit(bad, b"{}")


def test_a_request_reads_as_the_guard_reads_request_files(review_request):
    request = Request("req.J7q94MkP", "2026-12-02T11:00:00+01:00", params={"change_id": "CR-1042"})
    assert (request.request_id, request.now, request.params) == ("req.J7q94MkP", "2026-12-02T10:00:00Z", {"change_id": "CR-1042"})
    assert Request.from_dict(review_request).to_json() == request.to_json()
    assert Request(None, "2026-12-02T10:00:00Z", jsonrpc_id=7).request_id == "7"


def test_a_body_must_be_bytes(review_request):
    guard = Guard.load(SCHEMAS / "review_status")
    with pytest.raises(TypeError):
        guard.admit(review_request, '{"tool": "review_status"}')
    body = (CORPORA / "review_status" / "accepted" / "success_approved_compact.json").read_bytes()
    assert guard.admit(review_request, bytearray(body)).admitted
    assert guard.admit(review_request, memoryview(body)).admitted


def test_the_package_exports_its_api_and_ships_type_stubs():
    import pathlib

    package = pathlib.Path(airlock_guard.__file__).parent
    assert (package / "py.typed").is_file() and (package / "_native.pyi").is_file()
    assert set(airlock_guard.__all__) <= set(dir(airlock_guard))
    assert airlock_guard.TRANSPORT_ERRORS == ["timeout", "connection_reset", "unreachable"]


def test_any_mapping_is_a_request_and_json_text_is_pointed_to_from_json(review_request):
    import collections
    import json
    import types

    guard = Guard.load(SCHEMAS / "review_status")
    body = (CORPORA / "review_status" / "accepted" / "success_approved_compact.json").read_bytes()
    expected = guard.admit(review_request, body).agent_json
    for mapping in [types.MappingProxyType(review_request), collections.UserDict(review_request)]:
        assert guard.admit(mapping, body).agent_json == expected
    with pytest.raises(RequestError, match="Request.from_json"):
        guard.admit(json.dumps(review_request), body)
    with pytest.raises(RequestError, match="not list"):
        guard.admit([review_request], body)
