"""Threat intelligence: AlienVault OTX, VirusTotal, AbuseIPDB and urlscan.io.

``register`` adds ``lookup_ip``, ``lookup_domain``, ``lookup_url`` and
``lookup_hash`` when at least one configured service handles that indicator type;
a service is configured when its API key is set. Each tool's description names
the services it will ask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import SecretStr

from config.settings import IntelSettings, Settings
from tools.base import Tool, ToolFn, ToolRegistry
from tools.intel.abuseipdb import AbuseIPDB
from tools.intel.indicators import TargetKind
from tools.intel.lookup import IntelDeps, lookup_domain, lookup_hash, lookup_ip, lookup_url
from tools.intel.otx import OTX
from tools.intel.service import HttpPolicy, IntelService, Sleep
from tools.intel.urlscan import URLScan
from tools.intel.virustotal import VirusTotal

if TYPE_CHECKING:
    import httpx

    from store.db.engine import Database

SERVICES: tuple[type[IntelService], ...] = (OTX, VirusTotal, AbuseIPDB, URLScan)
TOOLS: tuple[tuple[ToolFn, TargetKind], ...] = (
    (lookup_ip, "ip"),
    (lookup_domain, "domain"),
    (lookup_url, "url"),
    (lookup_hash, "hash"),
)


@dataclass(frozen=True)
class ServiceStatus:
    """Whether a service is configured, for ``socbot tools list``."""

    name: str
    env_var: str
    kinds: frozenset[TargetKind]
    configured: bool


def register(
    registry: ToolRegistry,
    settings: Settings,
    db: Database | None,
    http: httpx.AsyncClient | None,
    *,
    policy: HttpPolicy | None = None,
) -> None:
    """Add the lookup tools backed by every service whose API key is set.

    Without ``db`` and ``http`` the tools are listed but not bound (they cannot run):
    what ``socbot tools list`` shows, without importing the database code.
    """
    keys = _api_keys(settings.intel)
    deps = None if db is None or http is None else _deps(settings.intel, keys, db, http, policy)
    for fn, kind in TOOLS:
        names = [cls.name for cls in SERVICES if cls.name in keys and kind in cls.kinds]
        if names:
            tool = Tool(fn, deps)
            tool.description += f" Services: {', '.join(names)}."
            registry.add(tool)
        else:
            envs = [cls.env_var for cls in SERVICES if kind in cls.kinds]
            wanted = ", ".join(envs[:-1]) + " or " + envs[-1] if len(envs) > 1 else envs[0]
            registry.disable(fn.__name__, f"no threat-intel service configured (set {wanted})")


def _deps(
    intel: IntelSettings,
    keys: dict[str, SecretStr],
    db: Database,
    http: httpx.AsyncClient,
    policy: HttpPolicy | None,
) -> IntelDeps:
    from tools.intel.cache import IntelCache

    policy = policy or HttpPolicy(
        timeout_s=intel.timeout_s, max_retry_after_s=intel.max_retry_after_s
    )
    return IntelDeps(
        services=[cls(http, keys[cls.name], policy) for cls in SERVICES if cls.name in keys],
        cache=IntelCache(db, intel.cache_ttl_s),
        internal_suffixes=tuple(intel.internal_domain_suffixes),
    )


def service_status(settings: Settings) -> list[ServiceStatus]:
    """Each service and whether its API key is set."""
    keys = _api_keys(settings.intel)
    return [
        ServiceStatus(cls.name, cls.env_var, cls.kinds, keys.get(cls.name) is not None)
        for cls in SERVICES
    ]


def _api_keys(intel: IntelSettings) -> dict[str, SecretStr]:
    keys = {
        OTX.name: intel.otx_api_key,
        VirusTotal.name: intel.virustotal_api_key,
        AbuseIPDB.name: intel.abuseipdb_api_key,
        URLScan.name: intel.urlscan_api_key,
    }
    return {name: key for name, key in keys.items() if key and key.get_secret_value().strip()}


__all__ = ["SERVICES", "HttpPolicy", "ServiceStatus", "Sleep", "register", "service_status"]
