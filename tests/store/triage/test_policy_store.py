"""The policy's decisions and budgets in the database: counts by outcome and by rule,
and budgets that hold when two replicas share one PostgreSQL database."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from alerts.parse import parse_alert
from store.db.engine import Database
from store.schema import Investigation
from store.triage.alerts import AlertStore
from store.triage.policy import Limit, PolicyStore, period_start
from tests.pg_server import PostgresServer

ALERTS = Path(__file__).parents[2] / "fixtures" / "alerts"
NOW = datetime(2026, 11, 25, 12, 30, tzinfo=UTC)


async def test_budget_holds_across_two_replicas_on_postgresql(postgres: PostgresServer) -> None:
    url = postgres.create_database(f"t_{uuid.uuid4().hex[:12]}")
    first, second = Database(url), Database(url)
    await first.create()
    try:
        replicas = [PolicyStore(first), PolicyStore(second)]
        limit = Limit(investigations=7, usd=None, per="hour")

        async def take(store: PolicyStore) -> bool:
            return await store.take_budget("noisy-scanner", "guardduty", limit, NOW)

        granted = await asyncio.gather(*(take(replicas[i % 2]) for i in range(40)))
        assert sum(granted) == 7
        # another source has a budget of its own; the next hour starts afresh
        assert await replicas[0].take_budget("noisy-scanner", "scc", limit, NOW)
        later = NOW + timedelta(hours=1)
        assert await replicas[1].take_budget("noisy-scanner", "guardduty", limit, later)
    finally:
        await first.close()
        await second.close()


async def _investigated(db: Database, store: PolicyStore, cost: float) -> None:
    """A guardduty alert the rule let through, investigated for ``cost`` USD."""
    alert = parse_alert(json.loads((ALERTS / "warren-guardduty.json").read_text()), None)
    await AlertStore(db).save(alert, investigation_id=f"inv-{alert.id}")
    async with db.session() as session:
        session.add(
            Investigation(
                id=f"inv-{alert.id}",
                conversation_id=f"cli:{alert.id}",
                kind="alert",
                status="concluded",
                input="investigate",
                usage={"cost_usd": cost},
            )
        )
    await store.record(alert.id, "gd-budget", "p.toml", "guardduty", "investigated", NOW)


async def test_dollar_budget_counts_the_cost_of_investigations_let_through(
    any_db: Database,
) -> None:
    store = PolicyStore(any_db)
    limit = Limit(investigations=None, usd=0.05, per="day")
    for _ in range(2):
        assert await store.take_budget("gd-budget", "guardduty", limit, NOW)
        await _investigated(any_db, store, 0.02)
    assert await store.take_budget("gd-budget", "guardduty", limit, NOW)  # $0.04 < $0.05
    await _investigated(any_db, store, 0.02)
    assert not await store.take_budget("gd-budget", "guardduty", limit, NOW)  # $0.06 spent
    assert not await store.take_budget("gd-budget", "guardduty", limit, NOW)
    assert await store.take_budget("gd-budget", "scc", limit, NOW)  # per source


async def test_counts_by_outcome_and_by_rule(any_db: Database) -> None:
    store = PolicyStore(any_db)
    assert await store.counts() == dict.fromkeys(
        ("ignored", "suppressed", "routed", "investigated", "deferred"), 0
    )
    for alert_id, rule, outcome in [
        ("a1", "scanner", "ignored"),
        ("a2", "scanner", "ignored"),
        ("a3", "ci-role", "suppressed"),
        ("a4", "budget", "deferred"),
    ]:
        await store.record(alert_id, rule, "policy/x.toml", "guardduty", outcome)
    counts = await store.counts()
    assert counts["ignored"] == 2 and counts["suppressed"] == 1 and counts["deferred"] == 1
    hits = await store.rule_hits()
    assert hits["scanner"].hits == 2 and hits["ci-role"].hits == 1
    last = hits["scanner"].last
    assert last is not None and last.tzinfo is not None
    assert datetime.now(UTC) - last < timedelta(minutes=5)
    hit = await store.decided("a3")
    assert hit is not None and hit.rule_id == "ci-role"


def test_periods_start_on_the_hour_and_the_utc_day() -> None:
    assert period_start(NOW, "hour") == datetime(2026, 11, 25, 12, tzinfo=UTC)
    assert period_start(NOW, "day") == datetime(2026, 11, 25, tzinfo=UTC)
