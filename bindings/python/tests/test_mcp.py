"""airlock_guard.mcp.GuardedSession around the official MCP SDK's ClientSession.call_tool,
against the test server (tests/mcp/server.py) in every misbehaviour mode, with the shipped
MCP contract schemas/change_review. Runs in the SDK's venv (target/mcp-venv, made by
ci/mcp-venv.sh) with this wheel on its path; skipped without that venv unless
AIRLOCK_REQUIRE_MCP=1 (as in .ci/run)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import airlock_guard

from conftest import ROOT

MCP_PYTHON = ROOT / "target" / "mcp-venv" / "bin" / "python"
DRIVER = pathlib.Path(__file__).with_name("mcp_driver.py")
CANARY = "AIRLOCK-CANARY-7f3a9c"
MODES = [
    "ok",
    "extra_member",
    "disagreeing_text",
    "non_json_text",
    "duplicate_key_text",
    "extra_text_block",
    "bad_format",
    "wrong_enum",
    "wrong_type",
    "missing_structured",
    "no_content",
    "text_block_member",
    "is_error_injection",
    "jsonrpc_error",
]
# MCPErrors (a session that raises them): the SDK's timeout and closed connection, and a
# server's own errors, one of them with the code the SDK uses for a closed connection.
SDK_ERRORS = ["sdk:timeout", "sdk:closed", "sdk:server-32000", "sdk:server-32603"]


@pytest.fixture(scope="module")
def results():
    if not MCP_PYTHON.exists():
        if os.environ.get("AIRLOCK_REQUIRE_MCP") == "1":
            pytest.fail(f"no MCP SDK venv at {MCP_PYTHON}: run ci/mcp-venv.sh")
        pytest.skip("no MCP SDK venv (ci/mcp-venv.sh)")
    site = pathlib.Path(airlock_guard.__file__).parents[1]
    run = subprocess.run(
        [str(MCP_PYTHON), str(DRIVER), str(ROOT), "change_review", '{"change_id": "CR-1"}', *MODES, *SDK_ERRORS],
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(site)),
        timeout=300,
    )
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-3000:]
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    return {line["mode"]: line for line in lines}


def test_a_well_behaved_call_gives_the_projection(results):
    ok = results["ok"]
    assert ok["admitted"] and not ok["result"]["isError"]
    assert set(ok["result"]["structuredContent"]) == {"change_id", "decision", "reviewed_by", "observed_at"}
    assert ok["result"]["structuredContent"]["change_id"] == "CR-1"


@pytest.mark.parametrize("mode", [m for m in MODES if m != "ok"])
def test_a_misbehaving_servers_result_reaches_the_caller_as_a_fixed_failure_without_its_text(results, mode):
    line = results[mode]
    if mode == "text_block_member":
        # The SDK's TextContent model drops the member before the wrapper sees the result
        # (docs/python.md: what judging the SDK's reading loses): the rest is honest and
        # admitted; nothing of the member reaches the fresh result.
        assert line["admitted"] and not line["result"]["isError"], line
        assert CANARY not in json.dumps(line["result"])
        return
    assert line["result"]["isError"]
    assert CANARY not in json.dumps(line["result"])
    assert line["failure_code"] in ("INVALID_RESPONSE", "OUTCOME_UNVERIFIED", "TOOL_ERROR", "UPSTREAM_UNAVAILABLE")
    if mode in ("is_error_injection", "jsonrpc_error"):
        assert line["failure_code"] in ("TOOL_ERROR", "UPSTREAM_UNAVAILABLE"), line
    else:
        assert not line["admitted"]


def test_the_sdks_timeout_and_closed_connection_are_transport_failures_not_server_errors(results):
    """mcp 2.x signals a timeout as MCPError(-32001), a closed connection as -32000: the
    audit record says so, instead of "the server answered with JSON-RPC error -32001"; a
    server's own -32000 stays its JSON-RPC error."""
    for mode, keyword in [("sdk:timeout", "timeout"), ("sdk:closed", "connection_reset")]:
        line = results[mode]
        assert (line["verdict"], line["keyword"]) == ("transport_failure", keyword), line
        assert (line["failure_code"], line["retryable"]) == ("UPSTREAM_UNAVAILABLE", True), line
    for mode in ["sdk:server-32000", "sdk:server-32603"]:
        line = results[mode]
        assert (line["keyword"], line["failure_code"]) == ("jsonrpc_error", "UPSTREAM_UNAVAILABLE"), line
    for mode in SDK_ERRORS:
        assert "ignore" not in json.dumps(results[mode]["result"])


def test_a_guard_given_under_another_tools_name_is_refused_before_anything_is_sent(tmp_path):
    """Every call to the tool would be sent, then judged as another tool's answer."""
    from airlock_guard.mcp import GuardedSession

    import shutil

    other = tmp_path / "other_review"
    shutil.copytree(ROOT / "schemas" / "change_review", other)
    manifest = other / "contract.toml"
    manifest.write_text(manifest.read_text().replace('tool = "change_review"', 'tool = "other_review"'))
    guard = airlock_guard.Guard.load(other)
    assert guard.tool == "other_review"
    with pytest.raises(ValueError, match="other_review"):
        GuardedSession(object(), {"change_review": guard})
    assert GuardedSession(object(), {"other_review": guard}).guards == {"other_review": guard}
