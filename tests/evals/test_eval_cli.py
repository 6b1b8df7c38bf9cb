"""``socbot eval`` as people use it: list, record a run, replay it without a model,
resume a run stopped by --max-cost, compare two runs, the HTML report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.eval.run import run_eval
from cli.main import app
from config.settings import Settings
from evals.results import RunFolder
from evals.scenario import Scenario, load_pack
from store.eval_reports import RunMeta
from tests.fakes.eval_model import KINDS, Answer, eval_model

ONLY = "aws-*,okta-password-spray,otrf-lsass*,edr-defender*"
SUMMARY_KEYS = {
    "scenarios",
    "verdict_accuracy",
    "tp_recall",
    "fp_rejection",
    "pass_rate",
    "cost_usd",
    "latency_p50_s",
    "latency_p95_s",
}


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOCBOT_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}")
    monkeypatch.delenv("SOCBOT_CONFIG")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def answers(pack: list[Scenario]) -> dict[str, Answer]:
    return {s.id: Answer(KINDS[i % len(KINDS)]) for i, s in enumerate(pack)}


async def recorded_run(tmp_path: Path, pack: list[Scenario], **kw: Any) -> RunFolder:
    folder = RunFolder(tmp_path / "live")
    folder.write_meta(RunMeta(pack="core", model="scripted", started="now"))
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'live.db'}")
    model = eval_model(pack, answers(pack))
    await run_eval(settings, [(s, 0) for s in pack], folder, backend=model, concurrency=3, **kw)
    return folder


def replay(env: Path, out: str) -> list[str]:
    """``socbot eval run`` on ONLY, answered from the recording in ``env/rec``."""
    return ["eval", "run", "--pack", "core", "--only", ONLY, "--replay", str(env / "rec"),
            "--out", str(env / out)]  # fmt: skip


def scores(report: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What replay must reproduce: every gate and verdict of every attempt."""
    return [
        (
            r["id"],
            r["given_verdict"],
            r["given_severity"],
            r["passed"],
            r["recall"],
            json.dumps(r["gates"], sort_keys=True),
            r["calls"],
            r["tokens"],
            r["cost_usd"],
        )
        for r in report["results"]
    ]


def test_list_json_shows_each_scenario(runner: CliRunner, env: Path) -> None:
    result = runner.invoke(app, ["eval", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == len(load_pack(None)) >= 30
    assert {"id", "category", "expected_verdict", "origin", "licence", "synthetic"} <= set(rows[0])
    pack = {s.id: s for s in load_pack(None)}
    for row in rows:
        s = pack[row["id"]]
        assert row["accepted_verdicts"] == s.truth.verdicts and row["genuine"] is s.genuine
        assert row["category"] == s.category and row["expected_verdict"] == s.truth.verdicts[0]


def test_the_alert_only_baseline_and_the_guess_sit_beside_the_run(
    runner: CliRunner, env: Path
) -> None:
    pack = load_pack("core", ONLY)
    live = asyncio.run(recorded_run(env, pack, record=env / "rec"))
    settings = Settings(database_url=f"sqlite+aiosqlite:///{env / 'live.db'}")
    model = eval_model(pack, answers(pack))
    work = [(s, 0) for s in pack]
    plain = live.baseline()
    rec = env / "rec" / "alert_only"
    asyncio.run(run_eval(settings, work, plain, backend=model, record=rec, alert_only=True))
    assert model.requests_for("planner") == model.requests_for("step") == []  # no plan, no tool
    assert len(model.requests_for("concluder")) >= len(pack)  # and the review (rewrites)
    for attempt in plain.attempts():
        assert attempt.evidence == {} and attempt.status == "concluded", attempt

    result = runner.invoke(app, [*replay(env, "replayed"), "--alert-only", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["summary"]
    assert summary["alert_only"]["attempts"] == len(pack)
    assert summary["guessability"]["attempts"] == len(pack)
    on_disk = json.loads((env / "replayed" / "report.json").read_text())["summary"]
    assert on_disk["alert_only"] == summary["alert_only"]
    compared = runner.invoke(app, ["eval", "compare", str(live.path), str(env / "replayed")])
    assert compared.exit_code == 0 and "keyword guess" in compared.stdout, compared.output
    assert "alert only" in compared.stdout


def test_replay_reproduces_the_recorded_run_exactly(runner: CliRunner, env: Path) -> None:
    pack = load_pack("core", ONLY)
    live = asyncio.run(recorded_run(env, pack, record=env / "rec"))
    from evals.report import report

    expected = report(pack, live.attempts())

    html_file = str(env / "report.html")
    result = runner.invoke(app, [*replay(env, "replayed"), "--json", "--html", html_file])
    assert result.exit_code == 0, result.output
    replayed = json.loads(result.stdout)
    assert SUMMARY_KEYS <= set(replayed["summary"])
    assert scores(replayed) == scores(expected)
    for name in ("verdict_accuracy", "tp_recall", "fp_rejection", "pass_rate", "cost_usd"):
        assert replayed["summary"][name] == expected["summary"][name]
    html = (env / "report.html").read_text()
    assert "<svg" in html and "otrf-lsass-minidump-comsvcs" in html
    assert "http://" not in html.replace("http://www.w3.org", "") and "src=" not in html

    # the same two runs compared: no difference, nothing regressed
    same = runner.invoke(app, ["eval", "compare", str(live.path), str(env / "replayed"), "--json"])
    assert same.exit_code == 0, same.output
    compared = json.loads(same.stdout)
    assert compared["accuracy_diff"] == 0 and compared["regressions"] == []


def test_max_cost_stops_and_the_next_run_resumes(runner: CliRunner, env: Path) -> None:
    pack = load_pack("core", ONLY)
    asyncio.run(recorded_run(env, pack, record=env / "rec"))
    args = [*replay(env, "r"), "--concurrency", "1"]

    stopped = runner.invoke(app, [*args, "--max-cost", "0.000001"])
    assert stopped.exit_code == 3, stopped.output
    assert len(RunFolder(env / "r").attempts()) == 1

    other = runner.invoke(app, [*args, "--model", "gemini-2.5-pro"])  # not the same run
    assert other.exit_code == 2 and "use --fresh or another --out" in other.output

    resumed = runner.invoke(app, [*args, "--json"])
    assert resumed.exit_code == 0, resumed.output
    assert "resuming" in resumed.stderr
    attempts = RunFolder(env / "r").attempts()
    assert sorted(a.scenario for a in attempts) == sorted(s.id for s in pack)
    assert json.loads(resumed.stdout)["summary"]["scenarios"] == len(pack)


def test_compare_flags_a_run_that_got_worse(runner: CliRunner, env: Path) -> None:
    pack = load_pack("core", ONLY)
    good = RunFolder(env / "good")
    bad = RunFolder(env / "bad")
    settings = Settings(database_url=f"sqlite+aiosqlite:///{env / 'c.db'}")
    work = [(s, 0) for s in pack]
    right = {s.id: Answer("right") for s in pack}
    flipped = {s.id: Answer("flip") for s in pack}
    for folder, script in ((good, right), (bad, flipped)):
        folder.write_meta(RunMeta(pack="core", model="scripted", started="now"))
        asyncio.run(
            run_eval(settings, work, folder, backend=eval_model(pack, script), concurrency=3)
        )

    result = runner.invoke(app, ["eval", "compare", str(good.path), str(bad.path), "--json"])
    assert result.exit_code == 1, result.output
    compared = json.loads(result.stdout)
    assert compared["accuracy_diff"] == -1.0
    assert compared["worse"] and sorted(compared["regressions"]) == sorted(s.id for s in pack)


def test_repeats_report_pass_hat_k(runner: CliRunner, env: Path) -> None:
    only = "okta-password-spray,edr-defender*"
    pack = load_pack("core", only)
    folder = RunFolder(env / "live")
    settings = Settings(database_url=f"sqlite+aiosqlite:///{env / 'live.db'}")
    model = eval_model(pack, {s.id: Answer("right") for s in pack})
    work = [(s, k) for s in pack for k in range(2)]
    asyncio.run(run_eval(settings, work, folder, backend=model, record=env / "rec"))

    args = ["eval", "run", "--pack", "core", "--only", only, "--replay", str(env / "rec")]
    args += ["--repeat", "2"]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert len(report["results"]) == 4 and {r["repeat"] for r in report["results"]} == {0, 1}
    summary = report["summary"]
    assert summary["repeats"] == 2 and summary["pass_hat_k"] == summary["pass_rate"] == 1.0
    assert summary["intervals"]["verdict_accuracy"] == [1.0, 1.0]
