"""The latency `airlock mcp proxy` adds on a real server, by answer size (issue 20).

    python3 tests/mcp/bench_real.py [--airlock target/release/airlock] [--calls 200]

The official filesystem server (tests/mcp/servers, `ci/mcp-servers.sh`) serves files of
several sizes; its contracts are imported with `airlock mcp import` as a user would. The
same `read_text_file` calls, one at a time over raw JSON-RPC pipes (standard library only,
so the figures are the proxy's and not a client's), go once straight to the server and once
through `airlock mcp proxy --contracts`; the difference of the medians is the proxy's cost
for that size. The answer carries the file twice (structuredContent and the text block),
so its size is about twice the file's. Prints a JSON summary with the added median per size
and the slope (µs per KiB of answer) between the two largest sizes; exit 1 when the median
added at the smallest size is over 1 ms.
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
SERVER = os.path.join(ROOT, "tests/mcp/servers/node_modules/.bin/mcp-server-filesystem")
SIZES = [200, 1000, 10_000, 100_000, 1_000_000]


class Peer:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> bytes:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"bench_real: the peer closed its stdout during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return line

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def timed(peer: Peer, path: str, calls: int) -> tuple[list[float], int]:
    times, size = [], 0
    for _ in range(calls):
        start = time.perf_counter()
        line = peer.request("tools/call", {"name": "read_text_file", "arguments": {"path": path}})
        times.append(time.perf_counter() - start)
        size = len(line)
        if b'"isError":true' in line:
            raise SystemExit(f"bench_real: the call failed: {line[:300]!r}")
    return times, size


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--airlock", default=os.path.join(ROOT, "target/release/airlock"))
    p.add_argument("--calls", type=int, default=200)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = os.path.join(tmp, "files")
        os.mkdir(files)
        for size in SIZES:
            with open(os.path.join(files, f"f{size}.txt"), "w") as f:
                line = "a line of text in a file the agent reads.\n"
                f.write((line * (size // len(line) + 1))[:size])
        schemas = os.path.join(tmp, "schemas")
        subprocess.run([args.airlock, "mcp", "import", "--server-cmd", f"{SERVER} {files}", "--out", schemas],
                       check=True, capture_output=True)
        direct = Peer([SERVER, files])
        proxied = Peer([args.airlock, "mcp", "proxy", "--contracts", schemas, "--", SERVER, files])
        rows = []
        for size in SIZES:
            path = os.path.join(files, f"f{size}.txt")
            timed(direct, path, 10)
            timed(proxied, path, 10)
            # Interleaved rounds, so that drift on the machine hits both sides alike.
            d_times, p_times, answer = [], [], 0
            for _ in range(4):
                d, answer = timed(direct, path, args.calls // 4)
                q, _ = timed(proxied, path, args.calls // 4)
                d_times += d
                p_times += q
            d_med, p_med = statistics.median(d_times), statistics.median(p_times)
            rows.append({
                "file_bytes": size,
                "answer_bytes": answer,
                "direct_median_us": round(d_med * 1e6, 1),
                "proxied_median_us": round(p_med * 1e6, 1),
                "added_median_us": round((p_med - d_med) * 1e6, 1),
            })
        direct.close()
        proxied.close()
    big, bigger = rows[-2], rows[-1]
    slope = (bigger["added_median_us"] - big["added_median_us"]) / ((bigger["answer_bytes"] - big["answer_bytes"]) / 1024)
    summary = {"calls_per_size": args.calls, "rows": rows, "slope_us_per_kib": round(slope, 2)}
    print(json.dumps(summary, indent=2))
    if rows[0]["added_median_us"] > 1000:
        print("bench_real: over 1 ms added at the smallest answer", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
