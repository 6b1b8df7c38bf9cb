"""A small pool of DuckDB worker processes: every query runs where it can be killed.

DuckDB cannot be interrupted inside one long function call (``EDIT_DISTANCE`` of two long
strings, a huge ``GENERATE_ARRAY``), so queries run in ``tools.logs.duckdb_worker`` processes.
A query that overruns its time limit, or whose caller is cancelled (the step's deadline),
has its process killed at once, which frees its memory, and a fresh process replaces it.
At most ``size`` queries run at once; idle processes stay warm for the next query.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import IO, Any

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
_COMMAND = [sys.executable, "-E", "-s", "-m", "tools.logs.duckdb_worker"]
# The worker's whole environment: nothing secret (tokens, keys) is inherited.
_ENV_KEYS = ("PATH", "HOME", "LANG", "TZ", "SYSTEMROOT")
STARTUP_TIMEOUT_S = 30.0  # the step's deadline still bounds the whole call


class WorkerFailed(Exception):
    """The worker process died or broke the protocol (crash, address-space limit)."""


class _Worker:
    """One worker process and its pipes; used by one query at a time."""

    def __init__(self, config_line: bytes, reply_limit: int) -> None:
        self.reply_limit = reply_limit
        self.proc = subprocess.Popen(
            _COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
            env=_worker_env(),
            start_new_session=True,
        )
        self.ready: dict[str, Any] | None = None
        self._io = threading.Lock()  # held while a thread talks to the process
        self._send(config_line)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self) -> dict[str, Any]:
        """Block until the worker has opened its database; its schemas."""
        if self.ready is None:
            with self._io:
                self.ready = self._receive()
            if "error" in self.ready:
                raise WorkerFailed(str(self.ready["error"]))
        return self.ready

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one query and block for its answer."""
        with self._io:
            self._send(json.dumps(request).encode() + b"\n")
            return self._receive()

    def kill(self) -> None:
        """SIGKILL now; reap in the background so no caller waits for it.

        ``Popen.kill`` skips a process it has reaped and ignores one that is gone."""
        self.proc.kill()
        threading.Thread(target=self._reap, daemon=True).start()

    def _reap(self) -> None:
        self.proc.wait()
        with self._io:  # a reader sees end-of-file first, then the pipes close
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()

    def _send(self, line: bytes) -> None:
        stdin = _pipe(self.proc.stdin)
        try:
            stdin.write(line)
            stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerFailed("the worker process is gone") from exc

    def _receive(self) -> dict[str, Any]:
        line = _pipe(self.proc.stdout).readline(self.reply_limit)
        if not line:
            raise WorkerFailed("the worker process ended without answering")
        if not line.endswith(b"\n"):
            raise WorkerFailed(f"the answer was larger than {self.reply_limit} bytes")
        reply = json.loads(line)
        if not isinstance(reply, dict):
            raise WorkerFailed("the worker answered something other than an object")
        return reply


class DuckDBPool:
    """Up to ``size`` concurrent queries, each in its own killable worker process."""

    def __init__(
        self, config: dict[str, Any], *, size: int, reply_limit: int, warm: bool = True
    ) -> None:
        self.size = size
        self._config_line = json.dumps(config).encode() + b"\n"
        self._reply_limit = reply_limit
        self._idle: list[_Worker] = []
        self._live: set[_Worker] = set()
        self._gate: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None
        self._closed = False
        self.schemas: dict[str, list[list[str]]] | None = None
        self._finalizer = weakref.finalize(self, _kill_all, self._live)
        if warm:  # the first worker opens its database while we start up
            self._idle.append(self._spawn())

    async def query(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """The worker's answer; ``TimeoutError`` after ``timeout_s`` (the process is killed).

        A worker that is still starting is waited for first (warm ones answer at once).

        Cancellation (the step's deadline) kills the process too, without waiting for it.
        """
        async with self._slots():
            worker = self._take()
            try:
                await self._ready(worker)
                async with asyncio.timeout(timeout_s):
                    reply = await asyncio.to_thread(worker.ask, request)
            except BaseException:
                self._discard(worker)
                raise
            if reply.get("kind") == "memory":
                self._discard(worker)  # it exits after an out-of-memory error
            else:
                self._idle.append(worker)
            return reply

    async def describe(self) -> dict[str, list[list[str]]]:
        """``{view: [[column, type], ...]}``, read once from the first worker to start."""
        if self.schemas is None:
            async with self._slots():
                worker = self._take()
                try:
                    await self._ready(worker)
                except BaseException:
                    self._discard(worker)
                    raise
                self._idle.append(worker)
        assert self.schemas is not None
        return self.schemas

    def pids(self) -> list[int]:
        """The live worker processes (for tests and the benchmark)."""
        return [w.pid for w in self._live]

    def close(self) -> None:
        self._closed = True
        self._finalizer()
        self._idle.clear()

    async def _ready(self, worker: _Worker) -> None:
        """Wait for a (new) worker to open its database; not part of a query's time."""
        try:
            async with asyncio.timeout(STARTUP_TIMEOUT_S):
                ready = await asyncio.to_thread(worker.wait_ready)
        except TimeoutError as exc:
            raise WorkerFailed(f"the worker did not start within {STARTUP_TIMEOUT_S:g}s") from exc
        if self.schemas is None:
            self.schemas = ready["schemas"]

    def _take(self) -> _Worker:
        """An idle worker, preferring one that is ready; a new one if none is idle."""
        for worker in self._idle:
            if worker.ready is not None:
                self._idle.remove(worker)
                return worker
        return self._idle.pop(0) if self._idle else self._spawn()

    def _spawn(self) -> _Worker:
        if self._closed:
            raise WorkerFailed("the log store is closed")
        worker = _Worker(self._config_line, self._reply_limit)
        self._live.add(worker)
        log.debug("started DuckDB worker %d", worker.pid)
        return worker

    def _discard(self, worker: _Worker) -> None:
        worker.kill()
        self._live.discard(worker)
        if not self._closed and len(self._idle) < self.size:
            self._idle.append(self._spawn())  # the replacement warms up meanwhile

    def _slots(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._gate is None or self._gate[0] is not loop:
            self._gate = (loop, asyncio.Semaphore(self.size))
        return self._gate[1]


def _worker_env() -> dict[str, str]:
    env = {k: os.environ[k] for k in _ENV_KEYS if k in os.environ}
    env["MALLOC_ARENA_MAX"] = "2"  # few allocator arenas: a predictable address space
    return env


def _kill_all(workers: set[_Worker]) -> None:
    for worker in list(workers):
        worker.kill()
    workers.clear()


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    if stream is None:  # Popen was given PIPE for both: never None
        raise WorkerFailed("the worker has no pipe")
    return stream
