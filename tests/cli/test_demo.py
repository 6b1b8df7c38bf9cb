"""``socbot demo``: the sample alert through the real engine, tools and terminal UI on the
scripted demo model, with no key, no settings and no network (``tests/conftest.py``'s
guard fails any connection that is not loopback; this test also records every attempt).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.demo.command import ROOT
from cli.main import app

SOCBOT = Path(sys.executable).with_name("socbot")


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every IP socket connection the process attempts (the guard still applies)."""
    attempts: list[Any] = []
    guarded = socket.socket.connect

    def record(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
        return guarded(self, address)

    monkeypatch.setattr(socket.socket, "connect", record)
    return attempts


def test_demo_investigates_the_sample_offline_and_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, connections: list[Any]
) -> None:
    # Settings a user may have are ignored: a broken value, a database of their own.
    usage_db = f"sqlite+aiosqlite:///{tmp_path / 'mine.db'}"
    monkeypatch.setenv("SOCBOT_DATABASE_URL", usage_db)
    monkeypatch.setenv("SOCBOT_LIMITS__MAX_STEPS", "not a number")
    monkeypatch.delenv("UV_RUN_RECURSION_DEPTH", raising=False)  # as run by `socbot`, not `uv run`
    monkeypatch.chdir(tmp_path)
    temp = tmp_path / "tmp"  # the demo's database goes here, and must not stay
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    result = CliRunner().invoke(app, ["demo"])

    assert result.exit_code == 0, result.output
    assert connections == []
    err = result.stderr.splitlines()
    assert err[0].startswith("DEMO — a scripted model") and "No Gemini key, no network" in err[0]
    # the real tools ran: DuckDB on the sample logs, intel from the recorded answers
    assert sum(" → query_logs(" in line and ") ok " in line for line in err) == 5
    assert sum(" → lookup_ip(" in line and ") ok " in line for line in err) == 2
    assert "**Verdict:** True positive" in result.stdout
    assert "3 of 3 findings verified against tool results" in result.stdout
    assert err[-2].startswith("That was a demo: scripted model")
    alert = ROOT / "examples" / "alerts" / "leveret-scc.json"
    assert err[-1].strip() == f"GEMINI_API_KEY=<your key> socbot investigate {alert}"
    assert not (tmp_path / "mine.db").exists() and not (tmp_path / "var").exists()
    # the temporary database went with the demo; only the prompts' compiled templates
    # stay (``agent.prompts``: every command's cache, no data of the run)
    assert [p.name for p in temp.iterdir() if not p.name.startswith("_jinja2-cache-")] == []

    monkeypatch.delenv("SOCBOT_LIMITS__MAX_STEPS")
    monkeypatch.delenv("SOCBOT_CONFIG")
    usage = CliRunner().invoke(app, ["usage", "--json"])
    assert usage.exit_code == 0, usage.output
    assert '"investigations": 0' in usage.stdout


def test_demo_runs_from_any_folder_as_the_readme_says(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOCBOT_", "GEMINI_"))}
    done = subprocess.run(
        [str(SOCBOT), "demo"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "True positive" in done.stdout
    assert "socbot investigate" in done.stderr.splitlines()[-1]
    assert list(tmp_path.iterdir()) == []  # nothing written where it ran
