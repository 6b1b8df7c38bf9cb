"""Pruning as background work (``bot.work.pruning``): a started ``socbot`` app queues a
``prune`` row, a worker runs it, what is past its lifetime is gone; ``socbot db prune``
does the same by hand (``--dry-run`` only counts). Real SQLite, invented rows."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select, update
from typer.testing import CliRunner

from cli.main import app
from config.settings import Settings
from store.db.engine import Database
from store.investigations.runs import InvestigationStore
from store.queue.types import PRUNE_KIND
from store.schema import Investigation, WorkRow, utcnow
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack_support import RecordingInvestigate, SlackHarness, make_settings, settle_until


@pytest.fixture
def settings(tmp_path: Path, fake: FakeSlackAPI) -> Settings:
    return make_settings(tmp_path, fake.base_url)


async def old_investigation(db: Database, name: str, days: int) -> str:
    store = InvestigationStore(db)
    await store.create(name, f"slack:C1:{name}", "question", "invented question")
    await store.finish(
        name,
        status="answered",
        mode="direct",
        objective=None,
        verdict=None,
        record={},
        usage={},
        error=None,
    )
    async with db.session() as session:
        await session.execute(
            update(Investigation)
            .where(Investigation.id == name)
            .values(created_at=utcnow() - timedelta(days=days))
        )
    return name


async def test_a_running_app_prunes_on_the_work_queue(
    fake: FakeSlackAPI, settings: Settings, db: Database
) -> None:
    gone = await old_investigation(db, "inv-invented-old", 400)
    kept = await old_investigation(db, "inv-invented-new", 3)
    async with SlackHarness(fake, settings, RecordingInvestigate(), db=db) as h:

        async def pruned() -> bool:
            async with db.session() as session:
                rows = await session.scalars(select(WorkRow).where(WorkRow.kind == PRUNE_KIND))
                return [r.state for r in rows] == ["done"]

        await settle_until(h, pruned)
    store = InvestigationStore(db)
    assert await store.get(gone) is None
    assert await store.get(kept) is not None


def test_db_prune_dry_run_counts_and_prune_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'prune.db'}"
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)

    async def seed() -> None:
        db = Database(url)
        await db.create()
        await old_investigation(db, "inv-invented-old", 400)
        await db.close()

    asyncio.run(seed())
    runner = CliRunner()
    dry = runner.invoke(app, ["db", "prune", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "investigations   would delete 1" in dry.output
    again = runner.invoke(app, ["db", "prune", "--dry-run"])
    assert "investigations   would delete 1" in again.output  # a dry run deleted nothing
    done = runner.invoke(app, ["db", "prune"])
    assert done.exit_code == 0 and "investigations   deleted 1" in done.output
    after = runner.invoke(app, ["db", "prune", "--dry-run"])
    assert "investigations   would delete 0" in after.output
