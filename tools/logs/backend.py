"""What a log backend is: the interface both DuckDB and BigQuery implement."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from tools.base import Budget

if TYPE_CHECKING:  # sqlglot: imported by the first query, not at start
    from tools.sql.guard import CheckedQuery

ParamValue = str | int | float | bool | dt.datetime | None
# Asks a person to approve a query over the per-query cap: (why, estimate) → returns when
# approved, raises ``tools.approval.NotApproved`` otherwise.
AskApproval = Callable[[str, str], Awaitable[None]]

PAGING_HINT = (
    "Only the first {limit} rows are returned and there is no paging: aggregate "
    "(COUNT(*) ... GROUP BY ... ORDER BY count DESC, MIN/MAX of the time column) or narrow the "
    "WHERE clause and time window instead."
)


@dataclass(frozen=True)
class Param:
    """A typed query parameter (``@name`` in the SQL)."""

    name: str
    type: str  # BigQuery type name: STRING, INT64, FLOAT64, BOOL, TIMESTAMP
    value: ParamValue


@dataclass
class QueryResult:
    """Rows as lists (compact for the model), capped to the row limit."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    row_limit: int
    total_rows: int | None = None
    bytes_processed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "columns": self.columns,
            "rows": self.rows,
            "row_count": len(self.rows),
            "truncated": self.truncated,
        }
        if self.truncated:
            data["hint"] = PAGING_HINT.format(limit=self.row_limit)
        if self.total_rows is not None:
            data["total_rows"] = self.total_rows
        if self.bytes_processed is not None:
            data["bytes_processed"] = self.bytes_processed
        data.update(self.extra)
        return data


@dataclass(frozen=True)
class ColumnInfo:
    """One column of a table, as ``get_table_schema`` shows it."""

    name: str
    type: str
    description: str | None = None


class LogBackend(Protocol):
    """Runs guarded queries and describes tables. Failures the model can act on raise
    ``ToolError``; the guard has already run on every query it receives."""

    kind: str

    async def run(
        self,
        query: CheckedQuery,
        *,
        params: Mapping[str, Param],
        investigation_id: str,
        budget: Budget,
        timeout_s: float | None = None,
        ask: AskApproval | None = None,
    ) -> QueryResult:
        """Run one guarded query with typed parameters, charging ``budget``; stop it after
        ``timeout_s`` (default: ``logs.query_timeout_s``). A query over the per-query byte
        cap is refused, or run once ``ask`` returns (a person approved it)."""
        ...

    async def schema(self, table: str) -> list[ColumnInfo]:
        """The columns of one catalogued table."""
        ...
