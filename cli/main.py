"""Entry point: the ``socbot`` root command; each subcommand's module loads when it runs.

``socbot --help`` and ``--version`` import nothing but typer, so they answer at
once; ``socbot tools list`` does not import the model SDK. To add a command:
write a module with ``app = command_app()`` (``cli.common``) holding the command —
or, for a group such as ``tools``, being the group — and add one line to
``COMMANDS`` with the command's one-line help (a test checks it matches).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer
from typer import _click as click  # the click that typer bundles
from typer.core import TyperGroup

if TYPE_CHECKING:
    from typer._click.shell_completion import CompletionItem

from cli.common import command_app


@dataclass(frozen=True)
class Lazy:
    module: str
    help: str
    lean: bool = True  # the executable imports it lean (``run``)


# In the order `socbot --help` lists them.
COMMANDS: dict[str, Lazy] = {
    "demo": Lazy(
        "cli.demo.command",
        "See an investigation without a key: the sample alert on a scripted model, offline.",
    ),
    "investigate": Lazy(
        "cli.terminal.investigate",
        "Investigate one alert (GuardDuty, SCC or any JSON) with Plan & Execute.",
    ),
    "chat": Lazy("cli.terminal.chat", "Talk to socbot in the terminal, with persistent history."),
    "serve": Lazy(
        "cli.serve.command",
        "Run the Slack bot: mentions, thread follow-ups, alert channels and POST /alerts.",
        lean=False,  # Slack needs aiohttp; it freezes its heap once started (bot.lifecycle)
    ),
    "list": Lazy(
        "cli.list_cmd",
        "List recent investigations (or alerts): id, time, source, title, verdict, cost.",
    ),
    "web": Lazy(
        "cli.web_cmd",
        "Browse investigations, alerts, the playbook and usage in a web browser.",
        lean=False,
    ),
    "show": Lazy(
        "cli.show_cmd", "Print a past investigation's record: steps, tool calls, conclusion, usage."
    ),
    "trace": Lazy(
        "cli.show_cmd", "Print a past investigation's event timeline (one line per event)."
    ),
    "tools": Lazy("cli.tools_cmd", "Inspect the investigation tools."),
    "doctor": Lazy(
        "cli.doctor.command",
        "Check the set-up (settings, models, Slack, BigQuery, DuckDB, intel, database).",
    ),
    "mcp": Lazy(
        "cli.mcp_cmd", "Serve socbot's tools over MCP (stdio, or streamable HTTP behind a token)."
    ),
    "playbook": Lazy("cli.playbook_cmd", "Review and manage the team playbook."),
    "alerts": Lazy("cli.alerts_cmd", "Inspect how alert payloads are read."),
    "policy": Lazy("cli.policy_cmd", "Test and list the alert policy's rules."),
    "cases": Lazy("cli.cases_cmd", "List, show, take, resolve and audit cases."),
    "report": Lazy(
        "cli.report_cmd",
        "Report how often socbot agreed with the analysts, and what its playbook changed.",
    ),
    "db": Lazy("cli.db_cmd", "Manage the database: schema migrations and pruning by lifetime."),
    "eval": Lazy("cli.eval.command", "Measure verdict quality on a scenario pack."),
    "usage": Lazy(
        "cli.usage_cmd", "Summarise model tokens and cost (USD at list prices) from the database."
    ),
}

ENVIRONMENT_HELP = """\b
Environment:
  GEMINI_API_KEY       Gemini API key (or Vertex AI: docs/configuration.md)
  SOCBOT_CONFIG        settings file (default config/socbot.toml; a
                       socbot.local.toml beside it overrides it)
  SOCBOT_DATABASE_URL  database URL (default: SQLite in ./var/socbot.db)
  SLACK_BOT_TOKEN      for `socbot serve`, with SLACK_APP_TOKEN (socket
                       mode) or SLACK_SIGNING_SECRET (http mode)
  SOCBOT_*             any setting, e.g. SOCBOT_LIMITS__MAX_STEPS=5
"""


def load_command(name: str) -> click.Command | None:
    """Import the module of command ``name`` and return its click command."""
    entry = COMMANDS.get(name)
    if entry is None:
        return None
    module_app = importlib.import_module(entry.module).app
    group = typer.main.get_group(module_app)
    return group.commands.get(name, group)


class LazyGroup(TyperGroup):
    """A group whose commands are imported on first use; help uses ``COMMANDS``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*COMMANDS, *(n for n in super().list_commands(ctx) if n not in COMMANDS)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or load_command(cmd_name)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """Command names from ``COMMANDS`` (no module imported on a TAB), then options."""
        from typer._click.shell_completion import CompletionItem

        names = [
            CompletionItem(name, help=entry.help)
            for name, entry in COMMANDS.items()
            if name.startswith(incomplete)
        ]
        return names + click.Command.shell_complete(self, ctx, incomplete)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.help) for name, entry in COMMANDS.items()])


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"socbot {version('socbot')}")
        raise typer.Exit()


app = command_app(
    name="socbot",
    cls=LazyGroup,
    epilog=ENVIRONMENT_HELP,
    invoke_without_command=False,
    add_completion=True,  # socbot --install-completion (bash, zsh, fish, PowerShell)
)


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """socbot investigates security alerts with Plan & Execute on Gemini."""


def run() -> None:
    """The ``socbot`` executable: ``app()``, its command imported lean (``_import_lean``).

    Only the executable does this: a process that imports ``app`` (tests,
    ``CliRunner``) keeps its collector and imports as they are.
    """
    entry = COMMANDS.get(sys.argv[1]) if len(sys.argv) > 1 else None
    if entry is not None and entry.lean and not gc.get_freeze_count():
        _import_lean(entry.module)
    app()


def _import_lean(module: str) -> None:
    """Import a command's module as cheaply as it can be (bench/README.md, "Start-up").

    - Its imports build ~200,000 objects that live as long as the process (pydantic
      models, the google-genai types, SQLAlchemy) and almost no garbage, yet the cyclic
      collector walks them again and again while they are built and after. So they are
      imported with the collector paused, and what exists then is frozen (never walked
      again) until exit, when ``gc.unfreeze`` lets the interpreter finalize it as usual.
    - google-genai imports aiohttp when it is installed (~0.15 s with the two TLS
      contexts aiohttp makes at import) for transports socbot never uses: it always
      hands the SDK its httpx client (``agent.model.gemini``). Only ``serve`` (Slack) needs
      aiohttp, and it is not imported lean. The module is hidden only while the command
      is imported; anything importing aiohttp later gets it.
    """
    hide = "aiohttp" not in sys.modules
    if hide:
        sys.modules["aiohttp"] = None  # type: ignore[assignment]  # import raises ImportError
    enabled = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module(module)
    finally:
        if hide and sys.modules.get("aiohttp", ...) is None:
            del sys.modules["aiohttp"]
        gc.freeze()
        atexit.register(gc.unfreeze)
        if enabled:
            gc.enable()


if __name__ == "__main__":
    run()
