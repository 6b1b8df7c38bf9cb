"""Figures over many scored attempts: accuracy, recall and rejection apart, cost, latency.

``summary`` is the ``--json`` ``summary`` object (docs/eval.md, "JSON"): rates are
fractions 0-1 (``None`` when nothing counts towards them), times in seconds. With
repeats, ``pass_hat_k`` is the share of scenarios that passed every one of their k
attempts, and the intervals are a percentile bootstrap over scenarios (fixed seed, so
the same attempts always give the same figures).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from store.eval_reports import Score
from store.schema import InvestigationStatus

ESCALATED = "true_positive"
REJECTED = frozenset({"false_positive", "benign"})
BOOTSTRAP_ROUNDS = 2000
SEED = 19


def rate(hits: Sequence[bool]) -> float | None:
    return sum(hits) / len(hits) if hits else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` (0-1) percentile by linear interpolation between closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def verdict_rates(scores: Sequence[Score]) -> dict[str, float | None]:
    """Accuracy, true-positive recall (attacks called attacks) and false-positive
    rejection (non-attacks not escalated: called false positive or benign)."""
    attacks = [s for s in scores if s.attack]
    others = [s for s in scores if not s.attack]
    return {
        "verdict_accuracy": rate([s.gates.verdict for s in scores]),
        "tp_recall": rate([s.given_verdict == ESCALATED for s in attacks]),
        "fp_rejection": rate([s.given_verdict in REJECTED for s in others]),
        "pass_rate": rate([s.passed for s in scores]),
        "severity_accuracy": rate([s.gates.severity is True for s in scores]),
    }


def by_scenario(scores: Sequence[Score]) -> dict[str, list[Score]]:
    grouped: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        grouped[s.id].append(s)
    return dict(grouped)


def bootstrap(
    groups: Sequence[Sequence[Score]], figure: Callable[[list[Score]], float | None]
) -> list[float] | None:
    """A 95 % percentile interval of ``figure`` resampling whole scenarios."""
    if len(groups) < 2:
        return None
    rng = random.Random(SEED)
    values: list[float] = []
    for _ in range(BOOTSTRAP_ROUNDS):
        sample = [s for _ in groups for s in groups[rng.randrange(len(groups))]]
        value = figure(sample)
        if value is not None:
            values.append(value)
    low, high = percentile(values, 0.025), percentile(values, 0.975)
    return None if low is None or high is None else [round(low, 4), round(high, 4)]


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def summary(scores: Sequence[Score]) -> dict[str, Any]:
    """The ``summary`` object of a run's report."""
    groups = by_scenario(scores)
    repeats = max((len(g) for g in groups.values()), default=0)
    latencies = [s.latency_s for s in scores]
    cost = sum(s.cost_usd for s in scores)
    out: dict[str, Any] = {
        "scenarios": len(groups),
        "attempts": len(scores),
        "repeats": repeats,
        **{k: _round(v) for k, v in verdict_rates(scores).items()},
        "cost_usd": round(cost, 6),
        "unpriced_calls": sum(s.unpriced_calls for s in scores),
        "cost_per_scenario_usd": round(cost / len(scores), 6) if scores else None,
        "latency_p50_s": _round(percentile(latencies, 0.5), 3),
        "latency_p95_s": _round(percentile(latencies, 0.95), 3),
        "model_calls": sum(s.calls for s in scores),
        "tokens": sum(s.tokens for s in scores),
        "failed_runs": sum(
            s.status not in (InvestigationStatus.CONCLUDED, InvestigationStatus.ANSWERED)
            for s in scores
        ),
        "judge_cost_usd": round(sum(s.judge_cost_usd for s in scores), 6),
        "judge_score": _round(_mean([s.judge_score for s in scores if s.judge_score is not None])),
        "per_category": per_category(scores),
    }
    if repeats > 1:
        out["pass_hat_k"] = _round(rate([all(s.passed for s in g) for g in groups.values()]))
        out["verdict_hat_k"] = _round(
            rate([all(s.gates.verdict for s in g) for g in groups.values()])
        )
    listed = list(groups.values())
    out["intervals"] = {
        "verdict_accuracy": bootstrap(listed, lambda ss: verdict_rates(ss)["verdict_accuracy"]),
        "pass_rate": bootstrap(listed, lambda ss: verdict_rates(ss)["pass_rate"]),
    }
    return out


def baseline(scores: Sequence[Score]) -> dict[str, Any]:
    """A baseline's figures (``summary.alert_only``, ``summary.guessability``)."""
    rates = {k: _round(v) for k, v in verdict_rates(scores).items()}
    cost = round(sum(s.cost_usd for s in scores), 6)
    return {**rates, "attempts": len(scores), "cost_usd": cost}


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def per_category(scores: Sequence[Score]) -> dict[str, dict[str, Any]]:
    grouped: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        grouped[s.category].append(s)
    return {
        category: {
            "scenarios": len({s.id for s in group}),
            **{k: _round(v) for k, v in verdict_rates(group).items()},
        }
        for category, group in sorted(grouped.items())
    }
