"""SQL laid out for reading: one clause per line, nested queries indented.

A page shows up to hundreds of queries, so this is a single pass of one regular
expression (microseconds a query), not a parse: string literals and quoted names are
kept as they are, runs of whitespace elsewhere become one space, and each clause
keyword (SELECT, FROM, WHERE, JOIN, GROUP BY, …) and each top-level AND / OR starts a
line, indented by how deep in parentheses it is. The text is not changed otherwise.
"""

from __future__ import annotations

import re
from functools import lru_cache

CLAUSE = (
    r"with|select|from|where|group\s+by|order\s+by|having|qualify|window|limit|"
    r"union(?:\s+all|\s+distinct)?|intersect|except|"
    r"(?:(?:left|right|full)(?:\s+outer)?\s+|inner\s+|cross\s+)?join"
)
TOKEN = re.compile(
    r"(?P<quoted>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`)"
    r"|(?P<clause>\b(?:" + CLAUSE + r")\b)"
    r"|(?P<logic>\b(?:and|or)\b)"
    r"|(?P<open>\()|(?P<close>\))|(?P<space>\s+)",
    re.IGNORECASE,
)
INDENT = "  "


@lru_cache(maxsize=1024)  # a running run's page draws the same queries on every event
def layout(sql: str) -> str:
    """``sql`` with a line per clause; unbalanced or odd input comes back readable too."""
    out: list[str] = []
    depth = 0
    at = 0
    for match in TOKEN.finditer(sql):
        out.append(sql[at : match.start()])
        at = match.end()
        kind, text = match.lastgroup, match.group()
        if kind == "space":
            out.append(" ")
        elif kind == "open":
            depth += 1
            out.append(text)
        elif kind == "close":
            depth = max(depth - 1, 0)
            out.append(text)
        elif kind == "clause":
            out.append("\n" + INDENT * 2 * depth + " ".join(text.upper().split()))
        elif kind == "logic" and depth == 0:
            out.append("\n" + INDENT + text.upper())
        else:
            out.append(text)
    out.append(sql[at:])
    lines = "".join(out).split("\n")
    return "\n".join(line.rstrip() for line in lines if line.strip())
