"""The SQL guard: table of known cases plus hypothesis properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.base import ToolError
from tools.sql_guard import SqlRejected, check_sql

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
    "(SELECT 1)",
    "SELECT 1;",
]

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
    ("SELECT ML.STANDARD_SCALER(x) OVER () FROM UNNEST([1]) AS x", "ML.*"),
    ("SELECT AI.GENERATE('hi')", "AI.*"),
    ("SELECT * FROM `region-us`.INFORMATION_SCHEMA.JOBS", "INFORMATION_SCHEMA"),
    ("SELECT * FROM `socbot-sample.logs.INFORMATION_SCHEMA.TABLES`", "INFORMATION_SCHEMA"),
    ("SELECT * FROM `other-project.logs.vpc_flow_logs`", "not in the catalogue"),
    ("SELECT * FROM logs.vpc_flow_logs", "not in the catalogue"),
    ("SELECT * FROM `socbot-sample.logs.auth_*`", "not in the catalogue"),
    ("SELECT * FROM `socbot-sample.logs.vpc_flow_logs` LIMIT 10 OFFSET 10", "OFFSET paging"),
    ("SELECT 1 INTO x", "INTO"),
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
