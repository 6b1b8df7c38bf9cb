"""The list's orders and its eval runs, on both databases: most severe first pages through
every severity in turn and then the runs without one; oldest first; eval runs hidden,
alone or with the rest. The runs are invented."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import insert

from store.db.engine import Database
from store.investigations.browse import EVERYONE, BrowseStore, Filters, Order
from store.schema import Investigation

# id: (severity, eval run)
RUNS = {
    "r0": ("low", False),
    "r1": ("critical", False),
    "r2": ("info", True),
    "r3": (None, False),
    "r4": ("critical", False),
    "r5": ("high", False),
    "r6": ("info", False),
}


async def _store(db: Database) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [
        {
            "id": key,
            "conversation_id": "eval-abc" if is_eval else "slack:C1:1.0",
            "kind": "alert",
            "status": "concluded" if severity else "running",
            "input": f"run {key}",
            "severity": severity,
            "created_at": start + timedelta(minutes=n),
        }
        for n, (key, (severity, is_eval)) in enumerate(RUNS.items())
    ]
    async with db.session() as session:
        await session.execute(insert(Investigation.__table__), rows)


async def _all(db: Database, filters: Filters, order: Order, size: int) -> list[str]:
    browse, seen, cursor = BrowseStore(db), [], None
    while True:
        page = await browse.page(filters, EVERYONE, cursor=cursor, size=size, order=order)
        seen += [row.id for row in page.rows]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


async def test_orders_page_through_every_run_once(any_db: Database) -> None:
    await _store(any_db)
    for size in (1, 2, 3, 50):
        everything = Filters(evals=None)
        by_severity = await _all(any_db, everything, "severity", size)
        assert by_severity == ["r4", "r1", "r5", "r0", "r6", "r2", "r3"], size
        assert await _all(any_db, everything, "oldest", size) == list(RUNS), size
        assert await _all(any_db, everything, "newest", size) == list(reversed(RUNS)), size


async def test_eval_runs_are_hidden_alone_or_with_the_rest(any_db: Database) -> None:
    await _store(any_db)
    assert "r2" not in await _all(any_db, Filters(evals=False), "newest", 50)
    assert await _all(any_db, Filters(evals=True), "newest", 50) == ["r2"]
    only_info = Filters(evals=False, severity="info")
    assert await _all(any_db, only_info, "severity", 50) == ["r6"]
    found = await _all(any_db, Filters(evals=None, text="run r2"), "severity", 1)
    assert found == ["r2"]
