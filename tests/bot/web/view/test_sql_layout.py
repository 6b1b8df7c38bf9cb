"""SQL on the page: a line per clause, quoted text untouched."""

from __future__ import annotations

import pytest

from bot.web.view.sql_layout import layout

CASES = [
    (
        "select a, b from `p.d.t` where x = 'select from where' and y > 2 order by a limit 5",
        "SELECT a, b\nFROM `p.d.t`\nWHERE x = 'select from where'\n  AND y > 2\n"
        "ORDER BY a\nLIMIT 5",
    ),
    (
        "SELECT n FROM t LEFT OUTER JOIN u ON t.id = u.id\n\n   GROUP   BY n",
        "SELECT n\nFROM t\nLEFT OUTER JOIN u ON t.id = u.id\nGROUP BY n",
    ),
    (
        "select a from t where y in (select b from u where c = 1 or d = 2)",
        "SELECT a\nFROM t\nWHERE y in (\n    SELECT b\n    FROM u\n    WHERE c = 1 or d = 2)",
    ),
    ("select 'it''s' from t where s = \"a  b\"", "SELECT 'it''s'\nFROM t\nWHERE s = \"a  b\""),
    ("not sql at all ((", "not sql at all (("),
]


@pytest.mark.parametrize(("sql", "expected"), CASES)
def test_layout(sql: str, expected: str) -> None:
    assert layout(sql) == expected
