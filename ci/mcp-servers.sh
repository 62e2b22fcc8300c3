#!/usr/bin/env bash
# The official MCP servers the real-traffic test runs (tests/mcp/real_servers.py): the npm
# filesystem, memory and everything servers, pinned by tests/mcp/servers/package-lock.json
# and installed with `npm ci` into tests/mcp/servers/node_modules (git ignores it).
# mcp-server-time (PyPI) is pinned in tests/mcp/requirements.txt (ci/mcp-venv.sh).
# Idempotent: npm runs only when the lock is newer than the install. Needs node, npm and the
# npm registry once.
set -euo pipefail
cd "$(dirname "$0")/../tests/mcp/servers"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
