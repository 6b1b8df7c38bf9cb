"""The cases' live figures (``/metrics``) from known cases, and their exposition."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from bot.observe.metrics import exposition
from store.cases import figures, transitions
from store.cases.transitions import Resolution
from store.db.engine import Database
from store.queue.work import WorkQueue
from store.schema import CaseDisposition, CaseRow, utcnow
from tests.store.cases.case_support import a_case


def test_quantiles_are_nearest_rank() -> None:
    assert figures.quantiles([]) == {}
    assert figures.quantiles([5.0]) == {"0.5": 5.0, "0.9": 5.0}
    values = [float(n) for n in range(10, 0, -1)]  # 1..10, unsorted
    assert figures.quantiles(values) == {"0.5": 5.0, "0.9": 9.0}


async def _at(db: Database, case_id: int, **times: object) -> None:
    async with db.session() as session:
        await session.execute(update(CaseRow).where(CaseRow.id == case_id).values(**times))


async def test_live_figures(any_db: Database) -> None:
    now = utcnow()
    high = await a_case(any_db, "r1", alert_id="a1", severity="high")
    low = await a_case(any_db, "r2", alert_id="a2", severity="low")
    done = await a_case(any_db, "r3", alert_id="a3", severity="high")
    await transitions.take(any_db, low.id, "UANA", seen=1, via="cli")
    await transitions.resolve(
        any_db, done.id, "UANA", Resolution(CaseDisposition.BENIGN), seen=1, via="cli"
    )
    hour = timedelta(hours=1)
    await _at(any_db, high.id, created_at=now - 3 * hour)
    await _at(any_db, low.id, created_at=now - 2 * hour, acknowledged_at=now - hour)
    await _at(any_db, done.id, created_at=now - 2 * hour, acknowledged_at=now, resolved_at=now)
    found = await figures.live(any_db, now=now)
    assert found.open_by_severity == {"high": 1, "low": 1}
    assert round(found.oldest_unowned_s) == 3 * 3600
    assert found.acknowledge_s == {"0.5": 3600.0, "0.9": 7200.0}
    assert found.resolve_s == {"0.5": 7200.0, "0.9": 7200.0}
    text = (await exposition(WorkQueue(any_db))).decode()
    assert 'socbot_cases_open{severity="high"} 1.0' in text
    assert 'socbot_cases_time_to_resolve_seconds{quantile="0.9"} 7200.0' in text
    oldest = [line for line in text.splitlines() if line.startswith("socbot_cases_oldest")]
    assert len(oldest) == 1 and 3 * 3600 <= float(oldest[0].split()[1]) < 3 * 3600 + 60
