"""A fault-injecting HTTP proxy on 127.0.0.1, in front of a real dashboard (stdlib only).

Each request is forwarded to the upstream unless a rule of the deterministic schedule fires
for it. A rule counts the requests whose path contains its `path` filter (1, 2, 3, ...) and
fires on those where `count % every == phase`, at most `times` times; the first rule that
fires decides the fault. A rule with several faults rotates through them per injection.
`repeat=k` makes each injection hit the same request k times in all: after it fires, the next
k - 1 requests with exactly the same path and query (a client's retries of that read) get
the same fault, whatever `every` says. `Rule.at(n, fault, repeat=k)` fires once, on exactly
the n-th matching request (with no `path`: the n-th request the proxy sees), and on its
k - 1 retries: for a matrix that puts one fault at each request in turn.

Faults: ``500``/``502``/``503`` (a JSON error body), ``reset`` (the connection is closed
with an RST, no response), ``delay`` (wait `seconds` before forwarding: past a client's
timeout), ``truncate`` (the upstream response with its full Content-Length but only half of
the body, then close), ``slow`` (the upstream body in 512-byte chunks `seconds` apart).

The log records request number, method, path and query, the fault and the upstream status:
never a header, so a token cannot leak into it.

Python::

    with FaultProxy(backend.url, [Rule(("503", "reset"), every=4)]) as proxy:
        run(["hermes-task", "show", ..., "--url", proxy.url])
        proxy.injected()   # Counter({"503": 2, "reset": 1})

Command line::

    python -m tests.support.fault_proxy --upstream http://127.0.0.1:9119 --rule 503:every=3 \\
        --rule reset:every=5,phase=2,path=/messages [--log faults.jsonl]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import signal
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

KINDS = ("500", "502", "503", "reset", "delay", "truncate", "slow")
SLOW_CHUNK = 512
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "host",
}


@dataclass
class Rule:
    """Fire on every `every`-th request matching `path` (when count % every == phase), at most
    `times` times, each time on that request and its next `repeat - 1` exact repeats."""

    faults: tuple[str, ...]
    every: int = 1
    phase: int = 0
    path: str = ""
    times: int | None = None
    seconds: float = 1.5
    repeat: int = 1
    matched: int = field(default=0, compare=False)
    fired: int = field(default=0, compare=False)  # injections, repeats included
    started: int = field(default=0, compare=False)  # injections counted by `times`
    _again: tuple[str, str, int] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.faults, str):
            self.faults = (self.faults,)
        unknown = [f for f in self.faults if f not in KINDS]
        if unknown or not self.faults or self.every < 1 or self.repeat < 1:
            raise ValueError(
                f"bad rule: faults {self.faults!r} (known: {', '.join(KINDS)}), every={self.every}, "
                f"repeat={self.repeat}"
            )

    @classmethod
    def at(cls, index: int, fault: str, *, path: str = "", seconds: float = 1.5, repeat: int = 1) -> Rule:
        """One `fault`, on exactly the `index`-th request matching `path` (from 1) and its next
        `repeat - 1` exact repeats, never again."""
        if index < 1:
            raise ValueError(f"bad rule: request index {index} (requests count from 1)")
        return cls((fault,), every=index + 1, phase=index, path=path, times=1, seconds=seconds, repeat=repeat)

    @classmethod
    def parse(cls, text: str) -> Rule:
        """`503:every=3,phase=1,path=/messages,times=2,seconds=2,repeat=2`; faults joined by `+`."""
        kinds, _, options = text.partition(":")
        values: dict[str, Any] = {}
        for item in filter(None, options.split(",")):
            key, _, value = item.partition("=")
            values[key] = value if key == "path" else (float(value) if key == "seconds" else int(value))
        return cls(tuple(kinds.split("+")), **values)

    def take(self, target: str) -> str | None:
        """The fault for this request, or None; advances the rule's counters."""
        if self.path not in target:
            return None
        self.matched += 1
        if self._again is not None and self._again[0] == target:
            _, fault, left = self._again
            self._again = (target, fault, left - 1) if left > 1 else None
            self.fired += 1
            return fault
        if self.matched % self.every != self.phase % self.every:
            return None
        if self.times is not None and self.started >= self.times:
            return None
        fault = self.faults[self.started % len(self.faults)]
        self.started += 1
        self.fired += 1
        self._again = (target, fault, self.repeat - 1) if self.repeat > 1 else None
        return fault


@dataclass
class Entry:
    """One request: recorded when it arrives (so `injected()` counts a fault in progress)."""

    number: int
    method: str
    target: str
    fault: str | None
    status: int | None = None


class FaultProxy:
    """The proxy server; `start()` serves on a daemon thread, `stop()` shuts it down."""

    def __init__(self, upstream: str, rules: Sequence[Rule] = ()) -> None:
        parts = urlsplit(upstream)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the fault proxy only fronts a loopback upstream")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.upstream_netloc = parts.netloc
        self._lock = threading.Lock()
        self.rules = list(rules)
        self.log: list[Entry] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> FaultProxy:
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def set_rules(self, rules: Sequence[Rule]) -> None:
        """Replace the schedule (counters start again) and clear the log."""
        with self._lock:
            self.rules = list(rules)
            self.log = []

    def injected(self) -> Counter[str]:
        """How many times each fault was injected since the last `set_rules`."""
        with self._lock:
            return Counter(e.fault for e in self.log if e.fault is not None)

    def requests(self) -> list[str]:
        """`METHOD path?query` of every request seen, in order."""
        with self._lock:
            return [f"{e.method} {e.target}" for e in self.log]

    def _decide(self, method: str, target: str) -> tuple[Entry, float]:
        with self._lock:
            fault, seconds = None, 0.0
            for rule in self.rules:
                fault = rule.take(target)
                if fault is not None:
                    seconds = rule.seconds
                    break
            entry = Entry(len(self.log) + 1, method, target, fault)
            self.log.append(entry)
            return entry, seconds

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: a fault never poisons the next

            def log_message(self, format: str, *args: Any) -> None:  # quiet: the log is in memory
                return

            def do_GET(self) -> None:
                proxy._serve(self)

            def do_POST(self) -> None:
                proxy._serve(self)

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        entry, seconds = self._decide(handler.command, handler.path)
        fault = entry.fault
        status: int | None = None
        try:
            if fault in ("500", "502", "503"):
                status = int(fault)
                _send(
                    handler,
                    status,
                    [("Content-Type", "application/json")],
                    json.dumps({"detail": f"injected fault {fault}"}).encode(),
                )
            elif fault == "reset":
                _reset(handler)
            else:
                if fault == "delay":
                    time.sleep(seconds)
                status, headers, body = self._forward(handler)
                if fault == "truncate":
                    _send(handler, status, headers, body[: len(body) // 2], length=len(body))
                    _reset(handler, graceful=True)
                elif fault == "slow":
                    _send(handler, status, headers, body, chunk_pause=seconds)
                else:
                    _send(handler, status, headers, body)
        except (OSError, http.client.HTTPException):
            pass  # the client gave up (a timeout), or the upstream went away: nothing more to say
        finally:
            entry.status = status

    def _forward(self, handler: BaseHTTPRequestHandler) -> tuple[int, list[tuple[str, str]], bytes]:
        length = int(handler.headers.get("Content-Length") or 0)
        payload = handler.rfile.read(length) if length else None
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Host"] = self.upstream_netloc
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=30)
        try:
            conn.request(handler.command, handler.path, body=payload, headers=headers)
            response = conn.getresponse()
            body = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in HOP_BY_HOP]
            return response.status, kept, body
        finally:
            conn.close()


def _send(
    handler: BaseHTTPRequestHandler,
    status: int,
    headers: list[tuple[str, str]],
    body: bytes,
    *,
    length: int | None = None,
    chunk_pause: float = 0.0,
) -> None:
    handler.send_response_only(status)
    for key, value in headers:
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body) if length is None else length))
    handler.send_header("Connection", "close")
    handler.end_headers()
    if chunk_pause <= 0:
        handler.wfile.write(body)
    else:
        for start in range(0, len(body), SLOW_CHUNK):
            handler.wfile.write(body[start : start + SLOW_CHUNK])
            handler.wfile.flush()
            time.sleep(chunk_pause)
    handler.wfile.flush()


def _reset(handler: BaseHTTPRequestHandler, *, graceful: bool = False) -> None:
    """Close the client connection: with an RST (SO_LINGER 0), or `graceful`ly with a FIN
    after what was written (a body cut short)."""
    sock: socket.socket = handler.connection
    with contextlib.suppress(OSError):
        handler.wfile.flush()
        if graceful:
            sock.shutdown(socket.SHUT_WR)
        else:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()
    handler.close_connection = True
    # The server's own flush after the handler must not fail; _Discard has only `closed`,
    # `write`, `flush` and `close`, not the whole BufferedIOBase interface.
    handler.wfile = _Discard()  # type: ignore[assignment]  # a write/flush-only sink on purpose


class _Discard:
    closed = False

    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the real dashboard, e.g. http://127.0.0.1:9119")
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        help="FAULT[+FAULT]:every=N,phase=K,path=S,times=T,seconds=S,repeat=R",
    )
    parser.add_argument("--log", help="append one JSON line per request here on exit")
    args = parser.parse_args(argv)
    proxy = FaultProxy(args.upstream, [Rule.parse(r) for r in args.rule]).start()
    print(json.dumps({"url": proxy.url, "pid_port": proxy.port}), flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    proxy.stop()
    if args.log:
        with open(args.log, "a") as out:
            for entry in proxy.log:
                out.write(json.dumps(entry.__dict__) + "\n")
    print(json.dumps({"injected": proxy.injected(), "requests": len(proxy.log)}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
