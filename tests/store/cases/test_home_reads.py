"""What a Home reads (``store.cases.home``): every section only of the given channels, each
bounded; nobody and no channels read nothing. Case rows are inserted as the store keeps
them (invented values)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import insert

from bench.bench_quality import population
from core.quality import tally
from store.cases import quality
from store.cases.home import CHANNELS, ROWS, WEEK, HomeData, Week, home_data, owned_channels
from store.db.engine import Database
from store.schema import CaseRow, CaseStatus, utcnow
from tests.store.cases.quality_rows import store

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
    assert await owned_channels(db, ANA) == [SOC, OPS]  # mine-resolved: not open
    assert await owned_channels(db, BOB) == [SOC] and await owned_channels(db, "") == []


async def test_each_section_is_bounded_newest_first(db: Database) -> None:
    await put(db, *[case(f"c{n}", owner=ANA if n % 2 else None) for n in range(2 * ROWS + 4)])
    data = await home_data(db, ANA, [SOC])
    assert len(data.mine) == len(data.unowned) == len(data.verdicts) == ROWS
    assert titles(data.mine)[:2] == ["c1", "c3"] and titles(data.unowned)[:2] == ["c0", "c2"]
    assert titles(data.verdicts)[:3] == ["c0", "c1", "c2"]


async def test_channels_merged_newest_first_and_at_most_channels(any_db: Database) -> None:
    """Each channel's newest ``ROWS`` merged: the newest of all, whichever channel."""
    many = [f"C{n:08d}" for n in range(CHANNELS + 1)]
    now = utcnow().replace(tzinfo=None)

    def aged(title: str, channel: str, n: int, k: int) -> dict[str, Any]:
        at = now - timedelta(minutes=2 * n + k)  # s0, o0, s1, o1, ... newest first
        return case(title, channel, owner=ANA if n % 3 == 0 else None, created_at=at)

    await put(
        any_db,
        *[aged(f"s{n}", SOC, n, 0) for n in range(ROWS)],
        *[aged(f"o{n}", OPS, n, 1) for n in range(ROWS)],
        case("last", many[-1]),
    )
    data = await home_data(any_db, ANA, [OPS, SOC])
    everything = [f"{c}{n}" for n in range(ROWS) for c in "so"]
    assert titles(data.verdicts) == everything[:ROWS]
    assert titles(data.unowned) == [t for t in everything if int(t[1:]) % 3][:ROWS]
    assert titles(data.mine) == [t for t in everything if int(t[1:]) % 3 == 0][:ROWS]
    assert titles((await home_data(any_db, ANA, many)).verdicts) == []  # the first CHANNELS only
    assert titles((await home_data(any_db, ANA, many[-1:])).verdicts) == ["last"]


async def test_the_weeks_figures_are_core_quality_tallys(any_db: Database) -> None:
    """The week's cases, decided, agreed and cost (counted in SQL) equal
    ``core.quality.tally`` over ``store.cases.quality.outcomes`` of the same cases: every
    verdict, decision, duplicate, auto-resolution and audit of the quality bench's mix."""
    now = utcnow()
    found, times = population(600, now)
    await store(any_db, found, at=times.__getitem__)  # channel CALERTS1, up to 29.5 days old
    since = now - WEEK
    expected = tally(await quality.outcomes(any_db, since, keys=()))
    cost = sum(o.cost_usd for o in await quality.outcomes(any_db, since, keys=()))
    week = (await home_data(any_db, "U0ANALYST", ["CALERTS1"])).week
    assert 0 < expected.agreed < expected.decided < expected.cases and expected.excluded > 0
    assert (week.cases, week.decided, week.agreed) == (
        expected.cases,
        expected.decided,
        expected.agreed,
    )
    assert week.cost_usd == pytest.approx(cost) and cost > 0
    assert (await home_data(any_db, "U0ANALYST", ["CSOC00001"])).week == Week()


async def test_owned_channels_of_open_cases_newest_rows_only(db: Database) -> None:
    """The channels of the person's newest ``ROWS`` unresolved cases: a resolved case's
    channel is not one, nor is the channel of an open case older than those."""
    now = utcnow().replace(tzinfo=None)
    await put(
        db,
        case("done", "CDONE0001", owner=ANA, status=CaseStatus.RESOLVED, created_at=now),
        case("oldest", "COLD00001", owner=ANA, created_at=now - timedelta(days=2)),
        *[case(f"c{n}", SOC, owner=ANA, created_at=now - timedelta(hours=1)) for n in range(ROWS)],
    )
    assert await owned_channels(db, ANA) == [SOC]
