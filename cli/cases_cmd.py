"""``socbot cases``: the cases in the terminal and in scripts.

``cases list`` (open ones by default; ``--mine``/``--owner``, ``--unowned``, ``--status``,
``--severity``, ``--oldest``), ``cases show ID`` (the case and its history), ``cases take
ID`` and ``cases resolve ID --disposition …`` decide as the buttons do — the same store
functions, so a decision is recorded once and the running bot tells the case's thread.
``cases audit`` lists the auto-resolved cases drawn for a blind review and not reviewed
(without socbot's verdict, confidence or severity); ``cases audit ID --disposition …``
records one as the dialog does (``store.cases.audits.review``: once, on a drawn case).
Whoever can run this command reaches the database: it is trusted like ``socbot db``. The
actor is ``--as`` (a Slack user id, so the thread can mention them) or ``cli:<login>``.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from cli.common import clean, command_app, fail, load_settings_or_exit, one_line

if TYPE_CHECKING:
    from store.db.engine import Database
    from store.schema import CaseDisposition, CaseEvent, CaseRow

app = command_app(help="List, show, take, resolve and audit cases.")
T = TypeVar("T")
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
AsOpt = Annotated[
    str | None, typer.Option("--as", help="who decides: a Slack user id (default cli:<login>)")
]
COLUMNS = (
    "id", "status", "severity", "owner", "disposition", "socbot_verdict", "source",
    "investigation_id", "alert_id", "title", "created_at", "acknowledged_at", "resolved_at",
)  # fmt: skip
BLIND = ("id", "source", "title", "alert_id", "channel", "thread_ts", "created_at")  # audit
DETAIL = (
    "channel", "thread_ts", "escalated", "reason", "missed", "resolved_by", "socbot_severity",
    "socbot_confidence", "format", "model", "policy_rule", "auto_resolved", "audit",
    "audit_disposition", "reminded_at", "revision",
)  # fmt: skip


def _run(work: Callable[[Database], Awaitable[T]]) -> T:
    from cli.database import migrated_database
    from config.settings import ConfigError

    settings = load_settings_or_exit(announce=False)

    async def main() -> T:
        async with migrated_database(settings.database_url) as db:
            return await work(db)

    try:
        return asyncio.run(main())
    except (ConfigError, OSError) as exc:
        raise fail(one_line(exc)) from None


def _value(value: Any) -> Any:
    return value.isoformat(timespec="seconds") if hasattr(value, "isoformat") else value


def as_dict(case: CaseRow, *, detail: bool = False) -> dict[str, Any]:
    names = COLUMNS + DETAIL if detail else COLUMNS
    return {name: _value(getattr(case, name)) for name in names}


def event_dict(event: CaseEvent) -> dict[str, Any]:
    names = ("revision", "action", "actor", "via", "owner", "disposition", "detail", "created_at")
    return {name: _value(getattr(event, name)) for name in names}


def _actor(who: str | None) -> str:
    return who or f"cli:{getpass.getuser()}"


def _disposition(value: str) -> CaseDisposition:
    from store.schema import CaseDisposition

    if value not in {d.value for d in CaseDisposition}:
        raise fail(f"unknown disposition {value!r}")
    return CaseDisposition(value)


def _capture() -> bool:
    """Disagreements into the team's pack (``evals.team_pack``): a running bot writes them."""
    return bool(load_settings_or_exit(announce=False).evals.team_pack)


@app.command("list")
def list_cases(
    mine: Annotated[
        str | None, typer.Option("--owner", "--mine", help="owned by this user")
    ] = None,
    unowned: Annotated[bool, typer.Option("--unowned", help="only cases nobody owns")] = False,
    status: Annotated[str | None, typer.Option(help="open, acknowledged or resolved")] = None,
    every: Annotated[bool, typer.Option("--all", help="resolved ones too")] = False,
    severity: Annotated[str | None, typer.Option(help="e.g. high")] = None,
    oldest: Annotated[bool, typer.Option("--oldest", help="oldest first (by age)")] = False,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List cases: open ones, newest first, unless told otherwise."""
    from store.cases.records import Listing, listed
    from store.schema import CaseStatus

    if status is not None and status not in {s.value for s in CaseStatus}:
        raise fail(f"unknown status {status!r}: open, acknowledged or resolved")
    listing = Listing(
        status=CaseStatus(status) if status else None,
        open_only=not every and status is None,
        owner=mine,
        unowned=unowned,
        severity=severity,
        oldest_first=oldest,
        limit=limit,
    )
    rows = [as_dict(c) for c in _run(lambda db: listed(db, listing))]
    if as_json:
        typer.echo(json.dumps({"cases": rows}, indent=2))
        return
    typer.echo(f"{len(rows)} cases")
    for r in rows:
        typer.echo(
            f"  #{r['id']:<6} {r['status']:<12} {r['severity'] or '-':<8} "
            f"owner {clean(r['owner'] or '-'):<14} socbot {r['socbot_verdict'] or '-':<14} "
            f"{r['created_at']}  {clean(str(r['title']))[:60]}"
        )


@app.command("show")
def show(
    case_id: Annotated[int, typer.Argument(help="the case")], as_json: JsonOpt = False
) -> None:
    """Print a case and its history."""
    from store.cases import records

    async def read(db: Database) -> tuple[CaseRow | None, list[CaseEvent]]:
        return await records.get(db, case_id), await records.history(db, case_id)

    case, history = _run(read)
    if case is None:
        raise fail(f"no case #{case_id}")
    out = {**as_dict(case, detail=True), "history": [event_dict(e) for e in history]}
    if as_json:
        typer.echo(json.dumps(out, indent=2))
        return
    for name in COLUMNS + DETAIL:
        typer.echo(f"{name:>18}: {clean(str(out[name]))}")
    typer.echo("history:")
    for e in out["history"]:
        typer.echo(
            f"  {e['created_at']}  r{e['revision']:<3} {e['action']:<14} by {clean(e['actor'])}"
            f" via {e['via']}" + (f" → {clean(e['owner'])}" if e["owner"] else "")
        )


def _decided(case_id: int, decide: Callable[[Database, int, int], Awaitable[Any]]) -> None:
    from store.cases import records

    async def work(db: Database) -> tuple[bool, CaseRow | None]:
        case = await records.get(db, case_id)
        if case is None:
            return False, None
        done = await decide(db, case.id, case.revision)
        return done is not None, await records.get(db, case_id)

    done, case = _run(work)
    if case is None:
        raise fail(f"no case #{case_id}")
    if not done:
        raise fail(f"case #{case_id} is {case.status} (owner {case.owner or 'nobody'}): no change")
    typer.echo(f"case #{case_id}: {case.status}, owner {case.owner or 'nobody'}")


@app.command("take")
def take(case_id: Annotated[int, typer.Argument(help="the case")], who: AsOpt = None) -> None:
    """Own a case (the running bot tells its thread)."""
    from store.cases import transitions

    actor = _actor(who)
    _decided(case_id, lambda db, i, seen: transitions.take(db, i, actor, seen=seen, via="cli"))


@app.command("resolve")
def resolve(
    case_id: Annotated[int, typer.Argument(help="the case")],
    disposition: Annotated[
        str, typer.Option(help="true_positive, false_positive, benign or duplicate")
    ],
    escalated: Annotated[
        bool, typer.Option("--escalated", help="escalated beyond the SOC")
    ] = False,
    reason: Annotated[str | None, typer.Option(help="why")] = None,
    missed: Annotated[str | None, typer.Option(help="what socbot missed")] = None,
    who: AsOpt = None,
) -> None:
    """Resolve a case with a disposition."""
    from store.cases import transitions

    chosen = transitions.Resolution(_disposition(disposition), escalated, reason, missed)
    actor, capture = _actor(who), _capture()
    _decided(
        case_id,
        lambda db, i, seen: transitions.resolve(
            db, i, actor, chosen, seen=seen, via="cli", capture=capture
        ),
    )


@app.command("audit")
def audit(
    case_id: Annotated[int | None, typer.Argument(help="the case reviewed (none: list)")] = None,
    disposition: Annotated[
        str | None, typer.Option(help="what the alert was: true_positive, false_positive, …")
    ] = None,
    who: AsOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 50,
    as_json: JsonOpt = False,
) -> None:
    """List the cases awaiting a blind review, or record one (``ID --disposition``)."""
    from store.cases import audits, records

    if case_id is None:
        waiting = _run(lambda db: audits.awaiting(db, limit=limit))
        rows = [{name: _value(getattr(c, name)) for name in BLIND} for c in waiting]
        if as_json:
            typer.echo(json.dumps({"audits": rows}, indent=2))
            return
        typer.echo(f"{len(rows)} cases await a blind review")
        for r in rows:
            typer.echo(
                f"  #{r['id']:<6} {clean(str(r['source'] or '-')):<12} alert "
                f"{clean(str(r['alert_id'] or '-')):<14} {r['created_at']}  "
                f"{clean(str(r['title']))[:60]}"
            )
        return
    if disposition is None:
        raise fail("say what the alert was: --disposition")
    answer, actor, capture = _disposition(disposition), _actor(who), _capture()

    async def record(db: Database) -> Any:
        case = await records.get(db, case_id)
        return await audits.review(db, case, actor, answer, via="cli", capture=capture)

    done = _run(record)
    if isinstance(done, str):
        raise fail(f"case #{case_id}: {done}")
    out = {"case_id": case_id, "audit_disposition": str(answer), "audit_by": actor}
    typer.echo(json.dumps(out) if as_json else f"case #{case_id}: blind review {answer} recorded")
