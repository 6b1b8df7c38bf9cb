"""A run's report: the ``--json`` object (``summary`` and ``results``), from its attempts.

Attempts are scored here, at report time, against the pack as it is now: a run can be
re-scored after a scorer or ground-truth change without calling a model again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evals.aggregate import baseline, summary
from evals.guesser import guesses
from evals.results import Attempt
from evals.scenario import Scenario
from evals.score import score
from store.eval_reports import Score

SCHEMA_VERSION = 1


def scored(scenarios: Sequence[Scenario], attempts: Sequence[Attempt]) -> list[Score]:
    """Each attempt of a scenario in ``scenarios``, scored (others are left out)."""
    by_id = {s.id: s for s in scenarios}
    return [
        score(by_id[a.scenario], a)
        for a in sorted(attempts, key=lambda a: (a.scenario, a.repeat))
        if a.scenario in by_id
    ]


def report(
    scenarios: Sequence[Scenario],
    attempts: Sequence[Attempt],
    meta: dict[str, Any] | None = None,
    alert_only: Sequence[Attempt] = (),
) -> dict[str, Any]:
    """``{"schema", "run", "summary", "results"}``; ``results`` holds one object per attempt.

    The summary carries the baselines: ``guessability`` (the keyword guess over the
    alerts of the scenarios attempted, ``evals.guesser``) and, when the run has them,
    ``alert_only`` (the same model without tools: ``socbot eval run --alert-only``).
    """
    scores = scored(scenarios, attempts)
    figures = summary(scores)
    tried = {s.id for s in scores}
    figures["guessability"] = baseline(
        scored([s for s in scenarios if s.id in tried], guesses(scenarios))
    )
    if alert_only:
        figures["alert_only"] = baseline(scored(scenarios, alert_only))
    return {
        "schema": SCHEMA_VERSION,
        "run": meta or {},
        "summary": figures,
        "results": [s.model_dump(mode="json") for s in scores],
    }
