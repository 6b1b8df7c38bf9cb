"""What the DuckDB pool's tests share: a three-row CSV (invented for the tests), queries
with known answers, a query only a kill ends, and waits on the pool's own state (the
pipe lock, the pipes closing), each bounded, never a sleep standing in for an event."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tools.logs.duckdb_pool import DuckDBPool, _Worker

REPLY_LIMIT = 4096
BOUND = 10.0  # seconds: an upper bound only (a loaded 2-core machine), never a wait
# minutes on one thread: only a kill ends it
HEAVY = "SELECT count(*) FROM range(1000000000000) t(i) WHERE i % 7 = 3"
COUNT = "SELECT count(*) AS n, max(host) AS last FROM events"
COUNTED = {"columns": ["n", "last"], "rows": [[3, "web-3"]], "truncated_by": None, "bytes": 12}
SCHEMAS = {"events": [["host", "VARCHAR"], ["port", "BIGINT"]]}
KILLED = -signal.SIGKILL


def events_config(directory: Path) -> dict[str, Any]:
    """A worker configuration: one view over a three-row CSV written in ``directory``."""
    data = directory / "events.csv"
    data.write_text("host,port\nweb-1,22\nweb-2,443\nweb-3,8080\n")
    views = [["events", "read_csv_auto", [str(data)]]]
    return {"views": views, "memory_mb": 64, "headroom_mb": 64, "threads": 1}


@pytest.fixture(name="config")
def events_config_fixture(tmp_path: Path) -> dict[str, Any]:
    """The test's ``config`` (import it into the test module): ``events_config``."""
    return events_config(tmp_path)


def request(sql: str, max_bytes: int = 2000) -> dict[str, Any]:
    return {"sql": sql, "row_limit": 10, "max_bytes": max_bytes}


async def warm(pool: DuckDBPool) -> _Worker:
    """The pool's one worker, once it has answered a query."""
    assert await pool.query(request(COUNT), BOUND) == COUNTED
    (worker,) = pool._live
    return worker


async def until(done: Callable[[], object]) -> None:
    """Wait, at most ``BOUND``, for ``done()``: state a thread or a process changes."""
    async with asyncio.timeout(BOUND):
        while True:
            if done():
                return
            await asyncio.sleep(0.01)


async def running(pool: DuckDBPool, task: asyncio.Task[Any], *others: _Worker) -> _Worker:
    """The started worker (not in ``others``) holding its pipe: the query is on its way."""

    def busy() -> list[_Worker]:
        assert not task.done()
        return [w for w in pool._live - set(others) if w.ready is not None and w._io.locked()]

    await until(busy)
    (worker,) = busy()
    return worker


async def killed(worker: _Worker, *codes: int) -> None:
    """``worker`` was reaped with one of ``codes``, its pipes closed, its pid gone."""
    stdin, stdout = worker.proc.stdin, worker.proc.stdout
    assert stdin is not None and stdout is not None
    await until(lambda: stdin.closed and stdout.closed)
    assert worker.proc.returncode in (codes or (KILLED,))
    with pytest.raises(ProcessLookupError):
        os.kill(worker.pid, 0)


async def discarded(pool: DuckDBPool, worker: _Worker, *codes: int) -> None:
    """``worker`` is out of ``pool`` at once, and ``killed``."""
    assert worker not in pool._live
    await killed(worker, *codes)


async def overruns(query: Awaitable[Any]) -> None:
    """``query`` raises ``TimeoutError`` at its own limit, well before ``BOUND`` (whose
    own ``TimeoutError`` would come too late to pass)."""
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(BOUND):
            await query
    assert time.monotonic() - started < BOUND


async def replaced(pool: DuckDBPool, old: _Worker) -> None:
    """One fresh worker instead of ``old``, and it answers the next query."""
    (fresh,) = pool._live
    assert fresh is not old and pool.pids() == [fresh.pid] != [old.pid]
    assert await pool.query(request(COUNT), BOUND) == COUNTED
    assert pool._live == {fresh}
