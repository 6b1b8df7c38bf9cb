"""``socbot playbook ...``: review and manage the team playbook from a terminal.

``list``, ``show ID``, ``add``, ``approve ID``, ``reject ID``, ``retire ID``,
``export DIR``, ``import DIR`` and ``stats``. Proposals learned from feedback wait
here (``list --status proposed``) when no review channel is configured. Imports of
the heavy modules happen inside the commands, so ``socbot --help`` stays fast.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from cli.common import command_app, fail, load_settings_or_exit, one_line

if TYPE_CHECKING:
    from store.db.engine import Database
    from store.playbook.bullets import PlaybookBullet

app = command_app(help="Review and manage the team playbook.")

T = TypeVar("T")
StatusOpt = Annotated[
    list[str] | None,
    typer.Option("--status", "-s", help="proposed, active, retired or rejected (repeatable)."),
]
IdArg = Annotated[str, typer.Argument(help="The bullet id, e.g. pb-1a2b3c4d.")]
ByOpt = Annotated[str | None, typer.Option("--by", help="Who does this (default: your login).")]
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why, for the record.")]


def _run(work: Callable[[Database], Awaitable[T]], *, announce: bool = True) -> T:
    """Open the database (creating missing tables), run ``work``, close it."""
    from cli.database import migrated_database
    from config.settings import ConfigError
    from store.playbook.bullets import PlaybookError
    from store.playbook.files import PlaybookFileError
    from store.playbook.rules import BulletInvalid

    settings = load_settings_or_exit(announce=announce)

    async def main() -> T:
        async with migrated_database(settings.database_url) as db:
            return await work(db)

    try:
        return asyncio.run(main())
    except (ConfigError, PlaybookError, PlaybookFileError, BulletInvalid, OSError) as exc:
        raise fail(one_line(exc)) from None


def _who(by: str | None) -> str:
    return by or f"cli:{getpass.getuser()}"


def _line(b: PlaybookBullet) -> str:
    text = " ".join(b.content.split())
    counts = f"+{b.helpful}/-{b.harmful}"
    op = f" {b.op}→{','.join(b.targets)}" if b.op != "add" else ""
    return f"{b.id}  {b.status:<8} {b.kind:<12} {b.scope:<20} {counts:<7}{op}  {text[:90]}"


@app.command("list")
def list_bullets(
    status: StatusOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the bullets as JSON.")] = False,
) -> None:
    """List bullets (all, or those with the given statuses)."""
    from store.playbook.bullets import STATUSES, PlaybookStore

    wanted = status or None
    if wanted and not set(wanted) <= set(STATUSES):
        raise fail(f"--status must be one of {', '.join(STATUSES)}")
    bullets = _run(lambda db: PlaybookStore(db).bullets(wanted), announce=not as_json)
    if as_json:
        dumped = [b.model_dump(mode="json") for b in bullets]
        typer.echo(json.dumps(dumped, indent=2, ensure_ascii=False))
        return
    for b in bullets:
        typer.echo(_line(b))
    if not bullets:
        typer.echo("no bullets")


@app.command("show")
def show(bullet_id: IdArg) -> None:
    """Everything about one bullet, as JSON: content, triggers, counters, provenance."""
    from store.playbook.bullets import PlaybookStore

    bullet = _run(lambda db: PlaybookStore(db).get(bullet_id))
    if bullet is None:
        raise fail(f"no bullet {bullet_id!r}")
    typer.echo(json.dumps(bullet.model_dump(mode="json"), indent=2, ensure_ascii=False))


@app.command("add")
def add(
    content: Annotated[str, typer.Argument(help="The instruction or fact, one or two sentences.")],
    kind: Annotated[str, typer.Option(help="fact, pattern, anti_pattern or skill.")] = "fact",
    scope: Annotated[str, typer.Option(help="global, source:<alert source>, channel:<id>.")] = (
        "global"
    ),
    keyword: Annotated[list[str] | None, typer.Option(help="Trigger keyword (repeatable).")] = None,
    source: Annotated[list[str] | None, typer.Option(help="Trigger alert source.")] = None,
    indicator: Annotated[list[str] | None, typer.Option(help="Trigger value or network.")] = None,
    tool: Annotated[list[str] | None, typer.Option(help="Trigger tool name.")] = None,
    by: ByOpt = None,
) -> None:
    """Add an active bullet (a person writing it is its approval)."""
    from store.playbook.bullets import KINDS, PlaybookBullet, PlaybookStore, Triggers, new_id
    from store.playbook.rules import check

    who = _who(by)
    if kind not in KINDS:
        raise fail(f"kind {kind!r} is not allowed; allowed: {', '.join(KINDS)}")
    try:
        check(content, scope)
        bullet = PlaybookBullet(
            id=new_id(),
            content=content.strip(),
            kind=kind,  # type: ignore[arg-type]
            scope=scope,
            status="active",
            triggers=Triggers(
                keywords=keyword or [],
                sources=source or [],
                indicators=indicator or [],
                tools=tool or [],
            ),
            provenance={"source": "cli", "proposed_by": who, "approved_by": who},
        )
    except ValueError as exc:
        raise fail(f"invalid bullet: {one_line(exc)}") from None
    added = _run(lambda db: PlaybookStore(db).add(bullet))
    typer.echo(f"added {added.id} (active)")


def _change(action: str, bullet_id: str, by: str | None, reason: str = "") -> None:
    from store.playbook.bullets import PlaybookStore

    async def work(db: Database) -> PlaybookBullet:
        store = PlaybookStore(db)
        if action == "approve":
            return await store.approve(bullet_id, _who(by))
        if action == "reject":
            return await store.reject(bullet_id, _who(by), reason)
        return await store.retire(bullet_id, _who(by), reason)

    bullet = _run(work)
    typer.echo(f"{bullet.id} is now {bullet.status}")


@app.command("approve")
def approve(bullet_id: IdArg, by: ByOpt = None) -> None:
    """Approve a proposal: it (or its change) becomes active."""
    _change("approve", bullet_id, by)


@app.command("reject")
def reject(bullet_id: IdArg, by: ByOpt = None, reason: ReasonOpt = "") -> None:
    """Reject a proposal: it never reaches a prompt."""
    _change("reject", bullet_id, by, reason)


@app.command("retire")
def retire(bullet_id: IdArg, by: ByOpt = None, reason: ReasonOpt = "") -> None:
    """Retire a bullet: it no longer reaches any prompt."""
    _change("retire", bullet_id, by, reason)


@app.command("export")
def export(
    folder: Annotated[Path, typer.Argument(help="Folder to write the YAML files into.")],
    status: StatusOpt = None,
) -> None:
    """Write bullets as YAML files (default: active and proposed ones)."""
    from store.playbook.bullets import PlaybookStore
    from store.playbook.files import write_dir

    async def work(db: Database) -> list[Path]:
        bullets = await PlaybookStore(db).bullets(status or ["active", "proposed"])
        return write_dir(bullets, folder)

    written = _run(work)
    typer.echo(f"exported {len(written)} bullets to {folder}")


@app.command("import")
def import_(
    folder: Annotated[Path, typer.Argument(help="Folder of YAML files (from export).")],
) -> None:
    """Load bullets from YAML files; a bullet with the same id is overwritten."""
    from store.playbook.bullets import PlaybookStore
    from store.playbook.files import read_dir

    async def work(db: Database) -> dict[str, int]:
        store = PlaybookStore(db)
        counts = {"added": 0, "updated": 0}
        for bullet in read_dir(folder):
            counts[await store.put(bullet)] += 1
        return counts

    counts = _run(work)
    typer.echo(f"imported from {folder}: {counts['added']} added, {counts['updated']} updated")


@app.command("stats")
def stats(
    days: Annotated[int, typer.Option(help="Look back this many days.")] = 90,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON.")] = False,
) -> None:
    """Playbook metrics: use, hit rate, agreement with analysts, corrections, tokens."""
    from store.playbook.learning import metrics

    report: dict[str, Any] = _run(lambda db: metrics(db, days=days), announce=not as_json)
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    for key, value in report.items():
        typer.echo(f"{key}: {json.dumps(value)}")
