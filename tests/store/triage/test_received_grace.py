"""A ``received`` alert is left to its own dispatch for a while (the acknowledging front's
hand-over is on its way) before a sweep may take it: ``AlertStatuses.by_status(for_s=...)``."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import update

from alerts.parse import parse_alert
from store.db.engine import Database
from store.schema import AlertRow, utcnow
from store.triage.alerts import AlertStore
from store.triage.states import AlertStatuses


async def test_only_alerts_received_long_enough_ago_are_listed(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}")
    await db.create()
    try:
        old = parse_alert({"title": "Stored before the crash", "src_ip": "203.0.113.7"})
        new = parse_alert({"title": "Its hand-over is on its way", "src_ip": "203.0.113.8"})
        for alert in (old, new):
            await AlertStore(db).save(alert, status="received")
        async with db.session() as session:
            earlier = utcnow() - timedelta(seconds=5)
            await session.execute(
                update(AlertRow).where(AlertRow.id == old.id).values(status_at=earlier)
            )
        statuses = AlertStatuses(db)
        assert [a.id for a in await statuses.by_status("received", for_s=4.0)] == [old.id]
        assert {a.id for a in await statuses.by_status("received")} == {old.id, new.id}
    finally:
        await db.close()
