"""``socbot report``: quality in the field over a period — cases by status and disposition,
time to acknowledge and resolve, agreement with the analysts (field TP recall and FP
rejection with Wilson 95 % intervals), auto-resolution's audit per rule, the playbook's
effect and cost. ``--json`` prints the documented report (docs/quality.md). Heavy imports
happen inside the command, so ``socbot --help`` stays fast.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

from cli.common import clean, command_app, fail, load_settings_or_exit, one_line

SinceOpt = Annotated[
    str, typer.Option("--since", "-s", help="How far back: 30d, 12w or 48h (default 30d).")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the JSON report.")]
SPAN = re.compile(r"^(\d{1,4})([hdw])$")
UNITS = {"h": "hours", "d": "days", "w": "weeks"}

app = command_app()


def parse_since(text: str) -> timedelta:
    """``30d`` → 30 days; ``12w``, ``48h``; anything else is refused."""
    found = SPAN.match(text.strip().lower())
    if found is None or int(found.group(1)) == 0:
        raise fail(f"--since must be a number and h, d or w, like 30d (got {text!r})")
    return timedelta(**{UNITS[found.group(2)]: int(found.group(1))})


@app.command()
def report(since: SinceOpt = "30d", as_json: JsonOpt = False) -> None:
    """Report how often socbot agreed with the analysts, and what its playbook changed."""
    span = parse_since(since)
    until = datetime.now(UTC)
    found = _report_or_exit(until - span, until)
    if as_json:
        typer.echo(json.dumps(found, indent=2))
        return
    typer.echo(text(found))


def _report_or_exit(since: datetime, until: datetime) -> dict[str, Any]:
    from cli.database import migrated_database
    from config.settings import ConfigError
    from store.cases.report import period_report

    settings = load_settings_or_exit(announce=False)

    async def main() -> dict[str, Any]:
        async with migrated_database(settings.database_url) as db:
            return await period_report(db, since, until)

    try:
        return asyncio.run(main())
    except (ConfigError, OSError) as exc:
        raise fail(one_line(exc)) from None


def _rate(figure: dict[str, Any]) -> str:
    if figure["rate"] is None:
        return "— (no cases)"
    return (
        f"{figure['rate']:.1%} ({figure['hits']}/{figure['n']}; "
        f"95 % {figure['low']:.1%} to {figure['high']:.1%})"
    )


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value / 3600:.1f} h" if value >= 3600 else f"{value / 60:.0f} min"


def text(r: dict[str, Any]) -> str:
    """The report for a terminal (every value from the JSON report; payload text cleaned)."""
    t, a, pb = r["totals"], r["agreement"], r["playbook"]
    lines = [
        f"socbot report {r['period']['label']}",
        f"cases {t['cases']}: " + ", ".join(f"{k} {n}" for k, n in r["cases"]["by_status"].items()),
        "resolved as: "
        + (", ".join(f"{k} {n}" for k, n in r["cases"]["by_disposition"].items()) or "—"),
        f"time to acknowledge p50 {_seconds(r['time_to_acknowledge_s']['p50'])}, "
        f"p90 {_seconds(r['time_to_acknowledge_s']['p90'])}; to resolve p50 "
        f"{_seconds(r['time_to_resolve_s']['p50'])}, p90 {_seconds(r['time_to_resolve_s']['p90'])}",
        "",
        f"agreement       {_rate(a['agreement'])}",
        f"field TP recall {_rate(a['tp_recall'])}",
        f"FP rejection    {_rate(a['fp_rejection'])}",
        f"(decided {t['decided']}, duplicates left out {t['excluded']}, "
        f"disagreements {t['disagreements']})",
    ]
    for rule, audit in r["auto_resolution"].items():
        lines.append(
            f"auto-resolution {clean(rule)}: {audit['auto_resolved']} closed, "
            f"{audit['audited']} audited, error {_rate(audit['error_rate'])}"
        )
    lines += [
        "",
        f"playbook ({pb['comparison']} comparison): skill hit rate {_rate(pb['skill_hit_rate'])}",
        f"  agreement with    {_rate(pb['with_playbook']['agreement'])}",
        f"  agreement without {_rate(pb['without_playbook']['agreement'])}",
        f"cost ${r['cost']['usd']:.4f}, {r['cost']['tokens']} tokens",
    ]
    for d in r["disagreements"][:10]:
        lines.append(
            f"  disagreed: case {d['case_id']} {clean(d['title'])[:60]} — socbot "
            f"{d['socbot_verdict']}, human {d['decision']}"
        )
    return "\n".join(lines)
