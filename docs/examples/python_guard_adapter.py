#!/usr/bin/env python3
"""An HTTP adapter in Python that judges every response in-process with the airlock_guard
wheel (bindings/python; docs/python.md).

The tool `review_status` asks a review service for a change's review decision:

    GET {base_url}/reviews/{change_id}?request_id={request_id}

Every body the service sends, and every failure to get one, goes through the guard, under
the contract's retry policy (`Guard.call`). The agent is given `admission.agent_json` and
nothing else; the operator log gets the audit record.

Two ways to run it:

    # against a live service: one call, the agent value on stdout, the audit on stderr
    python3 python_guard_adapter.py --contract schemas/review_status \\
        --base-url http://127.0.0.1:8080 --change-id CR-1042

    # under the harness, which plays the service (the exec protocol, docs/exec-protocol.md)
    airlock check --contract schemas/review_status \\
        --adapter-cmd "python3 docs/examples/python_guard_adapter.py --contract schemas/review_status --exec-protocol"

Both modes run the same `review_status` function; only `fetch` differs.
"""

import argparse
import base64
import datetime
import http.client
import json
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request

from airlock_guard import Guard, TransportError


def http_fetch(base_url, change_id, request_id, timeout, max_bytes):
    """The fetch function for Guard.call: one HTTP GET per attempt, the raw body as bytes.

    At most max_bytes + 1 bytes are read: one byte more than the limit is enough for the
    guard to refuse the body. Socket errors and timeouts are raised as they come (Guard.call
    reads TimeoutError, ConnectionRefusedError and urllib's URLError as transport
    failures); an HTTP error status still has a body, which the guard judges like any other.
    """
    query = urllib.parse.urlencode({"request_id": request_id})
    url = "%s/reviews/%s?%s" % (base_url.rstrip("/"), urllib.parse.quote(change_id, safe=""), query)

    def fetch(attempt):
        try:
            with NO_REDIRECTS.open(url, timeout=timeout) as response:
                return read_body(response, max_bytes)
        except urllib.error.HTTPError as error:
            # 404, 503, …: the service's failure envelope (or not) is in the body.
            with error:
                return read_body(error, max_bytes)

    return fetch


class Unfollowed(urllib.request.HTTPRedirectHandler):
    """A 3xx is an answer, judged like any other (as an HTTPError): not followed, and its
    body read bounded like any other (urllib would read all of it before following)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


NO_REDIRECTS = urllib.request.build_opener(Unfollowed)


def read_body(response, max_bytes):
    """At most max_bytes + 1 bytes of a response: one byte more than the limit is enough
    for the guard to refuse it. http.client's read(n) gives a body cut short without a
    word; what its Content-Length still promised says so, raised as the IncompleteRead it
    is (a transport failure to Guard.call)."""
    body = response.read(max_bytes + 1)
    promised = getattr(response, "length", None)
    if len(body) <= max_bytes and promised:
        raise http.client.IncompleteRead(body, promised)
    return body


def review_status(guard, request, fetch):
    """Call the upstream through the guard; (agent JSON bytes, audit lines)."""
    outcome = guard.call(request, fetch)
    return outcome.admission.agent_json, [a.audit_json for a in outcome.attempts]


def replay(case):
    """Under `airlock check`, the harness's case is the upstream's answer to every attempt."""
    if "transport_error" in case:
        kind = case["transport_error"]

        def fetch(attempt):
            raise TransportError(kind)

    else:
        body = base64.b64decode(case["response_b64"])

        def fetch(attempt):
            return body

    return fetch


def serve_exec_protocol(guard):
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        case = json.loads(line)
        agent, _audit = review_status(guard, case["request"], replay(case))
        # The agent member is written as the guard's exact bytes.
        answer = b'{"case":' + json.dumps(case["case"]).encode() + b',"agent":' + agent + b"}\n"
        sys.stdout.buffer.write(answer)
        sys.stdout.buffer.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--contract", default="schemas/review_status")
    parser.add_argument("--exec-protocol", action="store_true", help="serve airlock check on stdin/stdout")
    parser.add_argument("--base-url", help="the review service, e.g. http://127.0.0.1:8080")
    parser.add_argument("--change-id", default="CR-1042")
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args()

    guard = Guard.load(args.contract, adapter=("python-guard-adapter", "1.0.0"), endpoint=args.base_url)
    if args.exec_protocol:
        serve_exec_protocol(guard)
        return
    if not args.base_url:
        parser.error("--base-url is required without --exec-protocol")
    request = {
        "tool": guard.tool,
        "request_id": "req." + secrets.token_hex(6),
        "params": {"change_id": args.change_id},
        "now": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    fetch = http_fetch(args.base_url, args.change_id, request["request_id"], args.timeout, guard.max_bytes)
    agent, audit = review_status(guard, request, fetch)
    for line in audit:
        print(line, file=sys.stderr)
    sys.stdout.buffer.write(agent + b"\n")


if __name__ == "__main__":
    main()
