"""The deterministic gates of one attempt against its scenario's ground truth.

Gates (docs/eval.md, "Scoring"): ``verdict`` (the hard gate), ``severity`` in the band,
``recall`` of the must-establish values at least ``min_recall``, ``technique`` (a claimed
ATT&CK id matches, when the truth lists any), ``forbidden`` (no forbidden claim made).
A gate that does not apply is ``None``; ``passed`` is every applicable gate held. The
share of findings the review verified is reported, not gated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evals.normalise import found, normalise
from evals.results import Attempt
from evals.scenario import SEVERITIES, Scenario
from evals.techniques import claimed_techniques, technique_match
from store.eval_reports import Gates, Score


def conclusion_text(conclusion: Mapping[str, Any]) -> str:
    """The summary and findings (finding and evidence), normalised once."""
    parts = [str(conclusion.get("summary") or "")]
    for item in conclusion.get("key_findings") or []:
        if isinstance(item, Mapping):
            parts += [str(item.get("finding") or ""), str(item.get("evidence") or "")]
    return normalise("\n".join(parts))


def score(scenario: Scenario, attempt: Attempt) -> Score:
    """``attempt`` against ``scenario.truth``; an attempt without a conclusion fails."""
    truth = scenario.truth
    conclusion = attempt.conclusion or {}
    given = conclusion.get("verdict") if attempt.conclusion else None
    severity = conclusion.get("severity") if attempt.conclusion else None
    text = conclusion_text(conclusion)
    hits, missing = found(text, truth.values)
    recall = len(hits) / len(truth.values) if truth.values else None
    claimed = claimed_techniques(conclusion)
    forbidden_made: list[str] = []
    gates = Gates(
        verdict=truth.accepts(given, []),
        severity=_in_band(severity, truth.severity) if attempt.conclusion else False,
        recall=None if recall is None else recall >= scenario.limits.min_recall,
        technique=technique_match(truth.techniques, claimed) if truth.techniques else None,
        forbidden=not forbidden_made,
    )
    verified = None
    if attempt.review_findings:
        verified = (attempt.review_verified or 0) / attempt.review_findings
    return Score(
        id=scenario.id,
        repeat=attempt.repeat,
        category=scenario.category,
        expected_verdict=truth.verdict,
        given_verdict=given,
        given_severity=severity,
        gates=gates,
        passed=all(g is not False for g in gates.model_dump().values()),
        recall=recall,
        missing=missing,
        techniques_claimed=claimed,
        forbidden_made=forbidden_made,
        verified_share=verified,
        status=attempt.status,
        error=attempt.error,
        cost_usd=attempt.cost_usd,
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
