"""What the assistant pane may show (``bot.events._pane_rules``): only what comes from a
channel the person is a member of; Slack's context and a person's words read as shapes."""

from __future__ import annotations

from typing import Any

import pytest

from bot.events._pane_rules import case_named, context_of, visible, visible_channels

ME, OTHER = "UANALYST1", "UOTHER001"


def test_a_member_sees_their_channel_and_nobody_else_does() -> None:
    assert visible(ME, "CALERTS01", {ME, OTHER})
    assert visible(ME, "GPRIVATE1", {ME})  # a private channel, same rule
    assert not visible(ME, "CALERTS01", {OTHER})
    assert not visible(ME, "CALERTS01", set())  # Slack could not say: nobody
    assert not visible("", "CALERTS01", {""})  # no person: nothing
    assert not visible(ME, "", {ME})
    assert not visible(ME, None, {ME})
    assert not visible(ME, "DPANE0001", {ME})  # a DM is no alert channel
    assert not visible(ME, "CA", {ME}) and visible(ME, "CAB", {ME})  # channel ids' lengths
    assert visible(ME, "C" + "A" * 20, {ME}) and not visible(ME, "C" + "A" * 21, {ME})
    assert not visible(ME, "calerts01", {ME})
    assert not visible(ME, "CALERTS01 ", {ME})


def test_visible_channels_keep_order_and_drop_repeats_and_strangers() -> None:
    members = {"CA1": {ME}, "CB2": {OTHER}, "CC3": {ME, OTHER}}
    found = visible_channels(ME, ["CC3", None, "CB2", "CA1", "CC3", "CZ9", ""], members)
    assert found == ["CC3", "CA1"]
    assert visible_channels(OTHER, ["CA1"], members) == []


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"channel_id": "CALERTS01", "team_id": "T1"}, ("CALERTS01", None)),
        (
            {"channel_id": "CALERTS01", "thread_ts": "1700000100.000100"},
            ("CALERTS01", "1700000100.000100"),
        ),
        ({"channel_id": "CALERTS01", "thread_ts": "1700000100"}, ("CALERTS01", None)),
        ({"channel_id": "CALERTS01", "thread_ts": 1700000100.1}, ("CALERTS01", None)),
        ({"channel_id": "CALERTS01", "thread_ts": "1.2 OR 1=1"}, ("CALERTS01", None)),
        ({"channel_id": "<#CALERTS01>"}, None),
        ({"channel_id": "DPANE0001"}, None),
        ({"channel_id": ["CALERTS01"]}, None),
        ({}, None),
        (None, None),
        ("CALERTS01", None),
    ],
)
def test_slacks_context_is_read_as_a_shape(payload: Any, expected: Any) -> None:
    assert context_of(payload) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("where does case #12 stand?", 12),
        ("Case #7", 7),
        ("case#3 please", 3),
        ("case  #45", 45),
        ("suitcase #4", None),
        ("showcase #4 of 2", None),
        ("case #", None),
        ("case 12", None),
        ("case #1234567890", None),  # no id that long
        ("nothing here", None),
    ],
)
def test_a_question_names_a_case_by_its_number(text: str, expected: int | None) -> None:
    assert case_named(text) == expected
