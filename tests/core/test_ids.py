"""Row numbers read from text anyone may write: digits only, ASCII only, bounded."""

from __future__ import annotations

import pytest

from core.ids import row_id


@pytest.mark.parametrize(
    ("text", "expected"),
    [("7", 7), ("0042", 42), ("9" * 9, 999_999_999)],
)
def test_ascii_digits_are_a_row_id(text: str, expected: int) -> None:
    assert row_id(text) == expected


@pytest.mark.parametrize(
    "text",
    ["", "²", "\u0661", "9" * 10, "-1", "+1", " 1", "1 ", "1.0", "x1", "1\n", None, 7],
)
def test_anything_else_is_none(text: object) -> None:
    assert row_id(text) is None
