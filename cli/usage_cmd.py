"""``socbot usage``: model tokens and list-price cost per day, source, channel and stage.

Reads the usage every finished investigation stored (``store.investigations.usage``); the prices are
those of ``gemini.prices`` when the calls were made. Heavy imports happen inside the
command, so ``socbot --help`` stays fast.
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
    from store.investigations.usage import Totals, UsageRow

DaysOpt = Annotated[int, typer.Option("--days", "-d", min=1, help="How many days back.")]
ByOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--by", "-b", help="day, source, channel, stage or model (repeatable; default all)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]

app = command_app()


@app.command()
def usage(days: DaysOpt = 7, by: ByOpt = None, as_json: JsonOpt = False) -> None:
    """Summarise model tokens and cost (USD at list prices) from the database."""
    from core.usage import StageUsage
    from store.investigations.usage import DIMENSIONS, summarise

    wanted = by or list(DIMENSIONS)
    unknown = [b for b in wanted if b not in DIMENSIONS]
    if unknown:
        raise fail(f"--by must be one of {', '.join(DIMENSIONS)} (got {', '.join(unknown)})")
    since = datetime.now(UTC) - timedelta(days=days)
    rows, policy = _rows_or_exit(since, announce=not as_json)
    tables = {d: summarise(rows, d) for d in DIMENSIONS if d in wanted}
    if as_json:
        out: dict[str, object] = {
            "since": since.isoformat(timespec="seconds"),
            "investigations": len(rows),
            "policy": policy,
            **{b: {k: t.as_dict() for k, t in table.items()} for b, table in tables.items()},
        }
        typer.echo(json.dumps(out, indent=2))
        return
    total = StageUsage()
    for r in rows:
        total.merge(StageUsage.from_dict(r.usage))
    typer.echo(f"{len(rows)} investigations since {since:%Y-%m-%d %H:%M} UTC, ${total.cost_text()}")
    for name, table in tables.items():
        typer.echo("")
        typer.echo(_table(name, table))
    typer.echo("")
    typer.echo("alerts the policy decided: " + ", ".join(f"{n} {o}" for o, n in policy.items()))


def _rows_or_exit(since: datetime, *, announce: bool) -> tuple[list[UsageRow], dict[str, int]]:
    from config.settings import ConfigError

    url = load_settings_or_exit(announce=announce).database_url
    try:
        return asyncio.run(_rows(url, since))
    except ConfigError as exc:
        raise fail(one_line(exc)) from None


async def _rows(url: str, since: datetime) -> tuple[list[UsageRow], dict[str, int]]:
    """The investigations' usage, and the alerts the policy decided (by outcome)."""
    from cli.database import migrated_database, sqlite_file_missing
    from store.investigations.usage import UsageStore
    from store.triage.policy import OUTCOMES, PolicyStore

    if sqlite_file_missing(url):  # nothing was ever stored there: do not create it
        return [], dict.fromkeys(OUTCOMES, 0)
    async with migrated_database(url) as db:
        return await UsageStore(db).rows(since), await PolicyStore(db).counts(since)


def _table(name: str, table: dict[str, Totals]) -> str:
    header = [name, "runs", "calls", "prompt", "cached", "output", "thinking", "cost USD"]
    lines = [
        [
            clean(key),  # an alert source may come from the payload
            str(t.investigations),
            str(t.usage.calls),
            str(t.usage.prompt_tokens),
            str(t.usage.cached_tokens),
            str(t.usage.output_tokens),
            str(t.usage.thinking_tokens),
            t.usage.cost_text(),
        ]
        for key, t in table.items()
    ] or [["(none)", *[""] * 7]]
    return text_table(header, lines)
