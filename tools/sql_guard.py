"""The SQL guard: one read-only SELECT over catalogued tables, checked before any backend.

Every query the model writes (and every runbook) passes through ``check_sql`` first. It
parses with sqlglot's BigQuery dialect and fails closed: anything it cannot parse, any
statement that is not a plain query, and any table outside the catalogue is rejected with
a precise reason (a ``SqlRejected``, which is a ``ToolError`` and so reaches the model as
data). The BigQuery backend then repeats the essential checks with a dry run.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from tools.base import ToolError

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
# Function namespaces and functions that reach outside the catalogue or cost money.
_FORBIDDEN_NAMESPACES = frozenset({"ML", "AI", "VECTOR", "KEYS", "OBJ"})
_FORBIDDEN_FUNCTIONS = frozenset(
    {"EXTERNAL_QUERY", "EXTERNAL_OBJECT_TRANSFORM", "VECTOR_SEARCH", "APPENDS", "CHANGES"}
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
    except (SqlglotError, RecursionError, ValueError, TypeError) as exc:
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
    tables = _check_nodes(tree, set(allowed_tables))
    return CheckedQuery(sql=sql, tree=tree, tables=frozenset(tables))


def _check_nodes(tree: exp.Expr, allowed: set[str]) -> set[str]:
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    tables: set[str] = set()
    for node in tree.walk():
        for kind, label in _FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                raise SqlRejected(f"{label} is not allowed: only read-only SELECT queries")
        if isinstance(node, exp.Offset):
            raise SqlRejected(
                "OFFSET paging is not supported: aggregate (COUNT, GROUP BY, MIN/MAX of the "
                "time column) or narrow the WHERE clause / time window instead"
            )
        if isinstance(node, exp.Dot) and _namespace(node) in _FORBIDDEN_NAMESPACES:
            raise SqlRejected(f"{_namespace(node)}.* functions are not allowed")
        if isinstance(node, exp.Func) and _func_name(node) in _FORBIDDEN_FUNCTIONS:
            raise SqlRejected(f"{_func_name(node)} is not allowed: query catalogued tables only")
        if isinstance(node, exp.Table):
            name = _table_ref(node, ctes, allowed)
            if name:
                tables.add(name)
    return tables


def _table_ref(node: exp.Table, ctes: set[str], allowed: set[str]) -> str | None:
    if not isinstance(node.this, exp.Identifier):
        inner = node.this
        what = _func_name(inner) if isinstance(inner, exp.Func) else type(inner).__name__
        if node.db.upper() in _FORBIDDEN_NAMESPACES:
            what = f"{node.db}.{what}"
        raise SqlRejected(
            f"table function {what} is not allowed: select FROM catalogued tables "
            "(UNNEST of arrays is fine)"
        )
    name = table_name(node)
    if not node.db and name in ctes:
        return None
    if name not in allowed:
        if "INFORMATION_SCHEMA" in name.upper():
            raise SqlRejected(
                f"INFORMATION_SCHEMA is not queryable ({name!r}); use list_tables and "
                "get_table_schema instead"
            )
        listed = ", ".join(sorted(allowed)) or "none configured"
        raise SqlRejected(
            f"table {name!r} is not in the catalogue; use the fully qualified name of one "
            f"of: {listed}"
        )
    return name


def _namespace(node: exp.Dot) -> str:
    left = node.this
    if isinstance(left, exp.Identifier | exp.Column) and isinstance(node.expression, exp.Func):
        return str(left.name).upper()
    return ""


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
