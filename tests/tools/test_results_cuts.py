"""What ``truncate`` keeps, exactly: a result that fits stays whole; lists lose their tail
at 200, 50, 20, 5 then 1 items, each cut said; strings are clipped at a quarter of the
budget (80 characters at least); values JSON does not know are written as text. And the
two other shapes the model reads: ``as_dict`` and ``validation_brief``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError, model_validator

from tools.results import as_dict, truncate, validation_brief


def chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def test_a_result_of_exactly_the_budget_stays_whole() -> None:
    data = {"rows": ["x" * 40] * 3}
    assert truncate(data, chars(data)) == (data, chars(data), False)


def listed(limit: int) -> dict[str, Any]:
    """The cut of ``ROWS`` at ``limit`` items a list."""
    five = list(range(5))[:limit] + ([f"... {5 - limit} more items omitted"] if limit < 5 else [])
    rows = [*ROW_NAMES[:limit], f"... {1000 - limit} more items omitted"]
    return {"rows": rows, "five": five, "truncated": True}


ROW_NAMES = [f"row-{i:04d}" for i in range(1000)]
ROWS = {"rows": ROW_NAMES, "five": list(range(5))}


@pytest.mark.parametrize("limit", [200, 50, 20, 5, 1])
def test_lists_keep_the_first_items_that_fit_the_budget(limit: int) -> None:
    expected = listed(limit)
    assert truncate(ROWS, chars(expected)) == (expected, chars(ROWS), True)


@pytest.mark.parametrize(
    ("budget", "kept"),
    [(2000, 500), (400, 100), (300, 80)],  # a quarter, 80 at least
)
def test_strings_are_clipped_at_a_quarter_of_the_budget(budget: int, kept: int) -> None:
    data = {"short": "q" * kept, "long": "z" * 5000}
    cut, size, truncated = truncate(data, budget)
    assert cut == {
        "short": "q" * kept,  # exactly the limit: not clipped
        "long": "z" * kept + f"... [{5000 - kept} chars omitted]",
        "truncated": True,
    }
    assert (size, truncated) == (chars(data), True)


def test_values_json_does_not_know_are_cut_as_their_text() -> None:
    at = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    cut, size, _ = truncate({"at": at, "blob": "y" * 1000}, 300)
    assert cut == {
        "at": "2026-11-25 12:00:00+00:00",
        "blob": "y" * 80 + "... [920 chars omitted]",
        "truncated": True,
    }
    assert size == 1000 + len('{"at": "2026-11-25 12:00:00+00:00", "blob": ""}')


def test_the_last_resort_keeps_multibyte_text_unescaped() -> None:
    cut, _, _ = truncate({f"k{i}": "漢字" for i in range(300)}, 100)
    assert cut["partial"].startswith('{"k0": "漢字", "k1": "漢字", "k2": "漢字"')
    assert chars(cut) in (99, 100)


class Seen(BaseModel):
    at: datetime
    count: int


def test_as_dict_gives_json_data() -> None:
    at = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    assert as_dict(Seen(at=at, count=2)) == {"at": "2026-11-25T12:00:00Z", "count": 2}
    same = {"a": 1}
    assert as_dict(same) is same
    assert as_dict([1, 2]) == {"result": [1, 2]}


class Query(BaseModel):
    class Window(BaseModel):
        hours: int

    sql: str
    window: Window

    @model_validator(mode="after")
    def _not_empty(self) -> Query:
        if not self.sql:
            raise ValueError("sql is empty")
        return self


@pytest.mark.parametrize(
    ("args", "brief"),
    [
        ({"sql": "x", "window": {"hours": "many"}}, "window.hours: Input should be a valid"),
        ({"sql": "", "window": {"hours": 1}}, "arguments: Value error, sql is empty"),
        ({"window": {}}, "sql: Field required; window.hours: Field required"),
    ],
)
def test_validation_brief_names_each_argument_by_its_path(args: dict[str, Any], brief: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Query.model_validate(args)
    assert validation_brief(caught.value).startswith(brief)
