"""Tool results as an analyst reads them: a query's rows as a table with a header row,
the rows a finding cites marked (and shown even past the first rows), arguments as
``key: value``.

A result is the stored JSON (``core.events.STORED_RESULT_CHARS``); one that does not
parse (cut at the cap, or not JSON) stays text. A row is cited by a finding when one of
its distinctive cells (``CITED_CHARS`` characters or more) appears in the finding's
text or evidence; the finding's link leads to the row with the most such cells.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from markupsafe import Markup, escape

TABLE_ROWS = 10  # of a cited table, shown before "Show all"; its cited rows are shown too
CELL_CHARS = 300
CITED_CHARS = 6
MAX_COLUMNS = 40


@dataclass
class Table:
    columns: list[str]
    raw: list[Any]  # the result's first rows (all unless cut), each a list or an object
    total: int  # rows in the result
    cited: dict[int, int] = field(default_factory=dict)  # row index -> cells cited

    def cells(self, index: int) -> list[str]:
        row = self.raw[index]
        if isinstance(row, dict):
            values = [row.get(name) for name in self.columns]
        else:
            values = list(row[: len(self.columns)]) + [None] * (len(self.columns) - len(row))
        return [_cell(v) if v is not None else "" for v in values]

    @cached_property  # drawn after every finding has cited its rows
    def visible(self) -> list[tuple[int, list[str]]]:
        return shown(self)

    def html(self, anchor: str) -> Markup:
        return table_html(self, anchor, self.visible)

    @cached_property
    def visible_count(self) -> int:
        return sum(1 for index, _ in self.visible if index >= 0)


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + "…"


def tabular(stored: str) -> bool:
    """Whether ``stored`` may be a table (``table_of`` tells), without parsing it."""
    return stored.startswith("{") and '"rows"' in stored


def table_of(stored: str) -> Table | None:
    """The result's rows as a table, when it has ``columns`` and ``rows`` (lists or
    objects); None for anything else."""
    if not tabular(stored):
        return None
    try:
        data = json.loads(stored)
    except ValueError:
        return None
    rows, columns = data.get("rows"), data.get("columns")
    if not isinstance(rows, list) or not rows:
        return None
    if not isinstance(columns, list):
        first = rows[0]
        columns = list(first) if isinstance(first, dict) else None
    if not columns or len(columns) > MAX_COLUMNS:
        return None
    kind = list if isinstance(rows[0], list) else dict
    if not all(isinstance(row, kind) for row in rows):
        return None
    names = [str(c.get("name") if isinstance(c, dict) else c) for c in columns]
    return Table(names, rows, len(rows))


def cite(table: Table, text: str) -> int | None:
    """Mark the rows ``text`` (a finding and its evidence) quotes; the best row's index."""
    best, best_count = None, 0
    lowered = text.lower()
    for index in range(len(table.raw)):
        cells = table.cells(index)
        count = sum(1 for c in cells if len(c) >= CITED_CHARS and c.lower() in lowered)
        if count:
            table.cited[index] = max(table.cited.get(index, 0), count)
            if count > best_count:
                best, best_count = index, count
    return best


def shown(table: Table, limit: int = TABLE_ROWS) -> list[tuple[int, list[str]]]:
    """The first ``limit`` rows, then the cited rows beyond them, a gap (index -1)
    wherever rows are left out."""
    out: list[tuple[int, list[str]]] = []
    last = -1
    for index in sorted({*range(min(limit, len(table.raw))), *table.cited}):
        if index != last + 1:
            out.append((-1, [f"{index - last - 1:,} rows not shown"]))
        out.append((index, table.cells(index)))
        last = index
    if last < table.total - 1:
        out.append((-1, [f"{table.total - last - 1:,} rows not shown"]))
    return out


def table_html(table: Table, anchor: str, rows: list[tuple[int, list[str]]]) -> Markup:
    """The rows as an HTML table (every value escaped): a header row, each row's id
    ``{anchor}-r{index}`` (what a finding's link targets), cited rows marked, gaps said.
    Drawn here rather than in a template: a page holds hundreds of these rows."""
    width = len(table.columns)
    out = ['<div class="result table-wrap"><table class="rows"><thead><tr>']
    out += [f"<th>{escape(c[:80])}</th>" for c in table.columns]
    out.append("</tr></thead><tbody>")
    for index, cells in rows:
        if index < 0:
            out.append(f'<tr class="gap"><td colspan="{width}">⋯ {escape(cells[0])}</td></tr>')
            continue
        cited = ' class="cited"' if index in table.cited else ""
        out.append(f'<tr id="{escape(anchor)}-r{index}"{cited}>')
        out += [f"<td>{escape(c)}</td>" for c in cells]
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return Markup("".join(out))


def arg_text(value: Any) -> str:
    """An argument as people read it: text as it is, a mapping as ``key: value`` lines,
    a list as comma-separated values."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(f"{k}: {arg_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(arg_text(v) for v in value)
    return json.dumps(value, ensure_ascii=False)
