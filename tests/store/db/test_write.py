"""``Database.write``: a short write transaction run to its end without a turn of the event
loop. On SQLite it commits on a thread of its own while the loop is blocked (the one write
lock never waits for a busy loop); on both databases it commits or rolls back whole."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from store.db.engine import Database
from store.schema import SeenEvent


def _add(session: Session, key: str) -> str:
    session.add(SeenEvent(key=key, created_at=datetime.now(UTC)))
    return key


async def _keys(db: Database) -> set[str]:
    async with db.reading() as session:
        return set(await session.scalars(select(SeenEvent.key)))


async def test_sqlite_commits_while_the_loop_is_blocked(tmp_path: Path) -> None:
    path = tmp_path / "socbot.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    await db.create()
    begun = threading.Event()

    def add(session: Session) -> str:
        begun.set()
        return _add(session, "k1")

    try:
        write = asyncio.create_task(db.write(add))
        assert await asyncio.to_thread(begun.wait, 10)
        other = sqlite3.connect(path, isolation_level=None)
        try:  # the loop does no turn from here until the row is seen committed
            deadline = time.monotonic() + 10
            seen = 0
            while not seen and time.monotonic() < deadline:
                seen = other.execute("SELECT count(*) FROM seen_events").fetchone()[0]
        finally:
            other.close()
        assert seen == 1  # committed by the writer alone; an async session needs the loop
        assert await write == "k1"
    finally:
        await db.close()


async def test_write_commits_its_result_or_nothing(any_db: Database) -> None:
    written: list[object] = []
    any_db.watch_writes(lambda: written.append(1))
    assert await any_db.write(_add, "kept") == "kept"
    assert written  # committed writes are announced as a session's are

    def half(session: Session) -> None:
        _add(session, "lost")
        session.flush()
        raise LookupError("refused half-way")

    with pytest.raises(LookupError):
        await any_db.write(half)
    assert await _keys(any_db) == {"kept"}
