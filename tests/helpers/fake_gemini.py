"""A fake Gemini API on 127.0.0.1, for driving the real Gemini CLI headless.

Gemini CLI (``gemini -p``) is pointed at it with ``GOOGLE_GEMINI_BASE_URL``,
with API-key auth selected in its settings and a placeholder key (alone, the
variable selects a "gateway" auth headless mode rejects; see
``tests/test_host_clients.py``).  Every
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

from helpers.fake_server import FakeServer, end_stream, send_json, start_stream

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


class FakeGemini(FakeServer):
    """The server.  ``url`` for GOOGLE_GEMINI_BASE_URL, ``requests`` the model
    request bodies, ``side_requests`` the JSON-mode ones, ``paths`` every path
    asked for."""

    def __init__(self, script, max_requests: int = 8, json_answer: dict | None = None):
        self.json_answer = json_answer or {"reasoning": "fake", "next_speaker": "user"}
        self.side_requests: list[dict] = []
        super().__init__(script, max_requests)

    def post(self, handler, path: str, body: dict) -> None:
        method = path.rsplit(":", 1)[-1] if ":" in path else ""
        if method == "countTokens":
            send_json(handler, {"totalTokens": 100})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            send_json(handler, {})
            return
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            self.side_requests.append(body)
            parts = [text(json.dumps(self.json_answer))]
        else:
            parts = self.turn(body, [text("done")])
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": _USAGE,
            "modelVersion": path.rsplit("/", 1)[-1].split(":", 1)[0],
        }
        if method == "generateContent":
            send_json(handler, answer)
            return
        start_stream(handler)
        end_stream(handler, f"data: {json.dumps(answer)}\r\n\r\n".encode())
