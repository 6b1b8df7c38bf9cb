"""``socbot investigate PATH``: the engine from a terminal (``socbot chat``: ``cli.terminal.chat``).

Progress goes to stderr (``cli.terminal.progress``); stdout carries only the result —
the conclusion as Markdown, or with ``--json`` the investigation record — so
both commands can be scripted. Expected failures (configuration, input file,
credentials) end with one ``error:`` line and exit code 2, never a traceback.
Ctrl-C cancels the running investigation cleanly (it is stored as cancelled).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from agent.concluder import to_markdown
from agent.engine import Outcome, Request
from agent.errors import AgentError
from agent.review.critic import review_markdown
from agent.run import alert_request_text
from alerts.catalogue import FormatError, load_catalogue
from alerts.parse import Alert, parse_alert
from bot.blocks.stats import RunStats
from bot.notify.notifier import Notifier, investigation_data
from cli.common import (
    ModelOpt,
    cli_logging,
    command_app,
    fail,
    load_settings_or_exit,
    new_conversation_id,
    one_line,
    socbot_command,
    with_model,
)
from cli.runtime import open_runtime
from cli.terminal.approval import TerminalApprover, interactive
from cli.terminal.progress import TerminalProgress
from cli.terminal.record import with_trace
from config.settings import ConfigError, Settings, config_notice
from core.scope import EVERYTHING
from store.investigations.runs import InvestigationStore
from store.queue.work import WorkQueue
from store.schema import InvestigationStatus
from store.triage.alerts import AlertStore

if TYPE_CHECKING:
    import httpx

    from agent.model.llm import ModelBackend

EXIT_FAILED = 1
EXIT_CANCELLED = 130
EXIT_CODES = {
    InvestigationStatus.ANSWERED: 0,
    InvestigationStatus.CONCLUDED: 0,
    InvestigationStatus.FAILED: EXIT_FAILED,
    InvestigationStatus.CANCELLED: EXIT_CANCELLED,
}


app = command_app()

PathArg = Annotated[str, typer.Argument(help="Alert JSON file, or - to read standard input.")]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print the investigation record as JSON to stdout.")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Also show each model call.")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress output on stderr.")]


@app.command()
def investigate(
    path: PathArg,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
    quiet: QuietOpt = False,
    model: ModelOpt = None,
) -> None:
    """Investigate one alert (GuardDuty, SCC or any JSON) with Plan & Execute."""
    settings = with_model(load_settings_or_exit(announce=False), model)  # said once open
    alert = _read_alert(path, settings.alerts.formats_dir, settings.slack.max_alert_bytes)
    progress = TerminalProgress(Console(stderr=True, quiet=quiet, soft_wrap=True), verbose=verbose)
    try:
        with cli_logging(quiet=quiet, verbose=verbose), progress:
            outcome, record = asyncio.run(
                investigate_alert(settings, alert, progress, asking=interactive(quiet))
            )
    except KeyboardInterrupt:  # the progress sink said "cancelled" (one line)
        if quiet:
            typer.secho("cancelled", err=True, fg=typer.colors.YELLOW)
        raise typer.Exit(EXIT_CANCELLED) from None
    except (ConfigError, AgentError, OSError) as exc:
        raise fail(one_line(exc)) from None

    if as_json:
        typer.echo(json.dumps(record, indent=2, ensure_ascii=False, default=str))
    else:
        print_outcome(outcome)
    if quiet and outcome.error:
        typer.secho(f"{outcome.status}: {outcome.error}", err=True, fg=typer.colors.RED)
    if not quiet:
        stats = RunStats.from_outcome(outcome.usage, outcome.record).text()
        typer.secho(
            f"investigation {outcome.investigation_id} · {stats} · follow up with: "
            f"{socbot_command()} chat --conversation {record['conversation_id']}",
            err=True,
            dim=True,
        )
    code = EXIT_CODES.get(outcome.status, EXIT_FAILED)
    if code:
        raise typer.Exit(code)


async def investigate_alert(
    settings: Settings,
    alert: Alert,
    progress: TerminalProgress,
    *,
    backend: ModelBackend | None = None,
    http: httpx.AsyncClient | None = None,
    asking: bool = False,
) -> tuple[Outcome, dict[str, Any]]:
    """Investigate ``alert`` in a runtime of its own (``open_runtime``; ``backend`` and
    ``http`` as there), store it, and return the outcome with the ``--json`` record.
    Without ``backend``, the settings files read are said first (``config_notice``)."""
    conversation_id = new_conversation_id()
    async with open_runtime(settings, backend=backend, http=http) as rt:
        if backend is None:
            progress.console.print(
                escape(config_notice(settings.database_url)), style="dim", highlight=False
            )
        started = time.monotonic()
        approver = TerminalApprover(progress.console, interactive=asking)
        request = Request(
            conversation_id=conversation_id,
            text=alert_request_text(alert),
            alert=alert,
            approver=approver,
            scope=EVERYTHING,  # the operator at a terminal: every channel's past alerts
        )
        outcome = await rt.engine.run(request, progress)
        record = await investigation_record(rt.investigations, outcome, time.monotonic() - started)
        await remember_alert(AlertStore(rt.db), alert, outcome)
        event = investigation_data(outcome, alert, None, None)
        if event is not None and settings.notify.webhooks:  # sent by the next `socbot serve`
            await Notifier(settings.notify, WorkQueue(rt.db)).publish(*event)
    record["conversation_id"] = conversation_id
    return outcome, record


async def remember_alert(alerts: AlertStore, alert: Alert, outcome: Outcome) -> None:
    """Store the alert after its run (so the run never finds itself) for later searches."""
    await alerts.save(alert, investigation_id=outcome.investigation_id)
    if outcome.conclusion is not None:
        await alerts.set_verdict(
            alert.id, verdict=outcome.conclusion.verdict, summary=outcome.conclusion.summary
        )


async def investigation_record(
    store: InvestigationStore, outcome: Outcome, elapsed_s: float
) -> dict[str, Any]:
    """The ``--json`` record: the engine's record plus steps with their tool calls
    (``cli.terminal.record``).

    Missing pieces (an engine record cut short by a failure) come from the outcome
    and the stored trace, so the record always has the same keys.
    """
    trace = await store.trace(outcome.investigation_id)
    plan = outcome.plan
    record: dict[str, Any] = dict(outcome.record)
    record.setdefault("investigation_id", outcome.investigation_id)
    record["status"] = outcome.status
    record["mode"] = outcome.mode
    record["objective"] = plan.objective if plan else None
    record["steps"] = [step.model_dump(mode="json") for step in plan.steps] if plan else []
    record["conclusion"] = (
        outcome.conclusion.model_dump(mode="json") if outcome.conclusion else None
    )
    record["limits_hit"] = outcome.limits_hit
    record["error"] = outcome.error
    record["usage"] = record.get("usage") or outcome.usage
    timings = dict(record.get("timings") or {})
    timings.setdefault("total_ms", round(elapsed_s * 1000, 1))
    record["timings"] = timings
    return with_trace(record, trace)


def print_outcome(outcome: Outcome) -> None:
    """The answer or conclusion on stdout (failures were shown by the progress sink),
    followed by how the review checked it."""
    review = ""
    if outcome.review is not None and outcome.review.shown:
        review = "\n\n" + review_markdown(outcome.review)
    if outcome.answer is not None:
        _print_markdown(outcome.answer + review)
    elif outcome.conclusion is not None:
        _print_markdown(to_markdown(outcome.conclusion, outcome.plan, outcome.limits_hit) + review)


def _print_markdown(text: str) -> None:
    if sys.stdout.isatty():
        from rich.markdown import Markdown  # markdown-it: only to print the result

        Console().print(Markdown(text))
    else:
        typer.echo(text)


def _read_alert(path: str, formats_dir: str | None = None, max_bytes: int | None = None) -> Alert:
    """The alert in ``path`` (``-``: standard input), or one ``error:`` line and exit 2:
    unreadable, over ``max_bytes`` (the webhook's ``slack.max_alert_bytes``), not one JSON
    object, an object with nothing in it, or a payload no format reads."""
    source = "standard input" if path == "-" else path
    raw = _read_text(path, source, max_bytes)
    if not raw.strip():
        raise fail(f"{source!r} is empty; expected an alert in JSON")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise fail(
            f"{source!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, dict):
        raise fail(f"{source!r} must hold one JSON object (an alert), not {type(data).__name__}")
    if not _has_content(data):
        raise fail(f"{source!r} holds a JSON object with nothing in it; expected an alert")
    try:
        return parse_alert(data, catalogue=load_catalogue(formats_dir))
    except FormatError as exc:
        raise fail(str(exc)) from None
    except (AgentError, ValueError) as exc:
        raise fail(f"{source!r} is not an alert socbot understands: {one_line(exc)}") from None


def _read_text(path: str, source: str, max_bytes: int | None) -> str:
    limit = -1 if max_bytes is None else max_bytes + 1
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(limit)
        else:
            with Path(path).open("rb") as file:
                raw = file.read(limit)
    except OSError as exc:
        raise fail(f"cannot read {source!r}: {exc.strerror or exc}") from None
    if max_bytes is not None and len(raw) > max_bytes:
        raise fail(
            f"{source!r} is larger than {max_bytes} bytes, the alert size limit "
            "(slack.max_alert_bytes, as for POST /alerts)"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise fail(f"{source!r} is not UTF-8 text; expected an alert in JSON") from None


def _has_content(value: object) -> bool:
    """Whether a value holds anything but empty objects, lists, strings and nulls."""
    if isinstance(value, dict):
        return any(_has_content(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_content(v) for v in value)
    return value not in (None, "")
