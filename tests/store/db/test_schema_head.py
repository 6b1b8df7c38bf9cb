"""The start-up schema check: a database at the newest revision skips Alembic entirely."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from store.db import migrate
from store.db.engine import Database
from store.db.revisions import at_head, head_revision


def test_the_head_read_from_the_files_is_alembics() -> None:
    assert head_revision() == migrate.head()


def _revision(rev: str, down: str) -> str:
    return f'"""Revision ID: {rev}"""\nrevision: str = {rev}\ndown_revision: str | None = {down}\n'


@pytest.mark.parametrize(
    ("files", "head"),
    [
        ({"a": ('"0001"', "None"), "b": ("'0002'", '"0001"')}, "0002"),
        ({"a": ('"0001"', "None"), "b": ('"0002"', '"0001"'), "c": ('"0003"', '"0001"')}, None),
        ({"a": ('"0001"', "None"), "b": ('"0002"', '("0001", "0000")')}, None),  # a merge
        ({"a": ('"0001"', "None"), "b": ('"0002"', '"0009"')}, None),  # unknown parent
        ({"a": ('"0001"', "None"), "b": ('"0001"', "None")}, None),  # the same id twice
        ({"a": ("REV", "None")}, None),  # not a plain string
        ({}, None),
    ],
)
def test_anything_but_one_plain_line_of_revisions_has_no_head(
    tmp_path: Path, files: dict[str, tuple[str, str]], head: str | None
) -> None:
    for name, (rev, down) in files.items():
        (tmp_path / f"{name}.py").write_text(_revision(rev, down), encoding="utf-8")
    assert head_revision(tmp_path) == head


async def test_at_head_only_after_the_last_migration(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}")
    try:
        assert await at_head(db.engine) is False  # empty: no alembic_version table
        script = ScriptDirectory.from_config(migrate.alembic_config())
        previous = script.get_revision(migrate.head()).down_revision
        assert isinstance(previous, str)
        await migrate.upgrade(db.engine, previous)
        assert await at_head(db.engine) is False
        await db.create()
        assert await migrate.current(db.engine) == migrate.head()
        assert await at_head(db.engine) is True
    finally:
        await db.close()


async def test_a_database_at_head_is_not_migrated_again(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_upgrade(*_: object) -> None:
        raise AssertionError("Alembic ran on a database at the newest revision")

    monkeypatch.setattr(migrate, "upgrade", no_upgrade)
    await db.create()


async def test_postgres_at_head(pg_db: Database) -> None:
    assert await at_head(pg_db.engine) is True
