"""``socbot eval capture INVESTIGATION_ID``: a past investigation becomes a scenario of the
team's own pack (``evals.capture``), run with ``socbot eval run --pack DIR``; ``--pack team``
names ``evals.team_pack``, where disagreements are captured (``evals.team_capture``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from cli.common import fail, load_settings_or_exit, one_line
from config.settings import ConfigError, Settings
from evals.capture import VERDICTS, Captured, CaptureError, capture
from evals.scenario import SEVERITIES, ScenarioError, load_scenario
from evals.writer import write_scenario

DEFAULT_PACK = Path("var/eval/pack")
TEAM = "team"  # --pack team: the folder evals.team_pack names


def team_folder(pack: str | None) -> str | None:
    """``pack``, or for ``team`` the folder of ``evals.team_pack``."""
    if pack != TEAM:
        return pack
    folder = load_settings_or_exit(announce=False).evals.team_pack
    if not folder:
        raise fail("--pack team: set evals.team_pack to the team's pack folder")
    return folder


def capture_cmd(
    investigation_id: Annotated[str, typer.Argument(help="The investigation (socbot show).")],
    verdict: Annotated[
        str | None,
        typer.Option(
            help=f"The right verdict ({', '.join(VERDICTS)}); default: the analyst's vote."
        ),
    ] = None,
    severity: Annotated[
        str | None, typer.Option(help="Acceptable severity band, e.g. medium-high.")
    ] = None,
    must: Annotated[
        list[str] | None, typer.Option(help="A value a right answer establishes (repeatable).")
    ] = None,
    technique: Annotated[
        list[str] | None, typer.Option(help="An ATT&CK technique id (repeatable).")
    ] = None,
    forbid: Annotated[
        list[str] | None, typer.Option(help="A claim a right answer never makes (repeatable).")
    ] = None,
    category: Annotated[
        str | None, typer.Option(help="cloud, identity, endpoint or network.")
    ] = None,
    pack: Annotated[Path, typer.Option(help="The pack folder to add it to.")] = DEFAULT_PACK,
) -> None:
    """Write a scenario from a past investigation: alert, query rows, intel, ground truth."""
    settings = load_settings_or_exit(announce=False)
    truth: dict[str, object] = {
        "must_establish": must or [],
        "techniques": technique or [],
        "forbidden": forbid or [],
    }
    if severity:
        low, _, high = severity.partition("-")
        if low not in SEVERITIES or (high or low) not in SEVERITIES:
            raise fail(f"--severity {severity!r}: use two of {', '.join(SEVERITIES)}, as low-high")
        truth["severity"] = [low, high or low]
    try:
        captured = asyncio.run(_capture(settings, investigation_id, verdict, truth, category))
    except (CaptureError, ConfigError) as exc:
        raise fail(one_line(exc)) from None
    folder = pack / f"captured-{investigation_id[:12]}"
    try:
        write_scenario(folder, captured.draft)
        load_scenario(folder)  # what was written reads back
    except (FileExistsError, ScenarioError) as exc:
        raise fail(one_line(exc)) from None
    rows = sum(len(t.rows) for t in captured.draft.tables)
    typer.echo(f"wrote {folder}")
    typer.secho(
        f"{rows} rows from {captured.queries} queries"
        + (f" ({captured.cut_rows} cut short by the trace)" if captured.cut_rows else "")
        + (f", {captured.cut_intel} intel answers cut" if captured.cut_intel else "")
        + f", {len(captured.draft.intel)} intel answers"
        + (f"; skipped {len(captured.skipped)} multi-table queries" if captured.skipped else "")
        + f"; run it with: socbot eval run --pack {pack}",
        err=True,
        dim=True,
    )


async def _capture(
    settings: Settings,
    investigation_id: str,
    verdict: str | None,
    truth: dict[str, object],
    category: str | None,
) -> Captured:
    from cli.database import migrated_database, sqlite_file_missing

    if sqlite_file_missing(settings.database_url):
        raise CaptureError(f"no investigation {investigation_id!r}: the database is empty")
    async with migrated_database(settings.database_url) as db:
        return await capture(
            db, settings, investigation_id, verdict=verdict, truth=truth, category=category
        )
