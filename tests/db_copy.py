"""A fresh SQLite database per test in milliseconds, for the tests a mutation group runs
once per mutant: the schema is made once per process (the migrations take a tenth of a
second every time) and each test gets a copy of that file. Use it in a test module as
its ``db`` fixture::

    from tests.db_copy import copied_db  # noqa: F401  (the module's ``db`` fixture)
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from store.db.engine import Database

_schema: dict[str, Path] = {}  # the file with the newest schema, made by this process


async def fresh_database(folder: Path) -> Database:
    """An empty database with the newest schema, in ``folder``."""
    template = _schema.get("path")
    if template is None or not template.exists():
        template = await _make_schema()
    target = folder / "socbot.db"
    shutil.copyfile(template, target)
    return Database(f"sqlite+aiosqlite:///{target}")


async def _make_schema() -> Path:
    where = Path(tempfile.mkdtemp(prefix="socbot-schema-"))
    database = Database(f"sqlite+aiosqlite:///{where / 'schema.db'}")
    await database.create()
    await database.close()  # the last connection closed: the WAL is in the file
    atexit.register(_remove, where, os.getpid())
    _schema["path"] = where / "schema.db"
    return _schema["path"]


def _remove(where: Path, owner: int) -> None:
    if os.getpid() == owner:  # a forked child (mutmut's) leaves its parent's copy alone
        shutil.rmtree(where, ignore_errors=True)


@pytest.fixture(name="db")
async def copied_db(tmp_path: Path) -> AsyncIterator[Database]:
    """Like conftest's ``db`` (a fresh SQLite database with the schema), made by copying."""
    database = await fresh_database(tmp_path)
    yield database
    await database.close()
