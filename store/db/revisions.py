"""Is the database at the newest migration? Answered without importing Alembic.

Every start checks the schema, and Alembic alone takes a few hundred milliseconds to
import, so ``Database.create`` asks here first: the newest revision is read from the
``revision``/``down_revision`` lines of ``store/db/migrations/versions/*.py`` and compared
with the database's ``alembic_version``. Anything unusual (no or several heads, a merge
revision, a line this parser does not understand, no ``alembic_version`` table) answers
"no", and the caller runs the full Alembic upgrade, which decides properly.
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

VERSIONS = Path(__file__).parent / "migrations" / "versions"

_ASSIGN = re.compile(r"^(revision|down_revision)\s*(?::[^=]*)?=\s*(.+?)\s*$", re.MULTILINE)
_STRING = re.compile(r"""^(?:"([\w-]+)"|'([\w-]+)')$""")


def head_revision(versions: Path = VERSIONS) -> str | None:
    """The one head of the revision files, or None when it is not plainly one line."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in versions.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        found = {m.group(1): m.group(2) for m in _ASSIGN.finditer(source)}
        revision = _string(found.get("revision", ""))
        parent = found.get("down_revision", "")
        if revision is None or revision in revisions or not parent:
            return None
        revisions.add(revision)
        if parent != "None":
            down = _string(parent)
            if down is None:  # a tuple: a merge revision
                return None
            parents.add(down)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


async def at_head(engine: AsyncEngine) -> bool:
    """Whether the database's revision is the newest one (False when in doubt)."""
    head = head_revision()
    if head is None:
        return False
    try:
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
    except DBAPIError:  # no alembic_version table yet: a new or pre-migration database
        return False
    return [tuple(row) for row in rows] == [(head,)]


def _string(value: str) -> str | None:
    match = _STRING.match(value)
    return (match.group(1) or match.group(2)) if match else None
