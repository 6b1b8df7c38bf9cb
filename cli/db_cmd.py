"""``socbot db upgrade`` / ``socbot db revision``: the database schema (Alembic);
``socbot db prune [--dry-run]``: delete what is past its lifetime (``[retention]``).

``socbot serve`` and the other commands migrate on start; ``db upgrade`` does it
alone, e.g. as a deploy step before several replicas start. ``db revision`` is for
developers: after changing ``store/schema.py`` it writes the migration.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import command_app, fail, load_settings_or_exit, one_line

if TYPE_CHECKING:
    from config.retention import RetentionSettings

app = command_app(help="Manage the database: schema migrations and pruning by lifetime.")


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a sentence.")]


@app.command("upgrade")
def upgrade(as_json: JsonOpt = False) -> None:
    """Create or migrate the database schema to the newest revision."""
    from config.settings import ConfigError

    settings = load_settings_or_exit(announce=not as_json)
    try:
        name, revision = asyncio.run(_upgrade(settings.database_url))
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
    if as_json:
        typer.echo(json.dumps({"database": name, "revision": revision}))
    else:
        typer.echo(f"database {name} is at revision {revision}")


async def _upgrade(url: str) -> tuple[str, str | None]:
    from cli.database import db_name, migrated_database
    from store.db import migrate

    async with migrated_database(url) as db:
        return db_name(db), await migrate.current(db.engine)


MessageOpt = Annotated[str, typer.Option("-m", "--message", help="What the revision changes.")]


@app.command("revision")
def revision(message: MessageOpt) -> None:
    """Write a migration for the changes in store/schema.py (developers; review it)."""
    import tempfile
    from pathlib import Path

    from store.db import migrate
    from store.db.engine import Database

    async def write(folder: str) -> list[str]:
        db = Database(f"sqlite+aiosqlite:///{Path(folder) / 'schema.db'}")
        try:
            return await migrate.revision(db.engine, message)
        finally:
            await db.close()

    with tempfile.TemporaryDirectory() as folder:
        paths = asyncio.run(write(folder))
    for path in paths:
        typer.echo(f"wrote {path}")
    if not paths:
        typer.echo("the migrations already match store/schema.py: nothing to write")


DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Only count what would be deleted.")]


@app.command("prune")
def prune(dry_run: DryRunOpt = False) -> None:
    """Delete rows past their [retention] lifetime (serve does it hourly on its own)."""
    from config.settings import ConfigError

    settings = load_settings_or_exit()
    try:
        counts = asyncio.run(_prune(settings.database_url, settings.retention, dry_run))
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
    verb = "would delete" if dry_run else "deleted"
    for kind, count in counts.items():
        typer.echo(f"{kind:<16} {verb} {count}")


async def _prune(url: str, retention: RetentionSettings, dry_run: bool) -> dict[str, int]:
    from cli.database import migrated_database
    from store.retention import Pruner

    async with migrated_database(url) as db:
        pruner = Pruner(db, retention)
        return await (pruner.plan() if dry_run else pruner.prune())
