#!/usr/bin/env bash
# The MCP test parts (tests/mcp/): a venv at target/mcp-venv with the official MCP Python
# SDK and its whole dependency closure as pinned in tests/mcp/requirements.txt. Idempotent:
# pip runs only when the installed set differs from the pinned one. Needs python3 and the
# package index once.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x target/mcp-venv/bin/python ]; then
  python3 -m venv target/mcp-venv
fi
if ! diff -q <(grep -Ev '^\s*(#|$)' tests/mcp/requirements.txt | sed 's/ .*//' | tr 'A-Z_' 'a-z-' | sort) \
    <(target/mcp-venv/bin/pip freeze 2>/dev/null | tr 'A-Z_' 'a-z-' | sort) >/dev/null; then
  target/mcp-venv/bin/pip install -q -r tests/mcp/requirements.txt
fi
