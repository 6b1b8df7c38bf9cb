"""``socbot doctor``: check the set-up, one line per check; exit code = failures."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from cli.common import command_app, load_settings_or_exit
from cli.doctor import local, models, remote
from cli.doctor.report import Check
from config.settings import Settings

app = command_app(no_args_is_help=False)

OfflineOpt = Annotated[
    bool, typer.Option("--offline", help="Skip the checks that call the models, Slack or BigQuery.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the checks as JSON.")]


@app.command()
def doctor(offline: OfflineOpt = False, as_json: JsonOpt = False) -> None:
    """Check the set-up (settings, models, Slack, BigQuery, DuckDB, intel, database)."""
    settings = load_settings_or_exit(announce=False)  # a bad setting: one line, exit 2
    checks = asyncio.run(run_checks(settings, offline=offline))
    if as_json:
        typer.echo(json.dumps([c.as_dict() for c in checks], indent=2, ensure_ascii=False))
    else:
        for check in checks:
            typer.echo(check.line())
    failures = sum(c.status == "fail" for c in checks)
    if not as_json:
        typer.echo(f"{failures} problem{'' if failures == 1 else 's'} found", err=True)
    raise typer.Exit(min(failures, 125))


async def run_checks(settings: Settings, *, offline: bool = False) -> list[Check]:
    """Every check, in the order they print."""
    import httpx

    from agent.model.gemini import tls_context
    from cli.runtime import USER_AGENT

    checks = [local.settings_files()]
    if not offline:
        async with httpx.AsyncClient(
            verify=tls_context(),
            timeout=httpx.Timeout(30.0, connect=10.0),
            headers={"User-Agent": USER_AGENT},
        ) as http:
            checks += await models.model_checks(settings, http)
        checks += await remote.slack(settings)
        checks += await asyncio.to_thread(remote.bigquery_tables, settings)
    checks += local.duckdb_files(settings)
    checks.append(local.intel_keys(settings))
    checks.append(local.privacy(settings))
    checks.append(await local.database(settings))
    checks.append(await local.webhooks(settings))
    return checks
