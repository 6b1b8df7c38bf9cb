"""The threat-intel tools the model calls: one per indicator type, fanning out.

Each tool validates its argument (refusing malformed and internal indicators before
any request; a URL carrying internal data is reduced to its host, and the result's
``withheld`` says so), asks every configured service that handles that type concurrently,
and returns one reduced result per service. A service that fails answers
``{"error": ...}`` while the others still answer; the whole call is an error only
when every service failed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from tools.base import RunContext, ToolError
from tools.intel.indicators import (
    Target,
    ensure_sendable,
    validate_domain,
    validate_hash,
    validate_ip,
    validate_url,
)
from tools.intel.service import IntelService, NotFound, ServiceError

if TYPE_CHECKING:  # the cache is SQLAlchemy: imported only when the tools are bound
    from tools.intel.cache import IntelCache


@dataclass(frozen=True)
class IntelDeps:
    services: list[IntelService]
    cache: IntelCache
    internal_suffixes: tuple[str, ...]


async def lookup_ip(
    ctx: RunContext[IntelDeps],
    ip: Annotated[str, Field(description="a public IPv4 or IPv6 address")],
) -> dict[str, Any]:
    """Threat intelligence on a public IP address from every configured service: reputation, detections, abuse reports, country/ASN, related pulses and tags. Private and internal addresses are refused.

    Per service: ``found``, ``flagged`` (the service considers it malicious) and its
    reduced fields; ``flagged_by`` lists the services that flag it.
    """  # noqa: E501
    return await lookup(ctx.deps, validate_ip(ip))


async def lookup_domain(
    ctx: RunContext[IntelDeps],
    domain: Annotated[str, Field(description="a public, fully qualified domain name")],
) -> dict[str, Any]:
    """Threat intelligence on a public domain or host name from every configured service: detections, categories, registration, related pulses and tags, earlier scans. Internal domains are refused."""  # noqa: E501
    return await lookup(ctx.deps, validate_domain(domain, ctx.deps.internal_suffixes))


async def lookup_url(
    ctx: RunContext[IntelDeps],
    url: Annotated[str, Field(description="an absolute http(s) URL on a public host")],
) -> dict[str, Any]:
    """Threat intelligence on a URL from every configured service: detections, first/last seen, related pulses, earlier scans (looked up only; never submitted for scanning). A URL whose path, query or user part carries e-mail addresses, internal names or addresses is not sent: only its host is looked up, and ``withheld`` says why."""  # noqa: E501
    return await lookup(ctx.deps, validate_url(url, ctx.deps.internal_suffixes))


async def lookup_hash(
    ctx: RunContext[IntelDeps],
    hash: Annotated[str, Field(description="an md5, sha1 or sha256 hex digest of a file")],
) -> dict[str, Any]:
    """Threat intelligence on a file hash from every configured service: detections, threat label, file names and type, first/last seen, related pulses."""  # noqa: E501
    return await lookup(ctx.deps, validate_hash(hash))


async def lookup(deps: IntelDeps, target: Target) -> dict[str, Any]:
    """Ask every configured service that handles ``target`` at once (if it may leave)."""
    ensure_sendable(target, deps.internal_suffixes)
    services = [s for s in deps.services if s.supports(target)]
    if not services:
        raise ToolError(f"no configured threat-intel service looks up {target.subtype} values")
    answers = await asyncio.gather(*(_ask(deps.cache, s, target) for s in services))
    per_service = {s.name: a for s, a in zip(services, answers, strict=True)}
    failed = [name for name, a in per_service.items() if "error" in a]
    result: dict[str, Any] = {
        "indicator": target.value,
        "type": target.subtype,
        "flagged_by": [name for name, a in per_service.items() if a.get("flagged") is True],
        "services": per_service,
    }
    if target.note:
        result["withheld"] = target.note
    if failed:
        result["failed"] = failed
    if len(failed) == len(services):
        result["error"] = "every threat-intel service failed: " + "; ".join(
            str(per_service[name]["error"]) for name in failed
        )
    return result


async def _ask(cache: IntelCache, service: IntelService, target: Target) -> dict[str, Any]:
    cached = await cache.get(service.name, target)
    if cached is not None:
        return {**cached, "cached": True}
    try:
        answer = await service.lookup(target)
    except NotFound:
        answer = {"found": False, "flagged": False}
    except ServiceError as exc:
        return {"error": str(exc)}
    await cache.put(service.name, target, answer)
    return answer
