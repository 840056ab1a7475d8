"""A fake Gemini API on 127.0.0.1, for driving the real Gemini CLI headless.

Gemini CLI (``gemini -p``) is pointed at it with ``GOOGLE_GEMINI_BASE_URL``
(which also selects its "gateway" auth, so no key or login is needed).  Every
``POST .../models/<model>:streamGenerateContent`` (server-sent events, with
``?alt=sse``) and ``:generateContent`` (one JSON answer) is recorded (its JSON
body) and answered by ``script``: a function from the request body (and the
number of model turns so far) to a list of parts, :func:`text` or
:func:`function_call`.  ``:countTokens`` gets a small count; other paths
(model listings and the like) an empty ``{}``.

A request that asks for JSON (``generationConfig.responseMimeType`` is
``application/json``: the CLI's own checks, such as which speaker goes next)
is answered with ``json_answer`` and recorded in ``side_requests``, not
``requests``, and does not use up a turn.

Bounded like :mod:`helpers.fake_messages`: after ``max_requests`` model
requests every answer is plain text ("done"); the server thread is a daemon
and :meth:`FakeGemini.close` shuts it down.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FakeGemini", "text", "function_call", "seen"]


def text(value: str) -> dict:
    """A text part."""
    return {"text": value}


def function_call(name: str, args: dict) -> dict:
    """A function-call part."""
    return {"functionCall": {"name": name, "args": args}}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def seen(body: dict) -> str:
    """Everything one request carries to the model (the system instruction
    and every part of its contents, function responses included), as text."""
    return "\n".join(_strings(body.get("systemInstruction")) + _strings(body.get("contents")))


_USAGE = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


class FakeGemini:
    """The server.  ``url`` for GOOGLE_GEMINI_BASE_URL, ``requests`` the model
    request bodies, ``side_requests`` the JSON-mode ones, ``paths`` every path
    asked for."""

    def __init__(self, script, max_requests: int = 8, json_answer: dict | None = None):
        self.script = script
        self.max_requests = max_requests
        self.json_answer = json_answer or {"reasoning": "fake", "next_speaker": "user"}
        self.requests: list[dict] = []
        self.side_requests: list[dict] = []
        self.paths: list[str] = []
        self.turns = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> dict:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw or b"{}")
                except ValueError:
                    return {}

            def _json(self, data: dict, status: int = 200) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # noqa: N802
                owner.paths.append("GET " + self.path)
                self._json({})

            def do_POST(self):  # noqa: N802
                body = self._body()
                path = self.path.split("?", 1)[0]
                owner.paths.append("POST " + self.path)
                method = path.rsplit(":", 1)[-1] if ":" in path else ""
                if method == "countTokens":
                    self._json({"totalTokens": 100})
                    return
                if method not in ("generateContent", "streamGenerateContent"):
                    self._json({})
                    return
                config = body.get("generationConfig") or {}
                if config.get("responseMimeType") == "application/json":
                    owner.side_requests.append(body)
                    parts = [text(json.dumps(owner.json_answer))]
                else:
                    with owner._lock:
                        owner.requests.append(body)
                        turn = owner.turns
                        owner.turns += 1
                    parts = owner.script(body, turn) if turn < owner.max_requests else None
                    parts = parts or [text("done")]
                answer = {
                    "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": _USAGE,
                    "modelVersion": path.rsplit("/", 1)[-1].split(":", 1)[0],
                }
                if method == "generateContent":
                    self._json(answer)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(f"data: {json.dumps(answer)}\r\n\r\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
