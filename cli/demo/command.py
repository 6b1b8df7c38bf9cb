"""``socbot demo``: investigate the bundled sample alert with no key, network or settings.

The real engine, tools and terminal UI run; the model is ``cli.demo.model`` (a script),
the logs are the SYNTHETIC sample in ``examples/data`` (DuckDB), threat intel is
answered from ``examples/demo/intel.json``, and the database is a temporary SQLite file
deleted at the end, so ``socbot usage`` and ``socbot show`` never see the run. A banner
and a footer say plainly that it is a demo; the footer gives the one command to run
with a Gemini key.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import tomllib
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console

from agent.engine import Outcome
from alerts.catalogue import load_catalogue
from alerts.parse import parse_alert
from bot.blocks.stats import RunStats
from cli.common import cli_logging, command_app, fail, socbot_command
from cli.demo.intel import recorded_intel
from cli.demo.model import MODEL, DemoModel
from cli.terminal.investigate import EXIT_CANCELLED, investigate_alert, print_outcome
from cli.terminal.progress import TerminalProgress
from config.settings import ModelPrice, Settings, fixed_settings

ROOT = Path(__file__).resolve().parents[2]  # the source tree: examples/ and config/
ALERT = Path("examples/alerts/leveret-scc.json")
INTEL = Path("examples/demo/intel.json")
CATALOGUE = Path("config/socbot.toml")  # its [logs] section: the sample tables
FREE = ModelPrice(input=0, output=0, cached_input=0)  # the script costs nothing

BANNER = (
    "DEMO — a scripted model replays one investigation of the bundled sample alert "
    "({alert}) against SYNTHETIC sample logs and recorded threat intel. No Gemini key, "
    "no network, nothing stored. The verdict is the script's, not a model's judgement."
)
FOOTER = (
    "That was a demo: scripted model, sample data, nothing recorded. "
    "With your Gemini key, investigate the same alert for real:\n"
    "  GEMINI_API_KEY=<your key> {command} investigate {alert}"
)

app = command_app(no_args_is_help=False)

VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Also show each model call.")]


@app.command()
def demo(verbose: VerboseOpt = False) -> None:
    """See an investigation without a key: the sample alert on a scripted model, offline."""
    missing = [str(p) for p in (ALERT, INTEL, CATALOGUE) if not (ROOT / p).is_file()]
    if missing:
        raise fail(f"the demo's files are not installed ({', '.join(missing)} under {ROOT})")
    console = Console(stderr=True, soft_wrap=True)
    console.print(BANNER.format(alert=ALERT), style="bold magenta", highlight=False)
    with tempfile.TemporaryDirectory(prefix="socbot-demo-") as folder:
        outcome = _run(demo_settings(Path(folder)), console, verbose)
    print_outcome(outcome)
    stats = RunStats.from_outcome(outcome.usage, outcome.record).text()
    console.print(f"demo investigation · {stats}", style="dim", highlight=False)
    console.print(
        FOOTER.format(command=socbot_command(), alert=_shown(ROOT / ALERT)),
        style="bold magenta",
        highlight=False,
    )


def _shown(path: Path) -> Path:
    """``path`` relative to the current folder when it is under it, else absolute."""
    try:
        return path.relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def _run(settings: Settings, console: Console, verbose: bool) -> Outcome:
    raw = json.loads((ROOT / ALERT).read_text(encoding="utf-8"))
    alert = parse_alert(raw, catalogue=load_catalogue(None))
    progress = TerminalProgress(console, verbose=verbose)
    try:
        with cli_logging(verbose=verbose), progress:
            outcome, _record = asyncio.run(_investigate(settings, alert, progress))
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_CANCELLED) from None
    return outcome


async def _investigate(
    settings: Settings, alert: Any, progress: TerminalProgress
) -> tuple[Outcome, dict[str, Any]]:
    async with httpx.AsyncClient(transport=recorded_intel(ROOT / INTEL)) as http:
        return await investigate_alert(settings, alert, progress, backend=DemoModel(), http=http)


def demo_settings(folder: Path) -> Settings:
    """The demo's settings: the sample tables of ``config/socbot.toml`` (paths made
    absolute), a SQLite database in ``folder``, AbuseIPDB as the intel service (its
    answers recorded), the scripted model; nothing from the environment or files."""
    logs = tomllib.loads((ROOT / CATALOGUE).read_text(encoding="utf-8"))["logs"]
    logs["runbooks_dir"] = str(ROOT / logs["runbooks_dir"])
    for table in logs["tables"]:
        table["path"] = str(ROOT / table["path"])
    return fixed_settings(
        database_url=f"sqlite+aiosqlite:///{folder / 'demo.db'}",
        chat_history_file="",
        gemini={"model": MODEL, "light_model": MODEL, "prices": {MODEL: FREE}},
        intel={"abuseipdb_api_key": "recorded-answers"},
        logs=logs,
        learning={"enabled": False},
    )
