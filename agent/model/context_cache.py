"""Explicit context caching of long system instructions (opt-in: ``gemini.context_cache``).

Gemini's implicit cache bills a repeated prompt prefix at the cached price when it can
("no cost saving guarantee"). An explicit cache (``cachedContents``) makes it certain: the
system instruction is stored once per model, each request names the cache
(``GenerateContentConfig.cached_content``) instead of sending the text, and Gemini counts
its tokens in ``cachedContentTokenCount``, billed at the cached-input price. Storage is
billed per hour of the cache's lifetime (``ModelPrice.cache_storage``), used or not.

Only a system instruction is ever cached: configuration, never per-request data
(``tests/agent/test_prompt_fencing.py`` keeps the manual free of fences and data). A request
naming a cache may not set ``system_instruction``, ``tools`` or ``tool_config``, so calls
that offer tools (the steps, the direct answer) are always sent inline.

Policy: one cache per (model, sha256 of the text) per process, created by the first call
whose instruction reaches the model's minimum (estimated at 4 characters per token; a
refusal by the server is handled like any failed creation). Concurrent first calls wait
on a lock per key, so one cache is created. A call that finds less than
``refresh_before_s`` left *extends* the TTL (PATCH, same name) instead of creating a new
cache: a new one would pay for its tokens again and overlap the old one's storage, and
extending only when a call comes means an idle process stops paying one TTL after its
last call. An expired cache, or one that cannot be extended, is replaced. A failed
creation logs one line, and calls go inline for ``retry_after_s``. ``close`` deletes the
caches (best effort) at shutdown.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx
from google.auth.exceptions import GoogleAuthError
from google.genai import errors, types
from google.genai.caches import AsyncCaches

from agent.model.pricing import price_for, storage_cost_per_hour
from config.settings import ContextCacheSettings, ModelPrice

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
# The minimum a cached prefix must reach, per model (longest matching name), from
# https://ai.google.dev/gemini-api/docs/caching (last updated 2026-10-13: 2,048 tokens for
# Gemini 2.5 Flash and 2.5 Pro; earlier versions said 1,024 for Flash and 4,096 for Pro).
# Flash-Lite is not listed; it gets the default. The same version lists 4,096 for every
# Gemini 3.x model (3.1 Pro Preview, the 3.x Flash models); earlier ones said 1,024 for
# 3 Flash Preview. The bench's fake Gemini uses this table.
MIN_TOKENS: dict[str, int] = {
    "gemini-2.5-flash": 2048,
    "gemini-2.5-pro": 2048,
    "gemini-3": 4096,
}
DEFAULT_MIN_TOKENS = 2048
YOUNG_S = 60.0  # a cache reported gone this soon after creation or extension: hold off
CLOSE_TIMEOUT_S = 5.0
FAILURES = (errors.APIError, httpx.TransportError, TimeoutError, GoogleAuthError, ValueError)

Key = tuple[str, str]


def min_tokens(model: str) -> int:
    """The documented minimum cached prefix for ``model`` (longest matching name)."""
    name = model.rsplit("/", 1)[-1]
    keys = [k for k in MIN_TOKENS if name.startswith(k)]
    return MIN_TOKENS[max(keys, key=len)] if keys else DEFAULT_MIN_TOKENS


def names_cached_content(exc: errors.APIError) -> bool:
    """Gemini refused a call because of the cached content it names (gone, expired,
    not ours: 403 "CachedContent not found (or permission denied)", 404, 400)."""
    if exc.code not in (400, 403, 404):
        return False
    text = f"{exc.message or ''} {exc.details}".lower().replace("_", "").replace(" ", "")
    return "cachedcontent" in text or "cachecontent" in text


@dataclass
class _Cache:
    name: str
    model: str
    tokens: int
    renewed: float  # clock() when created or last extended
    expires: float  # clock() value


class ContextCache:
    """The process's explicit caches of system instructions, one per (model, text)."""

    def __init__(
        self,
        caches: AsyncCaches,
        settings: ContextCacheSettings,
        prices: Mapping[str, ModelPrice],
        *,
        timeout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._caches = caches
        self.settings = settings
        self._prices = prices
        self._timeout_s = timeout_s
        self._clock = clock
        self._entries: dict[Key, _Cache] = {}
        self._locks: dict[Key, asyncio.Lock] = {}
        self._hold: dict[Key, float] = {}  # key -> clock() until which calls go inline

    async def name_for(self, model: str, system: str) -> str | None:
        """The cache holding ``system`` for ``model``, or ``None``: send it inline."""
        if len(system) < min_tokens(model) * CHARS_PER_TOKEN:
            return None
        key = (model, hashlib.sha256(system.encode("utf-8", "surrogatepass")).hexdigest())
        name = self._fresh(key)
        if name is not None or self._held(key):
            return name
        async with self._locks.setdefault(key, asyncio.Lock()):
            name = self._fresh(key)  # a concurrent first call may have made it meanwhile
            if name is not None or self._held(key):
                return name
            entry = self._entries.pop(key, None)
            if entry is not None and self._clock() < entry.expires and await self._extend(entry):
                self._entries[key] = entry
                return entry.name
            return await self._create(key, model, system)

    def forget(self, name: str) -> None:
        """``name`` is gone (expired, evicted, deleted): the next call makes a new one."""
        for key, entry in list(self._entries.items()):
            if entry.name == name:
                del self._entries[key]
                if self._clock() - entry.renewed < YOUNG_S:
                    self._hold_off(key, f"{name} was reported gone right after it was made")

    def storage_cost_per_hour(self) -> float:
        """USD per hour the live caches cost in storage (unpriced models count 0)."""
        return sum(
            storage_cost_per_hour(price_for(self._prices, e.model), e.tokens) or 0.0
            for e in self._entries.values()
        )

    async def close(self) -> None:
        """Delete every cache this process made (best effort: they expire anyway)."""
        entries, self._entries = list(self._entries.values()), {}
        deleted = 0
        for entry in entries:
            try:
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    await self._caches.delete(name=entry.name)
                deleted += 1
            except FAILURES as exc:
                log.info(
                    "context cache %s not deleted (%s); it expires by itself",
                    entry.name,
                    _problem(exc),
                )
        if deleted:
            log.info("deleted %d context cache(s)", deleted)

    def _fresh(self, key: Key) -> str | None:
        entry = self._entries.get(key)
        if entry is not None and self._clock() < entry.expires - self.settings.refresh_before_s:
            return entry.name
        return None

    def _held(self, key: Key) -> bool:
        return self._hold.get(key, float("-inf")) > self._clock()

    def _hold_off(self, key: Key, problem: str) -> None:
        self._hold[key] = self._clock() + self.settings.retry_after_s
        log.warning(
            "context cache for %s not used (%s): sending the system instruction inline for %.0fs",
            key[0],
            problem,
            self.settings.retry_after_s,
        )

    async def _create(self, key: Key, model: str, system: str) -> str | None:
        ttl = self.settings.ttl_s
        config = types.CreateCachedContentConfig(
            system_instruction=system, ttl=f"{ttl:.0f}s", display_name=f"socbot {key[1][:16]}"
        )
        started = self._clock()
        try:
            async with asyncio.timeout(self._timeout_s):
                cached = await self._caches.create(model=model, config=config)
        except FAILURES as exc:
            self._hold_off(key, _problem(exc))
            return None
        if not cached.name:
            self._hold_off(key, "the answer named no cache")
            return None
        usage = cached.usage_metadata
        tokens = (usage.total_token_count if usage else None) or len(system) // CHARS_PER_TOKEN
        entry = _Cache(cached.name, model, tokens, started, self._expiry(started, cached))
        self._entries[key] = entry
        hourly = storage_cost_per_hour(price_for(self._prices, model), tokens)
        log.info(
            "context cache %s created for %s: %d tokens, expires in %.0fs, storage %s per hour",
            entry.name,
            model,
            tokens,
            entry.expires - started,
            "unpriced" if hourly is None else f"${hourly:.4f}",
        )
        return entry.name

    async def _extend(self, entry: _Cache) -> bool:
        config = types.UpdateCachedContentConfig(ttl=f"{self.settings.ttl_s:.0f}s")
        started = self._clock()
        try:
            async with asyncio.timeout(self._timeout_s):
                cached = await self._caches.update(name=entry.name, config=config)
        except FAILURES as exc:
            log.info(
                "context cache %s not extended (%s): making a new one", entry.name, _problem(exc)
            )
            return False
        entry.renewed, entry.expires = started, self._expiry(started, cached)
        log.debug("context cache %s extended by %.0fs", entry.name, entry.expires - started)
        return True

    def _expiry(self, started: float, cached: types.CachedContent) -> float:
        """``clock()`` at which the cache expires: the TTL asked for, or less if the
        server says so (its ``expireTime``)."""
        lifetime = self.settings.ttl_s
        if cached.expire_time is not None:
            expire = cached.expire_time
            if expire.tzinfo is None:
                expire = expire.replace(tzinfo=dt.UTC)
            lifetime = min(lifetime, max(0.0, (expire - dt.datetime.now(dt.UTC)).total_seconds()))
        return started + lifetime


def _problem(exc: BaseException) -> str:
    """One line naming what went wrong (no payloads)."""
    if isinstance(exc, errors.APIError):
        message = (exc.message or "").strip().splitlines()[0][:160] if exc.message else ""
        return f"HTTP {exc.code} {exc.status or ''} {message}".strip()
    return type(exc).__name__
