"""The official MCP servers through `airlock mcp proxy`, with the contracts `airlock mcp import`
writes, called by the official Python SDK client (issue 20).

    real_servers.py AIRLOCK_BINARY WORK_DIR

For each server (the npm filesystem, memory and everything servers pinned in
tests/mcp/servers/package-lock.json, and mcp-server-time pinned in requirements.txt):

1. `airlock mcp import --server-cmd` from the live server into WORK_DIR/<server>/schemas;
2. one SDK session through `airlock mcp proxy --contracts ... --unguarded pass --record ...`
   calling every structured tool with realistic arguments (files of several sizes, one over
   64 KiB, media, writes, moves, deletes, tool errors, unknown time zones);
   every honest result must be admitted (0 refused), equal to the server's own answer to that
   call (the recorded raw line), and every tool error must reach the agent as TOOL_ERROR;
3. `airlock check` on each imported contract with the recorded fixtures as its corpus: exit 0.

Then the hostile test server (tests/mcp/server.py, every --mode) through the proxy with the
contracts imported from it: no canary in anything the client receives, every hostile
structured result refused. Prints one summary line per server and exits non-zero on the
first failure.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "tests/mcp/servers/node_modules/.bin"
PY = Path(sys.executable)
CANARY = "AIRLOCK-CANARY"
REFUSED = {"INVALID_RESPONSE", "OUTCOME_UNVERIFIED"}


def fail(message: str) -> None:
    print(f"real_servers: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\x80\x20\x10" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def wav(samples: int) -> bytes:
    data = bytes(i % 256 for i in range(samples))
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    return b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data


def filesystem(work: Path) -> tuple[list[str], dict[str, str], list[tuple[str, dict[str, Any], bool]]]:
    root = work / "files"
    (root / "docs").mkdir(parents=True)
    (root / "small.txt").write_text("hello from a small file\n")
    (root / "config.json").write_text('{"name": "demo", "replicas": 3, "tags": ["a", "b"]}\n')
    (root / "notes.md").write_text("# Notes\n\n" + "A line of notes about the project.\n" * 1200)  # ~40 KB
    (root / "big.log").write_text("".join(f"2026-12-04T10:{i % 60:02d}:00Z INFO request {i} served\n" for i in range(6000)))  # > 200 KB
    (root / "docs" / "readme.txt").write_text("docs readme\n")
    (root / "pixel.png").write_bytes(png(16, 16))
    (root / "beep.wav").write_bytes(wav(4000))
    r = str(root)
    calls = [
        ("read_text_file", {"path": f"{r}/small.txt"}, True),
        ("read_text_file", {"path": f"{r}/config.json"}, True),
        ("read_text_file", {"path": f"{r}/notes.md"}, True),
        ("read_text_file", {"path": f"{r}/big.log"}, True),
        ("read_text_file", {"path": f"{r}/big.log", "head": 5}, True),
        ("read_text_file", {"path": f"{r}/big.log", "tail": 3}, True),
        ("read_file", {"path": f"{r}/small.txt"}, True),
        ("read_media_file", {"path": f"{r}/pixel.png"}, True),
        ("read_media_file", {"path": f"{r}/beep.wav"}, True),
        ("read_multiple_files", {"paths": [f"{r}/small.txt", f"{r}/config.json", f"{r}/missing.txt"]}, True),
        ("write_file", {"path": f"{r}/out.txt", "content": "written by the agent\n"}, True),
        ("edit_file", {"path": f"{r}/out.txt", "edits": [{"oldText": "agent", "newText": "airlock test"}]}, True),
        ("edit_file", {"path": f"{r}/out.txt", "edits": [{"oldText": "x", "newText": "y"}], "dryRun": True}, False),
        ("create_directory", {"path": f"{r}/made/deeper"}, True),
        ("list_directory", {"path": r}, True),
        ("list_directory", {"path": f"{r}/made/deeper"}, True),
        ("list_directory_with_sizes", {"path": r, "sortBy": "size"}, True),
        ("directory_tree", {"path": f"{r}/docs"}, True),
        ("move_file", {"source": f"{r}/out.txt", "destination": f"{r}/made/out.txt"}, True),
        ("search_files", {"path": r, "pattern": "*.txt"}, True),
        ("search_files", {"path": r, "pattern": "*.nothing"}, True),
        ("get_file_info", {"path": f"{r}/config.json"}, True),
        ("list_allowed_directories", {}, True),
        ("read_text_file", {"path": f"{r}/missing.txt"}, False),
        ("write_file", {"path": "/etc/airlock-should-not-write", "content": "x"}, False),
        ("move_file", {"source": f"{r}/missing.txt", "destination": f"{r}/x.txt"}, False),
    ]
    return [str(BIN / "mcp-server-filesystem"), r], {}, calls


def memory(work: Path) -> tuple[list[str], dict[str, str], list[tuple[str, dict[str, Any], bool]]]:
    env = {"MEMORY_FILE_PATH": str(work / "memory.jsonl")}
    calls = [
        ("create_entities", {"entities": [
            {"name": "Ada", "entityType": "person", "observations": ["writes programs", "likes engines"]},
            {"name": "Engine", "entityType": "machine", "observations": ["analytical"]},
        ]}, True),
        ("create_relations", {"relations": [{"from": "Ada", "to": "Engine", "relationType": "programs"}]}, True),
        ("add_observations", {"observations": [{"entityName": "Ada", "contents": ["published notes"]}]}, True),
        ("read_graph", {}, True),
        ("search_nodes", {"query": "engine"}, True),
        ("search_nodes", {"query": "nothing matches this"}, True),
        ("open_nodes", {"names": ["Ada"]}, True),
        ("delete_observations", {"deletions": [{"entityName": "Ada", "observations": ["likes engines"]}]}, True),
        ("delete_relations", {"relations": [{"from": "Ada", "to": "Engine", "relationType": "programs"}]}, True),
        ("delete_entities", {"entityNames": ["Engine"]}, True),
        ("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}, False),
    ]
    return [str(BIN / "mcp-server-memory")], env, calls


def everything(work: Path) -> tuple[list[str], dict[str, str], list[tuple[str, dict[str, Any], bool]]]:
    calls = [
        ("get-structured-content", {"location": "New York"}, True),
        ("get-structured-content", {"location": "Chicago"}, True),
        ("get-structured-content", {"location": "Los Angeles"}, True),
        ("get-structured-content", {"location": "Mars"}, False),
        # No outputSchema: relayed unguarded (--unguarded pass), not judged.
        ("echo", {"message": "hi"}, None),
        ("get-sum", {"a": 2, "b": 3}, None),
    ]
    return [str(BIN / "mcp-server-everything")], {}, calls


def time_server(work: Path) -> tuple[list[str], dict[str, str], list[tuple[str, dict[str, Any], bool]]]:
    calls = [
        ("get_current_time", {"timezone": "Europe/Paris"}, True),
        ("get_current_time", {"timezone": "UTC"}, True),
        ("get_current_time", {"timezone": "America/New_York"}, True),
        ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}, True),
        ("convert_time", {"source_timezone": "Asia/Kolkata", "time": "23:45", "target_timezone": "America/Los_Angeles"}, True),
        ("get_current_time", {"timezone": "Mars/Olympus_Mons"}, False),
        ("convert_time", {"source_timezone": "UTC", "time": "25:99", "target_timezone": "UTC"}, False),
    ]
    return [str(PY.parent / "mcp-server-time"), "--local-timezone", "UTC"], {}, calls


def dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True)


async def session(command: list[str], env: dict[str, str], calls: list[tuple[str, dict[str, Any], Any]]) -> list[Any]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=env or None)
    results = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=90) as s:
            await s.initialize()
            await s.list_tools()
            for tool, arguments, _ in calls:
                results.append(dump(await s.call_tool(tool, arguments)))
            await s.list_tools()
    return results


def code_of(result: dict[str, Any]) -> str | None:
    if not result.get("isError"):
        return None
    try:
        return json.loads(result["content"][0]["text"])["error"]["code"]
    except (KeyError, IndexError, ValueError, TypeError):
        return "(server's own error text)"


def recorded(folder: Path) -> dict[str, dict[str, Any]]:
    """The recorded raw answers under folder/<tool>/{accepted,review}, by the call (tool and
    arguments, from each answer's NAME.request.json)."""
    out = {}
    for answer in folder.glob("*/*/*.json"):
        if answer.name.endswith(".request.json") or answer.parent.name not in ("accepted", "review"):
            continue
        request = json.loads(answer.with_name(answer.stem + ".request.json").read_bytes())
        out[call_key(request["tool"], request["params"])] = json.loads(answer.read_bytes())
    return out


def call_key(tool: str, arguments: dict[str, Any]) -> str:
    return tool + " " + json.dumps(arguments, sort_keys=True)


def run_server(airlock: str, work: Path, name: str, make) -> None:
    here = work / name
    here.mkdir(parents=True)
    command, env, calls = make(here)
    schemas, recordings = here / "schemas", here / "recorded"
    server_env = {**os.environ, **env}
    imported = subprocess.run(
        [airlock, "mcp", "import", "--server-cmd", " ".join(command), "--out", str(schemas)],
        capture_output=True, text=True, env=server_env, timeout=120,
    )
    if imported.returncode != 0:
        fail(f"{name}: airlock mcp import exited {imported.returncode}:\n{imported.stdout}\n{imported.stderr}")
    proxy = [airlock, "mcp", "proxy", "--contracts", str(schemas), "--unguarded", "pass",
             "--record", str(recordings), "--audit", str(here / "audit.jsonl"), "--", *command]
    results = anyio.run(session, proxy, env, calls)
    answers = recorded(recordings)
    honest = errors = unguarded = 0
    for (tool, arguments, ok), result in zip(calls, results):
        text = json.dumps(result)
        code = code_of(result)
        where = f"{name}: {tool} {json.dumps(arguments)[:120]}"
        if ok is None:
            unguarded += 1
            continue
        if code in REFUSED:
            fail(f"{where}: an honest result was refused ({code}); the proxy's stderr says why")
        if ok:
            honest += 1
            if result.get("isError"):
                fail(f"{where}: expected a result, got {text[:300]}")
            raw = answers.get(call_key(tool, arguments))
            if raw is None:
                fail(f"{where}: no recorded answer for this call")
            if raw["result"].get("structuredContent") != result.get("structuredContent"):
                fail(f"{where}: the admitted result differs from the server's own answer")
        else:
            errors += 1
            if code != "TOOL_ERROR":
                fail(f"{where}: a tool error reached the agent as {code}, not TOOL_ERROR: {text[:300]}")
    if list(recordings.glob("*/review/*.json")):
        fail(f"{name}: refused answers were recorded for review: {sorted(recordings.glob('*/review/*.json'))}")
    corpora = sorted(p for p in recordings.iterdir() if p.is_dir())

    def check(corpus: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [airlock, "check", "--contract", str(schemas / corpus.name), "--corpus", str(corpus),
             "--cases", "50", "--quiet", "--reproducers", str(here / "reproducers")],
            capture_output=True, text=True, timeout=900,
        )

    # One check per core: each is one process, CPU-bound (8 MiB size cases in a debug build).
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        runs = list(pool.map(check, corpora))
    for corpus, run in zip(corpora, runs):
        if run.returncode != 0:
            fail(f"{name}: airlock check on {corpus.name} with its recorded fixtures exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
    checked = len(corpora)
    print(f"real_servers: {name}: {honest} honest results admitted (0 refused), {errors} tool errors as TOOL_ERROR, "
          f"{unguarded} unguarded, check clean on {checked} recorded corpora")


HOSTILE_BLOCKED = {"extra_member", "disagreeing_text", "duplicate_key_text", "bad_format", "wrong_enum",
                   "wrong_type", "missing_structured", "wrong_id"}


def run_hostile(airlock: str, work: Path) -> None:
    here = work / "hostile"
    here.mkdir()
    server = [str(PY), str(ROOT / "tests/mcp/server.py")]
    imported = subprocess.run([airlock, "mcp", "import", "--server-cmd", " ".join(server), "--out", str(here / "schemas")],
                              capture_output=True, text=True, timeout=120)
    if imported.returncode != 0:
        fail(f"hostile: import exited {imported.returncode}: {imported.stdout}{imported.stderr}")
    for manifest in (here / "schemas").glob("*/contract.toml"):
        # wrong_id answers never come: a short deadline keeps the run short.
        manifest.write_text(manifest.read_text().replace('deadline = "60s"', 'deadline = "3s"'))
    modes = json.loads(subprocess.run([*server, "--list-modes"], capture_output=True, text=True, check=True).stdout)
    calls = [("change_review", {"change_id": "CR-1"}, True), ("project_quota", {"project_id": "P-7"}, True)]
    blocked = 0
    for mode in modes:
        proxy = [airlock, "mcp", "proxy", "--contracts", str(here / "schemas"), "--unguarded", "pass", "--",
                 *server, "--mode", mode]
        results = anyio.run(session, proxy, {}, calls)
        for (tool, _, _), result in zip(calls, results):
            text = json.dumps(result)
            if CANARY in text:
                fail(f"hostile: mode {mode}, {tool}: the canary reached the client: {text[:300]}")
            if mode in HOSTILE_BLOCKED and code_of(result) not in REFUSED | {"UPSTREAM_UNAVAILABLE"}:
                # wrong_type hits one tool per field; a mode that leaves a tool honest is admitted.
                if not (mode == "wrong_type" and not result.get("isError")) and not (mode in ("bad_format", "wrong_enum") and tool == "project_quota"):
                    fail(f"hostile: mode {mode}, {tool}: not refused: {text[:300]}")
            if mode in HOSTILE_BLOCKED and code_of(result) in REFUSED:
                blocked += 1
    print(f"real_servers: hostile test server: {len(modes)} modes, {blocked} hostile results refused, no canary reached the client")


def main() -> None:
    airlock, work = sys.argv[1], Path(sys.argv[2])
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    if not (BIN / "mcp-server-filesystem").exists():
        fail(f"{BIN} has no MCP servers: run ci/mcp-servers.sh (npm ci in tests/mcp/servers)")
    for name, make in [("filesystem", filesystem), ("memory", memory), ("everything", everything), ("time", time_server)]:
        run_server(airlock, work, name, make)
    run_hostile(airlock, work)


if __name__ == "__main__":
    main()
