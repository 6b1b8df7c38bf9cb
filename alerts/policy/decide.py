"""The policy over one alert: the first rule that matches decides.

Order (docs/policy.md): suppressions approved in Slack first (newest first), then the
rule files in name order, each file's rules in the order written. A rule that has
expired matches nothing; a rule that would ignore or suppress a ``critical`` alert
matches it only with ``allow_critical = true``. No rule matching: the alert is
investigated as before (``Decision.rule is None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from alerts.model import Alert
from alerts.policy.match import AlertView, Check, compile_match
from alerts.policy.rules import Rule


@dataclass(frozen=True)
class CompiledRule:
    """A rule, where it came from (file or ``slack``) and its compiled checks."""

    rule: Rule
    origin: str
    checks: tuple[Check, ...]

    @classmethod
    def of(cls, rule: Rule, origin: str) -> CompiledRule:
        """Raises ``ValueError`` for a pattern, network or expression that cannot be used."""
        return cls(rule, origin, tuple(compile_match(rule.match)))

    @property
    def id(self) -> str:
        return self.rule.id

    def refusal(self, view: AlertView) -> str | None:
        """Why this rule cannot apply to the alert whatever it matches, or ``None``."""
        rule = self.rule
        if rule.expires is not None and rule.expires <= view.now:
            return f"expired at {rule.expires.isoformat()}"
        if rule.quiet and view.severity == "critical" and not rule.allow_critical:
            return f"would {rule.action} a critical alert (allow_critical is not set)"
        return None

    def first_miss(self, view: AlertView) -> Check | None:
        """The first check the alert fails, or ``None`` when all hold."""
        for check in self.checks:
            if not check.test(view):
                return check
        return None


@dataclass(frozen=True)
class Decision:
    """What the policy decided for one alert, and why."""

    rule: Rule | None
    origin: str | None = None
    because: tuple[str, ...] = ()

    @property
    def action(self) -> str:
        return self.rule.action if self.rule is not None else "investigate"

    @property
    def rule_id(self) -> str | None:
        return self.rule.id if self.rule is not None else None

    @property
    def quiet(self) -> bool:
        return self.rule is not None and self.rule.quiet


@dataclass(frozen=True)
class Trial:
    """How one rule fared against an alert (``socbot policy test``)."""

    rule_id: str
    origin: str
    matched: bool
    why: str


@dataclass
class RuleSet:
    """The rules in the order they are tried."""

    rules: list[CompiledRule] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rules)

    def decide(self, alert: Alert, now: datetime) -> Decision:
        """The first rule that matches ``alert`` at ``now`` (aware UTC)."""
        view = AlertView.of(alert, now)
        for compiled in self.rules:
            if compiled.first_miss(view) is None and compiled.refusal(view) is None:
                because = tuple(c.says for c in compiled.checks) or ("matches every alert",)
                return Decision(compiled.rule, compiled.origin, because)
        return Decision(None)

    def trials(self, alert: Alert, now: datetime) -> list[Trial]:
        """Every rule, in order, with what matched or the first condition that did not."""
        view = AlertView.of(alert, now)
        out: list[Trial] = []
        for compiled in self.rules:
            miss = compiled.first_miss(view)
            refusal = compiled.refusal(view) if miss is None else None
            if miss is not None:
                out.append(Trial(compiled.id, compiled.origin, False, f"not: {miss.says}"))
            elif refusal is not None:
                out.append(Trial(compiled.id, compiled.origin, False, refusal))
            else:
                says = "; ".join(c.says for c in compiled.checks) or "matches every alert"
                out.append(Trial(compiled.id, compiled.origin, True, says))
        return out


def rule_set(parts: Sequence[Sequence[CompiledRule]]) -> RuleSet:
    """One ``RuleSet`` of several ordered lists (Slack suppressions, then files)."""
    return RuleSet([r for part in parts for r in part])
