"""Runbooks: saved, reviewed queries in ``.sql`` files with comment headers.

A runbook file looks like::

    -- title: Activity of an IP address
    -- description: Every audit, auth and flow record involving one IP, newest first.
    -- param: ip STRING the address to look for
    SELECT ... WHERE src_ip = @ip

``title`` is required; ``param`` lines declare typed query parameters (``@name``). The
name of the runbook is the file name without ``.sql``.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.base import ToolError
from tools.logs.backend import Param, ParamValue

log = logging.getLogger(__name__)

_HEADER = re.compile(r"^--\s*(title|description|param)\s*:\s*(.*)$", re.IGNORECASE)
_PARAM = re.compile(r"^(\w+)\s+(STRING|INT64|FLOAT64|BOOL|TIMESTAMP)\b\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class RunbookParam:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class Runbook:
    name: str
    title: str
    description: str
    sql: str
    params: tuple[RunbookParam, ...]

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "params": {p.name: f"{p.type}: {p.description}".rstrip(": ") for p in self.params},
        }

    def bind(self, values: Mapping[str, str]) -> dict[str, Param]:
        """Typed parameters from the model's strings; a ToolError says what is wrong."""
        declared = {p.name: p for p in self.params}
        unknown = sorted(set(values) - set(declared))
        missing = sorted(set(declared) - set(values))
        if unknown or missing:
            raise ToolError(
                f"runbook {self.name!r} takes params {sorted(declared) or 'none'}"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {unknown}" if unknown else "")
            )
        return {n: Param(n, declared[n].type, _convert(declared[n], v)) for n, v in values.items()}


def parse_runbook(name: str, text: str) -> Runbook:
    """Parse one runbook file's text; ValueError if the header is unusable."""
    headers: dict[str, str] = {}
    params: list[RunbookParam] = []
    body: list[str] = []
    for line in text.splitlines():
        match = _HEADER.match(line.strip()) if not body else None
        if match is None:
            if line.strip() or body:
                body.append(line)
            continue
        key, value = match.group(1).lower(), match.group(2).strip()
        if key == "param":
            pm = _PARAM.match(value)
            if pm is None:
                raise ValueError(f"runbook {name!r}: bad param line {value!r}")
            params.append(RunbookParam(pm.group(1), pm.group(2).upper(), pm.group(3).strip()))
        else:
            headers[key] = (headers.get(key, "") + " " + value).strip()
    if "title" not in headers:
        raise ValueError(f"runbook {name!r} has no '-- title:' header")
    sql = "\n".join(body).strip().rstrip(";").strip()
    if not sql:
        raise ValueError(f"runbook {name!r} has no query")
    return Runbook(name, headers["title"], headers.get("description", ""), sql, tuple(params))


class Runbooks(Mapping[str, Runbook]):
    """The usable runbooks of ``directory``, read and checked on first use: checking parses
    their SQL with sqlglot, which socbot's start does not otherwise need. The tools call
    ``load`` in a thread, so that the first read stays off the event loop."""

    def __init__(self, directory: Path | None, tables: Collection[str]) -> None:
        self.directory, self.tables = directory, tuple(tables)
        self._books: dict[str, Runbook] | None = None
        self._lock = threading.Lock()

    def load(self) -> dict[str, Runbook]:
        with self._lock:
            if self._books is None:
                self._books = load_runbooks(self.directory, self.tables)
            return self._books

    def __getitem__(self, name: str) -> Runbook:
        return self.load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.load())

    def __len__(self) -> int:
        return len(self.load())


def load_runbooks(directory: Path | None, tables: Collection[str]) -> dict[str, Runbook]:
    """All usable runbooks in ``directory``; broken ones and ones over tables outside the
    catalogue are skipped with a warning (they could never run)."""
    if directory is None or not directory.is_dir():
        return {}
    from tools.sql.guard import SqlRejected, check_sql

    found: dict[str, Runbook] = {}
    for path in sorted(directory.glob("*.sql")):
        try:
            book = parse_runbook(path.stem, path.read_text(encoding="utf-8"))
            check_sql(book.sql, tables)
        except (ValueError, SqlRejected) as exc:
            log.warning("skipping runbook %s: %s", path.name, exc)
            continue
        found[book.name] = book
    return found


def _convert(param: RunbookParam, raw: str) -> ParamValue:
    try:
        if param.type == "INT64":
            return int(raw)
        if param.type == "FLOAT64":
            return float(raw)
        if param.type == "BOOL":
            if raw.lower() not in ("true", "false"):
                raise ValueError(raw)
            return raw.lower() == "true"
        if param.type == "TIMESTAMP":
            value = dt.datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    except ValueError as exc:
        raise ToolError(
            f"param {param.name!r} must be {param.type}"
            + (" (ISO 8601, e.g. 2025-11-08T05:00:00Z)" if param.type == "TIMESTAMP" else "")
            + f", got {raw!r}"
        ) from exc
    return raw
