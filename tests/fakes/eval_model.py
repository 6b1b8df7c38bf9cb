"""A scripted model for whole eval packs: one planned investigation per scenario whose
conclusion the test chooses per scenario (``Answer``), for figures known in advance.

Each investigation: a one-step plan; the step counts the rows of the first scenario
table its instructions name, or runs ``step_sql`` on it (a real query through the
scenario's own DuckDB catalogue);
the reflection says achieved; the concluder answers with the scripted conclusion of
the scenario being run (``evals.recording.ATTEMPT`` names it, as the runner sets it);
the critic passes. ``Answer.kind`` is how the answer is right or wrong:

- ``right``: expected verdict, lowest severity of the band, every must-establish value;
- ``flip``: the opposite verdict (an attack called a false positive and vice versa);
- ``severity``: right verdict, a severity outside the band;
- ``missing``: right verdict and severity, no must-establish value;
- ``forbidden``: right, but also a forbidden claim (scenarios that list one);
- ``inconclusive``: verdict inconclusive.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from google.genai import types

from evals.recording import ATTEMPT
from evals.scenario import SEVERITIES, Scenario
from tests.fakes.model import (
    ModelRequest,
    Responder,
    ScriptedModel,
    call_response,
    json_response,
    text_response,
)

GRADE = {
    "score": 0.8,
    "criteria": {"verdict_reasoning": 0.8, "evidence": 0.7, "completeness": 0.9, "actionable": 0.8},
    "notes": "scripted grade",
}
KINDS = ("right", "flip", "severity", "missing", "forbidden", "inconclusive")
TABLE = re.compile(r"\beval\.[a-z0-9_]+\.[a-z0-9_]+\b")
CRITIQUE = {
    "score": 0.9,
    "criteria": {"answers_objective": 0.9, "grounded": 0.9, "consistent": 0.9, "actionable": 0.9},
    "issues": [],
}


@dataclass(frozen=True)
class Answer:
    kind: str
    verdict: str | None = None  # overrides the verdict the kind implies (always-TP model)


def conclusion_for(scenario: Scenario, answer: Answer) -> dict[str, Any]:
    truth = scenario.truth
    attack = truth.verdict == "true_positive"
    verdict = {
        "flip": "false_positive" if attack else "true_positive",
        "inconclusive": "inconclusive",
    }.get(answer.kind, truth.verdict)
    verdict = answer.verdict or verdict
    low, high = truth.severity
    severity = low
    if answer.kind == "severity":
        severity = "critical" if SEVERITIES.index(high) < SEVERITIES.index("critical") else "info"
    values = [] if answer.kind == "missing" else truth.must_establish
    summary = f"Scripted answer ({answer.kind}) for {scenario.id}."
    if values:
        summary += " Established: " + ", ".join(values) + "."
    if answer.kind == "forbidden":
        summary += f" This was {truth.forbidden[0]}."
    return {
        "verdict": verdict,
        "severity": severity,
        "confidence": "medium",
        "summary": summary,
        "key_findings": [
            {
                "finding": "the scenario's table holds rows",
                "evidence": "query result",
                "evidence_refs": ["s1#1"],
            }
        ],
        "uncertainties": [],
        "recommendations": ["none"],
        "techniques": [{"id": t, "name": t, "tactic": "scripted"} for t in truth.techniques],
    }


COUNT_SQL = "SELECT COUNT(*) AS n FROM `{table}`"


def _step(request: ModelRequest, sql: str) -> types.GenerateContentResponse:
    answered = any(p.function_response for c in request.contents for p in c.parts or [])
    if answered:
        return text_response("finding-s1: the scenario's table answered the count")
    table = TABLE.search(request.system)  # the manual lists the scenario's tables
    assert table is not None, "no scenario table in the step's instructions"
    return call_response(("query_logs", {"sql": sql.format(table=table.group(0))}))


def eval_model(
    scenarios: list[Scenario],
    answers: Mapping[str, Answer],
    *,
    delay: float = 0.0,
    step_sql: str = COUNT_SQL,
) -> ScriptedModel:
    """A ``ScriptedModel`` serving every investigation of the pack; each step runs
    ``step_sql`` on the first table its instructions name (``{table}``)."""
    by_id = {s.id: s for s in scenarios}

    def conclude(_request: ModelRequest) -> types.GenerateContentResponse:
        scenario_id = ATTEMPT.get().rsplit("__r", 1)[0]
        return json_response(conclusion_for(by_id[scenario_id], answers[scenario_id]))

    plan = {
        "objective": "Decide whether the alert is an attack",
        "steps": [
            {
                "id": "s1",
                "description": "Count the table's rows",
                "tools": ["query_logs"],
                "expected": "a count",
                "depends_on": [],
            }
        ],
    }
    script: dict[str, Callable[[ModelRequest], Any] | Responder] = {
        "planner": lambda _r: json_response(plan),
        "step": lambda r: _step(r, step_sql),
        "reflector": lambda _r: json_response(
            {"achieved": True, "insights": [], "plan_updates": []}
        ),
        "concluder": conclude,
        "concluder_speculative": conclude,
        "concluder_rewrite": conclude,
        "critic": lambda _r: json_response(CRITIQUE),
        "eval_judge": lambda _r: json_response(GRADE),
    }
    return ScriptedModel(script, delay=delay)
