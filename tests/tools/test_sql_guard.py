"""The SQL guard: table of known cases plus hypothesis properties."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from tools.base import ToolError
from tools.sql._functions import BIGQUERY_FUNCTIONS
from tools.sql.guard import SqlRejected, check_sql

ROOT = Path(__file__).resolve().parents[2]
TABLES = {
    "socbot-sample.logs.vpc_flow_logs",
    "socbot-sample.logs.auth_logs",
    "socbot-sample.logs.gcp_audit_logs",
}
COLUMNS = ["event_time", "src_ip", "dst_ip", "bytes_sent", "user_name", "result"]

ALLOWED = [
    "SELECT 1",
    "SELECT COUNT(*) FROM `socbot-sample.logs.vpc_flow_logs`",
    "SELECT * FROM socbot-sample.logs.vpc_flow_logs WHERE dst_port = 4444 LIMIT 10",
    "SELECT f.src_ip FROM `socbot-sample`.logs.vpc_flow_logs AS f",
    "SELECT vpc_flow_logs.src_ip FROM `socbot-sample.logs.vpc_flow_logs`",
    "WITH a AS (SELECT user_name FROM `socbot-sample.logs.auth_logs`) SELECT * FROM a",
    "SELECT src_ip FROM `socbot-sample.logs.vpc_flow_logs` "
    "UNION ALL SELECT src_ip FROM `socbot-sample.logs.auth_logs`",
    "SELECT x FROM UNNEST([1, 2, 3]) AS x",
    "SELECT arr[OFFSET(0)] FROM (SELECT [1, 2] AS arr)",
    "SELECT TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 DAY), SAFE_CAST('1' AS INT64)",
    "SELECT NET.HOST('https://a.b/c'), SAFE.SUBSTR('abc', 2), NET.IP_FROM_STRING('10.0.0.1')",
    "SELECT STRPOS(user_name, '@'), REGEXP_CONTAINS(user_name, r'^adm'), DATE '2025-01-01', "
    "CURRENT_TIMESTAMP, [1, 2][OFFSET(0)], STRUCT(1 AS a), JSON_VALUE('{}', '$.a') "
    "FROM `socbot-sample.logs.auth_logs`",
    "SELECT user_name, ROW_NUMBER() OVER (PARTITION BY src_ip ORDER BY event_time) AS n "
    "FROM `socbot-sample.logs.auth_logs` QUALIFY n = 1",
    "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
    "WITH a AS (SELECT 1 AS x) SELECT (SELECT COUNT(*) FROM a), b.x FROM a AS b",
    "(SELECT 1)",
    "SELECT 1;",
]

RUNBOOKS = [p.read_text() for p in sorted((ROOT / "examples" / "runbooks").glob("*.sql"))]

REJECTED = [
    ("", "empty query"),
    ("SELECT 1; SELECT 2", "exactly one statement"),
    ("EXECUTE IMMEDIATE 'SELECT 1'", "command 'EXECUTE'"),
    ("CALL `p.d.proc`()", "command 'CALL'"),
    ("DECLARE x INT64", "DECLARE"),
    ("DECLARE x INT64 DEFAULT 1; SELECT x", "exactly one statement"),
    ("BEGIN SELECT 1; END", "exactly one statement"),
    ("SET x = 1", "SET"),
    ("INSERT INTO `socbot-sample.logs.auth_logs` (user_name) VALUES ('x')", "INSERT"),
    ("UPDATE `socbot-sample.logs.auth_logs` SET result = 'x' WHERE TRUE", "UPDATE"),
    ("DELETE FROM `socbot-sample.logs.auth_logs` WHERE TRUE", "DELETE"),
    ("MERGE `socbot-sample.logs.auth_logs` t USING x s ON TRUE WHEN MATCHED THEN DELETE", "MERGE"),
    ("CREATE TABLE p.d.t AS SELECT 1", "CREATE"),
    ("DROP TABLE `socbot-sample.logs.auth_logs`", "DROP"),
    ("GRANT `roles/bigquery.admin` ON TABLE p.d.t TO 'user:a@b.c'", "GRANT"),
    ("EXPORT DATA OPTIONS(uri='gs://b/*', format='CSV') AS SELECT 1", "EXPORT"),
    ("LOAD DATA INTO p.d.t FROM FILES(format='CSV', uris=['gs://b/x'])", "LOADDATA"),
    ("SELECT * FROM EXTERNAL_QUERY('conn', 'SELECT 1')", "EXTERNAL_QUERY"),
    ("SELECT * FROM ML.PREDICT(MODEL `p.d.m`, (SELECT 1))", "ML.PREDICT"),
    ("SELECT ML.STANDARD_SCALER(x) OVER () FROM UNNEST([1]) AS x", "ML.STANDARD_SCALER"),
    ("SELECT AI.GENERATE('hi')", "AI.GENERATE"),
    ("SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS", "INFORMATION_SCHEMA"),
    ("SELECT * FROM `socbot-sample.logs.INFORMATION_SCHEMA.TABLES`", "INFORMATION_SCHEMA"),
    ("SELECT * FROM `other-project.logs.vpc_flow_logs`", "not in the catalogue"),
    ("SELECT * FROM logs.vpc_flow_logs", "not in the catalogue"),
    ("SELECT * FROM `socbot-sample.logs.auth_*`", "not in the catalogue"),
    ("SELECT * FROM `socbot-sample.logs.vpc_flow_logs` LIMIT 10 OFFSET 10", "OFFSET paging"),
    ("SELECT 1 INTO x", "INTO"),
    # scope: a CTE is visible only where it is defined
    (
        "SELECT * FROM (WITH pg_settings AS (SELECT 1) SELECT * FROM pg_settings) AS a, "
        "pg_settings",
        "'pg_settings' is not in the catalogue",
    ),
    (
        "SELECT 1 FROM `socbot-sample.logs.auth_logs` WHERE EXISTS (WITH q AS (SELECT 1) "
        "SELECT * FROM q) AND EXISTS (SELECT * FROM q)",
        "'q' is not in the catalogue",
    ),
    ("WITH b AS (SELECT * FROM a), a AS (SELECT 1) SELECT * FROM b", "'a' is not in the catalogue"),
    ("WITH a AS (SELECT * FROM a) SELECT * FROM a", "'a' is not in the catalogue"),
    ("SELECT ARRAY(SELECT x FROM hidden) FROM `socbot-sample.logs.auth_logs`", "'hidden'"),
    # table-valued functions, wherever they hide
    ("SELECT * FROM `socbot-sample.logs.auth_logs`, LATERAL (SELECT 1)", "LATERAL"),
    ("SELECT * FROM range(1, 10)", "table-valued function RANGE"),
    ("SELECT * FROM query('SELECT * FROM duckdb_settings()')", "table-valued function QUERY"),
    ("SELECT * FROM read_text('/proc/self/environ')", "table-valued function READ_TEXT"),
    ("SELECT * FROM `socbot-sample.logs.auth_logs` a, duckdb_settings()", "DUCKDB_SETTINGS"),
    ("SELECT * FROM `x`.y.z(1)", "table-valued function x.y.Z"),
    # functions: an allowlist of built-ins, nothing qualified or back-quoted
    ("SELECT current_setting('allowed_paths')", "CURRENT_SETTING is not allowed"),
    ("SELECT `AI.GENERATE`('hi')", "back-quoted function name `AI.GENERATE`"),
    ("SELECT `ML.PREDICT`(1)", "back-quoted function name `ML.PREDICT`"),
    (
        "SELECT attacker.pub.exfil(user_name) FROM `socbot-sample.logs.auth_logs`",
        "attacker.pub.exfil is not allowed",
    ),
    ("SELECT `socbot-sample`.logs.COUNT(1)", "logs.COUNT is not allowed"),
    ("SELECT SESSION_USER()", "SESSION_USER is not allowed"),
    ("SELECT CURRENT_USER", "CURRENT_USER is not allowed"),
    ("SELECT KEYS.NEW_KEYSET('AEAD_AES_GCM_256')", "KEYS.NEW_KEYSET is not allowed"),
    ("SELECT getenv('HOME')", "GETENV is not allowed"),
    ("SELECT HOST('http://a.b/c')", "HOST is not allowed"),
    ("SELEC 1 FROM", "could not parse"),
    ("SELECT " + "x," * 20_000 + "1", "too long"),
]


@pytest.mark.parametrize("sql", ALLOWED)
def test_allowed_queries_pass(sql: str) -> None:
    checked = check_sql(sql, TABLES)
    assert checked.tables <= TABLES


def test_referenced_tables_are_reported() -> None:
    checked = check_sql(
        "SELECT a.user_name FROM `socbot-sample.logs.auth_logs` a "
        "JOIN `socbot-sample.logs.vpc_flow_logs` f ON a.src_ip = f.src_ip",
        TABLES,
    )
    assert checked.tables == {"socbot-sample.logs.auth_logs", "socbot-sample.logs.vpc_flow_logs"}


@pytest.mark.parametrize("sql", RUNBOOKS)
def test_shipped_runbooks_pass(sql: str) -> None:
    assert check_sql(sql, TABLES).tables <= TABLES


@pytest.mark.parametrize(("sql", "reason"), REJECTED)
def test_rejected_queries_say_why(sql: str, reason: str) -> None:
    with pytest.raises(SqlRejected) as info:
        check_sql(sql, TABLES)
    assert reason in str(info.value)
    assert isinstance(info.value, ToolError)  # reaches the model as data


# --- properties -------------------------------------------------------------------------

table_refs = st.sampled_from(sorted(TABLES)).flatmap(
    lambda t: st.sampled_from([f"`{t}`", t, "`{}`.{}.{}".format(*t.split("."))])
)
columns = st.sampled_from(COLUMNS)
predicates = st.builds(
    lambda c, op, v: f"{c} {op} {v}",
    columns,
    st.sampled_from(["=", "!=", ">", "<", ">="]),
    st.one_of(st.integers(-5, 10**6).map(str), st.sampled_from(["'185.220.101.42'", "NULL"])),
)


@st.composite
def selects(draw: st.DrawFn) -> str:
    cols = draw(st.lists(columns, min_size=1, max_size=4, unique=True))
    sql = f"SELECT {', '.join(cols)} FROM {draw(table_refs)}"
    where = draw(st.lists(predicates, max_size=3))
    if where:
        sql += " WHERE " + " AND ".join(where)
    if draw(st.booleans()):
        sql = f"SELECT {cols[0]}, COUNT(*) AS n FROM ({sql}) GROUP BY {cols[0]} ORDER BY n DESC"
    if draw(st.booleans()):
        sql = f"WITH base AS ({sql}) SELECT * FROM base"
    if draw(st.booleans()):
        sql += f" LIMIT {draw(st.integers(1, 1000))}"
    return sql


@settings(deadline=None)
@given(selects(), st.lists(selects(), max_size=2))
def test_any_select_over_catalogued_tables_passes(first: str, more: list[str]) -> None:
    sql = " UNION ALL ".join(f"({s})" for s in [first, *more]) if more else first
    assert check_sql(sql, TABLES).tables <= TABLES


FORBIDDEN_STATEMENTS = [
    "EXECUTE IMMEDIATE 'DROP TABLE x'",
    "CALL `p.d.proc`()",
    "DECLARE v STRING",
    "INSERT INTO `socbot-sample.logs.auth_logs` (user_name) VALUES ('x')",
    "DELETE FROM `socbot-sample.logs.auth_logs` WHERE TRUE",
    "DROP TABLE `socbot-sample.logs.auth_logs`",
    "CREATE TEMP FUNCTION f() AS (1)",
    "EXPORT DATA OPTIONS(uri='gs://b/*', format='CSV') AS SELECT 1",
    "GRANT `roles/owner` ON SCHEMA logs TO 'user:a@b.c'",
]
FORBIDDEN_FRAGMENTS = [
    "(SELECT 1 FROM EXTERNAL_QUERY('c', 'SELECT 1'))",
    "(SELECT 1 FROM `region-us`.INFORMATION_SCHEMA.JOBS)",
    "(SELECT 1 FROM `evil-project.d.t`)",
    "ML.PREDICT_X(1)",
    "AI.GENERATE('x')",
]


@settings(deadline=None)
@given(selects(), st.sampled_from(FORBIDDEN_STATEMENTS), st.booleans())
def test_any_forbidden_statement_fails(select: str, statement: str, before: bool) -> None:
    for sql in (statement, f"{statement}; {select}" if before else f"{select}; {statement}"):
        with pytest.raises(SqlRejected):
            check_sql(sql, TABLES)


@settings(deadline=None)
@given(selects(), st.sampled_from(FORBIDDEN_FRAGMENTS))
def test_any_forbidden_construct_inside_a_select_fails(select: str, fragment: str) -> None:
    with pytest.raises(SqlRejected):
        check_sql(f"SELECT {fragment} AS x, q.* FROM ({select}) AS q", TABLES)


identifiers = st.from_regex(r"[a-z][a-z0-9_\-]{0,12}", fullmatch=True)


@settings(deadline=None)
@given(identifiers, identifiers, identifiers)
def test_uncatalogued_tables_fail(project: str, dataset: str, table: str) -> None:
    name = f"{project}.{dataset}.{table}"
    if name in TABLES:
        return
    with pytest.raises(SqlRejected):
        check_sql(f"SELECT * FROM `{name}`", TABLES)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_garbage_is_rejected_never_crashes(text: str) -> None:
    try:
        checked = check_sql(text, TABLES)
    except SqlRejected:
        return
    assert checked.tables <= TABLES


@settings(deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "SELECT",
                "FROM",
                "(",
                ")",
                ";",
                "`",
                "'",
                "--",
                "@",
                "x",
                "ML.",
                "WITH",
                "AS",
                "UNION",
                "ALL",
                ",",
                "*",
                "INTO",
            ]
        ),
        max_size=25,
    )
)
def test_token_soup_is_rejected_never_crashes(tokens: list[str]) -> None:
    try:
        checked = check_sql(" ".join(tokens), TABLES)
    except SqlRejected:
        return
    assert checked.tables <= TABLES


function_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)


@settings(deadline=None)
@given(function_names, st.sampled_from(["", "1", "user_name", "'x', 2"]))
def test_functions_not_on_the_allowlist_are_refused(name: str, args: str) -> None:
    sql = f"SELECT {name}({args}) FROM `socbot-sample.logs.auth_logs`"
    try:
        checked = check_sql(sql, TABLES)
    except SqlRejected:
        return
    called = {
        str(f.meta.get("bigquery_name") or f.name).upper() for f in checked.tree.find_all(exp.Func)
    }
    # only a listed built-in may pass (a keyword such as AS parses as no call at all)
    assert name.upper() in BIGQUERY_FUNCTIONS or name.upper() not in called


plain_identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)  # no "--" comment


@settings(deadline=None)
@given(
    plain_identifiers, plain_identifiers, st.sampled_from(sorted(BIGQUERY_FUNCTIONS - {"NET.HOST"}))
)
def test_qualified_or_quoted_calls_are_refused(project: str, dataset: str, name: str) -> None:
    # (`ABS`(1), one back-quoted part, can only name the built-in itself: it may pass)
    for call in (f"{project}.{dataset}.{name}(1)", f"`{project}.{dataset}.{name}`(1)",
                 f"`{dataset}.{name}`(1)", f"{dataset}.{name}(1)"):  # fmt: skip
        with pytest.raises(SqlRejected):
            check_sql(f"SELECT {call}", TABLES)
