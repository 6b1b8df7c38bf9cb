"""History: only what was appended, in order, bounded however long the thread grows."""

from __future__ import annotations

import pytest
from google.genai import types

from agent.history import COMPACTED_PREFIX, History
from config.settings import Limits
from store.db.engine import Database


def text_of(content: types.Content) -> str:
    assert content.parts is not None
    return "".join(part.text or "" for part in content.parts)


def total_chars(contents: list[types.Content]) -> int:
    return sum(len(text_of(c)) for c in contents)


def conclusion(n: int) -> str:
    return f"Verdict for turn {n}: benign\n" + "Evidence line. " * 60


async def test_empty_thread_has_no_history(db: Database) -> None:
    assert await History(db, Limits()).load("nothing-here") == []


async def test_short_thread_is_returned_whole_and_in_order(db: Database) -> None:
    history = History(db, Limits())
    await history.append("t1", "is 185.220.101.42 bad?", "It is a Tor exit node.", None)
    await history.append("t1", "and 10.0.0.5?", "Internal address, not in intel.", "inv2")
    await history.append("t2", "other thread", "other answer", None)

    contents = await history.load("t1")
    assert [(c.role, text_of(c)) for c in contents] == [
        ("user", "is 185.220.101.42 bad?"),
        ("model", "It is a Tor exit node."),
        ("user", "and 10.0.0.5?"),
        ("model", "Internal address, not in intel."),
    ]
    stored = await history.messages("t1")
    assert [m.investigation_id for m in stored] == [None, None, "inv2", "inv2"]


async def test_fifty_turns_stay_within_budget(db: Database) -> None:
    limits = Limits(history_chars=6000)
    history = History(db, limits)
    for n in range(50):
        await history.append("long", f"question {n}\nmore detail", conclusion(n), f"inv{n}")

    contents = await history.load("long")

    assert total_chars(contents) <= limits.history_chars
    note = text_of(contents[0])
    assert contents[0].role == "user"
    assert note.startswith(COMPACTED_PREFIX)
    # The newest turn is intact and last; the kept part alternates user/model.
    assert text_of(contents[-1]) == conclusion(49)
    assert text_of(contents[-2]) == "question 49\nmore detail"
    assert [c.role for c in contents[1:]] == ["user", "model"] * ((len(contents) - 1) // 2)
    # Compacted turns keep only first lines, newest of them last.
    assert "Evidence line." not in note
    kept_questions = [text_of(c) for c in contents[1::2]]
    first_kept = int(kept_questions[0].split()[1].strip())
    assert f"A: Verdict for turn {first_kept - 1}: benign" in note
    assert f"Q: question {first_kept - 1}" in note


@pytest.mark.parametrize("turns", [10, 50, 120])
async def test_budget_holds_for_any_length(db: Database, turns: int) -> None:
    limits = Limits(history_chars=2000)
    history = History(db, limits)
    for n in range(turns):
        await history.append("t", f"q{n}", conclusion(n), None)
    contents = await history.load("t")
    assert total_chars(contents) <= limits.history_chars
    assert text_of(contents[0]).startswith(COMPACTED_PREFIX)


async def test_one_huge_turn_is_clipped(db: Database) -> None:
    limits = Limits(history_chars=2000)
    history = History(db, limits)
    await history.append("big", "x" * 10_000, "y" * 10_000, None)
    contents = await history.load("big")
    assert [c.role for c in contents] == ["user", "model"]
    assert total_chars(contents) <= limits.history_chars
    assert text_of(contents[0]).startswith("xxx")
    assert text_of(contents[1]).endswith("[truncated]")
