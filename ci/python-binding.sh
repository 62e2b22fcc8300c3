#!/usr/bin/env bash
# The Python binding (bindings/python: PyO3, maturin) built and tried as a user would: the
# wheel built with the tests' target folder (--profile dev), a fresh venv, `pip install` of
# the wheel and the pinned pytest, then bindings/python/tests: parity with `airlock admit`
# over every shipped fixture, hostile bodies, load errors, retries, the GIL released, and
# docs/examples/python_guard_adapter.py under `airlock check`, and airlock_guard.mcp against
# tests/mcp/server.py in the MCP SDK venv (ci/mcp-venv.sh; required when AIRLOCK_REQUIRE_MCP=1).
# Usage: ci/python-binding.sh [PYTEST ARGS...]. The `airlock` binary is $AIRLOCK, else the
# target folder's debug build (built here if missing). Exit 0 every test passed.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=ci/common.sh
. ci/common.sh
maturin=$(maturin_bin)

export AIRLOCK="${AIRLOCK:-$target_dir/debug/airlock}"
if [ ! -x "$AIRLOCK" ]; then
  cargo build -p airlock-harness --bin airlock --locked
fi

out="$target_dir/python-wheels"
rm -rf "$out"
"$maturin" build --locked --profile dev --manifest-path bindings/python/Cargo.toml \
  --out "$out" --quiet
wheel=$(ls "$out"/airlock_guard-*.whl)
echo "built $wheel ($(du -h "$wheel" | cut -f1))"

venv="$target_dir/python-binding-venv"
fresh_venv "$venv" "$wheel" bindings/python/requirements-test.txt
"$venv/bin/python" -c 'import airlock_guard; print("installed: airlock_guard", airlock_guard.__version__)'

cd bindings/python
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -p no:cacheprovider -q tests "$@"
