#!/usr/bin/env bash
# The bindings against their ecosystems' validators, per call, each side by side in one
# run (BENCHMARKS.md, "The guard from Python and Node"): the Python wheel against
# json.loads + jsonschema (FormatChecker), the Node addon against JSON.parse + ajv
# (compiled, ajv-formats). Release builds; not part of .ci/run (timings want a quiet
# machine). Prints two Markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
# shellcheck source=ci/common.sh
. ci/common.sh

# Python: the release wheel in a fresh venv with the baseline's pinned closure.
maturin=$(maturin_bin)
out="$target_dir/python-wheels-release"
rm -rf "$out"
"$maturin" build --locked --release --manifest-path bindings/python/Cargo.toml --out "$out" --quiet
venv="$target_dir/python-bench-venv"
fresh_venv "$venv" "$out"/airlock_guard-*.whl bindings/python/bench/requirements.txt
echo "Python: $("$venv/bin/python" --version), jsonschema $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("jsonschema"))')"
"$venv/bin/python" bindings/python/bench/admit.py

# Node: the release addon in a project with the pinned ajv and ajv-formats (the tests' lock).
cargo build --locked --release -p airlock-guard-node
bench="$target_dir/node-bench"
rm -rf "$bench"
mkdir -p "$bench/bench"
cp bindings/node/test/package.json bindings/node/test/package-lock.json "$bench/"
# `npm ci` empties node_modules: the addon goes in after it.
(cd "$bench" && npm ci --silent --no-audit --no-fund)
mkdir -p "$bench/node_modules/airlock-guard"
cp bindings/node/package.json bindings/node/index.js bindings/node/index.d.ts "$bench/node_modules/airlock-guard/"
cp "$target_dir/release/libairlock_guard_node.so" "$bench/node_modules/airlock-guard/airlock_guard.node"
cp bindings/node/bench/admit.js "$bench/bench/"
echo "Node: $(node --version), ajv $(cd "$bench" && node -p 'require("ajv/package.json").version')"
(cd "$bench" && AIRLOCK_REPO="$repo" node bench/admit.js)
