"""A fake OpenAI-compatible chat endpoint on loopback, for the enrich tests.

``with FakeLLM() as server:`` serves ``POST {server.url}/chat/completions``
from a thread (``http.server``), records every request it gets
(``server.requests``: method, path, headers, parsed body) and answers with
the next scripted :class:`Reply` (``server.script``), else with
``server.default(body)``: a function of the parsed request body that returns
a :class:`Reply`.  Helpers build the replies the tests need: a good chat
completion (:func:`completion`), a body that is not one (:func:`raw`), a
status with headers (:func:`status`: 429 with ``Retry-After``, 500, 401) and
a slow answer (``Reply(..., delay=seconds)``).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from time import sleep as _sleep


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    delay: float = 0.0  # seconds before anything is sent (a slow server)
    trickle: float = 0.0  # seconds between the bytes of the body (a server that trickles)


def completion(content, prompt_tokens: int = 100, completion_tokens: int = 20, delay: float = 0.0) -> Reply:
    """A chat completion whose message text is ``content`` (a dict or list is
    sent as its JSON text)."""
    if not isinstance(content, str):
        content = json.dumps(content)
    body = {
        "id": "fake",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"}, delay)


def raw(body: bytes | str, code: int = 200) -> Reply:
    """A reply with exactly this body."""
    return Reply(code, body.encode() if isinstance(body, str) else body, {"Content-Type": "application/json"})


def status(code: int, body: str = '{"error": "fake"}', **headers) -> Reply:
    """An error status; ``headers`` with ``_`` for ``-`` (``Retry_After="1"``)."""
    return Reply(code, body.encode(), {k.replace("_", "-"): v for k, v in headers.items()})


def user_json(body: dict):
    """The parsed JSON of the last user message of a request body."""
    return json.loads(body["messages"][-1]["content"])


class FakeLLM:
    def __init__(self, default=None):
        self.script: list[Reply] = []
        self.default = default or (lambda body: status(500, '{"error": "no reply scripted"}'))
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self._answer(None)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length)
                try:
                    body = json.loads(data)
                except ValueError:
                    body = None
                self._answer(body, data)

            def _answer(self, body, data=b""):
                with outer._lock:
                    outer.requests.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": dict(self.headers),
                            "body": body,
                            "raw": data,
                        }
                    )
                    reply = outer.script.pop(0) if outer.script else None
                if reply is None:
                    reply = outer.default(body)
                if reply.delay:
                    _sleep(reply.delay)  # the real sleep, even when a test replaces time.sleep
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    if reply.trickle:
                        for at in range(0, len(reply.body), 16):
                            self.wfile.write(reply.body[at : at + 16])
                            self.wfile.flush()
                            _sleep(reply.trickle)
                    else:
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its time-out)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def posts(self) -> list[dict]:
        return [r for r in self.requests if r["method"] == "POST"]

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
