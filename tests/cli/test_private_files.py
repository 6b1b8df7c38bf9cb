"""Files socbot creates for itself are its owner's only (``store.db.private``)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from cli.database import open_database
from cli.terminal.chat import prompt_session
from config.settings import ConfigError
from store.db.engine import Database


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)  # the common default: files 0644, folders 0755
    try:
        yield
    finally:
        os.umask(old)


async def test_a_new_sqlite_database_and_its_journal_are_the_owners_only(tmp_path: Path) -> None:
    path = tmp_path / "var" / "socbot.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    try:
        await db.create()
        async with db.session() as session:  # a write: WAL and shared-memory files appear
            await session.execute(text("CREATE TABLE probe (x INTEGER)"))
        made = [path, path.with_name("socbot.db-wal"), path.with_name("socbot.db-shm")]
        assert [p.exists() for p in made] == [True, True, True]
        assert [mode(p) for p in made] == [0o600, 0o600, 0o600]
        assert mode(path.parent) == 0o700
    finally:
        await db.close()


async def test_an_existing_database_keeps_its_mode_and_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    first = Database(f"sqlite+aiosqlite:///{path}")
    await first.create()
    async with first.session() as session:
        await session.execute(text("CREATE TABLE probe (x INTEGER)"))
        await session.execute(text("INSERT INTO probe VALUES (7)"))
    await first.close()
    path.chmod(0o640)  # the operator's choice

    again = Database(f"sqlite+aiosqlite:///{path}")
    try:
        async with again.session() as session:
            assert (await session.execute(text("SELECT x FROM probe"))).scalar_one() == 7
        assert mode(path) == 0o640
    finally:
        await again.close()


def test_a_folder_where_the_database_should_be_is_still_named(tmp_path: Path) -> None:
    (tmp_path / "socbot.db").mkdir()
    with pytest.raises(ConfigError, match="is a folder"):
        open_database(f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}")


def test_the_chat_history_file_is_the_owners_only(tmp_path: Path) -> None:
    history = tmp_path / "var" / "chat_history"
    prompt_session(str(history))
    assert history.exists() and mode(history) == 0o600
    assert mode(history.parent) == 0o700
