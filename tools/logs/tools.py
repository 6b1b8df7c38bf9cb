"""The log tools the model calls. Same five tools whichever backend is configured."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from config.settings import LogSettings
from core.approvals import ApprovalRequest
from tools.approval import ask_first
from tools.base import RunContext, Tool, ToolError
from tools.logs.backend import AskApproval, LogBackend, Param
from tools.logs.catalogue import Catalogue
from tools.logs.runbooks import Runbooks

if TYPE_CHECKING:
    from tools.sql.guard import CheckedQuery


@dataclass
class LogDeps:
    """Everything the log tools need; injected, never part of the model's schema."""

    catalogue: Catalogue
    backend: LogBackend
    runbooks: Runbooks
    settings: LogSettings
    approval_timeout_s: float = 900.0  # a query over the byte cap waits this long for a person


async def list_tables(ctx: RunContext[LogDeps]) -> dict[str, Any]:
    """List the log tables you may query: fully qualified name, description, time column
    and notable columns. Use these exact names in query_logs."""
    return {"tables": ctx.deps.catalogue.describe()}


async def get_table_schema(
    ctx: RunContext[LogDeps],
    table: Annotated[str, Field(description="fully qualified name from list_tables")],
) -> dict[str, Any]:
    """Get the columns (name, BigQuery type, description) of one catalogued log table."""
    spec = ctx.deps.catalogue.get(table)
    columns = await ctx.deps.backend.schema(spec.name)
    return {
        "table": spec.name,
        "time_column": spec.time_column,
        "columns": [
            {
                "name": c.name,
                "type": c.type,
                **({"description": d} if (d := c.description or spec.columns.get(c.name)) else {}),
            }
            for c in columns
        ],
    }


async def query_logs(
    ctx: RunContext[LogDeps],
    sql: Annotated[
        str,
        Field(description="one SELECT; fully qualified table names in backticks"),
    ],
) -> dict[str, Any]:
    """Run one read-only BigQuery Standard SQL SELECT over the catalogued log tables. Filter
    on the table's time column and select only the columns you need. Rows are capped
    (truncated: true says so) and there is no paging: aggregate (COUNT, GROUP BY, MIN/MAX)
    instead of fetching raw rows."""
    return await _run(ctx, sql, {}, ask=_asker(ctx, "query_logs", {"sql": sql}))


async def list_runbooks(ctx: RunContext[LogDeps]) -> dict[str, Any]:
    """List saved investigation queries (runbooks): name, title, description and the
    parameters each takes. Run one with run_runbook."""
    books = await asyncio.to_thread(ctx.deps.runbooks.load)
    return {"runbooks": [book.summary() for book in books.values()]}


async def run_runbook(
    ctx: RunContext[LogDeps],
    name: Annotated[str, Field(description="runbook name from list_runbooks")],
    params: Annotated[
        dict[str, str | int | float | bool] | None,
        Field(
            description='parameter values as strings, e.g. {"ip": "203.0.113.5", '
            '"start": "2025-11-08T00:00:00Z"}; timestamps in ISO 8601'
        ),
    ] = None,
) -> dict[str, Any]:
    """Run a saved runbook query (see list_runbooks) by name with its parameters."""
    books = await asyncio.to_thread(ctx.deps.runbooks.load)
    book = books.get(name)
    if book is None:
        known = ", ".join(books) or "none configured"
        raise ToolError(f"no runbook named {name!r}; known runbooks: {known}")
    values = {
        k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in (params or {}).items()
    }
    asking = _asker(ctx, "run_runbook", {"name": name, "params": params or {}})
    data = await _run(ctx, book.sql, book.bind(values), ask=asking)
    return {"runbook": book.name, **data}


def _asker(ctx: RunContext[LogDeps], tool: str, args: dict[str, Any]) -> AskApproval | None:
    """How a query over the byte cap asks the run's approver (None: refused, as ever)."""
    if ctx.approver is None:
        return None

    async def ask(why: str, estimate: str) -> None:
        request = ApprovalRequest(tool=tool, args=args, why=why, estimate=estimate)
        await ask_first(ctx.approver, request, ctx.time_left(ctx.deps.approval_timeout_s))

    return ask


async def _run(
    ctx: RunContext[LogDeps],
    sql: str,
    params: Mapping[str, Param],
    *,
    ask: AskApproval | None = None,
) -> dict[str, Any]:
    # Parsing is pure-Python CPU work (the first query also imports sqlglot, ~0.3 s): keep
    # it off the event loop.
    checked = await asyncio.to_thread(_check, sql, ctx.deps.catalogue.names())
    result = await ctx.deps.backend.run(
        checked,
        params=params,
        investigation_id=ctx.investigation_id,
        budget=ctx.budget,
        timeout_s=ctx.time_left(ctx.deps.settings.query_timeout_s),
        ask=ask,
    )
    return result.as_dict()


def _check(sql: str, tables: list[str]) -> CheckedQuery:
    from tools.sql.guard import check_sql

    return check_sql(sql, tables)


def log_tools(deps: LogDeps) -> list[Tool]:
    """The five log tools bound to ``deps``."""
    return [
        Tool(fn, deps)
        for fn in (list_tables, get_table_schema, query_logs, list_runbooks, run_runbook)
    ]
