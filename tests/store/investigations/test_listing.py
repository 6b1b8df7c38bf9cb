"""Recent investigations and alerts (``socbot list``) and ids as typed (``last``, prefixes)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from alerts.parse import parse_alert
from store.db.engine import Database
from store.investigations.browse import Filters
from store.investigations.listing import IdNotFound, recent_alerts, recent_investigations
from store.investigations.listing import resolve_investigation as resolve
from store.investigations.runs import InvestigationStore
from store.schema import Investigation
from store.triage.alerts import AlertStore

ALERTS = Path(__file__).resolve().parents[2] / "fixtures" / "alerts"
NOW = datetime.now(UTC)


async def store_runs(db: Database) -> None:
    """Three runs: an SCC alert (true positive, $0.02), a GuardDuty alert (failed),
    a chat question; ids chosen so that ``abcd`` starts two of them. The record names
    the alert's source, as the engine's does."""
    store, alerts = InvestigationStore(db), AlertStore(db)
    runs = [
        ("abcd1111", "warren-scc.json", "scc", "concluded", "true_positive", 0.02, 3),
        ("abcd2222", "warren-guardduty.json", "guardduty", "failed", None, None, 2),
        ("ef001111", None, None, "answered", None, 0.001, 1),
    ]
    for inv_id, alert_file, source, status, verdict, cost, hours_ago in runs:
        text = "is 185.220.101.42 bad?\nthanks" if alert_file is None else "Investigate"
        await store.create(inv_id, f"cli:{inv_id}", "question" if not alert_file else "alert", text)
        await store.finish(
            inv_id,
            status=status,
            mode="planned",
            objective=None,
            verdict=verdict,
            record={"alert": {"source": source}} if source else {},
            usage={"cost_usd": cost} if cost is not None else {},
            error=None,
        )
        async with db.session() as session:
            at = NOW - timedelta(hours=hours_ago)
            await session.execute(
                update(Investigation).where(Investigation.id == inv_id).values(created_at=at)
            )
        if alert_file:
            raw = json.loads((ALERTS / alert_file).read_text())
            await alerts.save(parse_alert(raw), investigation_id=inv_id)


async def test_last_is_the_newest_and_a_unique_prefix_is_enough(db: Database) -> None:
    with pytest.raises(IdNotFound, match="no investigation in this database"):
        await resolve(db, "last")
    await store_runs(db)
    assert await resolve(db, "last") == "ef001111"
    assert await resolve(db, "LAST") == "ef001111"
    assert await resolve(db, "abcd1") == "abcd1111"
    assert await resolve(db, "abcd2222") == "abcd2222"
    with pytest.raises(IdNotFound, match=r"'abcd' is the start of several .*abcd1111.*: type"):
        await resolve(db, "abcd")
    with pytest.raises(IdNotFound, match="too short"):
        await resolve(db, "ab")
    with pytest.raises(IdNotFound, match="no investigation 'ab%_' in this database"):
        await resolve(db, "ab%_")  # LIKE's wildcards are taken literally


async def test_recent_investigations_newest_first_with_their_alert_and_cost(
    db: Database,
) -> None:
    await store_runs(db)
    rows = await recent_investigations(db, Filters())
    assert [r.id for r in rows] == ["ef001111", "abcd2222", "abcd1111"]
    chat, guardduty, scc = rows
    assert (chat.source, chat.title, chat.cost_usd) == ("chat", "is 185.220.101.42 bad?", 0.001)
    assert (guardduty.source, guardduty.status, guardduty.cost_usd) == ("guardduty", "failed", None)
    assert (scc.source, scc.verdict, scc.cost_usd) == ("scc", "true_positive", 0.02)
    assert scc.title and scc.at < guardduty.at < chat.at


@pytest.mark.parametrize(
    ("filters", "ids"),
    [
        (Filters(source="scc"), ["abcd1111"]),
        (Filters(source="SCC "), ["abcd1111"]),  # as typed: any case, spaces around
        (Filters(source="sc"), []),
        (Filters(verdict="true_positive"), ["abcd1111"]),
        (Filters(status="failed"), ["abcd2222"]),
        (Filters(since=NOW - timedelta(hours=2, minutes=30)), ["ef001111", "abcd2222"]),
    ],
)
async def test_filters(db: Database, filters: Filters, ids: list[str]) -> None:
    await store_runs(db)
    assert [r.id for r in await recent_investigations(db, filters)] == ids


async def test_a_limit_keeps_the_newest(db: Database) -> None:
    await store_runs(db)
    assert [r.id for r in await recent_investigations(db, Filters(), limit=1)] == ["ef001111"]
    assert [r.source for r in await recent_alerts(db, Filters(), limit=1)] == ["guardduty"]


async def test_recent_alerts_carry_their_investigation(db: Database) -> None:
    await store_runs(db)
    rows = await recent_alerts(db, Filters())
    assert {r.source: r.investigation_id for r in rows} == {
        "scc": "abcd1111",
        "guardduty": "abcd2222",
    }
    assert {r.source: r.cost_usd for r in rows} == {"scc": 0.02, "guardduty": None}
