"""What a conclusion asserts, read from its structure: forbidden claims and compromised
entities. Free text is never searched ("not a false positive" asserts nothing)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evals.normalise import contains, normalise
from evals.techniques import claimed_techniques, matches
from evals.truth import Assertion


def compromised(conclusion: Mapping[str, Any]) -> list[str]:
    """The entities the conclusion lists as compromised (text items only)."""
    items = conclusion.get("compromised") or []
    if not isinstance(items, list):
        return []
    return [str(i).strip() for i in items if isinstance(i, str) and i.strip()]


def holds(claim: Assertion, conclusion: Mapping[str, Any]) -> bool:
    """Whether ``conclusion`` makes ``claim`` (every key the claim gives holds)."""
    checks: list[bool] = []
    if claim.verdict is not None:
        checks.append(conclusion.get("verdict") == claim.verdict)
    if claim.severity is not None:
        checks.append(conclusion.get("severity") == claim.severity)
    if claim.technique is not None:
        wanted = claim.technique
        checks.append(any(matches(c, wanted) for c in claimed_techniques(conclusion)))
    if claim.compromised is not None:
        named = claim.compromised
        checks.append(any(contains(normalise(e), named) for e in compromised(conclusion)))
    return bool(checks) and all(checks)


def made(forbidden: Sequence[Assertion], conclusion: Mapping[str, Any]) -> list[str]:
    """The forbidden claims ``conclusion`` makes, each as ``key=value, ...``."""
    return [
        ", ".join(f"{k}={v}" for k, v in claim.model_dump(exclude_none=True).items())
        for claim in forbidden
        if holds(claim, conclusion)
    ]
