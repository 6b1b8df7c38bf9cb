"""The BigQuery backend: the real google-cloud-bigquery client against a REST-level fake.

``responses`` intercepts the client's ``requests`` session, so nothing reaches the
network; the fake answers jobs.insert (dry run and real), jobs.getQueryResults, jobs.get,
jobs.cancel and tables.get the way the BigQuery v2 REST API does.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import responses
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

from config.settings import LogSettings, Settings, TableSpec
from core.approvals import ApprovalRequest, Decision
from tools.base import Budget, ToolRegistry, ToolResult
from tools.logs import register
from tools.logs.bigquery_backend import BigQueryBackend, label_value

API = "https://bigquery.googleapis.com/bigquery/v2/projects"
BASE = f"{API}/test-proj"
ROOT = Path(__file__).resolve().parents[2]
AUTH = "socbot-sample.logs.auth_logs"
TABLES = [
    TableSpec(name=f"socbot-sample.logs.{t}", description=f"{t} (test)", time_column="event_time")
    for t in ("auth_logs", "vpc_flow_logs", "gcp_audit_logs", "dns_logs")
]
SQL = f"SELECT user_name, event_time FROM `{AUTH}` WHERE result = 'FAILURE'"


def error_body(code: int, reason: str, message: str) -> dict[str, Any]:
    status = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED"}.get(code, "UNKNOWN")
    return {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"reason": reason, "domain": "global", "message": message}],
            "status": status,
        }
    }


@dataclass
class FakeBigQuery:
    """Scriptable BigQuery REST API. Records every request body it receives."""

    bytes_estimate: int = 52_428_800
    statement_type: str = "SELECT"
    referenced: list[str] = field(default_factory=lambda: [AUTH])
    routines: list[str] = field(default_factory=list)  # statistics.query.referencedRoutines
    rows: list[tuple[str, int]] = field(
        default_factory=lambda: [(f"user{i}@example.com", 1762579427891000) for i in range(3)]
    )
    never_finishes: bool = False
    insert_error: tuple[int, str, str] | None = None  # for the real job (not the dry run)
    dry_run_error: tuple[int, str, str] | None = None
    job_error: tuple[str, str] | None = None  # errorResult of a failed job
    inserts: list[dict[str, Any]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    results_calls: list[str] = field(default_factory=list)
    job_gets: list[str] = field(default_factory=list)

    def install(self, mock: responses.RequestsMock) -> None:
        mock.add_callback("POST", f"{BASE}/jobs", callback=self._insert)
        mock.add_callback("GET", re.compile(rf"{re.escape(BASE)}/queries/[\w-]+"), self._results)
        mock.add_callback(
            "POST", re.compile(rf"{re.escape(BASE)}/jobs/[\w-]+/cancel"), self._cancel
        )
        mock.add_callback("GET", re.compile(rf"{re.escape(BASE)}/jobs/[\w-]+"), self._get)
        mock.add_callback(
            "GET",
            re.compile(rf"{re.escape(API)}/socbot-sample/datasets/logs/tables/auth_logs"),
            self._table,
        )

    @property
    def dry_runs(self) -> list[dict[str, Any]]:
        return [b for b in self.inserts if b["configuration"].get("dryRun")]

    @property
    def jobs(self) -> list[dict[str, Any]]:
        return [b for b in self.inserts if not b["configuration"].get("dryRun")]

    def _job(self, ref: dict[str, Any], config: dict[str, Any], state: str) -> dict[str, Any]:
        tables = [dict(zip(("projectId", "datasetId", "tableId"), t.split("."), strict=True))
                  for t in self.referenced]  # fmt: skip
        routines = [dict(zip(("projectId", "datasetId", "routineId"), r.split("."), strict=True))
                    for r in self.routines]  # fmt: skip
        job: dict[str, Any] = {
            "kind": "bigquery#job",
            "id": f"test-proj:US.{ref['jobId']}",
            "jobReference": {**ref, "location": "US"},
            "configuration": config,
            "status": {"state": state},
        }
        if state == "DONE" or config.get("dryRun"):
            job["statistics"] = {
                "totalBytesProcessed": str(self.bytes_estimate),
                "query": {
                    "statementType": self.statement_type,
                    "totalBytesProcessed": str(self.bytes_estimate),
                    "totalBytesBilled": str(self.bytes_estimate),
                    "referencedTables": tables,
                    **({"referencedRoutines": routines} if routines else {}),
                },
            }
        if self.job_error and not config.get("dryRun") and state == "DONE":
            reason, message = self.job_error
            job["status"] = {
                "state": "DONE",
                "errorResult": {"reason": reason, "message": message},
                "errors": [{"reason": reason, "message": message}],
            }
        return job

    def _insert(self, request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        self.inserts.append(body)
        dry = bool(body["configuration"].get("dryRun"))
        failure = self.dry_run_error if dry else self.insert_error
        if failure:
            return failure[0], {}, json.dumps(error_body(*failure))
        state = "DONE" if dry else "RUNNING"
        return 200, {}, json.dumps(self._job(body["jobReference"], body["configuration"], state))

    def _job_id(self, request: Any) -> str:
        return str(re.search(r"/(?:jobs|queries)/([\w-]+)", request.url).group(1))  # type: ignore[union-attr]

    def _results(self, request: Any) -> tuple[int, dict[str, str], str]:
        job_id = self._job_id(request)
        self.results_calls.append(request.url)
        ref = {"projectId": "test-proj", "jobId": job_id, "location": "US"}
        if self.never_finishes:
            return 200, {}, json.dumps({"jobReference": ref, "jobComplete": False})
        if self.job_error:
            reason, message = self.job_error
            return 400, {}, json.dumps(error_body(400, reason, message))
        max_results = int(re.search(r"maxResults=(\d+)", request.url).group(1))  # type: ignore[union-attr]
        page = self.rows[:max_results] if max_results else []
        body = {
            "kind": "bigquery#getQueryResultsResponse",
            "jobReference": ref,
            "jobComplete": True,
            "schema": {
                "fields": [
                    {"name": "user_name", "type": "STRING", "mode": "NULLABLE"},
                    {"name": "event_time", "type": "TIMESTAMP", "mode": "NULLABLE"},
                ]
            },
            "totalRows": str(len(self.rows)),
            "rows": [{"f": [{"v": u}, {"v": str(t)}]} for u, t in page],
            "totalBytesProcessed": str(self.bytes_estimate),
            "cacheHit": False,
        }
        if max_results and len(self.rows) > max_results:
            body["pageToken"] = "next-page"
        return 200, {}, json.dumps(body)

    def _get(self, request: Any) -> tuple[int, dict[str, str], str]:
        ref = {"projectId": "test-proj", "jobId": self._job_id(request)}
        self.job_gets.append(ref["jobId"])
        state = "RUNNING" if self.never_finishes else "DONE"
        return 200, {}, json.dumps(self._job(ref, {"query": {"query": SQL}}, state))

    def _cancel(self, request: Any) -> tuple[int, dict[str, str], str]:
        job_id = self._job_id(request)
        self.cancelled.append(job_id)
        ref = {"projectId": "test-proj", "jobId": job_id}
        job = self._job(ref, {"query": {"query": SQL}}, "DONE")
        return 200, {}, json.dumps({"kind": "bigquery#jobCancelResponse", "job": job})

    def _table(self, request: Any) -> tuple[int, dict[str, str], str]:
        body = {
            "kind": "bigquery#table",
            "tableReference": {
                "projectId": "socbot-sample",
                "datasetId": "logs",
                "tableId": "auth_logs",
            },
            "schema": {
                "fields": [
                    {"name": "event_time", "type": "TIMESTAMP", "mode": "REQUIRED",
                     "description": "when the attempt happened"},
                    {"name": "user_name", "type": "STRING", "mode": "NULLABLE"},
                    {"name": "labels", "type": "STRING", "mode": "REPEATED"},
                ]
            },
        }  # fmt: skip
        return 200, {}, json.dumps(body)


@pytest.fixture
def fake() -> Iterator[FakeBigQuery]:
    bq = FakeBigQuery()
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        bq.install(mock)
        yield bq


def make_registry(**logs: Any) -> ToolRegistry:
    cfg = LogSettings(
        backend="bigquery",
        bigquery_project="test-proj",
        tables=TABLES,
        runbooks_dir=str(ROOT / "examples" / "runbooks"),
        **logs,
    )
    client = bigquery.Client(project="test-proj", credentials=AnonymousCredentials())
    backend = BigQueryBackend(client, cfg, frozenset(t.name for t in TABLES))
    registry = ToolRegistry(result_chars=50_000)
    register(registry, Settings(logs=cfg), backend=backend)
    return registry


async def query(
    registry: ToolRegistry, sql: str = SQL, budget: Budget | None = None, inv: str = "inv-1"
) -> dict[str, Any]:
    result = await registry.dispatch(
        "query_logs",
        {"sql": sql},
        allowed=["query_logs"],
        investigation_id=inv,
        budget=budget or Budget(),
    )
    return result.data


async def test_dry_run_then_capped_labelled_job(fake: FakeBigQuery) -> None:
    registry = make_registry(max_bytes_per_query=1_000_000_000, query_timeout_s=45)
    budget = Budget()
    data = await query(registry, budget=budget, inv="Inv 7f3a/ALERT:42")
    assert data["columns"] == ["user_name", "event_time"]
    assert data["rows"][0] == ["user0@example.com", "2025-11-08T05:23:47.891000Z"]
    assert data["bytes_processed"] == fake.bytes_estimate
    assert budget.bytes_processed == fake.bytes_estimate

    [dry] = fake.dry_runs
    assert dry["configuration"]["dryRun"] is True
    assert dry["configuration"]["query"]["useLegacySql"] is False
    assert dry["configuration"]["query"]["query"] == SQL
    [job] = fake.jobs
    config = job["configuration"]
    assert config["query"]["maximumBytesBilled"] == "1000000000"
    assert config["query"]["useLegacySql"] is False
    assert config["jobTimeoutMs"] == "45000"
    assert config["labels"] == {"app": "socbot", "investigation": "inv-7f3a-alert-42"}
    assert job["jobReference"]["jobId"].startswith("socbot_")
    assert "maxResults=201" in fake.results_calls[0]  # row cap + 1 to detect truncation
    assert fake.job_gets == [job["jobReference"]["jobId"]]  # final statistics via jobs.get


async def test_row_cap_truncates_and_hints(fake: FakeBigQuery) -> None:
    fake.rows = [(f"u{i}", 1762579427891000) for i in range(12)]
    data = await query(make_registry(row_limit=5))
    assert len(data["rows"]) == 5 and data["truncated"] is True
    assert data["total_rows"] == 12
    assert "aggregate" in data["hint"]
    assert "maxResults=6" in fake.results_calls[0]


async def test_budget_accumulates_and_is_enforced(fake: FakeBigQuery) -> None:
    fake.bytes_estimate = 400 * 1024**2
    registry = make_registry(max_bytes_per_investigation=1024**3)
    budget = Budget()
    await query(registry, budget=budget)
    await query(registry, budget=budget)
    assert budget.bytes_processed == 800 * 1024**2
    assert budget.counters["bigquery_queries"] == 2
    data = await query(registry, budget=budget)
    assert "investigation's BigQuery budget" in data["error"]
    assert len(fake.jobs) == 2 and len(fake.dry_runs) == 3  # the third never ran


async def test_per_query_cap_stops_before_running(fake: FakeBigQuery) -> None:
    fake.bytes_estimate = 20 * 1024**3
    data = await query(make_registry(max_bytes_per_query=10 * 1024**3))
    assert "20.00 GB, over the 10.00 GB per-query cap" in data["error"]
    assert fake.jobs == []


@pytest.mark.parametrize(
    ("statement_type", "referenced", "routines", "reason"),
    [
        ("SCRIPT", [AUTH], [], "dry run says this is a SCRIPT statement"),
        ("SELECT", [AUTH, "secret-proj.hr.salaries"], [], "outside the catalogue"),
        ("SELECT", [AUTH], ["attacker.pub.exfil"], "functions ['attacker.pub.exfil']"),
        ("SELECT", [AUTH], ["socbot-sample.logs.normalise"], "only built-in functions"),
    ],
)
async def test_dry_run_checks_fail_closed(
    fake: FakeBigQuery, statement_type: str, referenced: list[str], routines: list[str],
    reason: str,
) -> None:  # fmt: skip
    fake.statement_type, fake.referenced, fake.routines = statement_type, referenced, routines
    data = await query(make_registry())
    assert reason in data["error"]
    assert fake.jobs == []


async def test_guard_runs_before_bigquery_sees_anything(fake: FakeBigQuery) -> None:
    data = await query(make_registry(), sql="SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS")
    assert "INFORMATION_SCHEMA" in data["error"]
    assert fake.inserts == []


@pytest.mark.parametrize(
    ("where", "failure", "expected"),
    [
        ("dry_run_error", (400, "invalidQuery", 'Syntax error: Unexpected identifier "SELEC"'),
         ["dry run failed (400 invalidQuery)", "Unexpected identifier", "fix the SQL"]),
        ("dry_run_error", (403, "accessDenied", "Access Denied: Table logs.auth_logs"),
         ["(403 accessDenied)", "lacks access"]),
        ("insert_error", (403, "quotaExceeded", "Quota exceeded: Your project exceeded quota"),
         ["query failed (403 quotaExceeded)", "do not retry now"]),
    ],
)  # fmt: skip
async def test_api_errors_come_back_as_useful_messages(
    fake: FakeBigQuery, where: str, failure: tuple[int, str, str], expected: list[str]
) -> None:
    setattr(fake, where, failure)
    data = await query(make_registry())
    for text in expected:
        assert text in data["error"]


async def test_bytes_billed_limit_exceeded(fake: FakeBigQuery) -> None:
    fake.job_error = (
        "bytesBilledLimitExceeded",
        "Query exceeded limit for bytes billed: 10485760. 20971520 or higher required.",
    )
    budget = Budget()
    data = await query(make_registry(), budget=budget)
    assert "bytesBilledLimitExceeded" in data["error"]
    assert "filter on the time column" in data["error"]
    assert budget.bytes_processed == 0


async def test_timeout_cancels_the_job(fake: FakeBigQuery) -> None:
    fake.never_finishes = True
    started = time.monotonic()
    data = await query(make_registry(query_timeout_s=0.3))
    assert "did not finish within 0.3s and was cancelled" in data["error"]
    [job] = fake.jobs
    assert fake.cancelled == [job["jobReference"]["jobId"]]
    assert time.monotonic() - started < 10


async def test_runbook_sends_typed_query_parameters(fake: FakeBigQuery) -> None:
    registry = make_registry()
    result = await registry.dispatch(
        "run_runbook",
        {
            "name": "login_failures_then_success",
            "params": {"start": "2025-11-07T00:00:00Z", "end": "2025-11-08T06:00:00+00:00"},
        },
        allowed=["run_runbook"],
        investigation_id="inv-2",
        budget=Budget(),
    )
    assert result.ok, result.data
    [job] = fake.jobs
    params = {p["name"]: p for p in job["configuration"]["query"]["queryParameters"]}
    assert params["start"]["parameterType"] == {"type": "TIMESTAMP"}
    assert params["start"]["parameterValue"]["value"].startswith("2025-11-07 00:00:00")
    assert params["end"]["parameterValue"]["value"].startswith("2025-11-08 06:00:00")
    assert "@start" in job["configuration"]["query"]["query"]


async def test_table_schema_comes_from_bigquery(fake: FakeBigQuery) -> None:
    result = await make_registry().dispatch(
        "get_table_schema",
        {"table": AUTH},
        allowed=["get_table_schema"],
        investigation_id="i",
        budget=Budget(),
    )
    columns = {c["name"]: c for c in result.data["columns"]}
    assert columns["event_time"] == {
        "name": "event_time",
        "type": "TIMESTAMP",
        "description": "when the attempt happened",
    }
    assert columns["labels"]["type"] == "ARRAY<STRING>"


@pytest.mark.parametrize(
    ("raw", "label"),
    [("inv-1", "inv-1"), ("Inv 7/ABC", "inv-7-abc"), ("x" * 80, "x" * 63), ("", "none")],
)
def test_label_values_are_bigquery_safe(raw: str, label: str) -> None:
    assert label_value(raw) == label


class Answering:
    """A person at the approval prompt who answers ``approved`` (the edge of the system)."""

    def __init__(self, approved: bool) -> None:
        self.approved = approved
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest, within_s: float) -> Decision:
        self.asked.append(request)
        verb = "approved" if self.approved else "denied"
        return Decision(approved=self.approved, note=f"{verb} by ULEAD0001", by="ULEAD0001")


async def over_the_cap(approver: Answering) -> ToolResult:
    registry = make_registry(max_bytes_per_query=10 * 1024**3)
    return await registry.dispatch(
        "query_logs",
        {"sql": SQL},
        allowed=["query_logs"],
        investigation_id="inv-1",
        budget=Budget(),
        approver=approver,
    )


async def test_over_the_cap_an_approved_query_runs_capped_at_its_estimate(
    fake: FakeBigQuery,
) -> None:
    fake.bytes_estimate = 20 * 1024**3
    approver = Answering(approved=True)
    result = await over_the_cap(approver)
    assert result.ok
    [asked] = approver.asked
    assert (asked.tool, asked.args) == ("query_logs", {"sql": SQL})
    assert "20.00 GB, over the 10.00 GB per-query cap" in asked.why
    assert asked.estimate == "20.00 GB scanned, ≈ $0.12 at on-demand prices"
    [job] = fake.jobs
    assert job["configuration"]["query"]["maximumBytesBilled"] == str(22 * 1024**3)


async def test_over_the_cap_a_denied_query_never_runs(fake: FakeBigQuery) -> None:
    fake.bytes_estimate = 20 * 1024**3
    result = await over_the_cap(Answering(approved=False))
    assert not result.ok
    assert "was not approved: denied by ULEAD0001" in result.data["error"]
    assert fake.jobs == [] and len(fake.dry_runs) == 1
