"""Each scenario's own tools: its log tables in the embedded DuckDB, its recorded intel.

``scenario_registry`` builds the registry the engine gets for one scenario with the
production code (``tools.setup.build_registry``): the log tools see only the scenario's
tables (no runbooks, no BigQuery), no threat-intel service reaches the network, and
when the scenario recorded intel answers (``intel.json``) the lookup tools answer
from them through the real lookup code (indicator checks, egress gate, result shape);
an indicator not recorded is "not found".
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import SecretStr

from alerts.model import Alert
from config.settings import IntelSettings, Settings, TableSpec
from evals.scenario import Scenario
from tools.base import Tool, ToolRegistry
from tools.intel import TOOLS
from tools.intel.cache import IntelCache
from tools.intel.indicators import Target, TargetKind
from tools.intel.lookup import IntelDeps
from tools.intel.service import HttpPolicy, IntelService, NotFound
from tools.logs.duckdb_backend import DuckDBBackend
from tools.logs.tools import LogDeps
from tools.setup import build_registry

if TYPE_CHECKING:
    import httpx

    from store.db.engine import Database


def scenario_settings(settings: Settings, scenario: Scenario, links: Path) -> Settings:
    """``settings`` with the scenario's tables as the whole catalogue and no intel keys.

    A table of several files (a pack's shared background and the scenario's injected
    rows) is read through links in ``links/<n>/``: one glob, nothing copied.
    """
    tables = [
        TableSpec(
            name=t.name,
            description=t.description,
            time_column=t.time_column,
            columns=t.columns,
            path=_path(t.files, links / str(n)),
        )
        for n, t in enumerate(scenario.tables)
    ]
    logs = settings.logs.model_copy(
        update={"backend": "duckdb", "tables": tables, "runbooks_dir": None, "query_workers": 1}
    )
    intel = IntelSettings(internal_domain_suffixes=settings.intel.internal_domain_suffixes)
    return settings.model_copy(update={"logs": logs, "intel": intel})


def _path(files: list[Path], folder: Path) -> str:
    if len(files) == 1:
        return str(files[0])
    folder.mkdir(parents=True, exist_ok=True)
    for n, file in enumerate(files):
        (folder / f"{n:04d}{file.suffix}").symlink_to(file.resolve())
    return str(folder / f"*{files[0].suffix}")


def scenario_registry(
    settings: Settings, scenario: Scenario, db: Database, http: httpx.AsyncClient
) -> ToolRegistry:
    """The tools of one scenario (close its log backend with ``close_registry``)."""
    registry = build_registry(settings, db, http)
    lookups = scenario.intel
    if lookups:
        _recorded_intel(registry, settings, db, http, lookups)
    return registry


def close_registry(registry: ToolRegistry) -> None:
    """Stop the scenario's DuckDB worker processes."""
    tool = registry.tools.get("query_logs")
    if isinstance(tool, Tool) and isinstance(tool.deps, LogDeps):
        if isinstance(tool.deps.backend, DuckDBBackend):
            tool.deps.backend.close()


@dataclass
class Sandbox:
    """One attempt's alert, settings and tools (``error``: why there are none)."""

    alert: Alert | None = None
    settings: Settings | None = None
    registry: ToolRegistry | None = None
    links: Path | None = None  # the tables' links, removed on close
    error: str = ""

    async def close(self) -> None:
        """Stop the scenario's DuckDB workers and remove its links."""
        if self.registry is not None:
            await asyncio.to_thread(close_registry, self.registry)
        if self.links is not None:
            shutil.rmtree(self.links, ignore_errors=True)


class RecordedService(IntelService):
    """A service that answers from a scenario's recording (never the network)."""

    name: ClassVar[str] = "recorded"
    env_var: ClassVar[str] = ""
    kinds: ClassVar[frozenset[TargetKind]] = frozenset({"ip", "domain", "url", "hash"})
    answers: ClassVar[dict[str, dict[str, Any]]] = {}

    async def lookup(self, target: Target) -> dict[str, Any]:
        answer = self.answers.get(target.value.lower())
        if answer is None:
            raise NotFound
        return dict(answer)


def recorded_services(lookups: list[dict[str, Any]], http: httpx.AsyncClient) -> list[IntelService]:
    """One ``RecordedService`` per service named in the recording."""
    per_service: dict[str, dict[str, dict[str, Any]]] = {}
    for item in lookups:
        for service, answer in item["services"].items():
            per_service.setdefault(service, {})[item["indicator"].lower()] = answer
    services: list[IntelService] = []
    for name, answers in sorted(per_service.items()):
        cls = type(f"Recorded_{name}", (RecordedService,), {"name": name, "answers": answers})
        services.append(cls(http, SecretStr("recorded"), HttpPolicy()))
    return services


def _recorded_intel(
    registry: ToolRegistry,
    settings: Settings,
    db: Database,
    http: httpx.AsyncClient,
    lookups: list[dict[str, Any]],
) -> None:
    services = recorded_services(lookups, http)
    deps = IntelDeps(
        services=services,
        cache=IntelCache(db, 0),  # off: one scenario's answers never reach another
        internal_suffixes=tuple(settings.intel.internal_domain_suffixes),
    )
    for fn, _kind in TOOLS:
        registry.disabled.pop(fn.__name__, None)
        tool = Tool(fn, deps)
        tool.description += f" Services: {', '.join(s.name for s in services)}."
        registry.add(tool)
