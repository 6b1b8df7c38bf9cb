"""Reduced threat-intel answers cached in ``intel_cache`` for ``cache_ttl_s``.

Keys are ``service:subtype:value`` (hashed when too long). Only answers are cached,
"not found" included; errors are not. The cache fails open: a database problem is
logged and treated as a miss, never as a failed lookup.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from store.db.engine import Database
from store.schema import IntelCache as IntelCacheRow
from tools.intel.indicators import Target

log = logging.getLogger(__name__)

MAX_KEY = 300


class IntelCache:
    """TTL cache of reduced per-service results."""

    def __init__(
        self,
        db: Database,
        ttl_s: float,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.db = db
        self.ttl = timedelta(seconds=ttl_s)
        self.clock = clock

    @property
    def enabled(self) -> bool:
        return self.ttl.total_seconds() > 0

    async def get(self, service: str, target: Target) -> dict[str, Any] | None:
        """The cached result, or ``None`` when absent or expired."""
        if not self.enabled:
            return None
        try:
            async with self.db.session() as session:
                row = await session.get(IntelCacheRow, cache_key(service, target))
                if row is None:
                    return None
                expires, value = _utc(row.expires_at), row.value
        except SQLAlchemyError as exc:  # fail open: the cache only saves requests
            log.warning("intel cache read failed (%s)", type(exc).__name__)
            return None
        return value if expires > self.clock() else None

    async def put(self, service: str, target: Target, value: dict[str, Any]) -> None:
        """Store (or refresh) one result."""
        if not self.enabled:
            return
        key, expires = cache_key(service, target), self.clock() + self.ttl
        for attempt in (1, 2):  # two lookups of one indicator at once both insert: merge again
            try:
                async with self.db.session() as session:
                    await session.merge(IntelCacheRow(key=key, value=value, expires_at=expires))
                return
            except IntegrityError:
                if attempt == 2:
                    log.warning("intel cache write failed (IntegrityError)")
            except SQLAlchemyError as exc:  # fail open
                log.warning("intel cache write failed (%s)", type(exc).__name__)
                return


def cache_key(service: str, target: Target) -> str:
    key = f"{service}:{target.subtype}:{target.value}"
    if len(key) <= MAX_KEY:
        return key
    digest = hashlib.sha256(target.value.encode()).hexdigest()
    return f"{service}:{target.subtype}:sha256:{digest}"


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
