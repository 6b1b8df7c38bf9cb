"""Hostile SQL against the real DuckDB log store: every gate closes.

Each case is a query a prompt-injected model could send. It must be refused by the guard
(with a reason naming what is wrong), or stopped: killed within its time limit plus one
second, or refused once it reaches its memory cap, or cut at the byte cap. Limits are
small here so the suite stays fast; ``bench/bench_hostile.py`` measures the same classes
at production limits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from tests.tools.test_duckdb_logs import backend, build, call, gone, warm
from tools.base import Budget, ToolRegistry
from tools.sql._functions import BIGQUERY_FUNCTIONS, REFUSAL_HINT, function_problem
from tools.sql.guard import TABLE_HINT, SqlRejected, check_sql

FLOWS = "`socbot-sample.logs.vpc_flow_logs`"
AUTH = "`socbot-sample.logs.auth_logs`"
TABLES = {"socbot-sample.logs.vpc_flow_logs", "socbot-sample.logs.auth_logs"}
LIMIT_S = 0.4
KILLED_S = 3.0  # a killed query answers this soon after its limit (loose: loaded machines);
# unkilled, every bomb below runs for 10 s or more
MEMORY_MB = 128

# --- the guard: refused before any backend sees the query -----------------------------
# Each case names the reason it must be refused with: the check that fires first and the
# name it reports (the hint after it is the same for every case of that check).


def TVF(name: str) -> str:
    return f"table-valued function {name} is not allowed: {TABLE_HINT}"


def FN(name: str) -> str:
    return f"function {name} is not allowed: {REFUSAL_HINT}"


def NAMESPACED(name: str) -> str:
    return (
        f"function {name} is not allowed (a namespaced, user-defined or persistent function): "
        f"{REFUSAL_HINT}"
    )


def QUOTED(name: str) -> str:
    return f"back-quoted function name `{name}` is not allowed: {REFUSAL_HINT}"


def NODE(name: str) -> str:
    hint = TABLE_HINT if name == "LATERAL" else REFUSAL_HINT
    return f"{name} is not allowed: {hint}"


def UNCATALOGUED(name: str) -> str:
    return (
        f"table {name!r} is not in the catalogue (nor a CTE visible at that point of the "
        f"query); use the fully qualified name of one of: {', '.join(sorted(TABLES))}"
    )


def INFORMATION_SCHEMA(name: str) -> str:
    return (
        f"INFORMATION_SCHEMA is not queryable ({name!r}); use list_tables and "
        "get_table_schema instead"
    )


UNPARSABLE = "could not parse the query as BigQuery SQL: "  # then sqlglot's own words

TABLE_FUNCTIONS = [
    (f"SELECT * FROM {AUTH}, LATERAL (SELECT * FROM duckdb_settings())", NODE("LATERAL")),
    (f"SELECT * FROM {AUTH} AS a, LATERAL (SELECT a.user_name)", NODE("LATERAL")),
    ("SELECT * FROM range(1000000000)", TVF("RANGE")),
    ("SELECT * FROM generate_series(1, 10)", TVF("GENERATE_SERIES")),
    ("SELECT * FROM query('SELECT current_setting(\"allowed_paths\")')", TVF("QUERY")),
    ("SELECT * FROM query_table('socbot_sample_logs_auth_logs')", TVF("QUERY_TABLE")),
    ("SELECT * FROM read_text('/proc/self/environ')", TVF("READ_TEXT")),
    ("SELECT * FROM read_blob('/etc/passwd')", TVF("READ_BLOB")),
    ("SELECT * FROM read_csv('/etc/passwd')", TVF("READ_CSV")),
    ("SELECT * FROM read_parquet('examples/data/auth_logs.parquet')", TVF("READ_PARQUET")),
    ("SELECT * FROM glob('/*')", UNPARSABLE),  # GLOB is an operator to sqlglot
    ("SELECT * FROM glob('/*', 'x')", TVF("Glob")),
    ("SELECT * FROM duckdb_settings()", TVF("DUCKDB_SETTINGS")),
    ("SELECT * FROM duckdb_extensions()", TVF("DUCKDB_EXTENSIONS")),
    ("SELECT * FROM duckdb_secrets()", TVF("DUCKDB_SECRETS")),
    ("SELECT * FROM pragma_database_list()", TVF("PRAGMA_DATABASE_LIST")),
    ("SELECT * FROM sql_auto_complete('SEL')", TVF("SQL_AUTO_COMPLETE")),
    ("SELECT 1 FROM (SELECT * FROM duckdb_tables())", TVF("DUCKDB_TABLES")),
    (f"SELECT (SELECT COUNT(*) FROM duckdb_views()) FROM {AUTH}", TVF("DUCKDB_VIEWS")),
    (
        "SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS",
        INFORMATION_SCHEMA("region-us.INFORMATION_SCHEMA.JOBS"),
    ),
    ("SELECT * FROM information_schema.tables", INFORMATION_SCHEMA("information_schema.tables")),
    ("SELECT * FROM pg_catalog.pg_settings", UNCATALOGUED("pg_catalog.pg_settings")),
    (
        "SELECT * FROM socbot_sample_logs_auth_logs",
        UNCATALOGUED("socbot_sample_logs_auth_logs"),
    ),  # the local view, by its DuckDB name
    ("SELECT * FROM APPENDS(TABLE `socbot-sample.logs.auth_logs`, NULL, NULL)", UNPARSABLE),
    ("SELECT * FROM EXTERNAL_QUERY('c', 'SELECT 1')", TVF("EXTERNAL_QUERY")),
    ("SELECT * FROM ML.PREDICT(MODEL `p.d.m`, (SELECT 1))", TVF("ML.PREDICT")),
    ("SELECT * FROM VECTOR_SEARCH(TABLE `p.d.t`, 'c', (SELECT 1))", TVF("VECTOR_SEARCH")),
    (
        "SELECT * FROM GAP_FILL(TABLE `p.d.t`, ts_column => 't', bucket_width => INTERVAL 1 DAY)",
        TVF("GAP_FILL"),
    ),
]
SCOPES = [
    (
        "SELECT * FROM (WITH pg_settings AS (SELECT 1) SELECT * FROM pg_settings) AS a, "
        "pg_settings",
        UNCATALOGUED("pg_settings"),
    ),
    (
        "WITH x AS (SELECT 1) SELECT * FROM (WITH duckdb_settings AS (SELECT 1) SELECT 1), "
        "duckdb_settings",
        UNCATALOGUED("duckdb_settings"),
    ),
    (
        f"SELECT * FROM {AUTH} WHERE EXISTS (WITH s AS (SELECT 1) SELECT 1) AND user_name IN "
        "(SELECT name FROM s)",
        UNCATALOGUED("s"),
    ),
    ("WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a", UNCATALOGUED("b")),
    ("WITH secrets AS (SELECT * FROM secrets) SELECT * FROM secrets", UNCATALOGUED("secrets")),
    (
        f"SELECT ARRAY(SELECT name FROM duckdb_settings) FROM {AUTH}",
        UNCATALOGUED("duckdb_settings"),
    ),
    (
        f"SELECT * FROM {AUTH} WHERE user_name IN (SELECT value FROM `other-proj.hr.salaries`)",
        UNCATALOGUED("other-proj.hr.salaries"),
    ),
]
FUNCTIONS = [
    ("SELECT current_setting('allowed_paths')", FN("CURRENT_SETTING")),
    ("SELECT getenv('GEMINI_API_KEY')", FN("GETENV")),
    ("SELECT getvariable('x')", FN("GETVARIABLE")),
    ("SELECT version()", FN("VERSION")),
    ("SELECT current_database()", FN("CURRENT_DATABASE")),
    ("SELECT current_schema()", FN("CURRENT_SCHEMA")),
    ("SELECT CURRENT_USER", NODE("CURRENT_USER")),
    ("SELECT SESSION_USER()", FN("SESSION_USER")),
    ("SELECT pg_read_file('/etc/passwd')", FN("PG_READ_FILE")),
    ("SELECT file_exists('/etc/passwd')", FN("FILE_EXISTS")),
    ("SELECT to_json(duckdb_settings())", FN("DUCKDB_SETTINGS")),
    ("SELECT `AI.GENERATE`('summarise', connection_id => 'us.c')", QUOTED("AI.GENERATE")),
    ("SELECT `ML.PREDICT`(1)", QUOTED("ML.PREDICT")),
    ("SELECT AI.GENERATE_BOOL('x')", NAMESPACED("AI.GENERATE_BOOL")),
    ("SELECT ML.DISTANCE([1.0], [2.0])", NAMESPACED("ML.DISTANCE")),
    (f"SELECT attacker.pub.exfil(user_name) FROM {AUTH}", NAMESPACED("attacker.pub.exfil")),
    (f"SELECT `attacker.pub.exfil`(user_name) FROM {AUTH}", QUOTED("attacker.pub.exfil")),
    (f"SELECT `attacker`.pub.exfil(user_name) FROM {AUTH}", NAMESPACED("`attacker`.pub.exfil")),
    ("SELECT `socbot-sample`.logs.normalise('x')", NAMESPACED("`socbot-sample`.logs.normalise")),
    ("SELECT logs.COUNT(1)", NAMESPACED("logs.COUNT")),  # a dataset routine named like a built-in
    ("SELECT KEYS.NEW_KEYSET('AEAD_AES_GCM_256')", NAMESPACED("KEYS.NEW_KEYSET")),
    ("SELECT AEAD.ENCRYPT(k, 'x', 'a')", NAMESPACED("AEAD.ENCRYPT")),
    ("SELECT HLL_COUNT.MERGE(x) FROM UNNEST([1]) AS x", NAMESPACED("HLL_COUNT.MERGE")),
    ("SELECT ST_GEOGPOINT(1, 2)", FN("ST_GEOGPOINT")),
    ("SELECT ERROR('boom')", FN("ERROR")),
    ("SELECT json_serialize_sql('SELECT 1')", FN("JSON_SERIALIZE_SQL")),
    ("SELECT list_transform([1], x -> current_setting('threads'))", FN("LIST_TRANSFORM")),
]


@pytest.mark.parametrize(("sql", "reason"), TABLE_FUNCTIONS + SCOPES + FUNCTIONS)
def test_the_guard_refuses_and_says_what(sql: str, reason: str) -> None:
    with pytest.raises(SqlRejected) as info:
        check_sql(sql, TABLES)
    if reason == UNPARSABLE:
        assert str(info.value).startswith(reason)
    else:
        assert str(info.value) == reason


# DuckDB's file and catalogue readers: each is refused by the table-function check in FROM,
# and, on its own, by the function allowlist wherever it is called (two gates, not one).
FILE_READERS = [
    "read_csv",
    "read_csv_auto",
    "read_parquet",
    "read_json",
    "read_json_auto",
    "read_text",
    "read_blob",
    "parquet_scan",
    "sniff_csv",
    "duckdb_settings",
]


@pytest.mark.parametrize("name", FILE_READERS)
def test_file_readers_are_refused_by_both_gates(name: str) -> None:
    upper = name.upper()
    with pytest.raises(SqlRejected) as table_check:
        check_sql(f"SELECT * FROM {name}('{AUTH.strip('`')}')", TABLES)
    assert str(table_check.value) == TVF(upper)
    with pytest.raises(SqlRejected) as allowlist:
        check_sql(f"SELECT * FROM {AUTH} WHERE user_name IN ({name}('/etc/passwd'))", TABLES)
    assert str(allowlist.value) == FN(upper)
    # the allowlist alone, on the very call the table check refused first
    tree = parse_one(f"SELECT * FROM {name}('/etc/passwd')", dialect="bigquery")
    (table,) = tree.find_all(exp.Table)
    assert isinstance(table.this, exp.Func)
    assert function_problem(table.this) == FN(upper)


async def test_glob_is_only_the_pattern_operator(limited: ToolRegistry) -> None:
    """DuckDB's one-argument ``glob`` lists files; sqlglot reads ``glob`` as SQLite's
    two-argument ``glob(pattern, text)``, the GLOB operator: the lister never parses, and
    what passes matches text in DuckDB, it lists nothing."""
    with pytest.raises(SqlRejected) as info:
        check_sql("SELECT glob('/*')", TABLES)
    assert str(info.value).startswith(UNPARSABLE)
    data = await call(limited, "query_logs", sql="SELECT glob('j*', 'j.doe'), glob('/*', 'x')")
    assert data["rows"] == [[True, False]]


def test_names_passed_verbatim_to_duckdb_are_plain_functions_there() -> None:
    """Allowlisted names sqlglot does not know reach DuckDB as written: none may be a
    table, settings or file function there."""
    con = duckdb.connect()
    kinds: dict[str, set[str]] = {}
    for name, kind in con.execute(
        "SELECT function_name, function_type FROM duckdb_functions()"
    ).fetchall():
        kinds.setdefault(str(name).upper(), set()).add(str(kind))
    verbatim = [name for name in BIGQUERY_FUNCTIONS if _reaches_duckdb_verbatim(name)]
    assert verbatim  # the check below looks at something
    for name in verbatim:
        assert kinds.get(name, set()) <= {"scalar", "aggregate", "macro"}, name
        assert not name.startswith(("DUCKDB_", "PRAGMA_", "READ_", "CURRENT_SETTING")), name


def _reaches_duckdb_verbatim(name: str) -> bool:
    if "." in name:
        return False
    try:
        tree = parse_one(f"SELECT {name}(1)", dialect="bigquery")
    except (
        SqlglotError,
        TypeError,
        ValueError,
        IndexError,
        AttributeError,
    ):  # sqlglot knows its arguments
        return False
    return any(isinstance(f, exp.Anonymous) for f in tree.find_all(exp.Func))


# --- resources: stopped within the limit, whatever the query computes -----------------

TIME_BOMBS = [
    "SELECT EDIT_DISTANCE(REPEAT('a', 100000), REPEAT('b', 100000))",
    f"SELECT COUNT(*) FROM {FLOWS} a, {FLOWS} b, {FLOWS} c",
    "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r",
    f"SELECT COUNT(REGEXP_EXTRACT(CONCAT(a.src_ip, b.dst_ip, REPEAT('x', 1000)), "
    rf"r'(\w+\W*)*z')) FROM {FLOWS} a, {FLOWS} b",
]
MEMORY_BOMBS = [
    "SELECT ARRAY_LENGTH(GENERATE_ARRAY(1, 150000000))",
    "SELECT COUNT(*) FROM UNNEST(GENERATE_ARRAY(1, 1000000000)) AS x",
    f"SELECT STRING_AGG(REPEAT(src_ip, 100000), ',') FROM {FLOWS}",
    f"SELECT ARRAY_AGG(REPEAT(dst_ip, 50000)) FROM {FLOWS}",
]


@pytest.fixture(scope="module")
def limited() -> Iterator[ToolRegistry]:
    registry = build(query_timeout_s=LIMIT_S, query_memory_mb=MEMORY_MB, max_result_bytes=20_000)
    yield registry
    backend(registry).close()


@pytest.mark.parametrize("sql", TIME_BOMBS)
async def test_time_bombs_are_killed_at_the_limit(limited: ToolRegistry, sql: str) -> None:
    before = await warm(limited)
    started = time.monotonic()
    data = await call(limited, "query_logs", sql=sql)
    elapsed = time.monotonic() - started
    assert f"timed out after {LIMIT_S:g}s and was stopped" in data["error"]
    assert elapsed < LIMIT_S + KILLED_S
    killed = before - set(backend(limited).pool.pids())
    assert len(killed) == 1 and await gone(killed)


@pytest.fixture(scope="module")
def capped() -> Iterator[ToolRegistry]:
    """A generous time limit: these queries must be stopped by the memory cap alone."""
    registry = build(query_timeout_s=20, query_memory_mb=MEMORY_MB)
    yield registry
    backend(registry).close()


@pytest.mark.parametrize("sql", MEMORY_BOMBS)
async def test_memory_bombs_hit_the_cap(capped: ToolRegistry, sql: str) -> None:
    await warm(capped)
    data = await call(capped, "query_logs", sql=sql)
    assert f"{MEMORY_MB} MB memory limit" in data["error"]


async def test_wide_rows_are_cut_in_bytes_before_serialisation(limited: ToolRegistry) -> None:
    sql = f"SELECT REPEAT(src_ip, 2000) AS wide, dst_port FROM {FLOWS} LIMIT 150"
    data = await call(limited, "query_logs", sql=sql)
    assert data["truncated"] is True and "20000 bytes" in data["hint"]
    assert 0 < data["row_count"] < 150
    one = await call(limited, "query_logs", sql="SELECT REPEAT('x', 5000000) AS s")
    assert one["row_count"] == 1 and one["truncated"] is True
    assert len(one["rows"][0][0]) < 20_100


async def test_the_step_deadline_stops_a_query_before_its_own_limit() -> None:
    registry = build(query_timeout_s=30, query_memory_mb=MEMORY_MB)
    try:
        before = await warm(registry)
        started = time.monotonic()
        result = await registry.dispatch(
            "query_logs",
            {"sql": TIME_BOMBS[0]},
            allowed=["query_logs"],
            investigation_id="inv-deadline",
            budget=Budget(),
            deadline=time.monotonic() + 0.6,
        )
        assert time.monotonic() - started < 0.6 + KILLED_S  # not the 30 s limit
        assert result.ok is False
        assert "was stopped" in result.data["error"]
        killed = before - set(backend(registry).pool.pids())
        assert len(before) == 1 and killed == before and await gone(killed)
    finally:
        backend(registry).close()


async def test_workers_run_without_the_parents_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-not-a-real-key")
    registry = build(query_workers=1)
    try:
        [pid] = await warm(registry)
        environ = await asyncio.to_thread(Path(f"/proc/{pid}/environ").read_bytes)
        names = {item.split(b"=", 1)[0] for item in environ.split(b"\0") if item}
        assert b"GEMINI_API_KEY" not in names and names <= {
            b"PATH", b"HOME", b"LANG", b"TZ", b"MALLOC_ARENA_MAX"
        }  # fmt: skip
    finally:
        backend(registry).close()
