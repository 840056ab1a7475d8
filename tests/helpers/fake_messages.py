"""A fake Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI headless.

Claude Code (``claude -p``) is pointed at it with ``ANTHROPIC_BASE_URL``.  Every
``POST /v1/messages`` is recorded (its JSON body) and answered by ``script``:
a function from the request body (and the number of model turns so far) to
a list of content blocks, ``{"type": "text", "text": ...}`` or
``{"type": "tool_use", "name": ..., "input": {...}}``.  The answer is streamed
as server-sent events (``message_start``, ``content_block_*``,
``message_delta``, ``message_stop``) when the request asks for a stream, else
returned as one JSON message.  Other paths (token counting, telemetry) get
an empty ``{}`` or a small count.

Bounded: after ``max_requests`` model requests every answer is plain text
("done"), so a CLI that loops stops; the server thread is a daemon and
:meth:`FakeMessages.close` shuts it down.
"""

from __future__ import annotations

import itertools
import json

from helpers.fake_server import FakeServer, end_stream, send_json, start_stream

__all__ = ["FakeMessages", "text", "tool_use", "last_user_text", "tool_results"]

_ids = itertools.count(1)


def text(value: str) -> dict:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: dict) -> dict:
    """A tool_use content block with a fresh id."""
    return {"type": "tool_use", "id": f"toolu_fake{next(_ids):04d}", "name": name, "input": tool_input}


def _texts(content) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out += _texts(block.get("content"))
    return out


def last_user_text(body: dict) -> str:
    """All text of the request's last user message (tool results included)."""
    messages = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return "\n".join(_texts(messages[-1].get("content"))) if messages else ""


def tool_results(body: dict) -> list[dict]:
    """The tool_result blocks of the request's last user message."""
    messages = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = messages[-1].get("content") if messages else []
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class FakeMessages(FakeServer):
    """The server.  ``url`` for ANTHROPIC_BASE_URL, ``requests`` the bodies
    received (model requests only), ``paths`` every path asked for."""

    get_answer = {"data": [], "has_more": False}

    def __init__(self, script, max_requests: int = 12):
        super().__init__(script, max_requests)

    def post(self, handler, path: str, body: dict) -> None:
        if path.endswith("/count_tokens"):
            send_json(handler, {"input_tokens": 100})
            return
        if not path.endswith("/v1/messages"):
            send_json(handler, {})
            return
        blocks = self.turn(body, [text("done")])
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message = {
            "id": f"msg_fake{next(_ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not body.get("stream"):
            send_json(handler, {**message, "content": blocks, "stop_reason": stop})
            return
        start_stream(handler)
        out = [_sse("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            out.append(
                _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
            )
            out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        delta = {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}}
        out.append(_sse("message_delta", {**delta, "usage": {"output_tokens": 5}}))
        out.append(_sse("message_stop", {"type": "message_stop"}))
        end_stream(handler, b"".join(out))
