"""``socbot show ID`` and ``socbot trace ID``: a past investigation, from the database.

``show`` prints the investigation's record (``--json``: the same record as
``socbot investigate --json``); ``trace`` its event timeline, one line per event
(``--json``: the events). Everything printed may come from an alert or a tool
answer, so control characters are removed before it reaches the terminal.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from cli.common import clean as clean  # where show and trace get it (tests import it here)
from cli.common import command_app, fail, load_settings_or_exit, one_line

app = command_app()

IdArg = Annotated[
    str,
    typer.Argument(help="Investigation id, a unique start of one (socbot list), or last."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]

# What a trace line shows of each event's payload, in this order (absent or null: left out).
TRACE_KEYS = (
    "step_id",
    "stage",
    "tool",
    "ok",
    "status",
    "mode",
    "verdict",
    "wave",
    "model",
    "prompt_tokens",
    "cached_tokens",
    "output_tokens",
    "thinking_tokens",
    "latency_ms",
    "duration_ms",
    "result_chars",
    "cost_usd",
    "error",
)
VALUE_CHARS = 100


@app.command()
def show(investigation_id: IdArg, as_json: JsonOpt = False) -> None:
    """Print a past investigation's record: steps, tool calls, conclusion, usage."""
    row, trace = _load(investigation_id, announce=not as_json)
    from cli.terminal.record import with_trace

    base = dict(row.get("record") or {})
    for key in ("investigation_id", "conversation_id", "kind", "status", "mode", "error"):
        base.setdefault(key, row[key])
    record = with_trace(base, trace)
    if as_json:
        typer.echo(json.dumps(record, indent=2, ensure_ascii=False, default=str))
        return
    for line in record_lines(record, row):
        typer.echo(clean(line))


@app.command()
def trace(investigation_id: IdArg, as_json: JsonOpt = False) -> None:
    """Print a past investigation's event timeline (one line per event)."""
    _row, events = _load(investigation_id, announce=not as_json)
    if as_json:
        typer.echo(json.dumps(events, indent=2, ensure_ascii=False, default=str))
        return
    for line in trace_lines(events):
        typer.echo(clean(line))


def record_lines(record: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """The record as text: header, objective, steps with tool calls, result, usage."""
    lines = [
        f"investigation {record['investigation_id']} · {record.get('kind')} · "
        f"{record.get('status')} · {record.get('mode') or '-'} · "
        f"started {_utc(row['created_at'])} · conversation {record.get('conversation_id')}"
    ]
    if record.get("error"):
        lines.append(f"error: {record['error']}")
    if record.get("objective"):
        lines.append(f"objective: {record['objective']}")
    for step in record.get("steps", []):
        lines.append(f"{step.get('id')} [{step.get('status')}] {step.get('description', '')}")
        lines += [f"    {call_line(call)}" for call in step.get("tool_calls", [])]
    lines += [f"  {call_line(call)}" for call in record.get("tool_calls", [])]
    conclusion = record.get("conclusion")
    if isinstance(conclusion, dict):
        lines.append(
            f"verdict: {conclusion.get('verdict')} (severity {conclusion.get('severity')}, "
            f"confidence {conclusion.get('confidence')})"
        )
        lines.append(f"summary: {conclusion.get('summary')}")
        if isinstance(techniques := conclusion.get("techniques"), list) and techniques:
            lines.append("ATT&CK: " + "; ".join(_technique(t) for t in techniques))
    elif record.get("answer"):
        lines.append(f"answer: {record['answer']}")
    usage = record.get("usage") or {}
    if usage:
        cost = usage.get("cost_usd")
        lines.append(
            f"usage: {usage.get('llm_calls', 0)} model calls, {usage.get('total_tokens', 0)} "
            "tokens" + (f", ${cost:.4f} at list prices" if isinstance(cost, float | int) else "")
        )
    return lines


def _technique(technique: Any) -> str:
    """``T1110.003 Password Spraying (Credential Access)`` from a stored technique."""
    if not isinstance(technique, dict):
        return "?"
    text = " ".join(str(technique.get(k) or "") for k in ("id", "name")).strip()
    return text + (f" ({technique['tactic']})" if technique.get("tactic") else "")


def call_line(call: dict[str, Any]) -> str:
    """One tool call: ``→ tool(args) ok 12 ms, 340 chars`` or ``… error: reason``."""
    args = ", ".join(f"{k}={v!r}" for k, v in (call.get("args") or {}).items())
    outcome = "ok" if call.get("ok") else f"error: {_first_line(call.get('error') or '')}"
    size = f"{call.get('result_chars')} chars" + (", truncated" if call.get("truncated") else "")
    return f"→ {call.get('tool')}({_clip(args)}) {outcome} · {call.get('duration_ms')} ms, {size}"


def trace_lines(events: list[dict[str, Any]]) -> list[str]:
    """``+seconds  type  key=value ...`` per event, relative to the first."""
    start = _when(events[0]) if events else None
    lines = []
    for event in events:
        at = _when(event)
        offset = f"+{(at - start).total_seconds():.3f}s" if at and start else "?"
        payload = event.get("payload") or {}
        details = " ".join(
            f"{k}={_clip(_first_line(str(payload[k])))}"
            for k in TRACE_KEYS
            if payload.get(k) is not None
        )
        lines.append(f"{offset:>10}  {event['type']:<15} {details}".rstrip())
    return lines


def _load(investigation_id: str, *, announce: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    settings = load_settings_or_exit(announce=announce)
    from config.settings import ConfigError

    try:
        row, events = asyncio.run(_read(settings.database_url, investigation_id))
    except ConfigError as exc:
        raise fail(one_line(exc)) from None
    if row is None:
        raise fail(f"no investigation {investigation_id!r} in this database")
    return row, events


async def _read(url: str, investigation_id: str) -> tuple[dict[str, Any] | None, list[Any]]:
    from cli.database import migrated_database, sqlite_file_missing
    from config.settings import ConfigError
    from store.investigations.listing import IdNotFound, resolve_investigation
    from store.investigations.runs import InvestigationStore

    if sqlite_file_missing(url):  # nothing was ever stored there: do not create it
        return None, []
    async with migrated_database(url) as db:  # an older database is upgraded, as everywhere
        try:
            investigation_id = await resolve_investigation(db, investigation_id)
        except IdNotFound as exc:
            raise ConfigError(str(exc)) from None
        store = InvestigationStore(db)
        investigation = await store.get(investigation_id)
        if investigation is None:
            return None, []
        row = {
            "investigation_id": investigation.id,
            "conversation_id": investigation.conversation_id,
            "kind": investigation.kind,
            "status": investigation.status,
            "mode": investigation.mode,
            "error": investigation.error,
            "record": investigation.record,
            "created_at": investigation.created_at,
        }
        return row, await store.trace(investigation_id)


def _utc(at: object) -> str:
    """A stored time to the second, in UTC (naive times are stored as UTC)."""
    if not isinstance(at, datetime):
        return str(at)
    aware = at if at.tzinfo else at.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _when(event: dict[str, Any]) -> datetime | None:
    return datetime.fromisoformat(event["at"]) if event.get("at") else None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _clip(text: str) -> str:
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"
