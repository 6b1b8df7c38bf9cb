"""The front's alert inserts: one writer, on a thread and an event loop of its own.

Each ``POST /alerts`` used to open a session of its own on the front's loop. On SQLite a
process's sessions take turns (``store.db.engine``) and each transaction took the file's
write lock (``BEGIN IMMEDIATE``) before waiting, statement by statement, for the front's
loop, which was parsing the next alerts meanwhile: under load the lock was held for
hundreds of milliseconds (the app's writes waited for it), the turns queued, and a storm's
202s grew to seconds (p99 16 s at load 8, 500 alerts in 60 s).

``AlertWriter.save(alert)`` hands the parsed alert to the writer's loop, which does
nothing but write: every alert waiting when it is free goes in one transaction of one
``INSERT`` (a group commit, ``AlertStore.insert_received``), so the write lock is held for
the insert alone, and each caller returns once that transaction is committed — a 202 is
still only said of an alert stored ``received``. A transaction that fails is tried again
alert by alert, so one alert the database refuses fails only its own request (a 500,
never a 202), never the others written with it.

On SQLite the app's transactions hold the write lock across turns of its busy loop, and
SQLite's own busy handler, waiting for it, sleeps ever longer (up to 100 ms between
tries): the writer's connection waits at most ``LOCK_POLL_MS`` inside SQLite, then tries
again at once, for up to ``lock_wait_s`` in all (the engine's usual 30 s).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from alerts.parse import Alert
from store.db.engine import BUSY_TIMEOUT_MS, Database
from store.triage.alerts import AlertStore

log = logging.getLogger(__name__)

MAX_BATCH = 100  # alerts in one transaction
START_TIMEOUT_S = 30.0
LOCK_POLL_MS = 20  # SQLite's busy handler tries at 0, 1, 3, 8, 18 and 20 ms
LOCK_WAIT_S = BUSY_TIMEOUT_MS / 1000


@dataclass(frozen=True)
class Stored:
    """How an alert's write went (monotonic seconds): handed to the writer, taken in a
    batch of ``batch``, committed — ``Server-Timing`` on the 202 says it."""

    sent: float
    taken: float
    committed: float
    batch: int


_Waiting = tuple[Alert, float, "concurrent.futures.Future[Stored]"]


class AlertWriter:
    """Stores alerts as ``received`` from a thread of its own (see the module docstring)."""

    def __init__(self, database_url: str, *, lock_wait_s: float = LOCK_WAIT_S) -> None:
        self.database_url = database_url
        self.lock_wait_s = lock_wait_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Waiting | None] | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._db: Database | None = None
        self.transactions = 0  # committed (tests, logs)

    def start(self) -> None:
        """Start the writer's thread (its database is reached by the first write)."""
        self._thread = threading.Thread(target=self._run, name="alert writer", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise RuntimeError("the alert writer did not start")

    async def save(self, alert: Alert) -> Stored:
        """Return once ``alert`` is committed as ``received`` (raise when it is not)."""
        done: concurrent.futures.Future[Stored] = concurrent.futures.Future()
        self._send((alert, time.monotonic(), done))
        return await asyncio.wrap_future(done)

    async def ping(self) -> None:
        """One ``SELECT 1`` through the writer's engine (opens its connection)."""
        assert self._loop is not None
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._ping(), self._loop))

    def close(self) -> None:
        """Write what is waiting, then stop the thread and let the engine go."""
        if self._thread is None:
            return
        self._send(None)
        self._thread.join(START_TIMEOUT_S)
        self._thread = None

    def _send(self, item: _Waiting | None) -> None:
        if self._loop is None or self._loop.is_closed():
            raise RuntimeError("the alert writer is not running")
        self._loop.call_soon_threadsafe(self._put, item)

    def _put(self, item: _Waiting | None) -> None:
        assert self._queue is not None
        self._queue.put_nowait(item)

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        db = Database(self.database_url, busy_timeout_ms=LOCK_POLL_MS)
        self._db = db
        store = AlertStore(db)
        self._ready.set()
        try:
            stopping = False
            while not stopping:
                batch: list[_Waiting] = []
                item = await self._queue.get()
                while item is not None:
                    batch.append(item)
                    if len(batch) >= MAX_BATCH or self._queue.empty():
                        break
                    item = self._queue.get_nowait()
                stopping = item is None
                if batch:
                    await self._write(store, batch)
        finally:
            while not self._queue.empty():  # sent as it stopped: said, never left waiting
                left = self._queue.get_nowait()
                if left is not None:
                    left[2].set_exception(RuntimeError("the alert writer is not running"))
            await db.close()

    async def _write(self, store: AlertStore, batch: list[_Waiting]) -> None:
        taken = time.monotonic()
        try:
            await self._insert(store, [alert for alert, _, _ in batch])
        except Exception as error:
            if len(batch) == 1:
                batch[0][2].set_exception(error)
                return
            name = type(error).__name__  # never the statement: it holds alerts' data
            log.warning("%d alerts not stored together (%s): one by one", len(batch), name)
            for one in batch:
                await self._write(store, [one])
            return
        self.transactions += 1
        committed = time.monotonic()
        for _, sent, done in batch:
            done.set_result(Stored(sent, taken, committed, len(batch)))

    async def _insert(self, store: AlertStore, alerts: list[Alert]) -> None:
        """``insert_received``, tried again while SQLite's write lock is another's."""
        deadline = time.monotonic() + self.lock_wait_s
        while True:
            try:
                await store.insert_received(alerts)
                return
            except OperationalError as error:
                if not (store.db.is_sqlite and _locked(error)) or time.monotonic() > deadline:
                    raise

    async def _ping(self) -> None:
        assert self._db is not None
        async with self._db.session() as session:
            await session.execute(text("SELECT 1"))


def _locked(error: OperationalError) -> bool:
    """SQLite's "database is locked" (its busy handler gave up), nothing else."""
    return "database is locked" in str(error.orig)
