"""A scripted model for whole eval packs: one planned investigation per scenario whose
conclusion the test chooses per scenario (``Answer``), for figures known in advance.

Each investigation: a one-step plan; the step counts the rows of the scenario's first
table (or runs ``step_sql`` on it: a real query through the scenario's own DuckDB
catalogue) and, in packs whose values count only when cited, queries each must-establish
value where the scenario's data holds it (``s1#2``...); the reflection says achieved;
the concluder answers with the scripted conclusion of the scenario being run
(``evals.recording.ATTEMPT`` names it, as the runner sets it); the critic passes.
``Answer.kind`` is how the answer is right or wrong:

- ``right``: the label's verdict, lowest severity of the band, every must-establish value
  (in a finding citing the query that returned it, where the pack asks for citations);
- ``flip``: the opposite verdict (an attack called a false positive and vice versa);
- ``severity``: right verdict, a severity outside the band;
- ``missing``: right verdict and severity, no must-establish value;
- ``forbidden``: right, but also the first forbidden claim a right answer can make (a
  technique or a compromised entity; scenarios that list one);
- ``inconclusive``: verdict inconclusive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
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
CRITIQUE = {
    "score": 0.9,
    "criteria": {"answers_objective": 0.9, "grounded": 0.9, "consistent": 0.9, "actionable": 0.9},
    "issues": [],
}


@dataclass(frozen=True)
class Answer:
    kind: str
    verdict: str | None = None  # overrides the verdict the kind implies (always-TP model)


def lookups(scenario: Scenario) -> list[tuple[str, str]]:
    """(value, SQL) for each must-establish value a query can find: the first column of
    the scenario's tables whose text holds it (read here with DuckDB), for packs whose values
    count only when cited. Empty for packs that take values anywhere (``core``)."""
    if not scenario.limits.cite_values:
        return []
    key = (scenario.id, tuple(scenario.truth.values))
    key += tuple((t.name, *map(str, t.files)) for t in scenario.tables)
    if key not in _FOUND:  # read once: a model's latency costs the harness no CPU
        _FOUND[key] = _lookups(scenario)
    return _FOUND[key]


_FOUND: dict[tuple[Any, ...], list[tuple[str, str]]] = {}


def _lookups(scenario: Scenario) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for value in scenario.truth.values:
        for table in scenario.tables:
            column = _column_holding(table.files, value)
            if column is not None:
                literal = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
                where = f"STRPOS(LOWER(CAST(`{column}` AS STRING)), LOWER({literal})) > 0"
                found.append((value, f"SELECT * FROM `{table.name}` WHERE {where} LIMIT 5"))
                break
    return found


def _column_holding(files: list[Path], value: str) -> str | None:
    reader = "read_parquet" if files[0].suffix == ".parquet" else "read_json_auto"
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    con = duckdb.connect()
    try:
        rel = con.sql(f"SELECT * FROM {reader}([{listed}])")
        for column in rel.columns:
            hit = con.execute(
                f'SELECT 1 FROM rel WHERE strpos(lower(CAST("{column}" AS VARCHAR)), lower(?)) > 0'
                " LIMIT 1",
                [value],
            ).fetchone()
            if hit:
                return str(column)
    finally:
        con.close()
    return None


def _forbidden_claim(truth: Any) -> dict[str, Any] | None:
    """The first forbidden claim a right answer could still make (no verdict or severity)."""
    for claim in truth.forbidden:
        if claim.verdict is None and claim.severity is None:
            return dict(claim.model_dump(exclude_none=True))
    return None


def as_seen(request: ModelRequest, ref: str) -> str | None:
    """The literal of the model's own lookup ``ref`` as the history it was sent shows it
    (a pseudonym under ``[privacy]``), or None if that is not there."""
    text = json.dumps([c.model_dump(mode="json") for c in request.contents])
    text = text.encode().decode("unicode_escape", errors="ignore")
    found = re.search(re.escape(ref) + r" query_logs\(sql=.*?LOWER\('([^']*)'\)", text)
    return found.group(1) if found else None


def conclusion_for(
    scenario: Scenario, answer: Answer, seen: Callable[[str], str | None] | None = None
) -> dict[str, Any]:
    truth = scenario.truth
    attack = truth.attack
    right = "true_positive" if truth.verdict == "true_positive_no_impact" else truth.verdict
    verdict = {
        "flip": "false_positive" if attack else "true_positive",
        "inconclusive": "inconclusive",
    }.get(answer.kind, right)
    verdict = answer.verdict or verdict
    low, high = truth.severity
    severity = low
    if answer.kind == "severity":
        severity = "critical" if SEVERITIES.index(high) < SEVERITIES.index("critical") else "info"
    values = [] if answer.kind == "missing" else truth.values
    summary = f"Scripted answer ({answer.kind}) for {scenario.id}."
    if values and not scenario.limits.cite_values:
        summary += " Established: " + ", ".join(values) + "."
    findings = [
        {
            "finding": "the scenario's table holds rows",
            "evidence": "query result",
            "evidence_refs": ["s1#1"],
        }
    ]
    cited = {v for v, _sql in lookups(scenario)} if values else set()
    for n, (value, _sql) in enumerate(lookups(scenario) if values else [], start=2):
        written = (seen(f"s1#{n}") if seen else None) or value
        findings.append(
            {
                "finding": f"the logs hold {written}",
                "evidence": written,
                "evidence_refs": [f"s1#{n}"],
            }
        )
    assert cited >= set(values) or not scenario.limits.cite_values, (scenario.id, values)
    techniques = list(truth.techniques)
    compromised: list[str] = []
    claim = _forbidden_claim(truth) if answer.kind == "forbidden" else None
    if claim is not None:
        techniques += [claim["technique"]] if "technique" in claim else []
        compromised += [claim["compromised"]] if "compromised" in claim else []
    return {
        "verdict": verdict,
        "severity": severity,
        "confidence": "medium",
        "summary": summary,
        "key_findings": findings,
        "uncertainties": [],
        "recommendations": ["none"],
        "techniques": [{"id": t, "name": t, "tactic": "scripted"} for t in techniques],
        "compromised": compromised,
    }


COUNT_SQL = "SELECT COUNT(*) AS n FROM `{table}`"


def _step(request: ModelRequest, sql: str, scenario: Scenario) -> types.GenerateContentResponse:
    answered = any(p.function_response for c in request.contents for p in c.parts or [])
    if answered:
        return text_response("finding-s1: the scenario's table answered the count")
    table = scenario.tables[0].name
    assert table in request.system, "the scenario's table is not in the step's instructions"
    calls = [("query_logs", {"sql": sql.format(table=table)})]
    calls += [("query_logs", {"sql": q}) for _value, q in lookups(scenario)]
    return call_response(*calls)


def eval_model(
    scenarios: list[Scenario],
    answers: Mapping[str, Answer],
    *,
    delay: float = 0.0,
    step_sql: str = COUNT_SQL,
    copies: bool = False,
) -> ScriptedModel:
    """A ``ScriptedModel`` serving every investigation of the pack; each step runs
    ``step_sql`` on the first table its instructions name (``{table}``). ``copies``: the
    conclusion writes each value as the model saw it in its own lookups (``as_seen``)."""
    by_id = {s.id: s for s in scenarios}
    for scenario in scenarios:
        lookups(scenario)  # before any call: the scripted answers cost no time mid-run

    def conclude(request: ModelRequest) -> types.GenerateContentResponse:
        scenario_id = ATTEMPT.get().rsplit("__r", 1)[0]
        seen = (lambda ref: as_seen(request, ref)) if copies else None
        return json_response(conclusion_for(by_id[scenario_id], answers[scenario_id], seen))

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
        "step": lambda r: _step(r, step_sql, by_id[ATTEMPT.get().rsplit("__r", 1)[0]]),
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
