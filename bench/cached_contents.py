"""Gemini's explicit context caches (``cachedContents``), as the fakes model them.

Transport-free: the bench's aiohttp fake (``bench.fake_gemini``) and the tests' respx
fake (``tests/fakes/gemini_rest.py``) route the REST calls here and send back what it
returns (REST JSON, camelCase) or the ``RestError`` it raises, in the API's error shape.

- ``POST cachedContents`` {model, systemInstruction, ttl | expireTime, displayName}: a
  cache of the system instruction, its tokens counted at ``CHARS_PER_TOKEN`` characters
  per token; refused (400 INVALID_ARGUMENT) under the model's minimum
  (``agent.model.context_cache.min_tokens``), or with ``refuse`` set (e.g. the free tier's 429).
  Only a system instruction is modelled: ``contents``, ``tools`` or ``toolConfig`` are
  refused (socbot never caches them).
- ``GET`` / ``PATCH`` (new ``ttl`` or ``expireTime``) / ``DELETE cachedContents/{id}``.
- ``generateContent`` naming ``cachedContent`` (``resolve``): the request may not set
  ``systemInstruction``, ``tools`` or ``toolConfig`` (400), the cache must belong to the
  same model (400) and exist, unexpired (else 403 PERMISSION_DENIED "CachedContent not
  found (or permission denied)"). The prompt is then the cached content followed by the
  request, and its tokens are reported as ``cachedContentTokenCount``.

Times are wall-clock seconds from ``clock`` (a test can move it).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent.model.context_cache import min_tokens

CHARS_PER_TOKEN = 4
DEFAULT_TTL_S = 3600.0  # the API's default when neither ttl nor expireTime is given
GONE = "CachedContent not found (or permission denied)"
NOT_WITH = (
    "CachedContent can not be used with GenerateContent request setting system_instruction, "
    "tools or tool_config.\n\nProposed fix: move those values to CachedContent from "
    "GenerateContent request."
)
_TTL = re.compile(r"^(\d+(?:\.\d+)?)s$")


class RestError(Exception):
    """An error answer: HTTP status and the API's JSON error body."""

    def __init__(self, code: int, status: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.body = {"error": {"code": code, "message": message, "status": status}}


@dataclass
class StoredCache:
    name: str
    model: str  # "models/gemini-2.5-flash"
    display_name: str
    system: str
    tokens: int
    created: float
    updated: float
    expires: float


@dataclass
class CachedContents:
    """The server side of explicit caching: what exists, and every call received."""

    clock: Callable[[], float] = time.time
    refuse: RestError | None = None  # every create answers with this error
    caches: dict[str, StoredCache] = field(default_factory=dict)
    created: list[dict[str, Any]] = field(default_factory=list)  # create bodies, as received
    calls: list[tuple[str, str]] = field(default_factory=list)  # (verb, name) in order
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def handle(self, method: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        """One REST call: ``POST cachedContents`` (``name`` empty), else ``GET``, ``PATCH``
        or ``DELETE`` on ``cachedContents/{id}``."""
        if not name and method == "POST":
            return self.create(body)
        if name and method == "GET":
            return self.get(name)
        if name and method == "PATCH":
            return self.patch(name, body)
        if name and method == "DELETE":
            return self.delete(name)
        raise RestError(405, "METHOD_NOT_ALLOWED", f"{method} cachedContents {name}".strip())

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.created.append(body)
        self.calls.append(("create", ""))
        if self.refuse is not None:
            raise self.refuse
        for key in ("contents", "tools", "toolConfig"):
            if body.get(key):
                raise RestError(400, "INVALID_ARGUMENT", f"fake: {key} is not modelled")
        model = str(body.get("model") or "")
        system = _text(body.get("systemInstruction"))
        tokens = math.ceil(len(system) / CHARS_PER_TOKEN)
        minimum = min_tokens(model)
        if tokens < minimum:
            raise RestError(
                400,
                "INVALID_ARGUMENT",
                f"Cached content is too small. total_token_count={tokens}, "
                f"min_total_token_count={minimum}",
            )
        now = self.clock()
        name = f"cachedContents/fake{next(self._ids)}"
        cache = StoredCache(
            name=name,
            model=model if model.startswith("models/") else f"models/{model}",
            display_name=str(body.get("displayName") or ""),
            system=system,
            tokens=tokens,
            created=now,
            updated=now,
            expires=self._expiry(body, now, DEFAULT_TTL_S),
        )
        self.caches[name] = cache
        self.calls[-1] = ("create", name)
        return _resource(cache)

    def get(self, name: str) -> dict[str, Any]:
        self.calls.append(("get", name))
        return _resource(self._live(name))

    def patch(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("patch", name))
        cache = self._live(name)
        now = self.clock()
        cache.expires, cache.updated = self._expiry(body, now, cache.expires - now), now
        return _resource(cache)

    def delete(self, name: str) -> dict[str, Any]:
        self.calls.append(("delete", name))
        self._live(name)
        del self.caches[name]
        return {}

    def resolve(self, model: str, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """A generateContent body naming ``cachedContent``: the body as the model reads it
        (the cached system instruction put back) and the cached tokens."""
        name = str(body["cachedContent"])
        if body.get("systemInstruction") or body.get("tools") or body.get("toolConfig"):
            raise RestError(400, "INVALID_ARGUMENT", NOT_WITH)
        cache = self._live(name)
        if cache.model.rsplit("/", 1)[-1] != model.rsplit("/", 1)[-1]:
            raise RestError(
                400,
                "INVALID_ARGUMENT",
                f"Model used by GenerateContent request (models/{model}) and CachedContent "
                f"({cache.model}) has to be the same.",
            )
        inline = {k: v for k, v in body.items() if k != "cachedContent"}
        inline["systemInstruction"] = {"parts": [{"text": cache.system}]}
        return inline, cache.tokens

    def live(self) -> list[StoredCache]:
        """Caches that exist and have not expired."""
        now = self.clock()
        return [c for c in self.caches.values() if c.expires > now]

    def _live(self, name: str) -> StoredCache:
        cache = self.caches.get(name)
        if cache is None or cache.expires <= self.clock():
            self.caches.pop(name, None)
            raise RestError(403, "PERMISSION_DENIED", GONE)
        return cache

    def _expiry(self, body: dict[str, Any], now: float, default_ttl: float) -> float:
        ttl = body.get("ttl")
        if isinstance(ttl, str):
            match = _TTL.match(ttl.strip())
            if not match:
                raise RestError(400, "INVALID_ARGUMENT", f"Invalid value at 'ttl' ({ttl!r})")
            return now + float(match.group(1))
        expire = body.get("expireTime")
        if isinstance(expire, str):
            return dt.datetime.fromisoformat(expire.replace("Z", "+00:00")).timestamp()
        return now + default_ttl


def _text(content: Any) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    return "".join(str(p.get("text") or "") for p in parts or [] if isinstance(p, dict))


def _stamp(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat().replace("+00:00", "Z")


def _resource(cache: StoredCache) -> dict[str, Any]:
    return {
        "name": cache.name,
        "model": cache.model,
        "displayName": cache.display_name,
        "createTime": _stamp(cache.created),
        "updateTime": _stamp(cache.updated),
        "expireTime": _stamp(cache.expires),
        "usageMetadata": {"totalTokenCount": cache.tokens},
    }
