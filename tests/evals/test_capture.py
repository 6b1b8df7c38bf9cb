"""``socbot eval capture``: a stored investigation becomes a scenario that runs offline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alerts.catalogue import load_catalogue
from alerts.parse import parse_alert
from cli.database import migrated_database
from cli.eval.run import run_eval
from cli.main import app
from config.settings import Settings
from evals.capture import salvage
from evals.results import RunFolder
from evals.scenario import load_pack
from store.playbook.feedback import FeedbackStore
from store.triage.alerts import AlertStore
from tests.fakes.eval_model import Answer, eval_model

SQL = "SELECT event_time, actor, client_ip, outcome FROM `{table}` ORDER BY event_time LIMIT 3"


async def investigated(url: str, tmp_path: Path, sql: str = SQL, **settings: object) -> str:
    """One real (scripted) investigation of the password-spray alert, stored as the
    CLI stores one (its alert row too), with an analyst's 👎 saying benign."""
    pack = load_pack("core", "okta-password-spray")
    folder = RunFolder(tmp_path / "run")
    model = eval_model(pack, {pack[0].id: Answer("flip")}, step_sql=sql)
    config = Settings(database_url=url, **settings)  # type: ignore[arg-type]
    await run_eval(config, [(pack[0], 0)], folder, backend=model)
    (attempt,) = folder.attempts()
    assert attempt.investigation_id
    async with migrated_database(url) as db:
        alert = parse_alert(pack[0].alert, catalogue=load_catalogue(None))
        await AlertStore(db).save(alert, investigation_id=attempt.investigation_id)
        await FeedbackStore(db).vote(attempt.investigation_id, "U1", "incorrect", verdict="benign")
    return attempt.investigation_id


def test_capture_writes_a_scenario_with_the_rows_and_the_analyst_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    investigation_id = asyncio.run(investigated(url, tmp_path))
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.delenv("SOCBOT_CONFIG")
    team = tmp_path / "team-pack"

    result = CliRunner().invoke(
        app,
        [
            "eval",
            "capture",
            investigation_id,
            "--pack",
            str(team),
            "--must",
            "91.92.240.17",
            "--severity",
            "medium-high",
            "--category",
            "identity",
        ],
    )
    assert result.exit_code == 0, result.output

    (scenario,) = load_pack(str(team))
    original = load_pack("core", "okta-password-spray")[0]
    assert scenario.truth.verdict == "benign"  # the analyst's correction
    assert scenario.truth.severity == ("medium", "high")
    assert scenario.truth.values == ["91.92.240.17"]
    assert scenario.alert == original.alert and not scenario.synthetic
    (table,) = scenario.tables
    assert table.name == "eval.okta.system_log"
    rows = [json.loads(line) for line in table.files[0].read_text().splitlines()]
    assert len(rows) == 3 and {r["outcome"] for r in rows} == {"FAILURE"}
    assert set(rows[0]) == {"event_time", "actor", "client_ip", "outcome"}

    again = CliRunner().invoke(app, ["eval", "capture", investigation_id, "--pack", str(team)])
    assert again.exit_code == 2 and "exists" in again.output


def test_capture_keeps_every_row_the_model_saw_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model saw 500 characters of 42 rows; the trace kept the result whole (up to
    64 KiB), so the scenario has all 42 rows and no query counts as cut."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    every_row = "SELECT event_time, actor, client_ip, outcome FROM `{table}` ORDER BY event_time"
    sql = every_row + " LIMIT 100"
    investigation_id = asyncio.run(
        investigated(url, tmp_path, sql, limits={"tool_result_chars": 500})
    )
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.delenv("SOCBOT_CONFIG")
    team = tmp_path / "team-pack"
    args = ["eval", "capture", investigation_id, "--pack", str(team), "--verdict", "benign"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (scenario,) = load_pack(str(team))
    (table,) = scenario.tables
    (data,) = table.files
    rows = [json.loads(line) for line in data.read_text().splitlines()]
    original = load_pack("core", "okta-password-spray")[0].folder / "logs" / "system_log.jsonl"
    assert len(rows) == len(original.read_text().splitlines()) == 42
    assert "cut short" not in result.output


def test_capture_needs_a_verdict_and_an_alert(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.delenv("SOCBOT_CONFIG")
    result = CliRunner().invoke(app, ["eval", "capture", "nope", "--verdict", "benign"])
    assert result.exit_code == 2 and "no investigation 'nope'" in result.output


def test_salvage_keeps_the_whole_rows_of_a_cut_preview() -> None:
    whole = json.dumps({"columns": ["a", "b"], "rows": [[1, "x"], [2, "y"], [3, "zzzz"]]})
    cut = whole[: whole.index("zz")]
    value, complete = salvage(cut)
    assert not complete and value == {"columns": ["a", "b"], "rows": [[1, "x"], [2, "y"]]}
    assert salvage(whole) == (json.loads(whole), True)
