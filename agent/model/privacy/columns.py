"""The personal values of a tool result's marked columns (``personal = [...]`` in the log
catalogue): ``{"columns": [...], "rows": [[...]]}`` tables and ``{"column": value}``
records at any depth, and what kind of value each column holds."""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Container, Iterator
from typing import Any

from agent.model.privacy.detect import EMAIL, NAME_KEYS

_NESTED = (dict, list)  # what json.loads makes that can hold more values


def marked_values(
    data: Any, marked: frozenset[str], done: Container[tuple[str, str]] = frozenset()
) -> Iterator[tuple[str, str]]:
    """``(column, value)`` of the marked columns in a tool result: ``{"columns": [...],
    "rows": [[...]]}`` tables and ``{"column": value}`` records, at any depth. A table
    whose every marked cell is ``done`` (a pair the caller has read before) gives none."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            columns, rows = item.get("columns"), item.get("rows")
            read = None  # the rows of a table, read here (not walked again)
            if isinstance(columns, list) and isinstance(rows, list):
                cells, nested = _table(columns, rows, marked, done)
                for i, value in cells:
                    yield str(columns[i]), value
                stack += nested  # cells holding records or lists; the rows were read
                read = rows
            for key, value in item.items():
                if isinstance(value, str) and key.lower() in marked:
                    yield key, value
                elif isinstance(value, dict | list) and value is not read:
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, dict | list))


def _table(
    columns: list[Any],
    rows: list[Any],
    marked: frozenset[str],
    done: Container[tuple[str, str]] = frozenset(),
) -> tuple[list[tuple[int, str]], list[Any]]:
    """A table's marked text cells, each ``(column index, value)`` once in the order met
    (row by row), and its cells that hold records or lists, in order; no cells when each
    ``(column name, value)`` is ``done`` (most often: every value already known)."""
    wanted = [i for i, c in enumerate(columns) if str(c).lower() in marked]
    if rows and set(map(type, rows)) == {list} and set(map(len, rows)) == {len(columns)}:
        # A rectangle of plain values: read column by column.
        if _NESTED_TYPES.isdisjoint(map(type, itertools.chain.from_iterable(rows))):
            chosen = [list(map(operator.itemgetter(i), rows)) for i in wanted]
            if all(
                (str(columns[i]), v) in done
                for i, column in zip(wanted, chosen, strict=True)
                for v in dict.fromkeys(column)
                if type(v) is str
            ):
                return [], []
            marked_rows = itertools.chain.from_iterable(zip(*chosen, strict=True))
            cells = dict.fromkeys(zip(itertools.cycle(wanted), marked_rows))
            return [(i, v) for i, v in cells if type(v) is str], []
    found = (
        (i, row[i])
        for row in (rows if wanted else ())
        if isinstance(row, list)
        for i in wanted
        if i < len(row) and isinstance(row[i], str)
    )
    nested = [c for r in rows if type(r) is list for c in r if type(c) in _NESTED]
    return list(dict.fromkeys(found)), nested


_NESTED_TYPES = frozenset(_NESTED)


def json_in(text: str) -> Any:
    """The JSON document inside ``text`` (a fenced tool result), or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        return json.loads(text[start : end + 1])
    except ValueError:
        return None


def column_kind(column: str, value: str) -> str:
    """What a marked column's value is: an e-mail address by its shape, else by the
    column's name (a host, a person's name, a user)."""
    if "@" in value and EMAIL.fullmatch(value.strip()):
        return "EMAIL"
    name = column.lower()
    if any(w in name for w in ("host", "device", "machine", "computer", "workstation")):
        return "HOST"
    if any(w in name for w in NAME_KEYS) or (name.endswith("_name") and "user" not in name):
        return "PERSON"
    return "USER"
