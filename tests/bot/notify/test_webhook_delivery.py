"""Webhook deliveries through the real work queue and coordinator to a local receiver.

The receiver checks what a receiver should: the HMAC-SHA256 signature over timestamp
and body (computed here from the documented scheme, not with socbot's code), a fresh
timestamp, the idempotency key, and the body against the published JSON Schema. Faults:
a 500, a timeout, and a replica killed (SIGKILL) in the middle of a delivery.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.notify.delivery import DeliveryRunner
from bot.notify.notifier import NOTIFY_KIND, Facts, Notifier
from bot.observe.metrics import exposition
from bot.work.learning import Silent
from bot.work.worker import Coordinator
from cli.doctor.local import webhooks as doctor_webhooks
from config.notify_settings import NotifySettings, WebhookSettings
from config.settings import Settings
from store.db.engine import Database
from store.notify_status import delivery_status
from store.queue.work import WorkQueue

SECRET = "whsec-test-0123456789"  # invented
SCHEMA = json.loads(
    (Path(__file__).parents[3] / "docs" / "schemas" / "socbot-webhook-v1.json").read_text()
)
WORKER = Path(__file__).with_name("webhook_worker.py")
CONCLUDED = {  # the data of a concluded event (invented)
    "investigation_id": "inv-1",
    "conversation_id": "slack:C1:1700000100.000100",
    "status": "concluded",
    "alert": {"id": "a1", "source": "guardduty", "title": "Tor login", "severity": "high"},
    "slack": {"channel": "C1", "thread_ts": "1700000100.000100"},
    "error": None,
    "conclusion": {
        "verdict": "true_positive",
        "severity": "high",
        "confidence": "medium",
        "summary": "alice logged in from a Tor exit node",
        "key_findings": [{"finding": "login from 185.220.101.42", "evidence": "s1#1"}],
        "uncertainties": [],
        "recommendations": ["reset alice's credentials"],
    },
}
FACTS = Facts(source="guardduty", verdict="true_positive", severity="high")


@dataclass
class Receiver:
    """Answers each request with the next behaviour ("hang" never answers), then 200."""

    behaviours: list[int | str] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.text()
        self.received.append({"headers": dict(request.headers), "body": body})
        self.arrived.set()
        behaviour = self.behaviours.pop(0) if self.behaviours else 200
        if behaviour == "hang":
            await asyncio.sleep(3600)
        return web.Response(status=int(behaviour), text="ok")

    async def count(self, n: int, within_s: float = 30) -> None:
        ends = time.monotonic() + within_s
        while len(self.received) < n:
            assert time.monotonic() < ends, f"{len(self.received)} deliveries, wanted {n}"
            self.arrived.clear()
            try:
                async with asyncio.timeout(0.2):
                    await self.arrived.wait()
            except TimeoutError:
                pass


def verified(delivery: dict[str, Any]) -> dict[str, Any]:
    """The body, after the checks a receiver makes (fails the test otherwise)."""
    headers, body = delivery["headers"], delivery["body"]
    timestamp = headers["X-Socbot-Timestamp"]
    assert abs(time.time() - int(timestamp)) < 300, "stale timestamp"
    expected = hmac.new(SECRET.encode(), f"v1:{timestamp}:{body}".encode(), hashlib.sha256)
    assert hmac.compare_digest(headers["X-Socbot-Signature"], "v1=" + expected.hexdigest())
    data = json.loads(body)
    jsonschema.validate(data, SCHEMA)
    assert headers["Idempotency-Key"] == data["id"]
    return dict(data)


@pytest.fixture
async def receiver() -> AsyncIterator[tuple[Receiver, str]]:
    recv = Receiver()
    app = web.Application()
    app.router.add_post("/hook", recv.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield recv, str(server.make_url("/hook"))
    finally:
        await server.close()


def notify_settings(url: str, **hook: Any) -> NotifySettings:
    fields = {"name": "cases", "url": url, "secret": "${TEST_HOOK_SECRET}", **hook}
    return NotifySettings(webhooks=[WebhookSettings(**fields)])


@pytest.fixture(autouse=True)
def hook_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_HOOK_SECRET", SECRET)


async def replica(db: Database, settings: NotifySettings, http: httpx.AsyncClient) -> Coordinator:
    queue = WorkQueue(db, lease_s=1.0, max_attempts=3)
    coordinator = Coordinator(
        2, Silent("test"), queue, replica="r1", poll_s=0.05, retry_backoff_s=0.1
    )
    runner = DeliveryRunner(settings, http)
    coordinator.register({NOTIFY_KIND: runner}, reporter=runner.reporter)
    coordinator.start()
    return coordinator


async def test_a_signed_delivery_per_matching_webhook(
    db: Database, receiver: tuple[Receiver, str]
) -> None:
    recv, url = receiver
    settings = notify_settings(url, events=["concluded"], severities=["high", "critical"])
    async with httpx.AsyncClient() as http:
        coordinator = await replica(db, settings, http)
        notifier = Notifier(settings, coordinator.queue)
        notifier.nudge = coordinator.nudge
        [key] = await notifier.publish("concluded", CONCLUDED, FACTS)
        assert await notifier.publish("failed", {}, FACTS) == []  # not an event it wants
        low = Facts(source="guardduty", verdict="benign", severity="low")
        assert await notifier.publish("concluded", CONCLUDED, low) == []  # filtered out
        await recv.count(1)
        await coordinator.wait_idle()
        await coordinator.shutdown()
    [delivery] = recv.received
    data = verified(delivery)
    assert (data["id"], data["event"], data["webhook"]) == (key, "concluded", "cases")
    assert data["data"]["conclusion"]["verdict"] == "true_positive"
    assert delivery["headers"]["X-Socbot-Event"] == "concluded"
    status = await delivery_status(db)
    assert (status.delivered, status.failed, status.queued) == (1, 0, 0)


@pytest.mark.parametrize("fault", [500, "hang"])
async def test_a_failed_attempt_is_retried_with_the_same_key(
    db: Database, receiver: tuple[Receiver, str], fault: int | str
) -> None:
    recv, url = receiver
    recv.behaviours = [fault]
    settings = notify_settings(url, timeout_s=0.5)
    async with httpx.AsyncClient() as http:
        coordinator = await replica(db, settings, http)
        notifier = Notifier(settings, coordinator.queue)
        notifier.nudge = coordinator.nudge
        [key] = await notifier.publish("concluded", CONCLUDED, FACTS)
        await recv.count(2)
        await coordinator.wait_idle()
        await coordinator.shutdown()
    first, second = (verified(d) for d in recv.received)
    assert first == second and first["id"] == key  # the same bytes, the same key
    assert recv.received[0]["headers"]["Idempotency-Key"] == key
    assert (await delivery_status(db)).delivered == 1


async def test_a_refused_delivery_fails_and_is_reported(
    db: Database, receiver: tuple[Receiver, str]
) -> None:
    recv, url = receiver
    recv.behaviours = [400]
    settings = notify_settings(url)
    async with httpx.AsyncClient() as http:
        coordinator = await replica(db, settings, http)
        notifier = Notifier(settings, coordinator.queue)
        notifier.nudge = coordinator.nudge
        await notifier.publish("concluded", CONCLUDED, FACTS)
        await recv.count(1)
        await coordinator.wait_idle()
        await coordinator.shutdown()
    status = await delivery_status(db)
    assert (status.failed, status.healthy) == (1, False)
    assert len(recv.received) == 1  # a refusal is not retried
    metrics = (await exposition(WorkQueue(db))).decode()
    assert 'socbot_webhook_deliveries{state="failed"} 1.0' in metrics
    check = await doctor_webhooks(
        Settings(database_url=db.engine.url.render_as_string(hide_password=False), notify=settings)
    )
    assert check.status == "fail" and "1 failed; last error: DeliveryRefused" in check.detail


async def test_a_replica_killed_mid_delivery_loses_nothing(
    db: Database, receiver: tuple[Receiver, str], tmp_path: Path
) -> None:
    """The replica sending a delivery is killed with SIGKILL while the receiver holds the
    request; another replica takes the row over when its lease ends and sends it again,
    with the same idempotency key; nothing is sent without its key and signature."""
    recv, url = receiver
    recv.behaviours = ["hang"]
    settings = notify_settings(url)
    queue = WorkQueue(db, lease_s=1.0)
    [key] = await Notifier(settings, queue).publish("concluded", CONCLUDED, FACTS)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])}
    database_url = db.engine.url.render_as_string(hide_password=False)
    doomed = await asyncio.create_subprocess_exec(
        sys.executable, str(WORKER), database_url, url, env=env, stdout=subprocess.DEVNULL
    )
    try:
        await recv.count(1, within_s=60)  # the doomed replica is mid-delivery
        os.kill(doomed.pid, signal.SIGKILL)
        assert await doomed.wait() == -signal.SIGKILL
    finally:
        if doomed.returncode is None:
            doomed.kill()
            await doomed.wait()
    async with httpx.AsyncClient() as http:
        coordinator = await replica(db, settings, http)
        await recv.count(2, within_s=30)
        await coordinator.wait_idle()
        await coordinator.shutdown()
    bodies = [verified(d) for d in recv.received]
    assert [b["id"] for b in bodies] == [key, key]
    assert (await delivery_status(db)).delivered == 1
