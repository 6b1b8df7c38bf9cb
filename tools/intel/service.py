"""What every threat-intel service shares: the HTTP call, its failures, its API key.

A service turns a validated ``Target`` into a small reduced dict (``found``,
``flagged`` and the fields an analyst needs) or raises ``ServiceError`` with a
message safe to show the model. ``get_json`` is the single place that talks to
the network: a 429 is retried once after ``Retry-After`` when that is within
``max_retry_after_s``; timeouts, transport errors, 5xx and bodies that are not
JSON become ``ServiceError``. The API key travels in a header only and appears in
no message, log line or result.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

import httpx
from pydantic import SecretStr

from tools.intel.indicators import Target, TargetKind
from tools.retry_after import retry_after

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


class ServiceError(Exception):
    """This service could not answer for this indicator; the text is model-safe."""


class NotFound(Exception):
    """The service knows nothing about the indicator (HTTP 404)."""


@dataclass(frozen=True)
class HttpPolicy:
    timeout_s: float = 15.0
    max_retry_after_s: float = 10.0
    sleep: Sleep = asyncio.sleep


class IntelService(ABC):
    """One provider. Subclasses set ``name``, ``env_var``, ``kinds`` and ``lookup``."""

    name: ClassVar[str]
    env_var: ClassVar[str]
    kinds: ClassVar[frozenset[TargetKind]]

    def __init__(self, http: httpx.AsyncClient, api_key: SecretStr, policy: HttpPolicy) -> None:
        self.http = http
        self._api_key = api_key
        self.policy = policy

    def supports(self, target: Target) -> bool:
        """Whether this service can look ``target`` up (by kind; subclasses narrow it)."""
        return target.kind in self.kinds

    @abstractmethod
    async def lookup(self, target: Target) -> dict[str, Any]:
        """The reduced result; raises ``NotFound`` (from ``get_json``) when the service has
        nothing on the indicator, which the caller reports as ``{"found": False, ...}``."""

    def key(self) -> str:
        """The API key, for a request header only."""
        return self._api_key.get_secret_value()

    async def get_json(
        self, url: str, *, headers: Mapping[str, str], params: Mapping[str, str] | None = None
    ) -> Any:
        """The decoded JSON body of a GET; raises ``NotFound`` on 404, else ``ServiceError``."""
        started = time.perf_counter()
        response = await self._get(url, headers, params)
        for retried in (False, True):
            if response.status_code != 429:
                break
            wait = retry_after(response.headers.get("Retry-After"))
            if retried or wait is None or wait > self.policy.max_retry_after_s:
                hint = f"; retry after {wait:.0f}s" if wait is not None else ""
                raise ServiceError(f"{self.name} rate limit reached{hint}")
            log.info("%s rate limited; retrying in %.1fs", self.name, wait)
            await self.policy.sleep(wait)
            response = await self._get(url, headers, params)
        status = response.status_code
        log.info("%s answered HTTP %s in %.0f ms", self.name, status, _ms(started))
        if status == 404:
            raise NotFound
        if status in (401, 403):
            raise ServiceError(
                f"{self.name} rejected the request (HTTP {status}: check the API key)"
            )
        if status >= 400:
            detail = _detail(response)
            raise ServiceError(f"{self.name} returned HTTP {status}{detail}")
        try:
            return response.json()
        except ValueError:
            raise ServiceError(f"{self.name} returned a malformed response (not JSON)") from None

    async def _get(
        self, url: str, headers: Mapping[str, str], params: Mapping[str, str] | None
    ) -> httpx.Response:
        try:
            return await self.http.get(
                url, headers=headers, params=params, timeout=self.policy.timeout_s
            )
        except httpx.TimeoutException:
            raise ServiceError(f"{self.name} timed out after {self.policy.timeout_s:g}s") from None
        except httpx.HTTPError as exc:
            raise ServiceError(f"{self.name} is unreachable ({type(exc).__name__})") from None


def malformed(service: str, what: str) -> ServiceError:
    """The error for a JSON body that lacks the expected structure."""
    return ServiceError(f"{service} returned an unexpected response ({what})")


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def epoch_iso(value: Any) -> str | None:
    """ISO 8601 UTC from epoch seconds (VirusTotal's dates)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return None
    return datetime.fromtimestamp(value, UTC).isoformat().replace("+00:00", "Z")


def strings(values: Any, limit: int) -> list[str]:
    """Up to ``limit`` distinct non-empty strings, in order."""
    out: list[str] = []
    for v in as_list(values):
        if isinstance(v, str) and v and v not in out:
            out.append(v)
        if len(out) >= limit:
            break
    return out


def _detail(response: httpx.Response) -> str:
    """A short error detail from the body, if the service gave one."""
    try:
        body = response.json()
    except ValueError:
        return ""
    data = as_dict(body)
    errors = as_list(data.get("errors"))
    candidates = [
        as_dict(errors[0]).get("detail") if errors else None,
        as_dict(data.get("error")).get("message"),
        data.get("detail"),
        data.get("message"),
        data.get("description"),
    ]
    text = next((c for c in candidates if isinstance(c, str) and c.strip()), None)
    if text is None:
        return ""
    text = " ".join(text.split())
    return ": " + (text if len(text) <= 200 else text[:200] + "…")


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
