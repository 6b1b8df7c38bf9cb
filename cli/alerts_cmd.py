"""``socbot alerts parse FILE``: what socbot reads from an alert payload, and which
format of the catalogue matched it (for writing a format)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from alerts.catalogue import Catalogue, FormatError, load_catalogue
from alerts.parse import Alert, parse_alert
from cli.common import command_app, fail, load_settings_or_exit

app = command_app(help="Inspect how alert payloads are read.")


@app.command("parse")
def parse(
    file: Annotated[Path, typer.Argument(help="alert payload (JSON); - reads standard input")],
    formats: Annotated[
        Path | None,
        typer.Option(help="directory of format files (default: the alerts.formats_dir setting)"),
    ] = None,
    source: Annotated[str | None, typer.Option(help="source hint, e.g. guardduty")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the parsed alert as JSON")] = False,
) -> None:
    """Show the format that matched FILE and the title, severity, time and entities read."""
    data = read_alert_file(file)
    alert = parse_alert(data, source, catalogue=catalogue_or_exit(formats, announce=not as_json))
    if as_json:
        typer.echo(alert.model_dump_json(indent=2, exclude={"raw", "id"}))
        return
    _show(alert)


def catalogue_or_exit(formats: Path | None, *, announce: bool) -> Catalogue:
    """The catalogue of ``--formats``, else of the settings (which are read only then)."""
    directory: Path | str | None = formats
    if formats is None:
        directory = load_settings_or_exit(announce=announce).alerts.formats_dir
    try:
        return load_catalogue(directory)
    except FormatError as exc:
        raise fail(str(exc)) from None


def read_alert_file(file: Path) -> dict[str, object]:
    try:
        text = typer.get_text_stream("stdin").read() if str(file) == "-" else file.read_text()
        data = json.loads(text)
    except OSError as exc:
        raise fail(f"cannot read {str(file)!r}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise fail(f"{str(file)!r} is not a JSON alert: {exc}") from None
    if not isinstance(data, dict):
        raise fail(f"{str(file)!r} must hold one JSON object, not {type(data).__name__}")
    return data


def _show(alert: Alert) -> None:
    console = Console(soft_wrap=True, highlight=False)
    fields = {
        "format": alert.format or "(none matched: unknown payload, best-effort title)",
        "source": alert.source,
        "title": alert.title,
        "severity": alert.severity or "(unknown)",
        "time": alert.event_time.isoformat() if alert.event_time else "(unknown)",
        "description": alert.description or "",
    }
    for name, value in fields.items():
        console.print(f"[bold]{name}[/bold]: {escape(value)}")
    table = Table(title="entities", title_justify="left")
    table.add_column("kind")
    table.add_column("value", overflow="fold")
    table.add_column("role")
    for e in alert.entities:
        table.add_row(e.kind, escape(e.value), e.role or "")
    console.print(table)
    if alert.indicators:
        shown = ", ".join(f"{i.kind} {i.value}" for i in alert.indicators)
        console.print(f"[bold]indicators[/bold]: {escape(shown)}")
