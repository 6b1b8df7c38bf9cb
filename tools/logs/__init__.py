"""Log query tools over the catalogue: embedded DuckDB by default, BigQuery when configured.

``register(registry, settings)`` adds ``list_tables``, ``get_table_schema``,
``query_logs``, ``list_runbooks`` and ``run_runbook``, or disables them with the reason
(no tables configured, no local data, no BigQuery project or credentials).
"""

from __future__ import annotations

import logging

from config.settings import Settings
from tools.base import ToolRegistry
from tools.logs.backend import LogBackend
from tools.logs.catalogue import Catalogue, resolve_path
from tools.logs.duckdb_backend import DuckDBBackend
from tools.logs.runbooks import Runbooks
from tools.logs.tools import LogDeps, log_tools

log = logging.getLogger(__name__)

TOOL_NAMES = ("list_tables", "get_table_schema", "query_logs", "list_runbooks", "run_runbook")

__all__ = ["TOOL_NAMES", "LogDeps", "build_backend", "register"]


def register(
    registry: ToolRegistry,
    settings: Settings,
    *,
    backend: LogBackend | None = None,
    start: bool = True,
) -> None:
    """Add the log tools to ``registry``, or record why they are disabled.

    ``backend`` overrides the one built from settings (tests inject a BigQuery backend
    around a client pointed at a fake). ``start=False`` starts no DuckDB worker (the
    first query would): for ``socbot tools list``, which runs none.
    """
    cfg = settings.logs
    catalogue = Catalogue(cfg.tables)
    if not catalogue.tables:
        _disable(registry, "no log tables configured (logs.tables in config/socbot.toml)")
        return
    if backend is None:
        built = build_backend(settings, catalogue, start=start)
        if isinstance(built, str):
            _disable(registry, built)
            return
        backend = built
    directory = resolve_path(cfg.runbooks_dir) if cfg.runbooks_dir else None
    runbooks = Runbooks(directory, catalogue.names())
    deps = LogDeps(
        catalogue=catalogue,
        backend=backend,
        runbooks=runbooks,
        settings=cfg,
        approval_timeout_s=settings.approvals.timeout_s,
    )
    for tool in log_tools(deps):
        registry.add(tool)
    log.info(  # the runbooks are read and checked on first use (tools.logs.runbooks)
        "log tools on %s backend: %d tables, runbooks in %s",
        backend.kind,
        len(catalogue.tables),
        directory or "no folder",
    )


def build_backend(
    settings: Settings, catalogue: Catalogue, *, start: bool = True
) -> LogBackend | str:
    """The configured backend, or the reason it cannot be used."""
    cfg = settings.logs
    if cfg.backend == "duckdb":
        duck = DuckDBBackend(
            cfg.tables,
            row_limit=cfg.row_limit,
            timeout_s=cfg.query_timeout_s,
            memory_mb=cfg.query_memory_mb,
            headroom_mb=cfg.query_memory_headroom_mb,
            max_result_bytes=cfg.max_result_bytes,
            workers=cfg.query_workers,
            threads=cfg.query_threads,
            start=start,
        )
        if not duck.local:
            return "no local data for any catalogued table (logs.tables[].path)"
        return duck
    if not cfg.bigquery_project:
        return "logs.backend is 'bigquery' but logs.bigquery_project is not set"
    from google.auth import exceptions as auth_exc
    from google.cloud import bigquery

    from tools.logs.bigquery_backend import BigQueryBackend

    try:
        client = bigquery.Client(project=cfg.bigquery_project, location=cfg.bigquery_location)
    except auth_exc.DefaultCredentialsError:
        return "no Google credentials (run `gcloud auth application-default login`)"
    return BigQueryBackend(client, cfg, frozenset(catalogue.names()))


def _disable(registry: ToolRegistry, reason: str) -> None:
    for name in TOOL_NAMES:
        registry.disable(name, reason)
