"""What the fake model servers share: a threaded HTTP server on 127.0.0.1
that records what it is asked and answers each model request from a script.

A subclass of :class:`FakeServer` answers POSTs in :meth:`FakeServer.post`
(the handler, the path without its query, the JSON body) with :func:`send_json`
or a stream (:func:`start_stream`, then :func:`end_stream` with the bytes);
:meth:`FakeServer.turn` records a model request and gives the script's
answer, or ``default`` once ``max_requests`` turns are used up, so a CLI that
loops stops.  GET and HEAD get :attr:`FakeServer.get_answer`.  The server
thread is a daemon; :meth:`FakeServer.close` (or leaving the ``with`` block)
shuts it down.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FakeServer", "end_stream", "read_body", "send_json", "start_stream"]


def read_body(handler: BaseHTTPRequestHandler) -> dict:
    """The request's JSON body; ``{}`` for none or one that is not JSON,
    ``{"undecoded": True}`` for a zstd-compressed one (Codex's telemetry)."""
    length = int(handler.headers.get("content-length") or 0)
    raw = handler.rfile.read(length) if length else b""
    if handler.headers.get("content-encoding") == "zstd":
        return {"undecoded": True}
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return {}


def send_json(handler: BaseHTTPRequestHandler, data, status: int = 200) -> None:
    payload = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


def start_stream(handler: BaseHTTPRequestHandler) -> None:
    """The head of a server-sent-events answer (the connection closes after it)."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()


def end_stream(handler: BaseHTTPRequestHandler, payload: bytes) -> None:
    handler.wfile.write(payload)
    handler.wfile.flush()
    handler.close_connection = True


class FakeServer:
    """The server.  ``url`` its root, ``requests`` the model request bodies
    (those :meth:`turn` recorded), ``paths`` every request line asked for."""

    get_answer: dict = {}

    def __init__(self, script, max_requests: int):
        self.script = script
        self.max_requests = max_requests
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.turns = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                owner.paths.append("GET " + self.path)
                send_json(self, owner.get_answer)

            def do_HEAD(self):  # noqa: N802
                owner.paths.append("HEAD " + self.path)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self):  # noqa: N802
                body = read_body(self)
                owner.paths.append("POST " + self.path)
                owner.post(self, self.path.split("?", 1)[0], body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def post(self, handler: BaseHTTPRequestHandler, path: str, body: dict) -> None:
        """Answer one POST (a subclass's protocol)."""
        raise NotImplementedError

    def turn(self, body: dict, default: list) -> list:
        """Record a model request; the script's answer to it, or ``default``
        (past ``max_requests``, or when the script gives nothing)."""
        with self._lock:
            self.requests.append(body)
            turn = self.turns
            self.turns += 1
        answer = self.script(body, turn) if turn < self.max_requests else None
        return answer or default

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
