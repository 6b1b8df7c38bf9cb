"""The SQLite turn: one session of the process at a time, sessions before background
writes (the trace's batches), handed over in order, and a cancelled waiter neither keeps
nor loses the turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import func, select

from store.db.engine import Database, Turn
from store.schema import AlertRow


async def test_waiting_sessions_go_before_background_writes(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}")
    await db.create()
    order: list[str] = []
    release = asyncio.Event()

    async def holder() -> None:
        async with db.session():
            order.append("holder")
            await release.wait()

    async def one(name: str, background: bool) -> None:
        opened = db.background() if background else db.session()
        async with opened as session:
            await session.scalar(select(func.count()).select_from(AlertRow))
            order.append(name)

    try:
        first = asyncio.create_task(holder())
        await asyncio.sleep(0.05)
        tasks = [asyncio.create_task(one("trace1", True))]
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(one("session1", False)))
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(one("trace2", True)))
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(one("session2", False)))
        await asyncio.sleep(0.05)
        assert order == ["holder"]  # everyone waits for the turn
        release.set()
        await asyncio.gather(first, *tasks)
    finally:
        await db.close()
    assert order == ["holder", "session1", "session2", "trace1", "trace2"]


async def test_a_cancelled_waiter_leaves_the_queue_and_a_handed_turn_passes_on() -> None:
    turn = Turn()
    await turn.acquire()
    waiting = asyncio.create_task(turn.acquire())
    later = asyncio.create_task(turn.acquire(background=True))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    turn.release()  # the cancelled waiter is skipped: the background one has it
    await asyncio.wait_for(later, 1)
    handed = asyncio.create_task(turn.acquire())
    await asyncio.sleep(0)
    turn.release()  # handed to ``handed`` ...
    handed.cancel()  # ... which is cancelled before it runs: it passes the turn on
    with pytest.raises(asyncio.CancelledError):
        await handed
    await asyncio.wait_for(turn.acquire(), 1)  # free again, not stuck as held
    turn.release()
    await asyncio.wait_for(turn.acquire(background=True), 1)
