"""Persistence (SQLAlchemy, SQLite or PostgreSQL): a few top-level stores, and wings, each
importing only the wings below it (in this order): cases, playbook, triage, queue,
investigations, db, schema.

May import core, alerts, config. A table goes in ``store/schema/`` (and a migration in
``store/db/migrations/versions/``); its queries in the wing whose docstring names it."""

from store.db.engine import Database

__all__ = ["Database"]
