"""The DuckDB pool's kill paths, on the pool alone: real worker processes over a
three-row CSV, no log tools, no SQL guard.

Each way a query ends early kills exactly the worker that ran it (SIGKILL, reaped, both
pipes closed, gone from the process table and from the pool) and leaves one fresh,
warm worker that answers the next query: its own time limit, a cancel (a Slack "stop",
Ctrl-C: ``CancelledError``, a ``BaseException``), the step's deadline, a worker that
does not start in time, an answer over the reply limit, an out-of-memory answer, and
``close``. The running query is waited for by its pipe lock, never by a sleep; the
bounds are upper bounds only. ``test_duckdb_logs.py`` and ``test_hostile_sql.py`` run
the same paths through the log tools; this file and ``test_duckdb_pool_workers.py``
let the mutation group ``duckdb_pool`` check a mutant in seconds.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.tools.duckdb_pool_support import (
    BOUND,
    COUNT,
    COUNTED,
    HEAVY,
    KILLED,
    REPLY_LIMIT,
    SCHEMAS,
    discarded,
    events_config_fixture,  # noqa: F401  (the module's ``config`` fixture)
    killed,
    overruns,
    replaced,
    request,
    running,
    until,
    warm,
)
from tools.logs import duckdb_pool
from tools.logs.duckdb_pool import DuckDBPool, WorkerFailed


@pytest.fixture
def pool(config: dict[str, Any]) -> Iterator[DuckDBPool]:
    pool = DuckDBPool(config, size=1, reply_limit=REPLY_LIMIT)
    yield pool
    pool.close()


async def test_a_worker_answers_and_stays_for_the_next_query(pool: DuckDBPool) -> None:
    worker = await warm(pool)
    assert pool.pids() == [worker.pid] and worker.proc.returncode is None
    assert await pool.query(request("SELECT 7 AS n"), BOUND) == {
        "columns": ["n"], "rows": [[7]], "truncated_by": None, "bytes": 3
    }  # fmt: skip
    assert pool._live == {worker} and pool._idle == [worker]
    assert await pool.describe() == SCHEMAS


async def test_its_own_time_limit_kills_exactly_that_worker(pool: DuckDBPool) -> None:
    worker = await warm(pool)
    await overruns(pool.query(request(HEAVY), 0.3))
    await discarded(pool, worker)
    await replaced(pool, worker)


async def test_a_cancel_kills_the_worker_running_the_query(pool: DuckDBPool) -> None:
    """A Slack "stop" or Ctrl-C: ``CancelledError`` is no ``Exception``, yet it kills."""
    task = asyncio.create_task(pool.query(request(HEAVY), 600))
    worker = await running(pool, task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await discarded(pool, worker)
    await replaced(pool, worker)


async def test_the_step_deadline_kills_the_worker_running_the_query(pool: DuckDBPool) -> None:
    await warm(pool)
    (worker,) = pool._live
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.5):
            await pool.query(request(HEAVY), 600)
    assert time.monotonic() - started < BOUND
    await discarded(pool, worker)
    await replaced(pool, worker)


async def test_a_query_takes_a_ready_worker_before_a_starting_one(
    config: dict[str, Any],
) -> None:
    pool = DuckDBPool(config, size=2, reply_limit=REPLY_LIMIT)
    try:
        both = await asyncio.gather(*(pool.query(request(COUNT), BOUND) for _ in "ab"))
        assert both == [COUNTED, COUNTED]
        first, second = pool._idle
        await overruns(pool.query(request(HEAVY), 0.3))
        await discarded(pool, first)
        assert pool._idle[0] is second and pool._idle[1].ready is None  # the replacement
        task = asyncio.create_task(pool.query(request(HEAVY), 600))
        assert await running(pool, task) is second
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await discarded(pool, second)
    finally:
        pool.close()


async def test_a_limit_kills_only_its_own_worker(config: dict[str, Any]) -> None:
    pool = DuckDBPool(config, size=2, reply_limit=REPLY_LIMIT)
    try:
        long = asyncio.create_task(pool.query(request(HEAVY), 600))
        first = await running(pool, long)
        short = asyncio.create_task(pool.query(request(HEAVY), 0.5))
        second = await running(pool, short, first)
        await overruns(short)
        await discarded(pool, second)
        assert first.proc.returncode is None and first in pool._live and not long.done()
        assert len(pool._live) == 2 and len(pool._idle) == 1  # a warm replacement
        long.cancel()
        with pytest.raises(asyncio.CancelledError):
            await long
        await discarded(pool, first)
        assert len(pool._live) == 2 and len(pool._idle) == 2
        assert not {first, second} & pool._live
    finally:
        pool.close()


async def test_a_query_waits_for_the_one_slot(pool: DuckDBPool) -> None:
    heavy = asyncio.create_task(pool.query(request(HEAVY), 600))
    worker = await running(pool, heavy)
    count = asyncio.create_task(pool.query(request(COUNT), BOUND))
    for _ in range(20):  # the counting query would have taken a worker by now
        await asyncio.sleep(0)
    assert not count.done() and pool._live == {worker} and pool._idle == []
    heavy.cancel()
    with pytest.raises(asyncio.CancelledError):
        await heavy
    assert await count == COUNTED
    await discarded(pool, worker)
    assert len(pool._live) == 1 and worker not in pool._live


async def test_an_answer_over_the_reply_limit_kills_the_worker(pool: DuckDBPool) -> None:
    worker = await warm(pool)
    with pytest.raises(WorkerFailed, match=f"^the answer was larger than {REPLY_LIMIT} bytes$"):
        await pool.query(request("SELECT repeat('x', 5000) AS s", 10_000), BOUND)
    await discarded(pool, worker)
    await replaced(pool, worker)


async def test_an_out_of_memory_answer_discards_the_worker(pool: DuckDBPool) -> None:
    worker = await warm(pool)
    reply = await pool.query(request("SELECT len(range(150000000)) AS n"), BOUND)
    assert set(reply) == {"error", "kind"} and reply["kind"] == "memory"
    assert reply["error"].startswith("Out of Memory Error: ")
    await discarded(pool, worker, 0, KILLED)  # it exits by itself too: whichever came first
    await replaced(pool, worker)


async def test_the_reaper_never_holds_up_the_interpreter(pool: DuckDBPool) -> None:
    worker = await warm(pool)
    with worker._io:  # a reader still on the pipe: the reaper waits for it to let go
        worker.kill()
        reapers = [t for t in threading.enumerate() if t.name.endswith("(_reap)")]
        assert reapers and all(t.daemon for t in reapers)
    await killed(worker)


async def test_a_worker_that_does_not_start_in_time_is_killed(
    pool: DuckDBPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    (starting,) = pool._live
    with monkeypatch.context() as patch:
        patch.setattr(duckdb_pool, "STARTUP_TIMEOUT_S", 0.001)
        with pytest.raises(WorkerFailed, match=r"^the worker did not start within 0\.001s$"):
            await pool.query(request(COUNT), BOUND)
    await discarded(pool, starting)
    assert pool.schemas is None
    await replaced(pool, starting)
    assert pool.schemas == SCHEMAS


async def test_a_cancel_while_describing_kills_the_starting_worker(pool: DuckDBPool) -> None:
    (starting,) = pool._live
    task = asyncio.create_task(pool.describe())
    await until(lambda: not pool._idle)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await discarded(pool, starting)
    assert await pool.describe() == SCHEMAS
    await replaced(pool, starting)


async def test_close_kills_every_worker_and_refuses_new_ones(config: dict[str, Any]) -> None:
    pool = DuckDBPool(config, size=2, reply_limit=REPLY_LIMIT)
    await warm(pool)
    task = asyncio.create_task(pool.query(request(HEAVY), 600))
    busy = await running(pool, task)
    assert await pool.query(request(COUNT), BOUND) == COUNTED  # on a second worker
    (idle,) = pool._live - {busy}
    assert pool._idle == [idle]
    pool.close()
    with pytest.raises(WorkerFailed, match=r"^the worker process ended without answering$"):
        await task
    await discarded(pool, idle)
    await discarded(pool, busy)
    assert pool.pids() == [] and pool._idle == []
    with pytest.raises(WorkerFailed, match=r"^the log store is closed$"):
        await pool.query(request(COUNT), BOUND)
    assert pool.pids() == []


async def test_a_pool_dropped_unclosed_kills_its_workers(config: dict[str, Any]) -> None:
    pool = DuckDBPool(config, size=1, reply_limit=REPLY_LIMIT)
    worker = await warm(pool)
    del pool
    gc.collect()
    await killed(worker)
