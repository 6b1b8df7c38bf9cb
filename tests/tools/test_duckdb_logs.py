"""The log tools on the embedded DuckDB backend: real queries on the bundled sample data."""

from __future__ import annotations

import asyncio
import os
import time
import tomllib
from pathlib import Path
from typing import Any

import duckdb
import pytest

from config.settings import LogSettings, Settings, TableSpec
from tools.base import Budget, ToolError, ToolRegistry
from tools.logs import TOOL_NAMES, register
from tools.logs.duckdb_backend import DuckDBBackend
from tools.logs.runbooks import parse_runbook
from tools.logs.tools import LogDeps

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"
FLOWS = "`socbot-sample.logs.vpc_flow_logs`"
ALERT_TIME = "TIMESTAMP '2025-11-08 05:23:47.891+00'"  # eventTime of leveret-scc.json


def sample_settings(**logs: Any) -> Settings:
    """The shipped config/socbot.toml catalogue, with overrides for the [logs] section."""
    raw = tomllib.loads((ROOT / "config" / "socbot.toml").read_text())["logs"]
    raw.update(logs)
    return Settings(logs=LogSettings(**raw))


def build(**logs: Any) -> ToolRegistry:
    registry = ToolRegistry(result_chars=50_000)
    register(registry, sample_settings(**logs))
    return registry


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    return build()


def backend(registry: ToolRegistry) -> DuckDBBackend:
    deps = registry.tools["query_logs"].deps
    assert isinstance(deps, LogDeps) and isinstance(deps.backend, DuckDBBackend)
    return deps.backend


async def warm(registry: ToolRegistry) -> set[int]:
    """A ready worker (start-up is not part of a query's limit); the live worker pids."""
    assert (await call(registry, "query_logs", sql="SELECT 1"))["rows"] == [[1]]
    return set(backend(registry).pool.pids())


async def gone(pids: set[int], within: float = 10.0) -> bool:
    """Whether every process in ``pids`` has exited (and been reaped) within ``within``
    (a loose bound). The process table is the only place that shows it: polled."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(_alive(pid) for pid in pids):
            return True
        await asyncio.sleep(0.02)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def call(registry: ToolRegistry, tool: str, **args: Any) -> dict[str, Any]:
    result = await registry.dispatch(
        tool, args, allowed=registry.names(), investigation_id="inv-test", budget=Budget()
    )
    return result.data


def direct(sql: str) -> list[tuple[Any, ...]]:
    """Ground truth straight from the Parquet files, without socbot in between."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con.execute(sql.replace("{data}", str(DATA))).fetchall()


def test_register_adds_the_five_tools(registry: ToolRegistry) -> None:
    assert set(TOOL_NAMES) <= set(registry.names())
    decl = {d.name: d for d in registry.declarations(TOOL_NAMES)}
    schema = decl["query_logs"].parameters_json_schema
    assert isinstance(schema, dict)
    assert list(schema["properties"]) == ["sql"]  # ctx and deps never reach the model


async def test_list_tables_describes_the_catalogue(registry: ToolRegistry) -> None:
    data = await call(registry, "list_tables")
    names = {t["name"] for t in data["tables"]}
    assert names == {
        "socbot-sample.logs.gcp_audit_logs",
        "socbot-sample.logs.vpc_flow_logs",
        "socbot-sample.logs.auth_logs",
        "socbot-sample.logs.dns_logs",
    }
    for table in data["tables"]:
        assert table["time_column"] == "event_time"
        assert "SYNTHETIC" in table["description"]


async def test_schema_has_bigquery_types_and_notes(registry: ToolRegistry) -> None:
    data = await call(registry, "get_table_schema", table="`socbot-sample.logs.auth_logs`")
    columns = {c["name"]: c for c in data["columns"]}
    assert columns["event_time"]["type"] == "TIMESTAMP"
    assert columns["mfa"]["type"] == "BOOL"
    assert "NULL on success" in columns["failure_reason"]["description"]
    missing = await call(registry, "get_table_schema", table="other.logs.nope")
    assert "not in the catalogue" in missing["error"]


@pytest.mark.parametrize("table", ["gcp_audit_logs", "vpc_flow_logs", "auth_logs", "dns_logs"])
async def test_counts_match_the_files(registry: ToolRegistry, table: str) -> None:
    data = await call(
        registry, "query_logs", sql=f"SELECT COUNT(*) AS n FROM `socbot-sample.logs.{table}`"
    )
    [(expected,)] = direct(f"SELECT COUNT(*) FROM '{{data}}/{table}.parquet'")
    assert data["rows"] == [[expected]]
    assert data["truncated"] is False


async def test_time_window_finds_the_start_of_the_mining(registry: ToolRegistry) -> None:
    sql = f"""
        SELECT dst_ip, dst_port, MIN(event_time) AS first_seen, COUNT(*) AS flows
        FROM {FLOWS}
        WHERE src_instance = 'web-server-prod-01'
          AND event_time BETWEEN TIMESTAMP_SUB({ALERT_TIME}, INTERVAL 1 HOUR) AND {ALERT_TIME}
          AND dst_port IN (3333, 4444)
        GROUP BY dst_ip, dst_port ORDER BY dst_port"""
    data = await call(registry, "query_logs", sql=sql)
    assert data["columns"] == ["dst_ip", "dst_port", "first_seen", "flows"]
    expected = direct(
        "SELECT dst_ip, dst_port, CAST(MIN(event_time) AS VARCHAR), COUNT(*) "
        "FROM '{data}/vpc_flow_logs.parquet' WHERE src_instance = 'web-server-prod-01' "
        "AND event_time BETWEEN TIMESTAMPTZ '2025-11-08 04:23:47.891+00' "
        "AND TIMESTAMPTZ '2025-11-08 05:23:47.891+00' AND dst_port IN (3333, 4444) "
        "GROUP BY ALL ORDER BY dst_port"
    )
    assert [tuple(r) for r in data["rows"]] == expected
    assert {r[0] for r in data["rows"]} == {"185.220.101.42", "195.123.245.89"}
    assert all(r[2].startswith("2025-11-08 05:15") for r in data["rows"])


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("SAFE_CAST('not a number' AS INT64)", None),
        ("SAFE_CAST('42' AS INT64)", 42),
        (
            "FORMAT_TIMESTAMP('%Y-%m-%d %H:%M', TIMESTAMP_SUB("
            + ALERT_TIME
            + ", INTERVAL 2 HOUR))",
            "2025-11-08 03:23",
        ),
        ("TIMESTAMP_DIFF(" + ALERT_TIME + ", TIMESTAMP '2025-11-08 05:15:40+00', SECOND)", 487),
        ("REGEXP_CONTAINS('stratum+tcp://pool.minexmr.com:4444', r'minexmr\\.com:\\d+')", True),
        ("COUNTIF(x > 1)", 2),
        ("IF(STARTS_WITH('10.128.0.12', '10.'), 'internal', 'external')", "internal"),
    ],
)
async def test_bigquery_functions_are_transpiled(
    registry: ToolRegistry, expr: str, expected: Any
) -> None:
    from_clause = " FROM UNNEST([1, 2, 3]) AS x" if "COUNTIF" in expr else ""
    data = await call(registry, "query_logs", sql=f"SELECT {expr} AS v{from_clause}")
    assert "error" not in data, data
    assert data["rows"] == [[expected]]


@pytest.mark.parametrize(
    "ref",
    [
        "`socbot-sample.logs.auth_logs`",
        "socbot-sample.logs.auth_logs",
        "`socbot-sample`.logs.auth_logs",
        "`socbot-sample`.`logs`.`auth_logs`",
    ],
)
async def test_catalogue_names_map_to_local_views(registry: ToolRegistry, ref: str) -> None:
    sql = (
        f"SELECT auth_logs.user_name, COUNT(*) AS n FROM {ref} "
        "WHERE result = 'SUCCESS' AND NOT mfa AND src_ip = '185.220.101.42' "
        "GROUP BY auth_logs.user_name ORDER BY user_name"
    )
    data = await call(registry, "query_logs", sql=sql)
    assert data["rows"] == [["attacker", 1], ["j.doe@example.com", 1]]


async def test_join_with_aliases_and_cte(registry: ToolRegistry) -> None:
    sql = """
        WITH spray AS (
          SELECT src_ip, COUNTIF(result = 'FAILURE') AS failures
          FROM `socbot-sample.logs.auth_logs` GROUP BY src_ip HAVING failures > 20)
        SELECT a.principal_email, a.method_name
        FROM `socbot-sample.logs.gcp_audit_logs` AS a JOIN spray s ON a.caller_ip = s.src_ip
        WHERE a.method_name = 'SetIamPolicy'"""
    data = await call(registry, "query_logs", sql=sql)
    assert data["rows"] == [["j.doe@example.com", "SetIamPolicy"]]


async def test_row_cap_sets_truncated_and_hints_to_aggregate() -> None:
    capped = build(row_limit=5)
    data = await call(capped, "query_logs", sql=f"SELECT src_ip FROM {FLOWS}")
    assert data["row_count"] == 5 and len(data["rows"]) == 5
    assert data["truncated"] is True
    assert "aggregate" in data["hint"]
    exact = await call(capped, "query_logs", sql=f"SELECT src_ip FROM {FLOWS} LIMIT 5")
    assert exact["truncated"] is False and "hint" not in exact


HEAVY = f"SELECT COUNT(*) FROM {FLOWS} a, {FLOWS} b, {FLOWS} c WHERE a.bytes_sent + b.bytes_sent > c.bytes_sent"  # noqa: E501


async def test_timeout_interrupts_the_query_and_the_store_keeps_working() -> None:
    slow = build(query_timeout_s=0.2)
    assert (await call(slow, "query_logs", sql="SELECT 1"))["rows"] == [[1]]  # worker started
    started = time.monotonic()
    data = await call(slow, "query_logs", sql=HEAVY)
    assert "timed out after 0.2s" in data["error"]
    assert time.monotonic() - started < 10  # HEAVY would run for minutes: a loose bound
    after = await call(slow, "query_logs", sql=f"SELECT COUNT(*) FROM {FLOWS}")
    assert after["rows"][0][0] > 0


async def test_cancellation_interrupts_the_query() -> None:
    """A Slack "stop" or Ctrl-C cancels the task: the worker running the query is killed,
    not left computing (a cancelled task alone would return just as fast)."""
    registry = build(query_timeout_s=30, query_workers=1)
    try:
        (running,) = await warm(registry)
        task = asyncio.create_task(call(registry, "query_logs", sql=HEAVY))
        await asyncio.sleep(0.1)  # sent to the worker (a cancel before that is quick too)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < 10  # not the 30 s timeout: a loose bound
        assert running not in backend(registry).pool.pids()
        assert await gone({running})
        assert (await call(registry, "query_logs", sql="SELECT 2"))["rows"] == [[2]]
    finally:
        backend(registry).close()


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("DROP TABLE `socbot-sample.logs.auth_logs`", "only read-only queries"),
        ("SELECT * FROM `/etc/passwd`", "not in the catalogue"),
        ("SELECT 1; SELECT 2", "exactly one statement"),
        (f"SELECT * FROM {FLOWS} LIMIT 10 OFFSET 10", "OFFSET paging"),
        ("SELECT no_such_column FROM `socbot-sample.logs.auth_logs`", "query failed"),
    ],
)
async def test_rejections_and_errors_reach_the_model_as_data(
    registry: ToolRegistry, sql: str, reason: str
) -> None:
    result = await registry.dispatch(
        "query_logs", {"sql": sql}, allowed=["query_logs"], investigation_id="i", budget=Budget()
    )
    assert result.ok is False
    assert reason in result.data["error"]


async def test_errors_name_catalogue_tables_not_local_views(registry: ToolRegistry) -> None:
    data = await call(registry, "query_logs", sql="SELECT nope FROM `socbot-sample.logs.dns_logs`")
    assert "socbot_sample" not in data["error"]


async def test_sandbox_blocks_file_access_even_without_the_guard(tmp_path: Path) -> None:
    backend = DuckDBBackend(
        [TableSpec(name="p.d.t", description="x", path=str(DATA / "dns_logs.parquet"))],
        row_limit=10,
        timeout_s=5,
        workers=1,
    )
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    try:  # raw DuckDB SQL straight to the worker process: the guard is not involved
        with pytest.raises(ToolError, match="disabled by configuration"):
            await backend.execute(f"SELECT * FROM read_csv('{secret}')")
        with pytest.raises(ToolError, match="lock"):
            await backend.execute("SET enable_external_access = true")
        rows = (await backend.execute('SELECT COUNT(*) FROM "p_d_t"'))["rows"]
        assert rows[0][0] > 0
    finally:
        backend.close()


async def test_runbooks_are_listed_and_run(registry: ToolRegistry) -> None:
    listed = await call(registry, "list_runbooks")
    books = {b["name"]: b for b in listed["runbooks"]}
    assert set(books) == {
        "ip_activity",
        "instance_egress",
        "login_failures_then_success",
        "sensitive_admin_changes",
    }
    assert set(books["instance_egress"]["params"]) == {"instance", "start", "end"}
    window = {"start": "2025-11-08T00:00:00Z", "end": "2025-11-08T06:00:00Z"}
    data = await call(
        registry,
        "run_runbook",
        name="instance_egress",
        params={"instance": "web-server-prod-01", **window},
    )
    assert data["runbook"] == "instance_egress"
    pools = {(r[0], r[1]) for r in data["rows"]}
    assert {("195.123.245.89", 4444), ("185.220.101.42", 3333), ("198.51.100.77", 80)} <= pools
    spray = await call(
        registry,
        "run_runbook",
        name="login_failures_then_success",
        params={"start": "2025-11-07T00:00:00Z", "end": "2025-11-08T06:00:00Z"},
    )
    row = dict(zip(spray["columns"], spray["rows"][0], strict=True))
    assert row["src_ip"] == "185.220.101.42" and row["success_without_mfa"] is True
    assert "j.doe@example.com" in row["succeeded_as"]


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"name": "nope"}, "no runbook named 'nope'"),
        ({"name": "instance_egress", "params": {"instance": "x"}}, "missing ['end', 'start']"),
        (
            {"name": "login_failures_then_success", "params": {"start": 5, "end": True}},
            "must be TIMESTAMP (ISO 8601, e.g. 2025-11-08T05:00:00Z), got '5'",
        ),
        (
            {
                "name": "login_failures_then_success",
                "params": {"start": "yesterday", "end": "2025-11-08T06:00:00Z"},
            },
            "must be TIMESTAMP",
        ),
        (
            {
                "name": "login_failures_then_success",
                "params": {"start": "2025-11-07", "end": "2025-11-08", "extra": "1"},
            },
            "unknown ['extra']",
        ),
    ],
)
async def test_runbook_mistakes_come_back_as_errors(
    registry: ToolRegistry, args: dict[str, Any], reason: str
) -> None:
    data = await call(registry, "run_runbook", **args)
    assert reason in data["error"]


def test_runbook_headers_are_parsed() -> None:
    book = parse_runbook(
        "demo",
        "-- title: Demo\n-- description: line one\n-- description: line two\n"
        "-- param: n INT64 how many\n-- param: since timestamp start\n"
        "SELECT @n AS n -- trailing comment stays\n;",
    )
    assert book.title == "Demo" and book.description == "line one line two"
    assert [(p.name, p.type) for p in book.params] == [("n", "INT64"), ("since", "TIMESTAMP")]
    assert book.sql == "SELECT @n AS n -- trailing comment stays"
    assert book.bind({"n": "3", "since": "2025-11-08T05:00:00Z"})["n"].value == 3
    with pytest.raises(ValueError, match="no '-- title:'"):
        parse_runbook("bad", "SELECT 1")


def test_broken_runbooks_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "ok.sql").write_text("-- title: ok\nSELECT 1")
    (tmp_path / "outside.sql").write_text("-- title: x\nSELECT * FROM `evil.d.t`")
    (tmp_path / "untitled.sql").write_text("SELECT 1")
    registry = build(runbooks_dir=str(tmp_path))
    deps = registry.tools["list_runbooks"].deps
    assert list(deps.runbooks) == ["ok"]


def test_tools_are_disabled_with_a_reason_when_unconfigured(tmp_path: Path) -> None:
    empty = ToolRegistry()
    register(empty, Settings(logs=LogSettings(tables=[])))
    assert empty.names() == [] and "no log tables configured" in empty.disabled["query_logs"]
    nodata = ToolRegistry()
    spec = TableSpec(name="p.d.t", description="x", path=str(tmp_path / "none*.parquet"))
    register(nodata, Settings(logs=LogSettings(tables=[spec])))
    assert "no local data" in nodata.disabled["list_tables"]
    nobq = ToolRegistry()
    register(nobq, Settings(logs=LogSettings(backend="bigquery", tables=[spec])))
    assert "bigquery_project is not set" in nobq.disabled["run_runbook"]


async def test_parallel_steps_query_concurrently(registry: ToolRegistry) -> None:
    tables = ["gcp_audit_logs", "vpc_flow_logs", "auth_logs", "dns_logs"]
    results = await asyncio.gather(
        *(
            call(registry, "query_logs", sql=f"SELECT COUNT(*) FROM `socbot-sample.logs.{t}`")
            for t in tables
        )
    )
    counts = [r["rows"][0][0] for r in results]
    assert counts == [direct(f"SELECT COUNT(*) FROM '{{data}}/{t}.parquet'")[0][0] for t in tables]


async def test_untranslatable_bigquery_is_explained(registry: ToolRegistry) -> None:
    sql = (
        "SELECT ARRAY_AGG(DISTINCT user_name IGNORE NULLS ORDER BY user_name LIMIT 3) AS u "
        "FROM `socbot-sample.logs.auth_logs`"
    )
    data = await call(registry, "query_logs", sql=sql)
    assert "cannot translate this query for the local log store" in data["error"]
    assert "LIMIT inside ARRAY_AGG" in data["error"]
