"""The latency `airlock mcp proxy` adds to a tools/call, and its peak memory on a 100 MB answer.

    python3 tests/mcp/bench_proxy.py [--airlock target/release/airlock] [--calls 1000]

Raw JSON-RPC over pipes, no SDK (standard library only), so that the figures are the proxy's
and not a client's: a tiny server (this file, `--serve`) answers every tools/call at once with
a fixed result of about 1 KB (structuredContent plus its text block, valid for the bench
contract written to a temporary folder). The same calls, one at a time, go once straight to
the server and once through the proxy; the difference of the medians is the proxy's cost.
Then the server answers one call with a 100 MB line and the proxy's peak resident memory
(VmHWM, Linux /proc) is read: the line is never held whole, so it stays near the proxy's
baseline, bounded by the contract's max_bytes (16 KiB here), not by the line.

Prints a JSON summary; exit 1 when the median added latency is over 1 ms or the peak grows by
more than 32 MiB over the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCHEMA = {
    "type": "object",
    "properties": {
        "item_id": {"type": "string", "maxLength": 64},
        "state": {"enum": ["ready", "busy"]},
        "payload": {"type": "string", "maxLength": 2048},
    },
    "required": ["item_id", "state", "payload"],
    "additionalProperties": False,
}

CONTRACT = """tool = "bench_item"
version = 1
[input]
kind = "mcp"
[limits]
max_bytes = 16384
max_depth = 8
[agent]
fields = ["/item_id", "/state", "/payload"]
[[checks]]
kind = "equals_param"
field = "/item_id"
param = "item_id"
[retry]
max_attempts = 1
deadline = "10s"
retryable = ["UPSTREAM_UNAVAILABLE"]
"""


def serve() -> None:
    """The bench server: a 1 KB result per tools/call; `"big": true` gets a 100 MB line."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if msg.get("method") != "tools/call":
            if "id" in msg:
                out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}).encode() + b"\n")
                out.flush()
            continue
        args = msg["params"].get("arguments", {})
        if args.get("big"):
            out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(msg["id"]).encode() + b',"result":{"content":[{"type":"text","text":"')
            chunk = b"a" * (1 << 20)
            for _ in range(100):
                out.write(chunk)
            out.write(b'"}]}}\n')
            out.flush()
            continue
        data = {"item_id": args["item_id"], "state": "ready", "payload": "x" * 400}
        result = {
            "content": [{"type": "text", "text": json.dumps(data, separators=(",", ":"))}],
            "structuredContent": data,
            "isError": False,
        }
        out.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}, separators=(",", ":")).encode() + b"\n")
        out.flush()


def timed_calls(cmd: list[str], calls: int) -> tuple[list[float], int, subprocess.Popen]:
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    times = []
    size = 0
    for i in range(calls + 50):
        request = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": "bench_item", "arguments": {"item_id": f"I-{i}"}}}
        line = json.dumps(request).encode() + b"\n"
        start = time.perf_counter()
        proc.stdin.write(line)
        proc.stdin.flush()
        answer = proc.stdout.readline()
        elapsed = time.perf_counter() - start
        reply = json.loads(answer)
        if reply["result"].get("isError"):
            raise SystemExit(f"call {i} was not admitted: {answer[:300]!r}")
        size = len(answer)
        if i >= 50:  # warm-up
            times.append(elapsed)
    return times, size, proc


def vm_hwm_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise SystemExit("no VmHWM in /proc (Linux only)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--airlock", default=os.path.join(ROOT, "target/release/airlock"))
    p.add_argument("--calls", type=int, default=1000)
    args = p.parse_args()
    if args.serve:
        serve()
        return
    server = [sys.executable, os.path.abspath(__file__), "--serve"]
    with tempfile.TemporaryDirectory() as tmp:
        contract = os.path.join(tmp, "bench_item")
        os.mkdir(contract)
        with open(os.path.join(contract, "v1.schema.json"), "w") as f:
            json.dump(SCHEMA, f)
        with open(os.path.join(contract, "contract.toml"), "w") as f:
            f.write(CONTRACT)
        proxied_cmd = [args.airlock, "mcp", "proxy", "--contract", contract, "--", *server]

        direct, size, proc = timed_calls(server, args.calls)
        proc.stdin.close()
        proc.wait()
        through, _, proxy = timed_calls(proxied_cmd, args.calls)
        baseline = vm_hwm_kib(proxy.pid)
        big = {"jsonrpc": "2.0", "id": "big", "method": "tools/call",
               "params": {"name": "bench_item", "arguments": {"item_id": "I-big", "big": True}}}
        proxy.stdin.write(json.dumps(big).encode() + b"\n")
        proxy.stdin.flush()
        answer = json.loads(proxy.stdout.readline())
        assert answer["id"] == "big" and answer["result"]["isError"] is True, answer
        # A call after it is answered only once the 100 MB line was skipped whole.
        proxy.stdin.write(b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n')
        proxy.stdin.flush()
        assert json.loads(proxy.stdout.readline())["id"] == "after"
        peak = vm_hwm_kib(proxy.pid)
        proxy.stdin.close()
        proxy.wait()

    median_direct = statistics.median(direct) * 1e6
    median_through = statistics.median(through) * 1e6
    added = median_through - median_direct
    summary = {
        "airlock": args.airlock,
        "calls": args.calls,
        "answer_bytes": size,
        "direct_median_us": round(median_direct, 1),
        "proxied_median_us": round(median_through, 1),
        "added_median_us": round(added, 1),
        "direct_p99_us": round(sorted(direct)[int(len(direct) * 0.99)] * 1e6, 1),
        "proxied_p99_us": round(sorted(through)[int(len(through) * 0.99)] * 1e6, 1),
        "proxy_peak_kib_after_1kb_calls": baseline,
        "proxy_peak_kib_after_100mb_line": peak,
    }
    print(json.dumps(summary, indent=2))
    if added > 1000 or peak - baseline > 32 * 1024:
        sys.exit(1)


if __name__ == "__main__":
    main()
