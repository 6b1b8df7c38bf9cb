"""Paired comparison of two runs: did a model, prompt or setting change help?

Scenarios both runs attempted are paired; each scenario's score in a run is the share
of its attempts with the right verdict (and, apart, that passed every gate). The
difference B - A of the mean is reported with a 95 % paired bootstrap interval over
scenarios (fixed seed). ``regressions`` are scenarios A got right every time and B
did not every time; ``worse`` says the whole interval is below zero.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from evals.aggregate import BOOTSTRAP_ROUNDS, SEED, percentile


def _per_scenario(results: Sequence[dict[str, Any]], key: str) -> dict[str, float]:
    hits: dict[str, list[bool]] = defaultdict(list)
    for row in results:
        hits[row["id"]].append(bool(row["gates"]["verdict"] if key == "verdict" else row["passed"]))
    return {sid: sum(h) / len(h) for sid, h in hits.items()}


def paired_interval(diffs: Sequence[float]) -> list[float] | None:
    """95 % percentile bootstrap interval of the mean of ``diffs``."""
    if len(diffs) < 2:
        return None
    rng = random.Random(SEED)
    n = len(diffs)
    means = [sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(BOOTSTRAP_ROUNDS)]
    low, high = percentile(means, 0.025), percentile(means, 0.975)
    return None if low is None or high is None else [round(low, 4), round(high, 4)]


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Run B against run A (reports as ``evals.report.report`` builds them)."""
    va, vb = _per_scenario(a["results"], "verdict"), _per_scenario(b["results"], "verdict")
    pa, pb = _per_scenario(a["results"], "passed"), _per_scenario(b["results"], "passed")
    common = sorted(set(va) & set(vb))
    diffs = [vb[s] - va[s] for s in common]
    pass_diffs = [pb[s] - pa[s] for s in common]
    interval = paired_interval(diffs)
    return {
        "a": a.get("run") or {},
        "b": b.get("run") or {},
        "paired_scenarios": len(common),
        "only_in_a": sorted(set(va) - set(vb)),
        "only_in_b": sorted(set(vb) - set(va)),
        "verdict_accuracy_a": _mean([va[s] for s in common]),
        "verdict_accuracy_b": _mean([vb[s] for s in common]),
        "accuracy_diff": _mean(diffs),
        "accuracy_diff_interval": interval,
        "pass_rate_diff": _mean(pass_diffs),
        "pass_rate_diff_interval": paired_interval(pass_diffs),
        "guessability": b["summary"].get("guessability"),
        "alert_only_a": a["summary"].get("alert_only"),
        "alert_only_b": b["summary"].get("alert_only"),
        "regressions": [s for s in common if va[s] == 1.0 and vb[s] < 1.0],
        "improvements": [s for s in common if va[s] < 1.0 and vb[s] == 1.0],
        "worse": interval is not None and interval[1] < 0,
        "better": interval is not None and interval[0] > 0,
    }


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None
