"""``socbot list``: recent investigations (or ``--alerts``), newest first, from the database.

Ids are shown by their first ``ID_CHARS`` characters: ``socbot show`` and ``trace``
take any unique prefix, or ``last``. Titles come from alerts (attacker-written), so
control characters are removed before they reach the terminal.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated

import typer

from cli.common import clean, command_app, fail, load_settings_or_exit, one_line
from cli.tables import text_table

if TYPE_CHECKING:
    from store.investigations.browse import Filters
    from store.investigations.listing import Listed

ID_CHARS = 12
TITLE_CHARS = 60

app = command_app(no_args_is_help=False)


@app.command(name="list")
def list_(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Rows, at most.")] = 20,
    days: Annotated[int | None, typer.Option("--days", "-d", min=1, help="Days back.")] = None,
    source: Annotated[str | None, typer.Option(help="Alert source, e.g. guardduty.")] = None,
    verdict: Annotated[str | None, typer.Option(help="e.g. true_positive.")] = None,
    status: Annotated[str | None, typer.Option(help="e.g. concluded, failed.")] = None,
    alerts: Annotated[bool, typer.Option("--alerts", help="List alerts instead.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List recent investigations (or alerts): id, time, source, title, verdict, cost."""
    from store.investigations.browse import Filters

    since = datetime.now(UTC) - timedelta(days=days) if days else None
    filters = Filters(verdict=verdict, status=status, source=source, since=since)
    rows = _rows_or_exit(filters, limit, alerts=alerts, announce=not as_json)
    if as_json:
        typer.echo(json.dumps([row.as_dict() for row in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        typer.echo("no alerts" if alerts else "no investigations", err=True)
        return
    typer.echo(
        text_table(
            ["id", "time (UTC)", "source", "title", "status", "verdict", "cost"],
            [_cells(row) for row in rows],
            left=6,
        )
    )


def _cells(row: Listed) -> list[str]:
    title = clean(row.title)
    title = title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"
    return [
        row.id[:ID_CHARS],
        f"{row.at:%Y-%m-%d %H:%M}",
        clean(row.source),
        title,
        row.status,
        row.verdict or "-",
        "-" if row.cost_usd is None else f"${row.cost_usd:.4f}",
    ]


def _rows_or_exit(filters: Filters, limit: int, *, alerts: bool, announce: bool) -> list[Listed]:
    from config.settings import ConfigError

    url = load_settings_or_exit(announce=announce).database_url
    try:
        return asyncio.run(_rows(url, filters, limit, alerts))
    except ConfigError as exc:
        raise fail(one_line(exc)) from None


async def _rows(url: str, filters: Filters, limit: int, alerts: bool) -> list[Listed]:
    from cli.database import migrated_database, sqlite_file_missing
    from store.investigations.listing import recent_alerts, recent_investigations

    if sqlite_file_missing(url):  # nothing was ever stored there: do not create it
        return []
    async with migrated_database(url) as db:
        return await (recent_alerts if alerts else recent_investigations)(db, filters, limit)
