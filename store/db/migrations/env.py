"""Alembic environment: runs on the connection ``store.db.migrate`` hands over (both engines)."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

import store.schema  # noqa: F401  (its table is in Base.metadata)
from store.db.migrate import include, include_object
from store.schema import (
    Base,
    ReplicaRow,  # noqa: F401  (its table is in Base.metadata)
)

connection: Connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=True,  # SQLite alters tables by copying them
    compare_type=True,
    include_name=include,  # the search index (store/schema/search.py) is not in the models
    include_object=include_object,
)
with context.begin_transaction():
    context.run_migrations()
