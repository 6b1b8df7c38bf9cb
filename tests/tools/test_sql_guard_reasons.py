"""The SQL guard's own refusals, word for word: what the model is told to do instead.

The refusal is the model's only guide to a query that passes, so each reason is asserted
exactly, at the boundaries where the guard changes its mind (found by mutation testing:
``scripts/mutation.py``).
"""

from __future__ import annotations

import pytest
import sqlglot

from tools.sql._functions import REFUSAL_HINT
from tools.sql.guard import MAX_SQL_CHARS, SqlRejected, _first_line, check_sql

AUTH = "socbot-sample.logs.auth_logs"
TABLES = {AUTH}


def refusal(sql: str, tables: set[str] = TABLES) -> str:
    with pytest.raises(SqlRejected) as info:
        check_sql(sql, tables)
    return str(info.value)


@pytest.mark.parametrize("sql", ["", "  \n\t"])
def test_an_empty_query_is_refused(sql: str) -> None:
    assert refusal(sql) == "empty query: send one BigQuery Standard SQL SELECT statement"


def test_the_length_limit_is_inclusive() -> None:
    longest = "SELECT 1" + " " * (MAX_SQL_CHARS - len("SELECT 1"))
    assert check_sql(longest, TABLES).sql == longest
    assert refusal(longest + " ") == (
        f"query is too long ({MAX_SQL_CHARS + 1} chars, limit {MAX_SQL_CHARS})"
    )


def test_a_parse_error_quotes_the_first_line_of_sqlglots_own() -> None:
    sql = f"SELECT * FROM `{AUTH}` WHERE ("
    with pytest.raises(sqlglot.errors.ParseError) as parsing:
        sqlglot.parse(sql, dialect="bigquery")
    first = str(parsing.value).strip().splitlines()[0]
    assert first and "\n" in str(parsing.value).strip()  # the rest is left out
    assert refusal(sql) == f"could not parse the query as BigQuery SQL: {first}"


def test_offset_paging_is_refused_with_what_to_do_instead() -> None:
    assert refusal(f"SELECT user_name FROM `{AUTH}` LIMIT 10 OFFSET 10") == (
        "OFFSET paging is not supported: aggregate (COUNT, GROUP BY, MIN/MAX of the time "
        "column) or narrow the WHERE clause / time window instead"
    )


def test_a_cte_beside_a_table_resolves_both() -> None:
    sql = f"WITH a AS (SELECT 1 AS x) SELECT * FROM a, `{AUTH}`"
    assert check_sql(sql, TABLES).tables == {AUTH}
    assert refusal("WITH a AS (SELECT 1 AS x) SELECT * FROM a, pg_settings") == (
        "table 'pg_settings' is not in the catalogue (nor a CTE visible at that point of the "
        f"query); use the fully qualified name of one of: {AUTH}"
    )


def test_with_no_table_configured_the_refusal_says_so() -> None:
    assert refusal(f"SELECT * FROM `{AUTH}`", set()) == (
        f"table {AUTH!r} is not in the catalogue (nor a CTE visible at that point of the "
        "query); use the fully qualified name of one of: none configured"
    )


def test_a_namespaced_functions_name_is_cut_at_120_chars() -> None:
    dataset = "d" * 130
    assert refusal(f"SELECT {dataset}.fn(1)") == (
        f"function {f'{dataset}.fn'[:120]} is not allowed (a namespaced, user-defined or "
        f"persistent function): {REFUSAL_HINT}"
    )


@pytest.mark.parametrize(
    "sql",
    [  # tables that sqlglot's scopes do not see: refused, never waved through unchecked
        f"SELECT * FROM (pg_settings CROSS JOIN `{AUTH}`) AS t",  # a join in parentheses
        f"SELECT a FROM (SELECT a FROM `{AUTH}` UNION ALL SELECT a FROM `{AUTH}` "
        "ORDER BY (SELECT 1 FROM pg_settings)) AS t",  # a subquery in a union's ORDER BY
    ],
)
def test_a_table_outside_every_scope_is_refused_by_name(sql: str) -> None:
    assert refusal(sql) == (
        "table reference 'pg_settings' could not be resolved: select FROM catalogued tables "
        "and CTEs defined in the same query, joins written without parentheses"
    )


def test_a_catalogued_table_in_a_parenthesised_join_is_refused_with_the_way_out() -> None:
    said = refusal(f"SELECT * FROM (`{AUTH}` AS a CROSS JOIN `{AUTH}` AS b) AS t")
    assert said == (
        f"table reference '{AUTH}' could not be resolved: select FROM catalogued tables "
        "and CTEs defined in the same query, joins written without parentheses"
    )
    unbracketed = check_sql(f"SELECT * FROM `{AUTH}` AS a CROSS JOIN `{AUTH}` AS b", TABLES)
    assert unbracketed.tables == {AUTH}


def test_a_bare_table_as_a_union_operand_is_refused_with_sqlglots_reason() -> None:
    assert refusal("(pg_settings) UNION ALL SELECT 1") == (
        "could not resolve the query's table references: Cannot build a scope for set "
        "operation operand: (pg_settings)"
    )


def test_sqlglots_reason_is_cut_at_300_chars() -> None:
    operator = "x" * 400  # sqlglot quotes the unknown pipe operator in its first line
    reason = refusal(f"FROM `{AUTH}` |> {operator}")
    assert (
        reason
        == "could not parse the query as BigQuery SQL: "
        + (f"Unsupported pipe syntax operator: '{operator.upper()}'.")[:300]
    )


def test_an_error_without_a_message_is_named_by_its_type() -> None:
    # sqlglot can fail on hostile input with plain Python errors (the guard catches
    # ValueError, KeyError...); one without a message still gives the model a reason
    assert _first_line(KeyError()) == "KeyError"
    assert _first_line(ValueError("  \n")) == "ValueError"
    assert _first_line(ValueError("first\nsecond")) == "first"
