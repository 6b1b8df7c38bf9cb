"""The pack's guessability: a keyword rule over the alert text alone, no model, no logs.

A benign-sounding word in the alert (a scanner, a patch, an approval, maintenance, a
test, a backup, the name of a harmless tool) makes the guess ``benign`` at low severity;
anything else is ``true_positive`` at high. Its figures, scored by the same gates as a
model, are reported beside every run (``summary.guessability``): a model's accuracy is
read against what reading the alert alone gets. A pack on which this rule does well
cannot tell investigating from guessing (issue 31: the ``core`` pack reaches 77 %).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from evals.normalise import contains, normalise
from evals.results import Attempt
from evals.scenario import Scenario

BENIGN_WORDS = (
    "scanner", "scan", "scanning", "patch", "patching", "approved", "maintenance", "test",
    "testing", "known", "backup", "update", "windows update", "ci", "terraform", "sccm",
    "msmpeng.exe", "defender", "censys", "shodan", "nessus", "qualys", "runpatchbaseline",
    "aws-runpatchbaseline", "rollout", "scheduled", "change", "blocked", "denied", "travel",
)  # fmt: skip


def guess(alert: Mapping[str, Any]) -> dict[str, Any]:
    """The rule's conclusion for ``alert`` (no findings, no techniques)."""
    text = normalise(json.dumps(alert, ensure_ascii=False))
    benign = any(contains(text, word) for word in BENIGN_WORDS)
    return {
        "verdict": "benign" if benign else "true_positive",
        "severity": "low" if benign else "high",
        "confidence": "low",
        "summary": "A keyword guess from the alert text alone.",
        "key_findings": [],
        "uncertainties": ["nothing was investigated"],
        "recommendations": [],
        "techniques": [],
        "compromised": [],
    }


def guesses(scenarios: Sequence[Scenario]) -> list[Attempt]:
    """One concluded attempt per scenario holding the rule's guess."""
    return [
        Attempt(scenario=s.id, status="concluded", conclusion=guess(s.alert)) for s in scenarios
    ]
