"""The guard judges with the interpreter released: while two threads judge large bodies,
a third Python thread keeps running.

Robust by construction, not by a time threshold alone: an observer thread stamps the clock
in a loop. Had admit held the GIL, the observer would show one gap at least as long as a
whole judgement (it cannot run at all meanwhile); released, its longest gap inside the
judging window stays a small fraction of it. The observer's stamps must straddle the window,
and a machine stall is allowed for by trying three times.
"""

import json
import shutil
import threading
import time

import pytest

from airlock_guard import Guard

from conftest import SCHEMAS


@pytest.fixture(scope="module")
def big_guard(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gil") / "schemas" / "review_status"
    shutil.copytree(SCHEMAS / "review_status", folder)
    manifest = folder / "contract.toml"
    manifest.write_text(manifest.read_text().replace("max_bytes = 4096", "max_bytes = 67108864"))
    return Guard.load(folder)


def big_body():
    """A success envelope with a ~8 MiB member: parsed whole, then refused by the schema."""
    data = {"change_id": "CR-1042", "decision": "approved", "reviewed_by": "Ada", "padding": ["x" * 64] * 120_000}
    return json.dumps(
        {"tool": "review_status", "request_id": "req.J7q94MkP", "outcome": "success", "data": data}
    ).encode()


def judge_concurrently(guard, request, body):
    """(longest observer gap inside the window, window length, the observer straddled it, results)."""
    stamps, stop = [], threading.Event()

    def observe():
        while not stop.is_set():
            stamps.append(time.perf_counter())

    results = [None, None]

    def judge(i):
        results[i] = guard.admit(request, body)

    observer = threading.Thread(target=observe)
    observer.start()
    time.sleep(0.05)
    judges = [threading.Thread(target=judge, args=(i,)) for i in range(2)]
    start = time.perf_counter()
    for t in judges:
        t.start()
    for t in judges:
        t.join()
    end = time.perf_counter()
    time.sleep(0.05)
    stop.set()
    observer.join()
    inside = [s for s in stamps if start <= s <= end]
    straddled = any(s < start for s in stamps) and any(s > end for s in stamps)
    points = [start] + inside + [end]
    gap = max(b - a for a, b in zip(points, points[1:]))
    return gap, end - start, straddled, results


def test_two_threads_judge_while_a_third_python_thread_keeps_running(big_guard, review_request):
    body = big_body()
    t0 = time.perf_counter()
    serial = big_guard.admit(review_request, body)
    single = time.perf_counter() - t0
    assert not serial.admitted and serial.stage == "schema"
    for _ in range(3):
        gap, window, straddled, results = judge_concurrently(big_guard, review_request, body)
        assert straddled
        assert [r.agent_json for r in results] == [serial.agent_json] * 2
        # Held, the gap would be at least one whole judgement (`single`); released, the
        # observer only waits for its turn among the Python threads.
        if gap < single / 4:
            return
    pytest.fail(f"the observer thread stalled {gap:.3f}s of a {window:.3f}s window (one judgement: {single:.3f}s)")
