"""The deterministic gates of one attempt against its scenario's ground truth.

Gates (docs/eval.md, "Scoring"): ``verdict`` (an accepted verdict; the hard gate),
``severity`` in the band, ``recall`` (the must-establish values cited from the tool calls
that returned them, ``evals.established``), ``verified`` (the share of findings the
review verified), ``length`` (the answer's length cap), ``technique`` (precision:
``evals.techniques``) and ``forbidden`` (structured claims: ``evals.claims``). A gate
that does not apply is ``None``; ``passed`` is every applicable gate held. The limits
are the scenario's (``Scenario.limits``: the pack's ``[gates]`` and the truth's own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evals.claims import compromised, made
from evals.established import alert_text, answer_chars, answer_parts, cited, verified_share
from evals.normalise import found, normalise
from evals.results import Attempt
from evals.scenario import SEVERITIES, Scenario
from evals.techniques import claimed_techniques, technique_gate
from store.eval_reports import Gates, Score


def conclusion_text(conclusion: Mapping[str, Any]) -> str:
    """The summary and findings (finding and evidence), normalised once."""
    return normalise("\n".join(answer_parts(conclusion)))


def score(scenario: Scenario, attempt: Attempt) -> Score:
    """``attempt`` against ``scenario.truth``; an attempt without a conclusion fails."""
    truth, limits = scenario.truth, scenario.limits
    concluded = attempt.conclusion is not None
    conclusion = attempt.conclusion or {}
    given, severity = conclusion.get("verdict"), conclusion.get("severity")
    if limits.cite_values:
        hits, missing = cited(conclusion, attempt.evidence, truth.values)
    else:
        hits, missing = found(conclusion_text(conclusion), truth.values)
    recall = len(hits) / len(truth.values) if truth.values else None
    claimed = claimed_techniques(conclusion)
    technique, precision = technique_gate(
        truth.techniques, truth.techniques_accept, claimed, limits.min_technique_precision
    )
    verified = verified_share(attempt, alert_text(scenario.alert))
    chars = answer_chars(conclusion) if concluded else None
    forbidden_made = made(truth.forbidden, conclusion)
    gates = Gates(
        verdict=concluded and truth.accepts(given, compromised(conclusion)),
        severity=_in_band(severity, truth.severity),
        recall=None if recall is None else concluded and recall >= limits.min_recall,
        verified=None if not limits.min_verified else (verified or 0.0) >= limits.min_verified,
        length=chars is not None and chars <= limits.max_answer_chars,
        technique=technique,
        forbidden=not forbidden_made,
    )
    return Score(
        id=scenario.id,
        repeat=attempt.repeat,
        category=scenario.category,
        expected_verdict=truth.verdict,
        accepted_verdicts=list(truth.verdicts),
        attack=truth.attack,
        given_verdict=given,
        given_severity=severity,
        gates=gates,
        passed=all(g is not False for g in gates.model_dump().values()),
        recall=recall,
        missing=missing,
        techniques_claimed=claimed,
        technique_precision=precision,
        forbidden_made=forbidden_made,
        verified_share=verified,
        answer_chars=chars,
        status=attempt.status,
        error=attempt.error,
        cost_usd=attempt.cost_usd,
        unpriced_calls=attempt.unpriced_calls,
        latency_s=attempt.latency_s,
        calls=attempt.calls,
        tokens=attempt.tokens,
        investigation_id=attempt.investigation_id,
        judge_score=attempt.judge_score,
        judge_cost_usd=attempt.judge_cost_usd,
    )


def _in_band(severity: Any, band: tuple[str, str]) -> bool:
    if severity not in SEVERITIES:
        return False
    low, high = (SEVERITIES.index(b) for b in band)
    return low <= SEVERITIES.index(severity) <= high
