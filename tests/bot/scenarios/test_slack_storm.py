"""Alert storms: grouping, a bounded queue, deferral, one storm message, quiet shutdown.

The real webhook, app, coordinator, pacer and SQLite; the Web API is ``FakeSlackAPI``;
the investigation is a tiny stand-in that stores a verdict and posts a conclusion in
its thread through the shared pacer, as ``EngineInvestigator`` does.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from alerts.parse import Alert, Indicator
from bot.intake.triage import AlertTriage, group_key
from bot.slack.pacer import Pacer
from bot.slack.posting import post_in_thread
from bot.work.worker import ThreadRef
from store.queue.work import WorkQueue
from store.triage.alerts import AlertStore
from store.triage.states import AlertStatuses
from tests.fakes.signals import writes
from tests.fakes.slack_api import Call, FakeSlackAPI
from tests.slack_support import (
    ALERTS,
    WEBHOOK_CHANNEL,
    WEBHOOK_TOKEN,
    SlackHarness,
    make_settings,
    settle_until,
    start_up_pruned,
)

AUTH = {"Authorization": f"Bearer {WEBHOOK_TOKEN}"}
RATE = 100.0  # new messages per second per channel in these tests


class ConcludingInvestigate:
    """Stores a benign verdict and posts a one-line conclusion in the thread (paced)."""

    def __init__(self, delay: float = 0.01) -> None:
        self.delay = delay
        self.h: SlackHarness | None = None
        self.deferred_when_concluded: list[int] = []
        self.gate: asyncio.Event | None = None

    async def __call__(
        self, thread: ThreadRef, text: str, alert: Alert | None, *, user: str | None = None
    ) -> None:
        assert self.h is not None and alert is not None
        if self.gate is not None:
            await self.gate.wait()
        await asyncio.sleep(self.delay)
        store = AlertStore(self.h.db)
        await store.set_verdict(
            alert.id, verdict="benign", summary="expected", investigation_id="i"
        )
        triage = self.h.app.triage
        assert triage is not None
        self.deferred_when_concluded.append((await triage.counts()).get("deferred", 0))
        message = {"text": f"verdict for {alert.title}: benign"}
        await post_in_thread(
            self.h.web_client,
            self.h.pacer,
            channel=thread.channel,
            thread_ts=thread.thread_ts,
            message=message,
        )


async def investigating(triage: AlertTriage, n: int) -> bool:
    return (await triage.counts()).get("investigating") == n


async def concluded(triage: AlertTriage, n: int) -> bool:
    return (await triage.totals()).get("concluded") == n


async def status_is(h: SlackHarness, alert_id: str, status: str) -> bool:
    stored = await AlertStore(h.db).get(alert_id)
    return stored is not None and stored.status == status


def payload(title: str, ip: str, severity: str = "high") -> dict[str, Any]:
    return {"title": title, "severity": severity, "source_ip": ip}


def storm_payloads() -> list[dict[str, Any]]:
    """100 alerts: 60 repeats of three detections (one per IP), 40 distinct ones."""
    repeats = [
        payload(f"SSH brute force attempt {n}", f"8.8.{k}.{k}")
        for n, k in zip(range(60), itertools.cycle(range(3)), strict=False)
    ]
    distinct = [payload(f"Odd login for user{n}", f"9.9.{n}.1", "medium") for n in range(40)]
    mixed = [p for pair in itertools.zip_longest(repeats, distinct) for p in pair if p]
    return mixed


class TurnsKept(Pacer):
    """The real pacer, keeping when it handed each turn out (arrivals at the fake would
    jitter by the delivery time of each post on a loaded machine)."""

    def __init__(self, rate_per_s: float, **kwargs: Any) -> None:
        super().__init__(rate_per_s, **kwargs)
        self.turns: list[float] = []

    def _take(self, state: Any) -> None:
        self.turns.append(time.monotonic())
        super()._take(state)


def harness(
    fake: FakeSlackAPI, tmp_path: Path, investigate: ConcludingInvestigate, **slack: Any
) -> SlackHarness:
    values: dict[str, Any] = {
        "max_concurrent_investigations": 2,
        "max_queued_investigations": 3,
        **slack,
    }
    settings = make_settings(tmp_path, fake.base_url, **values)
    h = SlackHarness(
        fake, settings, investigate, pacer=TurnsKept(rate_per_s=RATE, updates_per_min=6000)
    )
    investigate.h = h
    return h


async def post_all(h: SlackHarness, bodies: list[dict[str, Any]]) -> list[str]:
    async def one(body: dict[str, Any]) -> str:
        response = await h.client.post("/alerts", data=json.dumps(body), headers=AUTH)
        assert response.status == 202
        return str((await response.json())["alert_id"])

    return list(await asyncio.gather(*(one(b) for b in bodies)))


def top_level(fake: FakeSlackAPI) -> list[Call]:
    return [
        c
        for c in fake.calls_to("chat.postMessage")
        if c.args["channel"] == WEBHOOK_CHANNEL and not c.args.get("thread_ts")
    ]


def final_text(fake: FakeSlackAPI, ts: str) -> str:
    """The last text shown for message ``ts`` (posted, then maybe edited)."""
    message = next(m for m in fake.messages if m.ts == ts)
    return json.dumps(message.extra.get("blocks"), ensure_ascii=False)


async def test_storm_every_alert_accounted_for_grouped_paced_and_concluded(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    investigate = ConcludingInvestigate()
    async with harness(fake, tmp_path, investigate) as h:
        triage = h.app.triage
        assert triage is not None
        triage.update_interval = 0.05  # edits in place at most every 50 ms
        investigate.gate = asyncio.Event()  # hold the first investigations: mid-storm view
        ids = await post_all(h, storm_payloads())
        await h.app.webhook.drain()
        await writes(h.db).until(lambda: investigating(triage, 2))

        # mid-storm: every accepted alert is in exactly one state, none lost
        expected = {"investigating": 2, "queued": 3, "grouped": 57, "deferred": 38}
        assert await triage.counts() == expected
        assert await AlertStatuses(h.db).counts() == expected
        assert len(ids) == 100 == sum(expected.values())
        health = await (await h.client.get("/healthz")).json()
        assert health["alerts"] == expected
        investigate.gate.set()

        await settle_until(h, lambda: concluded(triage, 43))
        assert await triage.counts() == {}  # the storm is over
        await triage.edits_done()  # last edits of the cards and the storm message
        store = AlertStatuses(h.db)
        assert await store.counts() == {"concluded": 43, "grouped": 57}
        grouped = await store.by_status("grouped", limit=100)
        assert {a.verdict for a in grouped} == {"benign"}  # the group's verdict
        assert all(a.group_id in ids for a in grouped)

    # conclusions were posted while alerts were still deferred (not starved by the backlog)
    assert max(investigate.deferred_when_concluded) > 0

    tops = top_level(fake)
    boards = [m for m in fake.messages if "Alert storm" in m.text and not m.thread_ts]
    assert len(boards) == 1, "one storm message, edited in place"
    shown = final_text(fake, boards[0].ts)
    assert "Alert storm over" in shown and "*100* alerts received" in shown
    assert "Concluded*\\n43" in shown and "Grouped*\\n57" in shown
    assert fake.calls_to("chat.update"), "edited, not re-posted"

    # 43 cards (3 groups + 40 distinct) + the storm message; groups edited with their count
    assert len(tops) == 43 + 1
    group_cards = [m for m in fake.messages if "SSH brute force" in m.text and not m.thread_ts]
    assert len(group_cards) == 3
    for card in group_cards:
        assert "19 similar alerts" in final_text(fake, card.ts)
        assert "*Verdict:* Benign" in final_text(fake, card.ts)

    # pace: each new message in the channel took a turn, turns never faster than the rate
    posts = fake.calls_to("chat.postMessage")
    assert {c.args["channel"] for c in posts} == {WEBHOOK_CHANNEL}
    assert isinstance(h.pacer, TurnsKept) and len(h.pacer.turns) >= len(posts)
    turns = h.pacer.turns
    spans = [b - a for a, b in zip(turns, turns[10:], strict=False)]  # 10 intervals each
    assert min(spans) >= 10 / RATE - 0.001
    queued_notices = [c for c in posts if "Queued" in c.args["text"]]
    assert len(queued_notices) <= 2  # the storm message shows the queue instead


async def test_shutdown_with_a_queue_posts_nothing_and_hands_the_waiting_alerts_on(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    investigate = ConcludingInvestigate()
    investigate.gate = asyncio.Event()  # never opened: the first run holds the only slot
    h = harness(fake, tmp_path, investigate, max_concurrent_investigations=1)
    async with h:
        await start_up_pruned(h)  # the one slot is the alerts'
        bodies = [payload(f"Odd login for user{n}", f"9.9.{n}.1") for n in range(6)]
        ids = await post_all(h, bodies)
        await h.handed_over()  # each admitted alert submitted (and claimed)
        assert (h.app.coordinator.running, h.app.coordinator.queued) == (1, 3)
        posts_before = len(fake.calls_to("chat.postMessage"))
        started = time.monotonic()
        await h.app.close()  # what `socbot serve` does on SIGTERM
        took = time.monotonic() - started
        # grace 0: the held run (held forever) is not waited for; 10 s is only a loose bound
        assert took < 10.0
        assert len(fake.calls_to("chat.postMessage")) == posts_before  # quiet (all awaited)
        assert not [m for m in fake.messages if "internal error" in m.text]
        store = AlertStatuses(h.db)
        # the running alert and the three queued ones keep their queued work rows (for the
        # next start or another replica); the two beyond the queue are deferred
        assert await store.counts() == {"queued": 4, "deferred": 2}
        assert await WorkQueue(h.db).counts() == {"queued": 4, "running": 0}
        waiting = await store.by_status("queued") + await store.by_status("deferred")
        assert {a.id for a in waiting} == set(ids)
        assert await h.app.triage.counts() == {"queued": 4, "deferred": 2}  # type: ignore[union-attr]
        assert sum(1 for a in waiting if a.slack_ts) == 4  # these keep their card


async def test_deferred_alerts_of_an_earlier_run_are_investigated_at_start(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    from alerts.parse import parse_alert
    from store.db.engine import Database

    db = Database(make_settings(tmp_path, fake.base_url).database_url)
    await db.create()
    store = AlertStore(db)
    low = parse_alert(payload("Odd login for user1", "9.9.1.1", "low"), "generic")
    critical = parse_alert(payload("Odd login for user2", "9.9.2.1", "critical"), "generic")
    crashed = parse_alert(payload("Odd login for user3", "9.9.3.1", "low"), "generic")
    for alert, status in ((low, "deferred"), (critical, "deferred"), (crashed, "investigating")):
        await store.save(alert)
        await AlertStatuses(db).set(alert.id, status)  # the last one: a run that crashed
    investigate = ConcludingInvestigate()
    h = harness(fake, tmp_path, investigate, max_concurrent_investigations=1)
    h.db, h.owns_db = db, False
    try:
        async with h:
            await fake.wait_for(lambda: len(fake.messages) >= 6)  # 3 cards, 3 conclusions
            await h.settle()
            assert await AlertStatuses(db).counts() == {"concluded": 3}
            assert h.app.triage is not None and await h.app.triage.counts() == {}
        cards = [c for c in top_level(fake) if "Alert storm" not in c.args["text"]]
        assert "user2" in cards[0].args["text"]  # most severe first
    finally:
        await db.close()


async def test_pacer_gives_urgent_posts_their_turn_before_cards_and_notices() -> None:
    pacer = Pacer(rate_per_s=50)
    order: list[str] = []

    async def post(name: str, background: bool) -> None:
        async with pacer.slot("C1", background=background):
            order.append(name)

    async with pacer.slot("C1"):
        order.append("first")
    cards = [asyncio.create_task(post(f"card{n}", True)) for n in range(3)]
    await asyncio.sleep(0)
    conclusion = asyncio.create_task(post("conclusion", False))
    dropped = asyncio.create_task(post("dropped", True))
    await asyncio.sleep(0)
    dropped.cancel()  # a notice no longer needed gives its turn up
    await asyncio.gather(*cards, conclusion, return_exceptions=True)
    assert order == ["first", "conclusion", "card0", "card1", "card2"]
    assert pacer.waiting("C1") == 0


GROUP_CASES = [
    (
        "same alert, other count",
        ("Brute force x 12", "1.2.3.4"),
        ("Brute force x 99", "1.2.3.4"),
        True,
    ),
    ("other primary indicator", ("Brute force", "1.2.3.4"), ("Brute force", "5.6.7.8"), False),
    ("other title", ("Brute force", "1.2.3.4"), ("Port scan", "1.2.3.4"), False),
    ("case and spaces", ("Brute  Force", "1.2.3.4"), ("brute force", "1.2.3.4"), True),
]


@pytest.mark.parametrize(
    ("first", "second", "same"), [c[1:] for c in GROUP_CASES], ids=[c[0] for c in GROUP_CASES]
)
def test_group_key(first: tuple[str, str], second: tuple[str, str], same: bool) -> None:
    def alert(title: str, ip: str) -> Alert:
        indicators = [Indicator(kind="ipv4", value=ip)]
        return Alert(id="x", source="generic", title=title, indicators=indicators, raw={})

    assert (group_key(alert(*first)) == group_key(alert(*second))) is same


async def test_without_a_webhook_channel_there_is_no_triage(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    async with harness(fake, tmp_path, ConcludingInvestigate(), webhook_channel=None) as h:
        assert h.app.triage is None
        health = await (await h.client.get("/healthz")).json()
        assert "alerts" not in health
        response = await h.client.post("/alerts", data="{}", headers=AUTH)
        assert response.status == 503  # the webhook is off without a channel


async def test_background_edits_leave_the_update_budget_to_live_status_edits() -> None:
    pacer = Pacer(updates_per_min=1200, update_burst=2)  # 20 edits/s after a burst of 2
    done: list[str] = []

    async def edit(name: str, background: bool) -> None:
        async with pacer.update_slot(background=background):
            done.append(name)

    cards = [asyncio.create_task(edit(f"card{n}", True)) for n in range(3)]
    await asyncio.sleep(0)  # card0 took a token while two were left
    status = [asyncio.create_task(edit(f"status{n}", False)) for n in range(2)]
    await asyncio.gather(*cards, *status)
    assert done[:3] == ["card0", "status0", "status1"]
    assert sorted(done[3:]) == ["card1", "card2"]


async def test_stop_in_a_queued_alert_thread_is_accounted_as_cancelled(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    from tests.slack_support import load

    investigate = ConcludingInvestigate()
    investigate.gate = asyncio.Event()
    async with harness(fake, tmp_path, investigate, max_concurrent_investigations=1) as h:
        first, second = await post_all(
            h, [payload(f"Odd login {w}", f"9.9.{n}.1") for n, w in enumerate("ab")]
        )
        triage = h.app.triage
        assert triage is not None
        await h.handed_over()  # both alerts submitted (and claimed)
        assert h.app.coordinator.queued == 1
        stored = await AlertStore(h.db).get(second)
        assert stored is not None and stored.slack_ts
        stop = load("message_thread_reply.json")
        stop["event"].update(channel=WEBHOOK_CHANNEL, thread_ts=stored.slack_ts, text="stop")
        assert (await h.event(stop))[0] == 200
        await writes(h.db).until(lambda: status_is(h, second, "cancelled"))
        investigate.gate.set()
        await h.settle()
        await writes(h.db).until(lambda: concluded(triage, 1))
        assert await AlertStatuses(h.db).counts() == {"concluded": 1, "cancelled": 1}
        assert (await AlertStore(h.db).get(first)) is not None
        texts = [m.text for m in fake.messages if m.thread_ts == stored.slack_ts]
        assert any("cancelled" in t for t in texts)  # the analyst is told


# --- alerts forwarded into an alert channel by other bots ---------------------------


def forwarded_event(n: int, body: dict[str, Any]) -> dict[str, Any]:
    """An integration's top-level message in the alert channel carrying alert JSON."""
    from tests.slack_support import load

    event = load("bot_message_attachments.json")
    ts = f"1700009000.{n:06d}"
    event["event"].pop("attachments")
    event["event"].update(text=json.dumps(body), ts=ts, event_ts=ts, channel=ALERTS)
    event["event_id"] = f"Ev0FORWARD{n:04d}"
    return event


def forwarded_storm() -> list[dict[str, Any]]:
    """30 alerts: 3 detections repeated 8 times each (one IP each) and 6 one-offs."""
    repeats = [
        payload(f"Impossible travel for admin {n}", f"8.8.{n % 3}.{n % 3}") for n in range(24)
    ]
    distinct = [payload(f"New MFA device {n}", f"9.9.{n}.1", "medium") for n in range(6)]
    return repeats[:12] + distinct[:3] + repeats[12:] + distinct[3:]


async def send_forwarded(h: SlackHarness, bodies: list[dict[str, Any]]) -> list[str]:
    """Deliver the messages as signed events; the ts of each."""
    events = [forwarded_event(n, body) for n, body in enumerate(bodies)]
    for event in events:
        assert (await h.event(event))[0] == 200
    return [str(e["event"]["ts"]) for e in events]


def posts_in(fake: FakeSlackAPI, channel: str) -> list[Call]:
    return [c for c in fake.calls_to("chat.postMessage") if c.args["channel"] == channel]


async def test_forwarded_storm_is_triaged_like_webhook_alerts(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    investigate = ConcludingInvestigate()
    investigate.gate = asyncio.Event()
    limits = {"max_concurrent_investigations": 1, "max_queued_investigations": 2}
    h = harness(fake, tmp_path, investigate, **limits)
    async with h:
        triage = h.app.forwarded[ALERTS]
        assert triage is not h.app.triage
        triage.update_interval = 0.05
        stamps = await send_forwarded(h, forwarded_storm())
        await writes(h.db).until(lambda: investigating(triage, 1))

        # mid-storm: every forwarded alert is in exactly one state
        store = AlertStore(h.db)
        expected = {"investigating": 1, "queued": 2, "deferred": 6, "grouped": 21}
        assert await triage.counts() == expected
        assert await AlertStatuses(h.db).counts(channel=ALERTS) == expected
        health = await (await h.client.get("/healthz")).json()
        assert health["alert_channels"] == {ALERTS: expected}
        assert health["alerts"] == {}  # the webhook channel is calm
        investigate.gate.set()

        await settle_until(h, lambda: concluded(triage, 9))
        assert await triage.counts() == {}
        await triage.edits_done()  # last edits in place
        assert await AlertStatuses(h.db).counts() == {"concluded": 9, "grouped": 21}
        rows = {ts: await store.find_by_slack_message(ALERTS, ts) for ts in stamps}
        assert all(r is not None for r in rows.values())

    leaders = {ts for ts, r in rows.items() if r is not None and r.status == "concluded"}
    grouped = {ts: r for ts, r in rows.items() if r is not None and r.status == "grouped"}
    assert len(leaders) == 9 and len(grouped) == 21
    leader_ids = {r.id for ts, r in rows.items() if r is not None and ts in leaders}
    assert {r.verdict for r in grouped.values()} == {"benign"}  # the group's verdict
    assert {r.group_id for r in grouped.values()} <= leader_ids

    # each leader investigated in its own message's thread; grouped ones not at all
    conclusions = [m for m in fake.messages if m.text.startswith("verdict for")]
    assert sorted(str(m.thread_ts) for m in conclusions) == sorted(leaders)

    # grouped alerts are marked with a reaction, not a message
    reactions = [c for c in fake.calls_to("reactions.add") if c.args["name"] == "link"]
    assert sorted(c.args["timestamp"] for c in reactions) == sorted(grouped)

    # no cards: the only top-level message is the storm message, edited in place
    tops = [c for c in posts_in(fake, ALERTS) if not c.args.get("thread_ts")]
    assert len(tops) == 1 and "Alert storm" in tops[0].args["text"]
    board = next(m for m in fake.messages if m.channel == ALERTS and not m.thread_ts)
    shown = final_text(fake, board.ts)
    assert "Alert storm over" in shown and "*30* alerts received" in shown
    assert "Concluded*\\n9" in shown and "Grouped*\\n21" in shown

    # one group note per repeated detection, in its first alert's thread, edited in place
    notes = [m for m in fake.messages if "grouped under this alert" in m.text]
    assert len(notes) == 3 and {m.thread_ts for m in notes} <= leaders
    for note in notes:
        text = final_text(fake, note.ts)
        assert "7 similar alerts" in text and "*Verdict for the group:* Benign" in text

    # pace: far fewer new messages than alerts, never faster than the pacer's rate
    posts = posts_in(fake, ALERTS)
    queued_notices = [c for c in posts if "Queued" in c.args["text"]]
    assert len(queued_notices) <= 2
    assert len(posts) == 1 + 3 + 9 + len(queued_notices)
    times = sorted(c.at for c in posts)
    spans = [b - a for a, b in zip(times, times[5:], strict=False)]
    assert min(spans) >= 5 / RATE - 0.01


async def test_deferred_forwarded_alerts_resume_in_their_own_thread_after_a_restart(
    fake: FakeSlackAPI, tmp_path: Path
) -> None:
    from store.db.engine import Database

    db = Database(make_settings(tmp_path, fake.base_url).database_url)
    await db.create()
    store = AlertStore(db)
    try:
        first = ConcludingInvestigate()
        first.gate = asyncio.Event()  # never opened: the run is interrupted by the shutdown
        h = harness(fake, tmp_path, first, max_concurrent_investigations=1)
        h.db, h.owns_db = db, False
        bodies = [payload(f"New MFA device {w}", f"9.9.{n}.1") for n, w in enumerate("abcd")]
        async with h:
            await start_up_pruned(h)  # the one slot is the alerts'
            stamps = await send_forwarded(h, bodies)
            webhook_id = (await post_all(h, [payload("Port scan", "7.7.7.7")]))[0]
            await h.handed_over()  # each admitted alert submitted (and claimed)
            assert (h.app.coordinator.running, h.app.coordinator.queued) == (1, 4)
        assert await AlertStatuses(db).counts() == {"queued": 5}  # their work rows wait
        posts_before = len(fake.calls_to("chat.postMessage"))

        second = ConcludingInvestigate()
        h2 = harness(fake, tmp_path, second, max_concurrent_investigations=1)
        h2.db, h2.owns_db = db, False
        async with h2:
            await h2.settle()  # resumed at start: the pump admits them, the runs end
            assert len(second.deferred_when_concluded) == 5
            assert await AlertStatuses(db).counts() == {"concluded": 5}
            webhook_row = await store.get(webhook_id)
        new_posts = fake.calls_to("chat.postMessage")[posts_before:]
    finally:
        await db.close()

    # the forwarded alerts were investigated in their original threads, without cards
    in_alerts = [c for c in new_posts if c.args["channel"] == ALERTS]
    tops = [c for c in in_alerts if not c.args.get("thread_ts")]
    assert all("Alert storm" in c.args["text"] for c in tops)  # no cards, at most a board
    threads_used = {c.args["thread_ts"] for c in in_alerts if "verdict for" in c.args["text"]}
    assert threads_used == set(stamps)
    # the webhook alert stays the webhook channel's: concluded in its card's thread there
    assert webhook_row is not None and webhook_row.slack_channel == WEBHOOK_CHANNEL
    in_webhook = [c for c in new_posts if c.args["channel"] == WEBHOOK_CHANNEL]
    assert [c.args.get("thread_ts") for c in in_webhook if "verdict for" in c.args["text"]] == [
        webhook_row.slack_ts
    ]
