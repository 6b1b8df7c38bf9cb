"""The SQL guard: one read-only SELECT over catalogued tables, checked before any backend.

Every query the model writes (and every runbook) passes through ``check_sql`` first. It
parses with sqlglot's BigQuery dialect and fails closed: anything it cannot parse, any
statement that is not a plain query, any table-valued function or LATERAL, any function
not on the allowlist of built-ins (``tools.sql._functions``), and any table reference that
is neither a catalogued table nor a CTE visible in its own scope (resolved with sqlglot's
optimizer scopes, so an inner CTE never hides an outer reference) is rejected with a
precise reason (a ``SqlRejected``, which is a ``ToolError`` and so reaches the model as
data). The BigQuery backend then repeats the essential checks with a dry run.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from tools.base import ToolError
from tools.sql._functions import function_problem

MAX_SQL_CHARS = 20_000

# Statement and clause types that never belong in a read-only query.
_FORBIDDEN_NODES: dict[type[exp.Expr], str] = {
    exp.Command: "commands and scripting (EXECUTE IMMEDIATE, CALL, BEGIN, IF, LOOP...)",
    exp.Declare: "DECLARE (scripting)",
    exp.Set: "SET (scripting)",
    exp.Execute: "EXECUTE",
    exp.DML: "DML (INSERT/UPDATE/DELETE/MERGE)",
    exp.DDL: "DDL (CREATE...)",
    exp.Drop: "DDL (DROP)",
    exp.Alter: "DDL (ALTER)",
    exp.TruncateTable: "DDL (TRUNCATE)",
    exp.Grant: "DCL (GRANT)",
    exp.Revoke: "DCL (REVOKE)",
    exp.Export: "EXPORT DATA",
    exp.LoadData: "LOAD DATA",
    exp.Into: "SELECT ... INTO",
    exp.Transaction: "transactions",
    exp.Commit: "transactions",
    exp.Rollback: "transactions",
    exp.Use: "USE",
}
# sqlglot fails on some hostile input with plain Python errors: all of them reject the query.
_PARSER_CRASHES = (
    SqlglotError,
    RecursionError,
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    AttributeError,
)
TABLE_HINT = (
    "select FROM catalogued tables, CTEs and subqueries only (UNNEST of an array is fine); "
    "table-valued functions are refused"
)

# sqlglot logs a warning for every statement it falls back to parsing as a Command.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


class SqlRejected(ToolError):
    """The query is not a single read-only SELECT over catalogued tables."""


@dataclass(frozen=True)
class CheckedQuery:
    """A query that passed the guard, with its parse tree and referenced tables."""

    sql: str
    tree: exp.Expr
    tables: frozenset[str]


def table_name(table: exp.Table) -> str:
    """The dotted name of a table reference, e.g. ``project.dataset.table``."""
    return ".".join(part.name for part in table.parts)


def check_sql(sql: str, allowed_tables: Collection[str]) -> CheckedQuery:
    """Return the parsed query, or raise ``SqlRejected`` saying exactly what is wrong."""
    if not sql.strip():
        raise SqlRejected("empty query: send one BigQuery Standard SQL SELECT statement")
    if len(sql) > MAX_SQL_CHARS:
        raise SqlRejected(f"query is too long ({len(sql)} chars, limit {MAX_SQL_CHARS})")
    try:
        statements = [s for s in sqlglot.parse(sql, dialect="bigquery") if s is not None]
    except _PARSER_CRASHES as exc:
        raise SqlRejected(f"could not parse the query as BigQuery SQL: {_first_line(exc)}") from exc
    if len(statements) != 1:
        raise SqlRejected(
            f"exactly one statement is allowed, got {len(statements)}: send a single SELECT"
        )
    tree = statements[0]
    root = tree.this if isinstance(tree, exp.Subquery) else tree
    if not isinstance(root, exp.Select | exp.SetOperation):
        raise SqlRejected(
            f"only read-only queries are allowed (SELECT, UNION/INTERSECT/EXCEPT, "
            f"WITH ... SELECT); got {_kind(tree)}"
        )
    _check_nodes(tree)
    tables = _resolve_tables(tree, set(allowed_tables))
    return CheckedQuery(sql=sql, tree=tree, tables=frozenset(tables))


def _check_nodes(tree: exp.Expr) -> None:
    for node in tree.walk():
        for kind, label in _FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                raise SqlRejected(f"{label} is not allowed: only read-only SELECT queries")
        if isinstance(node, exp.Offset):
            raise SqlRejected(
                "OFFSET paging is not supported: aggregate (COUNT, GROUP BY, MIN/MAX of the "
                "time column) or narrow the WHERE clause / time window instead"
            )
        if isinstance(node, exp.Lateral):
            raise SqlRejected(f"LATERAL is not allowed: {TABLE_HINT}")
        if isinstance(node, exp.Table) and not isinstance(node.this, exp.Identifier):
            inner = node.this
            what = _func_name(inner) if isinstance(inner, exp.Func) else type(inner).__name__
            if node.db:
                what = f"{'.'.join(p.name for p in node.parts[:-1])}.{what}"
            raise SqlRejected(f"table-valued function {what} is not allowed: {TABLE_HINT}")
        if isinstance(node, exp.Func) and (problem := function_problem(node)):
            raise SqlRejected(problem)


def _resolve_tables(tree: exp.Expr, allowed: set[str]) -> set[str]:
    """Every table reference, resolved in its own scope: a visible CTE or a catalogued table."""
    try:
        scopes = traverse_scope(tree)
    except _PARSER_CRASHES as exc:
        raise SqlRejected(
            f"could not resolve the query's table references: {_first_line(exc)}"
        ) from exc
    resolved: set[int] = set()
    tables: set[str] = set()
    for scope in scopes:
        for table in scope.tables:
            resolved.add(id(table))
            if not table.db and isinstance(scope.sources.get(table.alias_or_name), Scope):
                continue  # a CTE defined in this scope or an enclosing one
            tables.add(_catalogued(table, allowed))
    for table in tree.find_all(exp.Table):
        if id(table) not in resolved:
            raise SqlRejected(
                f"table reference {table_name(table)!r} could not be resolved: select FROM "
                "catalogued tables and CTEs defined in the same query, joins written without "
                "parentheses"
            )
    return tables


def _catalogued(node: exp.Table, allowed: set[str]) -> str:
    name = table_name(node)
    if name not in allowed:
        if "INFORMATION_SCHEMA" in name.upper():
            raise SqlRejected(
                f"INFORMATION_SCHEMA is not queryable ({name!r}); use list_tables and "
                "get_table_schema instead"
            )
        listed = ", ".join(sorted(allowed)) or "none configured"
        raise SqlRejected(
            f"table {name!r} is not in the catalogue (nor a CTE visible at that point of the "
            f"query); use the fully qualified name of one of: {listed}"
        )
    return name


def _func_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).upper()
    return str(node.sql_name()).upper()


def _kind(tree: exp.Expr) -> str:
    if isinstance(tree, exp.Command):
        return f"command {str(tree.this).upper()!r}"
    return type(tree).__name__.upper()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
