"""The embedded default backend: catalogued tables as DuckDB views over local files.

The model writes BigQuery Standard SQL; after the guard, sqlglot rewrites catalogued
names (``project.dataset.table``, backticks or not) to local view names and transpiles
to DuckDB. The database is sandboxed once the views exist: no file access beyond the
catalogued files, configuration locked. Each query runs on its own cursor in a thread
and is interrupted when it exceeds the time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import glob
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from config.settings import TableSpec
from tools.base import Budget, ToolError
from tools.logs.backend import ColumnInfo, Param, QueryResult, json_value
from tools.logs.catalogue import resolve_path
from tools.sql_guard import CheckedQuery, table_name

log = logging.getLogger(__name__)

_READERS = {".parquet": "read_parquet", ".csv": "read_csv_auto", ".tsv": "read_csv_auto"}


class DuckDBBackend:
    """One in-memory DuckDB database per registry; a cursor per query."""

    kind = "duckdb"

    def __init__(self, tables: Sequence[TableSpec], *, row_limit: int, timeout_s: float) -> None:
        self.row_limit = row_limit
        self.timeout_s = timeout_s
        self.local: dict[str, str] = {}  # catalogue name -> view name
        self.missing: dict[str, str] = {}  # catalogue name -> why it is unavailable
        self._con = duckdb.connect(":memory:")
        self._con.execute("SET TimeZone = 'UTC'")
        allowed: list[str] = []
        for spec in tables:
            files = _files(spec)
            if not files:
                self.missing[spec.name] = f"no local file matches path {spec.path!r}"
                log.warning("log table %s has no local data (path %r)", spec.name, spec.path)
                continue
            view = re.sub(r"\W", "_", spec.name)
            reader = _READERS.get(files[0].suffix.lower(), "read_json_auto")
            listed = ", ".join(_quote(str(f)) for f in files)
            self._con.execute(f'CREATE VIEW "{view}" AS SELECT * FROM {reader}([{listed}])')
            self.local[spec.name] = view
            allowed += [str(f) for f in files]
        self._con.execute(f"SET allowed_paths = [{', '.join(_quote(p) for p in allowed)}]")
        self._con.execute("SET enable_external_access = false")
        self._con.execute("SET lock_configuration = true")
        # Load sqlglot's BigQuery and DuckDB dialects now, not during the first investigation.
        sqlglot.transpile("SELECT 1", read="bigquery", write="duckdb")

    def to_duckdb(self, query: CheckedQuery) -> str:
        """The guarded BigQuery query as DuckDB SQL over the local views."""
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
    ) -> QueryResult:
        unavailable = sorted(t for t in query.tables if t in self.missing)
        if unavailable:
            raise ToolError(f"table(s) {unavailable} have no local data in this deployment")
        sql = await asyncio.to_thread(self.to_duckdb, query)
        values = {name: _duck_value(p) for name, p in params.items()}
        cursor = self._con.cursor()
        work = asyncio.ensure_future(asyncio.to_thread(self._execute, cursor, sql, values))
        try:
            columns, rows = await asyncio.wait_for(asyncio.shield(work), self.timeout_s)
        except (TimeoutError, asyncio.CancelledError) as exc:
            cursor.interrupt()
            with contextlib.suppress(duckdb.Error):
                await work
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ToolError(
                f"query timed out after {self.timeout_s:g}s and was stopped: narrow the time "
                "window, filter earlier, or aggregate"
            ) from exc
        except duckdb.Error as exc:
            raise ToolError(self._explain(exc)) from exc
        finally:
            cursor.close()
        truncated = len(rows) > self.row_limit
        return QueryResult(
            columns=columns,
            rows=[[json_value(v) for v in row] for row in rows[: self.row_limit]],
            truncated=truncated,
            row_limit=self.row_limit,
        )

    def _execute(
        self, cursor: duckdb.DuckDBPyConnection, sql: str, values: dict[str, Any]
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        rel = cursor.sql(sql, params=values or None)
        columns = [str(c) for c in rel.columns]
        types = [str(t) for t in rel.types]
        if any("TIME ZONE" in t for t in types):  # fetch as text: avoids a pytz dependency
            rel = rel.project(
                ", ".join(
                    f"CAST(#{i} AS VARCHAR)" if "TIME ZONE" in t else f"#{i}"
                    for i, t in enumerate(types, start=1)
                )
            )
        return columns, rel.limit(self.row_limit + 1).fetchall()

    async def schema(self, table: str) -> list[ColumnInfo]:
        view = self.local.get(table)
        if view is None:
            raise ToolError(f"table {table!r} has no local data in this deployment")

        def describe() -> list[tuple[Any, ...]]:
            with self._con.cursor() as cursor:
                return cursor.execute(f'DESCRIBE "{view}"').fetchall()

        rows = await asyncio.to_thread(describe)
        return [ColumnInfo(name=str(r[0]), type=_bq_type(str(r[1]))) for r in rows]

    def _explain(self, exc: duckdb.Error) -> str:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        for name, view in self.local.items():
            text = text.replace(view, name)
        return (
            f"query failed: {text[:400]} (local DuckDB log store: BigQuery SQL is translated; "
            "prefer common functions)"
        )

    def close(self) -> None:
        self._con.close()


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
