"""Who opened their App Home lately (``store.cases.home_openers``), on SQLite and
PostgreSQL: one row a person moved forward on each opening, read newest first within a
window and up to a limit."""

from __future__ import annotations

from datetime import timedelta

from store.cases.home_openers import opened, recent
from store.db.engine import Database
from store.schema import utcnow

HOUR = timedelta(hours=1)


async def test_newest_first_within_the_window_and_the_limit(any_db: Database) -> None:
    now = utcnow()
    for user, ago in (("UANA00001", 30), ("UBOB00001", 3600), ("UCAT00001", 3601)):
        await opened(any_db, user, at=now - timedelta(seconds=ago))
    await opened(any_db, "UDAN00001", at=now - timedelta(seconds=10))
    assert await recent(any_db, HOUR, 10, now=now) == ["UDAN00001", "UANA00001", "UBOB00001"]
    assert await recent(any_db, HOUR, 2, now=now) == ["UDAN00001", "UANA00001"]
    assert await recent(any_db, timedelta(seconds=5), 10, now=now) == []


async def test_opening_again_moves_a_person_forward_not_twice(any_db: Database) -> None:
    now = utcnow()
    await opened(any_db, "UANA00001", at=now - timedelta(seconds=50))
    await opened(any_db, "UBOB00001", at=now - timedelta(seconds=20))
    await opened(any_db, "UANA00001", at=now - timedelta(seconds=5))
    assert await recent(any_db, HOUR, 10, now=now) == ["UANA00001", "UBOB00001"]
    await opened(any_db, "UCAT00001")  # now, by default
    assert (await recent(any_db, HOUR, 10))[0] == "UCAT00001"
