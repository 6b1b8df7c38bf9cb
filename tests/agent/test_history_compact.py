"""History's compaction, exactly: which turns stay whole, what the note says of the rest,
where each clip falls (``agent.history.compact``; pure, no database but for ``append``)."""

from __future__ import annotations

from google.genai import types

from agent.history import (
    COMPACTED_PREFIX,
    TRUNCATED_MARK,
    History,
    _clip,
    _first_line,
    _Line,
    compact,
)
from agent.history import _note as note_of
from config.settings import Limits
from store.db.engine import Database


def shown(contents: list[types.Content]) -> list[tuple[str | None, str]]:
    return [(c.role, "".join(p.text or "" for p in c.parts or [])) for c in contents]


def U(text: str) -> _Line:
    return _Line("user", text)


def M(text: str) -> _Line:
    return _Line("model", text)


def test_a_thread_exactly_at_the_budget_is_whole() -> None:
    lines = [U("q" * 60), M("a" * 40)]
    assert shown(compact(lines, 100)) == [("user", "q" * 60), ("model", "a" * 40)]


def test_old_turns_become_one_note_newest_first_within_its_budget() -> None:
    lines = [
        U("first question\nsecond line"),
        M("answer zero\nmore"),
        U("q" * 200),
        M("short answer"),
        U("z" * 300),
        M("w" * 280),
    ]
    # budget 800: a note of 200, 600 for recent turns (280 + 300 + 12 fit; the kept part
    # starts on the next question, so the short answer goes to the note with its question)
    assert shown(compact(lines, 800)) == [
        ("user", f"{COMPACTED_PREFIX} (3 older messages omitted)\nA: short answer"),
        ("user", "z" * 300),
        ("model", "w" * 280),
    ]


def test_recent_turns_fill_their_budget_exactly() -> None:
    lines = [U("old question\n" + "o" * 200), M("old answer"), U("q" * 400), M("a" * 200)]
    # budget 800: 600 for recent turns, filled exactly by the last two
    assert shown(compact(lines, 800)) == [
        ("user", f"{COMPACTED_PREFIX}\nQ: old question\nA: old answer"),
        ("user", "q" * 400),
        ("model", "a" * 200),
    ]


def test_one_turn_over_the_budget_is_clipped_in_equal_shares() -> None:
    lines = [U("u" * 1000), M("m" * 1000)]
    share = (400 - 400 // 4) // 2  # 150 each
    keep = share - len(TRUNCATED_MARK)
    assert shown(compact(lines, 400)) == [
        ("user", "u" * keep + TRUNCATED_MARK),
        ("model", "m" * keep + TRUNCATED_MARK),
    ]
    older = [U("before"), M("earlier"), *lines]
    assert shown(compact(older, 400))[1:] == shown(compact(lines, 400))
    assert shown(compact([M("m" * 1000)], 400)) == [
        ("model", "m" * (300 - len(TRUNCATED_MARK)) + TRUNCATED_MARK)
    ]


def test_the_note_keeps_each_message_first_line_clipped_by_role() -> None:
    note = note_of([U("\n  " + "q" * 200 + "\nrest"), M("a" * 300)], 1000)
    assert note.split("\n") == [
        COMPACTED_PREFIX,
        "Q: " + "q" * (160 - len(TRUNCATED_MARK)) + TRUNCATED_MARK,
        "A: " + "a" * (240 - len(TRUNCATED_MARK)) + TRUNCATED_MARK,
    ]
    assert note_of([], 1000) == ""


def test_the_note_budget_is_exact() -> None:
    entries = [U("x" * 7), M("y" * 7)]  # "Q: xxxxxxx" and "A: yyyyyyy", 10 each
    room = len(COMPACTED_PREFIX) + 40
    both = note_of(entries, room + 22)
    assert both == f"{COMPACTED_PREFIX}\nQ: {'x' * 7}\nA: {'y' * 7}"
    one = note_of(entries, room + 21)
    assert one == f"{COMPACTED_PREFIX} (1 older messages omitted)\nA: {'y' * 7}"
    assert note_of(entries, room + 10) == f"{COMPACTED_PREFIX} (2 older messages omitted)"


def test_clip_and_first_line_edges() -> None:
    assert _clip("abcdef", 6) == "abcdef"
    assert _clip("abcdefg", 6) == TRUNCATED_MARK
    assert _clip("x" * 20, 15) == "xx" + TRUNCATED_MARK
    assert _first_line("\n\n  hello  \nworld", 100) == "hello"
    assert _first_line("   \n\t\n", 10) == ""


async def test_a_turn_is_stored_as_a_question_and_an_answer(db: Database) -> None:
    history = History(db, Limits())
    await history.append("slack:C1:1.0", "what is this?", "benign: a scanner", None)
    stored = await history.messages("slack:C1:1.0")
    assert [(m.role, m.content) for m in stored] == [
        ("user", "what is this?"),
        ("model", "benign: a scanner"),
    ]
