"""The embedded default backend: catalogued tables as DuckDB views over local files.

The model writes BigQuery Standard SQL; after the guard, sqlglot rewrites catalogued
names (``project.dataset.table``, backticks or not) to local view names and transpiles
to DuckDB. Queries run in sandboxed worker processes (``tools.logs.duckdb_worker`` via
``tools.logs.duckdb_pool``): no file access beyond the catalogued files, configuration
locked, a memory limit enforced by DuckDB and by the operating system, results capped in
rows and bytes, and a process killed (not interrupted) when its query overruns.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import glob
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config.settings import TableSpec
from tools.base import Budget, ToolError
from tools.logs.backend import AskApproval, ColumnInfo, Param, QueryResult
from tools.logs.catalogue import resolve_path
from tools.logs.duckdb_pool import DuckDBPool, WorkerFailed

if TYPE_CHECKING:
    from tools.sql.guard import CheckedQuery

log = logging.getLogger(__name__)

_READERS = {".parquet": "read_parquet", ".csv": "read_csv_auto", ".tsv": "read_csv_auto"}


class DuckDBBackend:
    """Catalogued tables as views in sandboxed worker processes; one process per query."""

    kind = "duckdb"

    def __init__(
        self,
        tables: Sequence[TableSpec],
        *,
        row_limit: int,
        timeout_s: float,
        memory_mb: int = 512,
        headroom_mb: int = 256,
        max_result_bytes: int = 1_000_000,
        workers: int = 2,
        threads: int = 2,
        start: bool = True,
    ) -> None:
        self.row_limit = row_limit
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.max_result_bytes = max_result_bytes
        self.local: dict[str, str] = {}  # catalogue name -> view name
        self.missing: dict[str, str] = {}  # catalogue name -> why it is unavailable
        self.views: list[tuple[str, str, list[str]]] = []  # (view, reader, files)
        for spec in tables:
            files = _files(spec)
            if not files:
                self.missing[spec.name] = f"no local file matches path {spec.path!r}"
                log.warning("log table %s has no local data (path %r)", spec.name, spec.path)
                continue
            view = re.sub(r"\W", "_", spec.name)
            reader = _READERS.get(files[0].suffix.lower(), "read_json_auto")
            self.views.append((view, reader, [str(f) for f in files]))
            self.local[spec.name] = view
        config = {
            "views": self.views,
            "memory_mb": memory_mb,
            "headroom_mb": headroom_mb,
            "threads": threads,
        }
        reply_limit = 2 * max_result_bytes + 65_536
        self.pool = DuckDBPool(config, size=workers, reply_limit=reply_limit, warm=start)

    def to_duckdb(self, query: CheckedQuery) -> str:
        """The guarded BigQuery query as DuckDB SQL over the local views (in a thread:
        the first call imports sqlglot's dialects)."""
        from sqlglot import exp
        from sqlglot.errors import ErrorLevel, SqlglotError

        from tools.sql.guard import table_name

        tree = query.tree.copy()
        for table in list(tree.find_all(exp.Table)):
            view = self.local.get(table_name(table))
            if view is None:
                continue
            alias = table.args.get("alias") or exp.TableAlias(
                this=exp.to_identifier(table.name, quoted=True)
            )
            table.replace(exp.Table(this=exp.to_identifier(view, quoted=True), alias=alias))
        try:
            return str(tree.sql(dialect="duckdb", unsupported_level=ErrorLevel.RAISE))
        except SqlglotError as exc:
            raise ToolError(f"cannot translate this query for the local log store: {exc}") from exc

    async def run(
        self,
        query: CheckedQuery,
        *,
        params: Mapping[str, Param],
        investigation_id: str,
        budget: Budget,
        timeout_s: float | None = None,
        ask: AskApproval | None = None,  # no byte cap on local files: never asks
    ) -> QueryResult:
        unavailable = sorted(t for t in query.tables if t in self.missing)
        if unavailable:
            raise ToolError(f"table(s) {unavailable} have no local data in this deployment")
        sql = await asyncio.to_thread(self.to_duckdb, query)
        values = {name: _duck_value(p) for name, p in params.items()}
        answer = await self.execute(sql, values, timeout_s=timeout_s)
        truncated_by = answer.get("truncated_by")
        result = QueryResult(
            columns=list(answer["columns"]),
            rows=list(answer["rows"]),
            truncated=truncated_by is not None,
            row_limit=self.row_limit,
        )
        if truncated_by == "bytes":
            result.extra["hint"] = (
                f"The result was cut at {self.max_result_bytes} bytes: select fewer or "
                "shorter columns (SUBSTR), aggregate, or narrow the WHERE clause."
            )
        return result

    async def execute(
        self, sql: str, params: dict[str, Any] | None = None, *, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """Run DuckDB SQL in a worker (the guard has run already); the worker's answer."""
        limit = self.timeout_s if timeout_s is None else min(timeout_s, self.timeout_s)
        request = {
            "sql": sql,
            "params": params or {},
            "row_limit": self.row_limit,
            "max_bytes": self.max_result_bytes,
        }
        try:
            answer = await self.pool.query(request, max(limit, 0.001))
        except TimeoutError as exc:
            raise ToolError(
                f"query timed out after {round(limit, 1):g}s and was stopped: narrow the time "
                "window, filter earlier, or aggregate"
            ) from exc
        except WorkerFailed as exc:
            raise ToolError(
                f"the query stopped the log store's worker process ({exc}): it most likely "
                f"exceeded the {self.memory_mb} MB memory limit; aggregate or filter earlier"
            ) from exc
        if answer.get("kind") == "memory":
            raise ToolError(
                f"query exceeded the {self.memory_mb} MB memory limit and was stopped: "
                "aggregate, filter earlier, or build smaller arrays and strings"
            )
        if "error" in answer:
            raise ToolError(self._explain(str(answer["error"])))
        return answer

    async def schema(self, table: str) -> list[ColumnInfo]:
        view = self.local.get(table)
        if view is None:
            raise ToolError(f"table {table!r} has no local data in this deployment")
        try:
            schemas = await self.pool.describe()
        except WorkerFailed as exc:
            raise ToolError(f"the log store is unavailable: {exc}") from exc
        return [ColumnInfo(name=name, type=_bq_type(kind)) for name, kind in schemas[view]]

    def _explain(self, text: str) -> str:
        for name, view in self.local.items():
            text = text.replace(view, name)
        return (
            f"query failed: {text[:400]} (local DuckDB log store: BigQuery SQL is translated; "
            "prefer common functions)"
        )

    def close(self) -> None:
        self.pool.close()


def _files(spec: TableSpec) -> list[Path]:
    if not spec.path:
        return []
    pattern = resolve_path(spec.path)
    return sorted(Path(p) for p in glob.glob(str(pattern)) if Path(p).is_file())


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _duck_value(param: Param) -> Any:
    if isinstance(param.value, dt.datetime):  # as text: DuckDB casts it to TIMESTAMPTZ
        return param.value.isoformat()
    return param.value


_TYPE_NAMES = {
    "VARCHAR": "STRING",
    "BIGINT": "INT64",
    "INTEGER": "INT64",
    "SMALLINT": "INT64",
    "DOUBLE": "FLOAT64",
    "FLOAT": "FLOAT64",
    "BOOLEAN": "BOOL",
    "TIMESTAMP WITH TIME ZONE": "TIMESTAMP",
    "TIMESTAMP": "DATETIME",
    "BLOB": "BYTES",
}


def _bq_type(duck: str) -> str:
    return _TYPE_NAMES.get(duck, duck)
