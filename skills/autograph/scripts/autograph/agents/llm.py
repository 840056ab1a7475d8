"""A small client for OpenAI-compatible chat endpoints (``POST
{base}/chat/completions``), on ``urllib`` alone.

What it guarantees, because ``enrich.py`` sends notes to a third party:

* the API key comes only from the environment (:data:`KEY_VARIABLES`, the
  first one set wins) and is sent only as the ``Authorization`` header; it
  is never part of an error message (:func:`redact` scrubs it from anything
  the server sends back), and an ``http://`` URL is refused unless the host
  is this machine (the key would cross the network in clear text);
* redirects are refused (``urllib`` would otherwise send the request, key
  included, wherever a ``30x`` points);
* every request has a time-out: ``timeout`` seconds for each socket
  operation, and a whole answer read in more than ``timeout`` seconds is
  given up too (a server trickling bytes); at most
  :data:`MAX_ANSWER_BYTES` are read;
* HTTP 429 and 5xx answers, time-outs and dropped connections are retried
  up to ``attempts`` times in all, waiting ``backoff * 2**n`` seconds times a
  random factor from 0.5 to 1.5 (jitter), or what ``Retry-After`` asks (in
  seconds or as an HTTP date) when the server says; a wait over
  ``max_wait`` seconds is not waited: the request fails at once;
* 401 and 403 fail at once (:class:`LLMError` kind ``auth``), other 4xx too.

Usage: ``Client(base_url, model, key).chat(messages, max_tokens)`` returns an
:class:`Answer` (the message text and the token counts the server reports).
"""

from __future__ import annotations

import http.client
import json
import random as _random
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

__all__ = [
    "KEY_VARIABLES",
    "MAX_ANSWER_BYTES",
    "Answer",
    "Client",
    "LLMError",
    "SettingsError",
    "api_key",
    "chat_body",
    "check_base_url",
    "client_for",
    "redact",
    "settings",
]

# Where the key is read from, in this order (the first one set wins).
KEY_VARIABLES = ("AUTOGRAPH_LLM_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY")
MAX_ANSWER_BYTES = 4 << 20
LOOPBACK = ("localhost", "127.0.0.1", "::1")


class LLMError(Exception):
    """A request that did not give an answer.

    ``kind``: ``config`` (bad URL, no key), ``auth`` (401/403), ``http``
    (another status), ``rate-limited`` (429 after every attempt, or a
    ``Retry-After`` longer than ``max_wait``), ``server`` (5xx after every
    attempt), ``network`` (time-out, refused or dropped connection after
    every attempt), ``malformed`` (the body is not a chat completion).
    ``status`` is the last HTTP status, ``attempts`` how many were made.
    The message never holds the key."""

    def __init__(self, message: str, kind: str, status: int | None = None, attempts: int = 0):
        super().__init__(message)
        self.kind, self.status, self.attempts = kind, status, attempts


@dataclass(frozen=True)
class Answer:
    """The text of the first choice and the server's token counts (0 when it
    gives none); ``attempts`` counts the HTTP requests this answer took."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    attempts: int
    model: str | None = None


def api_key(environ=None) -> tuple[str | None, str | None]:
    """``(key, variable name)`` from the first of :data:`KEY_VARIABLES` that
    is set and not blank in ``environ`` (default ``os.environ``), else
    ``(None, None)``."""
    if environ is None:
        import os

        environ = os.environ
    for name in KEY_VARIABLES:
        value = (environ.get(name) or "").strip()
        if value:
            return value, name
    return None, None


def check_base_url(url: str) -> str:
    """``url`` without a trailing ``/``, or ValueError saying what is wrong:
    only ``https://`` (``http://`` only for this machine: localhost,
    127.0.0.1, ::1), a host, no user or password in it, no query or
    fragment."""
    text = (url or "").strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL like https://openrouter.ai/api/v1")
    if parts.username or parts.password:
        raise ValueError("the base URL holds a user name or password; give the key in AUTOGRAPH_LLM_API_KEY")
    if parts.query or parts.fragment:
        raise ValueError(f"{url!r}: a base URL has no query or fragment")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK:
        raise ValueError(f"{url!r}: plain http would send the key in clear text; use https (http only for localhost)")
    return text.rstrip("/")


class SettingsError(ValueError):
    """Endpoint settings that cannot be used (bad usage, exit 2): a base URL
    :func:`check_base_url` refuses, or a client asked for without a model,
    a base URL or a key.  The message never holds the key."""


def settings(base_url: str | None = None, model: str | None = None, environ=None) -> dict:
    """The endpoint settings: ``{"base_url", "model", "key", "key_from"}``.

    ``base_url`` and ``model`` as given (``--base-url``, ``--model``), else
    from ``AUTOGRAPH_LLM_BASE_URL`` and ``AUTOGRAPH_LLM_MODEL`` in
    ``environ`` (default ``os.environ``); the key and the name of the
    variable it came from as :func:`api_key` finds them.  What is not set
    is None.  A base URL is checked (:func:`check_base_url`: its trailing
    ``/`` dropped); raises :class:`SettingsError` when it is refused."""
    if environ is None:
        import os

        environ = os.environ
    key, key_from = api_key(environ)
    found = {
        "base_url": base_url or environ.get("AUTOGRAPH_LLM_BASE_URL") or None,
        "model": model or environ.get("AUTOGRAPH_LLM_MODEL") or None,
        "key": key,
        "key_from": key_from,
    }
    if found["base_url"]:
        try:
            found["base_url"] = check_base_url(found["base_url"])
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
    return found


def client_for(config: dict, timeout: float = 60.0) -> Client:
    """A :class:`Client` for ``config`` (:func:`settings`) with ``timeout``
    seconds; raises :class:`SettingsError` naming every setting missing (a
    model, a base URL, a key), or saying why the client cannot be made."""
    missing = [
        what
        for what, value in (
            ("a model (--model or AUTOGRAPH_LLM_MODEL)", config["model"]),
            ("a base URL (--base-url or AUTOGRAPH_LLM_BASE_URL)", config["base_url"]),
            (f"a key ({' or '.join(KEY_VARIABLES)})", config["key"]),
        )
        if not value
    ]
    if missing:
        raise SettingsError("--apply needs " + ", ".join(missing))
    try:
        return Client(config["base_url"], config["model"], config["key"], timeout=timeout)
    except LLMError as exc:
        raise SettingsError(str(exc)) from None


def chat_body(model: str, messages: list[dict], max_tokens: int, json_mode: bool = True) -> dict:
    """The JSON body of a chat completion request (what :meth:`Client.chat`
    sends, and what a dry run shows): temperature 0, a JSON answer asked
    for with ``json_mode``."""
    body = {"model": model, "messages": messages, "max_tokens": int(max_tokens), "temperature": 0}
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    return body


def redact(text: str, key: str | None) -> str:
    """``text`` with every occurrence of ``key`` replaced by ``***``."""
    if key and len(key) >= 4:
        text = text.replace(key, "***")
    return text


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise urllib.error.HTTPError(req.full_url, code, f"redirect refused ({code})", headers, fp)


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - now
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


class Client:
    """Chat completions from one endpoint and model.

    ``base_url`` as :func:`check_base_url` accepts (raises
    :class:`LLMError` kind ``config`` otherwise); ``timeout`` seconds per
    socket operation; ``attempts`` HTTP requests at most per call;
    ``backoff`` the first wait in seconds; ``max_wait`` the longest wait
    taken; ``sleep``, ``random`` and ``clock`` are replaceable for tests."""

    def __init__(
        self,
        base_url: str,
        model: str,
        key: str,
        timeout: float = 60.0,
        attempts: int = 4,
        backoff: float = 1.0,
        max_wait: float = 60.0,
        sleep=None,
        random=None,
        clock=None,
    ):
        try:
            self.base_url = check_base_url(base_url)
        except ValueError as exc:
            raise LLMError(str(exc), "config") from None
        if not key:
            raise LLMError(f"no API key: set {KEY_VARIABLES[0]} (or {' or '.join(KEY_VARIABLES[1:])})", "config")
        self.model, self._key = model, key
        self.timeout, self.attempts, self.backoff, self.max_wait = timeout, max(1, attempts), backoff, max_wait
        # looked up at each call when not given, so a test can replace time.sleep
        self._sleep = sleep or (lambda seconds: time.sleep(seconds))
        self._random = random or _random.random
        self._clock = clock or (lambda: time.time())
        host = urllib.parse.urlsplit(self.base_url).hostname
        proxies = {} if host in LOOPBACK else None  # a proxy never sees a loopback request
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxies), _NoRedirect)
        self.waits: list[float] = []  # every wait taken, in seconds (reports and tests)

    @property
    def endpoint(self) -> str:
        return self.base_url + "/chat/completions"

    def body(self, messages: list[dict], max_tokens: int, json_mode: bool = True) -> dict:
        """The JSON body :meth:`chat` sends (:func:`chat_body`)."""
        return chat_body(self.model, messages, max_tokens, json_mode)

    def chat(self, messages: list[dict], max_tokens: int, json_mode: bool = True) -> Answer:
        """Send one chat completion request; returns the :class:`Answer` or
        raises :class:`LLMError` (see there) once retrying is over."""
        data = json.dumps(self.body(messages, max_tokens, json_mode), ensure_ascii=False).encode("utf-8")
        last: LLMError | None = None
        for attempt in range(1, self.attempts + 1):
            wait = None
            try:
                return self._once(data, attempt)
            except urllib.error.HTTPError as exc:
                status = exc.code
                detail = self._detail(exc)
                if status in (401, 403):
                    raise LLMError(f"HTTP {status}: the key was refused{detail}", "auth", status, attempt) from None
                if status == 429 or 500 <= status < 600:
                    kind = "rate-limited" if status == 429 else "server"
                    last = LLMError(f"HTTP {status}{detail}", kind, status, attempt)
                    asked = _retry_after(exc.headers.get("Retry-After") if exc.headers else None, self._clock())
                    if asked is not None:
                        if asked > self.max_wait:
                            raise LLMError(
                                f"HTTP {status}: the server asks to wait {asked:.0f} s, more than {self.max_wait:g} s",
                                kind,
                                status,
                                attempt,
                            ) from None
                        wait = (
                            asked + self._random() * 0.25
                        )  # a little jitter, so waiting clients do not return at once
                else:
                    raise LLMError(f"HTTP {status}{detail}", "http", status, attempt) from None
            except (OSError, http.client.HTTPException) as exc:  # URLError, time-outs, dropped connections
                reason = getattr(exc, "reason", exc)
                last = LLMError(f"no answer from {self.endpoint}: {self._text(str(reason))}", "network", None, attempt)
            if attempt == self.attempts:
                break
            if wait is None:
                wait = min(self.max_wait, self.backoff * 2 ** (attempt - 1)) * (0.5 + self._random())
            self.waits.append(wait)
            self._sleep(wait)
        assert last is not None
        raise LLMError(f"{last} (after {self.attempts} attempts)", last.kind, last.status, self.attempts)

    def _once(self, data: bytes, attempt: int) -> Answer:
        request = urllib.request.Request(
            self.endpoint,
            data=data,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json",
                "Authorization": f"Bearer {self._key}",
                "User-Agent": "autograph-enrich",
            },
        )
        start = time.monotonic()
        chunks: list[bytes] = []
        size = 0
        with self._opener.open(request, timeout=self.timeout) as response:
            # the socket time-out bounds each read; this bounds the whole
            # answer, so a server that trickles bytes cannot hold the run
            while chunk := response.read1(1 << 16):
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise LLMError(f"the answer is larger than {MAX_ANSWER_BYTES:,} bytes", "malformed", 200, attempt)
                chunks.append(chunk)
                if time.monotonic() - start > self.timeout:
                    raise TimeoutError(f"the answer took longer than {self.timeout:g} s")
        raw = b"".join(chunks)
        try:
            payload = json.loads(raw.decode("utf-8"))
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(
                f"the answer is not a chat completion: {self._text(raw[:200].decode('utf-8', 'replace'))!r}",
                "malformed",
                200,
                attempt,
            ) from None
        if not isinstance(content, str):
            raise LLMError("the answer holds no message text", "malformed", 200, attempt)
        usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}

        def count(name: str) -> int:
            value = usage.get(name)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0

        prompt, completion = count("prompt_tokens"), count("completion_tokens")
        total = count("total_tokens") or prompt + completion
        model = payload.get("model") if isinstance(payload.get("model"), str) else None
        return Answer(content, prompt, completion, total, attempt, model)

    def _text(self, text: str) -> str:
        return redact(text, self._key)

    def _detail(self, exc: urllib.error.HTTPError) -> str:
        """A short, key-free excerpt of an error body (``: ...``), or ''."""
        try:
            raw = exc.read(400) if exc.fp is not None else b""
        except (OSError, ValueError):
            raw = b""
        text = " ".join(raw.decode("utf-8", "replace").split())[:200]
        return f": {self._text(text)}" if text else ""
