"""The front's alert writer (``bot.transport.alert_writer``): alerts that arrive together
are committed in one transaction, none returns before its commit (however long another
holds SQLite's write lock, up to a bound), an alert the database
refuses fails alone, and a stopped writer says so instead of pretending to store.

A real SQLite file; another connection holds its write lock (as the app's transactions
do) so that alerts queue behind the first transaction."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from alerts.parse import Alert, parse_alert
from bot.transport.alert_writer import AlertWriter
from store.db.engine import Database
from store.triage.alerts import AlertStore


def alerts(n: int, first: int = 1) -> list[Alert]:
    return [
        parse_alert({"title": f"Impossible travel {i}", "src_ip": f"203.0.113.{i}"})
        for i in range(first, first + n)
    ]


@pytest.fixture
async def stored(db: Database) -> AsyncIterator[tuple[Database, AlertWriter, Path]]:
    path = Path(str(db.engine.url.database))
    writer = AlertWriter(str(db.engine.url))
    writer.start()
    await writer.ping()
    yield db, writer, path
    await asyncio.to_thread(writer.close)


async def rows(db: Database, batch: list[Alert]) -> set[str]:
    store = AlertStore(db)
    return {a.id for a in batch if await store.get(a.id) is not None}


async def test_waiting_alerts_go_together_and_none_returns_before_the_commit(
    stored: tuple[Database, AlertWriter, Path],
) -> None:
    db, writer, path = stored
    batch = alerts(12)
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the app holds the write lock
    try:
        saves = [asyncio.create_task(writer.save(batch[0]))]
        await asyncio.sleep(0.2)  # the first transaction waits for the lock
        saves += [asyncio.create_task(writer.save(a)) for a in batch[1:]]
        await asyncio.sleep(0.5)
        assert not any(s.done() for s in saves)  # no 202 for an alert not yet stored
        assert await rows(db, batch) == set()
    finally:
        lock.execute("COMMIT")
        lock.close()
    await asyncio.wait_for(asyncio.gather(*saves), 30)
    assert await rows(db, batch) == {a.id for a in batch}
    assert writer.transactions <= 2  # the first one, then all that waited behind it


async def test_an_alert_the_database_refuses_fails_only_its_own_save(
    stored: tuple[Database, AlertWriter, Path],
) -> None:
    db, writer, path = stored
    kept = alerts(1, first=50)[0]
    await AlertStore(db).save(kept, status="grouped")
    again = kept.model_copy(update={"title": "Sent again with a stored id"})
    batch = alerts(3)
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        first = asyncio.create_task(writer.save(alerts(1, first=60)[0]))
        await asyncio.sleep(0.2)
        saves = [asyncio.create_task(writer.save(a)) for a in (batch[0], again, *batch[1:])]
        await asyncio.sleep(0.2)
    finally:
        lock.execute("COMMIT")
        lock.close()
    await asyncio.wait_for(first, 30)
    results = await asyncio.wait_for(asyncio.gather(*saves, return_exceptions=True), 30)
    assert [type(r).__name__ for r in results] == ["Stored", "IntegrityError", *["Stored"] * 2]
    assert isinstance(results[1], IntegrityError)
    assert await rows(db, batch) == {a.id for a in batch}
    kept_now = await AlertStore(db).get(kept.id)
    assert kept_now is not None
    assert (kept_now.title, kept_now.status) == (kept.title, "grouped")


async def test_a_closed_writer_refuses_to_store(
    stored: tuple[Database, AlertWriter, Path],
) -> None:
    db, writer, _path = stored
    await asyncio.to_thread(writer.close)
    late = alerts(1)
    with pytest.raises(RuntimeError, match="not running"):
        await writer.save(late[0])
    assert await rows(db, late) == set()


async def test_a_lock_held_past_lock_wait_s_fails_the_save_and_stores_nothing(
    db: Database,
) -> None:
    path = Path(str(db.engine.url.database))
    writer = AlertWriter(str(db.engine.url), lock_wait_s=0.3)
    writer.start()
    late, later = alerts(2)
    lock = sqlite3.connect(path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(OperationalError, match="database is locked"):
            await asyncio.wait_for(writer.save(late), 30)
    finally:
        lock.execute("COMMIT")
        lock.close()
    try:
        await writer.save(later)  # the lock is free again: stored
        assert await rows(db, [late, later]) == {later.id}
    finally:
        await asyncio.to_thread(writer.close)
