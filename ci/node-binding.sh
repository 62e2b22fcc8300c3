#!/usr/bin/env bash
# The Node binding (bindings/node: a napi-rs addon) built, packed with `npm pack`,
# installed with `npm install` into a fresh folder as a user would, and its tests run
# against the installed package (node:test, no other dependency): the API, typed errors,
# retries, Node's HTTP clients against a server on 127.0.0.1, MCP, and parity with the
# Rust guard on every shipped contract's fixtures and deterministic variants.
# Usage: ci/node-binding.sh [--release]. Exit 0 all pass.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
profile=dev
dir=debug
if [ "${1:-}" = "--release" ]; then profile=release; dir=release; fi

# shellcheck source=ci/common.sh
. ci/common.sh
cargo build --locked --profile "$profile" -p airlock-guard-node
# The parity test asks `airlock mutate` for the reference's answers: the binary the tests
# built, or one built now.
[ -x "$target_dir/$dir/airlock" ] || cargo build --locked --profile "$profile" -p airlock-harness

# The package as npm would publish it: the JavaScript, the types, the addon.
stage="$target_dir/node-package"
rm -rf "$stage"
mkdir -p "$stage"
cp bindings/node/package.json bindings/node/index.js bindings/node/index.d.ts bindings/node/mcp.js \
  bindings/node/mcp.d.ts bindings/node/README.md "$stage/"
# Debug info is most of a debug build's size; the package does not need it.
objcopy --strip-debug "$target_dir/$dir/libairlock_guard_node.so" "$stage/airlock_guard.node"
tarball=$(cd "$stage" && npm pack --silent --pack-destination "$target_dir")
echo "packed $target_dir/$tarball ($(du -h "$target_dir/$tarball" | cut -f1))"

# A new user's project: the tests' pinned dependencies (the MCP TypeScript SDK, from
# package-lock.json) and the package, installed from its tarball.
try="$target_dir/node-try"
rm -rf "$try"
mkdir -p "$try/test"
cp bindings/node/test/package.json bindings/node/test/package-lock.json "$try/"
(cd "$try" && npm ci --silent --no-audit --no-fund && npm install --no-save --silent --no-audit --no-fund "$target_dir/$tarball")
cp bindings/node/test/*.test.js "$try/test/"
# The declarations describe the JavaScript: a typed use of every export compiles (strict).
cp bindings/node/test/types.ts "$try/"
(cd "$try" && node_modules/.bin/tsc --noEmit --strict --module nodenext --moduleResolution nodenext \
  --target es2022 --types node types.ts)
# The MCP wrapper's test needs the real MCP server's Python (ci/mcp-venv.sh).
python="$repo/target/mcp-venv/bin/python"
tests=(test/guard.test.js test/clients.test.js test/parity.test.js test/adapter.test.js)
if [ -x "$python" ]; then
  tests+=(test/mcp.test.js)
elif [ -n "${AIRLOCK_REQUIRE_MCP:-}" ]; then
  echo "AIRLOCK_REQUIRE_MCP is set but $python is missing: run ci/mcp-venv.sh" >&2
  exit 1
else
  echo "skipped test/mcp.test.js: $python is absent (ci/mcp-venv.sh installs it)" >&2
fi
(cd "$try" && NODE_PATH="$try/node_modules" AIRLOCK_REPO="$repo" AIRLOCK="$target_dir/$dir/airlock" AIRLOCK_MCP_PYTHON="$python" \
  node --test "${tests[@]}")

# The worked adapter of docs/node.md, tested the way its page says: airlock check over the
# exec protocol, through the same judging code its HTTP path runs.
NODE_PATH="$try/node_modules" "$target_dir/$dir/airlock" check --contract schemas/review_status --quiet \
  --adapter-cmd "node docs/examples/node_adapter.js --exec-protocol"
