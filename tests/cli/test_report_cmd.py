"""``socbot report``: the 200 seeded cases (tests/core/quality_seed.py) through the command,
as JSON and as text; ``--since`` refuses what it cannot read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from store.db.engine import Database
from tests.core.quality_seed import seeded
from tests.store.cases.quality_rows import store


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'socbot.db'}"
    monkeypatch.setenv("SOCBOT_DATABASE_URL", url)
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)

    async def seed() -> None:
        db = Database(url)
        await db.create()
        try:
            await store(db, seeded())
        finally:
            await db.close()

    asyncio.run(seed())
    return url


def test_the_json_report_holds_the_seeds_figures(env: str) -> None:
    result = CliRunner().invoke(app, ["report", "--since", "9999d", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.stdout)
    assert r["schema"] == "socbot.report/2"
    assert r["totals"] == {
        "cases": 200,
        "decided": 175,
        "excluded": 10,
        "auto_resolved": 20,
        "audited": 15,
        "disagreements": 33,
    }
    assert r["cases"]["by_status"] == {"open": 10, "resolved": 190}
    assert r["cases"]["by_disposition"] == {
        "benign": 47,
        "duplicate": 10,
        "false_positive": 68,
        "true_positive": 65,
    }
    assert (r["agreement"]["agreement"]["hits"], r["agreement"]["agreement"]["n"]) == (142, 175)
    assert (r["agreement"]["tp_recall"]["hits"], r["agreement"]["tp_recall"]["n"]) == (50, 68)
    assert r["auto_resolution"]["auto-fp"]["error_rate"]["hits"] == 3
    assert r["metrics"]["total_tasks"] == 200 and r["metrics"]["skills_loaded"] == 125
    assert r["metrics"]["first_try_success_rate"] == {
        "with_skills": round(110 / 125, 4),
        "without_skills": round(32 / 50, 4),
        "comparison": "observational",
    }
    assert r["cost"]["tokens"] == 125 * 800 + 75 * 1200
    assert len(r["disagreements"]) == 33
    assert set(r["by"]) == {"source", "format", "model", "rule", "severity", "week"}
    # the stored times: case k acknowledged after k + 1 minutes, resolved after k + 1 hours
    assert r["time_to_acknowledge_s"]["p50"] is not None


def test_the_text_report_says_the_same(env: str) -> None:
    result = CliRunner().invoke(app, ["report", "--since", "9999d"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "agreement       81.1% (142/175; 95 %" in out
    assert "field TP recall 73.5% (50/68;" in out
    assert "auto-resolution auto-fp: 20 closed, 15 audited, error 20.0% (3/15;" in out
    assert "playbook (observational comparison)" in out


@pytest.mark.parametrize("since", ["30", "0d", "3m", "-1d", "12345d"])
def test_a_since_it_cannot_read_is_refused(env: str, since: str) -> None:
    result = CliRunner().invoke(app, ["report", "--since", since])
    assert result.exit_code == 2
    assert "--since must be" in result.output


def test_an_empty_period_reports_no_rates(env: str) -> None:
    result = CliRunner().invoke(app, ["report", "--since", "1h", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.stdout)
    assert r["totals"]["cases"] == 0 and r["agreement"]["agreement"]["rate"] is None
    assert r["time_to_resolve_s"] == {"p50": None, "p90": None}
