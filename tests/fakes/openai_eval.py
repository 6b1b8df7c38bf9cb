"""The eval pack's scripted investigations (``tests/fakes/eval_model.py``) answered on
the wire by the OpenAI Chat Completions fake: the same plan, step, reflection,
conclusion per scenario and critique, read from and written as Chat Completions bodies."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from evals.recording import ATTEMPT
from evals.scenario import Scenario
from tests.fakes import openai_api as oa
from tests.fakes.eval_model import COUNT_SQL, CRITIQUE, Answer, conclusion_for

PLAN = {
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

TABLE = re.compile(r"\beval\.[a-z0-9_]+\.[a-z0-9_]+\b")  # a core scenario's table


def eval_script(scenarios: list[Scenario], answers: Mapping[str, Answer]) -> dict[str, Any]:
    """An ``OpenAIAPI`` script serving every investigation of the pack."""
    by_id = {s.id: s for s in scenarios}

    def conclude(_body: dict[str, Any]) -> dict[str, Any]:
        scenario_id = ATTEMPT.get().rsplit("__r", 1)[0]
        return oa.structured(conclusion_for(by_id[scenario_id], answers[scenario_id]))

    def step(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if any(m["role"] == "tool" for m in messages):
            return oa.text("finding-s1: the scenario's table answered the count")
        table = TABLE.search(json.dumps(messages[0]["content"]))
        assert table is not None, "no scenario table in the step's instructions"
        return oa.calls(("query_logs", {"sql": COUNT_SQL.format(table=table.group(0))}))

    return {
        "planner": lambda _b: oa.structured(PLAN),
        "step": step,
        "reflector": lambda _b: oa.structured(
            {"achieved": True, "insights": [], "plan_updates": []}
        ),
        "concluder": conclude,
        "concluder_speculative": conclude,
        "concluder_rewrite": conclude,
        "critic": lambda _b: oa.structured(CRITIQUE),
    }
