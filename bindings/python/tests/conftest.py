"""Shared fixtures: the repository root, the `airlock` binary, the shipped contracts."""

import json
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCHEMAS = ROOT / "schemas"
CORPORA = ROOT / "corpora"


def shipped_contracts():
    """Every shipped contract folder with a corpus beside it."""
    return sorted(
        d for d in SCHEMAS.iterdir() if (d / "contract.toml").is_file() and (CORPORA / d.name).is_dir()
    )


def fixture_request(fixture: pathlib.Path) -> pathlib.Path:
    """The request a fixture answers: NAME.request.json beside it, else the corpus's request.json."""
    beside = fixture.with_name(fixture.name[: -len(".json")] + ".request.json")
    if beside.is_file():
        return beside
    return fixture.parents[1] / "request.json"


def shipped_fixtures():
    """(contract folder, fixture file) for every accepted and near-miss fixture."""
    out = []
    for contract in shipped_contracts():
        for kind in ("accepted", "near_miss"):
            folder = CORPORA / contract.name / kind
            if not folder.is_dir():
                continue
            for fixture in sorted(folder.iterdir()):
                if fixture.name.endswith(".json") and not fixture.name.endswith(".request.json"):
                    out.append((contract, fixture))
    return out


@pytest.fixture(scope="session")
def airlock_bin() -> str:
    """The `airlock` binary the Rust side of the parity tests runs ($AIRLOCK, else target/debug)."""
    path = os.environ.get("AIRLOCK") or str(ROOT / "target" / "debug" / "airlock")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no airlock binary at {path}: build it (cargo build -p airlock-harness) or set AIRLOCK")
    return path


@pytest.fixture(scope="session")
def review_request() -> dict:
    return json.loads((CORPORA / "review_status" / "request.json").read_bytes())
