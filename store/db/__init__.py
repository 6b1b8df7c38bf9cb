"""The database itself: the async SQLAlchemy engine, Alembic migrations and their runner,
the revision check, files socbot creates for itself (owner-only).

May import ``store.schema`` only."""

__all__ = ["engine", "migrate", "private", "revisions"]
