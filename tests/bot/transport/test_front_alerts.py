"""``POST /alerts`` answered by the acknowledging front (``bot.transport.alert_door``): the
202 is sent while the app's loop is busy, after the alert is stored (``received``) through
the front's own database engine; the app is then handed the alert's id
(``bot.intake.alert_handover``) and dispatches it. Refusals are the app's own, word for word,
and store nothing.

The real ``AckFront`` in its thread, a real aiohttp app on the main loop (loopback) with
the real ``AlertWebhook`` and ``AlertHandOver``, one real SQLite database; the main loop
is made busy with CPU work, as investigations make it under load.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web
from sqlalchemy import func, select

from alerts.parse import Alert
from bench.bench_slack import SIGNING_SECRET
from bot.intake.alert_handover import HANDOVER_PATH, TOKEN_HEADER, AlertHandOver
from bot.intake.alerts_endpoint import AlertWebhook
from bot.transport.ack_front import AckFront
from bot.transport.alert_door import AlertDoorSetup
from bot.transport.server import bound_port, start_site
from config.service_settings import SlackSettings
from store.db.engine import Database
from store.schema import AlertRow
from store.triage.alerts import AlertStore

TOKEN = "webhook-token-for-tests"
HANDOVER = "handover-token-for-tests"
LIMIT = 2000
ALERT = {"title": "Impossible travel for alice", "severity": "high", "src_ip": "203.0.113.9"}
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@dataclass
class App:
    """The app on the main loop: the in-app webhook (which must see nothing the front
    answers) and the hand-over, recording what it dispatches."""

    db: Database
    settings: SlackSettings
    accepted: list[dict[str, Any]] = field(default_factory=list)
    dispatched: list[Alert] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    def web(self) -> web.Application:
        async def accept(data: dict[str, Any], _hint: str | None) -> Alert:
            self.accepted.append(data)
            raise ValueError("the app's /alerts was reached")

        async def dispatch(alert: Alert) -> None:
            self.dispatched.append(alert)
            self.arrived.set()

        webhook = AlertWebhook(self.settings, accept, dispatch)
        handover = AlertHandOver(HANDOVER, AlertStore(self.db), webhook)
        app = web.Application()
        app.router.add_post("/alerts", webhook.handle)
        app.router.add_post(HANDOVER_PATH, handover.handle)
        return app


def slack_settings(token: str | None = TOKEN) -> SlackSettings:
    return SlackSettings.model_validate(
        {"webhook_token": token, "webhook_channel": "CWEBHOOK1", "max_alert_bytes": LIMIT}
    )


async def serve(tmp_path: Path, settings: SlackSettings) -> AsyncIterator[tuple[App, str, str]]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    db = Database(url)
    await db.create()
    app = App(db, settings)
    runner = await start_site(app.web(), "127.0.0.1", 0)
    backend = f"http://127.0.0.1:{bound_port(runner)}"
    token = settings.webhook_token
    front = AckFront(
        signing_secret=SIGNING_SECRET,
        backend=backend,
        body_limit=1024 * 1024,
        alerts=AlertDoorSetup(
            database_url=url,
            handover_token=HANDOVER,
            webhook_token=token.get_secret_value() if token else None,
            webhook_channel=settings.webhook_channel,
            max_alert_bytes=settings.max_alert_bytes,
        ),
    )
    port = await asyncio.to_thread(front.start, "127.0.0.1", 0)
    try:
        yield app, f"http://127.0.0.1:{port}", backend
    finally:
        await asyncio.to_thread(front.stop)
        await runner.cleanup()
        await db.close()


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[App, str, str]]:
    async for out in serve(tmp_path, slack_settings()):
        yield out


def post(url: str, body: bytes | str, headers: dict[str, str]) -> tuple[int, float, Any]:
    started = time.monotonic()
    answer = httpx.post(url, content=body, headers=headers, timeout=30)
    return answer.status_code, time.monotonic() - started, answer.json()


async def rows(db: Database) -> list[AlertRow]:
    async with db.session() as session:
        return list((await session.scalars(select(AlertRow))).all())


async def test_a_202_is_answered_and_stored_while_the_apps_loop_is_busy(
    served: tuple[App, str, str],
) -> None:
    app, url, _ = served
    result: list[tuple[int, float, Any]] = []
    client = threading.Thread(
        target=lambda: result.append(post(f"{url}/alerts", json.dumps(ALERT), AUTH))
    )
    client.start()
    busy_until = time.monotonic() + 2.0  # the app's loop does CPU work for 2 s, as an
    while time.monotonic() < busy_until:  # investigation's rendering and parsing do
        sum(range(10_000))
    client.join(30)
    [(status, seconds, body)] = result
    assert status == 202
    assert seconds < 1.5  # answered while the app's loop could not answer at all
    [row] = await rows(app.db)  # the 202's promise: stored, for triage to place
    assert (row.id, row.status, row.title) == (body["alert_id"], "received", ALERT["title"])
    assert row.status_at is not None and row.raw == ALERT
    await asyncio.wait_for(app.arrived.wait(), 30)  # then handed to the app, once
    assert [a.id for a in app.dispatched] == [row.id]
    assert app.dispatched[0].title == ALERT["title"]
    assert app.accepted == []  # the app's own /alerts never saw it


def _json(data: object) -> str:
    return json.dumps(data)


REFUSED = [  # (what, query, headers, body)
    ("no token", "", {"Content-Type": "application/json"}, _json(ALERT)),
    ("wrong token", "", {"Authorization": "Bearer nope"}, _json(ALERT)),
    ("not bearer", "", {"Authorization": f"Basic {TOKEN}"}, _json(ALERT)),
    ("too large", "", AUTH, _json({**ALERT, "pad": "x" * LIMIT})),
    ("not JSON", "", AUTH, "{not json"),
    ("not an object", "", AUTH, "[1, 2]"),
    ("duplicate keys", "", AUTH, '{"title": "a", "title": "b"}'),
    ("bad source", "?source=a%20b", AUTH, _json(ALERT)),
    ("not an alert", "", AUTH, "{}"),
]


@pytest.mark.parametrize(("what", "query", "headers", "body"), REFUSED, ids=[c[0] for c in REFUSED])
async def test_a_refusal_is_the_apps_word_for_word_and_stores_nothing(
    served: tuple[App, str, str], what: str, query: str, headers: dict[str, str], body: str
) -> None:
    app, url, backend = served
    front = await asyncio.to_thread(post, f"{url}/alerts{query}", body, headers)
    if what != "not an alert":  # the app's accept (which refuses all) never runs for these
        direct = await asyncio.to_thread(post, f"{backend}/alerts{query}", body, headers)
        assert (front[0], front[2]) == (direct[0], direct[2])
    assert front[0] in (400, 401, 413)
    assert await rows(app.db) == []
    assert app.accepted == []  # nothing reached the app's own /alerts
    assert app.dispatched == []


async def test_the_refusals_say_what_the_endpoint_says(served: tuple[App, str, str]) -> None:
    _app, url, _ = served
    cases = {
        "no token": (401, {"error": "missing or wrong bearer token"}),
        "too large": (413, {"error": f"alert body is larger than {LIMIT} bytes"}),
        "bad source": (
            400,
            {"error": "source must be a short word such as guardduty, scc or generic"},
        ),
    }
    for what, (status, said) in cases.items():
        _, query, headers, body = next(c for c in REFUSED if c[0] == what)
        answer = await asyncio.to_thread(post, f"{url}/alerts{query}", body, headers)
        assert (answer[0], answer[2]) == (status, said), what


async def test_disabled_is_said_by_the_front(tmp_path: Path) -> None:
    async for app, url, _ in serve(tmp_path, slack_settings(token=None)):
        status, _, body = await asyncio.to_thread(post, f"{url}/alerts", _json(ALERT), AUTH)
        assert (status, body["error"]) == (
            503,
            "the alert webhook is disabled: set SOCBOT_WEBHOOK_TOKEN to enable it",
        )
        assert await rows(app.db) == []


async def test_the_hand_over_is_not_reachable_from_outside(served: tuple[App, str, str]) -> None:
    app, url, _ = served
    headers = {TOKEN_HEADER: HANDOVER, "Content-Type": "application/json"}
    status, _, _ = await asyncio.to_thread(
        post, f"{url}{HANDOVER_PATH}", _json({"alert_id": "x"}), headers
    )
    assert status == 404
    assert app.dispatched == []


async def test_the_hand_over_needs_the_token_and_places_an_alert_once(
    served: tuple[App, str, str],
) -> None:
    app, url, backend = served
    status, _, body = await asyncio.to_thread(post, f"{url}/alerts", _json(ALERT), AUTH)
    assert status == 202
    await asyncio.wait_for(app.arrived.wait(), 30)
    alert_id = body["alert_id"]
    handed = _json({"alert_id": alert_id})
    forged = {TOKEN_HEADER: "not-the-token", "Content-Type": "application/json"}
    assert (await asyncio.to_thread(post, f"{backend}{HANDOVER_PATH}", handed, forged))[0] == 401
    async with app.db.session() as session:  # placed meanwhile (as a sweep would)
        row = await session.get(AlertRow, alert_id)
        assert row is not None
        row.status = "queued"
    good = {TOKEN_HEADER: HANDOVER, "Content-Type": "application/json"}
    again = await asyncio.to_thread(post, f"{backend}{HANDOVER_PATH}", handed, good)
    assert (again[0], again[2]) == (200, {"alert_id": alert_id, "placed": True})
    unknown = _json({"alert_id": "no-such-alert"})
    assert (await asyncio.to_thread(post, f"{backend}{HANDOVER_PATH}", unknown, good))[0] == 404
    assert (await asyncio.to_thread(post, f"{backend}{HANDOVER_PATH}", "[]", good))[0] == 400
    assert len(app.dispatched) == 1
    async with app.db.session() as session:
        assert await session.scalar(select(func.count()).select_from(AlertRow)) == 1


async def test_a_202_says_where_its_time_went(served: tuple[App, str, str]) -> None:
    """``Server-Timing``: each stage of the front's own work, which add up to its total;
    a refusal says nothing of the front's timings."""
    _, url, _ = served
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{url}/alerts", content=json.dumps(ALERT), headers=AUTH)
        refused = await client.post(f"{url}/alerts", content=json.dumps(ALERT))
    assert answer.status_code == 202
    parts = dict(p.split(";dur=") for p in answer.headers["server-timing"].split(", "))
    assert list(parts) == ["read", "parse", "queue", "write", "resume", "total"]
    stages = [float(parts[name]) for name in list(parts)[:-1]]
    assert min(stages) >= 0 and float(parts["write"]) > 0
    assert sum(stages) <= float(parts["total"]) + 0.5  # each rounded to 0.1 ms
    assert refused.status_code == 401 and "server-timing" not in refused.headers
