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
import time

from helpers.fake_server import FakeServer, end_stream, send_json, start_stream

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


class FakeOpenAI(FakeServer):
    """The server.  ``url`` is its root (``base_url`` is ``url + "/v1"``),
    ``requests`` the model request bodies, ``paths`` every path asked for."""

    get_answer = {"object": "list", "data": [], "models": []}

    def __init__(self, script, max_requests: int = 8):
        super().__init__(script, max_requests)

    def post(self, handler, path: str, body: dict) -> None:
        kind = "responses" if path.endswith("/responses") else None
        kind = "chat" if path.endswith("/chat/completions") else kind
        if kind is None:
            send_json(handler, {})
            return
        items = self.turn(body, [message("done")])
        if kind == "responses":
            self._responses(handler, body, items)
        else:
            self._chat(handler, body, items)

    def _responses(self, handler, body: dict, items: list[dict]) -> None:
        rid = f"resp_fake{next(_ids):04d}"
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model")}
        done = {**base, "status": "completed", "output": items, "usage": _usage()}
        if not body.get("stream"):
            send_json(handler, done)
            return
        start_stream(handler)
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
        end_stream(handler, b"".join(out))

    def _chat(self, handler, body: dict, items: list[dict]) -> None:
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
            send_json(handler, {**head, "object": "chat.completion", "choices": [choice], "usage": usage})
            return
        start_stream(handler)
        chunk = {**head, "object": "chat.completion.chunk"}
        delta: dict = {"role": "assistant", "content": text}
        if calls:
            delta["tool_calls"] = [{"index": n, **c} for n, c in enumerate(calls)]
        out = [
            _sse({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}),
            _sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}),
        ]
        end_stream(handler, b"".join(out) + b"data: [DONE]\n\n")
