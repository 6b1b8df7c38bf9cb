"""The DuckDB pool's worker processes at their edges, on the pool alone: what a worker
inherits (the allowlisted environment, the project as its directory, no stderr, its own
session), a worker that died while idle, one that cannot open the store, one that breaks
the protocol, and a pool used from one event loop after another. The kill paths
themselves are ``test_duckdb_pool_kill.py``'s.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.duckdb_pool_support import (
    BOUND,
    COUNT,
    COUNTED,
    KILLED,
    REPLY_LIMIT,
    discarded,
    events_config_fixture,  # noqa: F401  (the module's ``config`` fixture)
    replaced,
    request,
    until,
    warm,
)
from tools.logs import duckdb_pool
from tools.logs.duckdb_pool import DuckDBPool, WorkerFailed, _worker_env


async def test_workers_get_the_allowlisted_environment_only(
    config: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.chdir(tmp_path)  # the worker runs from the project, wherever we are
    path = os.environ["PATH"]
    allowed = {"PATH": path, "HOME": "/home/socbot", "LANG": "C.UTF-8", "SYSTEMROOT": "C:\\W"}
    for name, value in allowed.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TZ", raising=False)
    secrets = {"GEMINI_API_KEY": "AIza-not-a-real-key", "SLACK_BOT_TOKEN": "xoxb-not-real"}
    for name, value in {**secrets, "PYTHONPATH": "/tmp/evil", "MALLOC_ARENA_MAX": "8"}.items():
        monkeypatch.setenv(name, value)
    expected = {**allowed, "MALLOC_ARENA_MAX": "2"}
    assert _worker_env() == expected
    monkeypatch.setenv("TZ", "UTC")
    assert _worker_env() == {**expected, "TZ": "UTC"}
    caplog.set_level(logging.DEBUG, logger="tools.logs.duckdb_pool")
    pool = DuckDBPool(config, size=1, reply_limit=REPLY_LIMIT)
    try:
        worker = await warm(pool)
        logged = [m for name, _, m in caplog.record_tuples if name == duckdb_pool.__name__]
        assert logged == [f"started DuckDB worker {worker.pid}"]
        environ = await asyncio.to_thread(Path(f"/proc/{worker.pid}/environ").read_bytes)
        pairs = [item.split(b"=", 1) for item in environ.split(b"\0") if item]
        assert {k.decode(): v.decode() for k, v in pairs} == {**expected, "TZ": "UTC"}
        # the worker runs the tools package next to this pool (a mutated copy's own)
        assert os.readlink(f"/proc/{worker.pid}/cwd") == str(duckdb_pool.ROOT)
        assert os.readlink(f"/proc/{worker.pid}/fd/2") == os.devnull  # no stderr noise
        # its own session: a terminal's Ctrl-C reaches the parent, which kills it
        assert os.getsid(worker.pid) == worker.pid
    finally:
        pool.close()


async def test_a_worker_killed_while_idle_fails_one_query_and_is_replaced(
    config: dict[str, Any],
) -> None:
    pool = DuckDBPool(config, size=1, reply_limit=REPLY_LIMIT)
    try:
        worker = await warm(pool)
        os.kill(worker.pid, signal.SIGKILL)  # the kernel's out-of-memory killer, say
        await until(lambda: worker.proc.poll() is not None)
        with pytest.raises(WorkerFailed, match=r"^the worker process is gone$"):
            await pool.query(request(COUNT), BOUND)
        await discarded(pool, worker)  # its unsent request goes with the pipe, quietly
        await replaced(pool, worker)
    finally:
        pool.close()


async def test_a_worker_that_cannot_open_the_store_says_why(
    config: dict[str, Any], tmp_path: Path
) -> None:
    config["views"] = [["events", "read_csv_auto", [str(tmp_path / "gone.csv")]]]
    pool = DuckDBPool(config, size=1, reply_limit=REPLY_LIMIT)
    try:
        (worker,) = pool._live
        with pytest.raises(WorkerFailed) as failed:
            await pool.query(request(COUNT), BOUND)
        assert str(failed.value).startswith("the log store could not open its files: ")
        assert "gone.csv" in str(failed.value)
        await discarded(pool, worker, 0, KILLED)  # it exits by itself too
        assert len(pool._live) == 1
    finally:
        pool.close()


# A stand-in worker that answers a query with a list: the real one cannot be made to.
NOT_AN_OBJECT = """import sys
sys.stdin.readline()
print('{"ready": true, "schemas": {}}', flush=True)
for line in sys.stdin:
    print("[]", flush=True)
"""


async def test_a_worker_that_breaks_the_protocol_is_killed(
    config: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(duckdb_pool, "_COMMAND", [sys.executable, "-c", NOT_AN_OBJECT])
    pool = DuckDBPool(config, size=1, reply_limit=REPLY_LIMIT)
    try:
        (worker,) = pool._live
        message = "^the worker answered something other than an object$"
        with pytest.raises(WorkerFailed, match=message):
            await pool.query(request(COUNT), BOUND)
        await discarded(pool, worker)
        assert len(pool._live) == 1
    finally:
        pool.close()


def test_each_event_loop_gets_its_own_slots(config: dict[str, Any]) -> None:
    pool = DuckDBPool(config, size=1, reply_limit=REPLY_LIMIT)

    async def two() -> list[dict[str, Any]]:  # the second waits for the one slot
        return await asyncio.gather(*(pool.query(request(COUNT), BOUND) for _ in "ab"))

    try:
        assert asyncio.run(two()) == [COUNTED, COUNTED]
        assert asyncio.run(two()) == [COUNTED, COUNTED]  # a second loop, e.g. a CLI's
        assert len(pool._live) == 1
    finally:
        pool.close()
