"""Alert storms with two replicas (two socbot apps, two engines, one database) and
across a restart, on SQLite and on a real PostgreSQL: the storm state is the database's.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from alerts.parse import Alert
from bot.work.worker import ThreadRef
from config.settings import Settings
from store.db.engine import Database
from store.triage.alerts import AlertStore
from store.triage.states import AlertStatuses
from store.triage.storm_posts import StormPosts
from tests.fakes.slack_api import FakeSlackAPI
from tests.pg_server import PostgresServer
from tests.slack_support import (
    WEBHOOK_CHANNEL,
    WEBHOOK_TOKEN,
    RecordingInvestigate,
    SlackHarness,
    make_settings,
)

AUTH = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}


class Concluding(RecordingInvestigate):
    """Records the run, waits for the gate, then stores a benign verdict."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db

    async def __call__(
        self, thread: ThreadRef, text: str, alert: Alert | None, *, user: str | None = None
    ) -> None:
        await super().__call__(thread, text, alert, user=user)
        assert alert is not None
        await AlertStore(self.db).set_verdict(alert.id, verdict="benign", summary="expected")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path, postgres: PostgresServer) -> str:
    """One database URL the replicas share."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'shared.db'}"
    return postgres.create_database(f"storm_{uuid.uuid4().hex[:10]}")


def shared(tmp_path: Path, fake: FakeSlackAPI, url: str, **slack: Any) -> Settings:
    values = {"max_concurrent_investigations": 1, "max_queued_investigations": 1, **slack}
    settings = make_settings(tmp_path, fake.base_url, **values)
    return settings.model_copy(update={"database_url": url})


def alert(title: str, ip: str) -> dict[str, Any]:
    """An invented alert in the generic format."""
    return {"title": title, "severity": "high", "source_ip": ip}


async def post(h: SlackHarness, body: dict[str, Any]) -> str:
    response = await h.client.post("/alerts", data=json.dumps(body), headers=AUTH)
    assert response.status == 202
    return str((await response.json())["alert_id"])


def tops(fake: FakeSlackAPI) -> list[Any]:
    """Top-level messages in the webhook channel (cards and storm messages)."""
    return [m for m in fake.messages if m.channel == WEBHOOK_CHANNEL and not m.thread_ts]


def shown(fake: FakeSlackAPI, ts: str) -> str:
    message = next(m for m in fake.messages if m.ts == ts)
    return json.dumps(message.extra.get("blocks"), ensure_ascii=False)


async def test_similar_alerts_reaching_two_replicas_at_once_make_one_group(
    fake: FakeSlackAPI, tmp_path: Path, url: str
) -> None:
    settings = shared(tmp_path, fake, url)
    first, second = Database(url), Database(url)
    await first.create()
    ran_a, ran_b = Concluding(first), Concluding(second)
    async with (
        SlackHarness(fake, settings, ran_a, db=first) as a,
        SlackHarness(fake, settings, ran_b, db=second) as b,
    ):
        for h in (a, b):
            assert h.app.triage is not None
            h.app.triage.update_interval = 0.05
        bodies = [alert(f"SSH brute force x {n}", "8.8.8.8") for n in range(12)]
        ids = await asyncio.gather(*(post(a if n % 2 else b, x) for n, x in enumerate(bodies)))
        for _ in range(2):
            for h in (a, b):
                await h.settle()
        for h in (a, b):
            assert h.app.triage is not None
            await h.app.triage.edits_done()
        counts = await AlertStatuses(first).counts()
    await first.close()
    await second.close()

    assert counts == {"concluded": 1, "grouped": 11}
    assert len(ran_a.calls) + len(ran_b.calls) == 1  # one investigation
    cards = tops(fake)
    assert len(cards) == 1  # one card, edited in place by both replicas
    text = shown(fake, cards[0].ts)
    assert "11 similar alerts" in text and "*Verdict:* Benign" in text
    assert len(set(ids)) == 12  # every alert was accepted


async def test_a_restarted_replica_edits_the_storm_message_and_healthz_is_the_database(
    fake: FakeSlackAPI, tmp_path: Path, url: str
) -> None:
    settings = shared(tmp_path, fake, url)
    db = Database(url)
    await db.create()
    held = Concluding(db)
    held.gate = asyncio.Event()  # never opened: the storm is still on at the restart
    async with SlackHarness(fake, settings, held, db=db) as h:
        assert h.app.triage is not None
        h.app.triage.update_interval = 0.05
        await asyncio.gather(*(post(h, alert(f"Odd login {n}", f"9.9.{n}.1")) for n in range(6)))
        await h.app.webhook.drain()
        await held.wait_started()
        await h.app.triage.edits_done()  # cards and the storm message posted
        boards = [m for m in tops(fake) if "Alert storm" in m.text]
        assert len(boards) == 1
    before = await AlertStatuses(db).counts()
    assert before == {"queued": 2, "deferred": 4}  # the held run and the queued one kept

    again = Concluding(db)
    again.gate = asyncio.Event()
    replica = Database(url)  # a new process's engine
    async with SlackHarness(fake, settings, again, db=replica) as h2:
        assert h2.app.triage is not None
        h2.app.triage.update_interval = 0.05
        await again.wait_started()
        health = await (await h2.client.get("/healthz")).json()
        stored = await AlertStatuses(db).counts()
        assert health["alerts"] == stored == health["alerts_total"]
        assert sum(stored.values()) == 6
        again.gate.set()
        for _ in range(3):
            await h2.settle()
        await h2.app.triage.edits_done()
        health = await (await h2.client.get("/healthz")).json()
        assert health["alerts_total"] == await AlertStatuses(db).counts() == {"concluded": 6}
        assert health["alerts"] == {}  # the storm is over
    await replica.close()
    await db.close()

    boards = [m for m in tops(fake) if "Alert storm" in m.text]
    assert len(boards) == 1, "the storm message is edited after the restart, not posted again"
    text = shown(fake, boards[0].ts)
    assert "Alert storm over" in text and "*6* alerts received" in text
    assert any(c.args["ts"] == boards[0].ts for c in fake.calls_to("chat.update"))


def live_cards(fake: FakeSlackAPI) -> list[Any]:
    """Alert cards that still say the investigation runs in their own thread."""
    return [m for m in tops(fake) if "investigating in the thread" in shown(fake, m.ts)]


async def stall(h: SlackHarness) -> None:
    """The replica's beats and sweeps stop, as when its process stalls
    (``store.queue.replicas``, ``bot.intake._sweep``): a stalled replica must not sweep
    its own launch back before the other replica takes it over."""
    assert h.app.triage is not None
    h.app.triage.sweeper.stop()
    coordinator = h.app.coordinator
    coordinator._leases_done.set()
    if coordinator._renewer is not None:
        await coordinator._renewer


async def test_a_takeover_of_a_stalled_launch_leaves_one_live_card(
    fake: FakeSlackAPI, tmp_path: Path, url: str
) -> None:
    """A's card post takes effect in Slack but A stalls before it hears back (its lease
    lapses); B takes the launch over, posts a card and runs the investigation in its
    thread. When A wakes up, its card is edited to point to B's thread."""
    settings = shared(tmp_path, fake, url)
    a_settings, b_settings = (
        settings.model_copy(
            update={"work": settings.work.model_copy(update={"lease_s": 0.3, "replica_id": name})}
        )
        for name in ("replica-a", "replica-b")
    )
    first, second = Database(url), Database(url)
    await first.create()
    ran_a, ran_b = Concluding(first), Concluding(second)
    ran_b.gate = asyncio.Event()  # B's run is on while A wakes up
    fake.hold("chat.postMessage", when=lambda c: not fake.held and not c.args.get("thread_ts"))
    async with (
        SlackHarness(fake, a_settings, ran_a, db=first) as a,
        SlackHarness(fake, b_settings, ran_b, db=second) as b,
    ):
        assert a.app.triage is not None and b.app.triage is not None
        for h in (a, b):
            assert h.app.triage is not None
            h.app.triage.update_interval = 0.05
        alert_id = await post(a, alert("Odd login <!channel> from *new* country", "9.9.9.9"))
        await fake.wait_for(lambda: bool(fake.held))  # A's card is in Slack; A hangs
        [stalled] = tops(fake)
        await stall(a)
        await asyncio.sleep(0.3 * 3)  # A's launch looks dead
        await b.app.triage.sweep()  # B takes the launch over
        await b.app.triage.drain()
        await ran_b.wait_started()
        [live] = [m for m in tops(fake) if m.ts != stalled.ts]
        assert ran_b.calls[0][0].thread_ts == live.ts

        fake.release_held()  # A hears back from Slack at last
        await a.app.triage.drain()
        await a.app.triage.edits_done()
        stored = await AlertStore(first).get(alert_id)
        group = await StormPosts(first).group(alert_id)
        ran_b.gate.set()
        await b.settle()
    await first.close()
    await second.close()

    assert ran_a.calls == [] and len(ran_b.calls) == 1  # one investigation, in B's thread
    assert stored is not None and (stored.slack_channel, stored.slack_ts) == (
        WEBHOOK_CHANNEL,
        live.ts,
    )
    assert group is not None and group.card_ts == live.ts  # edits go to the live card
    assert [m.ts for m in live_cards(fake)] == [live.ts]  # one live card per alert
    moved = shown(fake, stalled.ts)
    assert f"p{live.ts.replace('.', '')}" in moved  # a permalink to the live thread
    assert "<!channel>" not in moved and "\u2039!channel\u203a" in moved  # alert text escaped
    assert any(c.args["ts"] == stalled.ts for c in fake.calls_to("chat.update"))
