"""Migration 0008: investigations stored before it get their severity and source columns."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import text

from store.db import migrate
from store.db.engine import Database
from store.investigations.browse import BrowseStore, Filters, Visibility


async def test_existing_investigations_are_filled_in(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'old.db'}")
    await migrate.upgrade(db.engine, "0007")  # the revision before the pages
    record = {"conclusion": {"severity": "high"}, "alert": {"source": "guardduty"}}
    async with db.engine.begin() as conn:
        for n, stored in enumerate([record, {"answer": "no conclusion"}, None]):
            await conn.execute(
                text(
                    "INSERT INTO investigations (id, conversation_id, kind, status, input,"
                    " record, created_at) VALUES (:id, 'slack:C1:1.0', 'alert', 'concluded',"
                    " 'x', :record, :at)"
                ),
                {"id": f"inv{n}", "record": json.dumps(stored), "at": f"2026-01-0{n + 1}"},
            )
    await db.create()  # to the head, as every start does
    assert await migrate.current(db.engine) == migrate.head()
    everyone = Visibility(channels=None, terminal=True)
    found = await BrowseStore(db).page(Filters(severity="high"), everyone, cursor=None)
    assert [(r.id, r.severity, r.source) for r in found.rows] == [("inv0", "high", "guardduty")]
    others = await BrowseStore(db).page(Filters(), everyone, cursor=None)
    assert [(r.id, r.severity) for r in others.rows] == [
        ("inv2", None),
        ("inv1", None),
        ("inv0", "high"),
    ]
    await db.close()
