"""A fake OpenAI-compatible API on 127.0.0.1, for driving real host CLIs headless.

Two wire formats, both streamed as server-sent events when asked:

* the Responses API (``POST .../responses``), which Codex speaks (a custom
  ``model_providers`` entry with ``base_url`` and ``wire_api = "responses"``);
* Chat Completions (``POST .../chat/completions``), which OpenCode's
  ``@ai-sdk/openai-compatible`` provider speaks.

Every model request is recorded (its JSON body) and answered by ``script``:
a function from the request body (and the number of model turns so far) to
a list of items, :func:`message` (text), :func:`function_call` or
:func:`custom_tool_call` (Codex's freeform tools, such as ``apply_patch``).
Other paths (``GET .../models`` and the like) get an empty list.

Bounded like :mod:`helpers.fake_messages`: after ``max_requests`` model
requests every answer is plain text ("done"), so a CLI that loops stops; the
server thread is a daemon and :meth:`FakeOpenAI.close` shuts it down.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["FakeOpenAI", "message", "function_call", "custom_tool_call", "seen"]

_ids = itertools.count(1)


def message(value: str) -> dict:
    """An assistant message with one text part."""
    return {
        "type": "message",
        "id": f"msg_fake{next(_ids):04d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": value, "annotations": []}],
    }


def function_call(name: str, arguments: dict) -> dict:
    """A function tool call with a fresh call id."""
    n = next(_ids)
    return {
        "type": "function_call",
        "id": f"fc_fake{n:04d}",
        "call_id": f"call_fake{n:04d}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def custom_tool_call(name: str, tool_input: str) -> dict:
    """A freeform (custom) tool call, as Codex's ``apply_patch`` is made."""
    n = next(_ids)
    return {
        "type": "custom_tool_call",
        "id": f"ctc_fake{n:04d}",
        "call_id": f"call_fake{n:04d}",
        "name": name,
        "input": tool_input,
        "status": "completed",
    }


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def seen(body: dict) -> str:
    """Everything one request carries to the model (instructions, messages,
    tool outputs), as text: every string in its ``instructions``, ``input``
    (Responses) or ``messages`` (Chat Completions)."""
    parts = [body.get("instructions")] if isinstance(body.get("instructions"), str) else []
    for key in ("input", "messages"):
        parts += _strings(body.get(key))
    return "\n".join(parts)


def _sse(data: dict, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _usage() -> dict:
    return {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }


class FakeOpenAI:
    """The server.  ``url`` is its root (``base_url`` is ``url + "/v1"``),
    ``requests`` the model request bodies, ``paths`` every path asked for."""

    def __init__(self, script, max_requests: int = 8):
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

            def _body(self) -> dict:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.headers.get("content-encoding") == "zstd":
                    return {"undecoded": True}
                try:
                    return json.loads(raw or b"{}")
                except ValueError:
                    return {}

            def _json(self, data, status: int = 200) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):  # noqa: N802
                owner.paths.append("GET " + self.path)
                self._json({"object": "list", "data": [], "models": []})

            def do_POST(self):  # noqa: N802
                body = self._body()
                path = self.path.split("?", 1)[0]
                owner.paths.append("POST " + self.path)
                kind = "responses" if path.endswith("/responses") else None
                kind = "chat" if path.endswith("/chat/completions") else kind
                if kind is None:
                    self._json({})
                    return
                with owner._lock:
                    owner.requests.append(body)
                    turn = owner.turns
                    owner.turns += 1
                items = owner.script(body, turn) if turn < owner.max_requests else None
                items = items or [message("done")]
                if kind == "responses":
                    self._responses(body, items)
                else:
                    self._chat(body, items)

            def _stream_head(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()

            def _responses(self, body: dict, items: list[dict]) -> None:
                rid = f"resp_fake{next(_ids):04d}"
                base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model")}
                done = {**base, "status": "completed", "output": items, "usage": _usage()}
                if not body.get("stream"):
                    self._json(done)
                    return
                self._stream_head()
                out = [_sse({"type": "response.created", "response": {**base, "status": "in_progress"}})]
                for index, item in enumerate(items):
                    out.append(_sse({"type": "response.output_item.added", "output_index": index, "item": item}))
                    if item["type"] == "message":
                        text = item["content"][0]["text"]
                        out.append(
                            _sse(
                                {
                                    "type": "response.output_text.delta",
                                    "item_id": item["id"],
                                    "output_index": index,
                                    "content_index": 0,
                                    "delta": text,
                                }
                            )
                        )
                    out.append(_sse({"type": "response.output_item.done", "output_index": index, "item": item}))
                out.append(_sse({"type": "response.completed", "response": done}))
                self.wfile.write(b"".join(out))
                self.wfile.flush()
                self.close_connection = True

            def _chat(self, body: dict, items: list[dict]) -> None:
                text = "".join(i["content"][0]["text"] for i in items if i["type"] == "message")
                calls = [
                    {
                        "id": i["call_id"],
                        "type": "function",
                        "function": {"name": i["name"], "arguments": i.get("arguments", i.get("input", ""))},
                    }
                    for i in items
                    if i["type"] != "message"
                ]
                finish = "tool_calls" if calls else "stop"
                cid = f"chatcmpl-fake{next(_ids):04d}"
                head = {"id": cid, "created": int(time.time()), "model": body.get("model", "fake")}
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                if not body.get("stream"):
                    msg = {"role": "assistant", "content": text or None}
                    if calls:
                        msg["tool_calls"] = calls
                    choice = {"index": 0, "message": msg, "finish_reason": finish}
                    self._json({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
                    return
                self._stream_head()
                chunk = {**head, "object": "chat.completion.chunk"}
                delta: dict = {"role": "assistant", "content": text}
                if calls:
                    delta["tool_calls"] = [{"index": n, **c} for n, c in enumerate(calls)]
                out = [
                    _sse({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
                    _sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}),
                ]
                self.wfile.write(b"".join(out) + b"data: [DONE]\n\n")
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
