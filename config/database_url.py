"""``database_url`` as people type it, mapped to the async driver socbot runs on.

``sqlite:///var/socbot.db`` and ``postgres://user@host/db`` are what most people
write; SQLAlchemy's async engine needs the async driver named. The mapping is a
table so that changing a driver is one line.
"""

from __future__ import annotations

import os

# The URL scheme as typed (lower case) -> the scheme socbot uses.
ASYNC_SCHEMES: dict[str, str] = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+pysqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "postgresql+psycopg2": "postgresql+asyncpg",
    "postgresql+psycopg": "postgresql+asyncpg",
    "postgresql+pg8000": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}

# The async driver's module -> how to install it.
DRIVER_INSTALL: dict[str, str] = {
    "asyncpg": "pip install 'socbot[postgres]' (in a checkout: uv sync --extra postgres)",
    "aiosqlite": "pip install aiosqlite",
}

EXAMPLES = "sqlite:///var/socbot.db or postgresql://user:password@host/socbot"


def async_database_url(url: str) -> str:
    """``url`` with the async driver's scheme; ``ValueError`` (one sentence) if unsupported."""
    scheme, separator, rest = url.strip().partition("://")
    if not separator:
        typed, colon, path = url.strip().partition(":")
        if colon and typed.lower() in ASYNC_SCHEMES:  # sqlite:x.db: the slashes left out
            example = f"{typed}:///{path}" if typed.lower().startswith("sqlite") else ""
            raise ValueError(
                f"SOCBOT_DATABASE_URL needs // after {typed + ':'!r}"
                + (f": write {example} (three slashes, then the path)" if example else "")
                + f"; e.g. {EXAMPLES}"
            )
        raise ValueError(f"SOCBOT_DATABASE_URL is not a database URL; use e.g. {EXAMPLES}")
    target = ASYNC_SCHEMES.get(scheme.lower())
    if target is None:
        raise ValueError(
            f"SOCBOT_DATABASE_URL: {scheme!r} databases are not supported; use {EXAMPLES}"
        )
    return f"{target}://{rest}"


def sqlite_file(url: str) -> str | None:
    """The file a SQLite ``url`` names, as an absolute path (relative ones are relative to
    the current folder); ``None`` for an in-memory database or another kind of database."""
    scheme, separator, rest = url.strip().partition("://")
    if not separator or not scheme.lower().startswith("sqlite"):
        return None
    path = rest.split("?", 1)[0].removeprefix("/")  # sqlite:///rel/x.db, sqlite:////abs/x.db
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return os.path.abspath(path)


def driver_hint(module: str | None) -> str:
    """How to install a missing database driver module."""
    return DRIVER_INSTALL.get(module or "", f"install the database driver {module!r}")
