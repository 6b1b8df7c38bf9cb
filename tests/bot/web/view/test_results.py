"""Tool results as tables: rows as lists or objects, the cited row found by its
distinctive cells, the rows shown with their gaps, arguments as ``key: value``."""

from __future__ import annotations

import json

from bot.web.view.results import TABLE_ROWS, arg_text, cite, shown, table_of, tabular

ROWS = [[f"2025-11-03T21:{n:02d}:00Z", f"user{n}@example.com", "OK"] for n in range(40)]
RESULT = json.dumps({"columns": ["event_time", "principal", "outcome"], "rows": ROWS})


def test_a_query_result_is_a_table_and_anything_else_is_not() -> None:
    table = table_of(RESULT)
    assert table is not None and table.columns == ["event_time", "principal", "outcome"]
    assert table.total == 40 and table.cells(3) == ROWS[3]
    objects = table_of(json.dumps({"rows": [{"a": 1, "b": None}, {"a": "x"}]}))
    assert objects is not None and objects.columns == ["a", "b"]
    assert [objects.cells(0), objects.cells(1)] == [["1", ""], ["x", ""]]
    for other in ('{"asn": 1}', RESULT[:-40], '{"rows": []}', '{"rows": [1, 2]}', "rows"):
        assert table_of(other) is None, other


def test_the_row_a_finding_quotes_is_cited_and_shown() -> None:
    table = table_of(RESULT)
    assert table is not None
    assert cite(table, "SUCCESS for user33@example.com at 21:33") == 33
    assert cite(table, "OK") is None  # too short to say which row
    rows = shown(table)
    indexes = [i for i, _ in rows]
    assert indexes == [*range(TABLE_ROWS), -1, 33, -1]
    assert rows[TABLE_ROWS][1] == [f"{33 - TABLE_ROWS:,} rows not shown"]
    assert rows[-1][1] == ["6 rows not shown"]
    assert [i for i, _ in shown(table, limit=table.total)] == list(range(40))


def test_what_may_be_a_table_is_told_without_parsing() -> None:
    assert tabular(RESULT) and tabular('{"rows": "not a list"}')
    assert not tabular('["rows"]') and not tabular('{"columns": []}') and not tabular("")


def test_arguments_read_as_key_value() -> None:
    assert (
        arg_text({"host": "web-01", "window": {"hours": 24}}) == "host: web-01\nwindow: hours: 24"
    )
    assert arg_text(["a", 2]) == "a, 2"
    assert arg_text(True) == "true" and arg_text("as is") == "as is"
