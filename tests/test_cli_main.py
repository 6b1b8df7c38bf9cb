"""The root command: fast help and version, lazily loaded subcommands."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import pytest
from typer.testing import CliRunner

from cli.main import COMMANDS, app, load_command

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
    assert _heavy(_modules_after("import cli.investigate"), later) == set()


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
