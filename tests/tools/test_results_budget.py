"""``truncate`` never returns more than its budget, whatever the tool (or MCP server) sent.

The budget is the only cap on an answer the model reads: quotes, backslashes and control
characters grow when escaped, multi-byte text counts in characters, nesting and width
defeat the list and string clipping; every path must still fit.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tools.results import MIN_BUDGET, truncate

# What grows when escaped (quote, backslash, control characters), what is wide
# (multi-byte, astral), and what is plain.
_PIECES = ['"', "\\", "\n", "\x00", "\x1f", "\u2028", "é", "漢", "😀", "a", " "]

_STRINGS = (
    st.text(alphabet=st.sampled_from(_PIECES), max_size=40)
    | st.text(max_size=40)
    | st.lists(st.sampled_from(["]}", "\\u00", '\\"', '"}']), max_size=10).map("".join)
    | st.tuples(st.sampled_from(_PIECES), st.integers(1, 8_000)).map(lambda t: t[0] * t[1])
)
_KEYS = st.text(alphabet=st.sampled_from(_PIECES), max_size=8) | st.text(max_size=8)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _STRINGS
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=12) | st.dictionaries(_KEYS, inner, max_size=12),
    max_leaves=60,
)
_RESULTS = st.dictionaries(_KEYS, _VALUES, max_size=12)


def _chars(data: dict[str, Any]) -> int:
    return len(json.dumps(data, ensure_ascii=False, default=str))


def _deep(levels: int) -> dict[str, Any]:
    value: Any = '"\\' * 50
    for _ in range(levels):
        value = {'"k"': [value, value]}
    return value  # type: ignore[no-any-return]


@settings(max_examples=150, deadline=None)
@given(data=_RESULTS, budget=st.integers(MIN_BUDGET, 25_000))
@example(data={f"k{i}": '"' * 10 for i in range(500)}, budget=500)
@example(data={f"k{i}": '"' * 10 for i in range(4_000)}, budget=4_000)
@example(data={f"k{i}": "\\" * 40 for i in range(20_000)}, budget=20_000)
@example(data={f"k{i}": "\x00" * 10 for i in range(900)}, budget=MIN_BUDGET)
@example(data={"漢" * 5_000: "😀" * 50_000}, budget=600)
@example(data=_deep(12), budget=500)
def test_no_path_exceeds_the_budget(data: dict[str, Any], budget: int) -> None:
    size = _chars(data)
    cut, chars, truncated = truncate(data, budget)
    assert chars == size
    assert _chars(cut) <= budget
    assert json.loads(json.dumps(cut, ensure_ascii=False)) == cut
    if size <= budget:
        assert (cut, truncated) == (data, False)
        return
    assert truncated and cut["truncated"] is True
    if "partial" in cut:  # the last resort keeps as much as fits: one more char would not
        assert set(cut) == {"truncated", "partial"} and _chars(cut) > budget - 6


@pytest.mark.parametrize(
    ("data", "budget"),
    [
        ({f"k{i}": '"' * 10 for i in range(500)}, 500),
        ({f"k{i}": '"' * 10 for i in range(4_000)}, 4_000),
        ({f"k{i}": '"' * 10 for i in range(20_000)}, 20_000),
    ],
)
def test_the_last_resort_fills_the_budget_after_escaping(data: dict[str, Any], budget: int) -> None:
    cut, _, _ = truncate(data, budget)
    text = json.dumps(cut, ensure_ascii=False)
    assert len(text) in (budget, budget - 1)  # a quote escapes to two: one may not fit
    assert text.startswith('{"truncated": true, "partial": "{\\"k0\\": \\"\\\\\\"')


def test_the_smallest_budget_keeps_the_flag_and_an_empty_partial() -> None:
    cut, size, truncated = truncate({"x": '"' * 100}, MIN_BUDGET)
    assert (cut, size, truncated) == ({"truncated": True, "partial": ""}, 209, True)
    assert _chars(cut) == MIN_BUDGET == 34


def test_a_budget_below_the_smallest_result_is_a_programmer_error() -> None:
    with pytest.raises(ValueError, match=r"budget of 33 is below 34"):
        truncate({"a": 1}, MIN_BUDGET - 1)
