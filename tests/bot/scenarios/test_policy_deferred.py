"""Alerts a budget held are investigated later, in arrival order, when their window frees.

In the real app (``create_socbot``, real SQLite, Web API = ``FakeSlackAPI``): genuine
CloudTrail events POSTed to ``/alerts`` beyond a budget of one per hour wait as work
rows; the test moves the gate's and the queue's clocks into the next hours (never sleeps
through them) and each hour lets exactly one more through, oldest first, with its card
and investigation as for a new alert. An alert an analyst took up meanwhile is left
alone. (``tests/bot/intake/policy/test_policy_deferred_replicas.py``: the same across two
replicas on PostgreSQL.)"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from sqlalchemy import select

from config.policy_settings import PolicySettings
from config.settings import Settings
from store.queue.types import DEFERRED_KIND
from store.schema import WorkRow
from tests.bot.scenarios.test_slack_policy import AUTH, fixture, status_of
from tests.bot.scenarios.test_slack_storm import posts_in
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import (
    WEBHOOK_CHANNEL,
    RecordingInvestigate,
    SlackHarness,
    make_settings,
)

BUDGET = """
[[rule]]
id = "cloudtrail-budget"
action = "investigate"
budget = { investigations = 1, per = "hour" }
match = { source = "cloudtrail" }
"""
CLOUDTRAIL = (  # three genuine CloudTrail events of three kinds (no storm groups them)
    "panther-cloudtrail-root-login.json",
    "panther-cloudtrail-create-access-key.json",
    "awsdocs-cloudtrail-eventbridge.json",
)


def hours_ahead(h: SlackHarness, hours: int) -> None:
    """Move the app's policy and work-queue clocks ``hours`` past the wall clock."""
    ahead = timedelta(hours=hours)
    assert h.app.gate is not None
    h.app.gate.clock = lambda: datetime.now(UTC) + ahead
    queue = h.app.coordinator.queue
    wall: Callable[[], datetime] = partial(type(queue)._now, queue)  # the wall clock
    queue._now = lambda: wall() + ahead  # type: ignore[method-assign]


async def held_rows(h: SlackHarness) -> list[tuple[str | None, str, datetime | None]]:
    async with h.db.session() as session:
        rows = await session.execute(
            select(WorkRow.alert_id, WorkRow.state, WorkRow.not_before)
            .where(WorkRow.kind == DEFERRED_KIND)
            .order_by(WorkRow.id)
        )
        return [(a, s, n.replace(tzinfo=UTC) if n else None) for a, s, n in rows]


def budget_settings(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    """The harness's settings with the budget rule (``BUDGET``) as the whole policy."""
    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "budget.toml").write_text(BUDGET)
    return make_settings(tmp_path, fake.base_url).model_copy(
        update={"policy": PolicySettings(dir=str(folder), reload_s=0)}
    )


async def test_held_alerts_run_one_per_window_in_arrival_order(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    settings = budget_settings(tmp_path, fake)
    async with SlackHarness(fake, settings, investigate) as h:
        ids = []
        for name in CLOUDTRAIL:
            response = await h.client.post("/alerts", json=fixture(name), headers=AUTH)
            assert response.status == 202
            ids.append((await response.json())["alert_id"])
            await h.settle()
        hour_end = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        hour_end += timedelta(hours=1)

        def investigated() -> list[str]:
            return [alert.id for _, _, alert in investigate.calls if alert]

        assert investigated() == ids[:1]
        assert [(await status_of(h, i))[0] for i in ids[1:]] == ["over_budget"] * 2
        rows = await held_rows(h)
        assert [(a, s) for a, s, _ in rows] == [(ids[1], "queued"), (ids[2], "queued")]
        assert rows[0][2] == hour_end  # due when the hour's budget is over
        health = await (await h.client.get("/healthz")).json()
        assert health["queued"] == 0  # waiting by design: not a stuck queue

        hours_ahead(h, 1)  # the next hour: room for one, the oldest held first
        h.app.coordinator.nudge()
        await h.settle()
        assert investigated() == ids[:2]
        rows = await held_rows(h)
        assert [(a, s) for a, s, _ in rows] == [(ids[1], "done"), (ids[2], "queued")]
        assert rows[1][2] == hour_end + timedelta(hours=1)  # tried, still spent: next hour
        assert len(posts_in(fake, WEBHOOK_CHANNEL)) == 2  # its card, as for a new alert

        hours_ahead(h, 2)
        h.app.coordinator.nudge()
        await h.settle()
        assert investigated() == ids
        assert [s for _, s, _ in await held_rows(h)] == ["done", "done"]
        health = await (await h.client.get("/healthz")).json()
        assert health["policy"]["alerts"]["deferred"] == 2  # each held alert counted once
        assert health["policy"]["alerts"]["investigated"] == 3


async def test_an_alert_taken_up_meanwhile_is_not_run_again(
    fake: FakeSlackAPI, investigate: RecordingInvestigate, tmp_path: Path
) -> None:
    settings = budget_settings(tmp_path, fake)
    async with SlackHarness(fake, settings, investigate) as h:
        ids = []
        for name in CLOUDTRAIL[:2]:
            response = await h.client.post("/alerts", json=fixture(name), headers=AUTH)
            ids.append((await response.json())["alert_id"])
            await h.settle()
        assert h.app.gate is not None
        await h.app.gate.statuses.set(ids[1], "concluded")  # an analyst investigated it
        hours_ahead(h, 1)
        h.app.coordinator.nudge()
        await h.settle()
        assert [alert.id for _, _, alert in investigate.calls if alert] == ids[:1]
        assert [s for _, s, _ in await held_rows(h)] == ["done"]
        assert (await status_of(h, ids[1]))[0] == "concluded"
