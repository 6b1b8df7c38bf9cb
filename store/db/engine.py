"""The async SQLAlchemy engine: SQLite by default, PostgreSQL through asyncpg.

SQLite has one writer at a time. Left to itself, several connections of one
process contend for the lock, sleep in the busy handler and, when a read turns into
a write under WAL, fail at once with "database is locked". So on SQLite each
process serialises its sessions (one at a time, in turn), every transaction begins
``IMMEDIATE`` (takes the write lock up front, so it can wait for it), and other
processes on the same file (``socbot investigate`` beside ``socbot serve``) are
waited for up to ``BUSY_TIMEOUT_MS`` (``busy_timeout_ms``: less for a caller that retries
on its own, sooner than SQLite's busy handler, whose sleeps grow to 100 ms).
``background()`` is a session for writes nobody waits on (the trace's batches): on SQLite
it takes its turn only when no other session of the process is waiting, so an
investigation's own writes never queue behind a run of them.

``write(fn, ...)`` runs a short write transaction written as plain code (``fn(session)``
with a synchronous ``Session``) to its end without a turn of the event loop: on SQLite on a
thread of its own with a connection of its own (the process's turn held meanwhile), so the
one write lock is held for the statements alone, never while a busy loop runs other work
between them (the acknowledging front's alert inserts waited for exactly that); on
PostgreSQL in the usual session (``run_sync``), where no lock is shared with the front.

``watch_writes(listener)`` calls ``listener`` after each committed session that
wrote rows (tests wait on rows with it); nothing is watched until someone listens.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from functools import partial
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import Session

from store.db.private import private_file

T = TypeVar("T")


class Database:
    """Owns the engine and hands out sessions. ``create()`` makes the schema."""

    def __init__(self, url: str, *, busy_timeout_ms: int | None = None) -> None:
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        if self.is_sqlite and parsed.database and parsed.database != ":memory:":
            private_file(Path(parsed.database))  # SQLite gives its -wal/-shm the same mode
        self.engine: AsyncEngine = create_async_engine(url)
        if self.is_sqlite:
            wait = BUSY_TIMEOUT_MS if busy_timeout_ms is None else busy_timeout_ms
            event.listen(self.engine.sync_engine, "connect", partial(_sqlite_pragmas, wait))
            event.listen(self.engine.sync_engine, "begin", _begin_immediate)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self._sync: Engine | None = None  # SQLite file: ``write``'s own engine
        self._writer: concurrent.futures.ThreadPoolExecutor | None = None
        if self.is_sqlite and parsed.database and parsed.database != ":memory:":
            self._sync = create_engine(parsed.set(drivername="sqlite"))
            event.listen(self._sync, "connect", partial(_sqlite_pragmas, wait))
            event.listen(self._sync, "begin", _begin_immediate)
        self._turn = Turn()  # SQLite: one session of this process at a time
        self._writes: list[Callable[[], None]] = []  # ``watch_writes`` listeners

    async def create(self) -> None:
        """Bring the schema to the newest migration (creates it in an empty database)."""
        from store.db.revisions import at_head

        if await at_head(self.engine):
            return  # the usual start: nothing to migrate, and Alembic is not imported
        from store.db.migrate import upgrade

        await upgrade(self.engine)

    def watch_writes(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` after each committed session that inserted, updated or deleted."""
        if not self._writes:
            for engine in filter(None, (self.engine.sync_engine, self._sync)):
                event.listen(engine, "after_cursor_execute", _note_write)
                event.listen(engine, "rollback", _forget_write)
        self._writes.append(listener)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session in a transaction, committed on success (SQLite: in turn)."""
        async with self._session(deferred=False) as session:
            yield session

    @asynccontextmanager
    async def background(self) -> AsyncIterator[AsyncSession]:
        """``session`` for writes no caller waits on: on SQLite its turn comes after every
        ``session`` and ``reading`` already waiting (it still commits before returning)."""
        async with self._session(deferred=False, background=True) as session:
            yield session

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncSession]:
        """``session`` for reads only. On SQLite its transaction is deferred: under WAL it
        neither takes nor waits for the write lock, so a reader slowed down by a busy
        event loop never holds up a writer in another process (the acknowledging front
        storing an alert). Never write in it: the write could fail at once."""
        async with self._session(deferred=self.is_sqlite) as session:
            yield session

    @asynccontextmanager
    async def _session(
        self, *, deferred: bool, background: bool = False
    ) -> AsyncIterator[AsyncSession]:
        if not self.is_sqlite or _in_session.get():
            async with self._transaction(deferred) as session:
                yield session
            return
        await self._turn.acquire(background=background)
        token = _in_session.set(True)  # a session opened inside this one does not wait
        try:
            async with self._transaction(deferred) as session:
                yield session
        finally:
            _in_session.reset(token)
            self._turn.release()

    @asynccontextmanager
    async def _transaction(self, deferred: bool) -> AsyncIterator[AsyncSession]:
        async with self.sessions() as session:
            async with session.begin():
                if deferred:  # before the first statement: the BEGIN it sends is deferred
                    await session.connection(execution_options={_DEFERRED: True})
                yield session
                wrote = bool(self._writes) and (await session.connection()).info.pop(_WROTE, False)
            if wrote:  # committed: what a listener reads now is there
                for listener in self._writes:
                    listener()

    async def write(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(session, *args)`` in one committed transaction, run to its end without
        a turn of the loop (see the module docstring); its result."""
        if self._sync is None or _in_session.get():
            async with self.session() as session:
                return await session.run_sync(_flushed, fn, args)
        if self._writer is None:
            self._writer = concurrent.futures.ThreadPoolExecutor(1, "sqlite writer")
        await self._turn.acquire()
        done = asyncio.get_running_loop().run_in_executor(self._writer, self._write, fn, args)
        done.add_done_callback(lambda _: self._turn.release())  # not before it ends
        result, wrote = await asyncio.shield(done)
        if wrote:
            for listener in self._writes:
                listener()
        return result

    def _write(self, fn: Callable[..., T], args: tuple[object, ...]) -> tuple[T, bool]:
        assert self._sync is not None
        with Session(self._sync, expire_on_commit=False) as session, session.begin():
            result = _flushed(session, fn, args)
            wrote = bool(session.connection().info.pop(_WROTE, False))
        return result, wrote

    async def close(self) -> None:
        """Dispose of the engine and its pooled connections."""
        await self.engine.dispose()
        if self._writer is not None:
            self._writer.shutdown()
        if self._sync is not None:
            self._sync.dispose()


class Turn:
    """A lock handed over in order, sessions first and background writes after: a
    background waiter gets the turn only when no other session is waiting for it."""

    def __init__(self) -> None:
        self._held = False
        self._first: deque[asyncio.Future[None]] = deque()
        self._later: deque[asyncio.Future[None]] = deque()

    async def acquire(self, *, background: bool = False) -> None:
        if not self._held and not self._first and not self._later:
            self._held = True
            return
        waiter = asyncio.get_running_loop().create_future()
        queue = self._later if background else self._first
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the turn as it was cancelled: pass it on
            elif waiter in queue:
                queue.remove(waiter)
            raise

    def release(self) -> None:
        """Hand the turn to the next waiter (sessions first), or free it."""
        for queue in (self._first, self._later):
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)  # still held: now by that waiter
                    return
        self._held = False


def _flushed(session: Session, fn: Callable[..., T], args: tuple[object, ...]) -> T:
    """``fn(session, *args)``, its changes flushed (so a write is seen as one)."""
    result = fn(session, *args)
    session.flush()
    return result


_in_session: ContextVar[bool] = ContextVar("in_sqlite_session", default=False)
_DEFERRED = "socbot_deferred"  # ``reading``: a transaction that takes no write lock
_WROTE = "socbot_wrote"  # set in a connection's ``info`` by a write (``watch_writes``)
BUSY_TIMEOUT_MS = 30_000


def _sqlite_pragmas(busy_timeout_ms: int, dbapi_conn: DBAPIConnection, _record: object) -> None:
    dbapi_conn.isolation_level = None  # type: ignore[attr-defined]  # we emit BEGIN ourselves
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")  # with WAL: durable across a crash of socbot
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    cursor.close()


def _begin_immediate(conn: Connection) -> None:
    deferred = conn.get_execution_options().get(_DEFERRED, False)
    conn.exec_driver_sql("BEGIN" if deferred else "BEGIN IMMEDIATE")


def _note_write(
    conn: Connection,
    _cursor: object,
    _statement: str,
    _parameters: object,
    context: object,
    _executemany: bool,
) -> None:
    if isinstance(context, DefaultExecutionContext) and context.is_crud:
        conn.info[_WROTE] = True


def _forget_write(conn: Connection) -> None:
    conn.info.pop(_WROTE, None)
