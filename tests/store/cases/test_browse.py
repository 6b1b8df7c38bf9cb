"""The cases list's reads (``store.cases.browse``) on SQLite and PostgreSQL: what each view
keeps, the three orders, keyset pages that add up to the whole list, and who sees what."""

from __future__ import annotations

from store.cases import browse
from store.db.engine import Database
from store.investigations.browse import EVERYONE, Visibility
from store.schema import CaseStatus
from tests.store.cases.listed_rows import Spec, store

ME, OTHER = "U0ME00001", "U0OTHER01"
ACK, RESOLVED = CaseStatus.ACKNOWLEDGED, CaseStatus.RESOLVED
SPECS = [
    Spec(1, severity="low"),
    Spec(2, severity="critical", status=ACK, owner=ME),
    Spec(3, severity="high", status=ACK, owner=OTHER),
    Spec(4, severity=None),  # no severity yet
    Spec(5, severity="informational"),  # not a known word: with the unknown
    Spec(6, severity="critical"),
    Spec(7, severity="high", status=RESOLVED, owner=ME, disposition="benign"),
    Spec(8, severity="medium", channel="CTHEIRS1", status=ACK, owner=ME),
    Spec(9, severity="info", channel=None),  # a terminal run's
    Spec(10, severity="high", status=RESOLVED, disposition="false_positive"),
    Spec(11, severity="high", minutes=0.5),  # older than case 1
    Spec(12, severity="critical", status=ACK, owner=ME, minutes=-5),
]
MEMBER = Visibility(channels=frozenset({"CALERTS1"}), terminal=False)


async def ids(db: Database, seen: Visibility = EVERYONE, **kwargs: object) -> list[int]:
    found = await browse.page(db, seen, me=ME, size=100, **kwargs)  # type: ignore[arg-type]
    assert found.next_cursor is None
    return [r.id for r in found.rows]


async def test_views_orders_and_visibility(any_db: Database) -> None:
    await store(any_db, SPECS)
    # most severe first, then the oldest; then no severity and unknown words, oldest first
    assert await ids(any_db) == [12, 2, 6, 11, 3, 8, 1, 9, 4, 5]
    assert await ids(any_db, view="mine") == [12, 2, 8]
    assert await ids(any_db, view="unowned") == [6, 11, 1, 9, 4, 5]
    assert await ids(any_db, view="resolved") == [7, 10]
    assert await ids(any_db, order="oldest") == [12, 11, 1, 2, 3, 4, 5, 6, 8, 9]
    assert await ids(any_db, order="newest") == [9, 8, 6, 5, 4, 3, 2, 1, 11, 12]
    # a member: the cases of their channels only, never a terminal run's
    assert await ids(any_db, MEMBER) == [12, 2, 6, 11, 3, 1, 4, 5]
    assert await ids(any_db, MEMBER, view="mine") == [12, 2]
    assert await ids(any_db, Visibility(channels=frozenset(), terminal=False)) == []
    slack_only = Visibility(channels=None, terminal=False)
    assert 9 not in await ids(any_db, slack_only) and 8 in await ids(any_db, slack_only)
    first = (await browse.page(any_db, EVERYONE, me=ME, size=1)).rows[0]
    assert (first.title, first.owner, first.status) == ("Odd login number 12", ME, ACK)
    resolved = (await browse.page(any_db, EVERYONE, me=ME, view="resolved")).rows
    assert [(r.disposition, r.resolved_at is not None) for r in resolved] == [
        ("benign", True),
        ("false_positive", True),
    ]


async def test_pages_add_up_to_the_whole_list(any_db: Database) -> None:
    extra = [Spec(100 + k, severity="high") for k in range(7)]
    odd = [Spec(200 + k, severity=w) for k, w in enumerate(["AAA", "zzz", "zzz", "Huge"])]
    await store(any_db, [*SPECS, *extra, *odd])
    for order in browse.ORDERS:
        whole = await ids(any_db, order=order)
        for size in (1, 2, 3, 5):
            walked: list[int] = []
            cursor: str | None = None
            while True:
                found = await browse.page(
                    any_db, EVERYONE, me=ME, order=order, size=size, cursor=cursor
                )
                assert len(found.rows) <= size
                walked += [r.id for r in found.rows]
                cursor = found.next_cursor
                if cursor is None:
                    break
            assert walked == whole, (order, size)


async def test_a_cursor_not_ours_reads_the_first_page(any_db: Database) -> None:
    await store(any_db, SPECS)
    for cursor in ("junk", "MjAyNi0xMS0wMXwnOyBkcm9w", "%%%"):
        found = await browse.page(any_db, EVERYONE, me=ME, size=2, cursor=cursor)
        assert [r.id for r in found.rows] == [12, 2]


async def test_cases_opened_in_the_same_instant_are_paged_by_number(any_db: Database) -> None:
    same = [Spec(k, severity="high", minutes=7) for k in (31, 32, 33, 34)]
    await store(any_db, [*same, Spec(35, severity=None, minutes=7)])
    for order, whole in (
        ("severity", [31, 32, 33, 34, 35]),
        ("oldest", [31, 32, 33, 34, 35]),
        ("newest", [35, 34, 33, 32, 31]),
    ):
        walked: list[int] = []
        cursor: str | None = None
        while True:
            found = await browse.page(any_db, EVERYONE, me=ME, order=order, size=1, cursor=cursor)  # type: ignore[arg-type]
            walked += [r.id for r in found.rows]
            if (cursor := found.next_cursor) is None:
                break
        assert walked == whole, order
