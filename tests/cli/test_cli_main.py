"""The root command: fast help and version, lazily loaded subcommands."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
from importlib.metadata import entry_points, version
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from cli.main import COMMANDS, app, load_command
from config.settings import load_settings
from store.db.engine import Database
from tools.base import ToolRegistry
from tools.setup import build_registry, listed_registry

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("google.genai", "sqlalchemy", "duckdb", "sqlglot", "google.cloud", "slack_bolt", "rich")


def _modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def _heavy(modules: set[str], heavy: tuple[str, ...] = HEAVY) -> set[str]:
    return {m for m in modules for h in heavy if m == h or m.startswith(h + ".")}


def test_importing_the_entry_point_imports_no_heavy_library() -> None:
    assert _heavy(_modules_after("import cli.main")) == set()


def test_help_and_version_import_no_heavy_library() -> None:
    for args in (["--help"], ["--version"]):
        code = f"import sys\nfrom cli.main import app\nsys.argv = ['socbot', *{args!r}]\n" + (
            "try:\n    app()\nexcept SystemExit:\n    pass"
        )
        assert _heavy(_modules_after(code)) == set(), args


def test_investigate_imports_only_what_its_start_needs() -> None:
    """Printing the result (markdown-it), migrating (Alembic: only when the database is
    behind) and the Slack, BigQuery and DuckDB libraries wait until they are needed."""
    later = ("alembic", "rich.markdown", "markdown_it", "duckdb", "google.cloud", "slack_bolt")
    assert _heavy(_modules_after("import cli.terminal.investigate"), later) == set()


def test_tools_list_imports_no_database_code_and_starts_no_worker() -> None:
    code = (
        "import sys\nimport psutil\nfrom cli.main import app\n"
        "sys.argv = ['socbot', 'tools', 'list']\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "assert psutil.Process().children() == [], 'a DuckDB worker was started'"
    )
    running_only = ("sqlalchemy", "aiosqlite", "store", "alembic", "duckdb", "google")
    assert _heavy(_modules_after(code), running_only) == set()


def test_the_log_tools_import_sqlglot_at_their_first_query_not_at_start(tmp_path: Path) -> None:
    code = (
        "import asyncio, os, httpx\n"
        f"os.environ['SOCBOT_CONFIG'] = {str(REPO / 'config' / 'socbot.toml')!r}\n"
        "from config.settings import load_settings\nfrom store.db.engine import Database\n"
        "from tools.setup import build_registry\n"
        "async def main():\n"
        f"    db = Database('sqlite+aiosqlite:///{tmp_path / 'socbot.db'}')\n"
        "    async with httpx.AsyncClient() as http:\n"
        "        registry = build_registry(load_settings(), db, http)\n"
        "    assert 'query_logs' in registry.tools and 'run_runbook' in registry.tools\n"
        "    await db.close()\n"
        "asyncio.run(main())"
    )
    assert _heavy(_modules_after(code), ("sqlglot", "duckdb")) == set()


def test_listed_tools_are_the_running_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOCBOT_CONFIG", str(REPO / "config" / "socbot.toml"))  # log tables
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}")
    monkeypatch.setenv("VIRUSTOTAL_API_KEY", "vt-test-key")
    monkeypatch.setenv("ABUSEIPDB_API_KEY", "ab-test-key")
    settings = load_settings()

    async def running() -> ToolRegistry:
        db = Database(settings.database_url)
        try:
            async with httpx.AsyncClient() as http:
                return build_registry(settings, db, http)
        finally:
            await db.close()

    listed, built = listed_registry(settings), asyncio.run(running())
    assert listed.disabled == built.disabled
    assert {n: t.description for n, t in listed.tools.items()} == {
        n: t.description for n, t in built.tools.items()
    }
    assert "lookup_ip" in listed.tools and "query_logs" in listed.tools
    assert listed.tools["lookup_ip"].deps is None  # listed, not bound: nothing to run with
    assert listed.tools["search_past_alerts"].deps is None
    assert listed.tools["query_logs"].deps.backend.pool.pids() == []  # no DuckDB worker


def _after_run(args: list[str]) -> dict[str, object]:
    code = (
        "import gc, importlib, json, sys\nfrom cli.main import run\n"
        f"sys.argv = ['socbot', *{args!r}]\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        "genai = sys.modules.get('google.genai._api_client')\n"
        "print(json.dumps({'frozen': gc.get_freeze_count(), 'enabled': gc.isenabled(), "
        "'genai_aiohttp': genai.has_aiohttp if genai else None, "
        "'aiohttp': importlib.import_module('aiohttp').__name__}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return dict(json.loads(out.splitlines()[-1]))


def test_the_executable_imports_its_command_lean() -> None:
    """GC paused while the command is imported, that heap frozen; google-genai without
    aiohttp, which stays importable for whatever needs it later."""
    (script,) = entry_points(group="console_scripts", name="socbot")
    assert script.value == "cli.main:run"
    after = _after_run(["investigate", "--help"])
    frozen = after.pop("frozen")
    assert isinstance(frozen, int) and frozen > 10_000
    assert after == {"enabled": True, "genai_aiohttp": False, "aiohttp": "aiohttp"}
    # serve's Slack side needs aiohttp, and it freezes its heap itself once started;
    # --version imports no command; a process that runs `app` (CliRunner) is left alone.
    assert _after_run(["serve", "--help"]) == {
        "frozen": 0, "enabled": True, "genai_aiohttp": True, "aiohttp": "aiohttp"
    }  # fmt: skip
    version = _after_run(["--version"])
    assert version == {"frozen": 0, "enabled": True, "genai_aiohttp": None, "aiohttp": "aiohttp"}
    assert CliRunner().invoke(app, ["tools", "--help"]).exit_code == 0
    assert gc.get_freeze_count() == 0


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"socbot {version('socbot')}\n"


def test_help_lists_commands_and_the_environment_variables() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.stdout
    for variable in ("GEMINI_API_KEY", "SOCBOT_CONFIG", "SOCBOT_DATABASE_URL", "SLACK_BOT_TOKEN"):
        assert variable in result.stdout


@pytest.mark.parametrize("name", list(COMMANDS))
def test_registered_help_is_the_commands_own(name: str) -> None:
    command = load_command(name)
    assert command is not None and command.help is not None
    assert command.help.split("\n\n")[0].replace("\n", " ") == COMMANDS[name].help


def test_boolean_options_are_shown_as_flags() -> None:
    result = CliRunner().invoke(app, ["investigate", "--help"])
    assert result.exit_code == 0
    assert "--json " in result.stdout
    assert "<bool>" not in result.stdout


def test_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["investigat"])
    assert result.exit_code == 2
    assert "investigat" in result.output
