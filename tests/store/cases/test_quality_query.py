"""The quality query over the cases table, on SQLite and PostgreSQL: the 200 seeded cases
stored as cases give back, grouped in SQL, exactly the figures of the seed."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from core.playbook_effect import effect
from core.quality import DIMENSIONS, audits, breakdown, by, confusion, tally
from store.cases import quality
from store.db.engine import Database
from tests.core.quality_seed import BLOCKS, seeded
from tests.store.cases.quality_rows import store

SINCE = datetime(2026, 11, 1, tzinfo=UTC)
HELD = frozenset({"B", "E", "H"})


async def stored(db: Database, holdout: frozenset[str] = frozenset()) -> None:
    old = replace(seeded()[0], week="2026-W40", case_id=999_999)  # before the period
    await store(db, [*seeded(holdout), old])


@pytest.mark.parametrize("holdout", [frozenset(), HELD], ids=["observational", "randomised"])
async def test_the_grouped_outcomes_give_the_seeds_figures(
    any_db: Database, holdout: frozenset[str]
) -> None:
    await stored(any_db, holdout)
    found = await quality.outcomes(any_db, SINCE)
    seed = seeded(holdout)
    assert sum(o.count for o in found) == 200 and len(found) < 200
    assert tally(found).as_dict() == tally(seed).as_dict()
    for dimension in DIMENSIONS:
        alone = await quality.outcomes(any_db, SINCE, keys=(dimension,))
        assert tally(alone).as_dict() == tally(seed).as_dict()
        got = {k: t.as_dict() for k, t in breakdown(found, by(dimension)).items()}
        assert {k: t.as_dict() for k, t in breakdown(alone, by(dimension)).items()} == got
        assert got == {k: t.as_dict() for k, t in breakdown(seed, by(dimension)).items()}
    assert confusion(found).as_dict() == confusion(seed).as_dict()
    assert {k: a.as_dict() for k, a in audits(found).items()} == {
        k: a.as_dict() for k, a in audits(seed).items()
    }
    assert effect(found).as_dict() == effect(seed).as_dict()


async def test_the_disagreements_are_the_misses_latest_first(any_db: Database) -> None:
    await stored(any_db)
    every = await quality.disagreements(any_db, SINCE, limit=100)
    names = [name for name, _, _ in BLOCKS]
    blocks = sorted({names[int(d.investigation_id.removeprefix("inv-")) // 1000] for d in every})
    assert blocks == ["B", "C", "F", "J"] and len(every) == 33
    j = [d for d in every if d.auto_resolved]
    assert len(j) == 3 and {(d.verdict, d.decision) for d in j} == {
        ("false_positive", "true_positive")
    }
    latest = await quality.disagreements(any_db, SINCE, limit=5)
    assert latest == every[:5]
