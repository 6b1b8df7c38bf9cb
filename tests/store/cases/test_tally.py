"""The daily tally on SQLite and PostgreSQL: the report it gives equals the report from a
scan of the cases (``scan_report``) over the seeded 200 cases, after random decisions
through the real transitions (take, assign, resolve, reopen, audit, late run figures,
lost races, deleted cases), after two replicas deciding at once, and after the
migration's back-fill; its percentiles are within the histogram's precision."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from random import Random

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from store.cases import auto, transitions
from store.cases.report import SCHEMA, period_report
from store.cases.tally import days, percentiles, read
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.schema import CaseDisposition, CaseRow, CaseStatus, CaseTally, run_figures
from store.schema.case_tally import PRECISION, backfill, bucket, middle
from tests.core.quality_seed import seeded
from tests.store.cases.quality_rows import store
from tests.store.cases.scan_report import exact, same, scan_report, spans

SINCE = datetime(2026, 11, 1, tzinfo=UTC)
UNTIL = datetime(2027, 1, 1, tzinfo=UTC)
PEOPLE = ("UANA", "UBEN", "UCARA")


async def equal(db: Database) -> dict[str, object]:
    found = await period_report(db, SINCE, UNTIL)
    same(found, await scan_report(db, SINCE, UNTIL))
    return found


async def test_the_seeded_cases_give_the_same_report_as_a_scan(any_db: Database) -> None:
    await store(any_db, seeded(frozenset({"B", "E", "H"})))
    found = await equal(any_db)
    assert found["schema"] == SCHEMA == "socbot.report/2"
    assert found["totals"]["cases"] == 200  # type: ignore[index]
    async with any_db.session() as session:
        rows = await session.scalar(select(CaseTally.cases).where(CaseTally.cases < 0))
    assert rows is None  # no facet went below zero


async def test_cases_by_status_and_disposition(any_db: Database) -> None:
    await store(any_db, seeded())
    found = await read(any_db, SINCE.date(), UNTIL.date())
    assert found.counts == {
        ("resolved", "true_positive"): 65,  # A, B, C
        ("resolved", "false_positive"): 68,  # D, and the auto-resolved J, K
        ("resolved", "benign"): 47,  # E, F, I
        ("resolved", "duplicate"): 10,
        ("open", None): 10,
    }
    assert sum(o.count for o in found.facets["source"]) == 200


async def test_percentiles_are_the_nearest_ranks_bucket_within_its_precision(
    any_db: Database,
) -> None:
    cases = seeded()
    await store(
        any_db, cases, ack_s=lambda k: 30.0 * (k % 17 + 1), resolve_s=lambda k: 600.0 * (k % 23 + 1)
    )
    human = [k for k, c in enumerate(cases) if c.disposition is not None and not c.auto_resolved]
    found = await read(any_db, SINCE.date(), UNTIL.date())
    assert sum(found.spans["resolve"].values()) == len(human) == 170
    for span, of in (("acknowledge", 30.0 * 17), ("resolve", 600.0 * 23)):
        values = (await spans(any_db, SINCE, UNTIL))[span]
        got = percentiles(found.spans[span])  # type: ignore[index]
        for p in (0.5, 0.9):
            truth = exact(values, p)
            assert truth is not None and truth <= of
            assert got[p] == round(middle(bucket(truth)), 1)
            assert abs(got[p] - truth) <= truth * PRECISION + 0.05  # type: ignore[operator]
    assert percentiles({}) == {0.5: None, 0.9: None}
    assert percentiles({0: 3, 1: 1}) == {0.5: 0.5, 0.9: 1.0}


def test_a_period_is_whole_utc_days() -> None:
    at = datetime(2026, 11, 28, 13, 5, tzinfo=UTC)
    assert days(at, at) == (datetime(2026, 11, 28, tzinfo=UTC), datetime(2026, 11, 29, tzinfo=UTC))
    midnight = datetime(2026, 11, 30, tzinfo=UTC)
    assert days(at.replace(tzinfo=None), midnight)[1] == midnight
    assert bucket(0.99) == 0 and bucket(1.0) == 1 and bucket(2.0) == 17 and middle(0) == 0.5


async def _decide_at_random(db: Database, rng: Random, ids: list[int]) -> int:
    """One random decision on a random case through the real transitions; 1 if recorded."""
    async with db.session() as session:
        case = await session.get(CaseRow, rng.choice(ids))
    assert case is not None
    who = rng.choice(PEOPLE)
    seen = case.revision - (1 if rng.random() < 0.1 else 0)  # now and then a lost race
    pick = rng.random()
    if pick < 0.15:  # the run's figures land late (a newer finish)
        figures = run_figures(
            {"total_tokens": rng.randrange(1000, 90_000), "cost_usd": rng.uniform(0, 0.3)},
            {"playbook": {"holdout": rng.random() < 0.5}},
            case.created_at,
            case.created_at.replace(microsecond=0) if rng.random() < 0.5 else None,
        )
        async with db.session() as session:
            await session.execute(update(CaseRow).where(CaseRow.id == case.id).values(**figures))
        return 1
    if case.status == CaseStatus.RESOLVED and case.auto_resolved:
        if case.audit and case.audit_disposition is None:
            done = await auto.audit(
                db, case.id, who, CaseDisposition.TRUE_POSITIVE, seen=seen, via="web"
            )
            return int(done is not None)
        return 0
    if case.status == CaseStatus.RESOLVED:
        return int(await transitions.reopen(db, case.id, who, seen=seen, via="slack") is not None)
    if pick < 0.45:
        return int(await transitions.take(db, case.id, who, seen=seen, via="slack") is not None)
    if pick < 0.6:
        other = rng.choice(PEOPLE)
        return int(
            await transitions.assign(db, case.id, who, other, seen=seen, via="cli") is not None
        )
    disposition = rng.choice(list(CaseDisposition))
    resolution = Resolution(disposition=disposition, reason="checked")
    done = await transitions.resolve(db, case.id, who, resolution, seen=seen, via="slack")
    return int(done is not None)


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_decisions_keep_the_tally_equal_to_a_scan(any_db: Database, seed: int) -> None:
    await store(any_db, seeded(frozenset({"B"}), seed=seed))
    async with any_db.session() as session:
        ids = list((await session.scalars(select(CaseRow.id))).all())
        # the auto-resolved cases wait for their audit
        await session.execute(
            update(CaseRow)
            .where(CaseRow.auto_resolved.is_(True))
            .values(audit=True, audit_disposition=None)
        )
    rng = Random(seed)
    recorded = 0
    for _ in range(4):
        for _ in range(40):
            recorded += await _decide_at_random(any_db, rng, ids)
        await equal(any_db)
    assert recorded > 100
    async with any_db.session() as session:  # what retention does: cases go
        await session.execute(delete(CaseRow).where(CaseRow.id.in_(rng.sample(ids, 30))))
    found = await equal(any_db)
    assert found["totals"]["cases"] == 170  # type: ignore[index]


async def test_two_replicas_deciding_at_once_count_once(any_db: Database) -> None:
    await store(any_db, [o for o in seeded() if o.disposition is None])
    other = Database(any_db.engine.url.render_as_string(hide_password=False))
    try:
        async with any_db.session() as session:
            cases = list((await session.scalars(select(CaseRow))).all())
        for case in cases:
            first, second = await asyncio.gather(
                transitions.take(any_db, case.id, "UANA", seen=case.revision, via="slack"),
                transitions.take(other, case.id, "UBEN", seen=case.revision, via="slack"),
            )
            assert (first is None) != (second is None)
        found = await equal(any_db)
        assert found["cases"]["by_status"] == {"acknowledged": len(cases)}  # type: ignore[index]
    finally:
        await other.close()


async def test_the_back_fill_gives_what_the_triggers_kept(any_db: Database) -> None:
    await store(any_db, seeded(frozenset({"E"})))
    async with any_db.session() as session:
        await transitions_noise(session)
    kept = await period_report(any_db, SINCE, UNTIL)
    async with any_db.session() as session:
        await session.execute(delete(CaseTally))
        await session.execute(text(backfill(not any_db.is_sqlite)))
    same(await period_report(any_db, SINCE, UNTIL), kept)
    same(kept, await scan_report(any_db, SINCE, UNTIL))


async def transitions_noise(session: AsyncSession) -> None:
    """Moves that leave rows of zero cases behind: reopened, then resolved again."""
    await session.execute(
        update(CaseRow).where(CaseRow.id < 20).values(status=CaseStatus.ACKNOWLEDGED, owner="UANA")
    )
    await session.execute(update(CaseRow).where(CaseRow.id < 10).values(status=CaseStatus.RESOLVED))
