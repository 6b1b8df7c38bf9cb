"""The BigQuery backend: dry run, checks, then a capped and labelled query job.

Every query is dry-run first. The dry run must report a SELECT over catalogued tables
only, calling no routine (UDF, remote function, table function), and an estimate within
what is left of the investigation's bytes budget. An estimate over the per-query cap
is refused, unless a person approves it (``ask``: the estimate and its on-demand cost
are shown) — then the cap of that one job is the approved size. The real job then
runs with ``maximum_bytes_billed``, ``job_timeout_ms`` and labels
(``app=socbot``, the investigation id); only the first ``row_limit`` rows are fetched.
The synchronous client runs in a thread; a job still running at the time limit is
cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import re
import threading
from collections.abc import Mapping
from typing import Any

from google.api_core import exceptions as gexc
from google.auth import exceptions as auth_exc
from google.cloud import bigquery
from google.cloud.bigquery.retry import DEFAULT_RETRY

from config.settings import LogSettings
from tools.base import Budget, ToolError
from tools.cells import json_value
from tools.logs.backend import AskApproval, ColumnInfo, Param, QueryResult
from tools.sql.guard import CheckedQuery

log = logging.getLogger(__name__)

_RETRY_S = 30.0
_RETRY = DEFAULT_RETRY.with_timeout(_RETRY_S)
_CANCEL_WAIT_S = 5.0  # how long a timed-out query waits for its cancel call
_GB = 1024**3
ON_DEMAND_USD_PER_TIB = 6.25  # BigQuery on-demand list price, for the approval message


def label_value(text: str) -> str:
    """A BigQuery label value: lowercase letters, digits, ``_`` and ``-``, at most 63."""
    return re.sub(r"[^a-z0-9_-]", "-", text.lower())[:63] or "none"


def _size(n: int) -> str:
    return f"{n / _GB:.2f} GB" if n >= _GB // 10 else f"{n / 1024**2:.1f} MB"


class BigQueryBackend:
    """Runs guarded queries on BigQuery with dry-run checks and hard byte limits."""

    kind = "bigquery"

    def __init__(
        self, client: bigquery.Client, settings: LogSettings, catalogue: frozenset[str]
    ) -> None:
        self.client = client
        self.settings = settings
        self.catalogue = catalogue

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
        limit = self.settings.query_timeout_s
        limit = max(limit if timeout_s is None else min(timeout_s, limit), 0.001)
        qparams = [bigquery.ScalarQueryParameter(p.name, p.type, p.value) for p in params.values()]
        estimate = await asyncio.to_thread(self._dry_run, query.sql, qparams, limit)
        self._check_budget(estimate, budget)
        billed = self.settings.max_bytes_per_query
        if estimate > billed:
            await self._ask(estimate, ask)
            billed = estimate + estimate // 10  # the approved size, with room for drift
        result = await self._execute(query.sql, qparams, investigation_id, limit, billed)
        spent = result.bytes_processed or 0
        budget.bytes_processed += spent
        budget.counters["bigquery_queries"] = budget.counters.get("bigquery_queries", 0) + 1
        result.extra["investigation_bytes_processed"] = budget.bytes_processed
        log.info("bigquery query for %s processed %d bytes", investigation_id, spent)
        return result

    def _dry_run(self, sql: str, qparams: list[bigquery.ScalarQueryParameter], limit: float) -> int:
        config = bigquery.QueryJobConfig(
            dry_run=True, use_query_cache=False, use_legacy_sql=False, query_parameters=qparams
        )
        try:
            job = self.client.query(
                sql,
                job_config=config,
                location=self.settings.bigquery_location,
                retry=_RETRY.with_timeout(min(_RETRY_S, limit)),
                timeout=limit,
                job_retry=None,
            )
        except (gexc.GoogleAPICallError, auth_exc.GoogleAuthError) as exc:
            raise ToolError(_explain(exc, "dry run")) from exc
        if job.statement_type != "SELECT":
            raise ToolError(f"dry run says this is a {job.statement_type} statement: SELECT only")
        tables = {f"{t.project}.{t.dataset_id}.{t.table_id}" for t in job.referenced_tables}
        outside = sorted(tables - self.catalogue)
        if outside:
            raise ToolError(f"the query reads tables outside the catalogue: {outside}")
        # The client has no accessor for statistics.query.referencedRoutines: read the resource.
        stats = job._properties.get("statistics", {}).get("query", {})
        routines = sorted(
            ".".join(str(r.get(k, "?")) for k in ("projectId", "datasetId", "routineId"))
            for r in stats.get("referencedRoutines") or []
        )
        if routines:
            raise ToolError(
                f"dry run says the query calls user-defined or remote functions {routines}: "
                "only built-in functions are allowed"
            )
        return int(job.total_bytes_processed or 0)

    async def _ask(self, estimate: int, ask: AskApproval | None) -> None:
        """Over the per-query cap: refused, or run once a person approves it."""
        cap = self.settings.max_bytes_per_query
        over = f"query would process {_size(estimate)}, over the {_size(cap)} per-query cap"
        if ask is None:
            raise ToolError(
                f"{over}: filter on the time column (partition), select fewer columns, or aggregate"
            )
        cost = estimate / 2**40 * ON_DEMAND_USD_PER_TIB
        await ask(over, f"{_size(estimate)} scanned, ≈ ${cost:,.2f} at on-demand prices")

    def _check_budget(self, estimate: int, budget: Budget) -> None:
        left = self.settings.max_bytes_per_investigation - budget.bytes_processed
        if estimate > left:
            raise ToolError(
                f"query would process {_size(estimate)} but only {_size(max(left, 0))} of this "
                "investigation's BigQuery budget is left: narrow it or conclude with what you have"
            )

    async def _execute(
        self,
        sql: str,
        qparams: list[bigquery.ScalarQueryParameter],
        investigation_id: str,
        limit: float,
        billed: int,
    ) -> QueryResult:
        config = bigquery.QueryJobConfig(
            use_legacy_sql=False,
            query_parameters=qparams,
            maximum_bytes_billed=billed,
            job_timeout_ms=max(int(limit * 1000), 1),
            labels={"app": "socbot", "investigation": label_value(investigation_id)},
        )
        try:
            job = await asyncio.to_thread(
                self.client.query,
                sql,
                job_config=config,
                location=self.settings.bigquery_location,
                job_id_prefix="socbot_",
                retry=_RETRY.with_timeout(min(_RETRY_S, limit)),
                timeout=limit,
                job_retry=None,
            )
        except (gexc.GoogleAPICallError, auth_exc.GoogleAuthError) as exc:
            raise ToolError(_explain(exc, "query")) from exc
        try:
            return await asyncio.to_thread(self._fetch, job, limit)
        except concurrent.futures.TimeoutError as exc:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_CANCEL_WAIT_S):
                    await asyncio.to_thread(self._cancel, job)
            raise ToolError(
                f"query did not finish within {limit:g}s and was cancelled: narrow the time "
                "window or aggregate"
            ) from exc
        except asyncio.CancelledError:  # the step's deadline: cancel without waiting for it
            threading.Thread(target=self._cancel, args=(job,), daemon=True).start()
            raise
        except (gexc.GoogleAPICallError, auth_exc.GoogleAuthError) as exc:
            raise ToolError(_explain(exc, "query")) from exc

    def _fetch(self, job: bigquery.QueryJob, timeout_s: float) -> QueryResult:
        limit = self.settings.row_limit
        rows_iter = job.result(timeout=timeout_s, max_results=limit + 1, job_retry=None)
        rows = [list(row.values()) for row in rows_iter]
        total = rows_iter.total_rows
        return QueryResult(
            columns=[field.name for field in rows_iter.schema],
            rows=[[json_value(v) for v in row] for row in rows[:limit]],
            truncated=len(rows) > limit,
            row_limit=limit,
            total_rows=int(total) if total is not None else None,
            bytes_processed=int(job.total_bytes_processed or 0),
        )

    def _cancel(self, job: bigquery.QueryJob) -> None:
        try:
            self.client.cancel_job(job.job_id, location=job.location, retry=_RETRY)
        except gexc.GoogleAPICallError as exc:  # fail open: the job has its own timeout
            log.warning("could not cancel BigQuery job %s: %s", job.job_id, type(exc).__name__)

    async def schema(self, table: str) -> list[ColumnInfo]:
        try:
            bq_table = await asyncio.to_thread(self.client.get_table, table, retry=_RETRY)
        except (gexc.GoogleAPICallError, auth_exc.GoogleAuthError) as exc:
            raise ToolError(_explain(exc, "table lookup")) from exc
        return [_column(f) for f in bq_table.schema]


def _column(field: bigquery.SchemaField, prefix: str = "") -> ColumnInfo:
    kind = str(field.field_type)
    if field.mode == "REPEATED":
        kind = f"ARRAY<{kind}>"
    if field.fields:
        inner = ", ".join(f"{f.name} {f.field_type}" for f in field.fields)
        kind = f"{kind}<{inner}>"
    return ColumnInfo(name=prefix + field.name, type=kind, description=field.description)


_ADVICE = {
    "invalidQuery": "fix the SQL (BigQuery Standard SQL)",
    "accessDenied": "socbot's account lacks access; say so instead of retrying",
    "quotaExceeded": "BigQuery quota exhausted; do not retry now",
    "rateLimitExceeded": "rate limited; do not retry now",
    "bytesBilledLimitExceeded": "too much data: filter on the time column or select fewer columns",
    "notFound": "check the table and column names with list_tables / get_table_schema",
    "responseTooLarge": "aggregate or select fewer columns",
    "resourcesExceeded": "the query is too heavy: aggregate earlier or narrow the time window",
    "timeout": "narrow the time window or aggregate",
}


def _explain(exc: gexc.GoogleAPICallError | auth_exc.GoogleAuthError, during: str) -> str:
    if isinstance(exc, auth_exc.GoogleAuthError):
        return f"BigQuery {during} failed: Google credentials are not usable ({type(exc).__name__})"
    first: dict[str, Any] = exc.errors[0] if exc.errors else {}
    reason = str(first.get("reason") or type(exc).__name__)
    message = str(first.get("message") or exc.message)
    advice = _ADVICE.get(reason)
    code = f"{exc.code} " if exc.code else ""
    text = f"BigQuery {during} failed ({code}{reason}): {message[:400]}"
    return f"{text} — {advice}" if advice else text
