"""Every command that reads settings ends on a bad ``SOCBOT_*`` variable with one
``error:`` line naming it, and exit code 2 — the way containers are configured."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.cli.test_cli import assert_one_line_error

ALERT = str(Path(__file__).resolve().parents[1] / "fixtures" / "alerts" / "leveret-scc.json")
COMMANDS = [
    ["tools", "list"],
    ["investigate", ALERT],
    ["serve"],
    ["usage"],
    ["show", "0123abcd"],
    ["db", "upgrade"],
    ["playbook", "list"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]).split("/")[0])
@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("SOCBOT_SLACK__ALERT_CHANNELS", "C0ALERTS01", """must be a JSON list, e.g. '["C0"""),
        ("SOCBOT_LIMTS__MAX_STEPS", "5", "did you mean SOCBOT_LIMITS__MAX_STEPS?"),
    ],
)
def test_bad_variable_is_one_line_and_exit_2(
    command: list[str],
    name: str,
    value: str,
    needle: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("SOCBOT_CONFIG")  # no settings file: only the variable is wrong
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(name, value)
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2, result.output
    assert_one_line_error(result.output, name, needle)
