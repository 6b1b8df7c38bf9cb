"""The whole bundled pack through the real engine on a scripted model: the report's
figures are exactly what the script implies.

Real engine, gateway, review, DuckDB worker per scenario (each scenario's step counts
the rows of its own table) and SQLite; the model is ``tests.fakes.eval_model``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent.concluder import Conclusion
from cli.eval.run import run_eval
from config.settings import Settings
from evals.report import report
from evals.results import RunFolder
from evals.scenario import PACKS_DIR, Scenario, load_pack
from tests.fakes.eval_model import KINDS, Answer, eval_model
from tests.fakes.model import text_response

REJECTED = {"false_positive", "benign"}
TECHNIQUES_IN_CONCLUSION = "techniques" in Conclusion.model_fields


@pytest.fixture(scope="module")
def pack() -> list[Scenario]:
    return load_pack(None)


def settings(tmp_path: Path) -> Settings:
    return Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'eval.db'}")


def given_verdict(s: Scenario, answer: Answer) -> str:
    if answer.verdict:
        return answer.verdict
    if answer.kind == "flip":
        return "false_positive" if s.truth.attack else "true_positive"
    if answer.kind == "inconclusive":
        return "inconclusive"
    return "true_positive" if s.truth.attack else s.truth.verdict


def right(s: Scenario, given: str) -> bool:
    """By hand: an accepted verdict (the script never names a compromised entity)."""
    no_impact = given == "true_positive" and "true_positive_no_impact" in s.truth.verdicts
    return given in s.truth.verdicts or no_impact


def makeable(s: Scenario) -> bool:
    """Whether a right answer can make one of the scenario's forbidden claims."""
    return any(c.verdict is None and c.severity is None for c in s.truth.forbidden)


def expected_figures(pack: list[Scenario], answers: dict[str, Answer]) -> dict[str, Any]:
    """The figures the script implies, counted by hand (no scorer code)."""

    def figures(group: list[Scenario]) -> dict[str, Any]:
        given = {s.id: given_verdict(s, answers[s.id]) for s in group}
        hits = [right(s, given[s.id]) for s in group]
        attacks = [s for s in group if s.truth.attack]
        others = [s for s in group if not s.truth.attack]
        passed = [
            (
                answers[s.id].kind == "right"
                or (answers[s.id].kind == "forbidden" and not makeable(s))
            )
            and right(s, given[s.id])
            and (not s.truth.techniques or TECHNIQUES_IN_CONCLUSION)
            for s in group
        ]

        def share(hits: list[bool]) -> float | None:
            return round(sum(hits) / len(hits), 4) if hits else None

        return {
            "verdict_accuracy": share(hits),
            "tp_recall": share([given[s.id] == "true_positive" for s in attacks]),
            "fp_rejection": share([given[s.id] in REJECTED for s in others]),
            "pass_rate": share(passed),
        }

    categories = sorted({s.category for s in pack})
    return {
        **figures(pack),
        "per_category": {c: figures([s for s in pack if s.category == c]) for c in categories},
    }


async def run_pack(
    tmp_path: Path, pack: list[Scenario], answers: dict[str, Answer]
) -> dict[str, Any]:
    folder = RunFolder(tmp_path / "run")
    model = eval_model(pack, answers)
    stop = await run_eval(
        settings(tmp_path), [(s, 0) for s in pack], folder, backend=model, concurrency=4
    )
    assert stop.reason is None
    # each step's query ran on its own scenario's table and counted its rows
    counted = [  # the first call of each step: the count
        next(
            p.function_response.response
            for c in r.contents
            for p in c.parts or []
            if p.function_response and p.function_response.response
        )
        for r in model.requests_for("step")
        if any(p.function_response for c in r.contents for p in c.parts or [])
    ]
    assert len(counted) == len(pack)
    counts = [json.loads(c["output"].splitlines()[1])["rows"][0][0] for c in counted]
    assert all(n > 0 for n in counts) and len(set(counts)) > 10, counts
    return report(pack, folder.attempts())


async def test_scripted_pack_scores_exactly_what_the_script_implies(
    tmp_path: Path, pack: list[Scenario]
) -> None:
    answers = {s.id: Answer(KINDS[i % len(KINDS)]) for i, s in enumerate(pack)}
    result = await run_pack(tmp_path, pack, answers)

    summary = result["summary"]
    expected = expected_figures(pack, answers)
    assert summary["scenarios"] == len(pack) == len(result["results"])
    for name in ("verdict_accuracy", "tp_recall", "fp_rejection", "pass_rate"):
        assert summary[name] == expected[name], name
    for category, figures in expected["per_category"].items():
        got = summary["per_category"][category]
        assert {k: got[k] for k in figures} == figures, category
    # every gate fails exactly where its kind of wrong answer was scripted
    by_id = {s.id: s for s in pack}
    for row in result["results"]:
        kind, gates = answers[row["id"]].kind, row["gates"]
        scenario = by_id[row["id"]]
        named = {
            c.verdict
            for c in scenario.truth.forbidden
            if c.model_dump(exclude_none=True).keys() == {"verdict"}
        }
        tripped = (kind == "forbidden" and makeable(scenario)) or row["given_verdict"] in named
        assert row["status"] == "concluded", row
        assert gates["severity"] is (kind != "severity"), row["id"]
        assert gates["recall"] is (kind != "missing"), row["id"]
        assert gates["forbidden"] is not tripped, row["id"]
        assert gates["verified"] is True and gates["length"] is True, row["id"]
        assert row["investigation_id"] and row["calls"] >= 4 and row["cost_usd"] > 0
    assert summary["model_calls"] == sum(r["calls"] for r in result["results"])
    assert summary["latency_p50_s"] <= summary["latency_p95_s"]
    assert summary["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in result["results"]))


async def test_always_true_positive_model_scores_the_pack_share_of_attacks(
    tmp_path: Path,
) -> None:
    pack = load_pack("core")  # the mechanism; the default pack's whole run is the test above
    answers = {s.id: Answer("right", verdict="true_positive") for s in pack}
    summary = (await run_pack(tmp_path, pack, answers))["summary"]

    attacks = sum(s.truth.attack for s in pack)
    assert summary["verdict_accuracy"] == round(attacks / len(pack), 4)
    assert summary["tp_recall"] == 1.0
    assert summary["fp_rejection"] == 0.0


async def test_a_crash_fails_its_scenario_not_the_run(tmp_path: Path) -> None:
    team = tmp_path / "team"
    for name in ("aws-portprobe-public-web", "dns-tunnelling-txt"):
        shutil.copytree(PACKS_DIR / "core" / name, team / name)
    chosen = load_pack(str(team))
    model = eval_model(chosen, {s.id: Answer("right") for s in chosen})
    crash = model.responders["planner"]

    def planner(request: Any) -> Any:
        if "exfil-cdn" in "".join(p.text or "" for c in request.contents for p in c.parts or []):
            raise RuntimeError("a bug")
        return crash(request)

    model.responders["planner"] = planner
    folder = RunFolder(tmp_path / "run")
    await run_eval(settings(tmp_path), [(s, 0) for s in chosen], folder, backend=model)

    by_id = {a.scenario: a for a in folder.attempts()}
    assert by_id["aws-portprobe-public-web"].status == "concluded"
    assert by_id["dns-tunnelling-txt"].status == "failed"
    assert by_id["dns-tunnelling-txt"].error == "socbot crashed (RuntimeError)"


async def test_the_judge_adds_a_score_beside_the_gates_and_fails_open(tmp_path: Path) -> None:
    chosen = load_pack("core", "okta-password-spray,aws-portprobe-public-web")
    answers = {"okta-password-spray": Answer("right"), "aws-portprobe-public-web": Answer("flip")}
    model = eval_model(chosen, answers)
    folder = RunFolder(tmp_path / "judged")
    await run_eval(settings(tmp_path), [(s, 0) for s in chosen], folder, backend=model, judge=True)
    result = report(chosen, folder.attempts())

    (judged,) = model.requests_for("eval_judge")[:1]
    assert judged.model == Settings().evals.judge_model
    assert "<<<DATA-" in "".join(p.text or "" for p in judged.contents[0].parts or [])
    rows = {r["id"]: r for r in result["results"]}
    assert rows["okta-password-spray"]["judge_score"] == 0.8
    assert rows["okta-password-spray"]["passed"] is True  # the gates decide, not the judge
    assert rows["aws-portprobe-public-web"]["passed"] is False
    assert result["summary"]["judge_score"] == 0.8 and result["summary"]["judge_cost_usd"] > 0

    model.responders["eval_judge"] = lambda _r: text_response("not json")
    broken = RunFolder(tmp_path / "broken")
    await run_eval(settings(tmp_path), [(chosen[1], 0)], broken, backend=model, judge=True)
    (attempt,) = broken.attempts()
    assert attempt.status == "concluded" and attempt.judge_score is None
    assert attempt.judge_notes.startswith("judge failed")
