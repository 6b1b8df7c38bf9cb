"""The database itself: the async SQLAlchemy engine, Alembic migrations and their runner,
the revision check, a brand-new SQLite database made at head (``fresh``), files socbot
creates for itself (owner-only).

May import ``store.schema`` only."""

__all__ = ["engine", "fresh", "migrate", "private", "revisions"]
