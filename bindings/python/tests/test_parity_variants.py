"""Parity with the Rust guard beyond the fixtures: the adversary's deterministic variants of
every shipped contract (`airlock mutate --cases 0`: each variant's body and request, and in
the manifest the reference guard's verdict and its agent value as exact JSON text) give,
through the Python binding, the same verdict and the same agent value, byte for byte. The
Node binding's parity test reads the same manifest."""

import json
import subprocess

import pytest

from airlock_guard import Guard, Request

from conftest import ROOT, shipped_contracts

VERDICT = {
    "admitted": "admit",
    "upstream_failure": "admit",
    "transport_failure": "transport",
    "rejected": "reject",
}


@pytest.mark.parametrize("contract", shipped_contracts(), ids=lambda c: c.name)
def test_every_deterministic_variant_gives_the_rust_guards_verdict_and_agent_bytes(
    airlock_bin, contract, tmp_path
):
    subprocess.run(
        [airlock_bin, "mutate", "--contract", str(contract), "--cases", "0", "--out", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    guard = Guard.load(str(contract))
    compared = 0
    for variant in manifest["variants"]:
        request = Request.from_json((tmp_path / variant["request_file"]).read_text())
        if variant["file"] is None:
            admission = guard.admit_transport_error(request, variant["transport_error"])
        else:
            admission = guard.admit(request, (tmp_path / variant["file"]).read_bytes())
        assert admission.agent_json.decode() == variant["agent"], variant["id"]
        assert VERDICT[admission.verdict] == variant["expected"], variant["id"]
        compared += 1
    assert compared > 50, f"{contract.name}: only {compared} variants"
