#!/usr/bin/env bash
# The `airlock` wheel (harness/pyproject.toml: maturin's `bin` bindings) built and tried
# as a new user would: a fresh venv, `pip install` of the built wheel, `airlock --version`
# and an `airlock check`. Usage: ci/wheel.sh [--release]. Without --release the wheel
# carries a debug build (reusing the tests' target folder); with it, the release binary
# a published wheel carries. Exit 0 the wheel installs and runs; 1 it does not.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=dev
[ "${1:-}" = "--release" ] && profile=release

# shellcheck source=ci/common.sh
. ci/common.sh
maturin=$(maturin_bin)

out="$target_dir/wheels"
rm -rf "$out"
"$maturin" build --locked --profile "$profile" --manifest-path harness/Cargo.toml \
  --out "$out" --quiet
wheel=$(ls "$out"/airlock_harness-*.whl)
echo "built $wheel ($(du -h "$wheel" | cut -f1))"

# A new user's environment: nothing but the wheel.
venv="$target_dir/wheel-try"
fresh_venv "$venv" "$wheel"
version=$("$venv/bin/airlock" --version)
expected="airlock $(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "airlock-harness"))')"
if [ "$version" != "$expected" ]; then
  echo "the installed airlock says '$version', expected '$expected'" >&2
  exit 1
fi
echo "installed: $version ($venv/bin/airlock)"
# A check from the installed command, on a shipped contract (the guard as adapter).
"$venv/bin/airlock" check --contract schemas/review_status --cases 20 --quiet
echo "the installed airlock checked schemas/review_status"
