"""``socbot policy``: the alert policy's rules, what they did, and which one an alert meets.

``policy test ALERT.json`` parses the alert as intake would and tries every rule on it
(the approved Slack suppressions, then the rule files of ``policy.dir``), saying for
each what matched or the first condition that did not; ``policy list`` shows the rules
with their hit counts and last hit (from the database) and every Slack suppression
with who asked, who decided and when; ``policy lift ID`` ends an approved suppression.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from cli.common import clean, command_app, fail, load_settings_or_exit, one_line
from core.ids import row_id

if TYPE_CHECKING:
    from alerts.policy.decide import CompiledRule
    from config.settings import Settings
    from store.db.engine import Database
    from store.triage.policy import RuleHits
    from store.triage.suppressions import Suppression

app = command_app(help="Test and list the alert policy's rules.")
T = TypeVar("T")
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
DirOpt = Annotated[
    Path | None, typer.Option("--dir", help="rule folder (default: the policy.dir setting)")
]


def _database(settings: Settings, work: Callable[[Database], Awaitable[T]], empty: T) -> T:
    """``work`` on the database at its newest schema; ``empty`` when there is none yet."""
    from cli.database import migrated_database, sqlite_file_missing
    from config.settings import ConfigError

    async def main() -> T:
        if sqlite_file_missing(settings.database_url):
            return empty
        async with migrated_database(settings.database_url) as db:
            return await work(db)

    try:
        return asyncio.run(main())
    except (ConfigError, OSError) as exc:
        raise fail(one_line(exc)) from None


def _rules(settings: Settings, folder: Path | None) -> tuple[list[CompiledRule], list[str]]:
    """The rules in the order tried, and the load errors (files and suppressions)."""
    from alerts.policy.load import load_folder
    from bot.intake.policy.gate import suppression_rules
    from store.triage.suppressions import SuppressionStore

    async def active(db: Database) -> list[Suppression]:
        return await SuppressionStore(db).active()

    slack = suppression_rules(_database(settings, active, []))
    files = load_folder(folder or Path(settings.policy.dir), settings.gemini.prices)
    return [*slack.rules, *files.rules], [*slack.errors, *files.errors]


@app.command("test")
def test(
    file: Annotated[Path, typer.Argument(help="alert payload (JSON); - reads standard input")],
    source: Annotated[str | None, typer.Option(help="source hint, e.g. guardduty")] = None,
    folder: DirOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show how ALERT is parsed and which rule matches it, and why."""
    from alerts.parse import parse_alert
    from alerts.policy.decide import RuleSet
    from cli.alerts_cmd import catalogue_or_exit, read_alert_file

    settings = load_settings_or_exit(announce=not as_json)
    data = read_alert_file(file)
    alert = parse_alert(data, source, catalogue=catalogue_or_exit(None, announce=False))
    rules, errors = _rules(settings, folder)
    now = datetime.now(UTC)
    decision = RuleSet(rules).decide(alert, now)
    trials = RuleSet(rules).trials(alert, now)
    if as_json:
        out = {
            "alert": alert.model_dump(mode="json", exclude={"raw", "id"}),
            "decision": {"rule": decision.rule_id, "action": decision.action},
            "rules": [t.__dict__ for t in trials],
            "errors": errors,
        }
        typer.echo(json.dumps(out, indent=2))
        return
    typer.echo(f"parsed: format {alert.format or '(none)'}, source {clean(alert.source)}")
    typer.echo(f"  title: {clean(alert.title)}")
    typer.echo(f"  severity: {alert.severity or '(unknown)'}")
    for entity in alert.entities:
        typer.echo(
            f"  {entity.kind}: {clean(entity.value)}" + (f" ({entity.role})" if entity.role else "")
        )
    typer.echo("")
    for trial in trials:
        mark = "MATCH" if trial.matched else "-    "
        typer.echo(f"{mark} {trial.rule_id} ({trial.origin}): {clean(trial.why)}")
    typer.echo("")
    if decision.rule is None:
        typer.echo("decision: no rule matches: investigate as usual")
    else:
        typer.echo(f"decision: {decision.action} by rule {decision.rule_id} (the first match)")
    for error in errors:
        typer.secho(f"rule not loaded: {error}", err=True, fg=typer.colors.YELLOW)


@app.command("list")
def list_rules(folder: DirOpt = None, as_json: JsonOpt = False) -> None:
    """List the rules with hit counts and last hit, and the Slack suppressions."""
    from store.triage.policy import PolicyStore
    from store.triage.suppressions import SuppressionStore

    settings = load_settings_or_exit(announce=not as_json)

    async def read(db: Database) -> tuple[dict[str, RuleHits], list[Suppression]]:
        return await PolicyStore(db).rule_hits(), await SuppressionStore(db).all()

    nothing: tuple[dict[str, RuleHits], list[Suppression]] = ({}, [])
    hits, suppressions = _database(settings, read, nothing)
    rules, errors = _rules(settings, folder)
    rows = [_rule_row(r, hits) for r in rules]
    if as_json:
        out = {
            "rules": rows,
            "suppressions": [s.as_dict() for s in suppressions],
            "errors": errors,
        }
        typer.echo(json.dumps(out, indent=2, default=str))
        return
    typer.echo(f"{len(rows)} rules, in the order tried")
    for row in rows:
        last = row["last_hit"] or "never"
        typer.echo(
            f"  {row['id']:<28} {row['action']:<11} hits {row['hits']:>5}  last {last}"
            f"  ({clean(row['origin'])})"
        )
    typer.echo(f"\n{len(suppressions)} suppressions asked for in Slack")
    for s in suppressions:
        decided = (
            f", {s.status} by {s.decided_by} {s.decided_at:%Y-%m-%d %H:%M}" if s.decided_at else ""
        )
        lifted = f", lifted by {s.lifted_by} {s.lifted_at:%Y-%m-%d %H:%M}" if s.lifted_at else ""
        typer.echo(
            f"  {s.rule_id:<10} {s.status:<9} until {s.expires_at:%Y-%m-%d %H:%M} UTC"
            f"  asked by {clean(s.proposed_by)} {s.proposed_at:%Y-%m-%d %H:%M}{decided}{lifted}"
            f"\n             why: {clean(s.reason)}"
        )
    for error in errors:
        typer.secho(f"rule not loaded: {error}", err=True, fg=typer.colors.YELLOW)


def _rule_row(compiled: CompiledRule, hits: dict[str, RuleHits]) -> dict[str, Any]:
    rule = compiled.rule
    found = hits.get(rule.id)
    return {
        "id": rule.id,
        "action": rule.action,
        "origin": compiled.origin,
        "description": rule.description,
        "expires": rule.expires.isoformat() if rule.expires else None,
        "hits": found.hits if found else 0,
        "last_hit": found.last.isoformat(timespec="seconds") if found and found.last else None,
    }


@app.command("lift")
def lift(
    suppression: Annotated[str, typer.Argument(help="the suppression, e.g. slack-12 or 12")],
    by: Annotated[str | None, typer.Option("--by", help="who (default: your login)")] = None,
) -> None:
    """End an approved Slack suppression now (it stays in the record as lifted)."""
    from store.triage.suppressions import RULE_PREFIX, SuppressionStore

    number = suppression.removeprefix(RULE_PREFIX)
    if row_id(number) is None:
        raise fail(f"{suppression!r} is not a suppression id such as slack-12")
    settings = load_settings_or_exit()

    async def work(db: Database) -> bool:
        return await SuppressionStore(db).lift(int(number), by=by or f"cli:{getpass.getuser()}")

    if not _database(settings, work, False):
        raise fail(f"no approved suppression {RULE_PREFIX}{number}")
    typer.echo(f"lifted {RULE_PREFIX}{number}")
