"""What a Home reads (``store.cases.home``): every section only of the given channels, each
bounded; nobody and no channels read nothing. Case rows are inserted as the store keeps
them (invented values)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import insert

from store.cases.home import ROWS, HomeData, channels_with_cases, home_data
from store.db.engine import Database
from store.schema import CaseRow, CaseStatus, utcnow

SOC, OPS = "CSOC00001", "COPS00001"
ANA, BOB = "UANA00001", "UBOB00001"
_count = iter(range(1, 10_000))


def case(title: str, channel: str | None = SOC, **values: Any) -> dict[str, Any]:
    n = next(_count)
    now = utcnow().replace(tzinfo=None)
    return {
        "investigation_id": f"inv-{n}",
        "alert_id": f"alert-{n}",
        "channel": channel,
        "thread_ts": f"1700000000.{n:06d}",
        "title": title,
        "status": CaseStatus.OPEN,
        "revision": 1,
        "severity": "high",
        "socbot_verdict": "true_positive",
        "created_at": now - timedelta(minutes=n),
        "updated_at": now,
        **values,
    }


async def put(db: Database, *rows: dict[str, Any]) -> None:
    async with db.session() as session:
        await session.execute(insert(CaseRow), list(rows))


def titles(rows: list[CaseRow]) -> list[str]:
    return [r.title for r in rows]


async def test_each_section_only_of_the_channels(db: Database) -> None:
    old = utcnow().replace(tzinfo=None) - timedelta(days=8)
    await put(
        db,
        case("mine", owner=ANA, status=CaseStatus.ACKNOWLEDGED),
        case("mine-elsewhere", OPS, owner=ANA, status=CaseStatus.ACKNOWLEDGED),
        case("mine-resolved", owner=ANA, status=CaseStatus.RESOLVED, disposition="true_positive"),
        case("bobs", owner=BOB, status=CaseStatus.ACKNOWLEDGED),
        case("free-critical", severity="critical"),
        case("free-medium", severity="medium"),
        case("free-elsewhere", OPS),
        case("auto-resolved", status=CaseStatus.RESOLVED, auto_resolved=True),
        case("no-verdict", socbot_verdict=None, severity="low"),
        case("last-week", created_at=old, severity="critical"),
        case("no-channel", None),
    )
    data = await home_data(db, ANA, [SOC, "", SOC])
    assert titles(data.mine) == ["mine"]
    assert titles(data.unowned) == ["free-critical", "last-week"]
    assert titles(data.verdicts) == [
        "mine",
        "mine-resolved",
        "bobs",
        "free-critical",
        "free-medium",
        "auto-resolved",
    ]
    assert (data.week.cases, data.week.decided, data.week.agreed) == (7, 1, 1)
    other = await home_data(db, BOB, [OPS])
    assert titles(other.mine) == [] and titles(other.unowned) == ["free-elsewhere"]
    assert titles(other.verdicts) == ["mine-elsewhere", "free-elsewhere"]
    assert await home_data(db, "", [SOC]) == HomeData()
    assert await home_data(db, ANA, []) == HomeData()
    assert await home_data(db, ANA, [""]) == HomeData()
    assert await channels_with_cases(db) == [SOC, OPS]
    assert await channels_with_cases(db, limit=1) == [SOC]


async def test_each_section_is_bounded_newest_first(db: Database) -> None:
    await put(db, *[case(f"c{n}", owner=ANA if n % 2 else None) for n in range(2 * ROWS + 4)])
    data = await home_data(db, ANA, [SOC])
    assert len(data.mine) == len(data.unowned) == len(data.verdicts) == ROWS
    assert titles(data.mine)[:2] == ["c1", "c3"] and titles(data.unowned)[:2] == ["c0", "c2"]
    assert titles(data.verdicts)[:3] == ["c0", "c1", "c2"]
