"""Helpers for the Slack tests: signed requests into the real app, served on 127.0.0.1.

``SlackHarness`` runs the real bolt app (built by ``bot.app.create_socbot``) inside
socbot's aiohttp server with ``TestServer``/``TestClient``; the Web API client points
at ``FakeSlackAPI``. Payloads come from ``tests/fixtures/slack``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import urllib.parse
from asyncio import FIRST_COMPLETED
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from agent.model.llm import ModelBackend
from agent.playbook.learning.service import Learner
from alerts.parse import Alert
from bench.loopback import free_port
from bot.app import create_socbot
from bot.decisions.approvals import SlackApprovals
from bot.decisions.playbook_review import SlackReview
from bot.lifecycle import SocBot
from bot.slack.client import build_client
from bot.slack.pacer import Pacer
from bot.work.contracts import Investigate
from bot.work.worker import ThreadRef
from cli.runtime import open_runtime
from cli.serve.command import Mode, serve_until
from config.settings import Settings
from store.db.engine import Database
from tests.fakes.signals import WAIT_S, Changes
from tests.fakes.slack_api import FakeSlackAPI

FIXTURES = Path(__file__).parent / "fixtures" / "slack"
SIGNING_SECRET = "test-signing-secret-0123456789abcdef"
WEBHOOK_TOKEN = "test-webhook-token"
SOC = "CSOC00001"
ALERTS = "CALERTS01"
WEBHOOK_CHANNEL = "CWEBHOOK1"


def load(name: str) -> dict[str, Any]:
    """A fixture payload (a fresh copy each time)."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return copy.deepcopy(data)


def signed_headers(
    body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None
) -> dict[str, str]:
    """The headers Slack sends with a request body signed by ``secret``."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    assert signature is not None
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}


def make_settings(tmp_path: Path, api_url: str, **slack: Any) -> Settings:
    """Settings for a test workspace: fake tokens, local DB, the given Slack overrides."""
    values: dict[str, Any] = {
        "bot_token": "xoxb-test",
        "app_token": "xapp-test",
        "signing_secret": SIGNING_SECRET,
        "api_url": api_url,
        "webhook_token": WEBHOOK_TOKEN,
        "webhook_channel": WEBHOOK_CHANNEL,
        "alert_channels": [ALERTS],
    }
    values.update(slack)
    return Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}",
        slack=values,  # type: ignore[arg-type]
        work={"shutdown_grace_s": 0},  # type: ignore[arg-type]
    )


class RecordingInvestigate:
    """A stand-in investigation: records its calls, can be held open or fail.

    ``changes`` is notified when a run starts and when it ends (``ended``, including
    cancelled runs), so tests wait for runs with ``changes.until(...)``.
    """

    def __init__(self, fake: FakeSlackAPI | None = None) -> None:
        self.calls: list[tuple[ThreadRef, str, Alert | None]] = []
        self.gate: asyncio.Event | None = None
        self.started = asyncio.Event()
        self.error: Exception | None = None
        self.cancelled: list[ThreadRef] = []
        self.ended: list[ThreadRef] = []
        self.changes = Changes()

    async def __call__(
        self, thread: ThreadRef, text: str, alert: Alert | None, *, user: str | None = None
    ) -> None:
        self.calls.append((thread, text, alert))
        self.started.set()
        self.changes.notify()
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled.append(thread)
            raise
        finally:
            self.ended.append(thread)
            self.changes.notify()
        if self.error is not None:
            raise self.error

    async def wait_started(self, runs: int = 1) -> None:
        """Return once ``runs`` investigations have started."""
        await self.changes.until(lambda: len(self.calls) >= runs)


class SlackHarness:
    """The real socbot Slack app behind its aiohttp server, Web API faked."""

    def __init__(
        self,
        fake: FakeSlackAPI,
        settings: Settings,
        investigate: Investigate,
        *,
        http_mode: bool = True,
        db: Database | None = None,
        client: AsyncWebClient | None = None,
        pacer: Pacer | None = None,
        learner: Learner | None = None,
        review: SlackReview | None = None,
        approvals: SlackApprovals | None = None,
    ) -> None:
        self.fake = fake
        self.approvals = approvals
        self.settings = settings
        self.investigate = investigate
        self.http_mode = http_mode
        self.owns_db = db is None
        self.db = db or Database(settings.database_url)
        self.web_client = client or build_client(settings.slack, backoff_s=0.01)
        self.pacer = pacer or Pacer(rate_per_s=200)
        self.learner = learner
        self.review = review
        self.bot: SocBot | None = None
        self.http: TestClient[Any, Any] | None = None

    async def __aenter__(self) -> SlackHarness:
        if self.owns_db:
            await self.db.create()
        client = self.web_client
        self.bot = create_socbot(
            self.settings,
            self.db,
            self.investigate,
            client=client,
            http_mode=self.http_mode,
            pacer=self.pacer,
            learner=self.learner,
            review=self.review,
            approvals=self.approvals,
        )
        self.http = TestClient(TestServer(self.bot.web_app(), host="127.0.0.1"))
        await self.http.start_server()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.bot is not None:
            await self.bot.close()
        if self.http is not None:
            await self.http.close()
        if self.owns_db:
            await self.db.close()

    @property
    def app(self) -> SocBot:
        assert self.bot is not None
        return self.bot

    @property
    def client(self) -> TestClient[Any, Any]:
        assert self.http is not None
        return self.http

    async def event(
        self, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """POST an Events API payload, signed; (status, body)."""
        body = json.dumps(payload)
        all_headers = {"Content-Type": "application/json", **signed_headers(body)}
        all_headers.update(headers or {})
        response = await self.client.post("/slack/events", data=body, headers=all_headers)
        return response.status, await response.text()

    async def action(self, payload: dict[str, Any]) -> tuple[int, str]:
        """POST an interactivity payload (form-encoded ``payload=``), signed."""
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        headers = {"Content-Type": "application/x-www-form-urlencoded", **signed_headers(body)}
        response = await self.client.post("/slack/events", data=body, headers=headers)
        return response.status, await response.text()

    async def handed_over(self) -> None:
        """Wait until events and alerts in flight are handed to the worker (runs go on):
        bolt's listener tasks, the webhook's alerts, the cards and hand-overs of triage."""
        listeners = [t for t in asyncio.all_tasks() if _is_listener_task(t)]
        if listeners:
            await asyncio.wait(listeners, timeout=WAIT_S)
        await self.app.webhook.drain()
        for triage in self.app.triages():  # webhook and alert channels
            await triage.drain()  # cards posted, runs handed over

    async def settle(self) -> None:
        """Wait for background work: what ``handed_over`` waits for, then the runs."""
        for _ in range(3):
            await self.handed_over()
            await self.app.coordinator.wait_idle()


async def run_ended(h: SlackHarness, thread: ThreadRef) -> None:
    """Return once the thread has no run on this replica (its task and clean-up done)."""
    task = h.app.coordinator.task_for(thread)
    if task is not None:
        await asyncio.wait([task], timeout=WAIT_S)  # wakes after the task's own callbacks
    assert not h.app.coordinator.busy(thread), "the run did not end"


async def settle_until(
    h: SlackHarness, done: Callable[[], bool | Awaitable[bool]], rounds: int = 100
) -> None:
    """Settle (wait for the work in flight) until ``done()``: each round waits on real work."""
    for _ in range(rounds):
        result = done()
        if result if isinstance(result, bool) else await result:
            return
        await h.settle()
    raise AssertionError("condition not met after the work in flight ended")


async def start_up_pruned(h: SlackHarness) -> None:
    """Wait for the prune the start-up queued to end, so that a test counting the slots
    its investigations take is not racing it (the prune holds one until it settles)."""
    from sqlalchemy import select

    from store.queue.types import PRUNE_KIND
    from store.schema import WorkRow, WorkState

    async def pruned() -> bool:
        async with h.db.session() as session:
            states = await session.scalars(select(WorkRow.state).where(WorkRow.kind == PRUNE_KIND))
            return all(s == WorkState.DONE for s in states) and h.app.coordinator.running == 0

    await settle_until(h, pruned)


def _is_listener_task(task: asyncio.Task[Any]) -> bool:
    """Bolt runs each listener in a task of ``run_ack_function_asynchronously``."""
    coro = task.get_coro()
    return "run_ack_function_asynchronously" in getattr(coro, "__qualname__", "")


async def until_up(serving: asyncio.Task[None], up: Awaitable[None]) -> None:
    """Return once ``up`` is done; fail at once if ``serve_until`` ended first."""
    waiting = asyncio.ensure_future(up)
    done, _ = await asyncio.wait([waiting, serving], timeout=WAIT_S, return_when=FIRST_COMPLETED)
    waiting.cancel()
    if serving in done:
        serving.result()  # its error, if it failed
        raise AssertionError("serve ended before it was up")
    assert waiting in done, "serve did not come up"


@asynccontextmanager
async def serving_http(settings: Settings, model: ModelBackend) -> AsyncIterator[int]:
    """``socbot serve`` in HTTP mode on a free port, answering with ``model``: its port,
    once it is up; stopped on the way out."""
    port, stop, up = free_port(), asyncio.Event(), asyncio.Event()
    serving = asyncio.create_task(
        serve_until(
            settings,
            Mode.http,
            host="127.0.0.1",
            port=port,
            stop=stop,
            runtime=lambda s: open_runtime(s, backend=model),
            ready=lambda _me: up.set(),
        )
    )
    try:
        await until_up(serving, up.wait())
        yield port
    finally:
        stop.set()
        await asyncio.wait_for(serving, WAIT_S)  # an upper bound for a stop that would hang
