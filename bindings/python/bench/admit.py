"""The Python binding against json.loads + jsonschema (Draft 2020-12 validator with its
FormatChecker, the validator built once), per call, side by side in one run: the shipped
contracts' success fixtures (as benches/benches/admit.rs takes them) and a 1 MB body of the
bench contract bulk_status_large. The guard does more per call (byte limit, strict parse
with duplicates refused, binding, checks, projection, audit). The Admission builds its
Python values when read, so the guard is timed twice: `admit` alone, and `admit` with its
`.agent` read (the agent's value as a Python object, as the baseline's `json.loads` gives
one). Prints a Markdown table: µs per call each, and the ratios (baseline / guard: above
1, the guard is faster).

    ci/bindings-bench.sh   (release builds of both bindings, each beside its baseline)
"""

import json
import pathlib
import re
import sys
import time

import jsonschema
from airlock_guard import Guard

ROOT = pathlib.Path(__file__).resolve().parents[3]


def schema_of(folder):
    version = re.search(r"^version\s*=\s*(\d+)", (folder / "contract.toml").read_text(), re.M).group(1)
    return json.loads((folder / f"v{version}.schema.json").read_text())


def first_success(tool):
    folder = ROOT / "corpora" / tool / "accepted"
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".request.json"):
            continue
        body = path.read_bytes()
        if json.loads(body).get("outcome") != "success":
            continue
        override = path.with_name(path.name[: -len(".json")] + ".request.json")
        request = override if override.exists() else ROOT / "corpora" / tool / "request.json"
        return body, json.loads(request.read_text())
    raise SystemExit(f"{tool}: no success fixture")


def bulk_body(tool, max_len):
    """The same body as benches/src/lib.rs `bulk_body`."""
    head = (
        f'{{"tool":"{tool}","request_id":"req.BenchRun1","outcome":"success",'
        f'"data":{{"batch_id":"batch_bench","total":'
    )
    items, length, count = [], 0, 0
    while True:
        state = ["queued", "running", "done", "failed"][count % 4]
        sep = "" if count == 0 else ","
        item = (
            f'{sep}{{"id":"item_{count}","state":"{state}","score":0.{count % 1000:03},'
            f'"observed_at":"2026-12-02T09:{count % 60:02}:{(count * 7) % 60:02}Z"}}'
        )
        if len(head) + len(str(count)) + 10 + length + len(item) + 3 > max_len:
            return f'{head}{count},"items":[{"".join(items)}]}}}}'.encode()
        items.append(item)
        length += len(item)
        count += 1


def cases():
    out = []
    for tool in ["review_status", "job_run_status", "deploy_status", "identity_lookup"]:
        folder = ROOT / "schemas" / tool
        body, request = first_success(tool)
        out.append((tool, folder, body, request))
    folder = ROOT / "benches" / "contracts" / "bulk_status_large"
    request = {"request_id": "req.BenchRun1", "params": {"batch_id": "batch_bench"}, "now": "2026-12-02T10:00:00Z"}
    out.append(("bulk_1mb", folder, bulk_body("bulk_status_large", 1_000_000), request))
    return out


def per_call(fn, n, rounds=7):
    """The median of `rounds` rounds, in µs per call."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n * 1e6)
    samples.sort()
    return samples[len(samples) // 2]


def main():
    rows = []
    for name, folder, body, request in cases():
        guard = Guard.load(str(folder))
        validator_class = jsonschema.Draft202012Validator
        validator = validator_class(schema_of(folder), format_checker=validator_class.FORMAT_CHECKER)
        if not guard.admit(request, body).admitted or not validator.is_valid(json.loads(body)):
            raise SystemExit(f"{name}: both sides must accept the body")
        n = 10 if len(body) > 100_000 else 2000
        guard_times, agent_times, base_times = [], [], []
        for _ in range(3):  # alternated, so neither side gets the quieter machine
            guard_times.append(per_call(lambda: guard.admit(request, body), n))
            agent_times.append(per_call(lambda: guard.admit(request, body).agent, n))
            base_times.append(per_call(lambda: validator.is_valid(json.loads(body)), n))
        g, a, b = min(guard_times), min(agent_times), min(base_times)
        rows.append(
            f"| {name} | {len(body)} B | {g:.1f} µs | {a:.1f} µs | {b:.1f} µs | {b / g:.1f}× | {b / a:.1f}× |"
        )
    print(
        "| case | body | guard.admit | admit + .agent | json.loads + jsonschema "
        "| baseline / admit | baseline / (admit + .agent) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    sys.exit(main())
