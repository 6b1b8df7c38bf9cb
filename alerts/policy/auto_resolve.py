"""Whether socbot may resolve its own conclusion: a policy rule's ``auto_resolve``.

One gate, an allowlist that fails closed (``refusal``): the rule asked for it, socbot's
verdict is one the rule lists (``false_positive`` / ``benign`` only: ``AutoResolve``
cannot name another), its confidence is a known word at the rule's threshold or above,
and no severity of the alert (the source's or socbot's) is ``critical`` unless the rule
sets ``allow_critical``. Everything it reads may have been written by an attacker (the
verdict and confidence are a model's answer over the alert): an unknown word is a
refusal. What the rule asked for is kept with the policy's record of the alert
(``record``) and read back strictly (``read``): a record that does not parse asks for
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from alerts.policy.rules import AutoResolve, Rule

CONFIDENCE_RANK = {"low": 0, "medium": 1, "high": 2}
CRITICAL = "critical"


@dataclass(frozen=True)
class Asked:
    """What a rule's ``auto_resolve`` asked for, as the policy recorded it."""

    option: AutoResolve
    allow_critical: bool = False

    def share(self, default: float) -> float:
        """The audit's share: the rule's own, else ``cases.audit_share``."""
        return default if self.option.audit_share is None else self.option.audit_share


def record(rule: Rule) -> dict[str, Any] | None:
    """What the policy's record of an alert keeps of the rule's ``auto_resolve``."""
    if rule.auto_resolve is None or rule.quiet:
        return None
    return {**rule.auto_resolve.model_dump(mode="json"), "allow_critical": rule.allow_critical}


def read(stored: object) -> Asked | None:
    """``record``'s output back; None for nothing or anything else."""
    if not isinstance(stored, dict):
        return None
    fields = {k: v for k, v in stored.items() if k != "allow_critical"}
    try:
        option = AutoResolve.model_validate(fields)
    except ValidationError:
        return None
    return Asked(option, stored.get("allow_critical") is True)


def refusal(
    asked: Asked | None,
    verdict: str | None,
    confidence: str | None,
    severities: Iterable[str | None],
) -> str | None:
    """Why socbot may not resolve this conclusion itself, or None when it may."""
    if asked is None:
        return "its rule does not auto-resolve"
    if verdict not in asked.option.verdicts:
        return f"verdict {verdict!r} is not one its rule closes"
    rank = CONFIDENCE_RANK.get(confidence or "")
    if rank is None or rank < CONFIDENCE_RANK[asked.option.confidence]:
        return f"confidence {confidence!r} is below {asked.option.confidence!r}"
    if not asked.allow_critical and any((s or "").strip().lower() == CRITICAL for s in severities):
        return "the alert is critical and its rule does not set allow_critical"
    return None
