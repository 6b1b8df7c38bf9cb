"""Replicas as real ``socbot serve --mode http`` processes, for tests and benchmarks.

A ``Cluster`` runs the remote side in one background thread (``bench.common.LoopThread``):
the Slack Web API fake (``tests.fakes.slack_api``) and a fake Gemini over HTTP
(``GatedGemini``: ``bench.fake_gemini`` whose answers can be held back). Each
``Replica`` is a separate process on its own loopback port, all on one database, and
sees only loopback URLs and fake tokens; ``tests/subprocess_site/sitecustomize.py`` (on
``PYTHONPATH``) makes it fail closed on any other address.

Start-up: this machine sets ``PYTHONDONTWRITEBYTECODE``, so a fresh process compiles
every module (6-20 s). Replicas share one bytecode cache (``PYTHONPYCACHEPREFIX``, kept
between runs in the temp folder): the first start compiles, the others load.

Observation is never a fixed sleep: ``wait_for`` polls a condition (the fakes'
recorded calls, rows in the database) with the timeout as an upper bound only.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from aiohttp import web
from sqlalchemy import select

from bench.bench_slack import SIGNING_SECRET, WEBHOOK_TOKEN
from bench.common import LoopThread
from bench.fake_gemini import FakeGemini, Responder, parse_request
from bench.loopback import free_port
from store.db.engine import Database
from store.queue.types import PRUNE_KIND
from store.schema import WorkRow
from tests.fakes.slack_api import Call, FakeSlackAPI

T = TypeVar("T")
SOCBOT = Path(sys.executable).with_name("socbot")
SITE = Path(__file__).with_name("subprocess_site")
PYCACHE = Path(tempfile.gettempdir()) / (
    "socbot-pycache-" + hashlib.sha256(sys.prefix.encode()).hexdigest()[:10]
)
WEBHOOK_CHANNEL = "CWEBHOOK1"
SOC = "CSOC00001"
READY = "socbot is up"
ANSWER = "185.220.101.42 is a known Tor exit node."
SUMMARY = "Reviewed against socbot's past alerts: nothing like it was seen before."
# the variables a replica inherits; everything else (tokens, SOCBOT_*) stays out
_INHERIT = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ", "SYSTEMROOT")


class GatedGemini(FakeGemini):
    """The fake Gemini with a gate: while held, requests wait (the run stays busy).

    ``arrived`` keeps the user text of every request as it comes in (before the gate),
    so a test can see that an investigation has reached the model. ``hold`` and
    ``release`` are called from the test's thread.
    """

    def __init__(self, script: Mapping[str, Responder], latency_s: float = 0.0) -> None:
        super().__init__(script, latency_s=latency_s)
        self.arrived: list[str] = []
        self._open = asyncio.Event()
        self._open.set()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> str:
        self._loop = asyncio.get_running_loop()
        return await super().start()

    def hold(self) -> None:
        self._on_loop(self._open.clear)

    def release(self) -> None:
        self._on_loop(self._open.set)

    def _on_loop(self, action: Callable[[], None]) -> None:
        assert self._loop is not None, "start() first"

        async def act() -> None:
            action()

        asyncio.run_coroutine_threadsafe(act(), self._loop).result(10)

    async def _serve(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.arrived.append(parse_request("", body).user_text())
        await self._open.wait()
        return await super()._serve(request)  # aiohttp keeps the body it read

    def arrivals_with(self, marker: str) -> int:
        return sum(marker in text for text in list(self.arrived))


@dataclass
class Replica:
    """One ``socbot serve --mode http`` process."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill(self) -> None:
        """``kill -9``: no shutdown code runs."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def terminate(self) -> None:
        """SIGTERM, as a deploy sends it (returns at once; ``process.wait`` for the end)."""
        self.process.send_signal(signal.SIGTERM)


@dataclass
class Cluster:
    """The fakes, one database and the replica processes on it (see the module docstring)."""

    database_url: str
    folder: Path
    script: Mapping[str, Responder]
    settings_toml: str = ""
    latency_s: float = 0.0  # per model call
    env_extra: dict[str, str] = field(default_factory=dict)
    replicas: list[Replica] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.thread = LoopThread("replica-fakes")
        self.slack = FakeSlackAPI()
        self.gemini = GatedGemini(self.script, self.latency_s)
        self.slack_url = self.run(self.slack.start())
        self.gemini_url = self.run(self.gemini.start())
        self.db = Database(self.database_url)
        self.run(self.db.create())
        self.config = self.folder / "socbot.toml"
        self.config.write_text(self.settings_toml)
        self._count = 0

    def run(self, coro: Awaitable[T]) -> T:
        """Run ``coro`` on the fakes' loop and wait for its result."""
        return self.thread.submit(coro).result(120)

    # replicas ------------------------------------------------------------------

    def env(self, name: str) -> dict[str, str]:
        env = {k: os.environ[k] for k in _INHERIT if k in os.environ}
        env.update(
            PYTHONPATH=str(SITE),
            PYTHONPYCACHEPREFIX=str(PYCACHE),
            PYTHONUNBUFFERED="1",
            SOCBOT_CONFIG=str(self.config),
            SOCBOT_DATABASE_URL=self.database_url,
            SOCBOT_WORK__REPLICA_ID=name,
            SOCBOT_GEMINI_BASE_URL=self.gemini_url,
            GEMINI_API_KEY="test-not-a-real-key",
            SLACK_BOT_TOKEN="xoxb-test-not-a-real-token",
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SOCBOT_SLACK_API_URL=self.slack_url,
            SOCBOT_WEBHOOK_TOKEN=WEBHOOK_TOKEN,
        )
        env.update(self.env_extra)
        return env

    def spawn(self, port: int | None = None) -> Replica:
        """Start one more replica (not waiting for it: ``ready``), on ``port`` or a free one."""
        self._count += 1
        name = f"r{self._count}"
        port = port or free_port()
        log = self.folder / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    str(SOCBOT),
                    "serve",
                    "--mode",
                    "http",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    f"{port}",
                ],
                env=self.env(name),
                cwd=self.folder,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        replica = Replica(name, port, process, log)
        self.replicas.append(replica)
        return replica

    def ready(self, replica: Replica, timeout_s: float = 90.0) -> Replica:
        """Wait until ``replica`` says it is up (its port is served)."""
        wait_for(
            lambda: READY in replica.output() or not replica.alive,
            timeout_s,
            f"{replica.name} to start",
        )
        if not replica.alive:
            raise AssertionError(f"{replica.name} exited:\n{replica.output()[-3000:]}")
        return replica

    def ensure(self, count: int) -> list[Replica]:
        """At least ``count`` live replicas (starting more if some were killed).

        When nothing is cached yet, one replica starts alone first: it fills the
        bytecode cache the others then load, instead of all compiling at once.
        """
        alive = [r for r in self.replicas if r.alive]
        if len(alive) < count and not any(PYCACHE.glob("**/*.pyc")):
            alive.append(self.ready(self.spawn()))
        fresh = [self.spawn() for _ in range(count - len(alive))]
        return alive + [self.ready(r) for r in fresh]

    def by_name(self, name: str | None) -> Replica:
        return next(r for r in self.replicas if r.name == name)

    def close(self) -> None:
        for replica in self.replicas:
            if replica.alive:
                replica.terminate()
        for replica in self.replicas:
            try:
                replica.process.wait(30)
            except subprocess.TimeoutExpired:
                replica.kill()
        self.gemini.release()
        self.run(self.db.close())
        self.run(self.slack.stop())
        self.run(self.gemini.stop())
        self.thread.close()

    # what the replicas did ------------------------------------------------------

    def wait(self, condition: Callable[[], object], timeout_s: float, what: str) -> None:
        """``wait_for``, saying on a timeout what the rows and the replicas show."""
        try:
            wait_for(condition, timeout_s, what)
        except AssertionError as error:
            raise AssertionError(f"{error}\n{self.describe()}") from None

    def describe(self) -> str:
        """The rows' states and owners and each replica's last log lines (for a failure)."""
        rows = [(r.id, r.kind, r.state, r.owner, r.attempts) for r in self.rows()]
        logs = [f"--- {r.name} (alive: {r.alive})\n{r.output()[-1500:]}" for r in self.replicas]
        return "\n".join([f"rows: {rows}", *logs])

    def rows(self) -> list[WorkRow]:
        """Work rows of threads (not the replicas' own background work: pruning)."""

        async def query() -> list[WorkRow]:
            async with self.db.session() as session:
                rows = select(WorkRow).where(WorkRow.kind != PRUNE_KIND).order_by(WorkRow.id)
                return list((await session.execute(rows)).scalars())

        return self.run(query())

    def outcomes(self, thread_ts: str) -> list[str]:
        """The ts of the outcome messages in a thread: a direct answer (``ANSWER``, as
        posted: defanged) or an alert's verdict (``SUMMARY``), as ``serve_scenario`` has
        the fake model answer."""
        return [
            m.ts
            for m in list(self.slack.messages)
            if m.thread_ts == thread_ts and ("known Tor exit node" in m.text or SUMMARY in m.text)
        ]

    def posts(self, channel: str, thread_ts: str | None = None) -> list[Call]:
        """``chat.postMessage`` calls to ``channel`` (in one thread if given)."""
        return [
            c
            for c in list(self.slack.calls)
            if c.method == "chat.postMessage"
            and c.args.get("channel") == channel
            and (thread_ts is None or c.args.get("thread_ts") == thread_ts)
        ]


def wait_for(condition: Callable[[], object], timeout_s: float, what: str) -> None:
    """Poll ``condition`` until it is true; ``timeout_s`` is only an upper bound."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.05)
