"""The Anthropic Messages API at the wire, for the real ``anthropic.AsyncAnthropic``.

anthropic 2.x sends through ``httpx2`` (not ``httpx``), which respx does not patch, so the
fake is the client's transport: ``api.http_client()`` is an
``anthropic.DefaultAsyncHttpxClient`` on an ``httpx2.MockTransport`` — the SDK builds,
sends, reads and raises exactly as against the real service; only the socket is gone.

Every request is checked by ``tests.fakes.anthropic_rules`` first and refused with the
API's ``400 invalid_request_error`` when the real API would refuse it; a request without
a key (``x-api-key`` or a bearer token) gets ``401 authentication_error``. Otherwise the
next scripted answer is sent (``reply(...)`` blocks, or a ``Failure`` such as 529
``overloaded_error``), shaped as the SDK's own test fixtures (``msg_...`` id, ``usage``
with the cache fields).

Prompt caching as the API documents it: a ``cache_control`` breakpoint writes the prefix
up to it (tools, system, messages; at least ``min_cache_tokens``); a later request reads
the longest written prefix found at one of its breakpoints or up to 20 blocks before
one. Tokens are about 4 characters of a block's JSON. ``thinking`` blocks are signed
(HMAC of their text) and a block sent back edited is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

from tests.fakes.anthropic_rules import blocks_of, problem

API = "https://api.anthropic.com"
SERVED = {
    "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
}
LOOKBACK = 20
_KEY = b"fake-anthropic-signing-key"


@dataclass
class Reply:
    """One answer: content blocks as the API writes them, and its stop reason."""

    content: list[dict[str, Any]]
    stop_reason: str = "end_turn"
    output_tokens: int = 12


@dataclass
class Failure:
    """An error answer (``status``, the API's error ``kind``, extra headers)."""

    status: int
    kind: str
    message: str = "error"
    headers: dict[str, str] = field(default_factory=dict)


Answer = Reply | Failure


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, args: dict[str, Any], ident: str | None = None) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": args}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": sign(value)}


def reply(*blocks: dict[str, Any], stop: str | None = None) -> Reply:
    """An answer; ``tool_use`` when it calls a tool, else ``end_turn`` (unless ``stop``)."""
    calls = any(b["type"] == "tool_use" for b in blocks)
    return Reply(list(blocks), stop or ("tool_use" if calls else "end_turn"))


def sign(value: str) -> str:
    return hmac.new(_KEY, value.encode(), hashlib.sha256).hexdigest()


def signed(value: str, signature: str) -> bool:
    return hmac.compare_digest(sign(value), signature)


def overloaded(**headers: str) -> Failure:
    return Failure(529, "overloaded_error", "Overloaded", headers)


def rate_limited(retry_after: str) -> Failure:
    return Failure(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        {"retry-after": retry_after},
    )


class AnthropicAPI:
    """``POST /v1/messages`` answering from a script (a list, or a function of the body)."""

    def __init__(
        self,
        answers: list[Answer] | Callable[[dict[str, Any]], Answer] | None = None,
        *,
        min_cache_tokens: int = 1024,
    ) -> None:
        self.answers = answers if answers is not None else []
        self.min_cache_tokens = min_cache_tokens
        self.requests: list[dict[str, Any]] = []  # bodies as received (refused ones too)
        self.refusals: list[str] = []
        self.usages: list[dict[str, Any]] = []
        self._written: set[str] = set()
        self._ids = 0

    def http_client(self) -> anthropic.DefaultAsyncHttpxClient:
        return anthropic.DefaultAsyncHttpxClient(transport=httpx2.MockTransport(self.handle))

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST" or request.url.path != "/v1/messages":
            return _error(404, "not_found_error", f"{request.method} {request.url.path}")
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "")[7:]
        if not key or not request.headers.get("anthropic-version"):
            return _error(401, "authentication_error", "x-api-key header is required")
        body = json.loads(request.content)
        self.requests.append(body)
        found = problem(body, signed)
        if found is not None:
            self.refusals.append(found)
            return _error(400, "invalid_request_error", found)
        answer = self.answers(body) if callable(self.answers) else self.answers.pop(0)
        if isinstance(answer, Failure):
            return _error(answer.status, answer.kind, answer.message, answer.headers)
        return httpx2.Response(200, json=self._message(body, answer))

    def _message(self, body: dict[str, Any], answer: Reply) -> dict[str, Any]:
        read, written, total = self._cache(body)
        content = []
        for block in answer.content:
            if block["type"] == "tool_use" and not block.get("id"):
                self._ids += 1
                block = {**block, "id": f"toolu_fake{self._ids:04d}"}
            content.append(block)
        usage = {
            "input_tokens": total - read - written,
            "output_tokens": answer.output_tokens,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": written,
                "ephemeral_1h_input_tokens": 0,
            },
            "server_tool_use": None,
            "service_tier": "standard",
        }
        self.usages.append(usage)
        return {
            "id": f"msg_fake{len(self.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": SERVED.get(body["model"], body["model"]),
            "content": content,
            "stop_reason": answer.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    def _cache(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(tokens read from the cache, tokens written to it, prompt tokens)."""
        blocks = blocks_of(body)
        digest = hashlib.sha256(body["model"].encode())
        hashes: list[str] = []
        sums: list[int] = []
        total = 0
        for block in blocks:
            plain = json.dumps(
                {k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True
            )
            digest.update(plain.encode())
            hashes.append(digest.hexdigest())
            total += max(1, len(plain) // 4)
            sums.append(total)
        marks = [i for i, b in enumerate(blocks) if b.get("cache_control")]
        hit = -1
        for mark in marks:
            for j in range(mark, max(-1, mark - LOOKBACK), -1):
                if hashes[j] in self._written:
                    hit = max(hit, j)
                    break
        read = sums[hit] if hit >= 0 else 0
        new = [m for m in marks if m > hit and sums[m] >= self.min_cache_tokens]
        for mark in new:
            self._written.add(hashes[mark])
        written = sums[max(new)] - read if new else 0
        return read, written, total


def _error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}
    return httpx2.Response(status, json=body, headers=headers or {})
