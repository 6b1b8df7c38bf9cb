"""``-h`` wherever ``--help`` is, and shell completion of the command names straight from
``cli.main.COMMANDS`` (a TAB imports no command module), then of each command's options."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from cli.main import COMMANDS, app

SOCBOT = Path(sys.executable).with_name("socbot")


def complete(words: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "_SOCBOT_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
        "PYTHONPROFILEIMPORTTIME": "1",  # every import, on stderr
    }
    return subprocess.run([str(SOCBOT)], env=env, capture_output=True, text=True, timeout=120)


def test_command_names_complete_without_importing_them() -> None:
    done = complete("socbot d")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [n for n in COMMANDS if n.startswith("d")]
    imported = done.stderr
    assert "cli.main" in imported
    assert not [m for e in COMMANDS.values() if (m := e.module) in imported.split()]


def test_options_of_a_command_complete() -> None:
    done = complete("socbot list --")
    assert done.returncode == 0, done.stderr
    assert {"--limit", "--alerts", "--json"} <= set(done.stdout.split())


def test_dash_h_is_help_everywhere() -> None:
    for args in (["-h"], ["list", "-h"], ["tools", "list", "-h"], ["db", "-h"]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("Usage: ")
