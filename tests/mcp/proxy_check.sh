#!/usr/bin/env bash
# Real MCP client <-> airlock mcp proxy <-> real MCP server (the official Python SDK on both
# sides, tests/mcp/): one good call arrives as the fresh value, one hostile call
# (extra_member, with the canary) as the fixed failure, and both are in the audit file.
#
#   tests/mcp/proxy_check.sh [AIRLOCK_BINARY]      (default target/debug/airlock)
set -euo pipefail
cd "$(dirname "$0")/../.."

airlock=${1:-target/debug/airlock}
py=target/mcp-venv/bin/python
if [ ! -x "$py" ]; then
  echo "proxy_check: $py is missing; install: python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install -r tests/mcp/requirements.txt" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The server's review tool (renamed change_review; review_status before the rename).
if grep -q 'def change_review(' tests/mcp/server.py; then tool=change_review; else tool=review_status; fi
# schemas/change_review without its `fresh` check: this check is about what passes the
# proxy, not the clock (the server's observed_at is the call's time, or fixed when
# AIRLOCK_TEST_FIXED_TIME is set).
mkdir "$tmp/$tool"
cp schemas/change_review/v1.schema.json "$tmp/$tool/"
python3 - "$tmp/$tool/contract.toml" "$tool" <<'PY'
import re, sys
text = open("schemas/change_review/contract.toml").read()
text = text.replace('tool = "change_review"', 'tool = "%s"' % sys.argv[2])
text = re.sub(r'\[\[checks\]\]\nkind = "fresh"\n(?:[a-z_]+ = .*\n)*', "", text)
open(sys.argv[1], "w").write(text)
PY

call() { # MODE -> the client's stdout
  local server
  server="$(printf '%q' "$airlock") mcp proxy --contract $(printf '%q' "$tmp/$tool") --audit $(printf '%q' "$tmp/audit.jsonl") -- $(printf '%q' "$py") tests/mcp/server.py --mode $1"
  "$py" tests/mcp/client.py --server-cmd "$server" call "$tool" '{"change_id":"CR-1"}'
}

good=$(call ok)
bad=$(call extra_member)
python3 - "$good" "$bad" "$tmp/audit.jsonl" <<'PY'
import json, sys
good, bad = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert good["isError"] is False, good
assert good["structuredContent"]["decision"] == "approved", good
assert json.loads(good["content"][0]["text"]) == good["structuredContent"], good
assert bad["isError"] is True and "structuredContent" not in bad, bad
assert json.loads(bad["content"][0]["text"])["error"]["code"] == "INVALID_RESPONSE", bad
assert "AIRLOCK-CANARY-7f3a9c" not in sys.argv[2], "the canary reached the client"
verdicts = [json.loads(line)["verdict"] for line in open(sys.argv[3])]
assert verdicts == ["admitted", "rejected"], verdicts
print("proxy_check: good call admitted, extra_member call refused (fixed failure, no canary), 2 audit records")
PY
