"""``Database.reading``: on SQLite a deferred transaction, so a reader in one process never
takes the write lock another process (the acknowledging front) needs to store an alert,
and never waits for it; ``session`` still takes it (``BEGIN IMMEDIATE``)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from sqlalchemy import event, func, select

from store.db.engine import Database
from store.schema import AlertRow


async def test_a_reader_neither_takes_nor_waits_for_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "socbot.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    await db.create()
    begun: list[str] = []
    event.listen(
        db.engine.sync_engine,
        "before_cursor_execute",
        lambda *args: begun.append(args[2]) if args[2].startswith("BEGIN") else None,
    )
    other = sqlite3.connect(path, isolation_level=None)  # another process's writer
    try:
        other.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        async with db.reading() as session:
            assert await session.scalar(select(func.count()).select_from(AlertRow)) == 0
            # meanwhile the other writer may write and commit: the reader held no lock
            other.execute("COMMIT")
            other.execute("BEGIN IMMEDIATE")
            other.execute("COMMIT")
        assert time.monotonic() - started < 5  # not the 30 s busy timeout
        async with db.session() as session:
            await session.scalar(select(func.count()).select_from(AlertRow))
    finally:
        other.close()
        await db.close()
    assert begun == ["BEGIN", "BEGIN IMMEDIATE"]
