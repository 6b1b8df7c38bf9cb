"""Budget-held alerts with two replicas sharing one real PostgreSQL database.

Each replica has its own connection pool, policy gate, work queue and worker
(``Coordinator``); alerts of one source (six deliveries of Okta's genuine sample event
hook) arrive at either replica beyond a budget of two an hour. The test moves both
replicas' clocks into the next hours (never sleeps through them): whichever replica
claims the held rows, each hour lets exactly two through, in the order the alerts
arrived, and the budget's counter row says two. The channel's triage here records what
the policy let through (the real triage, with Slack, is ``test_policy_deferred.py``).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import select

from alerts.model import Alert
from alerts.parse import parse_alert
from bot.intake.policy.dispatch import PolicedTriage
from bot.intake.policy.gate import PolicyGate
from bot.intake.policy.held import DeferredRunner
from bot.slack.pacer import Pacer
from bot.slack.reporter import SlackReporter
from bot.work.learning import Silent
from bot.work.worker import Coordinator
from config.policy_settings import PolicySettings
from store.db.engine import Database
from store.queue.deferred import DeferredAlerts
from store.schema import PolicyBudget
from store.triage.alerts import AlertStore
from store.triage.policy import PolicyStore
from store.triage.states import AlertStatuses
from tests.pg_server import PostgresServer
from tests.queue_clock import LEASE_S, AheadQueue

FIXTURES = Path(__file__).parents[3] / "fixtures" / "alerts"
CHANNEL = "CALERTS01"
RULE = """
[[rule]]
id = "okta-budget"
action = "investigate"
budget = { investigations = 2, per = "hour" }
match = { source = "okta" }
"""


class Clock:
    """Wall-clock time plus what the test moved it by, shared by both replicas."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.ahead


class LetThrough:
    """The channel's triage behind the policy: records the alerts it is handed."""

    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        self.name = name
        self.log = log

    async def dispatch(self, alert: Alert, *, message_ts: str | None = None) -> None:
        self.log.append((self.name, alert.id))


class Replica:
    """One replica's pool, gate, queue, worker and policed triage."""

    def __init__(
        self, url: str, name: str, folder: Path, clock: Clock, log: list[tuple[str, str]]
    ) -> None:
        self.db = Database(url)
        self.queue = AheadQueue(self.db, lease_s=LEASE_S)
        self.gate = PolicyGate(
            PolicySettings(dir=str(folder), reload_s=0),
            PolicyStore(self.db),
            AlertStatuses(self.db),
            deferred=DeferredAlerts(self.db),
            clock=clock.now,
        )
        self.coordinator = Coordinator(
            2, Silent("replica"), self.queue, replica=name, poll_s=0.05, retry_backoff_s=0.05
        )
        home = LetThrough(name, log)
        reporter = SlackReporter(AsyncWebClient(token="xoxb-test"), Pacer(rate_per_s=200))
        self.triage = PolicedTriage(CHANNEL, home, self.gate, lambda _c: home, reporter)
        triages = {CHANNEL: self.triage}
        DeferredRunner.register(self.coordinator, AlertStore(self.db), self.gate, triages)


def move_to(clock: Clock, replicas: list[Replica], hours: int) -> None:
    """Both replicas' gates and queues ``hours`` past the wall clock."""
    clock.ahead = timedelta(hours=hours)
    for replica in replicas:
        replica.queue.ahead = clock.ahead


async def drain(replicas: list[Replica]) -> None:
    for _ in range(3):
        await asyncio.gather(*(r.coordinator.wait_idle() for r in replicas))


async def test_two_replicas_release_held_alerts_within_the_budget_in_arrival_order(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "budget.toml").write_text(RULE)
    clock, log = Clock(), list[tuple[str, str]]()
    replicas = [Replica(url, f"r{i}", folder, clock, log) for i in (1, 2)]
    await replicas[0].db.create()
    try:
        payload = json.loads((FIXTURES / "okta-event-hook.json").read_text())
        ids = []
        for i in range(6):  # arriving at either replica, one after another
            alert = parse_alert(payload, None)
            await AlertStore(replicas[i % 2].db).save(alert, status="received")
            await replicas[i % 2].triage.dispatch(alert)
            ids.append(alert.id)
        assert [a for _, a in log] == ids[:2]
        assert await DeferredAlerts(replicas[0].db).waiting("okta-budget", "okta") == 4

        for replica in replicas:
            replica.coordinator.start()
        for hour, released in ((1, 4), (2, 6)):
            move_to(clock, replicas, hour)
            await drain(replicas)
            assert [a for _, a in log] == ids[:released]  # two an hour, oldest first

        async with replicas[0].db.session() as session:
            used = (await session.scalars(select(PolicyBudget.used))).all()
        assert sorted(used) == [2, 2, 2]  # three hours, the budget held in each
        assert await DeferredAlerts(replicas[0].db).waiting("okta-budget", "okta") == 0
    finally:
        for replica in replicas:
            await replica.coordinator.shutdown()
            await replica.db.close()
